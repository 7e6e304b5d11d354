//! Clay's form of schedules: the original program and the trees of our unified scheduler
//! and of isl's read into (β, α) form give every pair of instances the tree orders the
//! order the tree gives them (an isl check of the "runs before" relations, independent of
//! the walk); explain's steps replayed on the original give the target.

use std::path::Path;
use std::time::Duration;

use model::deps;
use model::isl::new_context;
use model::scop::Scop;
use space::clay::{
    apply_script, explain, refines, same_order, script, to_banded_tree, to_tree, tree_map, ApplyError,
    ClayForm,
};
use space::schedule;
use vocab::knobs::SchedulerOptions;

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Reads `tree` into Clay's form and checks the order against the tree's own; returns the form.
fn check(scop: &Scop, tree: &str, what: &str) -> ClayForm {
    let ctx = new_context();
    let form = ClayForm::from_tree(&ctx, scop, tree).unwrap_or_else(|e| panic!("{what}: {e}"));
    for r in &form.relations {
        assert_eq!(r.beta.len(), r.alpha.len() + 1, "{what}: {r:?}");
    }
    let flat = tree_map(&ctx, tree).unwrap();
    assert!(
        refines(&ctx, scop, &form.map_text(scop), &flat).unwrap(),
        "{what}: {}\n{tree}",
        show(scop, &form)
    );
    form
}

#[test]
fn the_original_reads_as_its_loops_and_lexical_positions() {
    for path in testkit::kernels() {
        let k = name(&path);
        let _item = testkit::item(format!("clay original {k}"), Duration::from_secs(60));
        let s = testkit::load(&path, "MINI").scop;
        let form = check(&s, &s.schedule, &k);
        // The original: α are the iterators in order (negated for a loop that counts down,
        // as in ludcmp), β the textual positions.
        for (r, st) in form.relations.iter().zip(&s.statements) {
            let n = st.iterators.len();
            assert_eq!(r.alpha.len(), n, "{k} {}", st.name);
            for (i, a) in r.alpha.iter().enumerate() {
                let mut up = space::clay::Aff::iterator(n, s.params.len(), i);
                let ok = *a == up || {
                    up.iters[i] = -1;
                    *a == up
                };
                assert!(ok, "{k} {}: α{} = {a:?}", st.name, i + 1);
            }
        }
        // β-vectors are distinct: no two statements at the same place.
        let mut betas: Vec<_> = form.relations.iter().map(|r| &r.beta).collect();
        betas.sort();
        betas.dedup();
        assert_eq!(betas.len(), form.relations.len(), "{k}: {form:#?}");
    }
}

#[test]
fn gemm_reads_as_the_published_shape() {
    let path = testkit::kernels().into_iter().find(|p| name(p) == "2mm").unwrap();
    let s = testkit::load(&path, "MINI").scop;
    let d = deps::analyze(&s).unwrap();
    let out = schedule::unified(&s, &d, None, &SchedulerOptions::default()).unwrap();
    let form = check(&s, &out.tree, "2mm unified");
    let text = |i: usize| {
        let r = &form.relations[i];
        let a: Vec<String> = r.alpha.iter().map(|a| a.text(&s.statements[i].iterators, &s.params)).collect();
        (r.beta.clone(), a)
    };
    // Two nests (β0 = 0, 1), each S_init [i, 0, j] before S_update [i, k, j] at equal dates.
    assert_eq!(text(0), (vec![0, 0, 0, 0], vec!["i".into(), "0".into(), "j".into()]));
    assert_eq!(text(1), (vec![0, 0, 0, 1], vec!["i".into(), "k".into(), "j".into()]));
    assert_eq!(text(2).0[0], 1);
}

/// Our unified scheduler's default and isl's scheduler on every kernel (sampled: every
/// fifth kernel unless POLYTUNE_FULL_SWEEP is set; the schedulers themselves are tested
/// elsewhere, this checks the reading).
#[test]
fn scheduler_trees_read_in_the_same_order() {
    let full = std::env::var("POLYTUNE_FULL_SWEEP").is_ok_and(|v| v == "1");
    for (n, path) in testkit::kernels().into_iter().enumerate() {
        if !full && n % 5 != 0 {
            continue;
        }
        let k = name(&path);
        let _item = testkit::item(format!("clay schedulers {k}"), Duration::from_secs(300));
        let s = testkit::load(&path, "MINI").scop;
        let d = deps::analyze(&s).unwrap();
        let unified = schedule::unified(&s, &d, None, &SchedulerOptions::default()).unwrap();
        let isl = space::reference::isl_schedule(&s, &d).unwrap();
        let original = check(&s, &s.schedule, &k);
        for (tree, by) in [(&unified.tree, "unified"), (&isl, "isl")] {
            let target = check(&s, tree, &format!("{k} {by}"));
            round_trip(&s, &original, &target, tree, &format!("{k} {by}"));
        }
    }
}

