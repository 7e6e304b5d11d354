//! Peers: other compilers' builds of the unmodified program (clang with
//! Polly, gcc with Graphite) and Pluto's (`polycc`, Bondhugula et al., PLDI
//! 2008), measured and output-verified like any variant, so that a campaign
//! or a bench says whether tuning beat what a user gets from a flag or a
//! source-to-source tool. A peer is found by running its compiler once, or
//! for Pluto by finding `polycc`; one that is not installed is named with the
//! reason, never an error.
//!
//! Pluto rewrites the source instead of compiling it: its peer's program is
//! the instrumented original with the SCoP marked again (`#pragma scop`, which
//! the instrumentation drops), passed through `polycc --tile --parallel` in a
//! directory of its own, then built by gcc as the default machine profile
//! builds. Pluto's tiling depends on its fusion heuristic and on diamond
//! tiling (Bandishti et al., SC 2012), and no one setting wins everywhere, so
//! each combination is a peer of its own and a bench takes the best of them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use model::scop::{self, ExtractOptions, Scop, Source};

use crate::build::Compiler;
use crate::process::{run_limited, unique_suffix, End, Limits};

/// The peers polytune knows, by the name points and reports give them.
pub const NAMES: &[&str] = &[
    "clang-polly",
    "gcc-graphite",
    "pluto-smartfuse",
    "pluto-maxfuse",
    "pluto-nofuse",
    "pluto-smartfuse-nodiamond",
    "pluto-maxfuse-nodiamond",
    "pluto-nofuse-nodiamond",
];

/// Pluto's peers and the flags each adds to `--tile --parallel`: its three
/// fusion heuristics, each with diamond tiling (Pluto's default, which
/// matters only where it finds concurrent start: stencils) and without.
/// Typed fusion needs an LP solver Pluto is not built with by default.
const PLUTO: &[(&str, &[&str])] = &[
    ("pluto-smartfuse", &["--smartfuse"]),
    ("pluto-maxfuse", &["--maxfuse"]),
    ("pluto-nofuse", &["--nofuse"]),
    ("pluto-smartfuse-nodiamond", &["--smartfuse", "--nodiamond-tile"]),
    ("pluto-maxfuse-nodiamond", &["--maxfuse", "--nodiamond-tile"]),
    ("pluto-nofuse-nodiamond", &["--nofuse", "--nodiamond-tile"]),
];

/// The environment variable that names `polycc` when it is not on PATH.
pub const POLYCC_VAR: &str = "POLYTUNE_POLYCC";

/// What to do when `polycc` is not found.
const POLYCC_HINT: &str = "build it from github.com/bondhugula/pluto (docs/guide.md, \
                           \"Installing Pluto\") and put polycc on PATH or name it in POLYTUNE_POLYCC";

/// Pluto's scheduler solves an ILP per band; a SCoP it cannot finish in
/// this long is that peer's failure, not a stuck bench or campaign.
const POLYCC_TIMEOUT: Duration = Duration::from_secs(300);

/// Another compiler's build of the unmodified program.
#[derive(Debug, Clone)]
pub struct Peer {
    /// One of [`NAMES`].
    pub name: &'static str,
    pub compiler: Compiler,
    /// A source-to-source step before `compiler` (Pluto's peers).
    pub polycc: Option<Polycc>,
}

/// `polycc` and its flags, besides the input and `-o`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Polycc {
    pub program: PathBuf,
    pub flags: Vec<String>,
}

