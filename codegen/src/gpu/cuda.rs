//! The CUDA form of a GPU variant: a `.cu` translation unit holding the
//! kernels and one host function for the whole region (device memory,
//! copies in of every array and copies out of the written ones, the host
//! loops and their launches, a check after every CUDA call and launch),
//! and the C program, which calls that function where the SCoP was. The
//! kernels' code is the emulated variant's, letter for letter: what the
//! emulation verified on the CPU is what runs on the GPU. Only the helpers
//! that code calls for tensor cores (`mma`) differ: `wmma` device
//! functions here, their lane-by-lane emulation there.

use super::Shape;
use crate::outline::{stated_extent, Outliner};
use crate::splice::{footprint, read_first};
use crate::CodegenError;
use isl_rs::{Context, Set, UnionSet};
use model::isl::IslResultExt;
use model::scop::{isl_name, AccessKind, Scop};

/// A GPU variant built for a GPU.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Cuda {
    /// The C program, the region replaced by a call of the host function
    /// (the region only, until `generate` splices it).
    pub program: String,
    /// The `.cu` unit: kernels and the host function.
    pub unit: String,
    /// How many kernels the unit defines.
    pub kernels: usize,
    /// How many of them run on one thread (a statement group with no
    /// parallel loop, or whose mapping failed the check).
    pub serial_kernels: usize,
    /// The C program that only counts the launches of one run (host
    /// loops, no kernels) and dumps the count as `polytune_launches`.
    pub counting: String,
    /// The code that replaces the SCoP in the user's own file (`polytune
    /// export`): the host function's declaration and its call, the
    /// statement macros still in it.
    #[serde(default)]
    pub region: String,
    /// The unit as it goes beside the user's file: the same kernels and
    /// host function without the measurement's timing, warm-up and
    /// switches.
    #[serde(default)]
    pub exported_unit: String,
}

/// CUDA's x, y, z for block dimension `k` of `n` (the innermost is x).
fn axis(k: usize, n: usize) -> &'static str {
    ["x", "y", "z"][n - 1 - k]
}

impl Shape {
    /// The launch in the host function: the grid from the tile range, one
    /// block per tile, and an error check.
    pub(crate) fn launch(
        &self,
        number: usize,
        values: &[String],
        args: &str,
    ) -> Result<String, CodegenError> {
        let mut grid = vec!["1".to_string(); 2];
        for k in 0..self.tiles.len() {
            grid[self.tiles.len() - 1 - k] = format!("(unsigned) polytune_g{k}");
        }
        let mut block = [1i64; 3];
        for (k, &b) in self.threads.iter().enumerate() {
            block[self.threads.len() - 1 - k] = b;
        }
        self.nonempty(
            values,
            &format!(
                "polytune_kernel_{number}<<<dim3({}, {}), dim3({}, {}, {})>>>({args});\n    \
                 polytune_check(cudaGetLastError(), \"launch of kernel {number}\");",
                grid[0], grid[1], block[0], block[1], block[2]
            ),
        )
    }

    /// A count of the launches instead (see [`Cuda::counting`]).
    pub(crate) fn counted(&self, values: &[String]) -> Result<String, CodegenError> {
        self.nonempty(values, "polytune_launches++;")
    }

    /// `code` under the host values and tile range of one launch, when
    /// its grid is not empty.
    fn nonempty(&self, values: &[String], code: &str) -> Result<String, CodegenError> {
        let mut out = String::from("{\n");
        out.push_str(&self.host_values(values)?);
        for (k, (lo, hi)) in self.range.iter().enumerate() {
            out.push_str(&format!("  const long polytune_o{k} = {lo};\n"));
            out.push_str(&format!("  const long polytune_g{k} = ({hi}) - polytune_o{k} + 1;\n"));
        }
        let nonempty: Vec<String> = (0..self.tiles.len()).map(|k| format!("polytune_g{k} > 0")).collect();
        let guard = if nonempty.is_empty() { "1".to_string() } else { nonempty.join(" && ") };
        out.push_str(&format!("  if ({guard}) {{\n    {code}\n  }}\n}}\n"));
        Ok(out)
    }

