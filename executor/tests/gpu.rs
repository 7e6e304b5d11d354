//! GPU variants (issue 18) without a GPU: every kernel scheduled for the
//! GPU target, mapped (host loops, blocks, threads), and its launches
//! emulated on the CPU, block by block and thread by thread in reverse
//! order; the outputs must be the original program's at SMALL.

use std::sync::Mutex;
use std::time::Duration;

use codegen::{self, CodegenOptions};
use executor::cuda::Nvcc;
use executor::evaluate::Evaluator;
use executor::machine::MachineProfile;
use executor::measure::Status;
use executor::verify::Tolerance;
use testkit::{kernels, load};
use vocab::knobs::{CodeOptions, UnifiedOptions};

const ITEM_LIMIT: Duration = Duration::from_secs(400);

fn gpu_knobs() -> UnifiedOptions {
    UnifiedOptions::default().with_settings(&["target=gpu"]).unwrap()
}

/// gemm at SMALL, our GPU schedule, tiles of 16, with these code settings.
fn gemm_at_tile_16(settings: &[&str]) -> (testkit::Kernel, codegen::Variant) {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let mut opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    opts.code = CodeOptions::default().with_settings(settings).unwrap();
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    (k, v)
}

/// The launches in an emulated region: one `polytune_h`/`polytune_b`/
/// `polytune_t` line set per kernel.
fn launches(region: &str) -> usize {
    region.lines().filter(|l| l.trim_start().starts_with("for (long polytune_b0 ")).count()
}

/// Builds the original and `program`, runs both at the dataset `k` was
/// loaded with and compares their outputs.
fn same_outputs(k: &testkit::Kernel, program: String) {
    testkit::assert_same_outputs(
        &testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default()),
        k,
        program,
    );
}

/// A program of `tests/fixtures`.
fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The first SCoP of the program at `path`, and its dependences.
fn extracted(path: &std::path::Path) -> (model::scop::Source, model::scop::Scop, model::deps::Dependences) {
    let (source, mut scops) = model::scop::extract(path, &Default::default()).unwrap();
    let scop = scops.remove(0);
    let deps = model::deps::analyze(&scop).unwrap();
    (source, scop, deps)
}

/// Builds `program` and the original of `scop` with `ev`, runs both and
/// requires the same outputs.
fn matches_the_original(
    ev: &Evaluator,
    source: &model::scop::Source,
    scop: &model::scop::Scop,
    program: String,
) {
    let reference = ev.reference(&codegen::original_program(source, scop).unwrap()).unwrap();
    let m = ev.evaluate(&reference, &[program]).unwrap().remove(0);
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
}

#[test]
fn gemm_maps_two_block_and_two_thread_dimensions() {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    assert!(opts.gpu && !opts.openmp);
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let r = &v.region;
    for id in ["polytune_b0", "polytune_b1", "polytune_t0", "polytune_t1"] {
        assert!(
            r.contains(&format!("for (long {id} ")) || r.contains(&format!("for (int {id} ")),
            "{id}:\n{r}"
        );
    }
    assert!(!r.contains("#pragma omp"), "{r}");
    assert!(launches(r) >= 1, "{r}");
    same_outputs(&k, v.program);
}

/// Shared memory by default: gemm's kernel stages its tiles of `A` and
/// `B` in `__shared__` buffers, copied by the block's threads between
/// barriers, and its emulation runs the block phase by phase. Each barrier
/// matters: without either one the emulation's output is wrong, as a GPU's
/// would be; `gpu_shared=off` reads global memory only.
#[test]
fn gemm_stages_its_tiles_in_shared_memory_and_each_barrier_is_needed() {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let unit = &v.cuda.as_ref().expect("gemm has a CUDA form").unit;
    assert_eq!(unit.matches("__shared__ double").count(), 2, "{unit}");
    // 16 × 16 threads: nvcc keeps each thread's registers within a block's share.
    assert!(unit.contains("__launch_bounds__(256) polytune_kernel_0"), "{unit}");
    assert!(unit.contains("__syncthreads()"), "{unit}");
    // One loop nest over the threads per phase: copies, then the computation.
    assert!(v.region.matches("for (int polytune_t0 = 15; ").count() >= 2, "{}", v.region);
    // `alpha * A[i][k]`: the copy of `A`'s tile holds the products, so the
    // statement multiplies once per step, not twice.
    assert!(unit.contains("= alpha * A[(a0)][(a1)]"), "{unit}");
    let s2 = unit.lines().find(|l| l.starts_with("#define polytune_S2(") && l.contains("_shared_")).unwrap();
    assert!(s2.contains("+= polytune_shared_0") && !s2.contains("alpha"), "{s2}");
    // A thread's copies of one tile are unrolled (16 × 16 elements over 256
    // threads: one each).
    assert!(!unit.contains("polytune_shared_in_0(c0, c1"), "{unit}");
    // The host registers each array from its first copy to its last: `A`
    // and `B` once copied in, `C` once copied back.
    for (array, unpinned_before) in
        [("A", "cudaEventCreate"), ("B", "cudaEventCreate"), ("C", "cudaFree(polytune_d_C)")]
    {
        let pin = unit.find(&format!("polytune_pin(polytune_h_{array},")).expect(array);
        let unpin = unit.find(&format!("polytune_unpin(polytune_h_{array},")).expect(array);
        assert!(pin < unpin && unpin < unit.find(unpinned_before).unwrap(), "{array}: {unit}");
    }
    // `POLYTUNE_WARM_KERNELS`: the launches run before the timed ones too,
    // and the arrays are copied in again between them.
    assert_eq!(unit.matches("polytune_kernel_0<<<").count(), 2, "{unit}");
    let warm = &unit[unit.find("POLYTUNE_WARM_KERNELS").unwrap()..];
    assert!(warm.find("copying in A").unwrap() < warm.find("cudaEventRecord(polytune_start)").unwrap());
    same_outputs(&k, v.program);
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap();
    for barrier in [0, 1] {
        let faulty = CodegenOptions { drop_barrier: Some(barrier), ..opts.clone() };
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &faulty).unwrap();
        let m = ev.evaluate(&reference, &[v.program]).unwrap().remove(0);
        assert_eq!(m.status, Status::Wrong, "without barrier {barrier}: {} {}", m.status, m.reason);
    }
    let mut global = opts.clone();
    global.code = CodeOptions::default().with_settings(&["gpu_shared=off"]).unwrap();
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &global).unwrap();
    assert!(!v.cuda.unwrap().unit.contains("__shared__"));
    same_outputs(&k, v.program);
}

