//! The PolyBench kernels of `polybench/` as the tests load them: the listing
//! (all 30, or the test fails) and one kernel's first SCoP with its
//! dependences.

use std::path::{Path, PathBuf};

use model::deps::{self, Dependences};
use model::scop::{self, ExtractOptions, Scop, Source};

/// The kernels' groups, as directories of `polybench/`.
const GROUPS: [&str; 4] = ["datamining", "linear-algebra", "medley", "stencils"];

/// The repository's root (testkit lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testkit has a parent").to_path_buf()
}

/// A program of our own among the test fixtures (`space/tests/fixtures/own`).
pub fn own(name: &str) -> PathBuf {
    root().join("space/tests/fixtures/own").join(name)
}

/// The first SCoP of a program of our own ([`own`]) with its dependences.
pub fn load_own(name: &str) -> (Scop, Dependences) {
    let (_, mut scops) =
        scop::extract(&own(name), &ExtractOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let s = scops.remove(0);
    let d = deps::analyze(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
    (s, d)
}

/// The SCoPs of C text `code`, written to `name` in a scratch directory
/// that lives as long as the test process (a SCoP names its file).
pub fn extract_text(name: &str, code: &str) -> Result<Vec<Scop>, scop::ScopError> {
    static DIR: std::sync::OnceLock<crate::TempDir> = std::sync::OnceLock::new();
    let path = DIR.get_or_init(|| crate::TempDir::new("extract-text")).join(name);
    std::fs::write(&path, code).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    scop::extract(&path, &ExtractOptions::default()).map(|(_, s)| s)
}

/// The 30 kernels' C files, sorted by path.
pub fn kernels() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for group in GROUPS {
        let dir = root().join("polybench").join(group);
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.expect("a directory entry").path();
            if p.extension().is_some_and(|x| x == "c") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), 30, "expected the 30 PolyBench kernels: {out:?}");
    out
}

/// A kernel's file from its path under `polybench/` (`linear-algebra/gemm.c`).
pub fn kernel(rel: &str) -> PathBuf {
    root().join("polybench").join(rel)
}

/// gemm.c written to `dir` with one more dataset, `EMPTY` (NK = 0: the
/// statement that accumulates never runs), the harness found by its
/// absolute path.
pub fn gemm_with_an_empty_dataset(dir: &Path) -> PathBuf {
    let harness = root().join("polybench/harness/polytune.h");
    let text = std::fs::read_to_string(kernel("linear-algebra/gemm.c")).expect("gemm.c is readable");
    let text = text.replace("\"../harness/polytune.h\"", &format!("\"{}\"", harness.display())).replace(
        "#if defined(MINI_DATASET)",
        "#if defined(EMPTY_DATASET)\n#define NI 20\n#define NJ 25\n#define NK 0\n#elif defined(MINI_DATASET)",
    );
    std::fs::create_dir_all(dir).expect("the directory can be made");
    let path = dir.join("gemm.c");
    std::fs::write(&path, text).expect("gemm.c can be written");
    path
}

/// A kernel's first SCoP, read with `-D{dataset}_DATASET`, and its dependences.
pub struct Kernel {
    /// The file's stem (`gemm`).
    pub name: String,
    pub source: Source,
    pub scop: Scop,
    pub deps: Dependences,
}

/// Loads `path` (absolute, or relative to `polybench/`) under a PolyBench
/// dataset (`MINI`, ..., `EXTRALARGE`); panics naming the file on any error.
pub fn load(path: impl AsRef<Path>, dataset: &str) -> Kernel {
    let path = root().join("polybench").join(path.as_ref());
    let opts = ExtractOptions { cc_args: vec![format!("-D{dataset}_DATASET")], ..Default::default() };
    let (source, mut scops) =
        scop::extract(&path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!scops.is_empty(), "{}: no SCoP", path.display());
    let scop = scops.remove(0);
    let deps = deps::analyze(&scop).unwrap_or_else(|e| panic!("{}: dependences: {e}", path.display()));
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Kernel { name, source, scop, deps }
}