    /// The kernel's `__global__` function, its parameters `params`, with
    /// `min_blocks` blocks per multiprocessor in its launch bounds (0: none).
    pub(crate) fn global(
        &self,
        number: usize,
        params: &str,
        body: &str,
        defines: &str,
        undefs: &str,
        min_blocks: u32,
    ) -> String {
        // The block's size bounds the registers nvcc may give a thread, so
        // that a block of 1024 threads can launch (heat-3d's kernels asked
        // for more than a multiprocessor has and failed to launch).
        let threads: i64 = self.threads.iter().product();
        let bounds = match min_blocks {
            0 => threads.to_string(),
            m => format!("{threads}, {m}"),
        };
        let mut out =
            format!("__global__ void __launch_bounds__({bounds}) polytune_kernel_{number}({params})\n{{\n");
        for k in 0..self.tiles.len() {
            out.push_str(&format!("  const long polytune_b{k} = blockIdx.{};\n", axis(k, self.tiles.len())));
        }
        for i in 0..self.threads.len() {
            out.push_str(&format!("  const int polytune_t{i} = threadIdx.{};\n", ["x", "y", "z"][i]));
            // What the block's extent tells the compiler: a thread's private
            // subscripts fold to constants.
            let extent = self.threads[self.threads.len() - 1 - i];
            out.push_str(&format!("  __builtin_assume((unsigned) polytune_t{i} < {extent}u);\n"));
        }
        for b in &self.buffers {
            out.push_str(&format!("  __shared__ {b};\n"));
        }
        for (ty, name, dims) in &self.privates {
            out.push_str(&format!("  {ty} {name}{dims};\n"));
        }
        out.push_str(defines);
        out.push_str(body);
        out.push_str(undefs);
        out.push_str("}\n");
        out
    }
}

/// How the unit passes one of the SCoP's arrays or scalars. C++ has no
/// variable-length array types, so an array of rank 2 or 3 travels as a
/// small view whose `operator[]` walks rows of the stated extents: the
/// statements' text (`C[i][j]`) is the same in kernels as in C.
pub(crate) struct Datum {
    /// In the host function's signature.
    host_param: String,
    /// In each kernel's signature.
    kernel_param: String,
    /// In each launch.
    pub(crate) launch_arg: String,
}

/// The arrays the device needs copied in: those the region may read before
/// writing (a read that no earlier write of the region feeds, by isl's
/// dataflow in the original order), and those it does not write whole (the
/// copy-out brings every element back, the ones it did not write too). An
/// array written whole before any read (3mm's `E`, `F` and `G`, 2mm's
/// `tmp`) is only allocated, as ppcg does; so is an expanded scalar's
/// array, which is not an output.
pub(crate) fn copied_in(ctx: &Context, scop: &Scop) -> Result<Vec<String>, CodegenError> {
    let what = || "choosing the arrays to copy in".to_string();
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let read_first = read_first(ctx, scop)?;
    let mut out = Vec::new();
    for a in scop.arrays.iter().filter(|a| !a.extents.is_empty()) {
        if read_first.contains(&a.name) {
            out.push(a.name.clone());
            continue;
        }
        if a.local || !a.written {
            continue;
        }
        // Written whole: the declared box within what the statements write.
        let vars: Vec<String> = (0..a.rank()).map(|d| format!("x{d}")).collect();
        let bounds: Option<Vec<String>> =
            a.extents.iter().zip(&vars).map(|(e, v)| e.as_ref().map(|e| format!("0 <= {v} < {e}"))).collect();
        let whole = bounds.and_then(|b| {
            let text = format!(
                "[{}] -> {{ {}[{}] : {} }}",
                scop.params.join(", "),
                isl_name(&a.name),
                vars.join(", "),
                b.join(" and ")
            );
            Set::read_from_str(ctx, &text).ok()
        });
        let written = footprint(ctx, scop, &a.name, AccessKind::Write)?;
        let covered = match whole {
            Some(w) => {
                let w =
                    UnionSet::from_set(w.intersect_params(context.copy().ctx(what)?).ctx(what)?).ctx(what)?;
                w.is_subset(&written).unwrap_or(false)
            }
            None => false,
        };
        if !covered {
            out.push(a.name.clone());
        }
    }
    Ok(out)
}

