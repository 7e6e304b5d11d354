//! `polytune explain` on a schedule file: the steps, as JSON and as text, and the errors a
//! user meets first.

use std::path::PathBuf;

mod common;
use common::run as polytune;

#[test]
fn a_schedule_file_is_explained_as_steps_of_the_original() {
    let kernel = "polybench/linear-algebra/2mm.c";
    let out = polytune(&["schedule", kernel, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tree = json["schedule"]["tree"].as_str().unwrap();
    let dir = testkit::TempDir::new("explain");
    let file = dir.join("2mm.tree");
    std::fs::write(&file, tree).unwrap();
    let file = file.to_str().unwrap();

    let out = polytune(&["explain", "--schedule", file, "--file", kernel, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = e["steps"].as_array().unwrap();
    // 2mm's initialisations are moved into the k loops of their updates: loops inserted
    // and fused, whatever else the script does.
    let ops: Vec<&str> = steps.iter().map(|s| s["op"].as_str().unwrap()).collect();
    assert!(ops.contains(&"insert") && ops.contains(&"fuse"), "{ops:?}");
    assert_eq!(e["script"].as_str().unwrap().lines().count(), steps.len());

    let out = polytune(&["explain", "--schedule", file, "--file", kernel]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Clay transformation(s)") && text.contains("# S1"), "{text}");

    let out = polytune(&["explain", "--schedule", file]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--schedule needs --file"));
    let out = polytune(&["explain"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("name a kernel"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The round trip a user makes: explain a schedule, replay the script with `apply` (the
/// variant verified against the original), then edit it into an illegal one, which fails
/// naming the step and the dependence it breaks.
#[test]
fn an_explained_script_is_applied_and_an_illegal_edit_is_named() {
    let kernel = "polybench/stencils/jacobi-2d.c";
    let out = polytune(&["schedule", kernel, "--target", "openmp", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = testkit::TempDir::new("apply");
    let tree = dir.join("j2d.tree");
    std::fs::write(&tree, json["schedule"]["tree"].as_str().unwrap()).unwrap();
    let out = polytune(&["explain", "--schedule", tree.to_str().unwrap(), "--file", kernel, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let script = e["script"].as_str().unwrap().to_string();
    // The tiled wavefront of jacobi-2d is not the original order: the script has steps.
    assert!(script.contains("skew"), "{script}");

    let path = dir.join("j2d.clay");
    std::fs::write(&path, &script).unwrap();
    let out_dir = dir.join("out");
    let (p, o) = (path.to_str().unwrap(), out_dir.to_str().unwrap());
    let args = ["apply", kernel, "--script", p, "--dataset", "MINI", "--runs", "1", "--out", o, "--json"];
    let out = polytune(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "ok", "{r}");
    assert!(out_dir.join("jacobi-2d.MINI.j2d.c").exists());

    // Reversing the time loop breaks the dependences carried by it.
    let steps = script.lines().count();
    std::fs::write(&path, format!("{script}\nreverse (0)\n")).unwrap();
    let out = polytune(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let named = format!("step {} `reverse (0)`", steps + 1);
    assert!(err.contains(&named) && err.contains("dependence from S"), "{err}");

    std::fs::write(&path, "frobnicate (0)\n").unwrap();
    let err = String::from_utf8_lossy(&polytune(&args).stderr).to_string();
    assert!(err.contains("line 1: unknown transformation `frobnicate`"), "{err}");
    assert_eq!(err.matches("line 1").count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16's acceptance: in a store built by a short campaign, every point measured for
/// each kernel (the reference points isl, pluto-like and identity, a searched one, the
/// best among them), explained by `polytune explain --point`, replay with
/// `apply_script` to a schedule that orders every pair of instances as the stored one, and
/// the script run by `polytune apply` (its code steps instead of `--tile`) is verified
/// against the original. Two kernels by default; the 30 with `POLYTUNE_FULL_SWEEP=1`.
#[test]
fn the_best_and_reference_points_of_a_campaign_replay_from_their_scripts() {
    let full = std::env::var_os("POLYTUNE_FULL_SWEEP").is_some();
    let kernels: Vec<PathBuf> = testkit::kernels()
        .into_iter()
        .filter(|p| full || ["gemm", "jacobi-2d"].iter().any(|k| p.file_stem().is_some_and(|f| f == *k)))
        .collect();
    let dir = testkit::TempDir::new("roundtrip");
    let db = dir.join("store.db");
    let db_arg = db.to_str().unwrap();
    // One campaign per kernel (a campaign spends its budget kernel after kernel): the
    // three references, then a variant.
    for k in &kernels {
        let args = ["tune", k.to_str().unwrap(), "--dataset", "MINI", "--evals", "4", "--runs", "1"];
        let out = polytune(&[&args[..], &["--threads", "2", "--db", db_arg]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    let store = store::Store::open(db_arg).unwrap();
    let mut checked = 0;
    for path in &kernels {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let k = testkit::load(path, "MINI");
        let best = store.best(name, None, None).unwrap().unwrap_or_else(|| panic!("{name}: no best"));
        let mut ids: Vec<String> = store
            .history(Some(name), 1000)
            .unwrap()
            .into_iter()
            // Every point that ran (a point that timed out while scheduling has no schedule).
            .filter(|r| r.role == store::Role::Variant && r.status == store::Status::Ok)
            .map(|r| r.point_id)
            .collect();
        ids.push(best.point_id.clone());
        ids.sort();
        ids.dedup();
        for id in ids {
            let what = format!("{name} point {id}");
            let out = polytune(&["explain", name, "--point", &id, "--db", db_arg, "--json"]);
            assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
            let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let script = e["script"].as_str().unwrap();
            let stored = store.measured_schedule(name, &id).unwrap().unwrap().tree;
            let ctx = model::isl::new_context();
            let applied = space::clay::apply_script(&ctx, &k.scop, &k.deps, script)
                .unwrap_or_else(|e| panic!("{what}: {e}\n{script}"));
            let (a, b) = (
                space::clay::tree_map(&ctx, &applied.tree).unwrap(),
                space::clay::tree_map(&ctx, &stored).unwrap(),
            );
            assert!(space::clay::refines(&ctx, &k.scop, &a, &b).unwrap(), "{what}:\n{script}");

            let file = dir.join(format!("{name}-{id}.clay"));
            std::fs::write(&file, script).unwrap();
            let out_dir = dir.join("out");
            let p = path.to_str().unwrap();
            // One thread: the parallel loops stay marked, and a run beside other tests
            // cannot spin two OpenMP threads on one busy core past its time limit.
            let mut apply = vec!["apply", p, "--script", file.to_str().unwrap(), "--dataset", "MINI"];
            apply.extend(["--runs", "1", "--threads", "1", "--out", out_dir.to_str().unwrap(), "--json"]);
            let out = polytune(&apply);
            assert!(out.status.success(), "{what}: {}\n{script}", String::from_utf8_lossy(&out.stderr));
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(r["status"], "ok", "{what}: {r}\n{script}");
            checked += 1;
        }
    }
    // The identity point and at least one more per kernel (adi's slower points may run
    // out of scheduling time at MINI's budget).
    assert!(checked >= 2 * kernels.len(), "{checked}");
    let _ = std::fs::remove_dir_all(&dir);
}
