//! Verification that knows the original's rounding noise (`executor::verify`):
//! on a Gram-Schmidt of a wide, rank-deficient matrix (PolyBench's own
//! sizes and fill), builds of the original that differ only in evaluation
//! order disagree on much of the output; variants that reorder it must pass,
//! and a variant that breaks a dependence must still be `wrong`. On
//! well-conditioned kernels no noise is found, so nothing is loosened there.

use codegen::CodegenOptions;
use executor::evaluate::{Evaluator, Reference};
use executor::measure::Status;
use executor::verify::Tolerance;
use testkit::{load, Kernel};
use vocab::knobs::UnifiedOptions;

const FLAGS: &[&str] = &["-O3", "-march=native", "-fopenmp"];

fn evaluator() -> Evaluator {
    testkit::evaluator("rounding", FLAGS, Some(1), Tolerance::default())
}

fn wide(dataset: &str) -> Kernel {
    load(testkit::root().join("space/tests/fixtures/own/gramschmidt-wide.c"), dataset)
}

fn reference(ev: &Evaluator, k: &Kernel) -> Reference {
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    ev.reference(&original).unwrap_or_else(|e| panic!("{}: {e}", k.name))
}

/// `k` under the unified scheduler's defaults, tiled by 32.
fn unified(k: &Kernel) -> String {
    let knobs = UnifiedOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![32]), 1, Some(&knobs));
    codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap().program
}

/// The original schedule with the residual update (S7) put before the
/// projection (S6) it depends on, in the loop over `j`.
fn broken(k: &Kernel) -> String {
    let s6 = r#"{ filter: "{ S6[k, j, i] }", child: { schedule: "[{ S6[k, j, i] -> [(i)] }]" } }"#;
    let s7 = r#"{ filter: "{ S7[k, j, i] }", child: { schedule: "[{ S7[k, j, i] -> [(i)] }]" } }"#;
    let legal = &k.scop.schedule;
    let illegal = legal.replacen(&format!("{s6}, {s7}"), &format!("{s7}, {s6}"), 1);
    assert_ne!(&illegal, legal, "{legal}");
    let opts = CodegenOptions::default();
    assert!(codegen::generate(&k.source, &k.scop, &k.deps, &illegal, &opts).is_err());
    codegen::generate_unchecked(&k.source, &k.scop, &illegal, &opts).unwrap().program
}

#[test]
fn rounding_noise_is_told_from_a_wrong_result() {
    let ev = evaluator();
    for dataset in ["MINI", "SMALL", "MEDIUM"] {
        let k = wide(dataset);
        let reference = reference(&ev, &k);
        let noise = reference.measurement.rounding_noise.clone().expect("probed");
        assert_eq!(noise.probes.len(), 2, "{noise:?}");
        for array in ["nrm", "Q", "R"] {
            assert!(noise.arrays.iter().any(|a| a.array == array && a.noisy > 0), "{dataset}: {noise}");
        }
        let q = noise.arrays.iter().find(|a| a.array == "Q").unwrap();
        assert!(q.noisy < q.elements, "{dataset}: Q's leading columns are results, not noise: {noise}");

        let m = ev.evaluate(&reference, &[unified(&k), broken(&k)]).unwrap();
        assert_eq!(m[0].status, Status::Ok, "{dataset} unified: {}", m[0].reason);
        assert_eq!(m[1].status, Status::Wrong, "{dataset} broken: {}", m[1].reason);
        assert!(m[1].reason.contains("rounding noise"), "{}", m[1].reason);
    }
    // The noise is what lets it pass: compared without it, the same variant is
    // `wrong` on the last column's norm, a residual of rounding errors.
    let mut strict = evaluator();
    strict.config.probe_noise = false;
    let k = wide("MINI");
    let reference = reference(&strict, &k);
    assert!(reference.measurement.rounding_noise.is_none());
    let m = strict.evaluate(&reference, &[unified(&k)]).unwrap().remove(0);
    assert_eq!(m.status, Status::Wrong, "{}", m.reason);
}

#[test]
fn well_conditioned_kernels_have_no_rounding_noise() {
    let ev = evaluator();
    for path in ["linear-algebra/gramschmidt.c", "linear-algebra/gemm.c", "stencils/jacobi-2d.c"] {
        let k = load(path, "SMALL");
        let noise = reference(&ev, &k).measurement.rounding_noise.expect("probed");
        assert!(noise.is_empty(), "{path}: {noise}");
    }
}
