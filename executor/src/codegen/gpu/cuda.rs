//! The CUDA form of a GPU variant: a `.cu` translation unit holding the
//! kernels and one host function for the whole region (device memory,
//! copies in of every array and copies out of the written ones, the host
//! loops and their launches, a check after every CUDA call and launch),
//! and the C program, which calls that function where the SCoP was. The
//! kernels' code is the emulated variant's, letter for letter: what the
//! emulation verified on the CPU is what runs on the GPU.

use super::Shape;
use crate::codegen::outline::{stated_extent, Outliner};
use crate::codegen::CodegenError;
use space::scop::Scop;

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
        let mut out = String::from("{\n");
        out.push_str(&self.host_values(values)?);
        let mut grid = vec!["1".to_string(); 2];
        for (k, (lo, hi)) in self.range.iter().enumerate() {
            out.push_str(&format!("  const long polytune_o{k} = {lo};\n"));
            out.push_str(&format!("  const long polytune_g{k} = ({hi}) - polytune_o{k} + 1;\n"));
            grid[self.tiles.len() - 1 - k] = format!("(unsigned) polytune_g{k}");
        }
        let mut block = vec![1i64; 3];
        for (k, &b) in self.threads.iter().enumerate() {
            block[self.threads.len() - 1 - k] = b;
        }
        let nonempty: Vec<String> = (0..self.tiles.len()).map(|k| format!("polytune_g{k} > 0")).collect();
        let guard = if nonempty.is_empty() { "1".to_string() } else { nonempty.join(" && ") };
        out.push_str(&format!(
            "  if ({guard}) {{\n    polytune_kernel_{number}<<<dim3({}, {}), dim3({}, {}, {})>>>({args});\n    \
             polytune_check(cudaGetLastError(), \"launch of kernel {number}\");\n  }}\n}}\n",
            grid[0], grid[1], block[0], block[1], block[2]
        ));
        Ok(out)
    }

    /// The kernel's `__global__` function, its parameters `params`.
    pub(crate) fn global(
        &self,
        number: usize,
        params: &str,
        body: &str,
        defines: &str,
        undefs: &str,
    ) -> String {
        let mut out = format!("__global__ void polytune_kernel_{number}({params})\n{{\n");
        for k in 0..self.tiles.len() {
            out.push_str(&format!("  const long polytune_b{k} = blockIdx.{};\n", axis(k, self.tiles.len())));
        }
        for i in 0..self.threads.len() {
            out.push_str(&format!("  const int polytune_t{i} = threadIdx.{};\n", ["x", "y", "z"][i]));
        }
        out.push_str(defines);
        out.push_str(body);
        out.push_str(undefs);
        out.push_str("}\n");
        out
    }
}