/// The peer `name` for `threads` threads, or why it cannot be built here.
pub fn find(name: &str, threads: usize) -> Result<Peer, String> {
    match name {
        "clang-polly" => {
            let cc = ["clang-14", "clang"]
                .into_iter()
                .find(|cc| runs(cc, &["-mllvm", "-polly", "--version"]))
                .ok_or("clang-polly: clang with Polly is not installed (Debian: clang-14 libpolly-14-dev)")?;
            let mut flags = vec!["-O3", "-march=native", "-mllvm", "-polly"];
            if threads > 1 {
                flags.extend(["-mllvm", "-polly-parallel", "-fopenmp"]);
            }
            Ok(Peer { name: "clang-polly", compiler: Compiler::new(cc, flags), polycc: None })
        }
        "gcc-graphite" => {
            if !runs("gcc", &["-floop-nest-optimize", "--version"]) {
                return Err("gcc-graphite: gcc without Graphite".into());
            }
            let par = format!("-ftree-parallelize-loops={threads}");
            let flags =
                ["-O3", "-march=native", "-floop-nest-optimize", "-floop-parallelize-all", &par, "-fopenmp"];
            Ok(Peer { name: "gcc-graphite", compiler: Compiler::new("gcc", flags), polycc: None })
        }
        other => match PLUTO.iter().find(|(n, _)| *n == other) {
            Some(&(name, _)) => {
                let program = locate_polycc(std::env::var_os(POLYCC_VAR), std::env::var_os("PATH"))
                    .map_err(|why| format!("{name}: {why}"))?;
                Ok(pluto(name, program, threads))
            }
            None => Err(format!("unknown peer `{other}` (peers: {})", NAMES.join(", "))),
        },
    }
}

/// Pluto's peer `name` (one of [`PLUTO`]) with `polycc` at `program`: its
/// output built by gcc as the default machine profile builds, with OpenMP
/// (for Pluto's `omp parallel for`) on more than one thread.
fn pluto(name: &'static str, program: PathBuf, threads: usize) -> Peer {
    let mode = PLUTO.iter().find(|(n, _)| *n == name).map_or(&[][..], |(_, f)| f);
    let flags = ["--tile", "--parallel"].iter().chain(mode).map(|f| f.to_string()).collect();
    let mut cflags = vec!["-O3", "-march=native"];
    if threads > 1 {
        cflags.push("-fopenmp");
    }
    Peer { name, compiler: Compiler::new("gcc", cflags), polycc: Some(Polycc { program, flags }) }
}

/// `polycc`: the file `var` names (`POLYTUNE_POLYCC`), else the first on
/// `path`; why not, with what to do, when there is none.
fn locate_polycc(var: Option<OsString>, path: Option<OsString>) -> Result<PathBuf, String> {
    if let Some(p) = var.filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        // polycc runs in a directory of its own: a relative name would miss.
        let p = std::path::absolute(&p).unwrap_or(p);
        return match executable(&p) {
            true => Ok(p),
            false => Err(format!("{POLYCC_VAR}={} is not an executable file; {POLYCC_HINT}", p.display())),
        };
    }
    path.iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("polycc"))
        .find(|p| p.is_absolute() && executable(p))
        .ok_or_else(|| format!("polycc (Pluto) is not installed: {POLYCC_HINT}"))
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Every known peer installed here, and one line for each reason a peer is
/// not (Pluto's peers share theirs).
pub fn installed(threads: usize) -> (Vec<Peer>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing: Vec<(Vec<&str>, String)> = Vec::new();
    for name in NAMES {
        match find(name, threads) {
            Ok(p) => found.push(p),
            Err(why) => {
                let reason = why.strip_prefix(&format!("{name}: ")).unwrap_or(&why).to_string();
                match missing.iter_mut().find(|(_, r)| *r == reason) {
                    Some((names, _)) => names.push(name),
                    None => missing.push((vec![name], reason)),
                }
            }
        }
    }
    (found, missing.into_iter().map(|(names, why)| format!("{}: {why}: skipped", names.join(", "))).collect())
}

fn runs(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd).args(args).output().is_ok_and(|o| o.status.success())
}

/// The program `peer` builds: SCoP `index` of `file` (among the regions
/// found without pragmas where `autodetect`), preprocessed by the
/// peer's own compiler (gcc's `-E` output holds builtins clang does not
/// know) and instrumented like the original, otherwise as written; for
/// Pluto's peers, what `polycc` makes of it.
pub fn program(
    peer: &Peer,
    file: &Path,
    cpp_args: &[String],
    index: usize,
    autodetect: bool,
) -> Result<String, String> {
    let (source, scop) = extracted(peer, file, cpp_args, index, autodetect)?;
    let original = codegen::original_program(&source, &scop).map_err(|e| format!("{}: {e}", peer.name))?;
    match &peer.polycc {
        None => Ok(original),
        Some(polycc) => mark_scop(&original, &source, &scop)
            .and_then(|marked| polycc.transform(&marked))
            .map_err(|e| format!("{}: {e}", peer.name)),
    }
}

