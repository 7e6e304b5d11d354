//! Unified-scheduler variants (RR-9110 §4): the published point-loop order of
//! gemm, and every kernel under many knob settings, legal and matching the
//! original program's outputs at SMALL.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use codegen::{self, CodegenOptions};
use executor::evaluate::Evaluator;
use executor::measure::Status;
use executor::pipeline;
use executor::verify::Tolerance;
use testkit::{kernels, load};
use vocab::knobs::UnifiedOptions;

/// The limit on one item of the sweep (one schedule, one variant's code
/// generation; `POLYTUNE_ITEM_LIMIT_S` overrides it): the slowest, adi's
/// schedules in a debug build, take about two minutes.
const ITEM_LIMIT: Duration = Duration::from_secs(400);

fn evaluator(threads: usize) -> Evaluator {
    testkit::evaluator("unified", &["-O1", "-fopenmp"], Some(threads), Tolerance::default())
}

/// Whether the innermost loop around the first call of `stmt` moves the
/// statement's iterator `name` (the call's argument for it is `c2 + c5`-like).
fn innermost_moves(region: &str, stmt: &str, name: &str) -> bool {
    let needle = format!("polytune_{stmt}(");
    let define = region.find(&format!("#define {needle}")).unwrap() + 8 + needle.len();
    let params: Vec<&str> =
        region[define..region[define..].find(')').unwrap() + define].split(", ").collect();
    let call = region
        .match_indices(&needle)
        .map(|(i, _)| i)
        .find(|&i| !region[..i].rsplit('\n').next().unwrap().contains("#define"))
        .unwrap();
    let before = &region[..call];
    let f = before.rfind("for (int ").unwrap();
    let inner = before[f + 9..].split([' ', '=']).next().unwrap();
    let args = &region[call + needle.len()..];
    let args: Vec<&str> = args[..args.find(");").unwrap()].split(", ").collect();
    let arg = args[params.iter().position(|p| *p == name).unwrap()];
    arg.split(" + ").any(|t| t.trim() == inner)
}

#[test]
fn gemm_innermost_point_loop_is_j() {
    let k = load("linear-algebra/gemm.c", "SMALL");
    let knobs = UnifiedOptions::default();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![32]), 2, Some(&knobs));
    assert!(opts.openmp && opts.posttile_reorder == vocab::knobs::PostTileReorder::Pluto);
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    assert!(innermost_moves(&v.region, "S2", "j"), "{}", v.region);
    assert!(v.region.contains("#pragma omp parallel for"), "{}", v.region);
    // Post-tile reordering (Pluto's score (2)) sinks j below k: the core
    // scheduler's gemm band is (i, j, k); with pluto the point loops end in j.
    let core = space::schedule::schedule(&k.scop, &k.deps, &Default::default()).unwrap();
    let none = CodegenOptions { posttile_reorder: vocab::knobs::PostTileReorder::None, ..opts.clone() };
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &core.tree, &none).unwrap();
    assert!(innermost_moves(&v.region, "S2", "k"), "{}", v.region);
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &core.tree, &opts).unwrap();
    assert!(innermost_moves(&v.region, "S2", "j"), "{}", v.region);
}

/// Scheduler settings: every kernel gets the default and one of the others
/// (by its index), so that each knob value is exercised on several kernels
/// while scheduling stays affordable in a debug build.
const SCHEDULERS: [&[&str]; 6] = [
    &[],
    &["spatial=off"],
    &["target=gpu", "spatial=per-reference"],
    &["spatial=per-reference", "hlim=4", "consecutivity=global", "line_bytes=32"],
    &["target=seq", "hlim=2"],
    // Feautrier rows wherever hlim allows, carrying self-dependences first.
    &["hlim=1", "feautrier=self-first"],
];

/// Left out of the fast and heavy tiers (the full sweep,
/// `POLYTUNE_TIER=full`, runs them): `(kernel, setting substring, why)`.
const KNOWN: &[(&str, &str, &str)] = &[
    // Passes the full sweep (release); in a debug build it alone would take
    // a large part of CI's time.
    ("adi", "", "the unified scheduler takes about 40 s per setting on adi in release (issue 4)"),
];

fn full_sweep() -> bool {
    testkit::tier() == testkit::Tier::Full
}

