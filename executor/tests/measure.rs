//! The measurement protocol on hand-written programs that call the runtime the
//! way generated code does, and the output comparison.

use executor::build::{BuildOutcome, Builder, Compiler};
use executor::machine::Slot;
use executor::measure::{
    measure, measure_against, measure_outcome, MeasureConfig, Status, TimeoutPolicy, FILL_RUNS,
};
use executor::runtime::{parse_dump, read_dump, DumpedArray};
use executor::verify::{compare, Tolerance, Verdict};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One builder for the whole file. Its cache persists across test runs on
/// purpose: concurrent and repeated use of one cache is part of what is tested.
fn builder() -> &'static Builder {
    static B: OnceLock<Builder> = OnceLock::new();
    B.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("polytune-measure-test-cache");
        Builder::new(Compiler::default(), dir).unwrap()
    })
}

fn build(source: &str) -> PathBuf {
    match builder().build(source) {
        BuildOutcome::Built { binary, .. } => binary,
        BuildOutcome::Failed { message } => panic!("test program does not build:\n{message}"),
    }
}

/// A program around a region, with the runtime declared at block scope like
/// generated code. `region` runs between start and stop; `after` before the dump.
fn program(prelude: &str, region: &str, after: &str) -> String {
    format!(
        r#"#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
{prelude}
static double A[100];
static int n_out[2];
int main(void)
{{
  void polytune_rt_start(void);
  void polytune_rt_stop(void);
  void polytune_rt_dump(const char *name, const char *type, const void *p, unsigned long bytes);
  int i;
  for (i = 0; i < 100; i++) A[i] = i;
  polytune_rt_start();
  for (i = 0; i < 100; i++) A[i] = A[i] * 0.5 + 1.0;
  {region}
  polytune_rt_stop();
  {after}
  polytune_rt_dump("A", "double", A, sizeof A);
  polytune_rt_dump("n_out", "int", n_out, sizeof n_out);
  return 0;
}}
"#
    )
}

fn slot() -> Slot {
    Slot::all_available()
}

/// Short timeouts: these programs take milliseconds (2 s leaves room for a
/// loaded CI machine).
fn fast_config() -> MeasureConfig {
    MeasureConfig {
        timeout: TimeoutPolicy { factor: 0.0, offset_s: 2.0, min_s: 2.0, unscaled_s: 5.0 },
        remeasure_runs: 0,
        ..MeasureConfig::default()
    }
}

fn reference() -> Vec<DumpedArray> {
    let bin = build(&program("", "", ""));
    let m = measure(&bin, &slot(), &fast_config(), None);
    assert_eq!(m.measurement.status, Status::Ok, "{}", m.measurement.reason);
    m.dump.expect("the reference dumps")
}

#[test]
fn correct_program_is_ok_with_five_samples() {
    let bin = build(&program("", "", ""));
    let measured = measure(&bin, &slot(), &fast_config(), None);
    let m = &measured.measurement;
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert_eq!(m.samples.len(), 5);
    assert_eq!(m.warmup_samples.len(), 1);
    assert_eq!(m.wall_s.len(), 5);
    assert!(m.samples.iter().all(|&t| (0.0..1.0).contains(&t)));
    assert!(m.median_s.is_some() && m.spread.is_some());
    let dump = measured.dump.as_ref().unwrap();
    assert_eq!(dump.len(), 2);
    assert_eq!(dump[0].name, "A");
    assert_eq!(dump[0].elem_type, "double");
    assert_eq!(dump[0].data.len(), 800);
    assert_eq!(f64::from_le_bytes(dump[0].data[8..16].try_into().unwrap()), 1.5);

    let again = measure_against(dump, &bin, &slot(), &fast_config(), m.wall_max_s());
    assert_eq!(again.status, Status::Ok, "{}", again.reason);
    // Plain serde data.
    let json = serde_json::to_string(&again).unwrap();
    assert!(json.contains("\"status\":\"ok\""), "{json}");
    let back: executor::measure::Measurement = serde_json::from_str(&json).unwrap();
    assert_eq!((back.status, back.samples.len(), back.threads), (again.status, 5, again.threads));
}

