//! `polytune tune FILE...`: a campaign. Everything that can be wrong with the
//! input (files, knobs, machine profile) is checked before the store is
//! opened, so bad input writes nothing.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use executor::verify::Tolerance;

use super::common::Dataset;
use crate::campaign::request::{self, Outcome, Request};
use crate::campaign::{grid, Budget};
use crate::strategy::{Rungs, StrategyKind};
use tuner::selection::Selection;

#[derive(clap::Args)]
pub struct Args {
    /// C files holding `#pragma scop` regions (each SCoP is tuned), or
    /// regions `--autodetect` finds.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Tune only this SCoP of each file, counted from 0 (`polytune scop`
    /// lists them); repeatable. Default: every SCoP, or with `--autodetect`
    /// those that take at least 5% of one run of the program.
    #[arg(long = "scop", value_name = "N")]
    scops: Vec<usize>,
    /// Wall-time budget of this invocation, counted from its start
    /// (capturing inputs and measuring the originals included): `90s`,
    /// `30m`, `8h`. No measurement starts once it is spent, but each
    /// invocation evaluates one point at least.
    #[arg(long, value_parser = crate::units::parse_duration)]
    budget: Option<Duration>,
    /// Variant evaluations for the whole campaign (resumed runs count).
    #[arg(long)]
    evals: Option<usize>,
    #[arg(long, value_parser = crate::choice::choice::<StrategyKind>(), default_value_t = StrategyKind::Random)]
    strategy: StrategyKind,
    /// Dataset the best is chosen on (halving starts smaller).
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// OpenMP threads of every variant (default: every core of the smallest slot; variants
    /// are measured on all the machine profile's slots at once).
    #[arg(long, value_parser = super::common::at_least_one)]
    threads: Option<usize>,
    /// Seed of the random choices: the same seed, the same campaign.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Store: a SQLite path or a `postgres://` URL (default: the user's data directory).
    #[arg(long)]
    db: Option<String>,
    /// Tile sizes to search, comma-separated; 0 is untiled.
    #[arg(long, default_value = grid::TILES, value_parser = grid::parse_tiles)]
    tiles: std::vec::Vec<grid::Tiles>,
    /// Fix a knob (`KNOB=VALUE`) instead of searching it, or search exactly
    /// the values given (`KNOB=V1,V2`, e.g. `vector_width=default,512` or
    /// `hlim=off,2,4`); repeatable.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    settings: Vec<String>,
    /// How long scheduling and generating one point may take before the
    /// point is recorded as `schedule-timeout`.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = "300s")]
    variant_timeout: Duration,
    /// Timed runs per measurement (after one warm-up).
    #[arg(long, default_value_t = 5, value_parser = super::common::at_least_one)]
    runs: usize,
    /// Relative tolerance when comparing outputs with the original's.
    #[arg(long, default_value_t = Tolerance::default().relative)]
    tolerance: f64,
    /// Racing: a variant whose warm-up and first timed run both take longer
    /// than this factor times the kernel's best time so far is measured
    /// once, not `--runs` times (recorded with no spread); `off` measures
    /// every variant fully.
    #[arg(long, value_parser = parse_race, default_value = "3")]
    race: Race,
    /// Halving's rungs: `auto` evaluates on SMALL and MEDIUM first only
    /// where running is at least half of what its first 4 points cost on
    /// the campaign's dataset (else the campaign's dataset alone); `all`
    /// always.
    #[arg(long, value_parser = crate::choice::choice::<Rungs>(), default_value_t = Rungs::Auto)]
    rungs: Rungs,
    /// Machine profile: a name in configs/machines or a path to a .toml file.
    #[arg(long, default_value = "default")]
    machine: String,
    /// How each program is preprocessed and built (the same options for
    /// every FILE, after each one's own `polytune.toml`).
    #[command(flatten)]
    build: super::common::BuildArgs,
    /// Other compilers' builds of the unmodified program measured as
    /// reference points: `auto` (every installed peer), `none`, or names
    /// (`clang-polly,gcc-graphite,pluto-maxfuse`; Pluto's are pluto-smartfuse,
    /// -maxfuse, -nofuse, each also with -nodiamond).
    #[arg(long, default_value = "none")]
    peers: request::Peers,
    /// Which of the reference points each kernel gets are measured: `all`,
    /// `none`, or names among identity, isl, pluto-like and isl-gpu
    /// (`--references isl-gpu`: a GPU campaign without the CPU ones). The
    /// original program is measured whatever this says: it is what every
    /// variant is verified and timed against.
    #[arg(long, default_value = "all", value_parser = grid::parse_references)]
    references: grid::References,
    /// Warm start: on a machine with no variant of a kernel measured on this
    /// dataset, first measure the N best points each other machine of the
    /// store found for it (before the reference points); 0: start cold.
    #[arg(long, default_value_t = 3)]
    warm_start: usize,
    /// With `--strategy model`: learn from this campaign's points alone.
    /// Without it the model starts from every verified measurement of the
    /// store (other kernels, other machines), weighted toward this kernel
    /// and this machine, and corrects that prior with what it measures.
    #[arg(long)]
    cold: bool,
    /// With `--set target=gpu`: measure GPU variants as their emulation on
    /// the CPU (blocks and threads as loops). It checks each mapping's
    /// outputs; its times say nothing of a GPU.
    #[arg(long)]
    emulate: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// What to do when the measurement slot's cores are busy with other
    /// processes just before measuring: warn (and record the load with the
    /// measurement), wait for quiet, or fail.
    #[arg(long, value_parser = crate::choice::choice::<crate::noise::OnNoise>(), default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    /// How long a claim on a point lasts without this process's heartbeat
    /// (three per lease): once this process is killed, `polytune worker`s
    /// on the same campaign take its points over after at most this long.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = "60s")]
    lease: Duration,
    /// Do not measure here: start `--workers` processes running this same
    /// command as jobs of a batch system (`slurm`: `sbatch`), then return.
    /// The store must be reachable from every node.
    #[arg(long, value_parser = crate::choice::choice::<crate::slurm::Submit>(), requires = "workers")]
    submit: Option<crate::slurm::Submit>,
    /// How many jobs `--submit` starts.
    #[arg(long, requires = "submit")]
    workers: Option<usize>,
    #[command(flatten)]
    replay: super::common::ReplayArgs,
}

