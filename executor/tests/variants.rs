//! Generated variants of all 30 PolyBench kernels, compiled, run and compared
//! with the original program: the identity schedule must reproduce the
//! original bit for bit, isl's schedule with tiling and OpenMP within tolerance,
//! and an illegal schedule must be refused by the legality check and, pushed
//! past it, caught by output comparison.

use std::time::Duration;

use codegen::{self, CodegenError, CodegenOptions};
use executor::evaluate::{Evaluator, Reference};
use executor::measure::Status;
use executor::verify::Tolerance;
use testkit::{kernels, load, Kernel};

/// One timed run is enough to compare outputs. Tests run side by side on few
/// cores: generous timeouts, and OpenMP threads that sleep rather than spin
/// at barriers, so that oversubscription slows programs down instead of
/// stalling them.
fn evaluator(flags: &[&str], threads: usize, tolerance: Tolerance) -> Evaluator {
    testkit::evaluator("variants", flags, Some(threads), tolerance)
}

fn reference(ev: &Evaluator, k: &Kernel) -> Reference {
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    ev.reference(&original).unwrap_or_else(|e| panic!("{}: {e}", k.name))
}

/// `program` of `k` measured against its original under `ev`; anything but
/// `ok` pushed to `failures` as `what: status reason`.
fn verified_into(ev: &Evaluator, k: &Kernel, program: String, what: &str, failures: &mut Vec<String>) {
    let m = ev.evaluate(&reference(ev, k), &[program]).unwrap().remove(0);
    if m.status != Status::Ok {
        failures.push(format!("{what}: {} {}", m.status, m.reason));
    }
}

/// gcc contracts `a + b * c` into an FMA or not depending on the shape of the
/// surrounding code, so bitwise comparison needs contraction off.
const EXACT_FLAGS: &[&str] = &["-O2", "-ffp-contract=off", "-fopenmp"];

/// The limit on one kernel's in-process steps (schedule and code generation)
/// in these tests; built programs run under the measurement's own timeouts.
const ITEM_LIMIT: Duration = Duration::from_secs(300);

