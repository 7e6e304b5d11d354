//! Array expansion of arrays (`expand=on` on the CPU, always on the GPU):
//! a scratch array set afresh in every iteration of the loops around its
//! uses gets a copy per iteration, so that those loops can be tiled and
//! run in parallel, and after the region each element holds the value of
//! its own last write, as in the original.

use codegen::{self, CodegenOptions};
use executor::evaluate::Evaluator;
use executor::measure::Status;
use executor::verify::Tolerance;
use testkit::{load, Kernel};
use vocab::knobs::{CodeOptions, UnifiedOptions};

fn evaluator(threads: usize) -> Evaluator {
    testkit::evaluator("expansion", &["-O2", "-fopenmp"], Some(threads), Tolerance::default())
}

/// `k` on its model with `expand=on` (for the GPU when `gpu`), our
/// scheduler's tree, these tiles and threads.
fn expanded(k: &Kernel, tiles: Vec<u32>, threads: usize, gpu: bool) -> codegen::Variant {
    let code = CodeOptions { expand: true, ..Default::default() };
    let knobs = match gpu {
        true => UnifiedOptions::default().with_settings(&["target=gpu"]).unwrap(),
        false => UnifiedOptions::default(),
    };
    let (scop, deps) = executor::pipeline::model(&k.scop, &k.deps, &code, gpu).unwrap();
    assert!(!scop.expansions.is_empty(), "{}: nothing expanded", k.name);
    let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions { code, ..CodegenOptions::for_point(Some(tiles), threads, Some(&knobs)) };
    codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).unwrap_or_else(|e| panic!("{}: {e}", k.name))
}

/// doitgen's scratch row `sum[p]`, expanded along `r` and `q`: the
/// outermost loop of the tiled code runs in parallel (unexpanded, `sum`
/// orders every `(r, q)` after the one before), and the outputs, `sum`
/// after the region included, are the original's at MINI and SMALL.
#[test]
fn doitgen_with_its_scratch_row_expanded_matches_the_original() {
    let ev = evaluator(2);
    for dataset in ["MINI", "SMALL"] {
        let k = load(testkit::kernel("linear-algebra/doitgen.c"), dataset);
        let v = expanded(&k, vec![8, 8, 8], 2, false);
        let r = &v.region;
        assert!(r.contains("polytune_expanded_sum[") && r.contains("#pragma omp parallel for"), "{r}");
        assert!(r.contains("sum[(x2)] = polytune_expanded_sum[(x0)][(x1)][(x2)]"), "{r}");
        testkit::assert_same_outputs(&ev, &k, v.program);
    }
}

/// A scratch row live after the region (`liverow.c`), whose element `t[j]`
/// is last written at `i = j`: each element is written back from its own
/// copy, and a variant that leaves the write-back out is `wrong`.
#[test]
fn an_expanded_row_live_after_the_region_holds_each_elements_last_write() {
    let k = load(testkit::own("liverow.c"), "MINI");
    let v = expanded(&k, vec![8, 8], 2, false);
    let back = "#define polytune_W_polytune_expanded_t(x0, x1) t[(x1)] = polytune_expanded_t[(x0)][(x1)]";
    assert!(v.region.contains(back), "{}", v.region);
    let skipped = v.program.replace(back, "#define polytune_W_polytune_expanded_t(x0, x1) (void) 0");
    let ev = evaluator(2);
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap();
    let m = ev.evaluate(&reference, &[v.program.clone(), skipped]).unwrap();
    assert_eq!((m[0].status, m[1].status), (Status::Ok, Status::Wrong), "{} / {}", m[0].reason, m[1].reason);
}

/// GPU points expand arrays too: doitgen and `liverow.c` emulated match
/// the original, and the CUDA unit brings every copy of the expanded
/// array back for the host's write-back.
#[test]
fn expanded_arrays_on_the_gpu_match_the_original_when_emulated() {
    let ev = testkit::evaluator("expansion-gpu", &["-O1"], Some(1), Tolerance::default());
    for k in
        [load(testkit::kernel("linear-algebra/doitgen.c"), "SMALL"), load(testkit::own("liverow.c"), "MINI")]
    {
        let v = expanded(&k, vec![16], 1, true);
        let cuda = v.cuda.as_ref().unwrap_or_else(|| panic!("{} has a CUDA form", k.name));
        let back = cuda.unit.lines().any(|l| l.contains("\"copying out polytune_expanded_"));
        assert!(back, "{}: {}", k.name, cuda.unit);
        testkit::assert_same_outputs(&ev, &k, v.program);
    }
}
