//! Several processes on one campaign (issue 19): `tune` starts it, `polytune
//! worker --campaign ID` joins it; each point is claimed in the store before it
//! is evaluated, so the processes share the work and every point is measured
//! once, also when a worker is killed in the middle of a measurement.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use store::{Role, Store};

mod common;
use common::{polytune, root, LIMIT};

fn temp_dir(name: &str) -> testkit::TempDir {
    common::temp_dir(&format!("workers-{name}"))
}

/// An exhaustive campaign on atax at MINI over its 16 preorders, three tile
/// sizes and the register tiles (`unroll_jam` 1 and 4), each point
/// evaluated in about a second. `simd`, `fission`, the vector width and gcc's tuning
/// are fixed (the axes of the last two exist only on AVX-512 machines). `seed` makes it a new
/// campaign in a store that outlives the test.
fn campaign_args(db: &str, seed: &str) -> Vec<String> {
    let fixed = [
        "spatial=off",
        "posttile_reorder=none",
        "consecutivity=none",
        "hlim=off",
        "wavefront=none",
        "vector_width=default",
        "mtune=default",
        "simd=none",
        "fission=off",
    ];
    let mut args: Vec<String> = ["tune", "polybench/linear-algebra/atax.c", "--dataset", "MINI"]
        .into_iter()
        .chain(["--strategy", "exhaustive", "--threads", "1", "--runs", "1", "--tiles", "0,16,32"])
        .chain(["--db", db, "--seed", seed, "--json", "--lease", "3s", "--on-noise", "warn"])
        .map(String::from)
        .collect();
    for f in fixed {
        args.extend(["--set".to_string(), f.to_string()]);
    }
    args
}

/// A polytune process with its stderr in a file of `dir` (a pipe nobody
/// reads while the test waits on other processes would fill up).
struct Process {
    child: Child,
    log: PathBuf,
}