/// gemm's kernel with 4 × 4 points per thread is versioned on full blocks:
/// where a block's 16 × 16 tile lies inside the iterations (SMALL's 60 × 70
/// leaves partial blocks at the edges), its register tile runs without a
/// guard around each point and its full `k` tiles run 0..15; the partial
/// blocks keep the guards; with `gpu_unroll=on` the `k` steps of a full
/// tile are unrolled whole. Both versions match the original (emulated).
#[test]
fn gemm_runs_its_full_blocks_and_full_k_tiles_without_guards() {
    let (_, v) = gemm_at_tile_16(&["gpu_thread_tile=4"]);
    let unit = &v.cuda.as_ref().expect("gemm has a CUDA form").unit;
    assert!(unit.contains("for (int c1 = 0; c1 <= 15; c1++)") && !unit.contains("#pragma unroll"), "{unit}");
    // gpu_unroll=on asks nvcc to unroll those steps whole.
    let (k, v) = gemm_at_tile_16(&["gpu_thread_tile=4", "gpu_unroll=on"]);
    let unit = &v.cuda.as_ref().expect("gemm has a CUDA form").unit;
    let kernel = &unit[unit.find("polytune_kernel_0(").unwrap()..];
    let (full, partial) = kernel.split_once("  } else {\n").expect("a kernel versioned on full blocks");
    let full = &full
        [full.find("ni >= 16 * polytune_o0 + 16 * polytune_b0 + 16").expect("the full blocks' condition")..];
    // A thread's guards on its rows and columns; the copies' guards on `k`
    // stay, none is left around the points.
    let guards = |code: &str| {
        code.lines()
            .filter(|l| {
                l.contains("if (") && l.contains("polytune_t") && (l.contains("ni >=") || l.contains("nj >="))
            })
            .count()
    };
    assert_eq!(guards(full), 0, "{full}");
    let lines: Vec<&str> = full.lines().map(str::trim).collect();
    assert!(
        lines.windows(2).any(|w| w == ["#pragma unroll", "for (int c1 = 0; c1 <= 15; c1++) {"]),
        "{full}"
    );
    assert!(guards(partial) > 2, "{partial}");
    // The emulation is C for gcc: the same loops without CUDA's pragma.
    assert!(v.program.contains("for (int c1 = 0; c1 <= 15; c1++)") && !v.program.contains("#pragma unroll"));
    same_outputs(&k, v.program);
}

/// 2mm with its first three statements fused, `tmp` (ni × nj) and `D`
/// (ni × nl) in one kernel: isl would join a thread's copy-in of `D`'s
/// private element and the stage of the blocks beyond `nl` into one
/// if/else, a barrier under a thread's guard; kernels are generated without
/// `else`, and the emulation, phase by phase, matches the original.
#[test]
fn a_kernel_over_arrays_of_different_extents_keeps_its_barriers_block_wide() {
    let k = load("linear-algebra/2mm.c", "SMALL");
    let settings = [
        "target=gpu",
        "hlim=off",
        "spatial=grouped",
        "posttile_reorder=pluto",
        "consecutivity=none",
        "wavefront=none",
    ];
    let knobs = UnifiedOptions::default().with_settings(&settings).unwrap();
    let fused = space::fusion::parse_preorder("(S1 S2 S3)(S4)", &k.scop).unwrap();
    let s = space::schedule::unified(&k.scop, &k.deps, Some(fused), &knobs.scheduler()).unwrap();
    let mut opts = CodegenOptions::for_point(Some(vec![32]), 1, Some(&knobs));
    opts.code.gpu_block = 1024;
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let unit = &v.cuda.as_ref().expect("2mm has a CUDA form").unit;
    assert!(unit.contains("__syncthreads()"), "{unit}");
    same_outputs(&k, v.program);
}

