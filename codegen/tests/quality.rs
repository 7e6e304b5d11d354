//! The shape of generated code, not only its outputs: full tiles are
//! isolated from partial ones (point loops bounded by the tile sizes, no
//! `min`/`max`, no guard for a statement fused into a deeper band), and the
//! isolation gives up within its budget where it would be expensive.

use codegen::{self, CodegenOptions};
use executor::verify::Tolerance;
use testkit::tree::Tree;
use testkit::{load, Kernel};
use vocab::knobs::UnifiedOptions;

/// A loop header `for (int c3 = 0; c3 <= 31; c3++) {`: from 0 to a constant.
fn constant_loop(line: &str) -> bool {
    let line = line.trim();
    let Some(rest) = line.strip_prefix("for (int ") else { return false };
    let it = rest.split(' ').next().unwrap();
    let Some(bound) = rest.strip_prefix(&format!("{it} = 0; {it} <= ")) else { return false };
    let Some(bound) = bound.strip_suffix(&format!("; {it}++) {{")) else { return false };
    bound.parse::<u32>().is_ok()
}

/// The lines of `region` that call `stmt` directly inside `depth` loops from
/// 0 to a constant (nothing else between the headers and the call).
fn calls_in_constant_nests(region: &str, stmt: &str, depth: usize) -> usize {
    let lines: Vec<&str> = region.lines().collect();
    let call = format!("polytune_{stmt}(");
    (depth..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with(&call))
        .filter(|&i| {
            // Statements of the same body may precede the call.
            let mut j = i;
            while j > 0 && lines[j - 1].trim_start().starts_with("polytune_S") {
                j -= 1;
            }
            j >= depth && lines[j - depth..j].iter().all(|l| constant_loop(l))
        })
        .count()
}

#[test]
fn gemm_full_tiles_have_constant_point_loops_and_no_guard() {
    // SMALL is 60 x 70 x 80: with tiles of 32 there are full and partial
    // tiles in every dimension.
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = UnifiedOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![32]), 2, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let region = &v.region;
    // The update in a full tile: three point loops 0..31 and nothing else.
    assert!(calls_in_constant_nests(region, "S2", 3) >= 1, "{region}");
    // The scaling `C[i][j] *= beta` fused at k == 0 runs in its own copy of
    // the innermost loop, unguarded, in full tiles.
    let lines: Vec<&str> = region.lines().collect();
    let unguarded_s1 =
        lines.windows(2).any(|w| constant_loop(w[0]) && w[1].trim_start().starts_with("polytune_S1("));
    assert!(unguarded_s1, "{region}");
    // Partial tiles keep their bounds.
    assert!(region.contains("min("), "{region}");
    assert!(Tree::read(&v.schedule).bands.iter().any(|b| b.isolated), "{}", v.schedule);

    // Same outputs as the original, bit for bit (the k order is kept).
    same_outputs(&k, v.program);
}

/// Builds the original and `program` (2 threads), runs both at the
/// dataset `k` was loaded with and compares their outputs bit for bit.
fn same_outputs(k: &Kernel, program: String) {
    let flags = ["-O2", "-ffp-contract=off", "-fopenmp"];
    testkit::assert_same_outputs(
        &testkit::evaluator("codegen-quality", &flags, Some(2), Tolerance::BITWISE),
        k,
        program,
    );
}

/// `program`'s outputs agree with `k`'s original's within the default
/// tolerance (reassociated sums round differently).
fn close_outputs(k: &Kernel, program: String) {
    let flags = ["-O2", "-fopenmp"];
    testkit::assert_same_outputs(
        &testkit::evaluator("codegen-quality", &flags, Some(2), Tolerance::default()),
        k,
        program,
    );
}

/// `k` under the unified scheduler's defaults, tiled by `tiles` on
/// `threads` threads, with the code knobs `settings` (the model rewritten
/// for transposed copies where they say so).
fn unified_variant(k: &Kernel, settings: &[&str], tiles: Vec<u32>, threads: usize) -> codegen::Variant {
    let knobs = UnifiedOptions::default();
    let code = vocab::knobs::CodeOptions::default().with_settings(settings).unwrap();
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &code, false).unwrap();
    let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions { code, ..CodegenOptions::for_point(Some(tiles), threads, Some(&knobs)) };
    codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap()
}

/// A program of the test's own (`HARNESS` stands for the measurement
/// harness's header) written to `STEM.c` in a temporary directory, which
/// lives as long as the guard returned, and loaded at MINI.
fn load_own(stem: &str, text: &str) -> (Kernel, testkit::TempDir) {
    let dir = testkit::TempDir::new(stem);
    let harness = testkit::root().join("polybench/harness/polytune.h");
    let path = dir.join(format!("{stem}.c"));
    std::fs::write(&path, text.replace("HARNESS", &harness.display().to_string())).unwrap();
    (load(&path, "MINI"), dir)
}

