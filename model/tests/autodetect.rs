//! Regions found without pragmas (`ExtractOptions::autodetect`): which
//! runs of statements become SCoPs, where they stand, why the others do
//! not, and — against an oracle written by hand, PolyBench's own pragmas —
//! that a kernel stripped of its pragmas is found whole.

use std::path::{Path, PathBuf};

use model::scop::{self, ExtractOptions, Scop, Source};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn detect(path: &Path, cc_args: &[String]) -> (Source, Vec<Scop>, Vec<scop::ScopError>) {
    let opts = ExtractOptions { cc_args: cc_args.to_vec(), autodetect: true, ..Default::default() };
    scop::detect(path, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// A scratch directory of this test's own.
fn scratch(name: &str) -> testkit::TempDir {
    testkit::TempDir::new(&format!("autodetect-{name}"))
}

#[test]
fn the_loop_nests_of_a_program_without_pragmas_are_found() {
    let path = fixture("hotcold.c");
    let (source, scops, refused) = detect(&path, &[]);
    let found: Vec<(&str, u32, u32)> =
        scops.iter().map(|s| (s.function.as_str(), s.start.line, s.last_line(&source))).collect();
    // checksum's nest; main's initialisation (up to the printf); the
    // product; the loop inside the `while` with its `t++`.
    assert_eq!(
        found,
        [("checksum", 11, 13), ("main", 27, 31), ("main", 34, 41), ("main", 43, 49)],
        "{found:?}"
    );
    assert!(scops.iter().all(|s| s.detected));
    // What is left: a loop that calls printf, a loop bound read from data.
    let why: Vec<String> = refused.iter().map(ToString::to_string).collect();
    assert_eq!(refused.len(), 2, "{why:#?}");
    assert!(why[0].contains(":54:") && why[0].contains("printf"), "{why:#?}");
    assert!(why[1].contains(":56:") && why[1].contains("v[i]"), "{why:#?}");
    // Every statement keeps its own line of the file.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for s in scops.iter().flat_map(|s| &s.statements) {
        let line = lines[s.location.line as usize - 1];
        assert!(
            line.contains(s.text.trim().trim_end_matches(';')),
            "{}: line {}: {line}",
            s.text,
            s.location.line
        );
    }
}

#[test]
fn pragmas_and_files_without_a_region_are_refused_with_the_reason() {
    let dir = scratch("refused");
    let marked = dir.join("marked.c");
    std::fs::write(&marked, "void f(int n, double *a)\n{\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    a[i] = 0;\n#pragma endscop\n}\n").unwrap();
    let opts = ExtractOptions { autodetect: true, ..Default::default() };
    let err = scop::extract(&marked, &opts).unwrap_err().to_string();
    assert!(err.contains("marked.c:4:") && err.contains("without --autodetect"), "{err}");
    let none = dir.join("none.c");
    std::fs::write(&none, "#include <stdio.h>\nvoid f(int n)\n{\n  int i;\n  for (i = 0; i < n; i++)\n    printf(\"%d\\n\", i);\n}\n").unwrap();
    let err = scop::extract(&none, &opts).unwrap_err().to_string();
    assert!(err.contains("found no region") && err.contains("none.c:6:") && err.contains("printf"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The statements of `scop` as the model sees them: text and domain.
fn statements(scop: &Scop) -> Vec<(String, String)> {
    scop.statements.iter().map(|s| (s.text.trim().to_string(), s.domain.clone())).collect()
}

#[test]
fn every_polybench_kernel_stripped_of_its_pragmas_is_found_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench");
    let dir = scratch("polybench");
    let mut kernels = 0;
    for group in ["datamining", "linear-algebra", "medley", "stencils"] {
        let group_dir = root.join(group);
        for entry in std::fs::read_dir(&group_dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "c") {
                continue;
            }
            kernels += 1;
            let cc_args = vec!["-DMINI_DATASET".to_string(), format!("-iquote{}", group_dir.display())];
            let opts = ExtractOptions { cc_args: cc_args.clone(), ..Default::default() };
            let (_, marked) = scop::extract(&path, &opts).unwrap_or_else(|e| panic!("{e}"));
            // The same file with its pragma lines blanked (lines keep their numbers).
            let text = std::fs::read_to_string(&path).unwrap();
            let stripped: String = text
                .split_inclusive('\n')
                .map(|l| {
                    match l.trim_start().starts_with("#pragma scop")
                        || l.trim_start().starts_with("#pragma endscop")
                    {
                        true => "\n",
                        false => l,
                    }
                })
                .collect();
            let copy = dir.join(path.file_name().unwrap());
            std::fs::write(&copy, stripped).unwrap();
            let (_, found, _) = detect(&copy, &cc_args);
            let want = statements(&marked[0]);
            assert!(
                found.iter().any(|s| s.function == marked[0].function && statements(s) == want),
                "{}: no region found is the marked SCoP; found {:?}",
                path.display(),
                found
                    .iter()
                    .map(|s| (s.function.clone(), s.start.line, s.statements.len()))
                    .collect::<Vec<_>>()
            );
        }
    }
    assert_eq!(kernels, 30);
    let _ = std::fs::remove_dir_all(&dir);
}