/// symm's scalar `temp2`, zeroed for every `(i, j)`, is expanded along
/// `i` and `j` for GPU points, so that both run on threads instead of the
/// whole nest on one (the updates of `C` on the threads of their rows);
/// after the region `temp2` holds the original's last value, the one
/// element of the expansion a CUDA region copies back. Its shared
/// buffers of `A` are two for one spelling, `A[i][k]` (rows of the block
/// in one statement, of the stage in the other): each statement reads its
/// own.
#[test]
fn symm_expands_its_scalar_and_runs_on_threads() {
    let k = load("linear-algebra/symm.c", "SMALL");
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &CodeOptions::default(), true).unwrap();
    let names: Vec<(&str, &str)> =
        scop.expansions.iter().map(|e| (e.scalar.as_str(), e.array.as_str())).collect();
    assert_eq!(names, [("temp2", "polytune_expanded_temp2")]);
    let s = space::schedule::unified(&scop, &deps, None, &gpu_knobs().scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&gpu_knobs()));
    let v = codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap();
    let cuda = v.cuda.as_ref().expect("symm has a CUDA form");
    assert_eq!((cuda.kernels, cuda.serial_kernels), (1, 0), "{}", cuda.unit);
    assert!(
        cuda.unit.contains("dim3(16, 16, 1)") || cuda.program.contains("dim3(16, 16, 1)"),
        "{}",
        cuda.unit
    );
    assert!(v.region.contains("temp2 = polytune_expanded_temp2["), "{}", v.region);
    // The CUDA region brings back that one element, not the whole array.
    let back: Vec<&str> = cuda.unit.lines().filter(|l| l.contains("cudaMemcpyDeviceToHost")).collect();
    assert!(
        back.iter().any(|l| l.contains("copying out the last element of polytune_expanded_temp2")),
        "{back:?}"
    );
    assert!(!back.iter().any(|l| l.contains("\"copying out polytune_expanded_temp2")), "{back:?}");
    same_outputs(&k, v.program);
    // CPU points keep the scalar.
    let (cpu, _) = executor::pipeline::model(&k.scop, &k.deps, &CodeOptions::default(), false).unwrap();
    assert!(cpu.expansions.is_empty());
}

/// deriche sets `ym1`, `ym2`, `yp1` and `yp2` afresh before its
/// horizontal and again before its vertical passes: a web of uses per
/// pass, each expanded on its own, so that every pass runs its rows (or
/// columns) on threads and each kernel is launched once. Unexpanded, those
/// scalars ordered every row after the one before: the host looped over
/// both dimensions, 159 million launches at LARGE (an H200, 2026-11-29).
#[test]
fn deriche_expands_the_scalars_of_each_pass_apart_and_launches_each_kernel_once() {
    let k = load("medley/deriche.c", "SMALL");
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &CodeOptions::default(), true).unwrap();
    let arrays: Vec<&str> = scop.expansions.iter().map(|e| e.array.as_str()).collect();
    for web in ["polytune_expanded_ym1", "polytune_expanded_ym1_1", "polytune_expanded_yp2_1"] {
        assert!(arrays.contains(&web), "{arrays:?}");
    }
    let s = space::schedule::unified(&scop, &deps, None, &gpu_knobs().scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![32]), 1, Some(&gpu_knobs()));
    let v = codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap();
    let cuda = v.cuda.as_ref().expect("deriche has a CUDA form");
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    let launched =
        executor::cuda::count_launches(&ev.builder, &cuda.counting, Duration::from_secs(120)).unwrap();
    assert_eq!(launched, cuda.kernels as u64, "{}", cuda.unit);
    same_outputs(&k, v.program);
}

/// The gpu_block knob caps a block's threads: gemm's 16 × 16 tiles with at
/// most 64 threads get blocks of 16 (x, the stride-one loop) × 4, each
/// thread taking every fourth row of its tile; the outputs still match.
#[test]
fn gpu_block_caps_the_threads_of_a_block() {
    let (k, v) = gemm_at_tile_16(&["gpu_block=64"]);
    let r = &v.region;
    assert!(r.contains("for (int polytune_t0 = 15; ") && r.contains("for (int polytune_t1 = 3; "), "{r}");
    let cuda = v.cuda.as_ref().expect("gemm has a CUDA form");
    assert!(cuda.unit.contains("dim3(16, 4, 1)") || cuda.program.contains("dim3(16, 4, 1)"), "{}", cuda.unit);
    same_outputs(&k, v.program);
}

/// Where a statement would not run (gemm with NK = 0), a GPU variant runs
/// the code as written, as CPU variants do: its kernels are mapped and
/// generated only for sizes where every statement runs.
#[test]
fn where_a_statement_would_not_run_the_gpu_variant_runs_the_code_as_written() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("every-statement-runs-gpu");
    let path = testkit::gemm_with_an_empty_dataset(&dir);
    let knobs = gpu_knobs();
    for dataset in ["EMPTY", "MINI"] {
        let k = load(&path, dataset);
        let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
        let opts = CodegenOptions::for_point(Some(vec![8]), 1, Some(&knobs));
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
        let guard = "\nif (ni >= 1 && nj >= 1 && nk >= 1) {\n";
        assert!(v.region.contains(guard), "{}", v.region);
        let cuda = v.cuda.as_ref().expect("gemm has a CUDA form");
        assert!(cuda.program.contains(guard) && cuda.counting.contains(guard), "{}", cuda.program);
        same_outputs(&k, v.program);
    }
}