/// Untiled code and bands that are not tiled get no isolation.
#[test]
fn untiled_code_is_not_isolated() {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = UnifiedOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(None, 1, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    assert!(!Tree::read(&v.schedule).bands.iter().any(|b| b.isolated), "{}", v.schedule);
}

/// heat-3d under isl's schedule: a 4-d time-skewed band whose full tiles are
/// a dozen polyhedra and cost isl about 10 s to find; the budget (counted in
/// isl operations, so the outcome does not depend on the machine's load)
/// gives up and the band is generated as before.
#[test]
fn expensive_isolation_gives_up_within_its_budget() {
    let k = load("stencils/heat-3d.c", "SMALL");
    let schedule = space::reference::isl_schedule(&k.scop, &k.deps).unwrap();
    let opts = CodegenOptions { tile_sizes: Some(vec![32]), openmp: true, ..Default::default() };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &schedule, &opts).unwrap();
    assert!(!Tree::read(&v.schedule).bands.iter().any(|b| b.isolated), "{}", v.schedule);
    assert_eq!(calls_in_constant_nests(&v.region, "S1", 2), 0, "{}", v.region);
}

/// `wavefront=all` on time-skewed stencils (issue 6): the tile loops are
/// iterators of their own and isl generates them from a relaxed tile
/// domain, so code generation completes (it used to spend many minutes in
/// isl's stride detection; a regression hangs this test rather than
/// failing it), the wavefront's inner tile loop runs in parallel, and the
/// outputs are the original's.
#[test]
fn wavefront_all_on_skewed_stencils_generates_and_matches_the_original() {
    for kernel in ["stencils/jacobi-2d.c", "stencils/heat-3d.c"] {
        let k = load(kernel, "SMALL");
        let knobs = UnifiedOptions::default().with_settings(&["wavefront=all"]).unwrap();
        let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
        let opts = CodegenOptions::for_point(Some(vec![32]), 2, Some(&knobs));
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
        // The first tile loop is the sum of all (the wavefront), not
        // parallel; the next one is.
        assert!(v.region.contains("#pragma omp parallel for"), "{kernel}: {}", v.region);
        assert!(Tree::read(&v.schedule).has_mark("polytune_parallel_1"), "{kernel}: {}", v.schedule);
        same_outputs(&k, v.program);
    }
}

/// Register tiling (unroll-and-jam) and vectorisation (issue 17), on gemm
/// and on jacobi-2d's time-skewed band: the strips of the two outer point
/// loops are loops of the factor's length under `#pragma GCC unroll`, inside
/// the innermost point loop, which gets `omp simd` where it is parallel
/// (gemm's `j`); the arrays are used through `restrict` pointers; in
/// gemm's full tiles the strips have constant bounds (jacobi-2d's skewed
/// tiles are not isolated); outputs are the original's bit for bit (neither
/// knob reorders the updates of one element).
#[test]
fn register_tiled_vectorised_variants_match_the_original() {
    let code = vocab::knobs::CodeOptions::default()
        .with_settings(&["restrict=on", "simd=innermost", "unroll_jam=4"])
        .unwrap();
    for (kernel, simd, constant) in
        [("linear-algebra/gemm.c", true, true), ("stencils/jacobi-2d.c", false, false)]
    {
        let k = load(kernel, "SMALL");
        let knobs = UnifiedOptions::default();
        let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
        let opts = CodegenOptions {
            code: code.clone(),
            ..CodegenOptions::for_point(Some(vec![16]), 2, Some(&knobs))
        };
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
        let region = &v.region;
        let lines: Vec<&str> = region.lines().map(str::trim).collect();
        let unrolled = lines.windows(2).filter(|w| w[0] == "#pragma GCC unroll 4");
        let strips = unrolled.filter(|w| !constant || constant_loop(w[1])).count();
        assert!(strips >= 2, "{kernel}: {region}");
        assert_eq!(region.contains("#pragma omp simd"), simd, "{kernel}: {region}");
        assert!(region.contains("__restrict__"), "{kernel}: {region}");
        same_outputs(&k, v.program);
    }
}