/// `--race`'s value: a factor above 1, or `off` (`None`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Race(pub Option<f64>);

fn parse_race(s: &str) -> Result<Race, String> {
    if s == "off" {
        return Ok(Race(None));
    }
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 1.0 => Ok(Race(Some(f))),
        _ => Err(format!("`{s}` is neither `off` nor a factor above 1 (e.g. 3)")),
    }
}

pub fn run(args: Args) -> Result<()> {
    if args.evals == Some(0) {
        bail!("--evals 0 leaves nothing to do");
    }
    let capture = args.replay.invocation();
    let build = args.build.options();
    let selection = Selection {
        files: &args.files,
        build: &build,
        scops: &args.scops,
        dataset: args.dataset,
        machine: &args.machine,
        threads: args.threads,
        tolerance: args.tolerance,
        capture: capture.as_ref(),
    };
    let (files, profile) = tuner::selection::tuned(&selection, &mut |line| eprintln!("{line}"))?;
    let json = args.json;
    let request = Request { files, profile, capture, ..args.request() };
    if request.submit.is_some_and(|(_, n)| n == 0) {
        bail!("--workers 0 starts nothing");
    }
    let outcome = request::run(&request, None, super::progress::observer())?;
    report(outcome, json)
}

impl Args {
    /// The campaign these options ask for, its files, profile and capture
    /// not yet chosen (the selection reads the files).
    fn request(self) -> Request {
        Request {
            dataset: self.dataset,
            strategy: self.strategy,
            seed: self.seed,
            threads: self.threads,
            settings: self.settings,
            tiles: self.tiles,
            race: self.race.0,
            rungs: self.rungs,
            runs: self.runs,
            tolerance: self.tolerance,
            machine: self.machine,
            peers: self.peers,
            references: self.references.0,
            warm_start: self.warm_start,
            emulate: self.emulate,
            cold: self.cold,
            variant_timeout: self.variant_timeout,
            on_noise: self.on_noise,
            lease: self.lease,
            submit: self.submit.zip(self.workers),
            db: self.db,
            budget: Budget { evals: self.evals, time: self.budget },
            ..Request::new(Vec::new())
        }
    }
}

/// A campaign's outcome, as JSON or text; in text, an error where it was
/// interrupted or nothing ran correctly.
pub(super) fn report(outcome: Outcome, json: bool) -> Result<()> {
    if json {
        println!("{}", outcome.json()?);
        return Ok(());
    }
    print!("{}", outcome.text());
    Ok(outcome.verdict()?)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Tune {
        #[command(flatten)]
        args: super::Args,
    }

    /// A program that links the library and asks for a campaign with
    /// `Request::new` gets what `polytune tune FILE` does.
    #[test]
    fn the_library_defaults_are_the_commands() {
        let args = Tune::try_parse_from(["tune", "gemm.c"]).unwrap().args;
        let ours = format!("{:?}", args.request());
        assert_eq!(ours, format!("{:?}", super::Request::new(Vec::new())));
    }
}
