//! Campaigns as a user runs them: killed and resumed, repeated with a seed,
//! queried, and refused on bad input without writing anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use store::{Role, Store};
use tuner::campaign::grid;
use vocab::knobs::Point;

mod common;
use common::{output, polytune, root, LIMIT};

fn temp_dir(name: &str) -> testkit::TempDir {
    common::temp_dir(&format!("campaign-{name}"))
}

/// A small exhaustive campaign on atax at MINI: every scheduler knob fixed and
/// one tile size, so the space is atax's 16 fusion preorders times the
/// register tiles (`unroll_jam` 1 and 4), 32 points, plus the reference
/// points. `simd` and `fission` are fixed (each would double the space and
/// adds nothing to what these tests check), and so are the vector width
/// and gcc's tuning: their axes exist only on AVX-512 machines.
fn small_campaign(db: &Path) -> Vec<String> {
    [
        "tune",
        "polybench/linear-algebra/atax.c",
        "--dataset",
        "MINI",
        "--strategy",
        "exhaustive",
        "--threads",
        "1",
        "--runs",
        "1",
        "--set",
        "spatial=off",
        "--set",
        "posttile_reorder=none",
        "--set",
        "consecutivity=none",
        "--set",
        "hlim=off",
        "--set",
        "wavefront=none",
        "--set",
        "vector_width=default",
        "--set",
        "mtune=default",
        "--set",
        "simd=none",
        "--set",
        "fission=off",
        "--tiles",
        "32",
        "--db",
        db.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `(program, point, role) → (status, median)` of every measurement.
fn snapshot(store: &Store, campaign: i64) -> BTreeMap<(i64, String, Role), (store::Status, Option<f64>)> {
    let rows = store.outcomes(campaign).unwrap();
    let map: BTreeMap<_, _> =
        rows.iter().map(|o| ((o.program, o.point_id.clone(), o.role), (o.status, o.median_s))).collect();
    assert_eq!(map.len(), rows.len(), "a measurement was recorded twice");
    map
}

#[test]
fn killed_campaign_resumes_without_losing_or_repeating_a_measurement() {
    let dir = temp_dir("kill");
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    // The killed process's claims lapse after this; the resumed campaign
    // waits for them.
    args.extend(["--lease".to_string(), "3s".into()]);

    // Run once, kill -9 as soon as a few variants are stored.
    let mut child = polytune().args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    let before = loop {
        std::thread::sleep(Duration::from_millis(200));
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the campaign ended ({status}) before it could be killed");
        }
        assert!(started.elapsed() < Duration::from_secs(300), "no progress in 5 minutes");
        if !db.exists() {
            continue;
        }
        let store = Store::open(db.to_str().unwrap()).unwrap();
        let Some(c) = store.campaigns().unwrap().first().cloned() else { continue };
        let snap = snapshot(&store, c.id);
        if snap.keys().filter(|k| k.2 == Role::Variant).count() >= 3 {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            break (c.id, snapshot(&store, c.id));
        }
    };
    let (campaign, killed) = before;

    // The same command again finishes the campaign.
    let out = output(polytune().args(&args).arg("--json"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["end"], "finished");
    let points = report["points"][0].as_u64().unwrap() as usize;

    let store = Store::open(db.to_str().unwrap()).unwrap();
    let campaigns = store.campaigns().unwrap();
    assert_eq!(campaigns.len(), 1, "the second run resumed the same campaign");
    assert_eq!(campaigns[0].state, store::CampaignState::Finished);
    let after = snapshot(&store, campaign);
    for (k, v) in &killed {
        assert_eq!(after.get(k), Some(v), "a finished measurement changed or vanished: {k:?}");
    }
    // Every point of the space and every reference point, once.
    let variants = after.keys().filter(|k| k.2 == Role::Variant).count();
    assert_eq!(variants, points);
    assert_eq!(after.keys().filter(|k| k.2 == Role::Reference).count(), 1);
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new(), "integrity problems");

    // Running it a third time measures nothing new.
    let out = output(polytune().args(&args));
    assert!(out.status.success());
    assert_eq!(snapshot(&store, campaign), after);

    // The queries answer from this store.
    let db_arg = db.to_str().unwrap();
    let out = output(polytune().args(["best", "atax", "--db", db_arg, "--json"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let best: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(best["speedup"].as_f64().unwrap() > 0.0);
    assert!(Path::new(best["source_path"].as_str().unwrap()).is_file());
    let out = output(polytune().args(["history", "atax", "--db", db_arg, "--limit", "5"]));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 5);
    // Every variant's evaluation has its costs: its child, and the compile and
    // runs for the first point of each code (issue 20).
    let out = output(polytune().args(["history", "atax", "--db", db_arg, "--limit", "100", "--json"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let variants: Vec<_> = rows.as_array().unwrap().iter().filter(|r| r["role"] == "variant").collect();
    assert!(variants.iter().all(|r| r["costs"]["variant_s"].as_f64().is_some_and(|s| s > 0.0)), "{rows:#}");
    assert!(variants.iter().any(|r| r["costs"]["run_s"].as_f64().is_some_and(|s| s > 0.0)), "{rows:#}");
    // The runs split: inside the timer, and the set-up around it.
    let split = |r: &serde_json::Value| {
        let (run, timed) = (r["costs"]["run_s"].as_f64().unwrap(), r["costs"]["timed_s"].as_f64().unwrap());
        timed > 0.0 && timed < run
    };
    assert!(
        variants.iter().filter(|r| r["costs"]["run_s"].as_f64() > Some(0.0)).all(|r| split(r)),
        "{rows:#}"
    );
    // The original's measurement costs too; it captured nothing.
    let references: Vec<_> = rows.as_array().unwrap().iter().filter(|r| r["role"] == "reference").collect();
    assert!(
        !references.is_empty() && references.iter().all(|r| split(r) && r["costs"]["capture_s"].is_null())
    );
    let out = output(polytune().args(["history", "atax", "--db", db_arg, "--costs"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("evaluations with costs:") && text.contains("of the run time outside the timer"),
        "{text}"
    );
    assert!(text.contains("timed ") && text.contains("set-up "), "{text}");
    let out = output(polytune().args(["machines", "--db", db_arg, "--json"]));
    let machines: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(machines.as_array().unwrap().len(), 1);
    let out = output(polytune().args(["best", "nosuchkernel", "--db", db_arg]));
    assert_eq!(out.status.code(), Some(3), "no result, not an error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuchkernel") && err.contains("atax"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_seed_gives_the_same_campaign() {
    let dir = temp_dir("seed");
    let order = |db: &Path, seed: &str| {
        let mut args = small_campaign(db);
        args.retain(|a| a != "exhaustive");
        let at = args.iter().position(|a| a == "--strategy").unwrap();
        args.splice(at..at + 1, ["--strategy".to_string(), "random".into(), "--seed".into(), seed.into()]);
        args.extend(["--evals".to_string(), "6".into()]);
        let out = output(polytune().args(&args));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let store = Store::open(db.to_str().unwrap()).unwrap();
        let c = store.campaigns().unwrap()[0].id;
        store.outcomes(c).unwrap().into_iter().map(|o| o.point_id).collect::<Vec<_>>()
    };
    let a = order(&dir.join("a.db"), "7");
    let b = order(&dir.join("b.db"), "7");
    let c = order(&dir.join("c.db"), "8");
    assert_eq!(a.len(), 1 + 6, "the reference and six evaluations");
    // The original's point (the reference's) is also evaluated as a
    // variant, with the other reference points, after the first batch's
    // variants: racing measures them against those.
    let original = a[1..].iter().position(|p| *p == a[0]).expect("the original's point evaluated");
    assert!(original > 0, "the reference points are measured after the first batch's variants: {a:?}");
    assert_eq!(a, b);
    assert_ne!(a, c);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The model strategy in a real campaign: stopped by its budget, the same
/// command with a larger one resumes it, and no point is measured twice.
#[test]
fn a_model_campaign_stops_and_resumes_without_repeating_a_point() {
    let dir = temp_dir("model");
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    let at = args.iter().position(|a| a == "exhaustive").unwrap();
    args[at] = "model".into();
    let at = args.iter().position(|a| a == "--tiles").unwrap();
    args[at + 1] = "0,16,32,64".into();
    let run = |evals: &str| {
        let out = output(polytune().args(&args).args(["--evals", evals, "--json"]));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = run("6");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let campaign = first["campaign"].as_i64().unwrap();
    let variants = |s: &Store| snapshot(s, campaign).keys().filter(|k| k.2 == Role::Variant).count();
    assert_eq!(variants(&store), 6);
    let second = run("11");
    assert_eq!(second["campaign"], first["campaign"], "the same campaign resumed");
    // `snapshot` fails on a point recorded twice.
    assert_eq!(variants(&store), 11, "past the warm-up, the model proposed new points only");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let dir = temp_dir("bad");
    let db = dir.join("store.db");
    let db_arg = db.to_str().unwrap().to_string();
    let bad_c = dir.join("broken.c");
    std::fs::write(&bad_c, "void f(int n, double A[n]) {\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = ;\n#pragma endscop\n}\n")
        .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["tune", "polybench/linear-algebra/nosuch.c", "--db", &db_arg], "nosuch.c"),
        (vec!["tune", bad_c.to_str().unwrap(), "--db", &db_arg], "broken.c:"),
        (
            vec!["tune", "polybench/linear-algebra/atax.c", "--set", "spatial=sideways", "--db", &db_arg],
            "off|per-reference|grouped",
        ),
        (
            vec!["tune", "polybench/linear-algebra/atax.c", "--set", "colour=blue", "--db", &db_arg],
            "unknown knob",
        ),
        (
            vec![
                "tune",
                "polybench/linear-algebra/atax.c",
                "--dataset",
                "MINI",
                "--db",
                "/proc/polytune/store.db",
            ],
            "/proc/polytune",
        ),
        (vec!["best", "atax", "--db", &db_arg], "no store here"),
    ];
    for (args, needle) in cases {
        let out = output(polytune().args(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: `{needle}` not in: {err}");
        assert!(!db.exists(), "{args:?} wrote the store");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `small_campaign` as halving on MEDIUM, with `extra` arguments: its
/// directory and the campaign's outcomes.
fn halving_campaign(name: &str, extra: &[&str]) -> (testkit::TempDir, Vec<store::Outcome>) {
    let dir = temp_dir(name);
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    let at = args.iter().position(|a| a == "exhaustive").unwrap();
    args[at] = "halving".into();
    let at = args.iter().position(|a| a == "MINI").unwrap();
    args[at] = "MEDIUM".into();
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = output(polytune().args(&args));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let campaign = store.campaigns().unwrap()[0].id;
    let rows = store.outcomes(campaign).unwrap();
    (dir, rows)
}

#[test]
fn halving_promotes_from_small_to_medium_in_one_campaign() {
    // At MEDIUM atax runs in microseconds: the cost rule (`--rungs auto`)
    // would search MEDIUM alone (the next test).
    let (dir, rows) = halving_campaign("halving", &["--rungs", "all"]);
    let programs: std::collections::BTreeSet<i64> = rows.iter().map(|o| o.program).collect();
    assert_eq!(programs.len(), 2, "one program per dataset (SMALL, MEDIUM)");
    // The original program on SMALL is the first thing a halving campaign measures.
    let small = &rows[0].program;
    let medium = programs.iter().find(|p| *p != small).unwrap();
    let on = |p: &i64| -> Vec<&str> {
        rows.iter()
            .filter(|o| o.program == *p && o.role == Role::Variant)
            .map(|o| o.point_id.as_str())
            .collect()
    };
    let (s, m) = (on(small), on(medium));
    // Every SMALL point; on MEDIUM the reference points and the best third.
    let references = 3;
    let searched = s.len() - references;
    assert_eq!(m.len(), references + searched.div_ceil(3), "{} on SMALL, {} on MEDIUM", s.len(), m.len());
    assert!(m.iter().all(|p| s.contains(p)), "a MEDIUM point was not measured on SMALL");
    assert_eq!(rows.iter().filter(|o| o.role == Role::Reference).count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Halving's cost rule: atax's first points at MEDIUM spend far less than
/// half their cost running, so the campaign measures nothing on SMALL.
#[test]
fn halving_keeps_to_the_campaign_dataset_where_running_is_cheap() {
    let (dir, rows) = halving_campaign("halving-rule", &[]);
    let programs: std::collections::BTreeSet<i64> = rows.iter().map(|o| o.program).collect();
    assert_eq!(programs.len(), 1, "only MEDIUM's program");
    let variants: Vec<_> = rows.iter().filter(|o| o.role == Role::Variant).collect();
    assert!(variants.len() > 3, "the search went on past the reference points");
    let split = |o: &&store::Outcome| o.costs.clone().map(|c| (c.variant_s + c.compile_s, c.run_s));
    let (make, run) = variants.iter().filter_map(split).fold((0.0, 0.0), |(m, r), (a, b)| (m + a, r + b));
    assert!(run < make, "the points ran {run} s and took {make} s to make");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_campaigns_write_one_sqlite_file_at_once() {
    let dir = temp_dir("two");
    let db = dir.join("store.db");
    let with_kernel = |kernel: &str| {
        let mut args = small_campaign(&db);
        let at = args.iter().position(|a| a.ends_with("atax.c")).unwrap();
        args[at] = format!("polybench/linear-algebra/{kernel}.c");
        args.push("--json".into());
        std::thread::spawn(move || output(polytune().args(&args)))
    };
    let (a, b) = (with_kernel("atax"), with_kernel("bicg"));
    let mut points = BTreeMap::new();
    for child in [a, b] {
        let out = child.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        points.insert(report["campaign"].as_i64().unwrap(), report["points"][0].as_u64().unwrap() as usize);
    }
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let campaigns = store.campaigns().unwrap();
    assert_eq!(campaigns.len(), 2);
    for c in &campaigns {
        assert_eq!(c.state, store::CampaignState::Finished);
        let snap = snapshot(&store, c.id);
        let variants = snap.keys().filter(|k| k.2 == Role::Variant).count();
        assert_eq!(variants, points[&c.id], "campaign {}", c.id);
    }
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same campaign against the PostgreSQL server `.ci/run` starts.
#[test]
fn a_campaign_into_postgres() {
    let Some(url) = testkit::postgres_url() else { return };
    // A seed of its own makes a new campaign in a server that outlives test runs.
    let seed =
        format!("{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    let mut args = small_campaign(Path::new("unused"));
    let at = args.iter().position(|a| a == "--db").unwrap();
    args[at + 1] = url.clone();
    args.extend(["--seed".to_string(), seed, "--evals".into(), "5".into(), "--json".into()]);
    let out = output(polytune().args(&args));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let campaign = report["campaign"].as_i64().unwrap();
    let store = Store::open(&url).unwrap();
    let snap = snapshot(&store, campaign);
    assert_eq!(snap.keys().filter(|k| k.2 == Role::Variant).count(), 5);
    assert_eq!(snap.keys().filter(|k| k.2 == Role::Reference).count(), 1);
    let out = output(polytune().args(["best", "atax", "--db", &url, "--json"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_time_budget_stops_and_the_same_command_goes_on() {
    let dir = temp_dir("budget");
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    // Four tile sizes: a space too large to schedule, build and run in 1 s.
    let at = args.iter().position(|a| a == "--tiles").unwrap();
    args[at + 1] = "0,16,32,64".into();
    args.extend(["--budget".to_string(), "1s".into(), "--json".into()]);
    let run = || {
        let out = output(polytune().args(&args));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = run();
    assert_eq!(first["end"], "budget");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    assert_eq!(store.campaigns().unwrap()[0].state, store::CampaignState::Stopped);
    let before = snapshot(&store, first["campaign"].as_i64().unwrap()).len();
    let second = run();
    assert_eq!(second["campaign"], first["campaign"], "the same campaign resumed");
    let after = snapshot(&store, first["campaign"].as_i64().unwrap()).len();
    assert!(after > before, "the second run measured nothing new ({before} → {after})");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Once the time budget is spent no measurement starts, within a batch
/// too; yet each invocation measures one program, so that the same command
/// goes on. With no time at all: one program measured per invocation (the
/// points whose code it is share its measurement), on the one slot.
#[test]
fn a_spent_time_budget_starts_no_measurement_after_the_first() {
    let dir = temp_dir("deadline");
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    args.extend(["--budget".to_string(), "0s".into(), "--json".into()]);
    for invocation in 1..=2 {
        let out = output(polytune().args(&args));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["end"], "budget");
        let store = Store::open(db.to_str().unwrap()).unwrap();
        let rows = store.outcomes(report["campaign"].as_i64().unwrap()).unwrap();
        let ran = rows
            .iter()
            .filter(|o| o.role == Role::Variant && o.costs.as_ref().is_some_and(|c| c.run_s > 0.0));
        assert_eq!(ran.count(), invocation, "programs measured after {invocation} invocation(s)");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_point_that_takes_too_long_is_a_status_not_a_stuck_campaign() {
    let dir = temp_dir("timeout");
    let db = dir.join("store.db");
    let mut args = small_campaign(&db);
    args.extend(["--variant-timeout".to_string(), "0.001s".into(), "--evals".into(), "5".into()]);
    let out = output(polytune().args(&args));
    // The campaign ends normally with nothing verified: exit status 3, "no result".
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let rows = store.outcomes(store.campaigns().unwrap()[0].id).unwrap();
    let variants: Vec<_> = rows.iter().filter(|o| o.role == Role::Variant).collect();
    assert_eq!(variants.len(), 5);
    assert!(variants.iter().all(|o| o.status == store::Status::ScheduleTimeout), "{variants:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A campaign on a program in the official PolyBench layout (kernel file +
/// a second translation unit, from its `polytune.toml`): it measures
/// variants, stores the build description with the campaign, and `best`
/// answers.
#[test]
fn a_campaign_on_the_official_layout_stores_its_build_and_answers_best() {
    let dir = temp_dir("layout");
    let db = dir.join("store.db");
    let db_arg = db.to_str().unwrap();
    let gemm = root().join("space/tests/fixtures/official/gemm.c");
    let args = [
        "tune",
        gemm.to_str().unwrap(),
        "--dataset",
        "MINI",
        "--evals",
        "4",
        "--threads",
        "1",
        "--runs",
        "1",
    ];
    let out = output(polytune().args(args).args(["--db", db_arg, "--json"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(db_arg).unwrap();
    let campaign = store.campaigns().unwrap().remove(0);
    let config: serde_json::Value = serde_json::from_str(&campaign.config).unwrap();
    let build = &config["kernels"][0]["build"];
    assert!(build["sources"][0].as_str().unwrap().ends_with("fixtures/official/polybench.c"), "{config}");
    let out = output(polytune().args(["best", "gemm", "--db", db_arg, "--json"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let best: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(best["speedup"].as_f64().unwrap() > 0.0, "{best}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A peer (gcc with Graphite, which every Debian gcc has) is a reference
/// point like isl's: built by its own compiler with the program's extra
/// sources, verified against the original, recorded, and a column of the
/// report. A peer polytune does not know is bad input, refused before any row.
#[test]
fn a_peer_is_measured_verified_and_reported_as_a_reference_point() {
    let dir = temp_dir("peers");
    let db = dir.join("store.db");
    let db_arg = db.to_str().unwrap();
    let gemm = root().join("space/tests/fixtures/official/gemm.c");
    let args = ["tune", gemm.to_str().unwrap(), "--dataset", "MINI", "--threads", "1", "--runs", "1"];
    let out = output(polytune().args(args).args(["--evals", "5", "--peers", "gcc-graphite", "--db", db_arg]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = output(polytune().args(["report", "--format", "csv", "--db", db_arg]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8_lossy(&out.stdout);
    let header = csv.lines().next().unwrap();
    let column =
        |name: &str| header.split(',').position(|c| c == name).unwrap_or_else(|| panic!("{name}: {csv}"));
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[column("gcc-graphite_status")], "ok", "{csv}");
    assert!(row[column("gcc-graphite_speedup")].parse::<f64>().is_ok_and(|s| s > 0.0), "{csv}");

    let out = output(polytune().args(args).args(["--peers", "icc-magic", "--db", db_arg]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown peer `icc-magic`"));
    let store = Store::open(db_arg).unwrap();
    assert_eq!(store.campaigns().unwrap().len(), 1, "the refused campaign wrote nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits until the campaign `child` runs into `db` has recorded a variant;
/// fails if it ends first or makes no progress in 5 minutes.
fn wait_for_a_variant(child: &mut std::process::Child, db: &Path) {
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the campaign ended ({status}) before it was interrupted");
        }
        assert!(started.elapsed() < Duration::from_secs(300), "no progress in 5 minutes");
        if !db.exists() {
            continue;
        }
        let store = Store::open(db.to_str().unwrap()).unwrap();
        let Some(c) = store.campaigns().unwrap().first().cloned() else { continue };
        if snapshot(&store, c.id).keys().any(|k| k.2 == Role::Variant) {
            return;
        }
    }
}

/// Ctrl-C (SIGINT) stops a campaign cleanly: exit status 130, the campaign marked stopped,
/// what was measured kept.
#[test]
fn ctrl_c_stops_with_status_130_and_keeps_what_was_measured() {
    let dir = temp_dir("sigint");
    let db = dir.join("store.db");
    let args = small_campaign(&db);
    let mut child = polytune().args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for_a_variant(&mut child, &db);
    // SAFETY: a plain signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the campaign did not stop within 2 minutes of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(130), "{status}");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let c = &store.campaigns().unwrap()[0];
    assert_eq!(c.state, store::CampaignState::Stopped);
    assert!(snapshot(&store, c.id).keys().any(|k| k.2 == Role::Variant));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A rebuilt executable mid-campaign stops the campaign with one clear
/// error (its children would be another program), not with a failure
/// recorded for every point; the same command then resumes.
#[test]
fn a_replaced_executable_stops_the_campaign_with_one_error() {
    let dir = temp_dir("replaced");
    let db = dir.join("store.db");
    let exe = dir.join("polytune");
    std::fs::copy(env!("CARGO_BIN_EXE_polytune"), &exe).unwrap();
    let args = small_campaign(&db);
    let mut cmd = Command::new(&exe);
    cmd.current_dir(root()).env("OMP_WAIT_POLICY", "PASSIVE").args(&args);
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_a_variant(&mut child, &db);
    // As a build does: a new file renamed over the old one.
    let new = dir.join("polytune.new");
    std::fs::copy(env!("CARGO_BIN_EXE_polytune"), &new).unwrap();
    std::fs::rename(&new, &exe).unwrap();
    let out = testkit::wait_within(child, "the campaign with a replaced executable", LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the campaign ran on: {stderr}");
    assert!(stderr.contains("the polytune executable was replaced"), "{stderr}");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let c = &store.campaigns().unwrap()[0];
    let failed = snapshot(&store, c.id).values().filter(|(s, _)| *s == store::Status::ScheduleError).count();
    assert_eq!(failed, 0, "points recorded as failures");
    drop(store);
    // The same command, with the new executable, goes on to the end.
    let out = output(Command::new(&exe).current_dir(root()).env("OMP_WAIT_POLICY", "PASSIVE").args(&args));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A profile with two one-core slots: variants are measured on both at once,
/// and every point of the space exactly once.
#[test]
fn two_slots_measure_at_once_and_every_point_once() {
    let cores = executor::machine::available_cores();
    assert!(
        cores.len() >= 2,
        "this test needs two cores to make two slots; this process may run on {cores:?}"
    );
    let dir = temp_dir("slots");
    let profile = dir.join("two-slots.toml");
    let slots = format!(
        "name = \"two-slots\"\ncompiler = \"gcc\"\nflags = [\"-O2\", \"-fopenmp\"]\n\
         [[slots]]\nname = \"a\"\ncores = [{}]\n[[slots]]\nname = \"b\"\ncores = [{}]\n",
        cores[0], cores[1]
    );
    std::fs::write(&profile, slots).unwrap();
    let db = dir.join("slots.db");
    let mut args = small_campaign(&db);
    args.extend(["--machine".to_string(), profile.to_str().unwrap().into(), "--json".into()]);
    let out = output(polytune().args(&args));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["end"], "finished");
    assert_eq!(json["slots"], 2);
    assert_eq!(json["busy_at_once"], 2, "both slots measured at the same time: {json}");

    let store = Store::open(db.to_str().unwrap()).unwrap();
    let outcomes = store.outcomes(json["campaign"].as_i64().unwrap()).unwrap();
    let variants: Vec<&String> =
        outcomes.iter().filter(|o| o.role == Role::Variant).map(|o| &o.point_id).collect();
    let distinct: std::collections::BTreeSet<&String> = variants.iter().copied().collect();
    assert_eq!(variants.len(), json["points"][0].as_u64().unwrap() as usize, "every point measured");
    assert_eq!(distinct.len(), variants.len(), "no point measured twice");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A campaign on a profile with a GPU slot sends its GPU points there as
/// CUDA programs (nvcc, then the GPU slot's protocol) while the reference
/// points run on the CPU slot. With no GPU here, a stand-in `nvidia-smi`
/// names one for the fingerprint and every GPU point must then fail in
/// CUDA's own start-up, recorded as a crash: proof that it went to the
/// GPU slot rather than to the emulation. (With a GPU, they must run.)
#[test]
fn a_gpu_campaign_measures_its_gpu_points_on_the_gpu_slot() {
    let Some(nvcc) = executor::cuda::nvcc() else {
        assert!(
            std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
            "POLYTUNE_EXPECT_NVCC is set but no nvcc"
        );
        return;
    };
    let dir = temp_dir("gpu-slot");
    let has_gpu = testkit::has_gpu();
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if !has_gpu {
        let smi = dir.join("bin/nvidia-smi");
        std::fs::create_dir_all(smi.parent().unwrap()).unwrap();
        std::fs::write(&smi, "#!/bin/sh\necho 'Stand-in GPU, 0.0'\n").unwrap();
        let mut p = std::fs::metadata(&smi).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
        std::fs::set_permissions(&smi, p).unwrap();
        path = std::env::join_paths(
            std::iter::once(smi.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&path)),
        )
        .unwrap();
    }
    let profile = dir.join("gpu.toml");
    std::fs::write(&profile, testkit::gpu_profile(&nvcc)).unwrap();
    let db = dir.join("store.db");
    let mut args: Vec<String> = small_campaign(&db);
    args.extend(
        ["--set", "target=gpu", "--evals", "6", "--machine", profile.to_str().unwrap()].map(String::from),
    );
    let out = output(polytune().args(&args).env("PATH", &path).env("XDG_CACHE_HOME", dir.join("cache")));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let history =
        output(polytune().args(["history", "--json", "--limit", "50", "--db", db.to_str().unwrap()]));
    let rows: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    // The reference points (original order, isl, Pluto-like) run on the CPU
    // slot; isl's GPU schedule and the GPU points after them, on the GPU slot.
    let variants: Vec<&serde_json::Value> = rows.iter().filter(|r| r["role"] == "variant").collect();
    let on_gpu = variants.iter().filter(|r| r["reason"].as_str().unwrap().contains("polytune: CUDA")).count();
    for r in &variants {
        let cuda_start = r["reason"].as_str().unwrap().contains("polytune: CUDA: starting CUDA");
        match has_gpu {
            true => assert_eq!(r["status"], "ok", "{r}"),
            false => assert!(r["status"] == "ok" || (r["status"] == "crash" && cuda_start), "{r}"),
        }
    }
    assert!(has_gpu || on_gpu >= 1, "no GPU point reached the GPU slot: {rows:#?}");
    // isl's GPU schedule is a reference: a column of the report.
    let report = output(polytune().args(["report", "--db", db.to_str().unwrap()]));
    let report = String::from_utf8_lossy(&report.stdout);
    assert!(report.contains("Reference columns: identity, isl, pluto-like, isl-gpu."), "{report}");
    // The fingerprint names the GPU.
    let machines = output(polytune().args(["machines", "--json", "--db", db.to_str().unwrap()]));
    let text = String::from_utf8_lossy(&machines.stdout);
    assert!(has_gpu || text.contains("Stand-in GPU (driver 0.0)"), "{text}");
}

/// The store on a full disk (a small tmpfs, which needs root; elsewhere
/// the test says so and returns): the campaign stops with the store's error,
/// what it recorded stays intact, and once there is room the same command
/// resumes and finishes, every point measured once.
#[test]
fn a_full_disk_stops_the_campaign_cleanly_and_the_same_command_resumes() {
    let dir = temp_dir("full");
    let disk = dir.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let mount = |options: &str| {
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&disk)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !mount("size=640k") {
        eprintln!("cannot mount a small tmpfs here (not root?): nothing to fill");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(disk.clone());
    let db = disk.join("store.db");
    let mut args = small_campaign(&db);
    let at = args.iter().position(|a| a == "--tiles").unwrap();
    args[at + 1] = "0,16,32".into();
    args.extend(["--lease".to_string(), "3s".into()]);
    let out = output(polytune().args(&args));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the campaign fit in 640 KiB: {err}");
    assert!(err.contains("full"), "the error says why: {err}");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let campaign = store.campaigns().unwrap()[0].id;
    let before = snapshot(&store, campaign);
    assert!(!before.is_empty(), "the disk filled up before the first measurement; make it larger");
    drop(store);
    // Room again: the same command goes on from what was recorded.
    assert!(
        Command::new("mount").args(["-o", "remount,size=64m"]).arg(&disk).status().unwrap().success(),
        "remount"
    );
    let out = output(polytune().args(&args).arg("--json"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["end"], "finished");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let after = snapshot(&store, campaign);
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "a measurement changed or vanished: {k:?}");
    }
    let variants = after.keys().filter(|k| k.2 == Role::Variant).count();
    assert_eq!(variants, report["points"][0].as_u64().unwrap() as usize);
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new());
    drop(store);
    drop(_unmount);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A campaign on a machine new to a kernel first measures the best points
/// the store's other machines found for it, made its own (here a two-thread
/// OpenMP point becomes a one-thread sequential one); a machine with history
/// starts as before.
#[test]
fn a_new_machine_starts_from_the_best_points_of_the_others() {
    use vocab::knobs::{Point, Scheduler, Target};
    let dir = temp_dir("warm");
    let db = dir.join("warm.db");
    let db_arg = db.to_str().unwrap();
    let profile = |name: &str, opt: &str, cores: &str| {
        let path = dir.join(format!("{name}.toml"));
        let text = format!(
            "name = \"{name}\"\ncompiler = \"gcc\"\nflags = [\"{opt}\", \"-fopenmp\"]\n\
             [[slots]]\nname = \"s\"\ncores = {cores}\n"
        );
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (first, second) = (profile("first", "-O2", "\"all\""), profile("second", "-O1", "[0]"));
    let campaign = |machine: &str, seed: &str, threads: &str, more: &[&str]| {
        let mut args = vec!["tune", "polybench/linear-algebra/atax.c", "--dataset", "MINI", "--runs", "1"];
        args.extend(["--evals", "6", "--tiles", "32", "--db", db_arg, "--machine", machine, "--json"]);
        args.extend(["--seed", seed, "--threads", threads]);
        args.extend(more);
        let out = output(polytune().args(&args));
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        (serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(), err)
    };
    // Search points only, so that the first machine's best is one.
    let (_, err) = campaign(&first, "1", "2", &["--references", "none"]);
    assert!(!err.contains("warm start"), "{err}");
    let out = output(polytune().args(["best", "atax", "--db", db_arg, "--machine", "first", "--json"]));
    let best: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expected: Point = serde_json::from_str(best["point_json"].as_str().unwrap()).unwrap();
    expected.threads = 1;
    match &mut expected.scheduler {
        Scheduler::Unified { options, .. } => options.target = Target::Seq,
        other => panic!("the best of a campaign without references: {other:?}"),
    }
    let (two, err) = campaign(&second, "2", "1", &[]);
    assert!(err.contains("atax [MINI] warm start: first the best points known on other machines ("), "{err}");
    assert!(err.contains("x on first"), "{err}");
    let evaluated: Vec<&str> =
        two["evaluated"].as_array().unwrap().iter().map(|e| e[1].as_str().unwrap()).collect();
    assert!(
        evaluated.contains(&expected.id().as_str()),
        "{} not in {evaluated:?}",
        expected.canonical_json()
    );
    // The store says where it came from (`history`, and `best` when it wins).
    let out = output(polytune().args(["history", "atax", "--db", db_arg, "--json", "--limit", "100"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let origin = |id: &str| rows.iter().find(|r| r["point_id"] == id).map(|r| r["origin"].clone());
    assert_eq!(origin(&expected.id()), Some(serde_json::json!("first")), "{rows:#?}");
    assert!(rows.iter().filter(|r| r["machine"] == "first").all(|r| r["origin"].is_null()));
    // Another campaign on that machine: it has history now.
    let (_, err) = campaign(&second, "3", "1", &[]);
    assert!(!err.contains("warm start"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every fixed point of `bench peers` lies in the space a default `tune`
/// searches for the ten kernels of its table, on one thread and on two,
/// with the knobs that make another program of the kernel (a campaign
/// can reach whatever the bench's list finds); where the kernel has no
/// use for a knob, the grid's point with it off makes the same program.
/// The references are searched as they are; the unified points with
/// `restrict` on.
#[test]
fn bench_points_are_in_the_default_space() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench");
    let kernels = [
        "linear-algebra/gemm.c",
        "linear-algebra/syrk.c",
        "linear-algebra/syr2k.c",
        "linear-algebra/2mm.c",
        "linear-algebra/3mm.c",
        "datamining/covariance.c",
        "stencils/jacobi-2d.c",
        "stencils/heat-3d.c",
        "stencils/fdtd-2d.c",
        "stencils/seidel-2d.c",
    ];
    // The fast tier loads a quarter of the kernels at each thread count;
    // the heavy tier the rest.
    for (j, threads) in [1, 2].into_iter().enumerate() {
        let spec = grid::Spec {
            knobs: grid::knob_grid(&[], threads).unwrap(),
            code: grid::code_grid(&[], threads, true).unwrap(),
            gpu_code: Vec::new(),
            tiles: grid::parse_tiles(grid::TILES).unwrap(),
            threads,
            seed: 0,
            peers: Vec::new(),
            references: None,
        };
        for (_, file) in kernels.into_iter().enumerate().filter(|&(i, _)| testkit::takes(i, j, 4, 1)) {
            let build = tuner::program::ProgramConfig::default();
            let kernel = tuner::campaign::Kernel::load(
                &root.join(file),
                0,
                tuner::strategy::StrategyKind::Model,
                tuner::program::Dataset::Mini,
                &build,
                &spec,
                false,
            )
            .unwrap();
            let scop = &kernel.programs[&tuner::program::Dataset::Mini].scop;
            let tiles = grid::tiles_for_scop(&spec.tiles, scop);
            let searched: std::collections::HashSet<&Point> =
                kernel.space.iter().chain(&kernel.references).collect();
            // The plain code without `restrict` is the bench's baseline;
            // the grid keeps `restrict` on (the model assumes it).
            for (label, p) in grid::bench_points(threads).into_iter().filter(|(_, p)| p.code.restrict) {
                // The kernel's form of the point: its code knobs as the
                // grid keeps them, its tiles as the grid's shape that
                // tiles the kernel alike.
                let code = grid::for_scop(std::slice::from_ref(&p.code), scop).unwrap().remove(0);
                let alike = grid::tiles_for_scop(&[tiles.clone(), vec![p.tiles.clone()]].concat(), scop);
                let shape = alike.len() == tiles.len();
                let tile = tiles
                    .iter()
                    .find(|t| grid::tiles_for_scop(&[(*t).clone(), p.tiles.clone()], scop).len() == 1);
                assert!(
                    shape && tile.is_some(),
                    "{file}, {threads} thread(s): {label}: no tile shape of the grid like it"
                );
                let p = Point { code, tiles: tile.unwrap().clone(), ..p };
                assert!(searched.contains(&p), "{file}, {threads} thread(s): {label} is not searched");
            }
        }
    }
}

/// A fusion that only expanded arrays make legal is searched, with
/// expansion alone: doitgen's copy `A[r][q][p] = sum[p]` in a nest of its
/// own after every row sum, once `sum` has a row per `(r, q)`. Its points
/// schedule legally on the expanded SCoP.
#[test]
fn preorders_that_expansion_makes_legal_are_searched_with_it() {
    use vocab::knobs::Scheduler;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench");
    let spec = grid::Spec {
        knobs: grid::knob_grid(&[], 1).unwrap(),
        code: grid::code_grid(&[], 1, true).unwrap(),
        gpu_code: Vec::new(),
        tiles: grid::parse_tiles(grid::TILES).unwrap(),
        threads: 1,
        seed: 0,
        peers: Vec::new(),
        references: None,
    };
    let kernel = tuner::campaign::Kernel::load(
        &root.join("linear-algebra/doitgen.c"),
        0,
        tuner::strategy::StrategyKind::Model,
        tuner::program::Dataset::Mini,
        &tuner::program::ProgramConfig::default(),
        &spec,
        false,
    )
    .unwrap();
    let distributed = Some(vocab::preorder::Preorder(vec![vec![0, 1], vec![2]]));
    let with =
        |p: &&Point| matches!(&p.scheduler, Scheduler::Unified { preorder, .. } if *preorder == distributed);
    let points: Vec<&Point> = kernel.space.iter().filter(with).collect();
    assert!(!points.is_empty(), "the copy after the row sums is not searched");
    assert!(points.iter().all(|p| p.code.expand), "a point without expansion has that fusion");
    assert!(kernel.space.iter().any(|p| !p.code.expand), "the rest of the grid keeps expand=off");
    let program = &kernel.programs[&tuner::program::Dataset::Mini];
    let tree = executor::pipeline::schedule_of(&program.scop, &program.deps, points[0]).unwrap();
    assert!(tree.contains("sequence"), "{tree}");
}

/// A whole small campaign through the library, as a program that links
/// polytune runs one: a typed request, the events it tells in order, the
/// outcome as data, and its measurements in the store.
#[test]
fn a_campaign_runs_through_the_library_and_tells_what_it_does() {
    use std::sync::Arc;
    use tuner::campaign::observer::{Event, Recorder};
    use tuner::campaign::request::{self, Outcome, Request};
    use tuner::program::Dataset;
    let dir = temp_dir("library");
    let db = dir.join("library.db");
    let request = Request {
        dataset: Dataset::Mini,
        threads: Some(1),
        tiles: vec![None, Some(vec![32])],
        race: None,
        runs: 2,
        references: Some(vec!["identity".into()]),
        warm_start: 0,
        db: Some(db.display().to_string()),
        budget: tuner::campaign::Budget { evals: Some(3), time: None },
        cache: Some(dir.join("cache")),
        executable: Some(env!("CARGO_BIN_EXE_polytune").into()),
        ..Request::new(vec![(root().join("polybench/linear-algebra/atax.c"), Default::default(), 0)])
    };
    let recorder = Arc::new(Recorder::default());
    let Outcome::Ran(ran) = request::run(&request, None, recorder.clone()).unwrap() else {
        panic!("nothing was submitted")
    };
    assert_eq!(
        (ran.end, ran.trace.len(), ran.kernels.as_slice()),
        (tuner::campaign::End::Budget, 3, &["atax".to_string()][..])
    );
    let events = recorder.events();
    let step =
        |e: &Event| matches!(e, Event::Step(s) if s.contains("atax [MINI] measuring the original program"));
    let first_evaluated = events.iter().position(|e| matches!(e, Event::Evaluated { .. })).unwrap();
    assert!(events[..first_evaluated].iter().any(step), "{events:#?}");
    assert!(events.contains(&Event::Planned { evaluations: 3 }), "{events:#?}");
    let evaluated: Vec<&Event> = events.iter().filter(|e| matches!(e, Event::Evaluated { .. })).collect();
    assert_eq!(evaluated.len(), 3, "{events:#?}");
    assert!(evaluated
        .iter()
        .all(|e| matches!(e, Event::Evaluated { kernel, dataset: Dataset::Mini, .. } if kernel == "atax")));
    assert_eq!(events.last(), Some(&Event::Finished), "{events:#?}");
    assert!(events.contains(&Event::Done { evaluations: 3 }), "{events:#?}");
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let rows = store.outcomes(ran.campaign_id).unwrap();
    assert_eq!(rows.iter().filter(|r| r.role == Role::Variant).count(), 3, "{rows:#?}");
}
