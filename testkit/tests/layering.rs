//! The workspace's layering, checked on its sources: crates depend only on
//! the crates below them, sibling modules never import each other in a
//! cycle, and the binary's command glue is imported by nobody. An import
//! against the order is a test failure that names the files and lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate and the workspace crates it may depend on: the data path,
/// from the vocabulary up to the binary. `store` and `reports` read points
/// without linking isl, the solver or the C parser.
const CRATES: &[(&str, &[&str])] = &[
    ("vocab", &[]),
    ("model", &["vocab"]),
    ("space", &["vocab", "model"]),
    ("codegen", &["vocab", "model", "space"]),
    ("executor", &["vocab", "model", "space", "codegen"]),
    ("store", &["vocab"]),
    ("reports", &["vocab", "store"]),
    ("tuner", &["vocab", "model", "space", "codegen", "executor", "store", "reports"]),
    ("serve", &["vocab", "store", "reports", "tuner"]),
    ("polytune", &["vocab", "model", "space", "codegen", "executor", "store", "reports", "tuner", "serve"]),
    ("testkit", &["vocab", "model", "space", "codegen", "executor"]),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A module path inside a crate (`["codegen", "gpu"]`), empty for the root.
type Module = Vec<String>;

/// An import of one module by another: where it is written.
#[derive(Debug, Clone)]
struct Import {
    from: Module,
    to: Module,
    at: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The paths a line names through `crate::` or `super::`, each as written
/// from its first segment on (`super::{a, b::c}` gives two).
fn named_paths(line: &str) -> Vec<(bool, usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(['c', 's']) {
        let tail = &rest[at..];
        let word_start = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let (is_crate, mut tail) = match () {
            _ if word_start && tail.starts_with("crate::") => (true, &tail[7..]),
            _ if word_start && tail.starts_with("super::") => (false, &tail[7..]),
            _ => {
                rest = &rest[at + 1..];
                continue;
            }
        };
        let mut supers = usize::from(!is_crate);
        while let Some(t) = tail.strip_prefix("super::") {
            supers += 1;
            tail = t;
        }
        let tree_end = match tail.starts_with('{') {
            true => matching_brace(tail).map_or(tail.len(), |c| c + 1),
            false => {
                tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len())
            }
        };
        for path in use_tree_paths(&tail[..tree_end]) {
            out.push((is_crate, supers, path));
        }
        rest = &tail[tail.len().min(1)..];
    }
    out
}

/// The path segments of `s` up to the first that is not a name (`a::b::{`
/// gives `a`, `b`).
fn segments(s: &str) -> Vec<String> {
    s.split("::")
        .map(|p| p.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
        .take_while(|p| !p.is_empty())
        .collect()
}

/// Where the brace that `text`'s first character opens closes.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The paths of a use tree: `a::{b, c::{d, e}}` gives `a::b`, `a::c::d`
/// and `a::c::e`.
fn use_tree_paths(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![segments(tree)] };
    let prefix = segments(&tree[..open]);
    let close = matching_brace(&tree[open..]).map_or(tree.len(), |c| open + c);
    let inner = &tree[open + 1..close.max(open + 1)];
    // The group's items, split at its own commas (not those of nested groups).
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    let mut out = Vec::new();
    for item in items.into_iter().filter(|i| !i.trim().is_empty()) {
        for rest in use_tree_paths(item) {
            out.push([prefix.clone(), rest].concat());
        }
    }
    out
}

/// The lines of `text` as the import reader takes them: a `use` written
/// over several lines joined into one, at its first line's number.
fn statements(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if open {
            let last = out.last_mut().expect("an open use has its first line");
            last.1.push(' ');
            last.1.push_str(code);
            open = !code.contains(';');
            continue;
        }
        let is_use =
            ["use ", "pub use ", "pub(crate) use ", "pub(super) use "].iter().any(|p| code.starts_with(p));
        open = is_use && !code.contains(';');
        out.push((n, code.to_string()));
    }
    out
}

/// Every import between distinct modules of the crate whose sources are
/// under `src`, outside tests.
fn read_imports(src: &Path) -> (BTreeSet<Module>, Vec<Import>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut out = Vec::new();
    for file in &files {
        let from = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let mut cfg_test = false;
        for (n, code) in statements(&text) {
            let code = code.as_str();
            // The unit tests at a file's end may import anything.
            if cfg_test && code.starts_with("mod tests") {
                break;
            }
            cfg_test = code.starts_with("#[cfg(test)]") || (cfg_test && code.is_empty());
            if code.starts_with("//") {
                continue;
            }
            for (is_crate, supers, segments) in named_paths(code) {
                let mut to: Module = if is_crate { Vec::new() } else { from.clone() };
                if !is_crate {
                    let up = supers.min(to.len());
                    to.truncate(to.len() - up);
                }
                for s in segments {
                    let mut next = to.clone();
                    next.push(s);
                    if !modules.contains(&next) {
                        break;
                    }
                    to = next;
                }
                if to != from {
                    let shown = file.strip_prefix(workspace()).unwrap_or(file);
                    let at = format!("{}:{}", shown.display(), n + 1);
                    out.push(Import { from: from.clone(), to, at });
                }
            }
        }
    }
    (modules, out)
}