/// Page-locking: a copy from pageable memory goes through the driver's
/// staging buffers; an array of a megabyte or more is registered for its
/// copies instead (on an H200, gemm's four copies at LARGE took 3.4 ms
/// registered, registering included, against 4.6 ms pageable).
/// `POLYTUNE_PAGEABLE=1` leaves every copy pageable (to compare); where
/// registering fails the copies stay pageable.
fn pin(measured: bool) -> String {
    let switch = match measured {
        true => "  const char *pageable = getenv(\"POLYTUNE_PAGEABLE\");\n  \
                 if (bytes < ((size_t) 1 << 20) || (pageable && *pageable && *pageable != '0'))\n    return 0;\n",
        false => "  if (bytes < ((size_t) 1 << 20))\n    return 0;\n",
    };
    format!(
        "static int polytune_pin(void *host, size_t bytes)\n{{\n{switch}  \
         if (cudaHostRegister(host, bytes, cudaHostRegisterDefault) == cudaSuccess)\n    return 1;\n  \
         (void) cudaGetLastError();\n  return 0;\n}}\n\n\
         static void polytune_unpin(void *host, int pinned)\n{{\n  \
         if (pinned)\n    polytune_check(cudaHostUnregister(host), \"unregistering host memory\");\n}}\n\n"
    )
}

/// The unit's timing: CUDA's context is made before `main`, its kernels
/// loaded with it (their cost is the process's, not the region's, whose
/// time includes allocation and copies; CUDA's default, lazy loading, would
/// load each kernel at its first launch, inside the kernels' time of a
/// region run once, as ppcg's runs set `CUDA_MODULE_LOADING=EAGER` to
/// avoid); the kernels are timed by events from the first launch to the
/// end of the last, appended to `POLYTUNE_KERNEL_TIME_FILE` when set.
const TIMING: &str = "__attribute__((constructor)) static void polytune_init(void)\n{\n  \
     setenv(\"CUDA_MODULE_LOADING\", \"EAGER\", 0);\n  \
     polytune_check(cudaFree(0), \"starting CUDA\");\n}\n\n\
     static void polytune_kernel_time(cudaEvent_t start, cudaEvent_t stop)\n{\n  \
     float ms = 0;\n  const char *path = getenv(\"POLYTUNE_KERNEL_TIME_FILE\");\n  FILE *f;\n  \
     polytune_check(cudaEventSynchronize(stop), \"running the kernels\");\n  \
     polytune_check(cudaEventElapsedTime(&ms, start, stop), \"timing the kernels\");\n  \
     if (!path || !*path)\n    return;\n  f = fopen(path, \"a\");\n  \
     if (!f || fprintf(f, \"%.9e\\n\", 1e-3 * (double) ms) < 0 || fclose(f) != 0) {\n    \
     fprintf(stderr, \"polytune: cannot write the kernel time to %s\\n\", path);\n    exit(3);\n  }\n}\n\n";

/// `POLYTUNE_WARM_KERNELS=N`, a measurement aid: the region's launches
/// run N times before the timed ones, and the arrays are copied in again
/// after them, so that the timed kernels find the device busy and their
/// outputs stay the original's. The region's time then holds the extra
/// launches and copies: only the kernels' time means anything.
const WARM: &str = "  {\n    const char *polytune_warm = getenv(\"POLYTUNE_WARM_KERNELS\");\n    \
     int polytune_w = polytune_warm ? atoi(polytune_warm) : 0;\n    \
     if (polytune_w > 0) {\n      for (; polytune_w > 0; polytune_w--) {\n{launches}      }\n      \
     polytune_check(cudaDeviceSynchronize(), \"running the warm-up kernels\");\n{recopy}    }\n  }\n";

/// Events around the launches (see [`TIMING`]).
const START: &str = "  cudaEvent_t polytune_start, polytune_stop;\n  \
     polytune_check(cudaEventCreate(&polytune_start), \"creating an event\");\n  \
     polytune_check(cudaEventCreate(&polytune_stop), \"creating an event\");\n  \
     polytune_check(cudaEventRecord(polytune_start), \"recording an event\");\n";
const STOP: &str = "  polytune_check(cudaEventRecord(polytune_stop), \"recording an event\");\n  \
     polytune_check(cudaDeviceSynchronize(), \"running the kernels\");\n  \
     polytune_kernel_time(polytune_start, polytune_stop);\n  \
     polytune_check(cudaEventDestroy(polytune_start), \"destroying an event\");\n  \
     polytune_check(cudaEventDestroy(polytune_stop), \"destroying an event\");\n";

