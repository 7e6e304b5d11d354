//! `cargo bench -p store`: measurements recorded per second (one transaction each, as the
//! tuner records them) and query latency with 1,000,000 measurements in the store
//! (`POLYTUNE_BENCH_ROWS` sets another count). On a SQLite file in a temp dir, or at
//! `POLYTUNE_BENCH_SQLITE` (a new file, kept afterwards: `polytune serve --db` it to time
//! the HTTP side), and on PostgreSQL when `POLYTUNE_TEST_POSTGRES` names a server
//! (`POLYTUNE_BENCH_ONLY=sqlite|postgres` runs one of the two).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{new_campaign, ok_record, Fresh};
use store::{Record, Role, Store};

const SINGLE_INSERTS: u64 = 2_000;
const TOTAL: u64 = 1_000_000;
const CAMPAIGNS: u64 = 100;
const QUERIES: usize = 50;

fn main() {
    // `cargo bench` passes --bench; anything else (`cargo test --benches`) gets a short run.
    let quick = !std::env::args().any(|a| a == "--bench");
    // `POLYTUNE_BENCH_ONLY=postgres` (or `sqlite`): one backend.
    let only = std::env::var("POLYTUNE_BENCH_ONLY").unwrap_or_default();
    match std::env::var("POLYTUNE_BENCH_SQLITE") {
        _ if only == "postgres" => {}
        Ok(path) => {
            assert!(!std::path::Path::new(&path).exists(), "POLYTUNE_BENCH_SQLITE: {path} exists already");
            bench("sqlite", &path, quick)
        }
        Err(_) => bench("sqlite", Fresh::sqlite().target(), quick),
    }
    if only == "sqlite" {
    } else if std::env::var_os("POLYTUNE_TEST_POSTGRES").is_some() {
        bench("postgres", Fresh::postgres().expect("POLYTUNE_TEST_POSTGRES is set").target(), quick);
    } else {
        println!("postgres: POLYTUNE_TEST_POSTGRES is not set, skipped");
    }
}

fn bench(backend: &str, target: &str, quick: bool) {
    let rows =
        std::env::var("POLYTUNE_BENCH_ROWS").ok().map(|r| r.parse::<u64>().expect("POLYTUNE_BENCH_ROWS"));
    let (single, total) = if quick { (50, 2_000) } else { (SINGLE_INSERTS, rows.unwrap_or(TOTAL)) };
    assert!(total % CAMPAIGNS == 0 && total >= single, "rows: a multiple of {CAMPAIGNS}, at least {single}");
    let s = Store::open(target).unwrap();
    let machines = [s.machine("box", r#"{"cpu":"a"}"#).unwrap(), s.machine("big", r#"{"cpu":"b"}"#).unwrap()];
    // Ten kernels, two datasets each; half of all measurements are gemm's (the worst case
    // for `best gemm`), spread over the campaigns.
    let kernels = ["gemm", "2mm", "3mm", "atax", "bicg", "lu", "syrk", "mvt", "jacobi-2d", "heat-3d"];
    let programs: Vec<(i64, &str)> = kernels
        .iter()
        .flat_map(|k| ["MEDIUM", "LARGE"].map(|d| (s.program(k, &format!("{k}.c"), k, d).unwrap(), *k)))
        .collect();
    let campaigns: Vec<(i64, i64, i64)> = (0..CAMPAIGNS)
        .map(|i| {
            let id = s.campaign(&new_campaign(&format!("c{i}"))).unwrap().id;
            // Campaigns 0..50 tune gemm, the others the other programs in turn.
            let program =
                if i < CAMPAIGNS / 2 { programs[(i % 2) as usize].0 } else { programs[(i % 20) as usize].0 };
            (id, program, machines[(i / 2 % 2) as usize])
        })
        .collect();
    let per_campaign = total / CAMPAIGNS;
    let record_of = |n: u64| -> Record {
        let (campaign, program, machine) = campaigns[(n / per_campaign) as usize];
        let k = n % per_campaign;
        let role = if k == 0 { Role::Reference } else { Role::Variant };
        // Variant times around a tenth of the reference's, deterministic but scattered.
        let median = if k == 0 { 1.0 } else { 0.05 + (k.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0 };
        let mut rec = ok_record(campaign, program, machine, role, k, median);
        if k % 10 == 7 {
            rec.status = store::Status::Wrong;
        }
        rec
    };

    let start = Instant::now();
    for n in 0..single {
        s.record(&record_of(n)).unwrap();
    }
    let per_s = single as f64 / start.elapsed().as_secs_f64();
    println!("{backend}: record, one transaction each: {per_s:.0} measurements/s ({single} records)");

    let start = Instant::now();
    let batch: Vec<u64> = (single..total).collect();
    for chunk in batch.chunks(5_000) {
        let recs: Vec<Record> = chunk.iter().map(|&n| record_of(n)).collect();
        s.record_all(&recs).unwrap();
    }
    let rate = (total - single) as f64 / start.elapsed().as_secs_f64();
    println!("{backend}: record_all, 5,000 per transaction: {rate:.0} measurements/s");
    assert_eq!(s.counts().unwrap().measurements as u64, total);

    let best = s.best("gemm", None, None).unwrap().unwrap();
    println!("{backend}: best gemm: speedup {:.2} in campaign {}", best.speedup, best.campaign);
    time(backend, total, "best(gemm)", || drop(s.best("gemm", None, None).unwrap().unwrap()));
    time(backend, total, "best(gemm, box, LARGE)", || {
        drop(s.best("gemm", Some("box"), Some("LARGE")).unwrap())
    });
    time(backend, total, "best(lu)", || drop(s.best("lu", None, None).unwrap()));
    time(backend, total, "history(gemm, 20)", || assert_eq!(s.history(Some("gemm"), 20).unwrap().len(), 20));
    time(backend, total, "history(heat-3d, 20)", || drop(s.history(Some("heat-3d"), 20).unwrap()));
    time(backend, total, "machines()", || assert_eq!(s.machines().unwrap().len(), 2));
    time(backend, total, "outcomes(campaign)", || drop(s.outcomes(campaigns[0].0).unwrap()));
}

/// Prints the median and the maximum of QUERIES calls of `f`.
fn time(backend: &str, total: u64, what: &str, mut f: impl FnMut()) {
    let mut times: Vec<Duration> = (0..QUERIES)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{backend}: {what} with {total} measurements: median {:.2?}, max {:.2?} ({QUERIES} calls)",
        times[QUERIES / 2],
        times[QUERIES - 1]
    );
}