/// Register tiles on a triangular domain (issue 17): syrk's `j <= i` leaves
/// the tiles along the diagonal partial, and their strips that are whole
/// are isolated too: below a loop that the diagonal bounds (a `min` of
/// loop iterators, no size parameter), both strips are constant loops
/// under `#pragma GCC unroll` (they used to be the general code, with the
/// diagonal's `max` in the strip loops); outputs are the original's bit for
/// bit.
#[test]
fn whole_register_tiles_of_diagonal_tiles_are_unrolled() {
    let k = load("linear-algebra/syrk.c", "SMALL");
    let v = unified_variant(&k, &["restrict=on", "unroll_jam=4"], vec![16], 2);
    let region = &v.region;
    let lines: Vec<&str> = region.lines().map(str::trim).collect();
    let diagonal = |line: &str| {
        let Some((_, bound)) = line.strip_prefix("for (").and_then(|l| l.split_once(" <= ")) else {
            return false;
        };
        let bound = bound.split(';').next().unwrap();
        let names =
            bound.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| t.starts_with(char::is_alphabetic));
        bound.starts_with("min(") && names.into_iter().all(|t| t == "min" || t.starts_with('c'))
    };
    let whole = |w: &[&str]| {
        w[0] == "#pragma GCC unroll 4"
            && constant_loop(w[1])
            && w[2] == "#pragma GCC unroll 4"
            && constant_loop(w[3])
    };
    let found = (0..lines.len()).any(|i| {
        diagonal(lines[i]) && (i + 1..i + 4).any(|j| j + 4 <= lines.len() && whole(&lines[j..j + 4]))
    });
    assert!(found, "{region}");
    same_outputs(&k, v.program);
}

/// Transposed copies of 2 MiB and more (issue 17) are allocated on huge
/// pages on Linux (`polytune_copy_alloc`); syrk at LARGE copies its
/// 1200 × 1000 `A` (9.6 MB), so the variant takes that path, and its
/// outputs are the original's bit for bit.
#[test]
fn large_transposed_copies_match_the_original() {
    let k = load("linear-algebra/syrk.c", "LARGE");
    let knobs = UnifiedOptions::default();
    let code = vocab::knobs::CodeOptions::default().with_settings(&["transpose=on"]).unwrap();
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &code, false).unwrap();
    assert_eq!(scop.copies.len(), 1);
    let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions { code, ..CodegenOptions::for_point(Some(vec![32]), 2, Some(&knobs)) };
    let v = codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap();
    assert!(v.region.contains("polytune_copy_alloc(sizeof(double)"), "{}", v.region);
    same_outputs(&k, v.program);
}

/// Two-level tiling (`l2_tile`, issue 17): gemm's tiles of 8 inside outer
/// tiles of 32, the outer tile loop the parallel one, the inner tile loops
/// stepping by 8 from the outer tile's start; and fdtd-2d's time-skewed band
/// at the same sizes, where isl's default generation of the outer tile loops
/// lost 413 instances of the `hz` update (they are atomic loops now).
/// Outputs are the original's bit for bit, and every instance runs once.
#[test]
fn two_level_tiles_match_the_original() {
    for kernel in ["linear-algebra/gemm.c", "stencils/fdtd-2d.c"] {
        let k = load(kernel, "SMALL");
        let v = unified_variant(&k, &["restrict=on", "l2_tile=4"], vec![8], 2);
        let region = &v.region;
        let lines: Vec<&str> = region.lines().map(str::trim).collect();
        if kernel.contains("gemm") {
            let parallel = lines.iter().position(|l| l.starts_with("#pragma omp parallel for")).unwrap();
            assert!(lines[parallel + 1].ends_with("c0 += 32) {"), "{region}");
            assert!(
                lines.iter().any(|l| l.starts_with("for (int c3 = 0;") && l.ends_with("c3 += 8) {")),
                "{region}"
            );
        }
        testkit::instances::assert_same_instances(&k, &v.program, "l2_tile=4, tiles of 8");
        same_outputs(&k, v.program);
    }
}

