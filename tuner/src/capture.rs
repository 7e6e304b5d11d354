//! A region's inputs captured from one run of the user's own program (its
//! arguments, standard input and working directory), kept content-addressed
//! in the cache, and the programs that replay the region from it
//! (`codegen::replay_program`): the original region, the reference, and
//! each variant.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::{Context, Error, Result};
use executor::build::{BuildOutcome, Builder};
use executor::process::{run_limited, End, Limits};
use executor::runtime::{parse_dump, DumpedArray};

use crate::program::{self, Program};

/// How the user's program is run once to capture its region's inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Invocation {
    /// Its arguments (after `--`).
    pub args: Vec<String>,
    /// A file for its standard input (none: empty).
    pub stdin: Option<PathBuf>,
    /// Its working directory (none: polytune's own, as where the user runs it).
    pub dir: Option<PathBuf>,
    /// Which entry of the region to capture, from 1.
    pub entry: usize,
    /// Values of the size parameters and scalars (`--param NAME=VALUE`): the
    /// inputs are made by a driver of ours instead (a region in a library
    /// function, with no `main` to run).
    pub params: Vec<(String, String)>,
}

/// `--param NAME=VALUE`: a C identifier and a number, for
/// [`Invocation::params`]; the message says which part is wrong.
pub fn parse_param(s: &str) -> std::result::Result<(String, String), String> {
    let Some((name, value)) = s.split_once('=') else { return Err(format!("`{s}`: expected NAME=VALUE")) };
    let (name, value) = (name.trim(), value.trim());
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Err(format!("`{name}` is not a C identifier"));
    }
    if !value.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(format!("`{value}`: a value is a number (an integer for a size)"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// A capture on disk, checked against its name.
#[derive(Debug, Clone)]
pub struct Capture {
    /// `<cache>/captures/<sha256>.ptc`.
    pub path: PathBuf,
    pub hash: String,
    /// How many times the program entered the region.
    pub entries: usize,
    /// What the whole program's region wrote at its exit (when it entered once:
    /// what the replayed original must reproduce).
    pub outputs: Vec<DumpedArray>,
    /// The whole program's run, in seconds.
    pub wall_s: f64,
    /// Made by our driver from `--param` values and generated arrays.
    pub generated: bool,
}

/// Runs `program`'s capturing build once as `how` says and keeps the capture.
pub fn capture(builder: &Builder, program: &Program, how: &Invocation, timeout: Duration) -> Result<Capture> {
    let at = format!("{}:{}", program.scop.file.display(), program.scop.start.line);
    let text = match how.params.is_empty() {
        true => codegen::capturing_program(&program.source, &program.scop),
        false => codegen::generating_program(&program.source, &program.scop, &how.params),
    }
    .with_context(|| format!("{at}: capturing the region's inputs"))?;
    let binary = match builder.build(&text) {
        BuildOutcome::Built { binary, .. } => binary,
        BuildOutcome::Failed { message } => {
            return Err(Error::failed(format!("{at}: the capturing build of the program failed:\n{message}")))
        }
    };
    let dir = program::cache_dir()?.join("captures");
    let scratch = dir.join(format!("run-{}", executor::process::unique_suffix()));
    std::fs::create_dir_all(&scratch).with_context(|| format!("{}: cannot create", scratch.display()))?;
    let result = run_capture(&binary, how, timeout, &scratch, &dir, &at);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn run_capture(
    binary: &Path,
    how: &Invocation,
    timeout: Duration,
    scratch: &Path,
    dir: &Path,
    at: &str,
) -> Result<Capture> {
    let (file, dump, time) = (scratch.join("capture"), scratch.join("dump"), scratch.join("time"));
    let mut cmd = command(binary, how)?;
    cmd.env("POLYTUNE_CAPTURE_FILE", &file)
        .env("POLYTUNE_CAPTURE_ENTRY", how.entry.max(1).to_string())
        .env("POLYTUNE_DUMP_FILE", &dump)
        .env("POLYTUNE_TIME_FILE", &time);
    let out = run_limited(cmd, &Limits::default(), timeout, 4096)
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let said = out.output.text();
    match out.end {
        End::TimedOut => {
            return Err(Error::failed(format!(
                "{at}: the program's capturing run took longer than {} s",
                timeout.as_secs()
            )))
        }
        End::Exited(status) if !status.success() => {
            return Err(Error::failed(format!(
                "{at}: the program's capturing run failed ({status}): {}",
                said.trim()
            )))
        }
        End::Exited(_) => {}
    }
    let entries = std::fs::read_to_string(&time).map(|t| t.lines().count()).unwrap_or(0);
    if !file.is_file() && !how.params.is_empty() {
        return Err(Error::failed(format!("{at}: the driver made no capture: {}", said.trim())));
    }
    if !file.is_file() {
        return Err(Error::input_at(at, format!("the program entered the region {entries} time(s) with these arguments, so entry {} was never \
             captured", how.entry.max(1))));
    }
    let bytes = std::fs::read(&file)?;
    let outputs = parse_dump(&std::fs::read(&dump).unwrap_or_default())
        .map_err(|e| Error::failed(format!("{at}: the capturing run's output dump: {e}")))?;
    let hash = program::sha256_hex(&bytes);
    let path = dir.join(format!("{hash}.ptc"));
    if !path.is_file() {
        std::fs::rename(&file, &path).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let generated = !how.params.is_empty();
    Ok(Capture { path, hash, entries, outputs, wall_s: out.wall.as_secs_f64(), generated })
}

/// The user's program `binary` run as `how` says, its output discarded.
pub(crate) fn command(binary: &Path, how: &Invocation) -> Result<Command> {
    let mut cmd = Command::new(binary);
    if let Some(dir) = &how.dir {
        cmd.current_dir(dir);
    }
    cmd.args(&how.args).stdout(Stdio::null());
    match &how.stdin {
        Some(path) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("--stdin {}: cannot open", path.display()))?;
            cmd.stdin(f);
        }
        None => {
            cmd.stdin(Stdio::null());
        }
    }
    Ok(cmd)
}

/// The capture at `path`, refused where its bytes are not the ones its name
/// (their SHA-256) says.
pub fn checked(path: &Path) -> Result<String> {
    let bytes =
        std::fs::read(path).with_context(|| format!("{}: cannot read the capture", path.display()))?;
    let hash = program::sha256_hex(&bytes);
    let named = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if hash != named {
        return Err(Error::input_at(
            path.display(),
            format!("the capture is corrupted (its SHA-256 is {hash}); capture it again"),
        ));
    }
    Ok(hash)
}

/// `builder` for the programs that replay a region: the program's own
/// `main`, wherever it is, renamed as `codegen::replay_program` renames the
/// one of the SCoP's file, since the replay's `main` takes its place (a
/// program's `main` in one of its `--source` files).
pub fn replaying(builder: &Builder) -> Result<Builder> {
    let mut extras = builder.extras().clone();
    if extras.sources.is_empty() {
        return Ok(builder.clone());
    }
    extras.cpp_args.push(format!("-Dmain={}", codegen::REPLACED_MAIN));
    Ok(builder.with_extras(&extras)?)
}

/// The program that replays `region` of `program` from `capture`.
pub fn replay(program: &Program, region: &codegen::Exported, capture: &Capture) -> Result<String> {
    let at = format!("{}:{}", program.scop.file.display(), program.scop.start.line);
    codegen::replay_program(&program.source, &program.scop, region, &capture.path.display().to_string())
        .with_context(|| format!("{at}: the replay of the region"))
}

/// The original region replayed: the reference of a replayed campaign, which
/// must give what the whole program's region gave where it ran once (else
/// the capture misses something the region reads).
pub fn replay_original(program: &Program, capture: &Capture) -> Result<String> {
    replay(program, &codegen::original_exported(&program.source, &program.scop), capture)
}

/// The replayed original must write what the whole program's region wrote
/// at the captured entry; checked where the program entered the region once
/// (the dump holds every entry's outputs). From generated inputs, its
/// outputs must be finite.
pub fn check_reproduced(
    capture: &Capture,
    reference: &executor::evaluate::Reference,
    tolerance: executor::verify::Tolerance,
) -> Result<()> {
    if capture.generated {
        if let Some(element) = executor::verify::first_non_finite(&reference.dump) {
            return Err(Error::input(format!("with the generated inputs the region computes {element}: give other --param values (the arrays \
                 hold values in [0.5, 1.5), integers in 1..=8)")));
        }
    }
    if capture.entries != 1 {
        return Ok(());
    }
    // The capture was written by another build of the program: within the noise.
    let verdict = executor::verify::compare_with(reference.expected(), &capture.outputs, tolerance);
    if !verdict.is_match() {
        return Err(Error::failed(format!("the region replayed from its capture does not write what it wrote in the program ({verdict}): it \
             reads something its model does not show (a pointer it reads through, a call with side effects)")));
    }
    Ok(())
}

/// The capture of SHA-256 `hash` in this machine's cache (a campaign's, for
/// a worker that joins it), checked.
pub fn stored(hash: &str) -> Result<Capture> {
    let path = program::cache_dir()?.join("captures").join(format!("{hash}.ptc"));
    if !path.is_file() {
        return Err(Error::input_at(
            path.display(),
            "the campaign replays its region from this capture, which this machine does not have; copy it \
             here, or tune here with the program's arguments",
        ));
    }
    checked(&path)?;
    Ok(Capture {
        path,
        hash: hash.to_string(),
        entries: 0,
        outputs: Vec::new(),
        wall_s: 0.0,
        generated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_whose_bytes_changed_is_refused() {
        let dir =
            std::env::temp_dir().join(format!("polytune-capture-{}", executor::process::unique_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes = b"PTD1 not really a record";
        let path = dir.join(format!("{}.ptc", program::sha256_hex(bytes)));
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(checked(&path).unwrap(), program::sha256_hex(bytes));
        std::fs::write(&path, b"PTD1 not really a record, edited").unwrap();
        let err = checked(&path).unwrap_err().to_string();
        assert!(err.contains("the capture is corrupted"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