/// [`program`] for a campaign that replays the region from the capture
/// file `capture`: the replay driver ([`codegen::replay_program`]) of the
/// region as written, which the peer's compiler builds; for Pluto's peers,
/// the driver with that region marked (and no other), as `polycc` makes it.
pub fn replayed_program(
    peer: &Peer,
    file: &Path,
    cpp_args: &[String],
    index: usize,
    autodetect: bool,
    capture: &str,
) -> Result<String, String> {
    let (source, scop) = extracted(peer, file, cpp_args, index, autodetect)?;
    let replay = |region: &codegen::Exported| {
        codegen::replay_program(&source, &scop, region, capture).map_err(|e| format!("{}: {e}", peer.name))
    };
    match &peer.polycc {
        None => replay(&codegen::original_exported(&source, &scop)),
        Some(polycc) => {
            let region = codegen::marked_exported(&source, &scop);
            let marked = only_marked(&replay(&region)?, &region.block)?;
            polycc.transform(&marked).map_err(|e| format!("{}: {e}", peer.name))
        }
    }
}

/// SCoP `index` of `file` as the peer's compiler preprocesses it.
fn extracted(
    peer: &Peer,
    file: &Path,
    cpp_args: &[String],
    index: usize,
    autodetect: bool,
) -> Result<(Source, Scop), String> {
    let opts = ExtractOptions { cc: peer.compiler.cc.clone(), cc_args: cpp_args.to_vec(), autodetect };
    let (source, mut scops) = scop::extract(file, &opts).map_err(|e| format!("{}: {e}", peer.name))?;
    if index >= scops.len() {
        return Err(format!("{}: no SCoP {index} in {}", peer.name, file.display()));
    }
    Ok((source, scops.swap_remove(index)))
}

/// The replay driver `program` with the pragmas of `block` (the replayed
/// region, marked) and no others: the driver keeps the user's file, whose
/// regions Pluto would transform too.
fn only_marked(program: &str, block: &str) -> Result<String, String> {
    let at = program.find(block).ok_or("the replayed region is not in its driver as it was given")?;
    let (head, rest) = program.split_at(at);
    Ok(format!("{}{block}{}", unmark(head), unmark(&rest[block.len()..])))
}

/// The instrumented program `original` (of `scop` in `source`) with the
/// SCoP's code between `#pragma scop` and `#pragma endscop` again, inside the
/// timed block, and every other SCoP's pragmas dropped: Pluto transforms
/// every marked region, and only this one is measured. Pluto's loops use
/// iterators of their own, so the values the program reads after the region
/// are assigned after it (as our variants do).
pub fn mark_scop(original: &str, source: &Source, scop: &Scop) -> Result<String, String> {
    let code = region_code(source, scop);
    let lost = || "the instrumented program's timed block is not where it was expected".to_string();
    let start = scop.span.0 + original.get(scop.span.0..).and_then(|t| t.find(OPEN)).ok_or_else(lost)?;
    let (head, rest) = original.split_at(start + OPEN.len());
    let tail = rest.strip_prefix(code).filter(|t| t.starts_with(CLOSE)).ok_or_else(lost)?;
    let exits: String =
        scop.exit_values.iter().map(|e| format!("\n  {} = {};", e.variable, e.value)).collect();
    Ok(format!("{}#pragma scop\n{code}\n#pragma endscop{exits}{}", unmark(head), unmark(tail)))
}

/// The instrumentation's timed block opens and closes with these.
const OPEN: &str = "polytune_rt_start();\n  {\n";
const CLOSE: &str = "\n  }\n  polytune_rt_stop();";

