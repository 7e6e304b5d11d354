//! `polytune tune FILE...`: a campaign. Everything that can be wrong with the
//! input (files, knobs, machine profile) is checked before the store is
//! opened, so bad input writes nothing.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use executor::verify::Tolerance;

use super::common::Dataset;
use crate::campaign::{self, grid, Budget, Campaign, Config, End, Kernel, Setup};
use crate::exit::{Interrupted, NoResult};
use crate::strategy::{Rungs, StrategyKind};

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
    /// Wall-time budget of this invocation: `90s`, `30m`, `8h`.
    #[arg(long, value_parser = parse_duration)]
    budget: Option<Duration>,
    /// Variant evaluations for the whole campaign (resumed runs count).
    #[arg(long)]
    evals: Option<usize>,
    #[arg(long, value_enum, default_value_t = StrategyKind::Random)]
    strategy: StrategyKind,
    /// Dataset the best is chosen on (halving starts smaller).
    #[arg(long, value_enum, default_value_t = Dataset::Large)]
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
    #[arg(long, value_parser = parse_duration, default_value = "300s")]
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
    #[arg(long, value_enum, default_value_t = Rungs::Auto)]
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
    peers: String,
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
    #[arg(long, value_enum, default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    /// How long a claim on a point lasts without this process's heartbeat
    /// (three per lease): once this process is killed, `polytune worker`s
    /// on the same campaign take its points over after at most this long.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    lease: Duration,
    /// Do not measure here: start `--workers` processes running this same
    /// command as jobs of a batch system (`slurm`: `sbatch`), then return.
    /// The store must be reachable from every node.
    #[arg(long, value_enum, requires = "workers")]
    submit: Option<crate::slurm::Submit>,
    /// How many jobs `--submit` starts.
    #[arg(long, requires = "submit")]
    workers: Option<usize>,
    #[command(flatten)]
    replay: super::common::ReplayArgs,
}

/// How long the program's capturing run may take.
const CAPTURE_TIMEOUT: Duration = Duration::from_secs(3600);

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

/// Everything a campaign's processes need to know, from `tune`'s options
/// or from a campaign stored by one (`polytune worker`).
pub(super) struct Job {
    /// Each SCoP tuned: its file, how that is built and which SCoP.
    pub files: Vec<(PathBuf, crate::program::ProgramConfig, usize)>,
    pub dataset: Dataset,
    pub strategy: StrategyKind,
    pub seed: u64,
    pub threads: Option<usize>,
    pub settings: Vec<String>,
    pub tiles: Vec<grid::Tiles>,
    pub race: Option<f64>,
    pub rungs: Rungs,
    pub runs: usize,
    pub tolerance: f64,
    pub machine: String,
    /// `--peers`' text: `auto`, `none` or names.
    pub peers: String,
    /// `--references`: which reference points (`None`: all).
    pub references: Option<Vec<String>>,
    /// `--warm-start`: points of each other machine measured first.
    pub warm_start: usize,
    pub emulate: bool,
    pub cold: bool,
    pub variant_timeout: Duration,
    pub on_noise: crate::noise::OnNoise,
    pub lease: Duration,
    pub json: bool,
    /// `--submit` and `--workers`: start that many jobs instead of measuring.
    pub submit: Option<(crate::slurm::Submit, usize)>,
    /// The capturing run of each file's program, where regions are replayed.
    pub capture: Option<crate::capture::Invocation>,
    /// A stored campaign's captures, by file (a worker's: no program is run again).
    pub captured: Vec<Option<String>>,
}

/// The peers `--peers` names: with `auto` every installed one (a line on
/// stderr for each one skipped); a named peer that cannot be built here is an
/// error, before anything is measured.
fn peers(text: &str, threads: usize) -> Result<Vec<String>> {
    match text.trim() {
        "none" | "" => Ok(Vec::new()),
        "auto" => {
            let (found, missing) = executor::peers::installed(threads);
            for line in missing {
                eprintln!("{line}");
            }
            Ok(found.into_iter().map(|p| p.name.to_string()).collect())
        }
        names => names
            .split(',')
            .map(|n| match executor::peers::find(n.trim(), threads) {
                Ok(p) => Ok(p.name.to_string()),
                Err(why) => bail!("--peers: {why}"),
            })
            .collect(),
    }
}

pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len()));
    let n: f64 =
        number.parse().map_err(|_| format!("`{text}`: expected a duration such as 90s, 30m or 8h"))?;
    let seconds = match unit {
        "s" | "" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (use s, m or h)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

pub fn run(args: Args) -> Result<()> {
    if args.evals == Some(0) {
        bail!("--evals 0 leaves nothing to do");
    }
    let capture = args.replay.invocation();
    let mut files = Vec::new();
    for f in &args.files {
        let build = args.build.resolve(f)?;
        for scop in tuned_scops(f, &build, &args, capture.as_ref())? {
            files.push((f.clone(), build.clone(), scop));
        }
    }
    let job = Job {
        files,
        dataset: args.dataset,
        strategy: args.strategy,
        seed: args.seed,
        threads: args.threads,
        settings: args.settings,
        tiles: args.tiles,
        race: args.race.0,
        rungs: args.rungs,
        runs: args.runs,
        tolerance: args.tolerance,
        machine: args.machine,
        peers: args.peers,
        references: args.references.0,
        warm_start: args.warm_start,
        emulate: args.emulate,
        cold: args.cold,
        variant_timeout: args.variant_timeout,
        on_noise: args.on_noise,
        lease: args.lease,
        json: args.json,
        submit: args.submit.zip(args.workers),
        capture,
        captured: Vec::new(),
    };
    if job.submit.is_some_and(|(_, n)| n == 0) {
        bail!("--workers 0 starts nothing");
    }
    execute(job, args.db, Budget { evals: args.evals, time: args.budget }, None)
}

/// Runs `job`'s campaign in the store at `db`. With `joining` (a campaign
/// read from the store), the campaign `job` makes must be that one: the
/// same machine fingerprint and the same key (files unchanged, the same
/// polytune), else nothing is measured.
pub(super) fn execute(
    job: Job,
    db: Option<String>,
    budget: Budget,
    joining: Option<&store::Campaign>,
) -> Result<()> {
    let args = job;
    let gpu = grid::knob_grid(&args.settings, 1)?.iter().any(|o| o.target == vocab::knobs::Target::Gpu);
    let setup = Setup::new(&args.machine, args.threads)?;
    let gpus = gpu_slots(&args, &setup, gpu)?;
    let threads = setup.threads;
    let spec = grid::Spec {
        knobs: grid::knob_grid(&args.settings, threads)?,
        code: grid::code_grid(&args.settings, threads, setup.profile.compiler().avx512())?,
        gpu_code: grid::gpu_code_grid(&args.settings)?,
        tiles: args.tiles.clone(),
        threads,
        seed: args.seed,
        peers: peers(&args.peers, threads)?,
        references: args.references.clone(),
    };

    let mut kernels = args
        .files
        .iter()
        .enumerate()
        .map(|(i, (f, build, scop))| {
            let replayed = args.capture.is_some() || args.captured.get(i).is_some_and(Option::is_some);
            Kernel::load(f, *scop, args.strategy, args.dataset, build, &spec, replayed)
        })
        .collect::<Result<Vec<_>>>()?;

    if let Some((crate::slurm::Submit::Slurm, workers)) = args.submit {
        return submit_workers(db.as_deref(), workers, threads, args.json);
    }

    let (evaluator, fingerprint) = setup.evaluator(args.runs, args.tolerance)?;
    // Each original measured before the store is written: a refused one leaves no row.
    let mut noise = crate::noise::Noise::new(args.on_noise);
    let first = &setup.slots[0];
    noise.check(&[(&first.name, &first.cores)], &campaign::interrupted)?;
    capture_inputs(&args, &evaluator, &mut kernels)?;
    let originals = measure_originals(&evaluator, &kernels, args.dataset)?;
    let location = match &db {
        Some(db) => db.clone(),
        None => store::Store::default_location()?.display().to_string(),
    };
    // The store's errors name the location (a password in a URL hidden).
    let db = store::Store::open(&location)?;
    let location = db.target().to_string();
    let machine_id = db.machine(&setup.profile.name, &serde_json::to_string(&fingerprint)?)?;
    let config = campaign_config(&args, &kernels, &spec, &fingerprint, gpu);
    if let Some(stored) = joining {
        check_joining(stored, &config, &setup.profile.name)?;
    }
    warm_starts(&db, &mut kernels, &args, machine_id, &spec)?;
    let originals = kernels.iter().zip(originals).map(|(k, r)| (k, args.dataset, r)).collect();
    let mut campaign = Campaign::open(&db, evaluator, config, budget, machine_id)?
        .with_observer(super::progress::observer())
        .with_originals(originals)
        .with_slots(setup.slots.clone());
    if let Some(gpus) = gpus {
        campaign = campaign.with_gpus(gpus);
    }
    campaign.variant_timeout = args.variant_timeout;
    campaign.noise = noise;
    campaign.lease = args.lease;
    let end = campaign.run(&kernels)?;
    report(&args, &setup, &kernels, &campaign, end, &location)
}

/// The GPU slots and nvcc GPU points run their CUDA form with (`None`: no
/// GPU target, or emulated); a GPU target with nowhere to run it is refused.
fn gpu_slots(args: &Job, setup: &Setup, gpu: bool) -> Result<Option<campaign::Gpus>> {
    if gpu && !args.emulate && setup.profile.gpus.is_empty() {
        bail!(
            "--set target=gpu: machine profile `{}` has no GPU slot, so GPU variants cannot be measured here; \
             add --emulate to measure their emulation on the CPU (it checks each mapping's outputs; its times say \
             nothing of a GPU), or a slot `gpu = N` to the profile",
            args.machine
        );
    }
    // GPU points run their CUDA form on the profile's GPU slots.
    Ok(match gpu && !args.emulate {
        true => Some(campaign::Gpus {
            slots: setup.profile.gpus.clone(),
            nvcc: executor::cuda::Nvcc::of(&setup.profile)
                .map_err(|e| anyhow::anyhow!("machine profile `{}`: {e}", setup.profile.name))?,
        }),
        false => None,
    })
}

/// `--submit slurm`: `workers` batch jobs started on this same command, and
/// their ids said, instead of measuring here.
fn submit_workers(db: Option<&str>, workers: usize, threads: usize, json: bool) -> Result<()> {
    // The jobs need the store: opened (created) here, a bad location refused before any job starts.
    if let Some(db) = db {
        store::Store::open(db)?;
    }
    let command = crate::slurm::job_arguments(&std::env::args().skip(1).collect::<Vec<_>>());
    let ids = crate::slurm::submit(&command, workers, threads, &std::env::current_dir()?)?;
    if json {
        println!("{}", serde_json::json!({ "submitted": ids }));
    } else {
        println!(
            "submitted {} Slurm job(s): {} (each writes polytune-ID.out and .err here)",
            ids.len(),
            ids.join(" ")
        );
    }
    Ok(())
}

/// Each replayed kernel's captured inputs: a stored campaign's capture, or
/// one run of the program now.
fn capture_inputs(
    args: &Job,
    evaluator: &executor::evaluate::Evaluator,
    kernels: &mut [Kernel],
) -> Result<()> {
    for (i, k) in kernels.iter_mut().enumerate() {
        let capture = match (args.captured.get(i).cloned().flatten(), &args.capture) {
            (Some(hash), _) => crate::capture::stored(&hash)?,
            (None, Some(how)) => {
                eprintln!(
                    "{} [{}] capturing the region's inputs from one run",
                    k.spec.name,
                    args.dataset.name()
                );
                let builder = evaluator.builder.with_extras(&k.spec.build.extras(args.dataset))?;
                crate::capture::capture(&builder, &k.programs[&args.dataset], how, CAPTURE_TIMEOUT)?
            }
            (None, None) => continue,
        };
        k.spec.capture = Some(capture.hash.clone());
        k.capture = Some(capture);
    }
    Ok(())
}

/// The campaign's configuration as stored: what makes its key, and what a
/// worker joining it must match.
fn campaign_config(
    args: &Job,
    kernels: &[Kernel],
    spec: &grid::Spec,
    fingerprint: &executor::machine::Fingerprint,
    gpu: bool,
) -> Config {
    Config {
        polytune: env!("CARGO_PKG_VERSION").to_string(),
        kernels: kernels.iter().map(|k| k.spec.clone()).collect(),
        dataset: args.dataset,
        strategy: args.strategy,
        seed: args.seed,
        threads: spec.threads,
        settings: args.settings.clone(),
        tiles: args.tiles.clone(),
        runs: args.runs,
        tolerance: args.tolerance,
        machine: fingerprint.id(),
        peers: spec.peers.clone(),
        references: args.references.clone(),
        emulate: gpu && args.emulate,
        cold: args.cold,
        race: args.race,
        rungs: args.rungs,
    }
}

/// `--warm-start`: each kernel first gets the best points other machines of
/// the store found for it, said where there are any.
fn warm_starts(
    db: &store::Store,
    kernels: &mut [Kernel],
    args: &Job,
    machine_id: i64,
    spec: &grid::Spec,
) -> Result<()> {
    for k in kernels {
        let from = k.warm_start(db, args.dataset, machine_id, args.warm_start, spec)?;
        if !from.is_empty() {
            eprintln!(
                "{} [{}] warm start: first the best points known on other machines ({})",
                k.spec.name,
                args.dataset.name(),
                from.join(", ")
            );
        }
    }
    Ok(())
}

/// The campaign's outcome, as JSON or text: how it ended and each kernel's
/// best; an error where it was interrupted or nothing ran correctly.
fn report(
    args: &Job,
    setup: &Setup,
    kernels: &[Kernel],
    campaign: &Campaign,
    end: End,
    location: &str,
) -> Result<()> {
    let campaign_id = campaign.campaign_id;
    let mut bests = Vec::new();
    for k in kernels {
        bests.push(campaign.store.best(
            &k.spec.name,
            Some(&setup.profile.name),
            Some(args.dataset.name()),
        )?);
    }
    if args.json {
        let points: Vec<usize> = kernels.iter().map(|k| k.space.len() + k.references.len()).collect();
        let out = serde_json::json!({
            "campaign": campaign_id, "end": end, "store": location, "points": points, "best": bests,
            "slots": setup.slots.len(), "busy_at_once": campaign.peak_busy_slots,
            "worker": campaign.worker,
            "evaluated": campaign.trace.iter().map(|t| (t.dataset.name(), &t.point_id)).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let how = match end {
        End::Finished => "finished",
        End::Budget => "stopped: budget spent (run the same command with a larger budget to go on)",
        End::Interrupted => "interrupted (run the same command to resume)",
    };
    println!("campaign {campaign_id} {how}; store {location}");
    for (k, best) in kernels.iter().zip(&bests) {
        match best {
            Some(b) => println!("  {}: {}", k.spec.name, super::query::summary(b)),
            None => println!("  {}: no variant ran correctly yet", k.spec.name),
        }
    }
    if end == End::Interrupted {
        return Err(Interrupted("interrupted; run the same command to resume".into()).into());
    }
    if bests.iter().all(Option::is_none) {
        return Err(NoResult("no variant ran correctly".into()).into());
    }
    Ok(())
}

/// Which SCoPs of `file` to tune: those `--scop` names, else every one; with
/// `--autodetect` and a program to run (not a driver of ours), the regions
/// that take at least [`crate::profile::HOT_SHARE`] of one profiled run,
/// hottest first, each region's share said.
fn tuned_scops(
    file: &std::path::Path,
    build: &crate::program::ProgramConfig,
    args: &Args,
    capture: Option<&crate::capture::Invocation>,
) -> Result<Vec<usize>> {
    let (source, scops) = crate::program::scops(file, args.dataset, build)?;
    if let Some(&n) = args.scops.iter().find(|&&n| n >= scops.len()) {
        bail!("{}: has {} SCoP(s); --scop {n} does not exist", file.display(), scops.len());
    }
    if !args.scops.is_empty() {
        let mut chosen = args.scops.clone();
        chosen.sort_unstable();
        chosen.dedup();
        return Ok(chosen);
    }
    let driven = capture.is_some_and(|c| !c.params.is_empty());
    if !build.autodetect || driven {
        return Ok((0..scops.len()).collect());
    }
    let setup = Setup::new(&args.machine, args.threads)?;
    let (evaluator, _) = setup.evaluator(1, args.tolerance)?;
    let builder = evaluator.builder.with_extras(&build.extras(args.dataset))?;
    let how = capture.cloned().unwrap_or_default();
    eprintln!("{}: timing the {} region(s) found in one run of the program", file.display(), scops.len());
    let profile = crate::profile::profile(&builder, &source, &scops, &how, CAPTURE_TIMEOUT)?;
    let hot = profile.hot();
    for (k, scop) in scops.iter().enumerate() {
        let last = scop.last_line(&source);
        eprintln!(
            "  {:<16} {}(), lines {}-{last}: {:5.1}% of {:.3} s{}",
            campaign::kernel_name(file, k),
            scop.function,
            scop.start.line,
            100.0 * profile.share(k),
            profile.wall_s,
            if hot.contains(&k) { ", tuned" } else { ", not tuned" }
        );
    }
    if hot.is_empty() {
        bail!(
            "{}: no region found takes {:.0}% of the program's run; name one with --scop N",
            file.display(),
            100.0 * crate::profile::HOT_SHARE
        );
    }
    Ok(hot)
}

/// A worker joins `stored` only as the process that made it would have run
/// it: results are per machine, and a changed file or another polytune is
/// another campaign.
/// Each kernel's original measured on `dataset`, its rounding noise said.
fn measure_originals(
    evaluator: &executor::evaluate::Evaluator,
    kernels: &[Kernel],
    dataset: Dataset,
) -> Result<Vec<executor::evaluate::Reference>> {
    let mut originals = Vec::new();
    for k in kernels {
        eprintln!("{} [{}] measuring the original program", k.spec.name, dataset.name());
        let original = campaign::measure_original(evaluator, k, dataset)?;
        if let Some(rounding) = original.measurement.rounding_noise.as_ref().filter(|n| !n.is_empty()) {
            eprintln!(
                "{} [{}] rounding noise in the original's outputs, which variants are compared within: {rounding}",
                k.spec.name,
                dataset.name()
            );
        }
        originals.push(original);
    }
    Ok(originals)
}

fn check_joining(stored: &store::Campaign, ours: &Config, profile: &str) -> Result<()> {
    let theirs: Config = serde_json::from_str(&stored.config)?;
    if theirs.machine != ours.machine {
        bail!(
            "campaign {} tunes for machine fingerprint {}, and this machine (profile `{profile}`) is {}: \
             results are per machine, so this worker does not join (run `polytune tune` here for this machine)",
            stored.id,
            theirs.machine,
            ours.machine
        );
    }
    if stored.key != ours.key() {
        let changed: Vec<String> = theirs
            .kernels
            .iter()
            .zip(&ours.kernels)
            .filter(|(a, b)| a.source_hash != b.source_hash)
            .map(|(a, _)| a.path.display().to_string())
            .collect();
        bail!(
            "campaign {}: this worker would run another campaign ({}); it does not join",
            stored.id,
            if changed.is_empty() {
                "the settings differ".to_string()
            } else {
                format!("changed since the campaign started: {}", changed.join(", "))
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_budget_reads_back() {
        for b in [
            Budget { evals: Some(20), time: None },
            Budget { evals: Some(20), time: Some(Duration::from_secs(90)) },
            Budget { evals: None, time: Some(Duration::from_secs(3600)) },
            Budget::default(),
        ] {
            assert_eq!(Budget::from_description(&b.describe()), b);
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("8h").unwrap(), Duration::from_secs(8 * 3600));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("8 days").is_err());
        assert!(parse_duration("h").is_err());
    }
}
