//! What the workspace's tests share.
//!
//! [`within`] runs one item of a heavy test (a kernel's schedule under one
//! setting, one variant's code generation) under a wall-clock limit, so that
//! a hang fails its test in minutes, naming the item, instead of holding CI
//! until its global limit. The work runs on a thread of its own; a thread
//! that never returns cannot be killed, but the test fails and the test
//! process exits at the end of the run, taking it along.
//!
//! Two environment variables, for the tests only:
//! - `POLYTUNE_ITEM_LIMIT_S=N` replaces every item's limit (seconds);
//! - `POLYTUNE_TEST_HANG=TEXT` makes every item whose name contains `TEXT`
//!   hang instead of running: the hook that shows a hang fails fast.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The limit for an item: `POLYTUNE_ITEM_LIMIT_S` when set, else `default`.
pub fn item_limit(default: Duration) -> Duration {
    match std::env::var("POLYTUNE_ITEM_LIMIT_S").ok().and_then(|s| s.trim().parse::<f64>().ok()) {
        Some(s) if s > 0.0 => Duration::from_secs_f64(s),
        _ => default,
    }
}

/// Run `f` on a thread of its own and return its result, or panic with
/// `item` named once `limit` (see [`item_limit`]) has passed. A panic inside
/// `f` is re-raised here with the item named.
pub fn within<T, F>(item: &str, limit: Duration, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let limit = item_limit(limit);
    let hang =
        std::env::var("POLYTUNE_TEST_HANG").ok().filter(|h| !h.is_empty() && item.contains(h.as_str()));
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::Builder::new()
        .name(format!("item {item}"))
        .spawn(move || {
            if hang.is_some() {
                // The test-only hook: this item never finishes.
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(out);
        })
        .expect("spawning a test thread");
    match rx.recv_timeout(limit) {
        Ok(Ok(out)) => out,
        Ok(Err(panic)) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            panic!("{item}: panicked: {why}")
        }
        Err(_) => panic!(
            "{item}: exceeded its time limit of {:.0} s (ran {:.0} s; POLYTUNE_ITEM_LIMIT_S changes the limit)",
            limit.as_secs_f64(),
            started.elapsed().as_secs_f64()
        ),
    }
}

/// `cmd`'s output like [`Command::output`], but the child is killed and the
/// test fails, naming the command, once `limit` (see [`item_limit`]) has
/// passed: a child process, unlike a thread, can be stopped.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let limit = item_limit(limit);
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown}: cannot start: {e}"));
    // Drain both pipes on threads of their own so that a chatty child never
    // blocks on a full pipe while we wait.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_result_within_the_limit() {
        assert_eq!(within("quick", Duration::from_secs(10), || 6 * 7), 42);
    }

    #[test]
    fn a_slow_item_fails_naming_it() {
        let t = Instant::now();
        let r = std::panic::catch_unwind(|| {
            within("slow item", Duration::from_millis(200), || std::thread::sleep(Duration::from_secs(30)))
        });
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("slow item") && msg.contains("time limit"), "{msg}");
        assert!(t.elapsed() < Duration::from_secs(5));
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

    #[test]
    fn a_panic_inside_names_the_item() {
        let r = std::panic::catch_unwind(|| within("bad item", Duration::from_secs(10), || panic!("boom")));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("bad item") && msg.contains("boom"), "{msg}");
    }
}
