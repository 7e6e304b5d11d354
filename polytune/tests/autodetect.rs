//! A program without pragmas (`--autodetect`): its regions listed, the hot
//! ones (by a profile of one run with the user's arguments) tuned from
//! captures, the cold ones left alone, and a winner exported into the
//! user's own lines.

mod common;

use std::path::Path;

use common::{polytune_in, root, temp_dir};

#[test]
fn the_hot_loop_nests_of_a_program_without_pragmas_are_found_timed_and_tuned() {
    let dir = temp_dir("autodetect");
    let file = root().join("model/tests/fixtures/hotcold.c");
    let f = file.to_str().unwrap();
    let out = polytune_in(&dir, &["scop", "--autodetect", f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("4 region(s) found without pragmas"), "{text}");
    assert!(text.contains("not a region: ") && text.contains("hotcold.c:54:5: call to `printf`"), "{text}");

    // Its size from the command line: the profile and the captures run it with `-- 200`.
    let db = dir.join("store.db");
    let db = db.to_str().unwrap();
    let args =
        ["tune", "--autodetect", f, "--evals", "8", "--runs", "1", "--threads", "1", "--db", db, "--json"];
    let out = polytune_in(&dir, &[&args[..], &["--", "200"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let said = |kernel: &str| {
        err.lines()
            .find(|l| l.trim_start().starts_with(&format!("{kernel} ")))
            .unwrap_or_default()
            .to_string()
    };
    // The two products take nearly all of the run; checksum and the initialisation do not.
    for (kernel, tuned) in
        [("hotcold", false), ("hotcold.1", false), ("hotcold.2", true), ("hotcold.3", true)]
    {
        let line = said(kernel);
        assert!(line.ends_with(if tuned { ", tuned" } else { ", not tuned" }), "{kernel}: {line}\n{err}");
    }
    assert!(said("hotcold.3").contains("main(), lines 43-49"), "{err}");
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Hottest first, each with a verified best.
    let kernels: Vec<&str> = (0..2).filter_map(|k| t["best"][k]["kernel"].as_str()).collect();
    assert_eq!(kernels, ["hotcold.3", "hotcold.2"], "{t}");
    assert!(t["best"][2].is_null(), "{t}");
    // The campaign keeps the profile its regions were chosen from.
    let out = polytune_in(&dir, &["best", "hotcold.3", "--db", db]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let found =
        text.lines().find(|l| l.trim_start().starts_with("found by --autodetect:")).unwrap_or_default();
    assert!(found.contains("main(), lines 43-49") && found.contains("of the program"), "{text}");
    assert!(
        found.contains("hotcold.2 ") && found.contains("hotcold.1 ") && found.contains("% not tuned"),
        "{text}"
    );

    // The product inside the `while`, exported in place of its own lines;
    // then the file, both products in place.
    let Some(one) = exported(&dir, "hotcold.3", db) else { return };
    let original = std::fs::read_to_string(&file).unwrap();
    let tuned = std::fs::read_to_string(&one).unwrap();
    let kept = |range: std::ops::Range<usize>| {
        original.lines().skip(range.start).take(range.len()).collect::<Vec<_>>()
    };
    for line in kept(0..42).iter().chain(&kept(49..original.lines().count())) {
        assert!(tuned.contains(line), "a line outside the region is gone: {line}");
    }
    // At another size than the one tuned at: the regions' code is parametric.
    let want = printed(&file, &dir);
    assert_close(&printed(&one, &dir), &want);
    let Some(both) = exported(&dir, f, db) else { return };
    let text = std::fs::read_to_string(&both).unwrap();
    assert!(
        text.contains("export of kernel hotcold.2") && text.contains("export of kernel hotcold.3"),
        "{text}"
    );
    assert_eq!(
        text.matches("#pragma GCC push_options").count(),
        text.matches("#pragma GCC pop_options").count()
    );
    assert_close(&printed(&both, &dir), &want);
}

/// `polytune export WHAT` written to a file of `dir`; `None` where nothing
/// beat the original beyond the noise.
fn exported(dir: &Path, what: &str, db: &str) -> Option<std::path::PathBuf> {
    let name = Path::new(what).file_stem().unwrap().to_str().unwrap().replace('.', "_");
    let path = dir.join(format!("{name}.tuned.c"));
    let out = polytune_in(dir, &["export", what, "--db", db, "-o", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        assert!(err.contains("nothing to export") || err.contains("no SCoP has a winner"), "{err}");
        return None;
    }
    assert!(out.status.success() && err.contains("replayed from capture"), "{err}");
    Some(path)
}

/// What the program built from `source` prints at size 60.
fn printed(source: &Path, dir: &Path) -> String {
    let binary = dir.join(format!("{}.bin", source.file_stem().unwrap().to_str().unwrap()));
    common::printed(source, &[], &binary, &["60"], dir)
}

/// The same numbers, the sums of products within rounding.
fn assert_close(a: &str, b: &str) {
    let numbers = |s: &str| s.split_whitespace().filter_map(|w| w.parse::<f64>().ok()).collect::<Vec<_>>();
    let (na, nb) = (numbers(a), numbers(b));
    assert_eq!(na.len(), nb.len(), "{a}\n{b}");
    assert!(na.iter().zip(&nb).all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs().max(1.0)), "{a}\n{b}");
}