#[test]
fn different_value_is_wrong_naming_array_and_index() {
    let reference = reference();
    let bin = build(&program("", "A[42] += 1e-3;", ""));
    let m = measure_against(&reference, &bin, &slot(), &fast_config(), Some(0.01));
    assert_eq!(m.status, Status::Wrong, "{}", m.reason);
    eprintln!("wrong: {}", m.reason);
    assert!(m.reason.contains("`A`[42]"), "{}", m.reason);
    assert!(m.reason.contains("2.2e1"), "expected value shown: {}", m.reason);
    assert_eq!(m.samples.len(), 1, "a wrong variant is not timed further");

    // Integer outputs are exact, and dumping an extra array is a mismatch too.
    let bin = build(&program("", "", "n_out[1] = 1;"));
    let m = measure_against(&reference, &bin, &slot(), &fast_config(), Some(0.01));
    assert_eq!(m.status, Status::Wrong);
    assert!(m.reason.contains("`n_out`[1]"), "{}", m.reason);
    let bin =
        build(&program("", "", "{ static float B[3]; polytune_rt_dump(\"B\", \"float\", B, sizeof B); }"));
    let m = measure_against(&reference, &bin, &slot(), &fast_config(), Some(0.01));
    assert_eq!(m.status, Status::Wrong);
    assert!(m.reason.contains("`B`") && m.reason.contains("reference did not dump"), "{}", m.reason);
}

#[test]
fn infinite_loop_times_out_and_its_children_die() {
    let scratch = testkit::TempDir::new("measure-pid");
    let pid_file = scratch.join("pid");
    // The region forks: the grandchild must die with the process group.
    let region = r#"{ pid_t c = fork();
      if (c == 0) { FILE *f = fopen(getenv("PIDFILE"), "w"); fprintf(f, "%d\n", (int)getpid()); fclose(f); }
      volatile int spin = 1; while (spin) {} }"#;
    let bin = build(&program("", region, ""));
    let mut config = fast_config();
    config.timeout = TimeoutPolicy { factor: 10.0, offset_s: 0.5, min_s: 0.5, unscaled_s: 5.0 };
    config.env.push(("PIDFILE".into(), pid_file.display().to_string()));
    let start = Instant::now();
    let m = measure(&bin, &slot(), &config, Some(0.0)).measurement;
    let took = start.elapsed();
    assert_eq!(m.status, Status::Timeout, "{}", m.reason);
    eprintln!("timeout: {}", m.reason);
    assert!(m.reason.contains("warm-up run 1"), "{}", m.reason);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(m.timeout_s, 0.5);

    // The grandchild is gone (or a zombie waiting for init).
    std::thread::sleep(Duration::from_millis(200));
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.split(") ").nth(1).unwrap_or("").starts_with('Z'))
        .unwrap_or(false);
    assert!(!alive, "grandchild {pid} survived the timeout");

    // The caller goes on measuring.
    let ok = measure(&build(&program("", "", "")), &slot(), &fast_config(), None);
    assert_eq!(ok.measurement.status, Status::Ok);
}

#[test]
fn segfault_is_a_crash() {
    let bin = build(&program("", "*(volatile int *)0 = 1;", ""));
    let m = measure_against(&reference(), &bin, &slot(), &fast_config(), Some(0.01));
    assert_eq!(m.status, Status::Crash, "{}", m.reason);
    eprintln!("crash: {}", m.reason);
    assert!(m.reason.contains("SIGSEGV"), "{}", m.reason);
}

#[test]
fn exit_code_and_stderr_tail_are_the_reason() {
    let bin = build(&program("", "fprintf(stderr, \"boom at the end\\n\"); exit(3);", ""));
    let m = measure(&bin, &slot(), &fast_config(), Some(0.01)).measurement;
    assert_eq!(m.status, Status::Crash);
    assert!(m.reason.contains("exit code 3") && m.reason.contains("boom at the end"), "{}", m.reason);

    // Exiting normally without reaching the end of the region is not a success.
    let bin = build(&program("", "exit(0);", ""));
    let m = measure(&bin, &slot(), &fast_config(), Some(0.01)).measurement;
    assert_eq!(m.status, Status::Crash);
    assert!(m.reason.contains("no region time"), "{}", m.reason);
}

#[test]
fn compile_error_outcome_is_a_compile_error_measurement() {
    let out = builder().build("int main(void) { oops }");
    let m = measure_outcome(&[], &out, &slot(), &fast_config(), None);
    assert_eq!(m.status, Status::CompileError);
    assert!(m.reason.contains("oops"), "{}", m.reason);
    assert_eq!(serde_json::to_value(m.status).unwrap(), "compile-error");
}

