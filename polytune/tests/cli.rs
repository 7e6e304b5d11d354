//! The `polytune` binary as a user runs it.

use std::process::Command;

mod common;
use common::{root, run as polytune, LIMIT};

/// `polytune run ARGS --json` with its output and build cache in a fresh
/// directory named after `tag`: the report, after checking the exit status.
fn run_json(tag: &str, args: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("polytune-cli-{tag}-{}", std::process::id()));
    let out = common::output(
        common::polytune()
            .arg("run")
            .args(args)
            .args(["--json", "--out"])
            .arg(dir.join("out"))
            .env("XDG_CACHE_HOME", dir.join("cache")),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The generated variant a `run` report points to.
fn variant_source(report: &serde_json::Value) -> String {
    std::fs::read_to_string(report["source"].as_str().unwrap()).unwrap()
}

#[test]
fn scop_json_is_valid_for_every_kernel() {
    let mut n = 0;
    for group in ["datamining", "linear-algebra", "medley", "stencils"] {
        for e in std::fs::read_dir(root().join("polybench").join(group)).unwrap() {
            let path = e.unwrap().path();
            let out = polytune(&["scop", path.to_str().unwrap(), "--json"]);
            assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let scop = &v[0]["scop"];
            assert!(scop["statements"].as_array().is_some_and(|s| !s.is_empty()), "{}", path.display());
            assert!(v[0]["dependences"]["deps"].is_array());
            n += 1;
        }
    }
    assert_eq!(n, 30);
}

#[test]
fn official_layout_with_cc_args() {
    let fixtures = root().join("space/tests/fixtures/official");
    let inc = format!("-I{}", fixtures.display());
    let file = fixtures.join("jacobi-2d.c");
    let out = polytune(&["scop", file.to_str().unwrap(), "--cc-arg", &inc, "--cc-arg=-DSMALL_DATASET"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("parameters: tsteps, n"), "{text}");
    assert!(text.contains("flow"), "{text}");
}

#[test]
fn bad_input_exits_non_zero_with_file_line_and_reason() {
    let dir = testkit::TempDir::new("cli");
    let f = dir.join("bad.c");
    std::fs::write(&f, "void k(int n, double A[n]) {\n  int i = 0;\n#pragma scop\n  while (i < n) A[i++] = 0;\n#pragma endscop\n}\n").unwrap();
    let out = polytune(&["scop", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.c:4:3:") && err.contains("while"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Scripts tell the outcomes apart by exit status: 2 for a command line
/// clap refuses (`--threads 0`, `--runs 0` on every command that takes
/// them), 1 for an error (a directory as FILE), 3 for no result.
#[test]
fn usage_errors_errors_and_no_result_have_their_own_exit_status() {
    let kernel = "polybench/linear-algebra/atax.c";
    let zero: &[&[&str]] = &[
        &["run", kernel, "--threads", "0"],
        &["run", kernel, "--runs", "0"],
        &["tune", kernel, "--threads", "0"],
        &["tune", kernel, "--runs", "0"],
        &["bench", "peers", kernel, "--threads", "0"],
        &["bench", "peers", kernel, "--runs", "0"],
        &["bench", "search", kernel, "--runs", "0"],
        &["bench", "ratios", kernel, "--runs", "0"],
    ];
    for args in zero {
        let out = polytune(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("invalid value '0'") && err.contains("must be at least 1"), "{args:?}: {err}");
    }
    for cmd in ["scop", "schedule", "run", "tune"] {
        let out = polytune(&[cmd, "polybench"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("polybench: is a directory; name a C file"), "{cmd}: {err}");
    }
    // No result: a kernel the store has not measured.
    let dir = testkit::TempDir::new("cli-exit");
    let db = dir.join("store.db");
    store::Store::open(db.to_str().unwrap()).unwrap();
    let out = polytune(&["best", "gemm", "--db", db.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("no correct measurement of kernel `gemm`"), "{err}");
}

/// `scop` on 2,000 references in one statement, 10,000-deep parentheses
/// and blocks: each modelled (never an abort of the walks' recursion);
/// 60,000-deep parentheses are refused at their depth; `--timeout` bounds
/// it. (The frontend's tests read a 20,000-term sum.)
#[test]
fn scop_reads_long_and_deep_statements_without_aborting() {
    let dir = testkit::TempDir::new("cli-deep");
    let write = |name: &str, statement: String| {
        let path = dir.join(name);
        let code = format!(
            "double a[20000], s;\nvoid k(void) {{\n#pragma scop\n  {statement}\n#pragma endscop\n}}\n"
        );
        std::fs::write(&path, code).unwrap();
        path.to_str().unwrap().to_string()
    };
    let sum = |n: usize| (0..n).map(|k| format!("a[{k}]")).collect::<Vec<_>>().join(" + ");
    let parens = |n: usize| format!("s = {}a[0]{};", "(".repeat(n), ")".repeat(n));
    let cases = [
        (write("sum2000.c", format!("s = {};", sum(2000))), 2001),
        (write("parens.c", parens(10_000)), 2),
        (write("blocks.c", format!("{}s = a[0];{}", "{".repeat(10_000), "}".repeat(10_000))), 2),
    ];
    for (file, refs) in &cases {
        let out = polytune(&["scop", file, "--json"]);
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v[0]["scop"]["statements"][0]["accesses"].as_array().map(Vec::len), Some(*refs), "{file}");
    }
    let deeper = write("deeper.c", parens(60_000));
    let out = polytune(&["scop", &deeper]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("deeper.c:4:") && err.contains("nesting deeper than 50000 levels"), "{err}");
    let out = polytune(&["scop", &cases[0].0, "--timeout", "0.01"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no result after 0.01 s (--timeout)"), "{err}");
}

#[test]
fn run_builds_times_and_verifies_a_variant() {
    let v = run_json(
        "run",
        &[
            "polybench/linear-algebra/gemm.c",
            "--schedule",
            "isl",
            "--dataset",
            "MINI",
            "--threads",
            "2",
            "--runs",
            "2",
        ],
    );
    assert_eq!(v["status"], "ok", "{v}");
    assert!(v["median_s"].as_f64().is_some_and(|t| t > 0.0));
    assert!(v["samples"].as_array().is_some_and(|s| s.len() >= 2));
    assert!(variant_source(&v).contains("#pragma omp parallel for"), "{v}");
}

#[test]
fn run_with_an_unreadable_schedule_is_a_clear_error() {
    let out = polytune(&[
        "run",
        "polybench/linear-algebra/gemm.c",
        "--dataset",
        "MINI",
        "--schedule",
        "/no/such.sched",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/no/such.sched") && err.contains("cannot read the schedule"), "{err}");
}

#[test]
fn schedule_with_a_target_and_knobs_uses_the_unified_scheduler() {
    let out =
        polytune(&["schedule", "polybench/linear-algebra/gemm.c", "--target", "gpu", "--set", "hlim=off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unified scheduler: target=gpu"), "{text}");
    assert!(text.contains("GPU mapping") && text.contains("-> x"), "{text}");
    assert!(text.contains("legal: yes"), "{text}");
}

#[test]
fn an_unknown_knob_or_value_is_an_error_listing_the_valid_ones() {
    let out = polytune(&["schedule", "polybench/linear-algebra/gemm.c", "--set", "spatial=sideways"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("off|per-reference|grouped"), "{err}");
    let out = polytune(&[
        "run",
        "polybench/linear-algebra/gemm.c",
        "--dataset",
        "MINI",
        "--schedule",
        "unified",
        "--set",
        "tilesize=3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown knob `tilesize`") && err.contains("posttile_reorder"), "{err}");
}

#[test]
fn run_unified_with_knobs_verifies_against_the_original() {
    let v = run_json(
        "unified",
        &[
            "polybench/linear-algebra/2mm.c",
            "--schedule",
            "unified",
            "--dataset",
            "MINI",
            "--set",
            "wavefront=single",
            "--set",
            "consecutivity=intra-tile",
            "--threads",
            "2",
            "--runs",
            "1",
        ],
    );
    assert_eq!(v["status"], "ok", "{v}");
}

#[test]
fn run_with_one_thread_generates_no_openmp() {
    let v = run_json(
        "seq",
        &[
            "polybench/linear-algebra/gemm.c",
            "--schedule",
            "unified",
            "--dataset",
            "MINI",
            "--threads",
            "1",
            "--runs",
            "1",
        ],
    );
    assert_eq!(v["status"], "ok", "{v}");
    assert!(!variant_source(&v).contains("#pragma omp"), "{v}");
}

#[test]
fn schedule_and_run_give_up_after_their_timeout_with_a_clear_error() {
    // adi's unified schedule takes seconds; a tenth of a second is too little.
    for cmd in ["schedule", "run"] {
        let extra: &[&str] = if cmd == "run" {
            &["--schedule", "unified", "--dataset", "MINI"]
        } else {
            &["--target", "openmp"]
        };
        let mut args = vec![cmd, "polybench/stencils/adi.c", "--timeout", "0.1"];
        args.extend(extra);
        let out = polytune(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("polybench/stencils/adi.c") && err.contains("no result after 0.1 s (--timeout)"),
            "{cmd}: {err}"
        );
    }
    let out = polytune(&["schedule", "polybench/stencils/adi.c", "--timeout", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a positive number of seconds"));
}

/// The official layout is two translation units: the kernel and the
/// utilities' polybench.c. `run` builds it from the `polytune.toml` next to
/// the kernel, or from `--source`/`--cc-arg`; without the second unit the
/// original program does not link, and the error says why.
#[test]
fn official_layout_runs_with_its_second_translation_unit() {
    let fixtures = root().join("space/tests/fixtures/official");
    let gemm = fixtures.join("gemm.c");
    let gemm = gemm.to_str().unwrap();
    // From polytune.toml.
    let r = run_json("layout-toml", &[gemm, "--schedule", "unified", "--dataset", "MINI"]);
    assert_eq!(r["status"], "ok", "{r}");
    // From the options, with the file's own description replaced by an empty one.
    let source = fixtures.join("polybench.c");
    let inc = format!("-I{}", fixtures.display());
    let args = [gemm, "--config", "/dev/null", "--source", source.to_str().unwrap(), "--cc-arg", &inc];
    let r = run_json("layout-args", &[&args[..], &["--schedule", "isl", "--dataset", "MINI"]].concat());
    assert_eq!(r["status"], "ok", "{r}");
    // Without the second unit.
    let out = polytune(&["run", gemm, "--config", "/dev/null", "--cc-arg", &inc, "--dataset", "MINI"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("undefined reference to `polybench_alloc_data'"), "{err}");
    // A bad description names its file.
    let scratch = testkit::TempDir::new("cli-bad-config");
    let bad = scratch.join("bad.toml");
    std::fs::write(&bad, "sauces = [\"polybench.c\"]\n").unwrap();
    let out = polytune(&["run", gemm, "--config", bad.to_str().unwrap(), "--dataset", "MINI"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(bad.to_str().unwrap()) && err.contains("sauces"), "{err}");
}

/// Issue 18 without a GPU: `run --set target=gpu` measures the emulation,
/// writes the CUDA unit beside the sources and says what nvcc made of it
/// (compiled where nvcc is found, as CI installs it); `tune` refuses GPU
/// variants unless told to emulate them.
#[test]
fn a_gpu_variant_is_emulated_and_its_cuda_unit_written_and_tune_refuses_without_emulate() {
    let v = run_json(
        "gpu",
        &[
            "polybench/stencils/jacobi-2d.c",
            "--schedule",
            "unified",
            "--set",
            "target=gpu",
            "--dataset",
            "MINI",
        ],
    );
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["emulated"], true, "{v}");
    let unit = std::fs::read_to_string(v["cuda"].as_str().unwrap()).unwrap();
    assert!(unit.contains("__global__ void __launch_bounds__(") && unit.contains("<<<"), "{unit}");
    let nvcc = v["nvcc"].as_str().unwrap();
    match executor::cuda::nvcc() {
        Some(_) => assert!(nvcc.starts_with("compiled for sm_80"), "{nvcc}"),
        None => assert!(nvcc.starts_with("not found"), "{nvcc}"),
    }
    let out = polytune(&["tune", "polybench/stencils/jacobi-2d.c", "--set", "target=gpu", "--evals", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--emulate") && err.contains("no GPU slot"), "{err}");
    // isl's schedule mapped the same way (as ppcg maps it), for comparison.
    let v = run_json(
        "gpu-isl",
        &["polybench/stencils/jacobi-2d.c", "--schedule", "isl", "--set", "target=gpu", "--dataset", "MINI"],
    );
    assert_eq!((&v["status"], &v["emulated"]), (&"ok".into(), &true.into()), "{v}");
}

/// `--references` keeps the reference points it names (here isl's GPU
/// schedule, without the CPU ones) and refuses a name it does not know.
#[test]
fn a_campaign_measures_the_reference_points_it_is_given() {
    let scratch = testkit::TempDir::new("cli-references");
    let db = scratch.join("references.db");
    let mut args = vec!["tune", "polybench/stencils/jacobi-1d.c", "--db", db.to_str().unwrap()];
    args.extend(["--set", "target=gpu", "--emulate", "--dataset", "MINI", "--tiles", "32"]);
    args.extend(["--set", "gpu_block=128", "--set", "gpu_thread_tile=1", "--evals", "3"]);
    let out = polytune(&[&args[..], &["--references", "isl-gpu"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("measuring the original program") && err.contains("] isl-gpu tiles=32: ok"),
        "{err}"
    );
    for other in ["] original untiled", "] isl tiles=32", "] unified spatial=off tiles=32"] {
        assert!(!err.contains(other), "{other}: {err}");
    }
    let out = polytune(&[&args[..], &["--references", "isl,pluto"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown reference point `pluto`"), "{err}");
}

/// A profile with a GPU slot runs the CUDA form there: on a machine with
/// an NVIDIA GPU it must run and match; on one without, `run` stops
/// before measuring anything, naming the slot and why.
#[test]
fn a_gpu_slot_runs_the_cuda_form_or_refuses_naming_the_slot() {
    let Some(nvcc) = executor::cuda::nvcc() else { return };
    let dir = testkit::TempDir::new("cli-gpu-slot");
    let profile = dir.join("gpu.toml");
    std::fs::write(&profile, testkit::gpu_profile(&nvcc)).unwrap();
    let args = [
        "polybench/linear-algebra/gemm.c",
        "--schedule",
        "unified",
        "--set",
        "target=gpu",
        "--dataset",
        "MINI",
        "--machine",
        profile.to_str().unwrap(),
    ];
    if testkit::has_gpu() {
        let v = run_json("gpu-slot", &args);
        assert_eq!((&v["status"], &v["emulated"]), (&"ok".into(), &serde_json::Value::Null), "{v}");
        assert!(v["device"].as_str().is_some() && v["kernel_s"].as_f64().is_some(), "{v}");
    } else {
        let out = polytune(&[&["run"], &args[..], &["--out", dir.join("out").to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("GPU slot `h100` (GPU 0)") && err.contains("nvidia-smi"), "{err}");
    }
}

/// Busy loops that end with the guard, panics included.
struct Busy(Vec<std::process::Child>);

impl Drop for Busy {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Issue 20, a quiet machine: with every core of the slot kept busy by
/// another process, `run` warns and records the load with its measurement
/// (`--on-noise warn`, the default), and `--on-noise fail` stops before
/// measuring anything.
#[test]
fn a_busy_slot_is_warned_about_and_recorded_or_refused() {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(64);
    let _busy = Busy(
        (0..cores).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect(),
    );
    let dir = testkit::TempDir::new("cli-noise");
    let args =
        ["run", "polybench/linear-algebra/atax.c", "--dataset", "MINI", "--runs", "1", "--threads", "1"];
    let out_dir = dir.join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_polytune"));
    cmd.args(args)
        .args(["--json", "--out"])
        .arg(&out_dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .current_dir(root());
    let out = testkit::output_within(&mut cmd, LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: slot `all`: core") && err.contains("busy"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["noise"].as_str().is_some_and(|n| n.contains("% busy")), "{v}");
    let out = polytune(&[&args[..], &["--on-noise", "fail", "--out", out_dir.to_str().unwrap()]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--on-noise fail: slot `all`"), "{err}");
}

/// Issue 20, two cuts: points that differ only in tiles (or threads, or
/// code knobs) share one schedule through the campaign's schedule
/// directory, and points with other schedulers the lexmins they have in
/// common (its `lexmins.log`); `polytune variant` computes a schedule for
/// the first and reads it for the others, and the programs are those it
/// would make without the directory.
#[test]
fn points_with_one_scheduler_share_one_schedule() {
    use vocab::knobs::{Point, Scheduler, UnifiedOptions};
    let dir = testkit::TempDir::new("cli-schedules");
    let point = |tiles: u32| Point {
        scheduler: Scheduler::Unified { preorder: None, options: UnifiedOptions::default() },
        tiles: Some(vec![tiles]),
        threads: 1,
        code: Default::default(),
    };
    let reply = |p: &Point, shared: bool| -> serde_json::Value {
        let mut cmd = common::polytune();
        cmd.args(["variant", "polybench/linear-algebra/gemm.c", "--dataset", "MINI", "--point"])
            .arg(p.canonical_json());
        if shared {
            cmd.env("POLYTUNE_SCHEDULE_DIR", &dir);
        }
        let out = testkit::output_within(&mut cmd, LIMIT);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = reply(&point(32), true);
    let trees = || {
        let names = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
        names.filter(|n| n.ends_with(".yaml")).count()
    };
    let log = || std::fs::read_to_string(dir.join("lexmins.log")).unwrap_or_default().lines().count();
    assert_eq!(trees(), 1, "the first point wrote its schedule");
    let answers = log();
    assert!(answers > 0, "and the answers of its lexmins");
    let second = reply(&point(16), true);
    assert_eq!((trees(), log()), (1, answers), "the second point read them");
    let alone = reply(&point(16), false);
    assert_eq!(first["answer"]["Ok"][0], second["answer"]["Ok"][0], "one schedule tree");
    assert_eq!(second["answer"]["Ok"], alone["answer"]["Ok"], "the same program as without sharing");
    assert!(first["answer"]["Ok"][1] != second["answer"]["Ok"][1], "tiles still differ");
    // Another scheduler: its own tree, from the lexmins it shares with the
    // first and those it solves, and the program it makes alone.
    let mut other = point(16);
    other.scheduler = Scheduler::Unified {
        preorder: None,
        options: UnifiedOptions::default().with_settings(&["hlim=4"]).unwrap(),
    };
    let third = reply(&other, true);
    assert_eq!(trees(), 2);
    assert_eq!(
        third["answer"]["Ok"],
        reply(&other, false)["answer"]["Ok"],
        "the same program as without the log"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The subcommands `--help` lists under `Commands:` (clap's own `help` aside).
fn subcommands(args: &[&str]) -> Vec<String> {
    let out = polytune(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let list = text.split("Commands:\n").nth(1).unwrap_or("");
    list.lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The manual and the binary agree: every subcommand `--help` lists has a
/// section of the guide, and every knob `--set` takes is named there.
#[test]
fn the_guide_has_a_section_for_every_subcommand_and_names_every_knob() {
    let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let mut missing = Vec::new();
    let top = subcommands(&["--help"]);
    assert!(top.len() > 10 && top.contains(&"tune".to_string()), "{top:?}");
    for c in &top {
        if !guide.contains(&format!("### `polytune {c}`")) {
            missing.push(format!("polytune {c}"));
        }
    }
    for c in subcommands(&["bench", "--help"]) {
        if !guide.contains(&format!("### `polytune bench {c}`")) {
            missing.push(format!("polytune bench {c}"));
        }
    }
    // `--set` with an unknown knob lists them all.
    let out = polytune(&["run", "x.c", "--set", "no_such_knob=1"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let knobs =
        err.split("(knobs: ").nth(1).and_then(|k| k.split(')').next()).unwrap_or_else(|| panic!("{err}"));
    for k in knobs.split(", ") {
        if !guide.contains(&format!("`{k}")) {
            missing.push(format!("knob {k}"));
        }
    }
    assert!(missing.is_empty(), "not in docs/guide.md: {missing:?}");
}

/// A run setting replays with `run --set`: gemm's variant on two threads
/// under each OpenMP wait policy, verified.
#[test]
fn a_variant_runs_verified_under_each_wait_policy() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    for policy in ["passive", "active"] {
        let set = format!("omp_wait={policy}");
        let args = [gemm.to_str().unwrap(), "--schedule", "unified", "--dataset", "MINI", "--threads", "2"];
        let report =
            run_json(&format!("wait-{policy}"), &[&args[..], &["--set", &set, "--runs", "2"]].concat());
        assert_eq!(report["status"], "ok", "{policy}: {report}");
    }
}

/// `bench peers` builds each program as its build description says: the
/// official PolyBench layout, whose kernel links `polybench.c` (named in
/// the `polytune.toml` beside it). The original, the installed peers and
/// our points all build, run and verify: every cell of the row is a
/// speedup, the best of a short campaign's too. In the heavy tier: its
/// thirty points take a minute in a debug build.
#[test]
fn bench_peers_builds_with_the_programs_build_description() {
    if testkit::tier() == testkit::Tier::Fast {
        return;
    }
    let file = "space/tests/fixtures/official/jacobi-2d.c";
    let out = polytune(&[
        "bench",
        "peers",
        file,
        "--dataset",
        "MINI",
        "--threads",
        "1",
        "--runs",
        "1",
        "--evals",
        "3",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let row = text.lines().find(|l| l.starts_with("| jacobi-2d |")).unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // kernel, original, the peers, isl, pluto-like, best of ours, the ratio
    // and the winner, then the campaign's best and its ratio.
    let speedups = &cells[3..cells.len() - 5];
    assert!(speedups.len() >= 3 && speedups.iter().all(|c| c.ends_with('×')), "{row}");
    assert!(cells[cells.len() - 3].ends_with('×'), "{row}");
    assert!(text.contains("jacobi-2d: the campaign's best: "), "{text}");
}
