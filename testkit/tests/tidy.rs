//! Rules of the sources that no compiler checks: every `unsafe` says why it
//! is sound (a `SAFETY:` comment just above it or on its line, a `# Safety`
//! section for an `unsafe fn`), and isl's raw functions are declared in one
//! module, `model/src/isl/ffi.rs`, behind safe functions.

use std::path::{Path, PathBuf};

/// The one file that may declare isl's C functions.
const ISL_FFI: &str = "model/src/isl/ffi.rs";

/// How many lines above an `unsafe` its `SAFETY:` comment may stand (a
/// condition split over lines), besides the comment block right above.
const SAFETY_REACH: usize = 3;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every `.rs` file of the workspace's crates (sources and tests).
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for krate in ["vocab", "model", "space", "codegen", "executor", "store", "reports", "tuner", "testkit"] {
        for dir in ["src", "tests", "benches"] {
            walk(&workspace().join(krate).join(dir), &mut out);
        }
    }
    out.sort();
    assert!(out.len() > 100, "the workspace's sources were not found: {out:?}");
    out
}

/// The code of a line, without a trailing `//` comment or string literals
/// (so that `"unsafe"` in text is not code).
fn code(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => break,
            _ if !in_string => out.push(c),
            _ => {}
        }
    }
    out
}

/// The lines (1-based) of `text` with an `unsafe` block or function and no
/// word on why it is sound.
fn unjustified_unsafe(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = code(line);
        let words: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
        let Some(at) = words.iter().position(|w| *w == "unsafe") else { continue };
        let next = words[at + 1..].iter().find(|w| !w.is_empty()).copied();
        // `unsafe extern` blocks are the FFI module's declarations (the other rule).
        if next == Some("extern") && !code.contains("fn(") {
            continue;
        }
        let said = |l: &str| l.contains("SAFETY:") || l.contains("# Safety");
        if said(line) {
            continue;
        }
        let near = lines[i.saturating_sub(SAFETY_REACH)..i].iter().any(|l| said(l));
        let block = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("//") || l.trim_start().starts_with("#["))
            .any(|l| said(l));
        if !near && !block {
            out.push(i + 1);
        }
    }
    out
}

/// The lines (1-based) of `text` that declare one of isl's C functions
/// (`fn isl_…` inside an `extern "C"` block).
fn isl_declarations(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_extern = false;
    for (i, line) in text.lines().enumerate() {
        let c = code(line);
        let c = c.trim();
        if c.contains("extern") && c.ends_with('{') {
            in_extern = true;
        } else if c == "}" {
            in_extern = false;
        } else if in_extern && (c.starts_with("fn isl_") || c.starts_with("pub fn isl_")) {
            out.push(i + 1);
        }
    }
    out
}

#[test]
fn every_unsafe_says_why_it_is_sound() {
    let mut missing = Vec::new();
    for file in sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in unjustified_unsafe(&text) {
            missing.push(format!("{}:{line}", file.strip_prefix(workspace()).unwrap().display()));
        }
    }
    assert!(
        missing.is_empty(),
        "`unsafe` without a `// SAFETY:` comment above it:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn isl_is_declared_in_one_module() {
    let mut elsewhere = Vec::new();
    for file in sources() {
        let rel = file.strip_prefix(workspace()).unwrap().to_path_buf();
        if rel == Path::new(ISL_FFI) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for line in isl_declarations(&text) {
            elsewhere.push(format!("{}:{line}", rel.display()));
        }
    }
    assert!(elsewhere.is_empty(), "isl functions declared outside {ISL_FFI}:\n  {}", elsewhere.join("\n  "));
    assert!(!isl_declarations(&std::fs::read_to_string(workspace().join(ISL_FFI)).unwrap()).is_empty());
}

/// The rules catch what they are for, and nothing in comments or strings.
#[test]
fn the_rules_find_what_breaks_them() {
    let text = "fn a() {\n    let x = unsafe { f() };\n}\n\
                fn b() {\n    // SAFETY: f has no preconditions.\n    let y = unsafe { f() };\n}\n\
                // it is unsafe to say \"unsafe { }\" here\n\
                /// # Safety\n/// none\nunsafe fn c() {}\n";
    assert_eq!(unjustified_unsafe(text), [2]);
    let decl = "unsafe extern \"C\" {\n    fn isl_ctx_alloc() -> usize;\n}\n// fn isl_in_a_comment();\nfn isl_ours() {}\n";
    assert_eq!(isl_declarations(decl), [2]);
}
