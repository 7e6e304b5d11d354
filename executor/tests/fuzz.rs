//! The random-program oracle (issue 36): programs nobody wrote, from
//! `testkit::random_scop`, each taken through what `polytune scop`,
//! `schedule` and `run` do: extracted, its dependences analysed, scheduled
//! by the core scheduler (original and maximal fusion), by the unified
//! scheduler under a sample of knobs and by isl's scheduler, each schedule's
//! code generated (legality and permutability checked there), built and
//! run against the original program, outputs compared bit for bit (every
//! dependence is kept, so not even a reduction may change its order).
//! GPU points (the unified scheduler's `target=gpu`, and `isl-gpu` on odd
//! seeds) take sampled GPU code knobs (shared memory, register tiles,
//! block caps); their kernels are emulated on the CPU, block by block and
//! phase by phase, and their CUDA units compiled by nvcc where it is found.
//!
//! Every program must either be refused with a reason (a `ScopError`, a
//! scheduler that finds no schedule, isl's own within the item limit) or
//! verify. Anything else fails the
//! test, naming the seed and printing the program: a panic, wrong output,
//! a crash, generated code that does not compile, an illegal schedule, and
//! raw isl errors (`LibISLError`, "internal error") where a reason was due.
//! Failing programs are also written to `target/tmp/fuzz-failures/`.
//!
//! The fast tier runs a fixed seed set ([`FAST_SEEDS`] programs from seed
//! 0), the heavy tier the rest of seeds `0..CI_SEEDS` (CI runs both). On
//! demand:
//! - `POLYTUNE_FUZZ_N=N`: N programs, `POLYTUNE_FUZZ_SEED=S` from seed S.
//!
//! The generator uses every construct it knows (`random_scop::Options::all`):
//! negative literals, divisions of values that may be negative, statements
//! that may never run, branches on data (a quarter of the statements
//! under `if (R > 0.5)`, `R` one of their reads), which the model keeps as
//! may-writes, and indirect subscripts (about a seventh of the subscripts
//! `e` read as `I[e] % extent` through a read-only int array), which it
//! keeps as may-accesses of the whole extent. Outputs compared bit for bit
//! are what shows a may-access whose dependences were lost.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use codegen::{self, CodegenOptions};
use executor::evaluate::Evaluator;
use executor::measure::Status;
use executor::pipeline;
use executor::verify::Tolerance;
use model::deps::Dependences;
use model::scop::{self, ExtractOptions, Scop};
use space::schedule::{CoreOptions, Fusion, ScheduleError};
use testkit::random_scop::{self, Options, Rng};
use vocab::knobs::{CodeOptions, Point, Scheduler, UnifiedOptions};

/// Programs of the heavy tier's seed set (seeds `0..CI_SEEDS`).
const CI_SEEDS: u64 = 50;
/// Programs of the fast tier's seed set.
const FAST_SEEDS: u64 = 16;

/// The limit on one in-process step (extraction, one schedule, one code
/// generation) of one program: they take well under a second.
const ITEM_LIMIT: Duration = Duration::from_secs(120);

/// The unified scheduler's settings sampled from.
const SCHEDULERS: &[&[&str]] = &[
    &[],
    &["spatial=off"],
    &["spatial=per-reference", "hlim=4", "consecutivity=global", "line_bytes=32"],
    &["target=seq", "hlim=2"],
    &["hlim=1", "feautrier=self-first"],
    &["hlim=1"],
    &["consecutivity=global"],
    &["target=gpu", "spatial=per-reference"],
    &["target=gpu", "feautrier=self-first"],
];

/// What acts after scheduling: (knobs, tiles, threads).
type After = (&'static [&'static str], Option<&'static [u32]>, usize);
const AFTER: &[After] = &[
    (&[], None, 1),
    (&[], None, 2),
    (&[], Some(&[4]), 2),
    (&["posttile_reorder=none"], Some(&[8]), 1),
    (&["wavefront=all"], Some(&[4]), 2),
    (&["wavefront=single", "posttile_reorder=none"], Some(&[8, 4]), 2),
    (&["consecutivity=intra-tile"], Some(&[4]), 1),
    (&["restrict=on", "simd=innermost", "unroll_jam=2"], Some(&[4]), 2),
    (&["simd=innermost", "unroll_jam=4", "omp_schedule=dynamic", "parallel_min=2"], Some(&[8]), 2),
    (&["restrict=on", "l2_tile=2"], Some(&[4]), 2),
    (&["transpose=on", "restrict=on", "simd=innermost"], Some(&[4, 8]), 2),
];

