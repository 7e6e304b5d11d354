//! Programs of our own (`space/tests/fixtures/own`), run and tuned as a user
//! would: those in the model run end to end; programs that are not ready to
//! tune are refused with their cause, and nothing reaches the store.

use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(600);

use testkit::own;

/// `polytune ARGS` with its outputs, build cache and store in a fresh directory.
fn polytune(tag: &str, args: &[&str]) -> (Output, testkit::TempDir) {
    let dir = testkit::TempDir::new(&format!("own-{tag}"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_polytune"));
    cmd.args(args).env("XDG_CACHE_HOME", dir.join("cache")).current_dir(&dir);
    (testkit::output_within(&mut cmd, LIMIT), dir)
}

#[test]
fn programs_in_the_model_run_verified_under_the_unified_scheduler() {
    let names = [
        "noparam.c",
        "modulo.c",
        "piecewise.c",
        "chained.c",
        "purefn.c",
        "blockdecl.c",
        "structs.c",
        "structarray.c",
        "negative.c",
        "neverruns.c",
        "localstruct.c",
        "localstructarray.c",
        "implicitint.c",
        "callptr.c",
        "liveout.c",
        "truncdiv.c",
        "gramschmidt-wide.c",
        "linmatmul.c",
        "linjacobi.c",
        "lintrisolv.c",
        "ldmatmul.c",
        "rowsmatmul.c",
        "rowsjacobi.c",
        "rowstrisolv.c",
        "masked.c",
        "maskedrows.c",
        "histogram.c",
        "ellpack.c",
        "scalarsub.c",
    ];
    for name in names {
        let file = own(name);
        let args = ["run", file.to_str().unwrap(), "--schedule", "unified", "--runs", "2", "--json"];
        let (out, _) = polytune(name, &args);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["status"], "ok", "{name}: {report}");
    }
    // On the GPU, emulated and verified, with no CUDA form: struct members
    // (a member's elements are not one array to copy to the device), and
    // calls of the file's functions (the CUDA unit holds only the kernels).
    for name in ["structs.c", "structarray.c", "purefn.c", "callptr.c"] {
        let file = own(name);
        let args =
            ["run", file.to_str().unwrap(), "--schedule", "unified", "--set", "target=gpu", "--runs", "2"];
        let (out, _) = polytune(&format!("gpu-{name}"), &[&args[..], &["--json"]].concat());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["status"], "ok", "{name}: {report}");
        assert!(report["emulated"] == true && report["cuda"].is_null(), "{name}: {report}");
    }
}

/// Leading dimensions shorter than the rows (`lda < n`) break what the
/// model assumed of `ldmatmul.c`: the measured programs stop with the
/// reason, and nothing is measured.
#[test]
fn sizes_that_break_the_models_assumption_stop_the_run_with_the_reason() {
    let file = own("ldmatmul.c");
    let args =
        ["run", file.to_str().unwrap(), "--schedule", "unified", "--dataset", "MINI", "--cc-arg=-DPAD=-3"];
    let (out, _) = polytune("ld-broken", &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("this run's sizes break what the model of the SCoP assumes"), "{err}");
    assert!(err.contains("`i * lda + p` reads as rows of `lda` where 0 <= p < lda"), "{err}");
}

/// PolyBench's own gramschmidt sizes and fill (M < N, rank deficient):
/// much of its output is rounding noise, which the campaign finds in the
/// original by itself and compares within, so that no variant is `wrong`
/// for it (the broken-dependence variant is `executor/tests/rounding.rs`'s).
#[test]
fn a_wide_gram_schmidt_tunes_within_its_rounding_noise() {
    let datasets: &[&str] = match testkit::tier() {
        testkit::Tier::Fast => &["MINI"],
        _ => &["SMALL", "MEDIUM"],
    };
    for dataset in datasets {
        let (err, dir) = tuned_without_a_wrong_variant("gramschmidt-wide.c", dataset);
        assert!(err.contains("rounding noise in the original's outputs"), "{dataset}: {err}");
        let best = Command::new(env!("CARGO_BIN_EXE_polytune"))
            .args(["best", "gramschmidt-wide", "--db", "tune.db"])
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .current_dir(&dir)
            .output()
            .unwrap();
        let best = String::from_utf8_lossy(&best.stdout);
        assert!(best.contains("verified within the original's rounding noise: `nrm`"), "{best}");
    }
}

