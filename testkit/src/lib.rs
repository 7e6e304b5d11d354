//! What the workspace's tests share: time limits, so that a hang fails a
//! test run in minutes, naming what hung, instead of holding CI until its
//! global limit.
//!
//! - [`item`] watches one in-process item of a heavy test (a kernel's
//!   schedule under one setting, one variant's code generation). A thread
//!   stuck in a solver cannot be stopped, so when an item outlives its limit
//!   a watchdog writes its name to stderr and ends the whole test process
//!   with status 124: the run fails there, with the item named.
//! - [`output_within`] runs a child process, which can be stopped: past its
//!   limit it is killed and the test fails naming the command.
//!
//! - [`kernels`], [`load`]: the 30 PolyBench kernels, and one loaded (its
//!   first SCoP and dependences) under a dataset; [`evaluator`], the
//!   executor's evaluator as the tests configure it.
//! - [`instances`]: which statement instances a program runs (an oracle
//!   that does not depend on outputs).
//! - [`random_scop`]: random, well-formed SCoPs with a `main` (the
//!   random-program oracle's programs, `executor/tests/fuzz.rs`).
//! - [`TempDir`]: a fresh temporary directory, removed when dropped.
//! - [`tree::Tree`]: a schedule tree's bands (depth, flags, statements,
//!   isolation) and marks read through isl, for assertions on structure
//!   rather than on YAML text.
//!
//! - [`tier`]: the fast tier (the default), the heavy tier and the full
//!   sweeps (`POLYTUNE_TIER`), and the fast tier's samples.
//!
//! Two more environment variables, for the tests only:
//! - `POLYTUNE_ITEM_LIMIT_S=N` replaces every limit (seconds);
//! - `POLYTUNE_TEST_HANG=TEXT` makes every [`item`] whose name contains
//!   `TEXT` hang where it starts: the hook that shows a hang fails fast.

mod browser;
mod evaluate;
mod gpu;
pub mod instances;
mod kernels;
pub mod random_scop;
mod temp;
pub mod tier;
pub mod tree;

pub use browser::Browser;
pub use evaluate::evaluator;
pub use gpu::{gpu_profile, has_gpu};
pub use kernels::{
    extract_text, gemm_with_an_empty_dataset, kernel, kernels, load, load_own, own, root, Kernel,
};
pub use temp::TempDir;
pub use tier::{takes, tier, Tier};

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The exit status of a test process stopped by the watchdog (as `timeout`'s).
pub const EXIT_HUNG: i32 = 124;

/// The limit to use: `POLYTUNE_ITEM_LIMIT_S` when set, else `default`.
pub fn item_limit(default: Duration) -> Duration {
    match std::env::var("POLYTUNE_ITEM_LIMIT_S").ok().and_then(|s| s.trim().parse::<f64>().ok()) {
        Some(s) if s > 0.0 => Duration::from_secs_f64(s),
        _ => default,
    }
}

/// A watched item; the watch ends when it is dropped.
#[must_use = "the item is watched until this guard is dropped"]
pub struct Item {
    id: u64,
}

/// Items being watched: id -> (name, limit, deadline).
type Watched = Mutex<(u64, HashMap<u64, (String, Duration, Instant)>)>;

fn watched() -> &'static Watched {
    static WATCHED: OnceLock<Watched> = OnceLock::new();
    WATCHED.get_or_init(|| {
        std::thread::Builder::new()
            .name("testkit watchdog".into())
            .spawn(watchdog)
            .expect("spawning the test watchdog");
        Mutex::new((0, HashMap::new()))
    })
}

fn watchdog() {
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        let expired = {
            let w = watched().lock().unwrap_or_else(|e| e.into_inner());
            w.1.values().find(|(_, _, deadline)| now > *deadline).map(|(n, l, _)| (n.clone(), *l))
        };
        if let Some((name, limit)) = expired {
            // Straight to stderr: libtest captures only print macros, and
            // its buffers are lost at exit.
            let _ = writeln!(
                std::io::stderr(),
                "\ntest item `{name}` exceeded its time limit of {:.0} s: stopping the test process \
                 (POLYTUNE_ITEM_LIMIT_S changes the limit)",
                limit.as_secs_f64()
            );
            std::process::exit(EXIT_HUNG);
        }
    }
}

