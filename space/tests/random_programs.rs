//! Programs the random-program oracle (`executor/tests/fuzz.rs`, issue 36)
//! found wrong, minimised: each is scheduled legally now.

use model::deps::{self, Dependences};
use model::isl::new_context;
use model::legality;
use model::scop::{self, ExtractOptions, Scop};
use space::fusion::{FusionOptions, FusionSpace};
use space::schedule::{self, CoreOptions, Fusion};
use vocab::knobs::SchedulerOptions;

use testkit::own;

/// The first SCoP of one of our fixtures and its dependences.
fn load(name: &str) -> (Scop, Dependences) {
    let (_, mut scops) = scop::extract(&own(name), &ExtractOptions::default()).unwrap();
    let s = scops.remove(0);
    let d = deps::analyze(&s).unwrap_or_else(|e| panic!("dependences: {e}"));
    (s, d)
}

/// The core scheduler (when `core`) and the unified one under each of
/// `settings` find schedules that respect every dependence.
fn assert_schedules_legal(s: &Scop, d: &Dependences, core: bool, settings: &[&[&str]]) {
    let ctx = new_context();
    let legal = |tree: &str| legality::violations(&ctx, &s.context, tree, d).unwrap().is_empty();
    if core {
        let core = schedule::schedule(s, d, &CoreOptions::default()).unwrap_or_else(|e| panic!("core: {e}"));
        assert!(legal(&core.tree));
    }
    for set in settings {
        let knobs = SchedulerOptions::default().with_settings(set).unwrap();
        let u = schedule::unified(s, d, None, &knobs).unwrap_or_else(|e| panic!("unified {set:?}: {e}"));
        assert!(legal(&u.tree));
    }
}

/// Random program 28: a flow dependence whose direction isl's dataflow
/// stated only through a modulo's local variable. The scheduler's Farkas
/// constraints now come from its relation intersected with the original
/// order (`schedule::order`; the integer pairs unchanged), and the
/// core and unified schedulers find legal schedules. (isl's own scheduler,
/// on the same relaxation, still reports "unable to carry dependences".)
#[test]
fn a_flow_dependence_through_a_modulo_subscript_is_scheduled() {
    let (_, scops) = scop::extract(&own("modflow.c"), &ExtractOptions::default()).unwrap();
    let s = &scops[0];
    let d = deps::analyze(s).unwrap();
    let ctx = new_context();
    let stated = schedule::order::with_stated_order(&ctx, s, &d).unwrap();
    let flow: Vec<_> = stated.deps.iter().filter(|x| x.kind == deps::DepKind::Flow).collect();
    assert_eq!(flow.len(), 1, "{d:?}");
    // The direction as a constraint of its own: 2i < n, i.e. i' = n - i > i.
    assert!(
        flow[0].relation.contains("mod 3") && flow[0].relation.contains("2i < n"),
        "{}",
        flow[0].relation
    );
    let same = |a: &str, b: &str| {
        let (a, b) = (
            isl_rs::UnionMap::read_from_str(&ctx, a).unwrap(),
            isl_rs::UnionMap::read_from_str(&ctx, b).unwrap(),
        );
        a.is_equal(&b).unwrap()
    };
    for (a, b) in d.deps.iter().zip(&stated.deps) {
        assert!(same(&a.relation, &b.relation), "{} became {}", a.relation, b.relation);
    }
    assert!(legality::violations(&ctx, &s.context, &s.schedule, &d).unwrap().is_empty());
    assert_schedules_legal(s, &d, true, &[&[], &["target=gpu"], &["hlim=1"]]);
}

/// Random program 125: isl's coalescing of one flow dependence failed
/// inside isl ("total dimensionality changed unexpectedly") and stopped
/// the analysis. Coalescing only simplifies: the relation keeps its pieces,
/// the original schedule respects every dependence, and the core scheduler
/// finds a legal schedule.
#[test]
fn a_flow_dependence_isl_cannot_coalesce_keeps_its_pieces() {
    let (s, d) = load("coalesceflow.c");
    assert!(d.of_kind(deps::DepKind::Flow).count() > 0, "{d:?}");
    assert!(legality::violations(&new_context(), &s.context, &s.schedule, &d).unwrap().is_empty());
    assert_schedules_legal(&s, &d, true, &[]);
}

/// Random program 155, cut down: an anti dependence that isl states as
/// `4i' + j' > 4i + j` (with `0 <= j, j' <= 4`), forward on integers but
/// backward on its rational relaxation, where Farkas' lemma works: the
/// original loops were "no shared outer loop" until validity dependences
/// of every kind with local variables had the original order stated
/// (`schedule::order`; now wherever the rational relaxation
/// does not say it).
#[test]
fn an_anti_dependence_ordered_only_on_integers_is_scheduled() {
    let (s, d) = load("backanti.c");
    assert_schedules_legal(&s, &d, true, &[&[], &["target=gpu"], &["hlim=1"]]);
}