/// `parallel_min` (issue 17): every `parallel for` carries an `if` clause
/// that holds exactly when its loop, as printed on the next line, has at
/// least that many iterations (here the wavefront's tile loops of
/// jacobi-2d, whose diagonals hold one tile and more); outputs are the
/// original's.
#[test]
fn parallel_min_guards_each_parallel_loop_by_its_trip_count() {
    let k = load("stencils/jacobi-2d.c", "SMALL");
    let knobs = UnifiedOptions::default().with_settings(&["wavefront=all"]).unwrap();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let code = vocab::knobs::CodeOptions::default().with_settings(&["parallel_min=4"]).unwrap();
    let opts = CodegenOptions { code, ..CodegenOptions::for_point(Some(vec![16]), 2, Some(&knobs)) };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let lines: Vec<&str> = v.region.lines().map(str::trim).collect();
    let mut guarded = 0;
    for w in lines.windows(2).filter(|w| w[0].starts_with("#pragma omp parallel for")) {
        // `for (int c1 = INIT; c1 <= BOUND; c1++) {`
        let header = w[1].strip_prefix("for (int ").unwrap_or_else(|| panic!("{}", v.region));
        let (it, rest) = header.split_once(" = ").unwrap();
        let (init, rest) = rest.split_once("; ").unwrap();
        let bound = rest.strip_prefix(&format!("{it} <= ")).unwrap_or_else(|| panic!("{}", w[1]));
        let (bound, step) = bound.split_once("; ").unwrap();
        assert_eq!(step, format!("{it}++) {{"), "{}", w[1]);
        assert!(w[0].ends_with(&format!(" if(({bound}) - ({init}) >= 3)")), "{}\n{}", w[0], w[1]);
        guarded += 1;
    }
    assert!(guarded > 0, "{}", v.region);
    same_outputs(&k, v.program);
}

/// gemm at SMALL under the unified scheduler for OpenMP, on two threads,
/// with the code knobs `settings` and tiles `tiles`.
fn gemm_on_two_threads(settings: &[&str], tiles: Vec<u32>) -> (Kernel, codegen::Variant) {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = UnifiedOptions::default().with_settings(&["target=openmp"]).unwrap();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let code = vocab::knobs::CodeOptions::default().with_settings(settings).unwrap();
    let opts = CodegenOptions { code, ..CodegenOptions::for_point(Some(tiles), 2, Some(&knobs)) };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    (k, v)
}

/// `vector_width` (issue 17): the file starts with gcc's target pragma, so
/// that the SCoP's function and the outlined ones compile under it; outputs
/// are the original's.
#[test]
fn vector_width_is_a_target_pragma_over_the_whole_file() {
    let (k, v) =
        gemm_on_two_threads(&["restrict=on", "simd=innermost", "unroll_jam=4", "vector_width=512"], vec![16]);
    assert!(v.program.starts_with("#pragma GCC target(\"prefer-vector-width=512\")\n"));
    assert_eq!(v.program.matches("prefer-vector-width").count(), 1);
    same_outputs(&k, v.program);
}

/// `mtune`: gcc's tuning pragma, guarded so that only gcc on x86 reads it,
/// over the whole file with `vector_width`'s; outputs are the original's.
#[test]
fn mtune_is_a_guarded_target_pragma_over_the_whole_file() {
    let (k, v) = gemm_on_two_threads(
        &["restrict=on", "micro_tile=4x32", "vector_width=512", "mtune=icelake-server"],
        vec![32, 32, 128],
    );
    let head: Vec<&str> = v.program.lines().take(4).collect();
    assert_eq!(
        head,
        [
            "#pragma GCC target(\"prefer-vector-width=512\")",
            "#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)",
            "#pragma GCC target(\"tune=icelake-server\")",
            "#endif",
        ]
    );
    assert_eq!(v.program.matches("tune=").count(), 1);
    same_outputs(&k, v.program);
}

/// The instance oracle (`testkit::instances`) itself: gemm's code as
/// generated runs the original's instances; the same code with the update
/// skipped on one row of tiles, or run twice, does not.
#[test]
fn the_instance_oracle_sees_lost_and_repeated_instances() {
    let k = load("linear-algebra/gemm.c", "MINI");
    let v = unified_variant(&k, &[], vec![4], 1);
    let want = testkit::instances::original(&k).unwrap();
    testkit::instances::check(&k, &want, &v.program).unwrap();
    let call = v.program.lines().find(|l| l.trim_start().starts_with("polytune_S2(")).unwrap();
    let lost = v.program.replacen(call, &format!("if (c0 != 4) {call}"), 1);
    let twice = v.program.replacen(call, &format!("{call} {call}"), 1);
    for (what, program) in [("lost", lost), ("twice", twice)] {
        let e = testkit::instances::check(&k, &want, &program).expect_err(what);
        assert!(e.starts_with("S2 runs"), "{what}: {e}");
    }
}

/// The `polytune_S…` calls of the innermost loops of `region`: for each
/// loop whose body is calls only, the statements it calls.
fn innermost_bodies(region: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = region.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("for (") {
            continue;
        }
        let body: Vec<&str> =
            lines[i + 1..].iter().take_while(|l| l.starts_with("polytune_S")).copied().collect();
        if !body.is_empty() && lines.get(i + 1 + body.len()) == Some(&"}") {
            out.push(body.iter().map(|c| c.split('(').next().unwrap().to_string()).collect());
        }
    }
    out
}