/// The unit's view types (see [`Datum`]).
const VIEWS: &str = "template <typename T> struct polytune_view2 {\n  T *p;\n  long n1;\n  \
     __device__ T *operator[](long i) const { return p + i * n1; }\n};\n\
     template <typename T> struct polytune_view3 {\n  T *p;\n  long n1, n2;\n  \
     __device__ polytune_view2<T> operator[](long i) const { return polytune_view2<T>{p + i * n1 * n2, n2}; }\n};\n";

/// What of an array a region copies back.
enum Out {
    Whole,
    /// One element, at this byte offset.
    At(String),
    Nothing,
}

/// Each expansion array of a scalar ([`model::expansion`]) with the
/// subscripts of the element that holds the scalar's last value.
pub(crate) type Last = std::collections::HashMap<String, Vec<String>>;

/// A region's data: each array and scalar as the unit passes it, and the
/// host code around the launches.
pub(crate) struct Data {
    pub data: Vec<Datum>,
    /// Allocations and copies in.
    pub setup: String,
    /// The copies in alone, again (see [`WARM`]).
    pub recopy: String,
    /// Copies out and frees.
    pub finish: String,
}

/// Each array and scalar of the SCoP as the unit passes it, with the code
/// that copies it to the device and back (of an expansion array, the one
/// element `last` names: symm's `temp2` expanded is as large as `C`);
/// `Err` for an array whose extents are not all stated (literals and size
/// parameters) or of rank above 3.
pub(crate) fn data(scop: &Scop, copied_in: &[String], last: &Last) -> Result<Data, CodegenError> {
    let unsupported = |why: String| CodegenError::Unsupported(format!("CUDA: {why}"));
    // The unit holds the kernels, not the rest of the program's file.
    if let Some(f) = scop.calls.first() {
        return Err(unsupported(format!("a statement calls `{f}`, a function of the program's file")));
    }
    let (mut data, mut setup, mut recopy, mut finish) =
        (Vec::new(), String::new(), String::new(), String::new());
    for a in &scop.arrays {
        let (n, ty) = (&a.name, &a.element_type);
        if a.is_struct_member() {
            return Err(unsupported(format!("{n} is a struct member, not an array of its own in memory")));
        }
        let check = |call: String, what: &str| format!("  polytune_check({call}, \"{what} {n}\");\n");
        // `out`: the copy back of the whole array, or of part of it.
        let copies = |bytes: &str,
                      host: &str,
                      out: Out,
                      setup: &mut String,
                      recopy: &mut String,
                      finish: &mut String| {
            setup.push_str(&format!("  void *polytune_d_{n};\n"));
            setup.push_str(&check(format!("cudaMalloc(&polytune_d_{n}, {bytes})"), "allocating"));
            let copy_in = copied_in.contains(n) || a.extents.is_empty();
            // Registered from the first whole copy to the last.
            let pinned = !a.extents.is_empty() && (copy_in || matches!(out, Out::Whole));
            if pinned {
                setup.push_str(&format!("  int polytune_pinned_{n} = polytune_pin({host}, {bytes});\n"));
            }
            if copy_in {
                let copy = check(
                    format!("cudaMemcpy(polytune_d_{n}, {host}, {bytes}, cudaMemcpyHostToDevice)"),
                    "copying in",
                );
                setup.push_str(&copy);
                recopy.push_str(&copy);
            }
            if pinned && !matches!(out, Out::Whole) {
                setup.push_str(&format!("  polytune_unpin({host}, polytune_pinned_{n});\n"));
            }
            match out {
                Out::Whole => {
                    finish.push_str(&check(
                        format!("cudaMemcpy({host}, polytune_d_{n}, {bytes}, cudaMemcpyDeviceToHost)"),
                        "copying out",
                    ));
                    if pinned {
                        finish.push_str(&format!("  polytune_unpin({host}, polytune_pinned_{n});\n"));
                    }
                }
                Out::At(element) => finish.push_str(&check(
                    format!(
                        "cudaMemcpy((char *) {host} + {element}, (char *) polytune_d_{n} + {element}, sizeof({ty}), cudaMemcpyDeviceToHost)"
                    ),
                    "copying out the last element of",
                )),
                Out::Nothing => {}
            }
            finish.push_str(&check(format!("cudaFree(polytune_d_{n})"), "freeing"));
        };
        if a.extents.is_empty() {
            data.push(if a.written {
                let bytes = format!("sizeof({ty})");
                copies(&bytes, &format!("polytune_p_{n}"), Out::Whole, &mut setup, &mut recopy, &mut finish);
                Datum {
                    host_param: format!("{ty} *polytune_p_{n}"),
                    kernel_param: format!("{ty} *polytune_p_{n}"),
                    launch_arg: format!("({ty} *) polytune_d_{n}"),
                }
            } else {
                Datum {
                    host_param: format!("{ty} {n}"),
                    kernel_param: format!("{ty} {n}"),
                    launch_arg: n.clone(),
                }
            });
            continue;
        }
        let mut extents = Vec::new();
        for e in &a.extents {
            match e {
                Some(e) if stated_extent(e, &scop.params) => extents.push(format!("({})", e.trim())),
                _ => return Err(unsupported(format!("an extent of {n} is not stated"))),
            }
        }
        let bytes = format!("(size_t) {} * sizeof({ty})", extents.join(" * "));
        // An expanded scalar's last value is read from its array after the
        // region: that element comes back.
        let out = match last.get(n) {
            Some(index) => {
                let offset = index
                    .iter()
                    .zip(&extents)
                    .fold("0".to_string(), |o, (i, e)| format!("({o}) * {e} + ({i})"));
                Out::At(format!("(size_t) ({offset}) * sizeof({ty})"))
            }
            None if a.written && !a.local => Out::Whole,
            // An expanded array's last values lie in many copies: all come back.
            None if scop.expansions.iter().any(|e| e.array == *n && e.rank > 0 && e.last.is_some()) => {
                Out::Whole
            }
            None => Out::Nothing,
        };
        copies(&bytes, &format!("polytune_h_{n}"), out, &mut setup, &mut recopy, &mut finish);
        let rows: Vec<String> = extents[1..].iter().map(|e| format!(", (long) {e}")).collect();
        let (kernel_param, launch_arg) = match a.rank() {
            1 => (format!("{ty} *__restrict__ {n}"), format!("({ty} *) polytune_d_{n}")),
            r @ (2 | 3) => (
                format!("polytune_view{r}<{ty}> {n}"),
                format!("polytune_view{r}<{ty}>{{({ty} *) polytune_d_{n}{}}}", rows.concat()),
            ),
            r => return Err(unsupported(format!("{n} has rank {r}; arrays of rank up to 3 are passed"))),
        };
        data.push(Datum { host_param: format!("void *polytune_h_{n}"), kernel_param, launch_arg });
    }
    Ok(Data { data, setup, recopy, finish })
}