/// `POLYTUNE_SWEEP_KERNELS=gemm,jacobi-2d`: only these kernels, known
/// failures included (for reproducing one kernel's failures).
fn only_kernels() -> Option<Vec<String>> {
    let v = std::env::var("POLYTUNE_SWEEP_KERNELS").ok()?;
    Some(v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

/// Knob settings, tiles and threads of one variant.
type Setting<S> = (Vec<S>, Option<Vec<u32>>, usize);

/// Knob settings of the sweep for kernel `i`: scheduler settings × what acts
/// after tiling (tiles, post-tile reordering, wavefront, intra-tile
/// consecutivity, threads, the code-generation knobs). Tiles 16 and 32 only
/// (the full sweep adds 8).
fn settings(i: usize) -> Vec<Setting<String>> {
    let schedulers = [SCHEDULERS[0], SCHEDULERS[1 + i % (SCHEDULERS.len() - 1)]];
    let tile_sizes: &[u32] = if full_sweep() { &[8, 16, 32] } else { &[16, 32] };
    let mut after: Vec<Setting<&str>> = Vec::new();
    for &tiles in tile_sizes {
        for post in ["posttile_reorder=none", "posttile_reorder=pluto"] {
            for wave in ["wavefront=none", "wavefront=single", "wavefront=all"] {
                after.push((vec![post, wave], Some(vec![tiles]), 2));
            }
        }
    }
    for &tiles in tile_sizes {
        after.push((vec!["consecutivity=intra-tile"], Some(vec![tiles]), 2));
        after.push((vec!["consecutivity=intra-tile", "wavefront=all"], Some(vec![tiles]), 1));
    }
    // Code-generation knobs (issue 17): register tiling with vectorisation,
    // on cubes and on a rectangle, with a wavefront, and untiled.
    after.push((vec!["restrict=on", "simd=innermost", "unroll_jam=4"], Some(vec![16]), 2));
    after.push((
        vec!["simd=innermost", "unroll_jam=2", "omp_schedule=dynamic", "wavefront=all", "parallel_min=4"],
        Some(vec![32]),
        2,
    ));
    after.push((
        vec!["restrict=on", "simd=innermost", "unroll_jam=4", "vector_width=512"],
        Some(vec![16, 16, 64]),
        1,
    ));
    after.push((vec!["restrict=on", "simd=innermost"], None, 1));
    // Micro tiles: the reduction loop outside rows by columns, the written
    // block in a local array (where some band reduces).
    after.push((vec!["restrict=on", "simd=innermost", "micro_tile=4x8"], Some(vec![16, 16, 64]), 2));
    // Two tiling levels: tiles of 8 in outer tiles of 32.
    after.push((vec!["restrict=on", "simd=innermost", "l2_tile=4"], Some(vec![8]), 2));
    // Transposed copies (syrk, syr2k, ...; the same program elsewhere).
    after.push((
        vec!["restrict=on", "simd=innermost", "unroll_jam=4", "transpose=on", "omp_schedule=dynamic"],
        Some(vec![16, 16, 32]),
        2,
    ));
    if full_sweep() {
        after.push((vec!["posttile_reorder=pluto"], Some(vec![16, 8]), 1));
        after.push((vec!["restrict=on", "simd=innermost", "unroll_jam=8"], Some(vec![32]), 2));
    }
    after.push((vec![], None, 1));
    after.push((vec![], None, 2));
    let mut out = Vec::new();
    for s in schedulers {
        for (a, tiles, threads) in &after {
            let mut set: Vec<String> = s.iter().map(|x| x.to_string()).collect();
            // Intra-tile consecutivity replaces a global one.
            if a.contains(&"consecutivity=intra-tile") {
                set.retain(|x| !x.starts_with("consecutivity="));
            }
            set.extend(a.iter().map(|x| x.to_string()));
            out.push((set, tiles.clone(), *threads));
        }
    }
    out
}

/// Every kernel × every setting: scheduled (legality checked inside), code
/// generated (legality and permutability checked again), compiled and run at
/// SMALL, outputs compared with the original's, and each statement instance
/// run once (counted). Settings that lead to the same program are built and
/// run once. A failure is a status in the list. The tiers take a sample
/// of the settings ([`testkit::takes`]).
#[test]
fn every_kernel_under_every_setting_is_legal_and_matches_the_original() {
    let paths = kernels();
    if full_sweep() {
        assert!((0..paths.len()).all(|i| settings(i).len() >= 50));
    }
    let only = only_kernels();
    let known = |kernel: &str, set: &[String]| {
        !full_sweep()
            && only.is_none()
            && KNOWN
                .iter()
                .any(|(k, s, _)| *k == kernel && (s.is_empty() || set.iter().any(|x| x.starts_with(s))))
    };
    let name = |i: usize| paths[i].file_stem().unwrap().to_string_lossy().into_owned();
    if testkit::tier() == testkit::Tier::Fast && only.is_none() {
        // The fast tier's sample still runs every setting on some kernel.
        let covered: std::collections::BTreeSet<usize> = (0..paths.len())
            .filter(|&i| !known(&name(i), &[]))
            .flat_map(|i| (0..settings(i).len()).filter(move |&j| testkit::takes(i, j, 24, 4)))
            .collect();
        assert_eq!(covered.len(), settings(0).len(), "settings the fast tier never runs");
    }
    let started = std::time::Instant::now();
    let failures = Mutex::new(Vec::<String>::new());
    // (kernel index, threads) -> programs, deduplicated.
    // Each program with the settings that produce it.
    type Programs = HashMap<(usize, usize), Vec<(String, Vec<String>)>>;
    let programs: Mutex<Programs> = Mutex::new(HashMap::new());
    testkit::on_two_threads(paths.len(), |i| {
        let path = &paths[i];
        let name = name(i);
        if only.as_ref().is_some_and(|o| !o.contains(&name)) {
            return;
        }
        let settings: Vec<_> = settings(i)
            .into_iter()
            .enumerate()
            .filter(|(j, (set, _, _))| {
                // Each kernel takes every 24th of its 48 settings in the fast
                // tier (shifted per kernel, so that each setting runs on some
                // kernel), 10 more in the heavy tier, all in the full sweep.
                (only.is_some() || testkit::takes(i, *j, 24, 4)) && !known(&name, set)
            })
            .map(|(_, s)| s)
            .collect();
        if settings.is_empty() {
            return;
        }
        let k = load(path, "SMALL");
        let t = std::time::Instant::now();
        let mut schedules: HashMap<(vocab::knobs::SchedulerOptions, bool), Result<String, String>> =
            HashMap::new();
        let mut codegen_s = 0.0;
        for (set, tiles, threads) in &settings {
            let knobs = UnifiedOptions::default().with_settings(set).unwrap();
            let code = vocab::knobs::CodeOptions::default().with_settings(set).unwrap();
            // `transpose=on` schedules and generates on the SCoP with its copies.
            let gpu = knobs.target == vocab::knobs::Target::Gpu;
            let (scop, deps) = pipeline::model(&k.scop, &k.deps, &code, gpu).unwrap();
            let tree = schedules
                // Schedules depend only on the scheduler's knobs: one per distinct set.
                .entry((knobs.scheduler(), !scop.copies.is_empty()))
                .or_insert_with(|| {
                    let _item = testkit::item(format!("{} {set:?}: schedule", k.name), ITEM_LIMIT);
                    space::schedule::unified(&scop, &deps, None, &knobs.scheduler())
                        .map(|s| s.tree)
                        .map_err(|e| e.to_string())
                })
                .clone();
            let tree = match tree {
                Ok(t) => t,
                Err(e) => {
                    failures.lock().unwrap().push(format!("{} {set:?}: schedule: {e}", k.name));
                    continue;
                }
            };
            let opts =
                CodegenOptions { code, ..CodegenOptions::for_point(tiles.clone(), *threads, Some(&knobs)) };
            let c = std::time::Instant::now();
            let generated = {
                let _item = testkit::item(format!("{} {set:?} {tiles:?}: codegen", k.name), ITEM_LIMIT);
                codegen::generate(&k.source, &scop, &deps, &tree, &opts)
            };
            codegen_s += c.elapsed().as_secs_f64();
            match generated {
                Ok(v) => {
                    let mut p = programs.lock().unwrap();
                    let list = p.entry((i, *threads)).or_default();
                    let how = format!("{set:?} {tiles:?}");
                    match list.iter_mut().find(|(p, _)| *p == v.program) {
                        Some((_, hows)) => hows.push(how),
                        None => list.push((v.program, vec![how])),
                    }
                }
                Err(e) => {
                    failures.lock().unwrap().push(format!("{} {set:?} {tiles:?}: codegen: {e}", k.name))
                }
            }
        }
        let total = t.elapsed().as_secs_f64();
        // Build and run this kernel's distinct programs now, so that
        // progress and failures show as the sweep goes.
        let mut n = 0;
        for threads in [1, 2] {
            let Some(list) = programs.lock().unwrap().get(&(i, threads)).cloned() else { continue };
            n += list.len();
            let ev = evaluator(threads);
            let original = codegen::original_program(&k.source, &k.scop).unwrap();
            let reference = ev.reference(&original).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let sources: Vec<String> = list.iter().map(|(p, _)| p.clone()).collect();
            for (j, m) in ev.evaluate(&reference, &sources).unwrap().into_iter().enumerate() {
                if m.status != Status::Ok {
                    failures.lock().unwrap().push(format!(
                        "{} threads={threads} variant {j} ({}): {} {}",
                        k.name,
                        list[j].1.join(" | "),
                        m.status,
                        m.reason
                    ));
                }
            }
        }
        // Whatever the outputs say, each program runs every statement
        // instance once (the instance oracle, `testkit::instances`).
        let c = std::time::Instant::now();
        let mut counted: Vec<String> = Vec::new();
        match testkit::instances::original(&k) {
            Ok(want) => {
                for threads in [1, 2] {
                    let Some(list) = programs.lock().unwrap().get(&(i, threads)).cloned() else { continue };
                    for (p, hows) in list {
                        if counted.contains(&p) {
                            continue;
                        }
                        if let Err(e) = testkit::instances::check(&k, &want, &p) {
                            failures.lock().unwrap().push(format!("{} ({}): {e}", k.name, hows.join(" | ")));
                        }
                        counted.push(p);
                    }
                }
            }
            Err(e) => failures.lock().unwrap().push(format!("{} : counting instances: {e}", k.name)),
        }
        let counting_s = c.elapsed().as_secs_f64();
        let bad = failures.lock().unwrap().iter().filter(|f| f.starts_with(&format!("{} ", k.name))).count();
        eprintln!(
                    "{}: schedules {:.1} s, codegen {codegen_s:.1} s, {n} programs run in {:.1} s, instances of {} counted in {counting_s:.1} s, {bad} failures",
                    k.name,
                    total - codegen_s,
                    t.elapsed().as_secs_f64() - total - counting_s,
                    counted.len()
                );
    });
    let programs = programs.into_inner().unwrap();
    let failures = failures.into_inner().unwrap();
    let variants: usize = programs.values().map(|l| l.len()).sum();
    eprintln!(
        "sweep: {} kernels x {} settings, {variants} distinct programs, {:.0} s",
        paths.len(),
        settings(0).len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{} failures: {failures:#?}", failures.len());
}

/// The bodies of the `#pragma omp parallel for` loops in `region`.
fn parallel_loop_bodies(region: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in region.match_indices("#pragma omp parallel for") {
        let open = at + region[at..].find('{').unwrap();
        let mut depth = 0;
        for (k, ch) in region[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                out.push(&region[open..open + k]);
                break;
            }
        }
    }
    out
}

/// Regression (issue 6): in gramschmidt under `spatial=off`, the wavefront
/// makes the second tile loop parallel, but that member is constant for the
/// statements on the scalar `nrm` (S1-S3), so isl generates no loop for it
/// there; the OpenMP mark then put `parallel for` on the next loop down, the
/// point loop of the `nrm += ...` reduction, a race (`wrong` on `nrm` with
/// two threads). Only the loop of the checked band member may be parallel.
#[test]
fn gramschmidt_wavefront_marks_no_loop_around_the_nrm_reduction_parallel() {
    let k = load("linear-algebra/gramschmidt.c", "SMALL");
    let knobs = UnifiedOptions::default()
        .with_settings(&["spatial=off".to_string(), "wavefront=all".to_string()])
        .unwrap();
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let opts = CodegenOptions::for_point(Some(vec![16]), 2, Some(&knobs));
    let v = codegen::generate(&k.source, &k.scop, &k.deps, &s.tree, &opts).unwrap();
    let bodies = parallel_loop_bodies(&v.region);
    assert!(!bodies.is_empty(), "the wavefront should still give a parallel loop:\n{}", v.region);
    for body in bodies {
        for stmt in ["S1", "S2", "S3"] {
            assert!(
                !body.contains(&format!("polytune_{stmt}(")),
                "{stmt} writes nrm in a parallel loop:\n{}",
                v.region
            );
        }
    }
    // And the program computes what the original does, with two threads.
    let ev = evaluator(2);
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap();
    let m = ev.evaluate(&reference, &[v.program]).unwrap().remove(0);
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
}

/// The sweep fails fast on a hang: with the test-only hook making gemm's
/// first schedule hang, the sweep (run as a child test process on gemm
/// alone, with a 5 s item limit) stops within a minute and names the item.
#[test]
fn a_hanging_item_fails_the_sweep_within_its_limit_naming_it() {
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "every_kernel_under_every_setting_is_legal_and_matches_the_original",
            "--nocapture",
        ])
        .env("POLYTUNE_SWEEP_KERNELS", "gemm")
        .env("POLYTUNE_TEST_HANG", ": schedule")
        .env("POLYTUNE_ITEM_LIMIT_S", "5");
    // Our own guard: the child must not hang either.
    let out = testkit::output_within(&mut child, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(testkit::EXIT_HUNG), "{err}");
    let named = err
        .lines()
        .any(|l| l.contains("test item `gemm [") && l.contains(": schedule` exceeded its time limit of 5 s"));
    assert!(named, "{err}");
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
}