/// Loop fission (`fission=on`) of jacobi-2d's time-skewed tiles: the two
/// sweeps, fused with a shift in the innermost point loop, each get a loop
/// of their own there, which the legality test then finds parallel (`omp
/// simd`); with the tile loops in a wavefront (tile iterators of their own)
/// too. The outputs are the original's bit for bit and every instance runs
/// once.
#[test]
fn fission_gives_each_statement_of_a_stencil_its_own_innermost_loop() {
    let k = load("stencils/jacobi-2d.c", "SMALL");
    let want = testkit::instances::original(&k).unwrap();
    for (wavefront, threads) in [("none", 1), ("all", 2)] {
        let knobs = UnifiedOptions::default().with_settings(&[format!("wavefront={wavefront}")]).unwrap();
        let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
        let code = |fission: &str| {
            let settings = ["simd=innermost".to_string(), format!("fission={fission}")];
            let opts = CodegenOptions {
                code: vocab::knobs::CodeOptions::default().with_settings(&settings).unwrap(),
                ..CodegenOptions::for_point(Some(vec![16]), threads, Some(&knobs))
            };
            codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap()
        };
        let (fused, split) = (code("off"), code("on"));
        let fused_bodies = innermost_bodies(&fused.region);
        assert!(fused_bodies.iter().any(|b| b.len() == 2), "{wavefront}: {}", fused.region);
        assert!(!fused.region.contains("#pragma omp simd"), "{wavefront}: {}", fused.region);
        let bodies = innermost_bodies(&split.region);
        assert!(!bodies.is_empty() && bodies.iter().all(|b| b.len() == 1), "{wavefront}: {}", split.region);
        assert!(split.region.contains("#pragma omp simd"), "{wavefront}: {}", split.region);
        assert!(split.bands.iter().any(|p| p.action == space::clay::Action::Fission), "{:?}", split.bands);
        testkit::instances::check(&k, &want, &split.program).unwrap();
        same_outputs(&k, split.program);
    }
}

/// A program of two statements where the second feeds the first along the
/// innermost loop (`A[i][j]` reads the `B[i][j - 1]` of the iteration
/// before): running all of the first's iterations before the second's
/// would read `B` too early, so `fission=on` leaves the loop whole, and a
/// script's `fission` step is refused naming the dependence.
#[test]
fn fission_is_refused_where_a_later_statement_feeds_an_earlier_one() {
    let text = r#"#include "HARNESS"
#define N 40
static void kernel(int n, double A[n][n], double B[n][n])
{
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++) {
      A[i][j] = B[i][j - 1] + 0.5 * A[i - 1][j];
      B[i][j] = 0.25 * A[i][j] + B[i - 1][j];
    }
#pragma endscop
}
int main(void)
{
  int n = N;
  double(*A)[n] = polytune_alloc(sizeof(double[n][n]));
  double(*B)[n] = polytune_alloc(sizeof(double[n][n]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 11;
      B[i][j] = (double)((i * 5 + j * 13) % 17) / 17;
    }
  polytune_timer_start();
  kernel(n, A, B);
  polytune_timer_stop();
  polytune_dump(A, sizeof(double[n][n]));
  polytune_dump(B, sizeof(double[n][n]));
  return 0;
}
"#;
    let (k, _dir) = load_own("feedback", text);
    let knobs = UnifiedOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions {
        code: vocab::knobs::CodeOptions::default().with_settings(&["fission=on"]).unwrap(),
        ..CodegenOptions::for_point(Some(vec![8]), 1, Some(&knobs))
    };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    assert!(innermost_bodies(&v.region).iter().any(|b| b.len() == 2), "{}", v.region);
    assert!(!v.bands.iter().any(|p| p.action == space::clay::Action::Fission), "{:?}", v.bands);
    same_outputs(&k, v.program);
    // The same band with a plan that asks for fission.
    let mut plan = v.bands.clone();
    let tile = plan.iter().find(|p| matches!(p.action, space::clay::Action::Tile { .. })).unwrap().clone();
    plan.push(space::clay::Planned { action: space::clay::Action::Fission, ..tile });
    let opts = CodegenOptions { plan: Some(plan), ..opts };
    match codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts) {
        Err(codegen::CodegenError::Illegal(v)) => assert!(!v.is_empty()),
        other => panic!("{:?}", other.map(|v| v.region)),
    }
}

