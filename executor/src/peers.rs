//! Peers: other compilers' builds of the unmodified program (clang with
//! Polly, gcc with Graphite), measured and output-verified like any variant,
//! so that a campaign or a bench says whether tuning beat what a user gets
//! from a flag. A peer is found by running its compiler once; one that is not
//! installed is named with the reason, never an error.

use std::path::Path;
use std::process::Command;

use model::scop::{self, ExtractOptions};

use crate::build::Compiler;

/// The peers polytune knows, by the name points and reports give them.
pub const NAMES: &[&str] = &["clang-polly", "gcc-graphite"];

/// Another compiler's build of the unmodified program.
#[derive(Debug, Clone)]
pub struct Peer {
    /// One of [`NAMES`].
    pub name: &'static str,
    pub compiler: Compiler,
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
            Ok(Peer { name: "clang-polly", compiler: Compiler::new(cc, flags) })
        }
        "gcc-graphite" => {
            if !runs("gcc", &["-floop-nest-optimize", "--version"]) {
                return Err("gcc-graphite: gcc without Graphite".into());
            }
            let par = format!("-ftree-parallelize-loops={threads}");
            let flags =
                ["-O3", "-march=native", "-floop-nest-optimize", "-floop-parallelize-all", &par, "-fopenmp"];
            Ok(Peer { name: "gcc-graphite", compiler: Compiler::new("gcc", flags) })
        }
        other => Err(format!("unknown peer `{other}` (peers: {})", NAMES.join(", "))),
    }
}

/// Every known peer installed here, and one line for each one that is not.
pub fn installed(threads: usize) -> (Vec<Peer>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in NAMES {
        match find(name, threads) {
            Ok(p) => found.push(p),
            Err(why) => missing.push(format!("{why}: skipped")),
        }
    }
    // Pluto's polycc rewrites the source rather than building it; not a peer yet.
    missing.push(match runs("polycc", &["--version"]) {
        true => "polycc (Pluto) is on PATH but not measured yet".into(),
        false => "polycc (Pluto): not on PATH, skipped".into(),
    });
    (found, missing)
}

fn runs(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd).args(args).output().is_ok_and(|o| o.status.success())
}

/// The program `peer` builds: SCoP `index` of `file`, preprocessed by the
/// peer's own compiler (gcc's `-E` output holds builtins clang does not
/// know) and instrumented like the original, otherwise as written.
pub fn program(peer: &Peer, file: &Path, cpp_args: &[String], index: usize) -> Result<String, String> {
    let opts = ExtractOptions { cc: peer.compiler.cc.clone(), cc_args: cpp_args.to_vec() };
    let (source, scops) = scop::extract(file, &opts).map_err(|e| format!("{}: {e}", peer.name))?;
    let scop =
        scops.get(index).ok_or_else(|| format!("{}: no SCoP {index} in {}", peer.name, file.display()))?;
    codegen::original_program(&source, scop).map_err(|e| format!("{}: {e}", peer.name))
}