/// Start watching `name`: the test process ends (see the module doc) if the
/// returned guard is still alive after `limit` (see [`item_limit`]).
pub fn item(name: impl Into<String>, limit: Duration) -> Item {
    let name = name.into();
    let limit = item_limit(limit);
    let id = {
        let mut w = watched().lock().unwrap_or_else(|e| e.into_inner());
        w.0 += 1;
        let id = w.0;
        w.1.insert(id, (name.clone(), limit, Instant::now() + limit));
        id
    };
    if std::env::var("POLYTUNE_TEST_HANG").is_ok_and(|h| !h.is_empty() && name.contains(h.as_str())) {
        // The test-only hook: this item never finishes.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Item { id }
}

impl Drop for Item {
    fn drop(&mut self) {
        watched().lock().unwrap_or_else(|e| e.into_inner()).1.remove(&self.id);
    }
}

/// `cmd`'s output like [`Command::output`], but the child is killed and the
/// test fails, naming the command, once `limit` (see [`item_limit`]) has
/// passed: a child process, unlike a thread, can be stopped.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let shown = format!("{cmd:?}");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown}: cannot start: {e}"));
    wait_within(child, &shown, limit)
}

/// Waits for `child` (spawned by the caller, `shown` naming it) as
/// [`output_within`] does: its piped stdout and stderr collected, killed
/// and failing the test past `limit`.
pub fn wait_within(mut child: Child, shown: &str, limit: Duration) -> Output {
    let limit = item_limit(limit);
    // Drain both pipes on threads of their own so that a chatty child never
    // blocks on a full pipe while we wait.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err.join().unwrap_or_default();
            panic!(
                "{shown}: exceeded its time limit of {:.0} s and was killed; its stderr:\n{}",
                limit.as_secs_f64(),
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}

/// The PostgreSQL server of the tests that need one (`POLYTUNE_TEST_POSTGRES`,
/// which `.ci/run` sets), or `None` after saying the test is skipped. Where
/// `CI` or `POLYTUNE_EXPECT_POSTGRES` is set a missing server fails the
/// test, so a run that must test PostgreSQL cannot skip it unnoticed.
pub fn postgres_url() -> Option<String> {
    match std::env::var("POLYTUNE_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let must = ["CI", "POLYTUNE_EXPECT_POSTGRES"].iter().any(|v| std::env::var_os(v).is_some());
            assert!(!must, "CI or POLYTUNE_EXPECT_POSTGRES is set but POLYTUNE_TEST_POSTGRES is not");
            eprintln!("POLYTUNE_TEST_POSTGRES is not set: the PostgreSQL test is skipped");
            None
        }
    }
}

/// Runs `work(i)` for `i` in `0..n` on two threads, each taking the next
/// item when it is done with one (a sweep's items differ widely in cost).
pub fn on_two_threads(n: usize, work: impl Fn(usize) + Sync) {
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = {
                    let mut next = next.lock().unwrap();
                    *next += 1;
                    *next - 1
                };
                if i >= n {
                    break;
                }
                work(i);
            });
        }
    });
}

/// Builds the original program of `k` and `program` with `ev`, runs both
/// at the dataset `k` was loaded with, and asserts that the outputs agree
/// (to `ev`'s tolerance).
pub fn assert_same_outputs(ev: &executor::evaluate::Evaluator, k: &Kernel, program: String) {
    let original = codegen::original_program(&k.source, &k.scop).unwrap();
    let reference = ev.reference(&original).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let m = ev.evaluate(&reference, &[program]).unwrap().remove(0);
    assert_eq!(m.status, executor::measure::Status::Ok, "{}: {}", k.name, m.reason);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_that_ends_in_time_is_forgotten() {
        {
            let _a = item("quick", Duration::from_millis(300));
        }
        // Past the limit of the dropped item: the watchdog must not fire.
        std::thread::sleep(Duration::from_millis(500));
        assert!(watched().lock().unwrap().1.values().all(|(n, _, _)| n != "quick"));
    }

    /// The body of the next test's child process (a no-op when run directly).
    #[test]
    fn hung_item_child() {
        if std::env::var_os("TESTKIT_CHILD").is_some() {
            let _a = item("the slow item", Duration::from_millis(300));
            std::thread::sleep(Duration::from_secs(30));
        }
    }

    #[test]
    fn a_hung_item_stops_the_process_naming_it() {
        let t = Instant::now();
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "tests::hung_item_child", "--nocapture"]).env("TESTKIT_CHILD", "1");
        let out = output_within(&mut cmd, Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(EXIT_HUNG), "{err}");
        assert!(err.contains("test item `the slow item` exceeded its time limit"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_slow_child_is_killed_and_named() {
        let t = Instant::now();
        let r = std::panic::catch_unwind(|| {
            output_within(Command::new("sleep").arg("30"), Duration::from_millis(300))
        });
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("sleep") && msg.contains("killed"), "{msg}");
        assert!(t.elapsed() < Duration::from_secs(5));
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        );
        assert_eq!(
            (out.status.code(), &out.stdout[..], &out.stderr[..]),
            (Some(3), &b"out\n"[..], &b"err\n"[..])
        );
    }
}