/// polycc's output `out` for its input `program`, made buildable: polycc puts
/// `#include <omp.h>` and `<math.h>` and its macros (`floord`, `min`, ...)
/// above the program, which is preprocessed already, so the headers would
/// declare their types twice. The includes go (OpenMP's pragmas need no
/// header; the program declares what it calls) and the macros move into the
/// timed block, undefined at its end, where no other code of the program
/// meets them.
fn settle(out: &str, program: &str) -> Result<String, String> {
    let first = program.split_inclusive('\n').next().unwrap_or("");
    let lost = |what: &str| format!("polycc's output: {what} is not where it was expected");
    let at = out.find(first).filter(|_| !first.is_empty()).ok_or_else(|| lost("the program's first line"))?;
    let (added, rest) = out.split_at(at);
    let defines: Vec<&str> = added.lines().filter(|l| l.trim_start().starts_with("#define")).collect();
    let undefs: String = defines
        .iter()
        .filter_map(|d| d.trim_start().strip_prefix("#define")?.trim_start().split(['(', ' ', '\t']).next())
        .map(|name| format!("#undef {name}\n"))
        .collect();
    let open = rest.find(OPEN).ok_or_else(|| lost("the timed block"))? + OPEN.len();
    let close = open + rest[open..].find(CLOSE).ok_or_else(|| lost("the timed block's end"))?;
    Ok(format!(
        "{}{}\n{}\n{undefs}{}",
        &rest[..open],
        defines.join("\n"),
        &rest[open..close],
        rest[close..].trim_start_matches('\n')
    ))
}

/// The SCoP's code as written: what lies between its two pragma lines (the
/// region the instrumentation times).
fn region_code<'s>(source: &'s Source, scop: &Scop) -> &'s str {
    let region = &source.text[scop.span.0..scop.span.1];
    let inner = region.split_once('\n').map(|(_, r)| r).unwrap_or("");
    let inner = inner.trim_end_matches('\n');
    inner.rsplit_once('\n').map(|(r, _)| r).unwrap_or("")
}

/// `text` with its `#pragma scop` and `#pragma endscop` lines left empty.
fn unmark<'a>(text: &'a str) -> String {
    let pragma = |l: &str| {
        let words: Vec<&str> = l.trim().trim_start_matches('#').split_whitespace().collect();
        matches!(words[..], ["pragma", "scop" | "endscop"])
    };
    let blank = |l: &'a str| match pragma(l) {
        true if l.ends_with('\n') => "\n",
        true => "",
        false => l,
    };
    text.split_inclusive('\n').map(blank).collect()
}

impl Polycc {
    /// The command that transforms `in.c` into `out.c`.
    fn command(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.arg("in.c").args(&self.flags).args(["-o", "out.c"]).current_dir(dir);
        cmd
    }

