//! The exported file checked before it is written: built as the user will
//! build it (the file itself, preprocessed with the program's arguments),
//! its region between the timer and the output dump, and its outputs
//! compared with the original program's. With several machines, each
//! branch is built with its `-DPOLYTUNE_TARGET`, and one build is run with
//! each `POLYTUNE_MACHINE` and with none that matches (the original code).

use std::path::Path;

use anyhow::{bail, Context, Result};
use executor::build::Builder;
use executor::evaluate::Evaluator;
use executor::machine::MachineProfile;
use executor::measure::{MeasureConfig, Status};
use executor::runtime::Tolerance;
use model::scop::Source;

use super::assemble::{self, Layout, Pieces};
use super::Winner;
use crate::program::{self, Dataset, Program, ProgramConfig};

pub(super) struct Target<'a> {
    pub file: &'a Path,
    pub original: &'a str,
    pub layout: &'a Layout,
    pub pieces: &'a Pieces,
    pub program: &'a Program,
    pub build: &'a ProgramConfig,
    pub dataset: Dataset,
    pub profile: &'a MachineProfile,
    pub tolerance: f64,
    pub branches: &'a [&'a Winner],
    pub several: bool,
}

/// One build of the export and one run of it: what it checks, the
/// preprocessor's extra arguments, the run's extra environment.
struct Check {
    what: String,
    defines: Vec<String>,
    env: Vec<(String, String)>,
}

/// Verifies `t`'s export; returns what was verified, one line each.
pub(super) fn verify(t: &Target) -> Result<Vec<String>> {
    let compiler = t.profile.compiler();
    let builder = Builder::new(compiler.clone(), program::cache_dir()?.join("builds"))?
        .with_extras(&t.build.extras(t.dataset))?;
    let Some(slot) = t.profile.slots.first().cloned() else {
        bail!("machine profile `{}` has no slot", t.profile.name)
    };
    let threads =
        t.branches.iter().map(|w| w.point.threads).max().unwrap_or(1).clamp(1, slot.cores.len().max(1));
    let config = MeasureConfig {
        warmups: 0,
        runs: 1,
        remeasure_runs: 0,
        threads: Some(threads),
        tolerance: Tolerance { relative: t.tolerance },
        ..MeasureConfig::default()
    };
    let evaluator = Evaluator { builder, slot, config, jobs: 2 };
    let at = format!("{}:{}", t.file.display(), t.program.scop.start.line);
    let original = codegen::original_program(&t.program.source, &t.program.scop)
        .with_context(|| format!("{at}: the original SCoP"))?;
    let reference = evaluator.reference(&original).with_context(|| format!("{at}: the original program"))?;
    let region = codegen::instrumented(&t.program.scop, &t.pieces.region)
        .with_context(|| format!("{at}: instrumenting the exported region"))?;
    let text = assemble::splice(t.original, t.layout, t.pieces, &region);
    let dir = std::env::temp_dir().join(format!(
        "polytune-export-{}-{}",
        std::process::id(),
        executor::process::unique_suffix()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let result = run_checks(t, &evaluator, &reference, &text, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_checks(
    t: &Target,
    evaluator: &Evaluator,
    reference: &executor::evaluate::Reference,
    text: &str,
    dir: &Path,
) -> Result<Vec<String>> {
    let name = t.file.file_name().context("the file's name")?;
    let copy = dir.join(name);
    std::fs::write(&copy, text).with_context(|| format!("{}: cannot write", copy.display()))?;
    let run_env = |w: &Winner| w.point.code.run_env();
    let mut checks = Vec::new();
    if !t.several {
        checks.push(Check { what: "the export".into(), defines: Vec::new(), env: run_env(t.branches[0]) });
    } else {
        for w in t.branches {
            let env = run_env(w);
            checks.push(Check {
                what: format!("-DPOLYTUNE_TARGET={}", w.label),
                defines: vec![format!("-DPOLYTUNE_TARGET={}", w.label)],
                env: env.clone(),
            });
            let mut env = env;
            env.push(("POLYTUNE_MACHINE".into(), w.label.clone()));
            checks.push(Check {
                what: format!("POLYTUNE_MACHINE={} at run time", w.label),
                defines: Vec::new(),
                env,
            });
        }
        checks.push(Check {
            what: "no machine matched (the code as written)".into(),
            defines: Vec::new(),
            env: vec![("POLYTUNE_MACHINE".into(), "polytune-no-such-machine".into())],
        });
    }
    let dir_of_file = t.file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut verified = Vec::new();
    for c in &checks {
        let mut args = program::cpp_args(t.dataset, &t.build.cc_args);
        args.push("-iquote".into());
        args.push(dir_of_file.display().to_string());
        args.extend(c.defines.iter().cloned());
        let source = Source::preprocess(&copy, &evaluator.builder.compiler().cc, &args)
            .map_err(|e| anyhow::anyhow!("{}: {}: {e}", t.file.display(), c.what))?;
        let built = evaluator.builder.build(&source.text);
        let m = evaluator.measure_in(reference, &built, None, &c.env);
        if m.status != Status::Ok {
            bail!(
                "{}: the exported file, {}, is {}: {}; nothing is written",
                t.file.display(),
                c.what,
                m.status,
                m.reason
            );
        }
        verified.push(format!("{}: outputs match the original's", c.what));
    }
    Ok(verified)
}
