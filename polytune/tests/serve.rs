//! `polytune serve` over real HTTP: each endpoint on a store written here, the loopback-only
//! default, and the token check.

mod common;

use std::time::Duration;

use common::{http_get, serve, Server};

use store::{NewCampaign, Record, Role, Store};

/// (status, body as JSON) of `GET path`, with an optional bearer token.
fn get(server: &Server, path: &str, token: Option<&str>) -> (u16, serde_json::Value) {
    let (status, body) = http_get(server, path, token);
    (status, serde_json::from_str(&body).unwrap_or(serde_json::Value::Null))
}

/// A store with gemm measured on one machine: original 2 s, a variant 0.5 s.
fn fixture(dir: &std::path::Path) -> String {
    let db = dir.join("store.db").display().to_string();
    let s = Store::open(&db).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s
        .campaign(&NewCampaign {
            key: "k".into(),
            config_json: "{}".into(),
            strategy: "random".into(),
            seed: 1,
            budget: vocab::Budget { evals: Some(2), time: None },
        })
        .unwrap();
    for (role, n, median) in [(Role::Reference, 1, 2.0), (Role::Variant, 2, 0.5)] {
        s.record(&Record {
            campaign: c.id,
            program: p,
            machine: m,
            role,
            point_id: format!("{n:016x}"),
            point_json: format!("{{\"n\":{n}}}"),
            schedule: None,
            build: None,
            status: store::Status::Ok,
            reason: String::new(),
            median_s: Some(median),
            spread: Some(0.01),
            samples: vec![median],
            costs: None,
            kernel_s: None,
            origin: None,
            rounding_noise: None,
        })
        .unwrap();
    }
    db
}

fn temp(tag: &str) -> testkit::TempDir {
    testkit::TempDir::new(&format!("serve-{tag}"))
}

#[test]
fn endpoints_answer_from_the_store() {
    let _item = testkit::item("serve endpoints", Duration::from_secs(120));
    let dir = temp("endpoints");
    let db = fixture(&dir);
    let server = serve(&["--db", &db, "--addr", "127.0.0.1:0"]).unwrap();
    let (status, best) = get(&server, "/best/gemm", None);
    assert_eq!(status, 200, "{best}");
    assert_eq!((best["speedup"].as_f64(), best["machine"].as_str()), (Some(4.0), Some("box")));
    assert_eq!(get(&server, "/best/gemm?machine=box&dataset=LARGE", None).0, 200);
    assert_eq!(get(&server, "/best/gemm?dataset=MINI", None).0, 404);
    assert_eq!(get(&server, "/best/lu", None).0, 404);
    let (_, machines) = get(&server, "/machines", None);
    assert_eq!(machines[0]["measurements"].as_i64(), Some(2));
    let (_, campaigns) = get(&server, "/campaigns", None);
    assert_eq!(
        (campaigns[0]["measurements"].as_i64(), campaigns[0]["verified"].as_i64()),
        (Some(2), Some(2))
    );
    let (_, rows) = get(&server, "/measurements?kernel=gemm&limit=1", None);
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["role"].as_str(), Some("variant"));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_loopback_without_a_token_and_the_token_is_checked() {
    let _item = testkit::item("serve token", Duration::from_secs(120));
    let dir = temp("token");
    let db = fixture(&dir);
    let err = serve(&["--db", &db, "--addr", "0.0.0.0:0"]).err().unwrap();
    assert!(err.contains("not a loopback address") && err.contains("--token-file"), "{err}");
    let token_file = dir.join("token");
    std::fs::write(&token_file, "short\n").unwrap();
    let err = serve(&["--db", &db, "--addr", "127.0.0.1:0", "--token-file", token_file.to_str().unwrap()])
        .err()
        .unwrap();
    assert!(err.contains("at least 16 characters"), "{err}");
    let token = "0123456789abcdef-secret";
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let server =
        serve(&["--db", &db, "--addr", "127.0.0.1:0", "--token-file", token_file.to_str().unwrap()]).unwrap();
    assert_eq!(get(&server, "/machines", None).0, 401);
    assert_eq!(get(&server, "/machines", Some("wrong-token-wrong-token")).0, 401);
    assert_eq!(get(&server, "/machines", Some(token)).0, 200);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