/// The cycles among the children of each module: per parent, the imports
/// between its children (or their descendants) that close a cycle.
fn cycles(modules: &BTreeSet<Module>, imports: &[Import]) -> Vec<String> {
    let mut found = Vec::new();
    let parents: BTreeSet<Module> =
        modules.iter().filter(|m| !m.is_empty()).map(|m| m[..m.len() - 1].to_vec()).collect();
    for parent in parents {
        let depth = parent.len();
        let child = |m: &Module| (m.len() > depth && m[..depth] == parent[..]).then(|| m[depth].clone());
        let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for i in imports {
            if let (Some(a), Some(b)) = (child(&i.from), child(&i.to)) {
                if a != b {
                    edges.entry(a).or_default().entry(b).or_insert_with(|| i.at.clone());
                }
            }
        }
        // A child reaches itself again: report the path and its imports.
        for start in edges.keys() {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for next in
                    edges.get(&node).map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
                {
                    if next == *start && path.iter().min() == Some(start) {
                        let steps: Vec<String> = path
                            .iter()
                            .zip(path.iter().skip(1).chain([start]))
                            .map(|(a, b)| format!("{a} -> {b} ({})", edges[a][b]))
                            .collect();
                        let place = match parent.is_empty() {
                            true => "at the crate root".to_string(),
                            false => format!("in `{}`", parent.join("::")),
                        };
                        found.push(format!("{place}: {}", steps.join(", ")));
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next, p));
                    }
                }
            }
        }
    }
    found
}

/// The names under `[dependencies]` of `krate`'s manifest (not its dev- or
/// build-dependencies).
fn dependencies(krate: &str) -> Vec<String> {
    let toml = std::fs::read_to_string(workspace().join(krate).join("Cargo.toml")).unwrap();
    let mut section = "";
    let mut out = Vec::new();
    for line in toml.lines() {
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]" {
            let name = line.split(['=', '.']).next().unwrap_or("").trim();
            if !name.is_empty() && !name.starts_with('#') {
                out.push(name.to_string());
            }
        }
    }
    out
}

fn workspace_dependencies(krate: &str) -> Vec<String> {
    let names: Vec<&str> = CRATES.iter().map(|(c, _)| *c).collect();
    dependencies(krate).into_iter().filter(|d| names.contains(&d.as_str())).collect()
}

#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let members = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    for (krate, allowed) in CRATES {
        assert!(members.contains(&format!("\"{krate}\"")), "{krate} is not a workspace member");
        for dep in workspace_dependencies(krate) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{krate} depends on {dep}, which is above it or beside it"
            );
        }
    }
}

#[test]
fn sibling_modules_import_one_way() {
    let mut found = Vec::new();
    for (krate, _) in CRATES {
        let src = workspace().join(krate).join("src");
        let (modules, imports) = read_imports(&src);
        found.extend(cycles(&modules, &imports).into_iter().map(|c| format!("{krate} {c}")));
    }
    assert!(found.is_empty(), "modules that import each other:\n{}", found.join("\n"));
}

/// Argument parsing, progress bars and untyped errors belong to the binary:
/// a program that calls the library gets typed errors and no terminal.
#[test]
fn only_the_binary_links_the_command_line_crates() {
    for (krate, _) in CRATES.iter().filter(|(c, _)| *c != "polytune") {
        for dep in dependencies(krate) {
            assert!(
                !["clap", "anyhow", "indicatif"].contains(&dep.as_str()),
                "{krate} depends on {dep}, a concern of the command line (the polytune crate)"
            );
        }
    }
    assert!(dependencies("polytune").contains(&"clap".to_string()), "the reader of manifests found no clap");
}

#[test]
fn only_the_binary_entry_imports_the_command_glue() {
    let src = workspace().join("polytune/src");
    let (_, imports) = read_imports(&src);
    let cmd = vec!["cmd".to_string()];
    let upward: Vec<&str> = imports
        .iter()
        .filter(|i| i.to.starts_with(&cmd) && !i.from.is_empty() && !i.from.starts_with(&cmd))
        .map(|i| i.at.as_str())
        .collect();
    assert!(upward.is_empty(), "imports of `cmd` outside it: {upward:?}");
}

