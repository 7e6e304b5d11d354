//! Programs of our own with the constructs real programs use (issue 14),
//! scheduled: the unified scheduler finds a schedule that isl finds legal
//! on their exact dependences. `model/tests/frontend.rs` checks how each is
//! modelled.

use model::deps;
use model::isl::new_context;
use model::legality;
use model::scop::{self, ExtractOptions};
use space::schedule;
use vocab::knobs::SchedulerOptions;

use testkit::{load_own as load, own};

/// The unified scheduler (OpenMP target) finds a schedule, and isl finds it
/// legal on the exact dependences.
fn schedules_legally(name: &str) -> schedule::CoreSchedule {
    let (s, d) = load(name);
    let knobs = SchedulerOptions::default().with_settings(&["target=openmp"]).unwrap();
    let out = schedule::unified(&s, &d, None, &knobs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bad = legality::violations(&new_context(), &s.context, &out.tree, &d).unwrap();
    assert!(bad.is_empty(), "{name}: {bad:?}");
    out
}

/// Every program of the frontend's tests that the model accepts.
#[test]
fn the_frontends_programs_are_scheduled_legally() {
    for name in [
        "chained.c",
        "piecewise.c",
        "purefn.c",
        "fragment.c",
        "blockdecl.c",
        "structs.c",
        "structarray.c",
        "callptr.c",
        "liveout.c",
        "negative.c",
        "truncdiv.c",
        "neverruns.c",
        "localstruct.c",
        "implicitint.c",
    ] {
        schedules_legally(name);
    }
}

#[test]
fn a_scop_without_parameters_is_scheduled() {
    let out = schedules_legally("noparam.c");
    // isl read `[] -> [...]` as a map before: the band carries no parameter prefix.
    assert!(!out.tree.contains("[] -> ["), "{}", out.tree);
}

#[test]
fn a_modulo_time_index_is_scheduled_over_its_exact_dependences() {
    // The schedule that skews i by t is legal on the parity conditions.
    let out = schedules_legally("modulo.c");
    assert_eq!(out.preorder.0.len(), 1);
}

/// trisolv with `#define N` 1500, 6000 or 100000: the literal is modelled
/// as a parameter, so the schedule is the one of PolyBench's trisolv, whose
/// size is the parameter `n` (before, 6000 had "no shared outer loop": its
/// proximity bound needed a constant past the coefficient box, and 1500
/// came out with other rows, `S2: j + 1499`).
#[test]
fn sizes_fixed_by_literals_schedule_as_with_a_parameter() {
    let parametric = {
        let k = testkit::load("linear-algebra/trisolv.c", "MINI");
        let knobs = SchedulerOptions::default();
        schedule::unified(&k.scop, &k.deps, None, &knobs).unwrap().tree
    };
    for n in [1500, 6000, 100000] {
        let opts = ExtractOptions { cc_args: vec![format!("-DN={n}")], ..Default::default() };
        let (_, mut scops) = scop::extract(&own("trisolv-fixed.c"), &opts).unwrap();
        let s = scops.remove(0);
        let param = format!("polytune_c{n}");
        assert_eq!(s.constants, [(param.clone(), n)]);
        let d = deps::analyze(&s).unwrap();
        let out = schedule::unified(&s, &d, None, &SchedulerOptions::default())
            .unwrap_or_else(|e| panic!("N = {n}: {e}"));
        assert_eq!(out.tree.replace(&param, "n"), parametric, "N = {n}");
    }
}