#[test]
fn child_is_pinned_limited_and_told_its_thread_count() {
    // n_out = { CPUs in the affinity mask, OMP_NUM_THREADS }; malloc of 1 GiB must fail.
    let after = r#"{ cpu_set_t s; sched_getaffinity(0, sizeof s, &s); n_out[0] = CPU_COUNT(&s);
      n_out[1] = getenv("OMP_NUM_THREADS") ? atoi(getenv("OMP_NUM_THREADS")) : -1;
      if (malloc(1ul << 30) != NULL) { fprintf(stderr, "no address-space limit\n"); exit(4); } }"#;
    let bin = build(&program("", "", after));
    let core = *slot().cores.last().unwrap();
    let one = Slot { name: "one".into(), cores: vec![core] };
    let config = MeasureConfig { address_space_bytes: Some(256 << 20), threads: Some(3), ..fast_config() };
    let measured = measure(&bin, &one, &config, None);
    assert_eq!(measured.measurement.status, Status::Ok, "{}", measured.measurement.reason);
    assert_eq!(measured.measurement.cores, vec![core]);
    let dump = measured.dump.unwrap();
    let n: Vec<i32> = dump[1].data.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(n, vec![1, 3]);
}

#[test]
fn fewer_threads_than_cores_run_on_the_slots_first_cores() {
    let after =
        r#"{ cpu_set_t s; sched_getaffinity(0, sizeof s, &s); n_out[0] = CPU_COUNT(&s); n_out[1] = 0; }"#;
    let bin = build(&program("", "", after));
    let all = slot();
    let config = MeasureConfig { threads: Some(1), ..fast_config() };
    let measured = measure(&bin, &all, &config, None);
    assert_eq!(measured.measurement.status, Status::Ok, "{}", measured.measurement.reason);
    assert_eq!(measured.measurement.cores, all.cores[..1]);
    let dump = measured.dump.unwrap();
    assert_eq!(i32::from_le_bytes(dump[1].data[..4].try_into().unwrap()), 1);
}

#[test]
fn high_spread_is_remeasured_once() {
    // Alternate 1 ms / 8 ms regions through a counter file: spread far above 10%.
    let scratch = testkit::TempDir::new("measure-counter");
    let counter = scratch.join("counter");
    let region = r#"{ int k = 0; FILE *f = fopen(getenv("COUNTER"), "r"); if (f) { if (fscanf(f, "%d", &k) != 1) k = 0; fclose(f); }
      f = fopen(getenv("COUNTER"), "w"); fprintf(f, "%d\n", k + 1); fclose(f);
      struct timespec ts = { 0, (k % 2 ? 8 : 1) * 1000000L }; nanosleep(&ts, NULL); }"#;
    let bin = build(&program("", region, ""));
    let mut config = MeasureConfig { remeasure_runs: 3, ..fast_config() };
    config.env.push(("COUNTER".into(), counter.display().to_string()));
    let m = measure(&bin, &slot(), &config, None).measurement;
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert!(m.remeasured);
    assert_eq!(m.samples.len(), 8);
    assert!(m.spread.unwrap() > 0.5);
    // Not a contender (its median far above the bound): no more runs.
    let config = MeasureConfig { remeasure_below_s: Some(1e-4), ..config };
    let m = measure(&bin, &slot(), &config, None).measurement;
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert!(!m.remeasured && m.spread.unwrap() > 0.5, "{}", m.reason);
    assert_eq!(m.samples.len(), 5);
}

#[test]
fn racing_stops_a_slow_variant_after_one_verified_run() {
    let reference = reference();
    let slow = build(&program("", "{ struct timespec ts = { 0, 20000000L }; nanosleep(&ts, NULL); }", ""));
    let race = |above: f64| MeasureConfig { race_above_s: Some(above), ..fast_config() };
    // 20 ms against a 5 ms threshold: one warm-up, one timed run.
    let m = measure_against(&reference, &slow, &slot(), &race(0.005), None);
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert!(m.raced, "{}", m.reason);
    assert_eq!((m.warmup_samples.len(), m.samples.len()), (1, 1));
    assert_eq!(m.spread, None, "one sample has no spread");
    assert!(m.reason.contains("racing"), "{}", m.reason);
    // Under the threshold: the whole protocol.
    let m = measure_against(&reference, &slow, &slot(), &race(10.0), None);
    assert!(!m.raced);
    assert_eq!(m.samples.len(), MeasureConfig::default().runs);
    // The one run is verified all the same.
    let wrong = build(&program(
        "",
        "{ struct timespec ts = { 0, 20000000L }; nanosleep(&ts, NULL); A[3] = -1; }",
        "",
    ));
    let m = measure_against(&reference, &wrong, &slot(), &race(0.005), None);
    assert_eq!(m.status, Status::Wrong, "{}", m.reason);
}