/// The `.cu` unit and the C region that calls it: `kernels` with their
/// code for one thread, `host` the host code (launches printed by
/// [`Shape::launch`]), `data` with its copies from [`data`]; each kernel's
/// launch bounds ask for `min_blocks` blocks per multiprocessor (0: nvcc's
/// choice).
pub(crate) fn unit(
    scop: &Scop,
    outliner: &Outliner,
    kernels: &[(Shape, String)],
    host: &str,
    Data { data, setup, recopy, finish }: &Data,
    min_blocks: u32,
) -> Cuda {
    let function =
        scop.function.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let name = format!("polytune_gpu_{function}_{}", scop.start.line);
    let signature: Vec<String> =
        outliner.params.iter().cloned().chain(data.iter().map(|d| d.host_param.clone())).collect();
    let signature = format!("void {name}({})", signature.join(", "));
    let args: Vec<String> = outliner.param_args.iter().chain(&outliner.data_args).cloned().collect();
    let program = format!("  {signature};\n  {name}({});\n", args.join(", "));
    let mma = if kernels.iter().any(|(k, _)| !k.mma.is_empty()) { "#include <mma.h>\n" } else { "" };
    let head = format!(
        "#include <cuda_runtime.h>\n{mma}#include <stdio.h>\n#include <stdlib.h>\n\n\
         static void polytune_check(cudaError_t e, const char *what)\n{{\n  if (e != cudaSuccess) {{\n    \
         fprintf(stderr, \"polytune: CUDA: %s: %s\\n\", what, cudaGetErrorString(e));\n    exit(70);\n  }}\n}}\n\n{VIEWS}\n"
    );
    // The tensor cores' helpers of every contraction (`mma`), once each (a
    // kernel launched from two places shares its helpers).
    let mut globals = String::new();
    for h in kernels.iter().flat_map(|(k, _)| &k.mma) {
        if globals.is_empty() {
            globals.push_str(super::mma::DEVICE_ACC);
            globals.push('\n');
        }
        if !globals.contains(&h.device) {
            globals.push_str(&h.device);
        }
    }
    for (number, (k, body)) in kernels.iter().enumerate() {
        let mut params: Vec<String> = outliner.params.clone();
        params.extend((0..k.depth).map(|d| format!("int polytune_h{d}")));
        params.extend((0..k.tiles.len()).map(|i| format!("long polytune_o{i}")));
        params.extend(data.iter().map(|d| d.kernel_param.clone()));
        globals.push_str(&k.global(
            number,
            &params.join(", "),
            body,
            &outliner.defines,
            &outliner.undefs,
            // With the threads alone, ptxas for sm_90 budgets registers for a
            // full multiprocessor and spills a tensor-core kernel's fragments
            // (gemm, 8 × 8 tiles: 32 registers, 8 bytes of stack; 40 and none
            // with a bound of one block): such a kernel's `auto` is one block.
            if k.mma.is_empty() { min_blocks } else { min_blocks.max(1) },
        ));
        globals.push('\n');
    }
    let (ast, undef) = (super::super::print::AST_MACROS, super::super::print::UNDEF_AST_MACROS);
    let warm = WARM.replace("{launches}", &format!("{ast}{host}{undef}")).replace("{recopy}", recopy);
    let unit = format!(
        "{head}{}{TIMING}{globals}extern \"C\" {signature}\n{{\n{setup}{warm}{START}{ast}{host}{undef}{STOP}{finish}}}\n",
        pin(true)
    );
    let exported_unit = format!(
        "{head}{}{globals}extern \"C\" {signature}\n{{\n{setup}{ast}{host}{undef}  \
         polytune_check(cudaDeviceSynchronize(), \"running the kernels\");\n{finish}}}\n",
        pin(false)
    );
    let serial_kernels = kernels.iter().filter(|(k, _)| k.tiles.is_empty() && k.threads.is_empty()).count();
    Cuda {
        program,
        unit,
        kernels: kernels.len(),
        serial_kernels,
        counting: String::new(),
        region: String::new(),
        exported_unit,
    }
}

