//! Two OS processes write the same store at once. This binary is its own helper: started
//! with `POLYTUNE_TEST_WRITER` set it is a writer; otherwise it starts two writers on a
//! fresh store and checks what they left. (No libtest harness: a writer must not run tests.)

mod common;

use std::process::Command;
use std::time::Instant;

use common::{new_campaign, ok_record, Fresh};
use store::{Role, Store};

const ROWS: u64 = 200;

fn main() {
    if let Ok(target) = std::env::var("POLYTUNE_TEST_WRITER") {
        let writer: u64 = std::env::var("POLYTUNE_TEST_WRITER_ID").unwrap().parse().unwrap();
        write(&target, writer);
        return;
    }
    println!("\nrunning 2 tests");
    let mut failed = 0;
    for (name, fresh) in
        [("sqlite_two_processes", Some(Fresh::sqlite())), ("postgres_two_processes", Fresh::postgres())]
    {
        // Without a server Fresh::postgres says why (and panics in CI): counted as passed,
        // like the libtest tests that return early.
        let (ok, note) = match fresh {
            Some(fresh) => (std::panic::catch_unwind(|| two_writers(&fresh)).is_ok(), ""),
            None => (true, " (no server: nothing done)"),
        };
        println!("test {name} ... {}{note}", if ok { "ok" } else { "FAILED" });
        failed += usize::from(!ok);
    }
    println!(
        "\ntest result: {}. {} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out\n",
        if failed == 0 { "ok" } else { "FAILED" },
        2 - failed
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
        assert_eq!(s.measured(c.id).unwrap().len() as u64, ROWS, "campaign {}", c.key);
    }
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
    println!("    {} rows from 2 processes in {:.2?}", 4 * ROWS, start.elapsed());
}
