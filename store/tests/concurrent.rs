//! Processes against one store: two write the same store at once; one is killed (SIGKILL)
//! while it writes. This binary is its own helper: started with `POLYTUNE_TEST_WRITER` set it
//! is a writer; otherwise it starts writers on fresh stores and checks what they left. (No
//! libtest harness: a writer must not run tests.)

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{new_campaign, ok_record, Fresh};
use store::{Role, Store};

const ROWS: u64 = 200;

/// A test's name, its body, and the store it runs on (`None`: no server, nothing to do).
type Case = (&'static str, fn(&Fresh), Option<Fresh>);

fn main() {
    if let Ok(target) = std::env::var("POLYTUNE_TEST_WRITER") {
        match std::env::var("POLYTUNE_TEST_WRITER_ID") {
            Ok(id) => write(&target, id.parse().unwrap()),
            Err(_) => write_until_killed(&target),
        }
        return;
    }
    println!("\nrunning 4 tests");
    let mut failed = 0;
    let cases: [Case; 4] = [
        ("sqlite_two_processes", two_writers, Some(Fresh::sqlite())),
        ("postgres_two_processes", two_writers, Fresh::postgres()),
        ("sqlite_kill_9_keeps_every_commit", killed_writer, Some(Fresh::sqlite())),
        ("postgres_kill_9_keeps_every_commit", killed_writer, Fresh::postgres()),
    ];
    for (name, run, fresh) in cases {
        // Without a server Fresh::postgres says why (and panics in CI): counted as passed,
        // like the libtest tests that return early.
        let (ok, note) = match fresh {
            Some(fresh) => (std::panic::catch_unwind(|| run(&fresh)).is_ok(), ""),
            None => (true, " (no server: nothing done)"),
        };
        println!("test {name} ... {}{note}", if ok { "ok" } else { "FAILED" });
        failed += usize::from(!ok);
    }
    println!(
        "\ntest result: {}. {} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out\n",
        if failed == 0 { "ok" } else { "FAILED" },
        4 - failed
    );
    std::process::exit(i32::from(failed > 0));
}

/// Each writer opens the store itself (both may create and migrate the file at the same
/// moment), then records ROWS measurements, one transaction each, on shared and own rows.
fn write(target: &str, writer: u64) {
    let s = Store::open(target).unwrap_or_else(|e| panic!("writer {writer}: {e}"));
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let shared = s.campaign(&new_campaign("shared")).unwrap().id;
    let own = s.campaign(&new_campaign(&format!("writer-{writer}"))).unwrap().id;
    for n in 0..ROWS {
        // Shared points (same ids from both writers) and distinct measurements.
        s.record(&ok_record(own, p, m, Role::Variant, n, 1.0 + n as f64)).unwrap();
        // Both writers race on the same (campaign, point, role): one row must result.
        s.record(&ok_record(shared, p, m, Role::Variant, n, 1.0)).unwrap();
    }
}

fn two_writers(fresh: &Fresh) {
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let children: Vec<_> = (0..2)
        .map(|writer| {
            Command::new(&exe)
                .env("POLYTUNE_TEST_WRITER", fresh.target())
                .env("POLYTUNE_TEST_WRITER_ID", writer.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer failed");
    }
    let s = Store::open(fresh.target()).unwrap();
    let counts = s.counts().unwrap();
    assert_eq!(counts.measurements as u64, 3 * ROWS, "{counts:?}");
    assert_eq!((counts.points as u64, counts.campaigns, counts.machines), (ROWS, 3, 1));
    for c in s.campaigns().unwrap() {
        assert_eq!(s.outcomes(c.id).unwrap().len() as u64, ROWS, "campaign {}", c.key);
    }
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
    println!("    {} rows from 2 processes in {:.2?}", 4 * ROWS, start.elapsed());
}

/// Records one measurement after another and prints each point's number once it is committed,
/// until it is killed.
fn write_until_killed(target: &str) {
    let s = Store::open(target).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("killed")).unwrap().id;
    let mut out = std::io::stdout().lock();
    for n in 0.. {
        s.record(&ok_record(c, p, m, Role::Variant, n, 1.0)).unwrap();
        writeln!(out, "{n}").unwrap();
        out.flush().unwrap();
    }
}

/// kill -9 in the middle of writing loses no committed measurement and leaves a sound store.
fn killed_writer(fresh: &Fresh) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("POLYTUNE_TEST_WRITER", fresh.target())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut committed = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        committed.push(line.unwrap().parse::<u64>().unwrap());
        if committed.len() == 100 {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let s = Store::open(fresh.target()).unwrap();
    let c = s.campaign(&new_campaign("killed")).unwrap().id;
    let measured: Vec<String> = s.outcomes(c).unwrap().into_iter().map(|o| o.point_id).collect();
    assert!(measured.len() >= committed.len(), "{} < {}", measured.len(), committed.len());
    for n in committed {
        assert!(measured.contains(&common::point_id(n)), "point {n} was committed and is gone");
    }
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
    println!("    killed after 100 commits; {} measurements found", measured.len());
}