/// A crate of two modules in a temporary directory: `model` (its `mod.rs`
/// as given, with `model/read.rs` holding `Scop`) and `schedule` (as
/// given); the directory and its `src`.
fn two_modules(name: &str, model: &str, schedule: &str) -> (testkit::TempDir, PathBuf) {
    let dir = testkit::TempDir::new(&format!("layering-{name}"));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("model")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod model;\npub mod schedule;\n").unwrap();
    std::fs::write(src.join("model/mod.rs"), model).unwrap();
    std::fs::write(src.join("model/read.rs"), "pub struct Scop;\n").unwrap();
    std::fs::write(src.join("schedule.rs"), schedule).unwrap();
    (dir, src)
}

/// The cycles of `two_modules(name, model, schedule)` (none asserted),
/// then of the same tree with `model/read.rs` made `read`.
fn cycles_once_read_is(name: &str, model: &str, schedule: &str, read: &str) -> Vec<String> {
    let (_dir, src) = two_modules(name, model, schedule);
    let (modules, imports) = read_imports(&src);
    assert!(cycles(&modules, &imports).is_empty());
    std::fs::write(src.join("model/read.rs"), read).unwrap();
    let (modules, imports) = read_imports(&src);
    cycles(&modules, &imports)
}

/// The checker itself: an import against the order in a small tree of
/// sources is reported with its file and line.
#[test]
fn a_cycle_between_modules_is_reported_with_its_imports() {
    // The model reaches up into the scheduler, from a submodule, in a group.
    let found = cycles_once_read_is(
        "cycle",
        "mod read;\npub use read::Scop;\n",
        "use crate::model::Scop;\n",
        "use super::super::{schedule, model};\npub struct Scop;\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("model -> schedule") && found[0].contains("read.rs:1"), "{found:?}");
    assert!(found[0].contains("schedule -> model") && found[0].contains("schedule.rs:1"), "{found:?}");
}

/// A `use` over several lines, with nested groups, is read whole: the
/// import on its third line closes the cycle.
#[test]
fn a_use_over_several_lines_is_read_whole() {
    let found = cycles_once_read_is(
        "multi",
        "pub mod read;\n",
        "use crate::model::read::Scop;\npub struct Tree;\n",
        "use crate::{\n    model,\n    schedule::{\n        Tree,\n    },\n};\npub struct Scop;\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("model -> schedule") && found[0].contains("read.rs:1"), "{found:?}");
    assert_eq!(
        use_tree_paths("a::{b, c::{d, e}}"),
        [vec!["a", "b"], vec!["a", "c", "d"], vec!["a", "c", "e"]]
    );
}

/// The functions of `file` outside its unit tests (lines, name): from a
/// `fn` line to the closing brace at its indentation.
fn function_lengths(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().take_while(|l| *l != "mod tests {").collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let code =
            ["pub(crate) ", "pub(super) ", "pub "].iter().find_map(|p| code.strip_prefix(p)).unwrap_or(code);
        let code = ["const ", "async ", "unsafe "].iter().find_map(|p| code.strip_prefix(p)).unwrap_or(code);
        let Some(head) = code.strip_prefix("fn ").filter(|_| !line.trim_end().ends_with(';')) else {
            continue;
        };
        let name: String = head.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| l.trim_end() == close) {
            out.push((end + 2, name));
        }
    }
    out
}

/// A reader holds a file and a function in their head: no source file of
/// the workspace over 800 lines, no function outside tests over 120.
#[test]
fn files_and_the_longest_functions_stay_readable() {
    let mut long = Vec::new();
    for (krate, _) in CRATES {
        let mut files = Vec::new();
        rust_files(&workspace().join(krate).join("src"), &mut files);
        for f in files {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            if n > 800 {
                long.push(format!("{}: {n} lines", f.display()));
            }
            for (n, name) in function_lengths(&f) {
                if n > 120 {
                    long.push(format!("{}: fn {name}, {n} lines", f.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "too long to read whole:\n{}", long.join("\n"));
    // The measure itself, on this file.
    let here = function_lengths(&workspace().join(file!()));
    assert!(here.iter().any(|(n, name)| name == "cycles" && *n > 20), "{here:?}");
}

/// The binary is glue over the library (issue 69): arguments in, the
/// library's requests out, its results printed. Logic that grows there
/// belongs in `tuner` (or `serve`), where another program can call it.
#[test]
fn the_binary_stays_a_thin_layer() {
    const MOST: usize = 1_500;
    let src = workspace().join("polytune/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut sizes: Vec<(usize, String)> = files
        .iter()
        .map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n, f.strip_prefix(&src).unwrap().display().to_string())
        })
        .collect();
    let total: usize = sizes.iter().map(|(n, _)| n).sum();
    sizes.sort_by(|a, b| b.cmp(a));
    let largest: Vec<String> = sizes.iter().take(5).map(|(n, f)| format!("{f} ({n})")).collect();
    assert!(
        total <= MOST,
        "polytune/src holds {total} lines, more than {MOST}: move logic into the library; the largest files: {}",
        largest.join(", ")
    );
}
