//! Programs the random-program oracle (`executor/tests/fuzz.rs`, issue 36)
//! found wrong, minimised: each is scheduled legally now.

use std::path::{Path, PathBuf};

use space::deps;
use space::isl::new_context;
use space::knobs::SchedulerOptions;
use space::legality;
use space::schedule::{self, CoreOptions};
use space::scop::{self, ExtractOptions};

fn own(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/own").join(name)
}

/// Random program 28: a flow dependence whose direction isl's dataflow
/// stated only through a modulo's local variable. Its relation now states
/// the original order in affine constraints (the integer pairs unchanged),
/// and the core and unified schedulers and isl's find legal schedules.
#[test]
fn a_flow_dependence_through_a_modulo_subscript_states_its_direction() {
    let (_, scops) = scop::extract(&own("modflow.c"), &ExtractOptions::default()).unwrap();
    let s = &scops[0];
    let d = deps::analyze(s).unwrap();
    let flow: Vec<_> = d.deps.iter().filter(|x| x.kind == deps::DepKind::Flow).collect();
    assert_eq!(flow.len(), 1, "{d:?}");
    // The direction as a constraint of its own: 2i < n, i.e. i' = n - i > i.
    assert!(flow[0].relation.contains("mod 3") && flow[0].relation.contains("2i < n"), "{}", flow[0].relation);
    let ctx = new_context();
    assert!(legality::violations(&ctx, &s.context, &s.schedule, &d).unwrap().is_empty());
    let core = schedule::schedule(s, &d, &CoreOptions::default()).unwrap_or_else(|e| panic!("core: {e}"));
    assert!(legality::violations(&ctx, &s.context, &core.tree, &d).unwrap().is_empty());
    for set in [&[][..], &["target=gpu"], &["hlim=1"]] {
        let knobs = SchedulerOptions::default().with_settings(set).unwrap();
        let u = schedule::unified(s, &d, None, &knobs).unwrap_or_else(|e| panic!("unified {set:?}: {e}"));
        assert!(legality::violations(&ctx, &s.context, &u.tree, &d).unwrap().is_empty());
    }
    space::reference::isl_schedule(s, &d).unwrap_or_else(|e| panic!("isl: {e}"));
}