/// A replay driver as `codegen::replay_program` writes one: the runs the
/// runtime asks for in one process, each ended by `polytune_rt_run_end`;
/// each process appends the runs asked of it (`POLYTUNE_RUNS`) to the file
/// `$PROCESSES`. `setup_ms` is its set-up's time (loading a capture),
/// `sleep_ms` the region's, `made` caps the runs it makes (a broken driver).
fn driver(setup_ms: u32, sleep_ms: u32, made: &str) -> String {
    dumping(setup_ms, sleep_ms, made, 100)
}

/// [`driver`] with an output of `elements` doubles, dumped after its first run.
fn dumping(setup_ms: u32, sleep_ms: u32, made: &str, elements: usize) -> String {
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double A[{elements}];
int main(void)
{{
  void polytune_rt_start(void);
  void polytune_rt_stop(void);
  void polytune_rt_dump(const char *, const char *, const void *, unsigned long);
  int polytune_rt_run_end(void);
  long r, i;
  struct timespec setup = {{ 0, {setup_ms} * 1000000L }};
  FILE *f = fopen(getenv("PROCESSES"), "a");
  fprintf(f, "%s\n", getenv("POLYTUNE_RUNS"));
  fclose(f);
  nanosleep(&setup, NULL);
  for (r = 0; r < {made}; r++) {{
    struct timespec ts = {{ 0, {sleep_ms} * 1000000L }};
    for (i = 0; i < 100; i++) A[i] = i;
    polytune_rt_start();
    for (i = 0; i < 100; i++) A[i] = A[i] * 0.5 + 1.0;
    nanosleep(&ts, NULL);
    polytune_rt_stop();
    if (r == 0)
      polytune_rt_dump("A", "double", A, sizeof A);
    if (!polytune_rt_run_end())
      break;
  }}
  return 0;
}}
"#
    )
}

#[test]
fn a_replay_driver_makes_its_warm_ups_and_timed_runs_in_one_process() {
    let scratch = testkit::TempDir::new("measure-processes");
    let processes = scratch.join("processes");
    let counted = |config: &MeasureConfig, bin: &PathBuf| {
        let _ = std::fs::remove_file(&processes);
        let m = measure(bin, &slot(), config, None);
        let asked: Vec<usize> = std::fs::read_to_string(&processes)
            .unwrap_or_default()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        (m, asked)
    };
    let mut config = MeasureConfig { replayed: true, fill_share: None, ..fast_config() };
    config.env.push(("PROCESSES".into(), processes.display().to_string()));
    let bin = build(&driver(0, 2, "1000"));
    let (m, asked) = counted(&config, &bin);
    let m = &m.measurement;
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert_eq!(asked, vec![6], "one process, asked for the warm-up and the five timed runs");
    assert_eq!((m.warmup_samples.len(), m.samples.len(), m.wall_s.len()), (1, 5, 5));
    assert!(m.samples.iter().all(|&t| t >= 0.002), "{:?}", m.samples);
    // The process's wall time shared among its runs: the scale for timeouts.
    assert!(m.wall_max_s().unwrap() < 6.0 * m.samples[0] + 1.0);

    // Its dump, the first run's, is verified like any.
    let good = measure(&bin, &slot(), &config, None).dump.unwrap();
    let wrong = build(&driver(0, 2, "1000").replace("* 0.5 + 1.0", "* 0.5 + 2.0"));
    assert_eq!(measure_against(&good, &wrong, &slot(), &config, None).status, Status::Wrong);

    // Racing in the driver: two runs over the threshold, and no more.
    let raced = MeasureConfig { race_above_s: Some(0.001), ..config.clone() };
    let (m, asked) = counted(&raced, &bin);
    let m = &m.measurement;
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    assert!(m.raced, "{}", m.reason);
    assert_eq!((asked.len(), m.warmup_samples.len(), m.samples.len()), (1, 1, 1));

    // The re-measurement of a high spread is one more process.
    let spread = MeasureConfig { remeasure_runs: 3, spread_threshold: -1.0, ..config.clone() };
    let (m, asked) = counted(&spread, &bin);
    assert!(m.measurement.remeasured, "{}", m.measurement.reason);
    assert_eq!((asked, m.measurement.samples.len()), (vec![6, 3], 8));

    // A driver that makes fewer runs than asked is broken.
    let (m, _) = counted(&config, &build(&driver(0, 1, "2")));
    assert_eq!(m.measurement.status, Status::Crash);
    assert!(m.measurement.reason.contains("made 2 of the 6 runs"), "{}", m.measurement.reason);

    // A short region beside a long set-up: more runs than asked, until the
    // regions take most of the process's time, and no more than the cap.
    let filled = MeasureConfig { fill_share: Some(0.85), ..config.clone() };
    let (m, asked) = counted(&filled, &build(&driver(60, 2, "1000")));
    let m = &m.measurement;
    assert_eq!((m.status, asked.len()), (Status::Ok, 1), "{}", m.reason);
    assert!(m.samples.len() > 5, "{:?}", m.samples);
    let wall: f64 = m.wall_s.iter().sum::<f64>() * (m.samples.len() + 1) as f64 / m.samples.len() as f64;
    assert!(m.timed_s() > 0.6 * wall, "{} s of {} s inside the timer", m.timed_s(), wall);
    assert!(m.samples.len() < 6 * FILL_RUNS, "{}", m.samples.len());
    // Racing it would save little of the process's time: it is not raced.
    let raced = MeasureConfig { race_above_s: Some(0.001), ..filled.clone() };
    let (m, _) = counted(&raced, &build(&driver(60, 2, "1000")));
    assert!(!m.measurement.raced && m.measurement.samples.len() > 5, "{:?}", m.measurement.samples);
    let (m, _) = counted(&filled, &build(&driver(200, 2, "1000")));
    assert_eq!(m.measurement.samples.len() + 1, 6 * FILL_RUNS, "capped");
    // A region that is not short makes the runs asked.
    let (m, _) = counted(&filled, &build(&driver(0, 10, "1000")));
    assert_eq!(m.measurement.samples.len(), 5);
    // Unless its outputs take long to dump (and to read and compare after):
    // 48 MB, tens of milliseconds, against regions of two.
    let (m, _) = counted(&filled, &build(&dumping(0, 2, "1000", 6 << 20)));
    assert!(m.measurement.samples.len() > 5, "{:?}", m.measurement.samples);
}