/// The `.cu` unit and the C region that calls it, for the kernels of
/// `host` (the host AST printed with `launch`es, see
/// [`Kernel::launch`]); `None` where the region cannot be a function (see
/// [`Outliner::new`]) or an array's first extent is not stated.
pub(crate) fn unit(
    scop: &Scop,
    outliner: &Outliner,
    kernels: &[(Shape, String)],
    host: &str,
) -> Result<Cuda, CodegenError> {
    let unsupported = |why: String| CodegenError::Unsupported(format!("CUDA: {why}"));
    let function =
        scop.function.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let name = format!("polytune_gpu_{function}_{}", scop.start.line);
    let signature: Vec<String> = outliner.params.iter().chain(&outliner.data).cloned().collect();
    let signature = format!("void {name}({})", signature.join(", "));
    let args: Vec<String> = outliner.param_args.iter().chain(&outliner.data_args).cloned().collect();
    let program = format!("  {signature};\n  {name}({});\n", args.join(", "));
    // Device copies: `polytune_d_A` for each array and written scalar.
    let (mut setup, mut finish) = (String::new(), String::new());
    for a in &scop.arrays {
        let (n, ty) = (&a.name, &a.element_type);
        let check = |call: String, what: &str| format!("  polytune_check({call}, \"{what} {n}\");\n");
        match a.extents.first() {
            None if a.written => {
                setup.push_str(&format!("  {ty} *polytune_d_{n};\n"));
                setup.push_str(&check(
                    format!("cudaMalloc((void **)&polytune_d_{n}, sizeof({ty}))"),
                    "allocating",
                ));
                setup.push_str(&check(
                    format!(
                        "cudaMemcpy(polytune_d_{n}, polytune_p_{n}, sizeof({ty}), cudaMemcpyHostToDevice)"
                    ),
                    "copying in",
                ));
                finish.push_str(&check(
                    format!(
                        "cudaMemcpy(polytune_p_{n}, polytune_d_{n}, sizeof({ty}), cudaMemcpyDeviceToHost)"
                    ),
                    "copying out",
                ));
                finish.push_str(&check(format!("cudaFree(polytune_d_{n})"), "freeing"));
            }
            None => {}
            Some(first) => {
                let rows = match first {
                    Some(e) if stated_extent(e, &scop.params) => e.trim().to_string(),
                    _ => {
                        return Err(unsupported(format!("the extent of {n}'s first dimension is not stated")))
                    }
                };
                let bytes = format!("(size_t) ({rows}) * sizeof(*{n})");
                setup.push_str(&format!("  __typeof__(&{n}[0]) polytune_d_{n};\n"));
                setup
                    .push_str(&check(format!("cudaMalloc((void **)&polytune_d_{n}, {bytes})"), "allocating"));
                setup.push_str(&check(
                    format!("cudaMemcpy(polytune_d_{n}, {n}, {bytes}, cudaMemcpyHostToDevice)"),
                    "copying in",
                ));
                if a.written && !a.local {
                    finish.push_str(&check(
                        format!("cudaMemcpy({n}, polytune_d_{n}, {bytes}, cudaMemcpyDeviceToHost)"),
                        "copying out",
                    ));
                }
                finish.push_str(&check(format!("cudaFree(polytune_d_{n})"), "freeing"));
            }
        }
    }
    let mut unit = String::from(
        "#include <cuda_runtime.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n\
         static void polytune_check(cudaError_t e, const char *what)\n{\n  if (e != cudaSuccess) {\n    \
         fprintf(stderr, \"polytune: CUDA: %s: %s\\n\", what, cudaGetErrorString(e));\n    exit(70);\n  }\n}\n\n",
    );
    for (number, (k, body)) in kernels.iter().enumerate() {
        let mut params: Vec<String> = outliner.params.clone();
        params.extend((0..k.depth).map(|d| format!("int polytune_h{d}")));
        params.extend((0..k.tiles.len()).map(|i| format!("long polytune_o{i}")));
        params.extend(outliner.data.iter().cloned());
        unit.push_str(&k.global(number, &params.join(", "), body, &outliner.defines, &outliner.undefs));
        unit.push('\n');
    }
    unit.push_str(&format!(
        "extern \"C\" {signature}\n{{\n{setup}{ast}{host}{undef}  polytune_check(cudaDeviceSynchronize(), \"running the kernels\");\n{finish}}}\n",
        ast = super::super::print::AST_MACROS,
        undef = super::super::print::UNDEF_AST_MACROS,
    ));
    Ok(Cuda { program, unit, kernels: kernels.len() })
}

/// The arguments of every launch: the size parameters, the host values and
/// tile offsets of kernel `k`, and the device copies of the data.
pub(crate) fn launch_args(outliner: &Outliner, k: &Shape, device: &[String]) -> String {
    let mut args: Vec<String> = outliner.param_args.clone();
    args.extend((0..k.depth).map(|d| format!("polytune_h{d}")));
    args.extend((0..k.tiles.len()).map(|i| format!("polytune_o{i}")));
    args.extend(device.iter().cloned());
    args.join(", ")
}

/// The device arguments for the data, in `Outliner::data` order: each
/// array's and written scalar's device copy, read scalars by value.
pub(crate) fn device_args(scop: &Scop) -> Vec<String> {
    scop.arrays
        .iter()
        .map(|a| match (a.extents.is_empty(), a.written) {
            (true, false) => a.name.clone(),
            _ => format!("polytune_d_{}", a.name),
        })
        .collect()
}