/// No parameter values run both statements (`m == 6` and its `else`), so
/// the kernels are generated in an empty context: their grids are empty
/// there, not bounds isl cannot print (random program 245 of the oracle:
/// "cannot handle void expression"). The region runs the code as written.
#[test]
fn a_kernel_whose_statements_never_all_run_has_an_empty_grid() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("never-all-run-gpu");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("neverall.c");
    std::fs::write(
        &path,
        "#include <stdio.h>\ndouble A[20][20];\n\
         static void kernel(int n, int m) {\n#pragma scop\n\
         for (int i = 0; i < n - 1; ++i) {\n  if (m - 2 == 4)\n    A[i + 2][i + 1] = 0.5 * i;\n  else\n    \
         A[n - 9][i] *= 0.5 + A[i][i];\n}\n#pragma endscop\n}\n\
         int main(void) {\n  for (int x = 0; x < 20; x++) for (int y = 0; y < 20; y++) A[x][y] = x + 0.5 * y;\n  \
         kernel(12, 4);\n  double s = 0;\n  for (int x = 0; x < 20; x++) for (int y = 0; y < 20; y++) s += A[x][y];\n  \
         printf(\"%.17g\\n\", s);\n  return 0;\n}\n",
    )
    .unwrap();
    let (source, scop, deps) = extracted(&path);
    let tree = space::reference::isl_gpu_schedule(&scop, &deps).unwrap();
    let knobs = gpu_knobs();
    let opts = CodegenOptions::for_point(Some(vec![4]), 1, Some(&knobs));
    let v = codegen::generate(&source, &scop, &deps, &tree, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(v.cuda.is_some(), "{}", v.region);
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    matches_the_original(&ev, &source, &scop, v.program);
}

/// The paper's Figure 5 measure on the kernels without outer parallelism:
/// with `feautrier=self-first`, the unified GPU strategy launches no more
/// kernels in one run than isl's scheduler as ppcg runs it. (Its Feautrier
/// rows carrying every dependence they can keep more loops on the host:
/// 798 launches on lu at MEDIUM against isl's 399, 614 against 213 on adi;
/// 238,724 against 1,001 on gramschmidt before groups were split into phases.)
#[test]
fn the_unified_gpu_strategy_launches_no_more_kernels_than_isl_without_outer_parallelism() {
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    let knobs = UnifiedOptions::default().with_settings(&["target=gpu", "feautrier=self-first"]).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![32]), 1, Some(&knobs));
    for file in ["linear-algebra/gramschmidt.c", "linear-algebra/lu.c", "stencils/adi.c"] {
        let k = load(file, "SMALL");
        let launches = |tree: &str| {
            let v = codegen::generate(&k.source, &k.scop, &k.deps, tree, &opts).unwrap();
            let counting = v.cuda.expect("a CUDA form").counting;
            executor::cuda::count_launches(&ev.builder, &counting, Duration::from_secs(120)).unwrap()
        };
        let unified =
            launches(&space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap().tree);
        let isl = launches(&space::reference::isl_gpu_schedule(&k.scop, &k.deps).unwrap());
        eprintln!("{file}: unified {unified} launches, isl {isl}");
        assert!(unified <= isl, "{file}: unified {unified} launches, isl {isl}");
    }
}

