//! The exported file checked before it is written: built as the user will
//! build it (the file itself, preprocessed with the program's arguments),
//! its region between the timer and the output dump, and its outputs
//! compared with the original program's. With several machines, each
//! branch is built with its `-DPOLYTUNE_TARGET`, and one build is run with
//! each `POLYTUNE_MACHINE` and with none that matches (the original code).

use std::path::Path;

use crate::error::{Context, Error, Result};
use executor::build::Builder;
use executor::evaluate::Evaluator;
use executor::machine::MachineProfile;
use executor::measure::{MeasureConfig, Status};
use executor::verify::Tolerance;
use model::scop::Source;

use super::assemble::{self, Branch, Layout, Pieces};
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
    /// Each winner's code, as in the file (in the order of `branches`).
    pub blocks: &'a [Branch],
    pub several: bool,
    /// The capture the campaign replayed the region from, if it did: the
    /// export's code is verified on it.
    pub capture: Option<&'a str>,
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
        return Err(Error::input(format!("machine profile `{}` has no slot", t.profile.name)));
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
    if let Some(hash) = t.capture {
        return replayed(t, &evaluator, hash, &at);
    }
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
    let name = t.file.file_name().ok_or_else(|| Error::input("the file's name"))?;
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
            .map_err(|e| Error::failed(format!("{}: {}: {e}", t.file.display(), c.what)))?;
        let built = evaluator.builder.build(&source.text);
        let m = evaluator.measure_in(reference, &built, None, &c.env);
        if m.status != Status::Ok {
            return Err(Error::failed(format!(
                "{}: the exported file, {}, is {}: {}; nothing is written",
                t.file.display(),
                c.what,
                m.status,
                m.reason
            )));
        }
        verified.push(format!("{}: outputs match the original's", c.what));
    }
    Ok(verified)
}