/// Packing (`pack=on`, issue 38): gemm's tiles read `A` and `B` from
/// thread-local buffers that copy statements fill, indexed by subscript
/// minus the tile's offset (unit stride kept), `B`'s copy hoisted out of
/// the `i` tile loop, which goes innermost; syrk's two
/// tiles of `A` get a buffer each; 2mm's second nest packs `tmp`, which
/// only the first writes; jacobi-2d writes every array it reads and
/// packs nothing. With and without `restrict` (outlined functions get the
/// rewritten statements too), outputs are the original's bit for bit:
/// packing moves data, not arithmetic.
#[test]
fn packed_tiles_match_the_original() {
    for (kernel, buffers) in [
        ("linear-algebra/gemm.c", 2),
        ("linear-algebra/syrk.c", 2),
        ("linear-algebra/2mm.c", 4),
        ("stencils/jacobi-2d.c", 0),
    ] {
        let k = load(kernel, "SMALL");
        for settings in [&["pack=on"][..], &["pack=on", "restrict=on", "simd=innermost", "unroll_jam=4"]] {
            let v = unified_variant(&k, settings, vec![16, 32, 64], 2);
            let copies = (0..8).filter(|n| v.region.contains(&format!("polytune_pack_in_{n}("))).count();
            assert_eq!(copies, buffers, "{kernel} {settings:?}: {}", v.region);
            assert_eq!(v.program.contains("static _Thread_local double polytune_pack_0"), buffers > 0);
            if buffers > 0 {
                assert!(v.region.contains("- polytune_pack_offset_0[1]]"), "{kernel}: {}", v.region);
            }
            if kernel.contains("gemm") {
                // `B[k][j]`'s tile, the larger, is copied above the `i`
                // tile loop (moved innermost): two outer values, not three.
                assert!(v.region.contains("(d0, d1, a0, a1, a2, a3) (polytune_pack_offset_"), "{}", v.region);
                assert!(v.region.contains("= B[(a0)][(a1)])"), "{}", v.region);
            }
            same_outputs(&k, v.program);
        }
    }
}