/// The arguments of every launch of kernel `k`: the size parameters, its
/// host values and tile offsets, and the data.
pub(crate) fn launch_args(outliner: &Outliner, k: &Shape, data: &[Datum]) -> String {
    let mut args: Vec<String> = outliner.param_args.clone();
    args.extend((0..k.depth).map(|d| format!("polytune_h{d}")));
    args.extend((0..k.tiles.len()).map(|i| format!("polytune_o{i}")));
    args.extend(data.iter().map(|d| d.launch_arg.clone()));
    args.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays written whole before any read are not copied in (3mm's
    /// products, 2mm's `tmp`); arrays read first (gemm's `C`, `beta * C`)
    /// and arrays written in part (adi's `p` and `q`, whose last column
    /// no statement writes: the copy-out brings it back) are.
    #[test]
    fn only_what_the_region_reads_first_or_writes_in_part_is_copied_in() {
        let skipped = |path: &str| -> Vec<String> {
            let k = testkit::load(path, "MINI");
            let ctx = model::isl::new_context();
            let copied = copied_in(&ctx, &k.scop).unwrap();
            let arrays = k.scop.arrays.iter().filter(|a| !a.extents.is_empty());
            arrays.filter(|a| !copied.contains(&a.name)).map(|a| a.name.clone()).collect()
        };
        assert_eq!(skipped("linear-algebra/3mm.c"), ["E", "F", "G"]);
        assert_eq!(skipped("linear-algebra/2mm.c"), ["tmp"]);
        assert!(skipped("linear-algebra/gemm.c").is_empty());
        assert!(skipped("stencils/adi.c").is_empty());
    }
}