/// Random program 305, cut down: the same on a dependence whose relation
/// has no local variable (an earlier version stated the order only where
/// one appeared): "no row carries any of 4 remaining dependence groups".
#[test]
fn a_dependence_ordered_only_on_integers_without_local_variables_is_scheduled() {
    let (s, d) = load("rationalorder.c");
    assert_schedules_legal(&s, &d, true, &[&["hlim=1"]]);
}

/// Random program 208, cut down: the dataflow behind the spatial and
/// temporal proximity relations of `A`'s references (quotients and
/// remainders in the subscripts) ran for minutes inside isl. It has an
/// operation budget now, past which those references have no locality
/// relations (a preference, not a constraint), and the unified scheduler
/// goes on.
#[test]
fn locality_whose_dataflow_outgrows_its_budget_is_left_out() {
    let (s, d) = load("adjbudget.c");
    assert_schedules_legal(&s, &d, false, &[&["target=gpu"], &[]]);
}

/// Random program 377, cut down: the fusion space tests each set of
/// statements for a shared outer loop with Farkas' lemma on the merged,
/// coalesced dependences between them; one of those ordered its integer
/// pairs only, and full fusion was left out of the space although it is
/// legal. The order is stated there too now (`schedule::order`): the
/// space holds it, and the scheduler schedules every preorder of the space
/// legally.
#[test]
fn a_fusion_whose_dependence_is_ordered_only_on_integers_is_in_the_space() {
    let (s, d) = load("fusionorder.c");
    let space = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
    let preorders = space.preorders();
    assert!(preorders.iter().any(|p| p.0.len() == 1), "{preorders:?}");
    let ctx = new_context();
    for p in preorders {
        let opts = CoreOptions { fusion: Fusion::Preorder(p.clone()), ..Default::default() };
        let core = schedule::schedule(&s, &d, &opts).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert!(legality::violations(&ctx, &s.context, &core.tree, &d).unwrap().is_empty(), "{p:?}");
    }
}

/// Random program 809 ran for minutes in isl's value-based dataflow; it
/// has a budget of isl operations now, past which the memory-based RAW
/// dependences stand in for the flow (a superset). Shown here on
/// jacobi-2d with a budget of one operation: the flow is RAW, a note says
/// so, and the schedules found on it respect the exact dependences.
#[test]
fn a_dataflow_over_its_budget_leaves_raw_in_its_place_and_schedules_stay_legal() {
    let testkit::Kernel { scop: s, deps: exact, .. } = testkit::load("stencils/jacobi-2d.c", "SMALL");
    let ctx = new_context();
    let approx = deps::analyze_within(&ctx, &s, 1).unwrap();
    assert_eq!(approx.notes.len(), 1, "{:?}", approx.notes);
    assert!(exact.notes.is_empty());
    let flow = |d: &Dependences, kind| -> Vec<String> {
        let mut v: Vec<String> =
            d.of_kind(kind).map(|d| format!("{} {} {}", d.source, d.sink, d.relation)).collect();
        v.sort();
        v
    };
    assert_eq!(flow(&approx, deps::DepKind::Flow), flow(&approx, deps::DepKind::Raw));
    assert_ne!(flow(&approx, deps::DepKind::Flow), flow(&exact, deps::DepKind::Flow));
    let legal = |tree: &str| legality::violations(&ctx, &s.context, tree, &exact).unwrap().is_empty();
    let core = schedule::schedule(&s, &approx, &CoreOptions::default()).unwrap();
    assert!(legal(&core.tree));
    let knobs = SchedulerOptions::default();
    assert!(legal(&schedule::unified(&s, &approx, None, &knobs).unwrap().tree));
}

/// Random program 919: isl's dataflow fails on it; as past the budget,
/// the memory-based RAW dependences stand in for the flow, with a note,
/// and the schedules found on them are legal.
#[test]
fn a_dataflow_that_isl_fails_on_leaves_raw_in_its_place() {
    let (s, d) = load("flowfails.c");
    assert!(d.notes.iter().any(|n| n.contains("dataflow analysis failed")), "{:?}", d.notes);
    assert_schedules_legal(&s, &d, false, &[&[]]);
}

/// Random program 428: with spatial proximity (the unified scheduler's
/// default) the rows it chose left no row to carry the remaining
/// dependences, "no progress"; spatial proximity being a preference, the
/// group is scheduled again without it, with a note, and legally.
#[test]
fn a_group_stuck_under_spatial_proximity_is_scheduled_without_it() {
    let (s, d) = load("spatialstuck.c");
    let knobs = SchedulerOptions::default();
    let u = schedule::unified(&s, &d, None, &knobs).unwrap_or_else(|e| panic!("{e}"));
    assert!(u.notes.iter().any(|n| n.contains("without spatial proximity")), "{:?}", u.notes);
    assert!(legality::violations(&new_context(), &s.context, &u.tree, &d).unwrap().is_empty());
}
