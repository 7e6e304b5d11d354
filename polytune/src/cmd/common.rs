//! What several subcommands share: the build options, `--timeout`, and (re-exported from
//! the library module [`crate::program`]) datasets, program loading and machine profiles.

use std::path::PathBuf;

use anyhow::Result;
use store::Store;

pub use crate::program::{Dataset, ProgramConfig};

/// How a program is preprocessed and built, on `run` and `tune`: the
/// options, after those of a `polytune.toml` (next to the program, or
/// `--config`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BuildArgs {
    /// An argument for the C preprocessor (`-I...`, `-D...`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub cc_args: Vec<String>,
    /// A further translation unit of the program (PolyBench's
    /// `utilities/polybench.c`), linked into the original and every variant;
    /// repeatable.
    #[arg(long = "source", value_name = "FILE")]
    pub sources: Vec<PathBuf>,
    /// A flag for every compile, after the machine profile's; repeatable.
    #[arg(long = "cflag", value_name = "ARG", allow_hyphen_values = true)]
    pub cflags: Vec<String>,
    /// A flag for every link (`-lfoo`, `-L...`); repeatable.
    #[arg(long = "ldflag", value_name = "ARG", allow_hyphen_values = true)]
    pub ldflags: Vec<String>,
    /// The program's build description (default: `polytune.toml` next to
    /// the program, when there is one).
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The regions are found, not marked: the longest runs of statements
    /// with a loop that polytune can model, in every function (`polytune
    /// scop --autodetect` lists them). A file with `#pragma scop` is read
    /// without it.
    #[arg(long)]
    pub autodetect: bool,
}

impl BuildArgs {
    /// The options as the library takes them.
    pub fn options(&self) -> tuner::program::BuildOptions {
        let options = ProgramConfig {
            sources: self.sources.clone(),
            cc_args: self.cc_args.clone(),
            cflags: self.cflags.clone(),
            ldflags: self.ldflags.clone(),
            autodetect: self.autodetect,
        };
        tuner::program::BuildOptions { config: self.config.clone(), options }
    }
}

/// `--timeout` of `scop`, `schedule`, `run` and `bench`: a limit on the in-process
/// steps (scheduling, code generation) of one program, in seconds. Generous:
/// the slowest PolyBench kernel (adi, unified scheduler) takes about 40 s.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct TimeoutArg {
    /// Give up on modelling (scop), scheduling and code generation of a program after this many
    /// seconds (measurements have their own limits, scaled from the original).
    #[arg(long = "timeout", value_name = "SECONDS", default_value_t = 600.0, value_parser = positive_seconds)]
    pub seconds: f64,
}

/// `--threads` and `--runs`: a count of at least 1 (clap refuses 0 as a
/// usage error, exit status 2).
pub fn at_least_one(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}` is not a count: {e}")),
    }
}

fn positive_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// Which SCoP of a file `schedule` and `space` read, how it is
/// preprocessed, and how they print.
#[derive(clap::Args)]
pub struct ScopArgs {
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    pub scop: usize,
    /// PolyBench dataset size (passed as -D<SIZE>_DATASET): it matters where sizes are
    /// macros rather than parameters.
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    pub dataset: Dataset,
    /// An argument for the C preprocessor (`-I...`, `-D...`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub cc_args: Vec<String>,
    /// The SCoPs are the regions found without pragmas (see `scop --autodetect`).
    #[arg(long)]
    pub autodetect: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct StoreArg {
    /// Store: a SQLite path or a `postgres://` URL (default: the user's data directory).
    #[arg(long)]
    pub db: Option<String>,
}

impl StoreArg {
    /// Opens an existing store; a query never creates one.
    pub fn open(&self) -> Result<Store> {
        Ok(tuner::stored::open_existing(self.db.as_deref())?)
    }
}

/// Whether builds replay the region from a capture of its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Replay {
    /// When the program is given arguments, an input or a directory.
    Auto,
    On,
    /// Every measurement runs the whole program (with no arguments).
    Off,
}

/// How the program's region is captured and replayed (`run`, `tune`).
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The program's own arguments: its region's inputs are captured from one run with them, and
    /// every build replays the region from that capture instead of running the whole program.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
    /// A file for the capturing run's standard input.
    #[arg(long, value_name = "PATH")]
    pub stdin: Option<std::path::PathBuf>,
    /// The capturing run's working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<std::path::PathBuf>,
    /// Which entry of the region is captured (1: the first).
    #[arg(long, default_value_t = 1, value_parser = at_least_one)]
    pub capture_entry: usize,
    /// A size parameter's or a scalar's value, `NAME=VALUE` (repeatable): the region is driven by
    /// a program of ours with these values and generated array contents, not by the program's
    /// own `main` (a SCoP in a library function).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = tuner::capture::parse_param)]
    pub params: Vec<(String, String)>,
    /// Replay the region from a capture (`on`), run the whole program for every measurement
    /// (`off`), or replay where the program is given arguments, an input or a directory (`auto`).
    #[arg(long, value_enum, default_value = "auto")]
    pub replay: Replay,
}

impl ReplayArgs {
    /// The capturing run, where builds replay.
    pub fn invocation(&self) -> Option<tuner::capture::Invocation> {
        let given = !self.args.is_empty()
            || self.stdin.is_some()
            || self.run_dir.is_some()
            || !self.params.is_empty();
        let on = match self.replay {
            Replay::On => true,
            Replay::Off => false,
            Replay::Auto => given,
        };
        on.then(|| tuner::capture::Invocation {
            args: self.args.clone(),
            stdin: self.stdin.clone(),
            dir: self.run_dir.clone(),
            entry: self.capture_entry,
            params: self.params.clone(),
        })
    }
}
