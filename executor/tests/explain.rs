//! explain → apply on programs: the script `executor::explain` writes for a schedule and
//! a point's code-generation options, replayed by `apply_script` and a band-by-band plan,
//! gives a schedule in the same order and the same generated program, byte for byte.

use std::time::Duration;

use codegen::CodegenOptions;
use executor::explain::explain;
use executor::pipeline;
use model::isl::new_context;
use space::clay::{self, refines, tree_map, Action};
use testkit::{load, Kernel};
use vocab::knobs::{CodeOptions, Point, Scheduler, Simd, UnifiedOptions};

/// Tiled, threaded and vectorised points of three schedulers, one with micro tiles
/// over packed tiles.
fn points() -> Vec<Point> {
    let unified = |settings: &[&str]| Scheduler::Unified {
        preorder: None,
        options: UnifiedOptions::default().with_settings(settings).unwrap(),
    };
    let code = CodeOptions { simd: Simd::Innermost, unroll_jam: 4, restrict: true, ..CodeOptions::default() };
    vec![
        Point { scheduler: unified(&[]), tiles: Some(vec![32]), threads: 2, code: code.clone() },
        Point {
            scheduler: unified(&["wavefront=single", "posttile_reorder=pluto", "consecutivity=intra-tile"]),
            tiles: Some(vec![16, 64]),
            threads: 2,
            code: CodeOptions { fission: true, ..CodeOptions::default() },
        },
        Point {
            scheduler: unified(&[]),
            tiles: Some(vec![8]),
            threads: 2,
            code: CodeOptions { l2_tile: 4, unroll_jam: 2, fission: true, ..code.clone() },
        },
        Point {
            scheduler: unified(&[]),
            tiles: Some(vec![16, 16, 32]),
            threads: 2,
            code: CodeOptions { micro_tile: (4, 8), pack: true, ..code.clone() },
        },
        Point { scheduler: Scheduler::Isl, tiles: Some(vec![32]), threads: 2, code },
        Point { scheduler: Scheduler::Original, tiles: None, threads: 1, code: CodeOptions::default() },
    ]
}

/// A sample (the stencils' register tiles take 25–45 s each to generate in
/// debug): two kernels in the fast tier, two others in the heavy tier, the
/// 30 kernels in the full sweep.
fn kernels() -> Vec<Kernel> {
    use testkit::Tier;
    let sample: &[&str] = match testkit::tier() {
        Tier::Fast => &["gemm", "gramschmidt"],
        _ => &["2mm", "lu"],
    };
    let full = testkit::tier() == Tier::Full;
    testkit::kernels()
        .into_iter()
        .filter(|p| full || sample.iter().any(|s| p.file_stem().is_some_and(|f| f == *s)))
        .map(|p| load(&p, "MINI"))
        .collect()
}

#[test]
fn explained_code_steps_replay_to_the_same_program() {
    let mut code_steps = 0;
    for k in kernels() {
        for point in points() {
            let what = format!("{} {point}", k.name);
            let started = std::time::Instant::now();
            let _limit = testkit::item(what.clone(), Duration::from_secs(300));
            let tree = pipeline::schedule_of(&k.scop, &k.deps, &point).unwrap();
            let opts = pipeline::codegen_options(&point);
            let e =
                explain(&k.source, &k.scop, &k.deps, &tree, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
            code_steps += e.code.len();
            let ctx = new_context();
            let applied = clay::apply_script(&ctx, &k.scop, &k.deps, &e.script)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(applied.code.len(), e.code.len(), "{what}");
            let (replayed, stored) = (tree_map(&ctx, &applied.tree).unwrap(), tree_map(&ctx, &tree).unwrap());
            assert!(refines(&ctx, &k.scop, &replayed, &stored).unwrap(), "{what}:\n{}", e.script);
            // The same band tree, generated with the options and with the plan.
            let banded = clay::to_banded_tree(&ctx, &applied.form, &k.scop, &k.deps).unwrap();
            let by_options = pipeline::generate_with(&k.source, &k.scop, &k.deps, &opts, &banded).unwrap();
            let plan = CodegenOptions { plan: Some(applied.code), ..opts.clone() };
            let by_plan = pipeline::generate_with(&k.source, &k.scop, &k.deps, &plan, &banded)
                .unwrap_or_else(|e| panic!("{what}: {e}\n{}", e.reason));
            assert!(by_options == by_plan, "{what}: the plan's program differs\n{}", e.script);
            if point.tiles.is_some() && k.name == "gemm" {
                assert!(
                    e.code.iter().any(|s| matches!(s.action, Action::Tile { .. })),
                    "{what}:\n{}",
                    e.script
                );
                assert!(e.code.iter().any(|s| s.action == Action::Parallelize), "{what}:\n{}", e.script);
                // gemm's scaling runs in the band of its update.
                let fission = e.code.iter().any(|s| s.action == Action::Fission);
                assert_eq!(fission, point.code.fission, "{what}:\n{}", e.script);
                // Packing moves the `i` tile loop innermost, below `B`'s copy.
                let moved = e.code.iter().any(|s| matches!(s.action, Action::TileOrder { .. }));
                assert_eq!(moved, point.code.pack, "{what}:\n{}", e.script);
            }
            eprintln!("{what}: {} code steps, {:.1} s", e.code.len(), started.elapsed().as_secs_f64());
        }
    }
    assert!(code_steps > 0);
}

/// Code steps a user edits: a tile on a loop that starts no band, a vectorised loop that
/// is not innermost, and one that carries a dependence, each refused with its reason.
#[test]
fn code_steps_that_cannot_be_done_are_named() {
    let k = load("linear-algebra/gemm.c", "MINI");
    let ctx = new_context();
    let banded = |script: &str| {
        let a = clay::apply_script(&ctx, &k.scop, &k.deps, script).unwrap();
        let tree = clay::to_banded_tree(&ctx, &a.form, &k.scop, &k.deps).unwrap();
        let opts = CodegenOptions { plan: Some(a.code), ..CodegenOptions::default() };
        pipeline::generate_with(&k.source, &k.scop, &k.deps, &opts, &tree)
    };
    let refused =
        |script: &str| banded(script).err().unwrap_or_else(|| panic!("`{script}` was carried out")).reason;
    // gemm: S1 (C *= beta) in (i, j), S2 in (i, k, j); the band tree has the i loop (0)
    // alone, then S2's band of k (0,1) and j (0,1,0).
    assert!(banded("tile (0,1) 8 8\nparallelize (0)\nvectorize (0,1,0)\n").is_ok());
    let e = refused("tile (0,1,0) 8\n");
    assert!(e.contains("not carried out: tile 8 at the loop of depth 2 around S2"), "{e}");
    let e = refused("vectorize (0)\n");
    assert!(e.contains("not the innermost loop"), "{e}");
    // With k innermost, its loop carries the reduction.
    let e = refused("interchange (0,1) 3\nvectorize (0,1,0)\n");
    assert!(e.contains("illegal"), "{e}");
    let e = clay::apply_script(&ctx, &k.scop, &k.deps, "tile (7) 8\n").err().unwrap().to_string();
    assert!(e.contains("step 1 `tile (7) 8` names no loop"), "{e}");
}