#[test]
fn identity_schedule_reproduces_the_original_bit_for_bit() {
    let ev = evaluator(EXACT_FLAGS, 1, Tolerance::BITWISE);
    let mut failures = Vec::new();
    for dataset in ["MINI", "SMALL"] {
        for path in kernels() {
            let k = load(&path, dataset);
            let reference = reference(&ev, &k);
            let v = {
                let _item = testkit::item(format!("{} {dataset}: codegen", k.name), ITEM_LIMIT);
                codegen::generate(&k.source, &k.scop, &k.deps, &k.scop.schedule, &CodegenOptions::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", k.name))
            };
            let m = ev.evaluate(&reference, &[v.program]).unwrap().remove(0);
            if m.status != Status::Ok {
                failures.push(format!("{} {dataset}: {:?} {}", k.name, m.status, m.reason));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn isl_schedule_tiled_and_parallel_matches_on_one_and_two_threads() {
    let flags = ["-O3", "-march=native", "-fopenmp"];
    let opts = CodegenOptions { tile_sizes: Some(vec![32]), openmp: true, ..Default::default() };
    let mut failures = Vec::new();
    let mut parallel = Vec::new();
    for path in kernels() {
        let k = load(&path, "SMALL");
        let item = testkit::item(format!("{}: isl schedule and codegen", k.name), ITEM_LIMIT);
        let schedule = match space::reference::isl_schedule(&k.scop, &k.deps) {
            Ok(s) => s,
            Err(e) => {
                // A reported status, not a crash; none of the 30 is expected here.
                failures.push(format!("{}: isl cannot schedule it: {e}", k.name));
                continue;
            }
        };
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &schedule, &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        drop(item);
        if v.region.contains("#pragma omp parallel for") {
            parallel.push(k.name.clone());
        }
        for threads in [1, 2] {
            let ev = evaluator(&flags, threads, Tolerance { relative: 1e-6 });
            let reference = reference(&ev, &k);
            let m = ev.evaluate(&reference, std::slice::from_ref(&v.program)).unwrap().remove(0);
            if m.status != Status::Ok {
                failures.push(format!("{} ({threads} threads): {:?} {}", k.name, m.status, m.reason));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // Kernels with an obviously parallel outer loop must get an OpenMP loop
    // (stencils do not: isl skews their time loop and marks no member
    // coincident; doitgen's reused `sum` carries memory dependences).
    for k in ["gemm", "2mm", "3mm", "syrk", "syr2k", "mvt", "gemver", "covariance", "correlation"] {
        assert!(parallel.iter().any(|p| p == k), "{k} got no parallel loop; parallel: {parallel:?}");
    }
}

/// seidel-2d with its row loop reversed: the in-place sweep reads rows the
/// original had not updated yet. (Reversing the time loop would not do: every
/// time step is the same sweep, so the reversed order computes the same.)
#[test]
fn illegal_schedule_is_refused_and_caught_by_output_comparison() {
    let k = load("stencils/seidel-2d.c", "MINI");
    let legal = &k.scop.schedule;
    let illegal = legal.replacen("-> [(i)]", "-> [(-i)]", 1);
    assert_ne!(&illegal, legal, "{legal}");
    let opts = CodegenOptions::default();
    match codegen::generate(&k.source, &k.scop, &k.deps, &illegal, &opts) {
        Err(CodegenError::Illegal(v)) => assert!(!v.is_empty()),
        other => panic!("the legality check let it through: {:?}", other.map(|v| v.schedule)),
    }
    let v = codegen::generate_unchecked(&k.source, &k.scop, &illegal, &opts).unwrap();
    let ev = evaluator(EXACT_FLAGS, 1, Tolerance::default());
    let m = ev.evaluate(&reference(&ev, &k), &[v.program]).unwrap().remove(0);
    assert_eq!(m.status, Status::Wrong, "{}", m.reason);
    assert!(m.reason.contains('A'), "{}", m.reason);
}

#[test]
fn a_schedule_for_other_statements_is_an_error_not_a_crash() {
    let k = load("linear-algebra/gemm.c", "MINI");
    let other = "{ domain: \"[n] -> { S9[i] : 0 <= i < n }\" }";
    let err = codegen::generate(&k.source, &k.scop, &k.deps, other, &CodegenOptions::default()).unwrap_err();
    assert!(matches!(err, CodegenError::Unsupported(_) | CodegenError::Isl(_)), "{err}");
}

/// seidel-2d's (t, i, j) band is legal as a schedule but not permutable: a tree
/// that claims it is must not be tiled.
#[test]
fn a_band_falsely_marked_permutable_is_not_tiled() {
    let k = load("stencils/seidel-2d.c", "MINI");
    let domain = &k.scop.statements[0].domain;
    let band = "[{ S1[t, i, j] -> [(t)] }, { S1[t, i, j] -> [(i)] }, { S1[t, i, j] -> [(j)] }]";
    let claims = format!("{{ domain: \"{domain}\", child: {{ schedule: \"{band}\", permutable: 1 }} }}");
    let tiled = CodegenOptions { tile_sizes: Some(vec![8]), openmp: false, ..Default::default() };
    match codegen::generate(&k.source, &k.scop, &k.deps, &claims, &tiled) {
        Err(CodegenError::Illegal(v)) => assert!(!v.is_empty()),
        other => panic!("tiled a non-permutable band: {:?}", other.map(|v| v.schedule)),
    }
    // Untiled, the same tree is the original order and fine.
    codegen::generate(&k.source, &k.scop, &k.deps, &claims, &CodegenOptions::default()).unwrap();
}

/// Our scheduler, with the original fusion and with maximal fusion, on all 30
/// kernels (every fourth in the fast tier): legal (checked inside), tiled and parallel, and bit for bit the
/// original's outputs at MINI and SMALL (every dependence is kept, so not
/// even a reduction is reordered).
#[test]
fn core_scheduler_variants_match_the_original_at_mini_and_small() {
    use space::schedule::{CoreOptions, Fusion};
    let ev = evaluator(EXACT_FLAGS, 2, Tolerance::BITWISE);
    let opts = CodegenOptions { tile_sizes: Some(vec![16]), openmp: true, ..Default::default() };
    let mut failures = Vec::new();
    // The fast tier: every fourth kernel, the heavy tier: the others.
    for (_, path) in kernels().into_iter().enumerate().filter(|(i, _)| testkit::takes(*i, 0, 4, 1)) {
        // The schedule is parametric: compute it once, generate per dataset.
        let mini = load(&path, "MINI");
        for fusion in [Fusion::Original, Fusion::Max] {
            let options = CoreOptions { fusion: fusion.clone(), ..Default::default() };
            let item = testkit::item(format!("{} {fusion:?}: schedule", mini.name), ITEM_LIMIT);
            let s = space::schedule::schedule(&mini.scop, &mini.deps, &options);
            drop(item);
            let s = match s {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{} {fusion:?}: {e}", mini.name));
                    continue;
                }
            };
            for dataset in ["MINI", "SMALL"] {
                let k = load(&path, dataset);
                let item = testkit::item(format!("{} {fusion:?} {dataset}: codegen", k.name), ITEM_LIMIT);
                let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts);
                drop(item);
                let v = match v {
                    Ok(v) => v,
                    Err(e) => {
                        failures.push(format!("{} {fusion:?} {dataset}: codegen: {e}", k.name));
                        continue;
                    }
                };
                verified_into(&ev, &k, v.program, &format!("{} {fusion:?} {dataset}", k.name), &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A tree that claims a loop carrying dependences is coincident must not get
/// an OpenMP pragma: codegen checks every loop it marks parallel.
#[test]
fn a_loop_falsely_marked_coincident_is_not_parallelised() {
    let k = load("stencils/jacobi-1d.c", "MINI");
    let domain = k.scop.domain();
    let t = "[{ S1[t, i] -> [(t)]; S2[t, i] -> [(t)] }]";
    let claims = format!(
        "{{ domain: \"{domain}\", child: {{ schedule: \"{t}\", coincident: [ 1 ], child: {{ sequence: [ \
         {{ filter: \"{{ S1[t, i] }}\", child: {{ schedule: \"[{{ S1[t, i] -> [(i)] }}]\" }} }}, \
         {{ filter: \"{{ S2[t, i] }}\", child: {{ schedule: \"[{{ S2[t, i] -> [(i)] }}]\" }} }} ] }} }} }}"
    );
    let parallel = CodegenOptions { tile_sizes: None, openmp: true, ..Default::default() };
    match codegen::generate(&k.source, &k.scop, &k.deps, &claims, &parallel) {
        Err(CodegenError::Illegal(v)) => assert!(!v.is_empty()),
        other => panic!("parallelised the time loop: {:?}", other.map(|v| v.region)),
    }
    // Without OpenMP the same (legal, original-order) tree is fine.
    codegen::generate(&k.source, &k.scop, &k.deps, &claims, &CodegenOptions::default()).unwrap();
}

/// Code is generated for the parameter values under which every statement
/// runs; the region runs the code as written in the others (`gemm` with
/// `nk = 0`: `C *= beta` runs, the product does not).
#[test]
fn where_a_statement_would_not_run_the_region_runs_the_code_as_written() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("every-statement-runs");
    let path = testkit::gemm_with_an_empty_dataset(&dir);
    let ev = evaluator(&["-O3", "-march=native", "-fopenmp"], 2, Tolerance { relative: 1e-6 });
    let opts = CodegenOptions { tile_sizes: Some(vec![8]), openmp: true, ..Default::default() };
    for dataset in ["EMPTY", "MINI"] {
        let k = load(&path, dataset);
        let schedule = space::reference::isl_schedule(&k.scop, &k.deps).unwrap();
        let v = codegen::generate(&k.source, &k.scop, &k.deps, &schedule, &opts).unwrap();
        assert!(v.region.contains("\nif (ni >= 1 && nj >= 1 && nk >= 1) {\n"), "{}", v.region);
        let m = ev.evaluate(&reference(&ev, &k), &[v.program]).unwrap().remove(0);
        assert_eq!(m.status, Status::Ok, "{dataset}: {}", m.reason);
    }
}

/// Code is generated with the literals modelled as parameters at their
/// values: the tiled band of random program 997 (fixture `liftedliteral.c`)
/// ran every instance only so.
#[test]
fn a_band_over_a_literal_modelled_as_a_parameter_runs_every_instance_when_tiled() {
    use space::schedule::{CoreOptions, Fusion};
    let k = load(testkit::root().join("space/tests/fixtures/own/liftedliteral.c"), "SMALL");
    assert!(
        k.scop.constants.iter().any(|(p, v)| p == "polytune_c987" && *v == 987),
        "{:?}",
        k.scop.constants
    );
    let ev = evaluator(EXACT_FLAGS, 1, Tolerance::BITWISE);
    let reference = ev.reference(&codegen::original_program(&k.source, &k.scop).unwrap()).unwrap();
    let options = CoreOptions { fusion: Fusion::Max, ..Default::default() };
    let s = space::schedule::schedule(&k.scop, &k.deps, &options).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![4]), 1, None);
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let m = ev.evaluate(&reference, &[v.program]).unwrap();
    assert_eq!(m[0].status, Status::Ok, "{}", m[0].reason);
}

/// The loop iterators a program reads after its SCoP are outputs too: the
/// original's own loops leave them their values, a variant assigns the
/// exit values, and the dump compares the two, so a wrong one is caught.
#[test]
fn an_iterator_left_at_a_wrong_exit_value_is_a_wrong_result() {
    let k = load(testkit::root().join("space/tests/fixtures/own/liveout.c"), "MINI");
    let ev = evaluator(EXACT_FLAGS, 1, Tolerance::BITWISE);
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    assert!(!original.contains("i = ((int) 50);"), "the original's loops set `i`");
    let reference = ev.reference(&original).unwrap();
    let options = vocab::knobs::SchedulerOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &options).unwrap();
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &CodegenOptions::default()).unwrap();
    assert!(v.program.contains("i = ((int) 50);"), "{}", v.region);
    let wrong = v.program.replace("i = ((int) 50);", "i = ((int) 49);");
    let m = ev.evaluate(&reference, &[v.program.clone(), wrong]).unwrap();
    assert_eq!((m[0].status, m[1].status), (Status::Ok, Status::Wrong), "{} / {}", m[0].reason, m[1].reason);
}

/// `expand=on` on the CPU: every kernel with a scalar that gets copies
/// (symm's `temp2`, the reductions into scalars) runs the unified
/// scheduler's tiled, parallel code on its expanded model and writes what
/// the original writes, the scalars' last values included (one of them
/// left unwritten back fails as `wrong`, as symm's `temp2` did).
#[test]
fn expanded_scalars_on_the_cpu_match_the_original() {
    let ev = evaluator(&["-O2", "-fopenmp"], 2, Tolerance::default());
    let code = vocab::knobs::CodeOptions { expand: true, restrict: true, ..Default::default() };
    let knobs = vocab::knobs::UnifiedOptions::default();
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for (i, path) in kernels().into_iter().enumerate() {
        let k = load(&path, "MINI");
        let ctx = model::isl::new_context();
        if model::expansion::expand(&ctx, &k.scop).unwrap().expansions.is_empty() {
            continue;
        }
        // The fast tier: symm and every third of the others; the heavy tier: all.
        if k.name != "symm" && !testkit::takes(i, 0, 3, 1) {
            continue;
        }
        let item = testkit::item(format!("{} expand=on", k.name), ITEM_LIMIT);
        let made = executor::pipeline::model(&k.scop, &k.deps, &code, false)
            .map_err(|e| e.to_string())
            .and_then(|(scop, deps)| {
                let s = space::schedule::unified(&scop, &deps, None, &knobs.scheduler())
                    .map_err(|e| e.to_string())?;
                let opts = CodegenOptions {
                    code: code.clone(),
                    ..CodegenOptions::for_point(Some(vec![16]), 2, Some(&knobs))
                };
                codegen::generate(&k.source, &scop, &deps, &s.tree, &opts).map_err(|e| e.to_string())
            });
        drop(item);
        let v = match made {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: {e}", k.name));
                continue;
            }
        };
        verified_into(&ev, &k, v.program, &k.name, &mut failures);
        checked.push(k.name.clone());
    }
    assert!(checked.iter().any(|k| k == "symm"), "{checked:?}");
    assert!(failures.is_empty(), "{failures:#?}\nchecked: {checked:?}");
    eprintln!("expand=on verified on {checked:?}");
}