/// A replayed campaign's export: each winner's code as the file has it,
/// replayed from the campaign's capture against the original region
/// replayed, and the whole file compiled (with each machine's define) as
/// the user will, since it cannot be run without its inputs.
fn replayed(t: &Target, evaluator: &Evaluator, hash: &str, at: &str) -> Result<Vec<String>> {
    let evaluator = &Evaluator {
        builder: crate::capture::replaying(&evaluator.builder)?,
        slot: evaluator.slot.clone(),
        config: MeasureConfig { replayed: true, ..evaluator.config.clone() },
        jobs: evaluator.jobs,
    };
    let capture = crate::capture::stored(hash)?;
    let original = crate::capture::replay_original(t.program, &capture)?;
    let reference =
        evaluator.reference(&original).with_context(|| format!("{at}: the original region replayed"))?;
    let mut verified = Vec::new();
    for (w, b) in t.branches.iter().zip(t.blocks) {
        let region = codegen::Exported {
            target: b.target.clone(),
            declarations: String::new(),
            helpers: b.file_scope.clone(),
            block: b.block.clone(),
        };
        let program = crate::capture::replay(t.program, &region, &capture)?;
        let built = evaluator.builder.build(&program);
        let m = evaluator.measure_in(&reference, &built, None, &w.point.code.run_env());
        if m.status != Status::Ok {
            return Err(Error::failed(format!("{}: machine {}'s code in the export, replayed from the campaign's capture, is {}: {}; nothing is written", t.file.display(), w.best.machine, m.status, m.reason)));
        }
        verified.push(format!(
            "machine {}'s code replayed from capture {}: outputs match the original's",
            w.best.machine,
            &hash[..12]
        ));
    }
    let text = assemble::splice(t.original, t.layout, t.pieces, &t.pieces.region);
    let dir = std::env::temp_dir().join(format!("polytune-export-{}", executor::process::unique_suffix()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let copy = dir.join(t.file.file_name().ok_or_else(|| Error::input("the file's name"))?);
    let result = std::fs::write(&copy, &text).map_err(Error::from).and_then(|()| {
        let mut defines: Vec<Vec<String>> = vec![Vec::new()];
        if t.several {
            defines.extend(t.branches.iter().map(|w| vec![format!("-DPOLYTUNE_TARGET={}", w.label)]));
        }
        for d in defines {
            compiles(t, evaluator, &copy, &d)?;
            let what = d.first().cloned().unwrap_or_else(|| "the file".into());
            verified.push(format!("{what}: compiles"));
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|()| verified)
}

/// `text`, an export of `file` with several SCoPs replaced (each verified on
/// its own), compiled as the user builds it, with `define` if given.
pub(super) fn file_compiles(
    file: &Path,
    text: &str,
    build: &ProgramConfig,
    dataset: Dataset,
    profile: &MachineProfile,
    define: Option<&str>,
) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("polytune-export-{}", executor::process::unique_suffix()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let copy = dir.join(file.file_name().ok_or_else(|| Error::input("the file's name"))?);
    let compiler = profile.compiler();
    let result = std::fs::write(&copy, text).map_err(Error::from).and_then(|()| {
        object(&compiler, file, &copy, build, dataset, &Vec::from_iter(define.map(String::from)))
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A GPU winner's export built as the user will build it: `text`, the
/// file that calls the host function, compiled to an object, and `unit`
/// by nvcc for sm_80 and sm_90 (no GPU needed); without nvcc, said so.
pub(super) fn cuda_builds(
    file: &Path,
    text: &str,
    unit: &str,
    build: &ProgramConfig,
    dataset: Dataset,
    profile: &MachineProfile,
) -> Result<Vec<String>> {
    file_compiles(file, text, build, dataset, profile, None)?;
    let mut verified = vec!["the file that calls the host function: compiles".to_string()];
    let Some(nvcc) = executor::cuda::nvcc() else {
        verified.push(
            "the CUDA unit: not compiled, there is no nvcc here (POLYTUNE_NVCC, PATH, CUDA_HOME)".into(),
        );
        return Ok(verified);
    };
    let dir = std::env::temp_dir().join(format!("polytune-export-{}", executor::process::unique_suffix()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join("unit.cu");
    let archs = ["sm_80", "sm_90"];
    let result = std::fs::write(&path, unit)
        .map_err(Error::from)
        .and_then(|()| executor::cuda::compile_check(&nvcc, &path, &archs).map_err(Error::failed));
    let _ = std::fs::remove_dir_all(&dir);
    result.with_context(|| {
        format!("{}: the exported CUDA unit does not compile; nothing is written", file.display())
    })?;
    verified.push(format!("the CUDA unit: compiles with {} for {}", nvcc.display(), archs.join(" and ")));
    Ok(verified)
}

/// `copy` (the exported file) compiled to an object with `defines`, as the user builds it.
fn compiles(t: &Target, evaluator: &Evaluator, copy: &Path, defines: &[String]) -> Result<()> {
    object(evaluator.builder.compiler(), t.file, copy, t.build, t.dataset, defines)
}

/// `copy` (an export of `file`) compiled to an object with `defines`.
fn object(
    compiler: &executor::build::Compiler,
    file: &Path,
    copy: &Path,
    build: &ProgramConfig,
    dataset: Dataset,
    defines: &[String],
) -> Result<()> {
    let dir_of_file = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let out = std::process::Command::new(&compiler.cc)
        .args(&compiler.flags)
        .args(&build.cflags)
        .args(program::cpp_args(dataset, &build.cc_args))
        .arg("-iquote")
        .arg(dir_of_file)
        .args(defines)
        .args(["-c", "-o", "/dev/null"])
        .arg(copy)
        .output()
        .with_context(|| format!("cannot run `{}`", compiler.cc))?;
    if !out.status.success() {
        return Err(Error::failed(format!(
            "{}: the exported file does not compile{}: {}; nothing is written",
            file.display(),
            defines.first().map(|d| format!(" with {d}")).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}