/// Two copies hoisted to one depth (issue 38): `A[i][k]` and `B[i][k]`
/// both stay the same along `j`, whose tile loop goes innermost, so both
/// copies are made above it, one after the other; outputs are the
/// original's bit for bit.
#[test]
fn copies_hoisted_to_one_depth_match_the_original() {
    let text = r#"#include "HARNESS"
#define N 70
static void kernel(int n, double A[n][n], double B[n][n], double C[n][n])
{
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[i][k] * (j + 1);
#pragma endscop
}
int main(void)
{
  int n = N;
  double(*A)[n] = polytune_alloc(sizeof(double[n][n]));
  double(*B)[n] = polytune_alloc(sizeof(double[n][n]));
  double(*C)[n] = polytune_alloc(sizeof(double[n][n]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 11;
      B[i][j] = (double)((i * 5 + j * 13) % 17) / 17;
      C[i][j] = 0;
    }
  polytune_timer_start();
  kernel(n, A, B, C);
  polytune_timer_stop();
  polytune_dump(C, sizeof(double[n][n]));
  return 0;
}
"#;
    let (k, _dir) = load_own("rows", text);
    let v = unified_variant(&k, &["pack=on", "restrict=on"], vec![16], 1);
    for n in 0..2 {
        let copy = format!("#define polytune_pack_in_{n}(d0, d1, a0, a1, a2, a3)");
        assert!(v.region.contains(&copy), "{copy}: {}", v.region);
    }
    same_outputs(&k, v.program);
}

/// Micro tiles over packed operands (issue 38): the tile's operands are
/// packed, each one whose every use is multiplied first by `alpha` holding
/// the products (gemm's and 2mm's `alpha * A[i][k]`, syrk's row operand;
/// none in 3mm), the written block is accumulated in registers. syr2k's
/// two column operands are read through transposed copies that already
/// hold `alpha`'s products, and their packs copy those. Outputs are the
/// original's bit for bit: the same products, rounded once as the
/// statements rounded them.
#[test]
fn micro_tiles_over_scaled_packs_match_the_original() {
    for (kernel, packs, transposed) in
        [("gemm", 1, 0), ("2mm", 1, 0), ("3mm", 0, 0), ("syrk", 1, 0), ("syr2k", 0, 2)]
    {
        let k = load(format!("linear-algebra/{kernel}.c"), "SMALL");
        let v = unified_variant(&k, &["micro_tile=4x8", "pack=on", "transpose=on"], vec![16, 32, 64], 2);
        let scaled = |copies: &str| {
            v.region.lines().filter(|l| l.starts_with(copies) && l.contains("= alpha * ")).count()
        };
        assert_eq!(scaled("#define polytune_pack_in_"), packs, "{kernel}: {}", v.region);
        assert_eq!(
            scaled("#define polytune_copy_polytune_transposed_"),
            transposed,
            "{kernel}: {}",
            v.region
        );
        assert!(v.region.contains("polytune_acc_in_0("), "{kernel}: {}", v.region);
        same_outputs(&k, v.program);
    }
}

/// Micro tiles (`micro_tile`, issue 38): where the writes stay put along a
/// point loop (the `k` of gemm, 2mm, 3mm, syrk and syr2k), that
/// loop runs outside a register tile of rows (unrolled) by columns
/// (vectorised) whose written elements live in a block-local array, copied
/// in before it and out after it; with `restrict`, on one thread and on two
/// (each thread's array is its own); syrk and syr2k read transposed copies
/// (without them their `k` is the innermost, unit-stride loop). jacobi-2d writes what it reads along
/// every loop and gets none. Outputs are the original's bit for bit: each
/// element's updates keep their order. On one thread with `restrict`, the
/// body of each outermost loop is a function, as under `omp parallel for`
/// (with the tile loop in the same function gcc spilled the tile).
#[test]
fn micro_tiles_match_the_original() {
    for (kernel, arrays) in [
        ("linear-algebra/gemm.c", 1),
        ("linear-algebra/3mm.c", 3),
        ("linear-algebra/syrk.c", 1),
        ("linear-algebra/syr2k.c", 1),
        ("linear-algebra/2mm.c", 2),
        ("stencils/jacobi-2d.c", 0),
    ] {
        let k = load(kernel, "SMALL");
        for (settings, threads) in [
            (&["micro_tile=4x8", "transpose=on"][..], 1),
            (&["micro_tile=4x16", "transpose=on", "restrict=on", "simd=innermost"][..], 2),
            (&["micro_tile=4x16", "transpose=on", "restrict=on"][..], 1),
        ] {
            let v = unified_variant(&k, settings, vec![16, 32, 64], threads);
            let copies = (0..8).filter(|n| v.region.contains(&format!("polytune_acc_in_{n}("))).count();
            assert_eq!(copies, arrays, "{kernel} {settings:?}: {}", v.region);
            if arrays > 0 {
                let rows = format!("double polytune_acc_0[4][{}]", &settings[0][13..]);
                assert!(v.region.contains(&rows), "{kernel} {settings:?}: {}", v.region);
                assert!(v.region.contains("- polytune_acc_0_o1]"), "{kernel}: {}", v.region);
                assert!(v.region.contains("#pragma GCC unroll 4"), "{kernel}: {}", v.region);
            }
            if settings.contains(&"restrict=on") {
                // Every function takes the iterator of a loop around its call.
                let functions = v.program.lines().filter(|l| l.starts_with("void polytune_outlined_"));
                let per_loop = functions.clone().all(|l| l.contains(", int c0, "));
                assert_eq!(per_loop, arrays > 0, "{kernel} {settings:?}: {}", v.program);
                assert!(functions.count() > 0, "{kernel}: {}", v.program);
            }
            same_outputs(&k, v.program);
        }
    }
}

/// Reassociated micro tiles (`reassociate`, issue 38): the scalar that
/// multiplies every term added to a register tile (gemm's, syrk's and
/// 2mm's first nest's `alpha`) multiplies the tile once, at its copy out,
/// and the copy in clears the tile, with or without a scalar; gemm's
/// `C[i][j] *= beta` at the first `k` scales the tile's sum too, 3mm's
/// `E[i][j] = 0` clears it. syr2k's two products (its
/// transposed copies hold `alpha`'s products already) are added one by
/// one; 3mm has neither a scalar nor two products. Outputs agree with the
/// original's within the default tolerance, on one thread and on two.
#[test]
fn reassociated_micro_tiles_agree_with_the_original() {
    for (kernel, scaled, split) in [
        ("gemm", true, false),
        ("syrk", true, false),
        ("2mm", true, false),
        ("3mm", false, false),
        ("syr2k", false, true),
    ] {
        let k = load(format!("linear-algebra/{kernel}.c"), "SMALL");
        for threads in [1, 2] {
            let settings = ["micro_tile=4x8", "transpose=on", "reassociate=on", "restrict=on"];
            let v = unified_variant(&k, &settings, vec![16, 32, 64], threads);
            let has =
                |start: &str, has: &str| v.region.lines().any(|l| l.starts_with(start) && l.contains(has));
            assert_eq!(has("#define polytune_acc_out_", "+= alpha * "), scaled, "{kernel}: {}", v.region);
            // The copy in clears the tile, reading nothing.
            assert!(has("#define polytune_acc_in_", "= 0)"), "{kernel}: {}", v.region);
            assert_eq!(has("#define polytune_S2", "], polytune_acc_0["), split, "{kernel}: {}", v.region);
            if kernel == "gemm" {
                assert!(has("#define polytune_S2", "] += A[(i)][(k)] * B[(k)][(j)]"), "{}", v.region);
                assert!(has("#define polytune_S1", "] *= beta, C[(i)][(j)] *= beta)"), "{}", v.region);
            }
            close_outputs(&k, v.program);
        }
    }
}

/// A linearised matrix product (`C[i * n + j]` on `double *`) is indexed
/// through row views inside the region, so that packing, accumulators and
/// the outlined functions treat its matrices as rows; the dumps outside
/// keep the flat pointers; outputs are the original's.
#[test]
fn linearised_arrays_are_read_through_row_views() {
    let k = load(testkit::root().join("space/tests/fixtures/own/linmatmul.c"), "MINI");
    for settings in [&[][..], &["pack=on", "restrict=on", "micro_tile=4x8"]] {
        let v = unified_variant(&k, settings, vec![16, 32, 64], 2);
        assert!(v.region.contains("__typeof__(&C[0]) polytune_flat_C = C;"), "{settings:?}: {}", v.region);
        assert!(
            v.region.contains("(*A)[n] = (__typeof__(polytune_flat_A[0]) (*)[n]) polytune_flat_A;"),
            "{}",
            v.region
        );
        assert!(
            v.program.contains("#define polytune_S1(i, j, k) C[(i)][(j)] += A[(i)][(k)] * B[(k)][(j)]"),
            "{}",
            v.program
        );
        if settings.contains(&"pack=on") {
            assert!(v.region.contains("polytune_pack_in_0("), "{}", v.region);
        }
        same_outputs(&k, v.program);
    }
}

/// A micro tile on a triangle along its reduction (trmm's `k > i`, issue
/// 68): no strip of rows is whole at every `k`, so the steps of `k` at
/// which the register tile is whole are isolated instead: there the rows
/// are a constant loop of the tile's rows under `#pragma GCC unroll`
/// (they were bounded by `k` at every step before); outputs are the
/// original's bit for bit.
#[test]
fn micro_tiles_of_a_triangular_reduction_are_whole_past_the_diagonal() {
    let k = load("linear-algebra/trmm.c", "SMALL");
    let v = unified_variant(&k, &["restrict=on", "micro_tile=4x8"], vec![32, 32, 128], 1);
    let lines: Vec<&str> = v.region.lines().map(str::trim).collect();
    let whole = lines.windows(3).any(|w| {
        w[0] == "#pragma GCC unroll 4"
            && w[1].starts_with("for (int c6 = 0; c6 <= 3; c6++)")
            && constant_loop(w[2])
    });
    assert!(whole, "{}", v.region);
    same_outputs(&k, v.program);
}

/// trmm's micro tile keeps its written elements `B[i][j]` in registers
/// while `B[k][j]` (`k > i`) reads the array (issue 68): the rows of the
/// register tile those reads find are ones it has not updated yet, as in
/// the original order. Outputs are the original's bit for bit, and within
/// the tolerance reassociated. A lower-triangular update, whose `B[k][j]`
/// (`k < i`) reads rows the tile has just finished (a memory-based flow
/// dependence under the same outer loops), keeps its elements in memory:
/// a copy of the written elements alone gives wrong outputs there.
#[test]
fn written_elements_alone_in_registers_where_no_other_read_sees_them() {
    let k = load("linear-algebra/trmm.c", "SMALL");
    for reassociate in ["reassociate=off", "reassociate=on"] {
        let v = unified_variant(&k, &["restrict=on", "micro_tile=4x8", reassociate], vec![32, 32, 128], 1);
        assert!(v.region.contains("polytune_acc_in_0("), "{reassociate}: {}", v.region);
        let memory = |l: &str| l.starts_with("#define polytune_S1") && l.ends_with("* B[(k)][(j)]");
        assert!(v.region.lines().any(memory), "{reassociate}: {}", v.region);
        match reassociate {
            "reassociate=off" => same_outputs(&k, v.program),
            _ => close_outputs(&k, v.program),
        }
    }
    let k = load(testkit::root().join("space/tests/fixtures/own/lowerupdate.c"), "SMALL");
    let v = unified_variant(&k, &["restrict=on", "micro_tile=4x8"], vec![16, 16, 32], 1);
    assert!(v.region.contains("#pragma GCC unroll 4"), "{}", v.region);
    assert!(!v.region.contains("polytune_acc_in_"), "{}", v.region);
    same_outputs(&k, v.program);
}