    /// `program` through `polycc`, in a fresh directory (polycc keeps its
    /// intermediate files in the working directory, under fixed names), its
    /// verbose report kept for the message when it fails.
    pub fn transform(&self, program: &str) -> Result<String, String> {
        let dir = std::env::temp_dir().join(format!("polytune-polycc-{}", unique_suffix()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let out = self.transform_in(&dir, program);
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    fn transform_in(&self, dir: &Path, program: &str) -> Result<String, String> {
        std::fs::write(dir.join("in.c"), program).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = std::fs::File::create(dir.join("polycc.log")).map_err(|e| e.to_string())?;
        let mut cmd = self.command(dir);
        cmd.stdin(Stdio::null()).stdout(log);
        let run = run_limited(cmd, &Limits::default(), POLYCC_TIMEOUT, 4096)
            .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        let report = || {
            let log = std::fs::read_to_string(dir.join("polycc.log")).unwrap_or_default();
            let stderr = run.output.text();
            let lines: Vec<&str> = log.lines().chain(stderr.lines()).collect();
            lines[lines.len().saturating_sub(8)..].join("\n")
        };
        match run.end {
            End::TimedOut => Err(format!("polycc: no result after {} s", POLYCC_TIMEOUT.as_secs())),
            End::Exited(s) if !s.success() => Err(format!("polycc failed ({s}):\n{}", report())),
            End::Exited(_) => std::fs::read_to_string(dir.join("out.c"))
                .map_err(|e| format!("polycc wrote no program ({e}):\n{}", report()))
                .and_then(|out| settle(&out, program)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "void f(int n, double A[100][100], double B[100]) {\n  int i, j;\n\
                          #pragma scop\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      \
                          A[i][j] = A[i][j] + B[j];\n#pragma endscop\n  B[0] = i;\n}\n";

    fn modelled(text: &str) -> (Source, Scop) {
        let path = Path::new("kernel.c");
        let source = Source::from_preprocessed(path, text.to_string());
        let scop = scop::extract_preprocessed(path, &source.text).unwrap().remove(0);
        (source, scop)
    }

    fn lines_of(text: &str, wanted: &str) -> usize {
        text.lines().filter(|l| l.trim() == wanted).count()
    }

    #[test]
    fn every_pluto_peer_is_named_and_passes_tile_parallel_and_its_mode() {
        let flags = |name| pluto(name, PathBuf::from("/opt/pluto/polycc"), 1).polycc.unwrap().flags;
        for (name, _) in PLUTO {
            assert!(NAMES.contains(name), "{name} missing from NAMES");
            assert_eq!(&flags(name)[..2], ["--tile", "--parallel"], "{name}");
        }
        assert_eq!(flags("pluto-smartfuse"), ["--tile", "--parallel", "--smartfuse"]);
        assert_eq!(flags("pluto-maxfuse"), ["--tile", "--parallel", "--maxfuse"]);
        assert_eq!(flags("pluto-nofuse-nodiamond"), ["--tile", "--parallel", "--nofuse", "--nodiamond-tile"]);
        // Two settings × three heuristics, no two alike.
        let mut all: Vec<Vec<String>> = PLUTO.iter().map(|(n, _)| flags(n)).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 6);
    }

    #[test]
    fn pluto_output_is_built_by_gcc_with_openmp_only_on_more_than_one_thread() {
        let one = pluto("pluto-maxfuse", PathBuf::from("polycc"), 1).compiler;
        assert_eq!(one, Compiler::new("gcc", ["-O3", "-march=native"]));
        let two = pluto("pluto-maxfuse", PathBuf::from("polycc"), 2).compiler;
        assert_eq!(two, Compiler::new("gcc", ["-O3", "-march=native", "-fopenmp"]));
    }

    #[test]
    fn polycc_runs_in_its_directory_on_in_c_into_out_c() {
        let p = Polycc { program: PathBuf::from("/opt/polycc"), flags: vec!["--tile".into()] };
        let cmd = p.command(Path::new("/tmp/x"));
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["in.c", "--tile", "-o", "out.c"]);
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/tmp/x")));
    }

    #[test]
    fn a_missing_polycc_says_how_to_install_it() {
        let empty = std::env::temp_dir().join(format!("polytune-nopolycc-{}", unique_suffix()));
        std::fs::create_dir_all(&empty).unwrap();
        let why = locate_polycc(None, Some(empty.clone().into_os_string())).unwrap_err();
        assert!(why.starts_with("polycc (Pluto) is not installed"), "{why}");
        assert!(why.contains("github.com/bondhugula/pluto") && why.contains(POLYCC_VAR), "{why}");
        let named = locate_polycc(Some(empty.join("polycc").into_os_string()), None).unwrap_err();
        assert!(
            named.starts_with(&format!("{POLYCC_VAR}=")) && named.contains("not an executable"),
            "{named}"
        );
        // A file there, executable: found on PATH, and by the variable
        // before PATH (never run here).
        let fake = empty.join("polycc");
        std::fs::write(&fake, "#!/bin/sh\nexit 1\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), &empty]).unwrap();
        assert_eq!(locate_polycc(None, Some(path.clone())).unwrap(), fake);
        let elsewhere = Some(empty.join("nothing").into_os_string());
        assert!(locate_polycc(elsewhere, Some(path)).is_err(), "the variable, when set, decides");
        std::fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn skipped_pluto_peers_share_one_line() {
        let (found, missing) = installed(1);
        let pluto_found = found.iter().filter(|p| p.polycc.is_some()).count();
        let pluto_lines: Vec<&String> = missing.iter().filter(|l| l.contains("pluto-")).collect();
        // Either all six found or all six on one line, whatever this machine has.
        match pluto_found {
            6 => assert!(pluto_lines.is_empty(), "{pluto_lines:?}"),
            0 => {
                assert_eq!(pluto_lines.len(), 1, "{missing:?}");
                let line = pluto_lines[0];
                assert!(PLUTO.iter().all(|(n, _)| line.contains(n)) && line.ends_with(": skipped"), "{line}");
            }
            n => panic!("{n} of Pluto's six peers found"),
        }
        assert!(find("pluto-typedfuse", 1).unwrap_err().starts_with("unknown peer"));
    }

    /// Replayed, Pluto's input is the driver with the region as written
    /// marked once, in the replayed function, its exit values set after:
    /// the user's own pragmas, which the driver keeps, are gone.
    #[test]
    fn a_replayed_region_is_marked_once_in_its_driver() {
        let (source, scop) = modelled(KERNEL);
        let region = codegen::marked_exported(&source, &scop);
        let driver = codegen::replay_program(&source, &scop, &region, "kernel.capture").unwrap();
        assert_eq!(lines_of(&driver, "#pragma scop"), 2, "the user's and ours\n{driver}");
        let marked = only_marked(&driver, &region.block).unwrap();
        assert_eq!((lines_of(&marked, "#pragma scop"), lines_of(&marked, "#pragma endscop")), (1, 1));
        let open = marked.find("#pragma scop").unwrap();
        let function = marked.find("polytune_replayed_region").unwrap();
        assert!(function < open, "marked outside the replayed function\n{marked}");
        let after = &marked[open..];
        assert!(after.contains("A[i][j] = A[i][j] + B[j];\n#pragma endscop\n  i = "), "{marked}");
        assert!(only_marked(&driver, "no such block").is_err());
    }

    #[test]
    fn the_scop_is_marked_inside_the_timed_block() {
        let (source, scop) = modelled(KERNEL);
        let original = codegen::original_program(&source, &scop).unwrap();
        assert_eq!(lines_of(&original, "#pragma scop"), 0, "the instrumentation drops the pragmas");
        let marked = mark_scop(&original, &source, &scop).unwrap();
        assert_eq!(lines_of(&marked, "#pragma scop"), 1);
        assert_eq!(lines_of(&marked, "#pragma endscop"), 1);
        let at = |s: &str| marked.find(s).unwrap_or_else(|| panic!("no {s} in\n{marked}"));
        assert!(at("polytune_rt_start();") < at("#pragma scop"));
        assert!(at("#pragma scop") < at("A[i][j] = A[i][j] + B[j];"));
        assert!(at("A[i][j] = A[i][j] + B[j];") < at("#pragma endscop"));
        assert!(at("#pragma endscop") < at("polytune_rt_stop();"));
        // `i` is read after the region: assigned its exit value after Pluto's loops.
        for e in &scop.exit_values {
            let assign = format!("{} = {};", e.variable, e.value);
            assert!(at("#pragma endscop") < at(&assign) && at(&assign) < at("polytune_rt_stop();"));
        }
        assert!(scop.exit_values.iter().any(|e| e.variable == "i"), "{:?}", scop.exit_values);
        // Nothing else changed.
        let exits: Vec<String> =
            scop.exit_values.iter().map(|e| format!("  {} = {};", e.variable, e.value)).collect();
        let added = |l: &&str| l.trim().starts_with("#pragma") || exits.iter().any(|e| e == l);
        let unmarked: Vec<&str> = marked.lines().filter(|l| !added(l)).collect();
        assert_eq!(unmarked, original.lines().collect::<Vec<_>>());
    }

    #[test]
    fn only_the_measured_scop_stays_marked() {
        let second =
            "void g(int n, double C[100]) {\n  int k;\n#pragma scop\n  for (k = 0; k < n; k++)\n    \
                      C[k] = 2 * C[k];\n#pragma endscop\n}\n";
        let (source, scop) = modelled(&format!("{KERNEL}{second}"));
        let original = codegen::original_program(&source, &scop).unwrap();
        assert_eq!(lines_of(&original, "#pragma scop"), 1, "g's SCoP, as written");
        let marked = mark_scop(&original, &source, &scop).unwrap();
        assert_eq!(lines_of(&marked, "#pragma scop"), 1);
        assert_eq!(lines_of(&marked, "#pragma endscop"), 1);
        assert!(marked.find("#pragma scop").unwrap() < marked.find("B[j]").unwrap());
        assert!(marked.contains("C[k] = 2 * C[k];"));
    }

    #[test]
    fn polycc_headers_go_and_its_macros_stay_inside_the_timed_block() {
        let program = "# 0 \"k.c\"\nint min;\nvoid f(int n, double *a) {\n  polytune_rt_start();\n  {\n\
                       #pragma scop\n  for (i = 0; i < n; i++) a[i] = 0;\n#pragma endscop\n  }\n  \
                       polytune_rt_stop();\n}\n";
        // What polycc writes: its head, then the program with the region replaced.
        let out = "#include <omp.h>\n#include <math.h>\n#define floord(n,d) ((n)/(d))\n\
                   #define min(x,y)    ((x) < (y)? (x) : (y))\n\n# 0 \"k.c\"\nint min;\n\
                   void f(int n, double *a) {\n  polytune_rt_start();\n  {\n  int t1;\n\
                   for (t1=0;t1<=floord(n-1,1);t1++) a[t1] = 0;\n  }\n  polytune_rt_stop();\n}\n";
        let settled = settle(out, program).unwrap();
        assert!(!settled.contains("#include"), "{settled}");
        let expected = "# 0 \"k.c\"\nint min;\nvoid f(int n, double *a) {\n  polytune_rt_start();\n  {\n\
                        #define floord(n,d) ((n)/(d))\n#define min(x,y)    ((x) < (y)? (x) : (y))\n  int t1;\n\
                        for (t1=0;t1<=floord(n-1,1);t1++) a[t1] = 0;\n#undef floord\n#undef min\n  }\n  \
                        polytune_rt_stop();\n}\n";
        assert_eq!(settled, expected);
        // An output that is not the program: an error, not a guess.
        assert!(settle("int main() {}\n", program).unwrap_err().contains("first line"));
        let cut = out.replace("polytune_rt_stop", "stop");
        assert!(settle(&cut, program).unwrap_err().contains("timed block's end"));
    }

    /// A stand-in for polycc: a shell script (Pluto itself is never run here).
    fn fake_polycc(dir: &Path, body: &str) -> Polycc {
        use std::os::unix::fs::PermissionsExt;
        let program = dir.join("polycc");
        std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Polycc { program, flags: vec!["--tile".into()] }
    }

    #[test]
    fn polycc_output_is_settled_and_its_failure_is_a_message() {
        let dir = std::env::temp_dir().join(format!("polytune-fakepolycc-{}", unique_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = "# 0 \"k.c\"\nvoid f(void) {\n  polytune_rt_start();\n  {\n#pragma scop\n\
                       ;\n#pragma endscop\n  }\n  polytune_rt_stop();\n}\n";
        // Run where it writes its files: in.c in, out.c out, nothing left behind.
        let copy = fake_polycc(&dir, "test \"$*\" = \"in.c --tile -o out.c\" || exit 3\n\
                                      { echo '#include <omp.h>'; cat in.c; } > out.c; echo chatter; touch .srcfilename");
        let out = copy.transform(program).unwrap();
        assert!(!out.contains("#include") && out.contains("#pragma scop"), "{out}");
        let failing = fake_polycc(&dir, "echo '[pluto] the SCoP is not affine'; echo oops >&2; exit 1");
        let why = failing.transform(program).unwrap_err();
        assert!(
            why.starts_with("polycc failed") && why.contains("not affine") && why.contains("oops"),
            "{why}"
        );
        let silent = fake_polycc(&dir, "exit 0");
        assert!(silent.transform(program).unwrap_err().starts_with("polycc wrote no program"));
        // Only the scripts: each run's directory went with it.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_program_without_the_timed_block_is_an_error_not_a_guess() {
        let (source, scop) = modelled(KERNEL);
        let why = mark_scop(KERNEL, &source, &scop).unwrap_err();
        assert!(why.contains("timed block"), "{why}");
    }
}