/// explain → replay: the steps, applied one by one to the original, give the target's form
/// exactly, and so its order.
fn round_trip(s: &Scop, original: &ClayForm, target: &ClayForm, tree: &str, what: &str) {
    let steps = explain(original, target).unwrap_or_else(|e| panic!("{what}: {e}\n{}", show(s, target)));
    let mut replayed = original.clone();
    for step in &steps {
        replayed.apply(step).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    assert_eq!(&replayed, target, "{what}");
    // The script as text reads back as the same steps.
    assert_eq!(script::parse(&script::print(original, &steps, &[])).unwrap().steps, steps, "{what}");
    // The form as a tree (what apply generates code from) runs in the form's order.
    let ctx = new_context();
    let back = to_tree(&replayed, s);
    assert!(
        same_order(&ctx, s, &replayed.map_text(s), &tree_map(&ctx, &back).unwrap()).unwrap(),
        "{what}: {back}"
    );
    assert!(refines(&ctx, s, &replayed.map_text(s), &tree_map(&ctx, tree).unwrap()).unwrap(), "{what}");
    eprintln!("{what}: {} steps", steps.len());
}

fn show(s: &Scop, f: &ClayForm) -> String {
    f.relations
        .iter()
        .zip(&s.statements)
        .map(|(r, st)| {
            let a: Vec<String> = r.alpha.iter().map(|a| a.text(&st.iterators, &s.params)).collect();
            format!("{} β={:?} α=[{}]\n", r.statement, r.beta, a.join(", "))
        })
        .collect()
}

/// apply: an explained script, as text, rebuilds a legal schedule in the target's order, and
/// its banded tree has as many permutable bands and parallel loops as the scheduler's; a
/// script that reverses jacobi-1d's time loop is refused naming that step and a dependence
/// it breaks; a step that does not apply is named with its number.
#[test]
fn apply_rebuilds_explained_schedules_and_names_what_breaks() {
    for k in ["jacobi-1d", "jacobi-2d", "2mm", "gemm", "lu", "seidel-2d"] {
        let path = testkit::kernels().into_iter().find(|p| name(p) == k).unwrap();
        let s = testkit::load(&path, "MINI").scop;
        let d = deps::analyze(&s).unwrap();
        let out = schedule::unified(&s, &d, None, &SchedulerOptions::default()).unwrap();
        let ctx = new_context();
        let (original, target) =
            (ClayForm::original(&ctx, &s).unwrap(), ClayForm::from_tree(&ctx, &s, &out.tree).unwrap());
        let text = script::print(&original, &explain(&original, &target).unwrap(), &[]);
        let applied = apply_script(&ctx, &s, &d, &text).unwrap_or_else(|e| panic!("{k}: {e}\n{text}"));
        assert_eq!(applied.form, target, "{k}");
        // For code generation: bands as permutable and parallel as the scheduler's own.
        let banded = to_banded_tree(&ctx, &applied.form, &s, &d).unwrap();
        assert!(
            refines(&ctx, &s, &tree_map(&ctx, &banded).unwrap(), &tree_map(&ctx, &out.tree).unwrap())
                .unwrap(),
            "{k}"
        );
        let flags = |t: &str| testkit::tree::Tree::read(t).flags();
        assert_eq!(flags(&banded), flags(&out.tree), "{k}:\n{banded}\n{}", out.tree);
        assert!(
            refines(&ctx, &s, &tree_map(&ctx, &applied.tree).unwrap(), &tree_map(&ctx, &out.tree).unwrap())
                .unwrap(),
            "{k}"
        );
    }
    let path = testkit::kernels().into_iter().find(|p| name(p) == "jacobi-1d").unwrap();
    let s = testkit::load(&path, "MINI").scop;
    let d = deps::analyze(&s).unwrap();
    let ctx = new_context();
    match apply_script(&ctx, &s, &d, "# time backwards\nreverse (0)\n") {
        Err(e @ ApplyError::Illegal { number: 1, .. }) => {
            let ApplyError::Illegal { violation, .. } = &e else { unreachable!() };
            assert!(!violation.bad_distances.is_empty(), "{violation:?}");
            eprintln!("{e}");
        }
        other => panic!("{:?}", other.map(|a| a.tree)),
    }
    let e = apply_script(&ctx, &s, &d, "reverse (0)\nfuse (9)\n").err().unwrap().to_string();
    assert!(e.contains("step 2 `fuse (9)`") && e.contains("no statement"), "{e}");
    let e = apply_script(&ctx, &s, &d, "reverse (0)\nskew (0,0)\n").err().unwrap().to_string();
    assert!(e.contains("line 2") && e.contains("skew (PREFIX) DEPTH FACTOR"), "{e}");
}
