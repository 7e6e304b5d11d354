//! `polytune explain` on a schedule file: the steps, as JSON and as text, and the errors a
//! user meets first.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn polytune(args: &[&str]) -> std::process::Output {
    testkit::output_within(Command::new(env!("CARGO_BIN_EXE_polytune")).args(args).current_dir(root()), LIMIT)
}

#[test]
fn a_schedule_file_is_explained_as_steps_of_the_original() {
    let kernel = "polybench/linear-algebra/2mm.c";
    let out = polytune(&["schedule", kernel, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tree = json["schedule"]["tree"].as_str().unwrap();
    let dir = std::env::temp_dir().join(format!("polytune-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