fn spawn(dir: &Path, args: &[String]) -> Process {
    let log = dir.join(format!(
        "{}.log",
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    let err = std::fs::File::create(&log).unwrap();
    let child =
        polytune().args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err).spawn().unwrap();
    Process { child, log }
}

/// The campaign of seed `seed` that `tune` made, once it is in the store
/// (a PostgreSQL store outlives test runs: a new seed makes a new campaign).
fn campaign_id(db: &str, seed: &str, started: Instant) -> i64 {
    let tag = format!("\"seed\":{seed},");
    loop {
        assert!(started.elapsed() < LIMIT, "no campaign in the store");
        if let Ok(s) = Store::open(db) {
            if let Some(c) = s.campaigns().unwrap().into_iter().rev().find(|c| c.config.contains(&tag)) {
                return c.id;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A seed no earlier run used.
fn fresh_seed() -> String {
    format!("{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos())
}

/// A finished process's JSON report.
fn report(p: Process) -> serde_json::Value {
    let out = testkit::wait_within(p.child, "polytune", LIMIT);
    let log = std::fs::read_to_string(&p.log).unwrap_or_default();
    assert!(out.status.success(), "{log}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {log}"))
}

/// What each report says it evaluated, as `(dataset, point)`.
fn evaluated(r: &serde_json::Value) -> Vec<(String, String)> {
    r["evaluated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e[0].as_str().unwrap().to_string(), e[1].as_str().unwrap().to_string()))
        .collect()
}

/// Every point of the campaign measured once: `(point, role)` unique.
fn variants(store: &Store, campaign: i64) -> BTreeSet<String> {
    let rows = store.outcomes(campaign).unwrap();
    let v: Vec<String> =
        rows.iter().filter(|o| o.role == Role::Variant).map(|o| o.point_id.clone()).collect();
    let set: BTreeSet<String> = v.iter().cloned().collect();
    assert_eq!(set.len(), v.len(), "a point was recorded twice");
    set
}

#[test]
fn a_worker_shares_a_campaign_and_every_point_is_measured_once() {
    let dir = temp_dir("two");
    let db = dir.join("store.db").to_str().unwrap().to_string();
    let started = Instant::now();
    let tune = spawn(&dir, &campaign_args(&db, "1"));
    let id = campaign_id(&db, "1", started);
    let worker = spawn(
        &dir,
        &["worker", "--campaign", &id.to_string(), "--db", &db, "--json", "--lease", "3s"].map(String::from),
    );
    let (a, b) = (report(tune), report(worker));
    assert_eq!((&a["end"], &b["end"]), (&"finished".into(), &"finished".into()), "{a}\n{b}");
    assert_eq!(a["campaign"], b["campaign"], "the worker joined the same campaign");
    let (ea, eb) = (evaluated(&a), evaluated(&b));
    assert!(!ea.is_empty() && !eb.is_empty(), "both processes evaluated points: {ea:?} / {eb:?}");
    let store = Store::open(&db).unwrap();
    let measured = variants(&store, id);
    let mut all: Vec<String> = ea.iter().chain(&eb).map(|(_, p)| p.clone()).collect();
    all.sort();
    let distinct: BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!(distinct.len(), all.len(), "a point was evaluated by both processes");
    assert_eq!(distinct, measured, "what the processes evaluated is what the store holds");
    assert_eq!(measured.len(), a["points"][0].as_u64().unwrap() as usize, "the whole space");
    assert!(store.live_claims(id).unwrap().is_empty(), "no claim is left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_worker_refuses_a_campaign_of_another_machine_or_an_unknown_one() {
    let dir = temp_dir("refuse");
    let db = dir.join("store.db").to_str().unwrap().to_string();
    let mut args = campaign_args(&db, "2");
    args.extend(["--evals".into(), "1".into()]);
    let a = report(spawn(&dir, &args));
    let id = a["campaign"].as_i64().unwrap().to_string();
    // Another fingerprint: a profile with other compiler flags.
    let profile = dir.join("other.toml");
    std::fs::write(&profile, "name = \"other\"\ncompiler = \"gcc\"\nflags = [\"-O1\", \"-fopenmp\"]\n")
        .unwrap();
    let out = testkit::output_within(
        polytune().args(["worker", "--campaign", &id, "--db", &db, "--machine", profile.to_str().unwrap()]),
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("results are per machine"), "{err}");
    let out = testkit::output_within(polytune().args(["worker", "--campaign", "999", "--db", &db]), LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no campaign has id 999"), "{err}");
    let store = Store::open(&db).unwrap();
    assert_eq!(variants(&store, a["campaign"].as_i64().unwrap()).len(), 1, "nothing more was measured");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Against the PostgreSQL server `.ci/run` starts: `tune` and three workers,
/// one of them killed with SIGKILL while it holds a claim. The campaign
/// completes, every point once, and the killed worker's point is measured by
/// another after its lease (3 s) expired.
#[test]
fn four_workers_on_postgres_survive_a_kill() {
    let Some(url) = testkit::postgres_url() else { return };
    let seed = fresh_seed();
    let dir = temp_dir("postgres");
    let started = Instant::now();
    let tune = spawn(&dir, &campaign_args(&url, &seed));
    let id = campaign_id(&url, &seed, started);
    let worker_args =
        ["worker", "--campaign", &id.to_string(), "--db", &url, "--json", "--lease", "3s"].map(String::from);
    let mut workers: Vec<Process> = (0..3).map(|_| spawn(&dir, &worker_args)).collect();
    // Kill the first worker once it holds a claim (it is evaluating that point).
    let store = Store::open(&url).unwrap();
    let victim = workers.remove(0);
    let tag = format!(":{}:", victim.child.id());
    let held = loop {
        assert!(started.elapsed() < LIMIT, "the worker never claimed a point");
        if let Some(c) = store.live_claims(id).unwrap().into_iter().find(|c| c.worker.contains(&tag)) {
            break c;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut victim = victim.child;
    victim.kill().unwrap(); // SIGKILL
    victim.wait().unwrap();
    let mut reports = vec![report(tune)];
    reports.extend(workers.into_iter().map(report));
    assert!(reports.iter().all(|r| r["end"] == "finished"), "{reports:#?}");
    let measured = variants(&store, id);
    assert_eq!(measured.len(), reports[0]["points"][0].as_u64().unwrap() as usize, "the whole space");
    assert!(measured.contains(&held.point_id), "the killed worker's point was measured by another");
    let mut all: Vec<String> = reports.iter().flat_map(evaluated).map(|(_, p)| p).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a point was evaluated by two live processes");
    assert!(all.contains(&held.point_id), "re-leased to a live worker after the lease");
    assert!(store.live_claims(id).unwrap().is_empty(), "no claim is left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tune --submit slurm --workers 2` against the one-node Slurm cluster
/// `.ci/run` starts on loopback (`POLYTUNE_EXPECT_SLURM`): two jobs run the
/// campaign to completion, sharing it, every point once.
#[test]
fn submitted_slurm_jobs_share_the_campaign_to_completion() {
    let up = Command::new("sinfo").args(["-h", "-o", "%t"]).output();
    // `idle*` is a node that does not answer: jobs would wait for it forever.
    let idle = up.as_ref().is_ok_and(|o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == "idle")
    });
    if !idle {
        assert!(
            std::env::var_os("POLYTUNE_EXPECT_SLURM").is_none(),
            "POLYTUNE_EXPECT_SLURM is set but no idle Slurm node answers: {up:?}"
        );
        eprintln!("no idle Slurm node here (sinfo): nothing to submit to");
        return;
    }
    let dir = temp_dir("slurm");
    let db = dir.join("store.db").to_str().unwrap().to_string();
    let mut args = campaign_args(&db, "3");
    args[1] = root().join(&args[1]).to_str().unwrap().to_string();
    args.extend(["--submit", "slurm", "--workers", "2"].map(String::from));
    let out = testkit::output_within(polytune().current_dir(&dir).args(&args), LIMIT);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let submitted: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<String> =
        submitted["submitted"].as_array().unwrap().iter().map(|j| j.as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 2);
    let started = Instant::now();
    loop {
        let q = Command::new("squeue").args(["-h", "-j", &ids.join(",")]).output().unwrap();
        if String::from_utf8_lossy(&q.stdout).trim().is_empty() {
            break;
        }
        if started.elapsed() > LIMIT {
            let _ = Command::new("scancel").args(&ids).status();
            panic!("the Slurm jobs did not end in time");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let reports: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| {
            let out = std::fs::read_to_string(dir.join(format!("polytune-{id}.out"))).unwrap_or_default();
            let err = std::fs::read_to_string(dir.join(format!("polytune-{id}.err"))).unwrap_or_default();
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("job {id}: {e}\n{out}\n{err}"))
        })
        .collect();
    assert!(reports.iter().all(|r| r["end"] == "finished"), "{reports:#?}");
    assert_eq!(reports[0]["campaign"], reports[1]["campaign"], "both jobs ran one campaign");
    let id = reports[0]["campaign"].as_i64().unwrap();
    let store = Store::open(&db).unwrap();
    let measured = variants(&store, id);
    let mut all: Vec<String> = reports.iter().flat_map(evaluated).map(|(_, p)| p).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a point was evaluated by both jobs");
    assert_eq!(all.into_iter().collect::<BTreeSet<_>>(), measured);
    assert_eq!(measured.len(), reports[0]["points"][0].as_u64().unwrap() as usize, "the whole space");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The PostgreSQL server restarted in the middle of a campaign
/// (`POLYTUNE_TEST_POSTGRES_RESTART`: the command that restarts the server
/// `.ci/run` starts): `tune` and a worker retry with backoff and go on; the
/// campaign completes, nothing lost, nothing measured twice.
#[test]
fn a_postgres_restart_mid_campaign_loses_and_doubles_nothing() {
    let (Ok(url), Ok(restart)) =
        (std::env::var("POLYTUNE_TEST_POSTGRES"), std::env::var("POLYTUNE_TEST_POSTGRES_RESTART"))
    else {
        assert!(std::env::var_os("CI").is_none(), "CI must provide POLYTUNE_TEST_POSTGRES(_RESTART)");
        eprintln!("POLYTUNE_TEST_POSTGRES or POLYTUNE_TEST_POSTGRES_RESTART is not set: nothing to restart");
        return;
    };
    let dir = temp_dir("restart");
    let seed = fresh_seed();
    let started = Instant::now();
    // Leases outlast the outage: with a lease shorter than it, a point whose
    // heartbeat could not reach the server is taken over and measured again
    // (recorded once all the same).
    let mut args = campaign_args(&url, &seed);
    let at = args.iter().position(|a| a == "--lease").unwrap();
    args[at + 1] = "60s".into();
    let tune = spawn(&dir, &args);
    let id = campaign_id(&url, &seed, started);
    let worker =
        spawn(&dir, &["worker", "--campaign", &id.to_string(), "--db", &url, "--json"].map(String::from));
    loop {
        assert!(started.elapsed() < LIMIT, "no progress");
        if variants(&Store::open(&url).unwrap(), id).len() >= 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = Command::new("sh").args(["-c", &restart]).status().unwrap();
    assert!(status.success(), "`{restart}` failed");
    let reports = [report(tune), report(worker)];
    assert!(reports.iter().all(|r| r["end"] == "finished"), "{reports:#?}");
    let store = Store::open(&url).unwrap();
    let measured = variants(&store, id);
    assert_eq!(measured.len(), reports[0]["points"][0].as_u64().unwrap() as usize, "the whole space");
    let mut all: Vec<String> = reports.iter().flat_map(evaluated).map(|(_, p)| p).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a point was evaluated twice");
    std::fs::remove_dir_all(&dir).unwrap();
}