#[test]
fn jacobi_2d_launches_kernels_from_its_host_time_loop() {
    let k = load("stencils/jacobi-2d.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let r = &v.region;
    // The time loop runs on the host; each launch sees its value.
    assert!(r.contains("const int polytune_h0 = "), "{r}");
    assert!(r.contains("polytune_t0"), "{r}");
    same_outputs(&k, v.program);
}

/// A mapping that breaks a dependence is caught by the check, not by luck:
/// forcing every band member coincident on seidel-2d (whose loops all carry
/// dependences) must leave no block or thread loop.
#[test]
fn a_mapping_that_would_race_falls_back_to_one_thread() {
    let k = load("stencils/seidel-2d.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let forced = s
        .tree
        .replace("coincident: [ 0", "coincident: [ 1")
        .replace(", 0 ]", ", 1 ]")
        .replace(", 0,", ", 1,");
    assert_ne!(forced, s.tree, "the tree has sequential members to force:\n{}", s.tree);
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &forced, &opts).unwrap();
    assert!(!v.region.contains("polytune_t0"), "{}", v.region);
    same_outputs(&k, v.program);
}

/// Every kernel: scheduled for the GPU with each `feautrier` value (the
/// second where it changes the schedule), mapped (every other kernel with
/// `gpu_block=64`, some `gpu_thread_tile=2` or `gpu_shared=off`), with
/// `gpu_mma` off and on (where it changes the program: the contractions
/// on tensor cores), emulated, outputs compared with the original's; its
/// CUDA unit compiled by nvcc for sm_80 and sm_90
/// where nvcc is found (CI sets `POLYTUNE_EXPECT_NVCC`: there it must be).
/// Failures are collected, then reported together. The fast tier takes
/// every third kernel (odd and even ones: the sweep varies its knobs by
/// the kernel's place), the heavy tier the others.
#[test]
fn every_kernel_mapped_to_the_gpu_matches_the_original_when_emulated() {
    let paths = kernels();
    let failures = Mutex::new(Vec::<String>::new());
    let started = std::time::Instant::now();
    testkit::on_two_threads(paths.len(), |i| {
        let path = &paths[i];
        // The fast tier: every third kernel; the heavy tier: the others.
        if !testkit::takes(i, 0, 3, 1) {
            return;
        }
        let k = load(path, "SMALL");
        // The model a GPU point schedules: scalars expanded where they can be.
        let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &CodeOptions::default(), true)
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let (scop, deps) = (scop.as_ref(), deps.as_ref());
        // Both kinds of Feautrier rows; the second only where it
        // changes the schedule.
        let mut trees = Vec::new();
        for feautrier in ["all", "self-first"] {
            let knobs = UnifiedOptions::default()
                .with_settings(&["target=gpu".to_string(), format!("feautrier={feautrier}")])
                .unwrap();
            let fail = |what: String| {
                failures.lock().unwrap().push(format!("{} feautrier={feautrier}: {what}", k.name))
            };
            let tree = {
                let _item = testkit::item(format!("{}: schedule", k.name), ITEM_LIMIT);
                space::schedule::unified(scop, deps, None, &knobs.scheduler())
            };
            let tree = match tree {
                Ok(s) => s.tree,
                Err(e) => {
                    fail(format!("schedule: {e}"));
                    continue;
                }
            };
            if trees.contains(&tree) {
                continue;
            }
            trees.push(tree.clone());
            let mut opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
            // Every other kernel with blocks of at most 64 threads
            // (gpu_block); some with register tiles of 2 points per
            // thread along each member, some without shared memory.
            if i % 2 == 1 {
                opts.code.gpu_block = 64;
            }
            if i % 3 == 0 && i % 2 == 0 {
                opts.code.gpu_thread_tile = 2;
            }
            if i % 5 == 0 {
                opts.code.gpu_global = true;
            }
            // Each tree with FP64 tensor cores too (`gpu_mma=on`), where they
            // change the program (contractions only): checked once else.
            let mut programs: Vec<String> = Vec::new();
            for mma in [false, true] {
                opts.code.gpu_mma = mma;
                let v = {
                    let _item = testkit::item(format!("{}: codegen", k.name), ITEM_LIMIT);
                    codegen::generate(&k.source, scop, deps, &tree, &opts)
                };
                let v = match v {
                    Ok(v) => v,
                    Err(e) => {
                        fail(format!("gpu_mma={}: codegen: {e}", if mma { "on" } else { "off" }));
                        continue;
                    }
                };
                if programs.contains(&v.program) {
                    continue;
                }
                programs.push(v.program.clone());
                let name = format!("{}.{}{feautrier}", k.name, if mma { "mma." } else { "" });
                let knob = if mma { "gpu_mma=on" } else { "gpu_mma=off" };
                let status = emulated_and_compiled(&k, &v, &name, |what| fail(format!("{knob}: {what}")));
                eprintln!("{name}: {} launch sites, {status}", launches(&v.region));
            }
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("gpu sweep: {} kernels, {:.0} s", paths.len(), started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} failures: {failures:#?}", failures.len());
}

/// The sweep's checks of one variant named `name`: its CUDA unit compiled
/// by nvcc for sm_80 and sm_90 where nvcc is found, its emulation's
/// outputs compared with the original's; each failure told to `fail`.
/// Returns the emulation's status.
fn emulated_and_compiled(
    k: &testkit::Kernel,
    v: &codegen::Variant,
    name: &str,
    fail: impl Fn(String),
) -> Status {
    match (&v.cuda, executor::cuda::nvcc()) {
        (None, _) => fail("no CUDA unit".into()),
        (Some(c), Some(nvcc)) => {
            let dir = testkit::root().join("target/tmp/polytune-gpu-test-units");
            std::fs::create_dir_all(&dir).unwrap();
            let unit = dir.join(format!("{name}.cu"));
            std::fs::write(&unit, &c.unit).unwrap();
            let _item = testkit::item(format!("{name}: nvcc"), ITEM_LIMIT);
            if let Err(e) = executor::cuda::compile_check(&nvcc, &unit, &["sm_80", "sm_90"]) {
                fail(format!("nvcc: {e}"));
            }
        }
        (Some(_), None) => assert!(
            std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
            "POLYTUNE_EXPECT_NVCC is set but no nvcc was found (POLYTUNE_NVCC, PATH, CUDA_HOME)"
        ),
    }
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let m = ev.evaluate(&reference, std::slice::from_ref(&v.program)).unwrap().remove(0);
    if m.status != Status::Ok {
        fail(format!("{} {}", m.status, m.reason));
    }
    m.status
}

/// `gpu_min_blocks` is the second argument of every kernel's launch bounds
/// (nvcc's choice without it), and nvcc takes it where it is found.
#[test]
fn gpu_min_blocks_bounds_each_kernel_for_nvcc() {
    let (_, v) = gemm_at_tile_16(&["gpu_thread_tile=4"]);
    let unit = v.cuda.expect("gemm has a CUDA form").unit;
    assert!(unit.contains("__launch_bounds__(16) polytune_kernel_0("), "{unit}");
    let (_, v) = gemm_at_tile_16(&["gpu_thread_tile=4", "gpu_min_blocks=2"]);
    let unit = v.cuda.expect("gemm has a CUDA form").unit;
    assert!(unit.contains("__launch_bounds__(16, 2) polytune_kernel_0("), "{unit}");
    let Some(nvcc) = executor::cuda::nvcc() else {
        assert!(
            std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
            "POLYTUNE_EXPECT_NVCC is set but no nvcc"
        );
        return;
    };
    let dir = testkit::root().join("target/tmp/polytune-gpu-test-units");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gemm.min-blocks.cu");
    std::fs::write(&path, &unit).unwrap();
    let _item = testkit::item("gemm with gpu_min_blocks=2: nvcc", std::time::Duration::from_secs(120));
    executor::cuda::compile_check(&nvcc, &path, &["sm_90"]).unwrap();
}

/// The CUDA form end to end as far as this machine goes: gemm's unit built
/// by nvcc and linked into its host program, then run on GPU 0 of a GPU
/// slot. With a GPU (nvidia-smi answers) the outputs must be the
/// original's and the kernel time recorded; without one the run must fail
/// with CUDA's own message, not hang or pass.
#[test]
fn a_cuda_variant_builds_and_runs_on_a_gpu_slot_or_says_there_is_no_device() {
    let Some(path) = executor::cuda::nvcc() else {
        assert!(
            std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
            "POLYTUNE_EXPECT_NVCC is set but no nvcc"
        );
        return;
    };
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    let cuda = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap().cuda.unwrap();
    let text = testkit::gpu_profile(&path);
    let profile = MachineProfile::parse(&text, std::path::Path::new("gpu.toml"), &[0]).unwrap();
    let nvcc = Nvcc::of(&profile).unwrap();
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap();
    let built = executor::cuda::build(&ev.builder, &nvcc, &cuda.program, &cuda.unit);
    assert!(built.binary().is_some(), "{built:?}");
    let on_gpu = Evaluator { slot: profile.gpus[0].host(), config: ev.config.on_gpu(&profile.gpus[0]), ..ev };
    let m = on_gpu.measure(&reference, &built, None);
    if testkit::has_gpu() {
        assert_eq!(m.status, Status::Ok, "{}", m.reason);
        assert_eq!(m.kernel_samples.len(), m.samples.len(), "{m:?}");
        assert!(m.kernel_samples[0] <= m.samples[0], "{m:?}");
    } else {
        assert_eq!(m.status, Status::Crash, "{}", m.reason);
        assert!(m.reason.contains("polytune: CUDA: starting CUDA:"), "{}", m.reason);
    }
}

/// Random program 499, cut down (`fixtures/skewedstage.c`): a condition
/// around a stage's barrier that isl words with the thread index. The
/// emulation has every thread evaluate it and checks that they agree
/// (before, code generation refused the kernel); the outputs are the
/// original's.
#[test]
fn a_barrier_under_a_condition_worded_with_the_thread_index_runs_when_the_threads_agree() {
    let (source, scop, deps) = extracted(&fixture("skewedstage.c"));
    let tree = space::reference::isl_gpu_schedule(&scop, &deps).unwrap();
    let knobs = gpu_knobs();
    let mut opts = CodegenOptions::for_point(Some(vec![4, 8]), 1, Some(&knobs));
    opts.code = CodeOptions::default().with_settings(&["gpu_block=128", "gpu_thread_tile=2"]).unwrap();
    let v = codegen::generate(&source, &scop, &deps, &tree, &opts).unwrap_or_else(|e| panic!("{e}"));
    let unit = &v.cuda.as_ref().expect("a CUDA form").unit;
    assert!(unit.contains("__syncthreads()"), "{unit}");
    assert!(v.program.contains("polytune_agreed0"), "{}", v.region);
    let ev = testkit::evaluator("gpu", &["-O1"], Some(1), Tolerance::default());
    matches_the_original(&ev, &source, &scop, v.program);
}

/// Random program 748, cut down (`fixtures/peeledhost.c`): isl generates
/// the host loop's first iteration apart, so the kernel below it is
/// launched twice for `i = 0`, each launch with part of the instances.
/// With `B` in each thread's private array, the second launch copied out
/// values it never computed (zeros at `-O3`); such a kernel is generated
/// without promotion now, and the outputs are the original's, bit for bit.
#[test]
fn a_kernel_launched_twice_for_one_host_iteration_is_not_promoted() {
    let (source, scop, deps) = extracted(&fixture("peeledhost.c"));
    let settings = ["target=gpu", "feautrier=self-first", "gpu_thread_tile=2"];
    let knobs = UnifiedOptions::default().with_settings(&settings).unwrap();
    let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler()).unwrap();
    let mut opts = CodegenOptions::for_point(Some(vec![8]), 1, Some(&knobs));
    opts.code = CodeOptions::default().with_settings(&settings).unwrap();
    let v = codegen::generate(&source, &scop, &deps, &s.tree, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(!v.program.contains("polytune_private"), "{}", v.region);
    let ev = testkit::evaluator("gpu-peeled", &["-O3"], Some(1), Tolerance::BITWISE);
    matches_the_original(&ev, &source, &scop, v.program);
}

/// `file` at `dataset` scheduled for the GPU (its scalars expanded, as a
/// GPU point's model is), mapped with tiles `tiles` and the code knobs
/// `settings`.
fn gpu_variant(
    file: &str,
    dataset: &str,
    tiles: &[u32],
    settings: &[&str],
) -> (testkit::Kernel, codegen::Variant) {
    let k = load(file, dataset);
    let knobs = gpu_knobs();
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &CodeOptions::default(), true).unwrap();
    let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler()).unwrap();
    let mut opts = CodegenOptions::for_point(Some(tiles.to_vec()), 1, Some(&knobs));
    opts.code = CodeOptions::default().with_settings(settings).unwrap();
    let v =
        codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
    (k, v)
}

/// `unit` written beside the other tests' units as `name.cu`, compiled by
/// nvcc for sm_80 and sm_90 with ptxas's report kept as `name.ptxas.txt`;
/// the report, or `None` where no nvcc is found (CI sets
/// `POLYTUNE_EXPECT_NVCC`: there it must be).
fn ptxas_report(name: &str, unit: &str) -> Option<String> {
    let Some(nvcc) = executor::cuda::nvcc() else {
        assert!(
            std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
            "POLYTUNE_EXPECT_NVCC is set but no nvcc"
        );
        return None;
    };
    let dir = testkit::root().join("target/tmp/polytune-gpu-test-units");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.cu"));
    std::fs::write(&path, unit).unwrap();
    let _item = testkit::item(format!("{name}: nvcc"), ITEM_LIMIT);
    let report = executor::cuda::compile_report(&nvcc, &path, &["sm_80", "sm_90"])
        .unwrap_or_else(|e| panic!("{name}: nvcc: {e}"));
    std::fs::write(dir.join(format!("{name}.ptxas.txt")), &report).unwrap();
    Some(report)
}

/// Issue 67's FP64 tensor cores (`gpu_mma=on`): the contractions of gemm,
/// 2mm, 3mm and syrk (its triangle: the diagonal blocks' fragments hold
/// elements the statement never writes, which are not added) are summed by
/// warps in `wmma` fragments of 8 × 8 × 4 doubles, one helper call a step
/// of 4 along `k`; the emulation, lane by lane, matches the original
/// within the tolerance; nvcc compiles the units for sm_80 and sm_90, and
/// ptxas spills nothing for gemm's. The fast tier takes every third case.
#[test]
fn contractions_sum_on_fp64_tensor_cores_and_match_the_original_when_emulated() {
    let cases: &[(&str, &[u32], &str, usize)] = &[
        ("linear-algebra/gemm.c", &[16], "gpu_thread_tile=1", 1),
        ("linear-algebra/2mm.c", &[32, 32, 16], "gpu_thread_tile=2", 2),
        ("linear-algebra/3mm.c", &[16], "gpu_block=256", 3),
        ("linear-algebra/syrk.c", &[16], "gpu_thread_tile=1", 1),
        ("linear-algebra/gemm.c", &[32, 32, 16], "gpu_thread_tile=2", 1),
        ("linear-algebra/2mm.c", &[16], "gpu_block=64", 2),
        ("linear-algebra/3mm.c", &[32, 32, 16], "gpu_thread_tile=2", 3),
        ("linear-algebra/syrk.c", &[32, 32, 16], "gpu_thread_tile=2", 1),
    ];
    let ev = testkit::evaluator("gpu-mma", &["-O1"], Some(1), Tolerance::default());
    for (i, &(file, tiles, setting, contractions)) in cases.iter().enumerate() {
        if !testkit::takes(i, 0, 3, 1) {
            continue;
        }
        let (k, v) = {
            let _item = testkit::item(format!("{file}: codegen"), ITEM_LIMIT);
            gpu_variant(file, "SMALL", tiles, &["gpu_mma=on", setting])
        };
        let unit = &v.cuda.as_ref().expect("a CUDA form").unit;
        let steps = unit.matches("static __device__ __forceinline__ void polytune_wmma_step_").count();
        assert_eq!(steps, contractions, "{file}: {unit}");
        assert!(unit.contains("#include <mma.h>") && unit.contains("nvcuda::wmma::mma_sync("), "{unit}");
        // The emulation calls the same helpers, defined for the CPU.
        assert!(v.program.contains("typedef struct { double x[2]; } polytune_mma_acc;"), "{}", v.region);
        let _item = testkit::item(format!("{file}: emulated"), ITEM_LIMIT);
        let reference = ev.reference(&codegen::original_program(&k.source, &k.scop).unwrap()).unwrap();
        let m = ev.evaluate(&reference, std::slice::from_ref(&v.program)).unwrap().remove(0);
        assert_eq!(m.status, Status::Ok, "{file} {tiles:?} {setting}: {}", m.reason);
        drop(_item);
        let name = format!("{}.mma.{}", k.name, i);
        if let Some(report) = ptxas_report(&name, unit) {
            let spills = executor::cuda::spills(&report);
            eprintln!("{file} {tiles:?} {setting}: {} spills", spills.len());
            if k.name == "gemm" {
                assert!(spills.is_empty(), "{file}: {spills:?}\n{report}");
            }
        }
    }
}

/// ptxas spills nothing for gemm's tensor-core kernels at the tile shapes,
/// points per thread, block sizes and `gpu_min_blocks` of the default GPU
/// grid and of `scripts/gpu/measure.sh` (generated at LARGE, compiled only);
/// each unit's report is kept beside it. The fast tier takes every fourth.
#[test]
fn gemm_on_tensor_cores_spills_nothing_at_the_grids_shapes() {
    let shapes: &[(&[u32], &[&str])] = &[
        (&[32], &["gpu_thread_tile=2", "gpu_block=1024"]),
        (&[16], &["gpu_thread_tile=1", "gpu_block=256", "gpu_min_blocks=3"]),
        (&[32], &["gpu_thread_tile=1", "gpu_block=1024"]),
        (&[32], &["gpu_thread_tile=4", "gpu_block=256", "gpu_min_blocks=3"]),
        (&[64, 64, 16], &["gpu_thread_tile=4", "gpu_block=1024"]),
        (&[32, 32, 16], &["gpu_thread_tile=2", "gpu_block=256"]),
        (&[64, 64, 16], &["gpu_thread_tile=4", "gpu_block=256", "gpu_min_blocks=3"]),
        (&[64, 64, 16], &["gpu_thread_tile=2", "gpu_block=1024"]),
        (&[64, 64, 32], &["gpu_thread_tile=4", "gpu_block=1024"]),
        (&[64, 64, 32], &["gpu_thread_tile=2", "gpu_block=256", "gpu_min_blocks=3"]),
    ];
    for (i, &(tiles, settings)) in shapes.iter().enumerate() {
        if !testkit::takes(i, 0, 4, 1) {
            continue;
        }
        let mut all = vec!["gpu_mma=on"];
        all.extend(settings);
        let (_, v) = {
            let _item = testkit::item(format!("gemm {tiles:?} {settings:?}: codegen"), ITEM_LIMIT);
            gpu_variant("linear-algebra/gemm.c", "LARGE", tiles, &all)
        };
        let unit = &v.cuda.as_ref().expect("gemm has a CUDA form").unit;
        assert!(unit.contains("nvcuda::wmma::mma_sync("), "{tiles:?} {settings:?}: no tensor cores\n{unit}");
        let shape: Vec<String> = tiles.iter().map(u32::to_string).collect();
        let name = format!("gemm.mma.{}.{}", shape.join("x"), settings.join(".").replace('=', "-"));
        if let Some(report) = ptxas_report(&name, unit) {
            let spills = executor::cuda::spills(&report);
            assert!(spills.is_empty(), "{name}: {spills:?}\n{report}");
        }
    }
}

/// The tensor cores' staging tile is read after a barrier: without it (the
/// kernel's third, after the stage's two) a thread adds sums another warp
/// has not stored yet, and the emulation's output is wrong, as a GPU's
/// would be. Elsewhere the knob changes nothing: kernels that are no
/// contraction (jacobi-2d, atax) get the program `gpu_mma=off` gets.
#[test]
fn the_tensor_cores_barrier_is_needed_and_other_kernels_keep_their_code() {
    let (k, v) = gpu_variant("linear-algebra/gemm.c", "SMALL", &[16], &["gpu_mma=on"]);
    assert!(v.cuda.as_ref().unwrap().unit.contains("polytune_barrier_2(...) __syncthreads()"));
    let ev = testkit::evaluator("gpu-mma", &["-O1"], Some(1), Tolerance::default());
    let reference = ev.reference(&codegen::original_program(&k.source, &k.scop).unwrap()).unwrap();
    let m = ev.evaluate(&reference, &[v.program]).unwrap().remove(0);
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    let knobs = gpu_knobs();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let mut opts = CodegenOptions::for_point(Some(vec![16]), 1, Some(&knobs));
    opts.code = CodeOptions::default().with_settings(&["gpu_mma=on"]).unwrap();
    let faulty = CodegenOptions { drop_barrier: Some(2), ..opts };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &faulty).unwrap();
    let m = ev.evaluate(&reference, &[v.program]).unwrap().remove(0);
    assert_eq!(m.status, Status::Wrong, "without the staging barrier: {} {}", m.status, m.reason);
    for file in ["stencils/jacobi-2d.c", "linear-algebra/atax.c"] {
        let (k, on) = gpu_variant(file, "SMALL", &[16], &["gpu_mma=on"]);
        let (_, off) = gpu_variant(file, "SMALL", &[16], &[]);
        assert!(!codegen::has_contraction(&model::isl::new_context(), &k.scop).unwrap(), "{file}");
        assert_eq!(on.program, off.program, "{file}");
        assert_eq!(on.cuda.unwrap().unit, off.cuda.unwrap().unit, "{file}");
    }
}