/// What acts after scheduling a GPU point (one host thread). Small tiles,
/// so that SMALL-sized random domains still span several blocks; shared
/// memory is on unless a setting turns it off.
const GPU_AFTER: &[After] = &[
    (&[], None, 1),
    (&[], Some(&[4]), 1),
    (&["gpu_thread_tile=2"], Some(&[8]), 1),
    (&["gpu_thread_tile=2", "gpu_unroll=on"], Some(&[8, 4]), 1),
    (&["gpu_thread_tile=4", "gpu_min_blocks=2"], Some(&[8, 8, 4]), 1),
    (&["gpu_block=64"], Some(&[16]), 1),
    (&["gpu_shared=off"], Some(&[4]), 1),
    (&["gpu_block=128", "gpu_thread_tile=2"], Some(&[4, 8]), 1),
];

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// How one program ended.
enum Outcome {
    /// Variants built, run and matching the original (refused schedules
    /// with their reasons beside them).
    Verified { variants: usize, refusals: Vec<String> },
    /// Refused as a whole (not a SCoP we model), with the reason.
    Refused(String),
}

fn is_isl(point: &Point) -> bool {
    matches!(point.scheduler, Scheduler::Isl | Scheduler::IslGpu)
}

/// The schedule of `point`. isl's scheduler (the last plan of each
/// program) has [`ITEM_LIMIT`] to find one: past it the point is refused, as a
/// campaign records a point whose schedule outlasts `--variant-timeout`
/// (`schedule-timeout`). isl's Farkas duals (Fourier-Motzkin, which isl's
/// operation budget does not stop) ran for minutes on some programs (seeds
/// 331, 428);
/// their thread is left running until the child process ends, which it
/// does once this program's other plans are through.
fn schedule_point(scop: &Scop, deps: &Dependences, point: &Point) -> Result<String, pipeline::Failure> {
    if !is_isl(point) {
        return pipeline::schedule_of(scop, deps, point);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (scop, deps, point) = (scop.clone(), deps.clone(), point.clone());
    std::thread::spawn(move || {
        let _ = tx.send(pipeline::schedule_of(&scop, &deps, &point));
    });
    rx.recv_timeout(ITEM_LIMIT).unwrap_or_else(|_| {
        Err(pipeline::Failure {
            status: Status::ScheduleTimeout,
            reason: format!("isl's scheduler: no schedule within {} s", ITEM_LIMIT.as_secs()),
        })
    })
}

/// A message that is isl's own error text where a reason was due.
fn raw_isl(message: &str) -> bool {
    message.contains("LibISLError") || message.contains("internal error")
}

/// One variant to make: its label, how to schedule, how to generate.
struct Plan {
    label: String,
    how: How,
}

enum How {
    Core(Fusion, Option<Vec<u32>>, usize, (CodeOptions, Vec<String>)),
    Point(Point),
}

fn plans(seed: u64) -> Vec<Plan> {
    let mut rng = Rng::new(seed ^ 0xf022);
    let pick = |rng: &mut Rng, from: &[After]| -> (Vec<String>, Option<Vec<u32>>, usize) {
        let (set, tiles, threads) = rng.pick(from);
        (set.iter().map(|s| s.to_string()).collect(), tiles.map(|t| t.to_vec()), *threads)
    };
    let mut out = Vec::new();
    // One fusion of the core scheduler's, one setting of the unified
    // scheduler's, and isl's: three schedules keep a program within about
    // two seconds of a debug build.
    let fusion = if seed & 1 == 0 { Fusion::Original } else { Fusion::Max };
    {
        let (set, tiles, threads) = pick(&mut rng, AFTER);
        // The core scheduler's code: tiles, threads and code knobs only.
        let code = CodeOptions::default().with_settings(&set).unwrap();
        let label = format!("core {fusion:?} {set:?} tiles {tiles:?} threads {threads}");
        out.push(Plan { label, how: How::Core(fusion, tiles, threads, (code, set)) });
    }
    {
        let scheduler = *rng.pick(SCHEDULERS);
        let on_gpu = scheduler.contains(&"target=gpu");
        let (mut set, tiles, threads) = pick(&mut rng, if on_gpu { GPU_AFTER } else { AFTER });
        if set.iter().any(|s| s == "consecutivity=intra-tile") {
            set.retain(|s| !s.starts_with("consecutivity="));
            set.push("consecutivity=intra-tile".into());
        }
        let mut all: Vec<String> = scheduler.iter().map(|s| s.to_string()).collect();
        if set.iter().any(|s| s.starts_with("consecutivity=")) {
            all.retain(|s| !s.starts_with("consecutivity="));
        }
        all.extend(set);
        let options = UnifiedOptions::default().with_settings(&all).unwrap();
        let code = CodeOptions::default().with_settings(&all).unwrap();
        let point = Point {
            scheduler: Scheduler::Unified { preorder: None, options },
            tiles: tiles.clone(),
            threads,
            code,
        };
        out.push(Plan {
            label: format!("unified {all:?} tiles {tiles:?} threads {threads}"),
            how: How::Point(point),
        });
    }
    // isl's scheduler, as `isl` on even seeds and as ppcg runs it on odd
    // ones (`isl-gpu`, a GPU point).
    let (scheduler, (set, tiles, threads)) = if seed & 1 == 0 {
        (Scheduler::Isl, pick(&mut rng, AFTER))
    } else {
        (Scheduler::IslGpu, pick(&mut rng, GPU_AFTER))
    };
    let code = CodeOptions::default().with_settings(&set).unwrap();
    let name = if seed & 1 == 0 { "isl" } else { "isl-gpu" };
    let point = Point { scheduler, tiles: tiles.clone(), threads, code };
    out.push(Plan {
        label: format!("{name} {set:?} tiles {tiles:?} threads {threads}"),
        how: How::Point(point),
    });
    out
}

/// Takes the program of `seed` through the pipeline; `Err` is a failure.
fn check(seed: u64, path: &Path, ev: &Evaluator) -> Result<Outcome, String> {
    let extracted = {
        let _item = testkit::item(format!("seed {seed}: extract"), ITEM_LIMIT);
        scop::extract(path, &ExtractOptions::default())
    };
    let (source, scops) = match extracted {
        Ok(x) => x,
        Err(e) if raw_isl(&e.to_string()) => return Err(format!("extract: raw isl error: {e}")),
        Err(e) => return Ok(Outcome::Refused(e.reason.clone())),
    };
    let [scop] = &scops[..] else { return Err(format!("{} SCoPs found, not one", scops.len())) };
    let deps = {
        let _item = testkit::item(format!("seed {seed}: dependences"), ITEM_LIMIT);
        model::deps::analyze(scop).map_err(|e| format!("dependences: {e}"))?
    };
    let original = codegen::original_program(&source, scop).map_err(|e| format!("original program: {e}"))?;
    let t = Instant::now();
    let reference = ev.reference(&original).map_err(|e| format!("the original program: {e}"))?;
    let mut times = vec![("reference", t.elapsed().as_secs_f64())];
    let mut refusals = Vec::new();
    let mut programs: Vec<(String, String)> = Vec::new();
    for plan in plans(seed) {
        let t = Instant::now();
        // isl's own scheduler gets its limit from `schedule_point`; the
        // item's is a safety net past it.
        let limit = match &plan.how {
            How::Point(p) if is_isl(p) => ITEM_LIMIT * 2,
            _ => ITEM_LIMIT,
        };
        let item = testkit::item(format!("seed {seed}: {}: schedule", plan.label), limit);
        let (tree, opts) = match &plan.how {
            How::Core(fusion, tiles, threads, code) => {
                let opts = CoreOptions { fusion: fusion.clone(), ..Default::default() };
                match space::schedule::schedule(scop, &deps, &opts) {
                    Ok(s) => {
                        // Post-tile reordering, wavefronts and intra-tile
                        // consecutivity act in code generation, for any schedule.
                        let knobs = UnifiedOptions::default().with_settings(&code.1).unwrap();
                        let cg = CodegenOptions {
                            code: code.0.clone(),
                            ..CodegenOptions::for_point(tiles.clone(), *threads, Some(&knobs))
                        };
                        (s.tree, cg)
                    }
                    Err(e @ (ScheduleError::Isl(_) | ScheduleError::Illegal(_))) => {
                        return Err(format!("{}: schedule: {e}", plan.label))
                    }
                    Err(e) if raw_isl(&e.to_string()) => {
                        return Err(format!("{}: schedule: {e}", plan.label))
                    }
                    Err(e) => {
                        refusals.push(format!("{}: {e}", plan.label));
                        continue;
                    }
                }
            }
            How::Point(point) => match schedule_point(scop, &deps, point) {
                Ok(tree) => (tree, pipeline::codegen_options(point)),
                Err(f)
                    if raw_isl(&f.reason)
                        || f.reason.starts_with("isl: ")
                        || f.reason.contains("legality") =>
                {
                    return Err(format!("{}: schedule: {f}", plan.label))
                }
                Err(f) => {
                    refusals.push(format!("{}: {f}", plan.label));
                    continue;
                }
            },
        };
        drop(item);
        times.push(("schedule", t.elapsed().as_secs_f64()));
        let t = Instant::now();
        let _item = testkit::item(format!("seed {seed}: {}: codegen", plan.label), ITEM_LIMIT);
        match pipeline::generate_variant(&source, scop, &deps, &opts, &tree) {
            Ok(v) => {
                times.push(("codegen", t.elapsed().as_secs_f64()));
                if let Some(cuda) = &v.cuda {
                    let t = Instant::now();
                    nvcc_accepts(&cuda.unit, path, programs.len())
                        .map_err(|e| format!("{}: nvcc: {e}\nschedule: {tree}", plan.label))?;
                    times.push(("nvcc", t.elapsed().as_secs_f64()));
                }
                programs.push((plan.label, v.program))
            }
            Err(f) => return Err(format!("{}: codegen: {f}\nschedule: {tree}", plan.label)),
        }
    }
    let sources: Vec<String> = programs.iter().map(|(_, p)| p.clone()).collect();
    let t = Instant::now();
    let measured = ev.evaluate(&reference, &sources).map_err(|e| format!("evaluate: {e}"))?;
    times.push(("evaluate", t.elapsed().as_secs_f64()));
    if std::env::var_os("POLYTUNE_FUZZ_TIMES").is_some() {
        eprintln!("seed {seed}: {times:.1?}");
    }
    let mut wrong = Vec::new();
    for ((label, _), m) in programs.iter().zip(&measured) {
        if m.status != Status::Ok {
            wrong.push(format!("{label}: {} {}", m.status, m.reason));
        }
    }
    if !wrong.is_empty() {
        return Err(wrong.join("\n"));
    }
    Ok(Outcome::Verified { variants: programs.len(), refusals })
}

/// Whether nvcc compiles a GPU variant's CUDA unit for sm_90, where nvcc
/// is found (the emulation checks its outputs; this, that it is CUDA).
fn nvcc_accepts(unit: &str, program: &Path, k: usize) -> Result<(), String> {
    let Some(nvcc) = executor::cuda::nvcc() else { return Ok(()) };
    let path = program.with_extension(format!("{k}.cu"));
    std::fs::write(&path, unit).map_err(|e| format!("{}: {e}", path.display()))?;
    executor::cuda::compile_check(&nvcc, &path, &["sm_90"])
}

/// The first words of a reason: what the summary groups refusals by.
fn class(reason: &str) -> String {
    let reason = reason.split_once("]: ").map_or(reason, |(_, r)| r);
    let reason = reason.rsplit_once("threads ").map_or(reason, |(_, r)| r.get(2..).unwrap_or(r));
    let words: Vec<&str> = reason.split_whitespace().take(6).collect();
    words.join(" ")
}

/// A program's seed, how it ended and its text.
type Checked = (u64, Result<Outcome, String>, String);

/// The limit on one program's child process (all of its steps).
const CHILD_LIMIT: Duration = Duration::from_secs(300);

/// Lines of a child's stdout that carry its outcome.
const TAG: &str = "fuzz-outcome ";

/// The child's side: checks the program of `seed` and prints its outcome
/// (newlines escaped) on tagged lines.
fn child(seed: u64, opts: &Options) {
    let program = random_scop::generate(seed, opts);
    let dir = testkit::root().join(format!("target/tmp/fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("seed{seed}.c"));
    std::fs::write(&path, &program.text).unwrap();
    let ev =
        testkit::evaluator("fuzz", &["-O3", "-ffp-contract=off", "-fopenmp"], Some(2), Tolerance::BITWISE);
    let r = check(seed, &path, &ev);
    let _ = std::fs::remove_dir_all(&dir);
    let line = |kind: &str, text: &str| println!("{TAG}{kind} {}", text.replace('\n', "\u{1}"));
    match r {
        Ok(Outcome::Verified { variants, refusals }) => {
            for r in refusals {
                line("refusal", &r);
            }
            line("verified", &variants.to_string());
        }
        Ok(Outcome::Refused(reason)) => line("refused", &reason),
        Err(e) => line("failed", &e),
    }
}

/// Runs the program of `seed` in a child process (this test, with
/// `POLYTUNE_FUZZ_CHILD`): a hang, a crash or an abort in a solver is then
/// that program's failure, and the run goes on.
fn run_child(seed: u64) -> Result<Outcome, String> {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "random_programs_are_refused_with_a_reason_or_verify",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("POLYTUNE_FUZZ_CHILD", seed.to_string());
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        testkit::output_within(&mut cmd, CHILD_LIMIT)
    }))
    .map_err(|p| {
        let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
        format!("hung: {msg}")
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut refusals = Vec::new();
    for l in stdout.lines() {
        // libtest's "test NAME ... " may stand before the first tag.
        let Some(at) = l.find(TAG) else { continue };
        let rest = &l[at + TAG.len()..];
        let (kind, text) = rest.split_once(' ').unwrap_or((rest, ""));
        let text = text.replace('\u{1}', "\n");
        match kind {
            "refusal" => refusals.push(text),
            "verified" => return Ok(Outcome::Verified { variants: text.parse().unwrap_or(0), refusals }),
            "refused" => return Ok(Outcome::Refused(text)),
            _ => return Err(text),
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!("the child ended without an outcome ({}):\n{}", out.status, tail.join("\n")))
}

#[test]
fn random_programs_are_refused_with_a_reason_or_verify() {
    let opts = Options::all();
    if let Some(seed) = env_u64("POLYTUNE_FUZZ_CHILD") {
        return child(seed, &opts);
    }
    let (tier_first, tier_n) = match testkit::tier() {
        testkit::Tier::Fast => (0, FAST_SEEDS),
        _ => (FAST_SEEDS, CI_SEEDS - FAST_SEEDS),
    };
    let n = env_u64("POLYTUNE_FUZZ_N").unwrap_or(tier_n);
    let first = env_u64("POLYTUNE_FUZZ_SEED").unwrap_or(tier_first);
    let kept = testkit::root().join("target/tmp/fuzz-failures");
    let started = Instant::now();
    let results: Mutex<Vec<Checked>> = Mutex::new(Vec::new());
    testkit::on_two_threads(n as usize, |i| {
        let seed = first + i as u64;
        let program = random_scop::generate(seed, &opts);
        let t = Instant::now();
        let r = run_child(seed);
        let took = t.elapsed().as_secs_f64();
        if took > 5.0 {
            eprintln!("seed {seed}: {took:.1} s");
        }
        if r.is_err() {
            std::fs::create_dir_all(&kept).unwrap();
            std::fs::write(kept.join(format!("seed{seed}.c")), &program.text).unwrap();
            let why = r.as_ref().err().map(|e| e.lines().take(3).collect::<Vec<_>>().join(" | "));
            eprintln!("seed {seed}: failed: {}", why.unwrap_or_default());
        }
        results.lock().unwrap().push((seed, r, program.text));
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let (mut verified, mut variants, mut refused) = (0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (seed, r, text) in &results {
        match r {
            Ok(Outcome::Verified { variants: v, refusals }) => {
                verified += 1;
                variants += v;
                for r in refusals {
                    eprintln!("seed {seed}: refused: {r}");
                    *reasons.entry(format!("schedule: {}", class(r))).or_default() += 1;
                }
            }
            Ok(Outcome::Refused(reason)) => {
                refused += 1;
                *reasons.entry(format!("scop: {}", class(reason))).or_default() += 1;
            }
            Err(e) => failures.push(format!("seed {seed}: {e}\n{text}")),
        }
    }
    eprintln!(
        "random programs: {} (seeds {first}..{}), {verified} verified ({variants} variants), {refused} refused, \
         {} failed, {:.0} s",
        results.len(),
        first + n,
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    for (reason, count) in &reasons {
        eprintln!("  refused {count}x: {reason}");
    }
    assert!(failures.is_empty(), "{} failures:\n\n{}", failures.len(), failures.join("\n\n"));
    // The oracle must exercise the pipeline, not only the frontend's refusals.
    assert!(verified * 2 >= results.len(), "only {verified} of {} programs verified", results.len());
}

/// `--autodetect` against the generator's own pragmas: each program with
/// its pragma lines blanked, where the marked SCoP is modelled, is found
/// again: one region found holds the marked SCoP's statements, in order,
/// with the same texts and domains (a region may also take statements
/// beside it that the generator left outside its pragmas).
#[test]
fn random_programs_without_their_pragmas_are_found_again() {
    let opts = Options::all();
    let n = match testkit::tier() {
        testkit::Tier::Fast => FAST_SEEDS,
        _ => CI_SEEDS,
    };
    let dir = testkit::TempDir::new("fuzz-detect");
    let shape = |s: &Scop| -> Vec<(String, String)> {
        // A domain without its statement's name (names are numbered per SCoP).
        let unnamed = |d: &str| d.split_once('[').map_or(d.to_string(), |(_, rest)| rest.to_string());
        s.statements.iter().map(|st| (st.text.trim().to_string(), unnamed(&st.domain))).collect()
    };
    let (mut found, mut failures) = (0, Vec::new());
    for seed in 0..n {
        let program = random_scop::generate(seed, &opts);
        let marked_file = dir.join(format!("seed{seed}.c"));
        std::fs::write(&marked_file, &program.text).unwrap();
        let Ok((_, marked)) = scop::extract(&marked_file, &ExtractOptions::default()) else { continue };
        let stripped: String = program
            .text
            .split_inclusive('\n')
            .map(|l| {
                if l.trim_start().starts_with("#pragma scop") || l.trim_start().starts_with("#pragma endscop")
                {
                    "\n"
                } else {
                    l
                }
            })
            .collect();
        let file = dir.join(format!("seed{seed}-stripped.c"));
        std::fs::write(&file, stripped).unwrap();
        let item = testkit::item(format!("seed {seed}: autodetect"), ITEM_LIMIT);
        let detected = scop::extract(&file, &ExtractOptions { autodetect: true, ..Default::default() });
        drop(item);
        let want = shape(&marked[0]);
        let ok = detected.as_ref().is_ok_and(|(_, scops)| {
            scops.iter().any(|s| shape(s).windows(want.len()).any(|w| w == want.as_slice()))
        });
        match ok {
            true => found += 1,
            false => failures.push(format!(
                "seed {seed}: {}\n{}",
                match &detected {
                    Ok((_, scops)) =>
                        format!("{} region(s), none with the marked SCoP's statements", scops.len()),
                    Err(e) => e.to_string(),
                },
                program.text
            )),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("random programs found again without their pragmas: {found}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(found > 0);
}