/// Programs with may-accesses (branches on data, indirect and non-affine
/// subscripts): 10-point campaigns, every variant verified.
#[test]
fn programs_with_may_accesses_tune_without_a_wrong_variant() {
    let names: &[&str] = match testkit::tier() {
        testkit::Tier::Fast => &["histogram.c", "masked.c"],
        _ => &["ellpack.c", "scalarsub.c", "maskedrows.c"],
    };
    for name in names {
        tuned_without_a_wrong_variant(name, "MINI");
    }
}

/// A 10-evaluation campaign on the program `name` of ours at `dataset`, in
/// a fresh directory: it succeeds, and its variants are `ok` (a few may run
/// past their time limit), none `wrong`. Its stderr and directory.
fn tuned_without_a_wrong_variant(name: &str, dataset: &str) -> (String, testkit::TempDir) {
    let file = own(name);
    let tag = format!("tuned-{name}-{dataset}");
    let args = ["tune", file.to_str().unwrap(), "--dataset", dataset, "--evals", "10", "--runs", "2"];
    let (out, dir) = polytune(&tag, &[&args[..], &["--db", "tune.db"]].concat());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} {dataset}: {err}");
    let history = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(["history", "--json", "--limit", "100", "--db", "tune.db"])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let ran: Vec<_> = rows.iter().filter(|r| r["role"] == "variant" && r["status"] != "illegal").collect();
    let ok = ran.iter().filter(|r| r["status"] == "ok").count();
    assert!(ran.len() >= 10 && ok >= 5, "{name} {dataset}: {rows:#?}");
    assert!(
        ran.iter().all(|r| r["status"] == "ok" || r["status"] == "timeout"),
        "{name} {dataset}: {rows:#?}"
    );
    (err, dir)
}

#[test]
fn scop_and_schedule_read_a_fragment_at_file_scope() {
    let file = own("fragment.c");
    let (out, _) = polytune("fragment-scop", &["scop", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("parameters: N"));
    let (out, _) = polytune("fragment-schedule", &["schedule", file.to_str().unwrap(), "--target", "openmp"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("legal: yes"));
}

/// (program, the cause `run` and `tune` name).
const NOT_READY: &[(&str, &str)] = &[
    ("nomain.c", "the program has no `main`"),
    ("nevercalled.c", "the program ended normally without running its SCoP"),
    ("zerorun.c", "the SCoP ran zero times"),
    ("nondet.c", "the original program is not deterministic: two runs gave different outputs"),
    ("argv.c", "argv.c:5:16: the program reads its arguments (`argv[1]`)"),
    ("fileinput.c", "fileinput.c:4:13: the program opens a file to read it"),
    ("fragment.c", "fragment.c:2:1: this SCoP stands at file scope (a fragment)"),
];

#[test]
fn programs_not_ready_to_tune_are_refused_with_their_cause_and_store_nothing() {
    for (name, cause) in NOT_READY {
        let file = own(name);
        let (out, _) = polytune(name, &["run", file.to_str().unwrap(), "--runs", "2"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(cause), "run {name}: {err}");
        let db = format!("{}.db", name);
        let args = ["tune", file.to_str().unwrap(), "--evals", "2", "--db", &db];
        let (out, dir) = polytune(name, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(cause), "tune {name}: {err}");
        // Refused before the store is opened: not even a campaign or program row.
        assert!(!dir.join(&db).exists(), "tune {name} created the store");
    }
}