// ---------------------------------------------------------------------------
// compare() and the dump format

fn doubles(name: &str, v: &[f64]) -> DumpedArray {
    DumpedArray {
        name: name.into(),
        elem_type: "double".into(),
        data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

#[test]
fn compare_bitwise() {
    let a = [doubles("A", &[1.0, 2.0, 0.0])];
    assert_eq!(compare(&a, &a, Tolerance::BITWISE), Verdict::Match);
    let b = [doubles("A", &[1.0, 2.0 + 1e-15, 0.0])];
    let v = compare(&a, &b, Tolerance::BITWISE);
    let Verdict::Mismatch { array, index, .. } = &v else { panic!() };
    assert_eq!((array.as_str(), *index), ("A", Some(1)));
    assert!(v.to_string().contains("`A`[1]"), "{v}");
    // -0.0 and 0.0 differ bitwise but not under a tolerance.
    let c = [doubles("A", &[1.0, 2.0, -0.0])];
    assert!(!compare(&a, &c, Tolerance::BITWISE).is_match());
    assert!(compare(&a, &c, Tolerance::default()).is_match());
}

#[test]
fn compare_within_tolerance() {
    let a = [doubles("A", &[1.0, 1e300, -5.0])];
    let close = [doubles("A", &[1.0 + 1e-12, 1e300 * (1.0 + 1e-12), -5.0])];
    assert_eq!(compare(&a, &close, Tolerance::default()), Verdict::Match);
    let far = [doubles("A", &[1.0, 1e300, -5.0 * (1.0 + 1e-6)])];
    let v = compare(&a, &far, Tolerance::default());
    let Verdict::Mismatch { index, reason, .. } = &v else { panic!() };
    assert_eq!(*index, Some(2));
    assert!(reason.contains("relative error") && reason.contains("1 of 3"), "{reason}");
    assert!(compare(&a, &far, Tolerance { relative: 1e-5 }).is_match());
    // Floats are compared as floats.
    let f =
        |v: f32| DumpedArray { name: "F".into(), elem_type: "float".into(), data: v.to_le_bytes().to_vec() };
    assert!(compare(&[f(1.0)], &[f(1.0 + f32::EPSILON)], Tolerance { relative: 1e-6 }).is_match());
    assert!(!compare(&[f(1.0)], &[f(1.001)], Tolerance { relative: 1e-6 }).is_match());
}

#[test]
fn compare_nan() {
    let a = [doubles("A", &[f64::NAN, 1.0])];
    assert!(compare(&a, &a, Tolerance::default()).is_match());
    let other_nan = [doubles("A", &[-f64::NAN, 1.0])];
    assert!(compare(&a, &other_nan, Tolerance::default()).is_match());
    let b = [doubles("A", &[0.0, 1.0])];
    let v = compare(&a, &b, Tolerance::default());
    assert!(matches!(v, Verdict::Mismatch { index: Some(0), .. }), "{v}");
    assert!(!compare(&[doubles("A", &[f64::INFINITY])], &[doubles("A", &[f64::MAX])], Tolerance::default())
        .is_match());
}

#[test]
fn compare_sizes_types_and_sets() {
    let a = [doubles("A", &[1.0, 2.0])];
    let v = compare(&a, &[doubles("A", &[1.0])], Tolerance::default());
    let Verdict::Mismatch { index: None, reason, .. } = &v else { panic!("{v:?}") };
    assert!(reason.contains("sizes differ"));
    assert!(matches!(compare(&a, &[], Tolerance::default()), Verdict::Mismatch { .. }));
    let v = compare(&a, &[doubles("A", &[1.0, 2.0]), doubles("B", &[0.0])], Tolerance::default());
    assert!(matches!(&v, Verdict::Mismatch { array, .. } if array == "B"), "{v:?}");
    let mut f = a[0].clone();
    f.elem_type = "float".into();
    assert!(matches!(compare(&a, &[f], Tolerance::default()), Verdict::Mismatch { .. }));
    // Order of different arrays does not matter; occurrences of one name do.
    let ab = [doubles("A", &[1.0]), doubles("B", &[2.0])];
    let ba = [doubles("B", &[2.0]), doubles("A", &[1.0])];
    assert!(compare(&ab, &ba, Tolerance::BITWISE).is_match());
}

#[test]
fn dump_format_round_trip_and_errors() {
    let mut bytes = Vec::new();
    for (name, ty, data) in [("A", "double", vec![1u8; 16]), ("empty", "int", vec![])] {
        bytes.extend_from_slice(b"PTD1");
        bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(&(ty.len() as u32).to_le_bytes());
        bytes.extend_from_slice(ty.as_bytes());
        bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&data);
    }
    let parsed = parse_dump(&bytes).unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(
        (parsed[1].name.as_str(), parsed[1].elem_type.as_str(), parsed[1].data.len()),
        ("empty", "int", 0)
    );
    assert_eq!(parse_dump(&[]).unwrap(), vec![]);
    assert!(parse_dump(&bytes[..bytes.len() - 3]).is_err());
    assert!(parse_dump(b"XXXX").is_err());
    // From a file as from memory; none there is nothing dumped.
    let dir = testkit::TempDir::new("dump-format");
    let file = dir.path().join("dump");
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(read_dump(&file).unwrap(), parsed);
    assert_eq!(read_dump(&dir.path().join("none")).unwrap(), vec![]);
    // A byte count past the end is refused, not allocated.
    let mut huge = bytes[..4 + 4 + 1 + 4 + 6].to_vec();
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&file, &huge).unwrap();
    let err = read_dump(&file).unwrap_err().to_string();
    assert!(err.contains("truncated") && err.contains("the data"), "{err}");
}

/// A point's run settings (`CodeOptions::run_env`) reach the measured
/// program's environment: a program whose output depends on the OpenMP
/// wait policy matches the reference only when none is set.
#[test]
fn a_points_run_settings_reach_the_programs_environment() {
    let reference = reference();
    let region = r#"{ const char *w = getenv("OMP_WAIT_POLICY"); n_out[0] = w ? (int) strlen(w) : 0; }"#;
    let bin = build(&program("", region, ""));
    let wall = Some(1.0);
    let code = |setting: &str| vocab::knobs::CodeOptions::default().with_settings(&[setting]).unwrap();
    let config = |setting: &str| MeasureConfig { env: code(setting).run_env(), ..fast_config() };
    let m = measure_against(&reference, &bin, &slot(), &config("omp_wait=default"), wall);
    assert_eq!(m.status, Status::Ok, "{}", m.reason);
    for policy in ["passive", "active"] {
        let m = measure_against(&reference, &bin, &slot(), &config(&format!("omp_wait={policy}")), wall);
        assert_eq!(m.status, Status::Wrong, "{policy}: {}", m.reason);
        assert!(m.reason.contains("n_out"), "{policy}: {}", m.reason);
    }
}
