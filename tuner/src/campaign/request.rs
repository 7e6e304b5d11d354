//! A campaign as a program asks for one: a typed [`Request`] (what
//! `polytune tune`'s options say, or a stored campaign joined again,
//! [`Request::joining`]) and [`run`], which checks the input, loads the
//! kernels, measures the originals, opens the store, warm-starts and runs
//! the campaign, its events to an [`Observer`]; the [`Outcome`] is data for
//! the caller to show. The binary parses arguments and renders both.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Context, Error, Result};

use super::observer::{Event, Observer};
use super::{grid, Budget, Campaign, Config, End, Kernel, Setup, TraceEntry};
use crate::program::Dataset;
use crate::strategy::{Rungs, StrategyKind};

/// How long the one run of a program that captures a region's inputs may take.
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(3600);

/// Everything a campaign's processes need to know: from `tune`'s options,
/// from a campaign stored by one ([`Request::joining`], `polytune worker`),
/// or from a program that links polytune.
#[derive(Debug, Clone)]
pub struct Request {
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
    pub peers: Peers,
    /// `--references`: which reference points (`None`: all).
    pub references: Option<Vec<String>>,
    /// `--warm-start`: points of each other machine measured first.
    pub warm_start: usize,
    pub emulate: bool,
    pub cold: bool,
    pub variant_timeout: Duration,
    pub on_noise: crate::noise::OnNoise,
    pub lease: Duration,
    /// `--submit` and `--workers`: start that many jobs instead of measuring.
    pub submit: Option<(crate::slurm::Submit, usize)>,
    /// The capturing run of each file's program, where regions are replayed.
    pub capture: Option<crate::capture::Invocation>,
    /// A stored campaign's captures, by file (a worker's: no program is run again).
    pub captured: Vec<Option<String>>,
    /// Where the profiled run of the program spent its time, where the
    /// regions were chosen from one (`--autodetect`): kept with the campaign.
    pub profile: Option<vocab::RunProfile>,
    /// Store: a SQLite path or a `postgres://` URL (`None`: the user's data directory).
    pub db: Option<String>,
    pub budget: Budget,
    /// Where builds are cached (`None`: the user's cache directory).
    pub cache: Option<PathBuf>,
    /// The `polytune` executable the children that schedule points run
    /// (`None`: this process's own, the `polytune` binary).
    pub executable: Option<PathBuf>,
}

/// Which other compilers' builds of the unmodified program are measured
/// as reference points (`--peers`).
#[derive(Debug, Clone, PartialEq)]
pub enum Peers {
    /// Every peer installed here.
    Auto,
    /// These (none: no peer).
    Named(Vec<String>),
}

/// `auto`, `none` or comma-separated names.
impl std::str::FromStr for Peers {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Peers, String> {
        Ok(match text.trim() {
            "auto" => Peers::Auto,
            "none" | "" => Peers::Named(Vec::new()),
            names => Peers::Named(names.split(',').map(|n| n.trim().to_string()).collect()),
        })
    }
}

/// How long one point's scheduling and code generation may take, unless told.
pub const VARIANT_TIMEOUT: Duration = Duration::from_secs(300);

/// What [`run`] did.
#[derive(Debug)]
pub enum Outcome {
    /// `--submit slurm`: the batch jobs' ids; nothing was measured here.
    Submitted(Vec<String>),
    Ran(Ran),
}

/// A campaign invocation that measured.
#[derive(Debug)]
pub struct Ran {
    pub campaign_id: i64,
    pub end: End,
    /// The store, as it names itself (a password in a URL hidden).
    pub location: String,
    /// Each kernel's name, the points of its space (references included)
    /// and its best on this machine so far.
    pub kernels: Vec<String>,
    pub points: Vec<usize>,
    pub bests: Vec<Option<store::Best>>,
    pub slots: usize,
    pub peak_busy_slots: usize,
    pub worker: String,
    /// Every evaluation of this invocation.
    pub trace: Vec<TraceEntry>,
}

impl Outcome {
    /// The outcome as JSON: the jobs submitted (one line), or the campaign's
    /// end, store, bests, slots and evaluations (indented).
    pub fn json(&self) -> Result<String> {
        let r = match self {
            Outcome::Submitted(ids) => return Ok(serde_json::json!({ "submitted": ids }).to_string()),
            Outcome::Ran(r) => r,
        };
        let out = serde_json::json!({
            "campaign": r.campaign_id, "end": r.end, "store": r.location, "points": r.points, "best": r.bests,
            "slots": r.slots, "busy_at_once": r.peak_busy_slots,
            "worker": r.worker,
            "evaluated": r.trace.iter().map(|t| (t.dataset.name(), &t.point_id)).collect::<Vec<_>>(),
        });
        Ok(serde_json::to_string_pretty(&out)?)
    }

    /// The outcome as lines of text: the jobs submitted, or how the campaign
    /// ended and each kernel's best.
    pub fn text(&self) -> String {
        let r = match self {
            Outcome::Submitted(ids) => {
                return format!(
                    "submitted {} Slurm job(s): {} (each writes polytune-ID.out and .err here)\n",
                    ids.len(),
                    ids.join(" ")
                )
            }
            Outcome::Ran(r) => r,
        };
        let how = match r.end {
            End::Finished => "finished",
            End::Budget => "stopped: budget spent (run the same command with a larger budget to go on)",
            End::Interrupted => "interrupted (run the same command to resume)",
        };
        let mut text = format!("campaign {} {how}; store {}\n", r.campaign_id, r.location);
        for (name, best) in r.kernels.iter().zip(&r.bests) {
            match best {
                Some(b) => text += &format!("  {name}: {}\n", crate::stored::summary(b)),
                None => text += &format!("  {name}: no variant ran correctly yet\n"),
            }
        }
        text
    }

    /// An error where the campaign was interrupted or no variant of any
    /// kernel ran correctly (what the text says, for an exit status).
    pub fn verdict(&self) -> Result<()> {
        let Outcome::Ran(r) = self else { return Ok(()) };
        if r.end == End::Interrupted {
            return Err(Error::Interrupted("interrupted; run the same command to resume".into()));
        }
        if r.bests.iter().all(Option::is_none) {
            return Err(Error::NoResult("no variant ran correctly".into()));
        }
        Ok(())
    }
}

impl Request {
    /// A campaign on `files` with `polytune tune`'s defaults (a test holds
    /// the two together): the random strategy on LARGE, the default tiles,
    /// every reference point, no peer, a warm start of 3 points, no budget.
    pub fn new(files: Vec<(PathBuf, crate::program::ProgramConfig, usize)>) -> Request {
        Request {
            files,
            dataset: Dataset::Large,
            strategy: StrategyKind::Random,
            seed: 0,
            threads: None,
            settings: Vec::new(),
            tiles: grid::parse_tiles(grid::TILES).expect("the default tiles parse"),
            race: Some(super::RACE),
            rungs: Rungs::Auto,
            runs: 5,
            tolerance: executor::verify::Tolerance::default().relative,
            machine: "default".into(),
            peers: Peers::Named(Vec::new()),
            references: None,
            warm_start: 3,
            emulate: false,
            cold: false,
            variant_timeout: VARIANT_TIMEOUT,
            on_noise: Default::default(),
            lease: super::LEASE,
            submit: None,
            capture: None,
            captured: Vec::new(),
            profile: None,
            db: None,
            budget: Budget::default(),
            cache: None,
            executable: None,
        }
    }

    /// The request that joins campaign `id` of the store at `db` (default:
    /// the user's data directory) on this machine, its store that one, and
    /// the campaign as stored ([`run`] checks it is the one the request makes).
    pub fn join(db: Option<&str>, id: i64, machine: &str) -> Result<(Request, store::Campaign)> {
        let location = match db {
            Some(db) => db.to_string(),
            None => store::Store::default_location()?.display().to_string(),
        };
        let db = store::Store::open(&location)?;
        let Some(stored) = db.campaigns()?.into_iter().find(|c| c.id == id) else {
            return Err(Error::input(format!("{}: no campaign has id {id}", db.target())));
        };
        let request = Request { db: Some(location), ..Request::joining(&stored, machine)? };
        Ok((request, stored))
    }

    /// The request that makes the campaign `stored` again on this machine
    /// (profile `machine`), for one more process on it: its own files,
    /// settings and captures; the warm start was its first process's.
    pub fn joining(stored: &store::Campaign, machine: &str) -> Result<Request> {
        let config: Config = serde_json::from_str(&stored.config).with_context(|| {
            format!("campaign {}: its configuration is not one this polytune reads", stored.id)
        })?;
        let ours = env!("CARGO_PKG_VERSION");
        if config.polytune != ours {
            return Err(Error::input(format!("campaign {} was started by polytune {}, this is {ours}: another version may schedule the same \
                 point differently, so it does not join", stored.id, config.polytune)));
        }
        Ok(Request {
            dataset: config.dataset,
            strategy: config.strategy,
            seed: config.seed,
            threads: Some(config.threads),
            settings: config.settings.clone(),
            tiles: config.tiles.clone(),
            race: config.race,
            rungs: config.rungs,
            runs: config.runs,
            tolerance: config.tolerance,
            machine: machine.to_string(),
            peers: Peers::Named(config.peers.clone()),
            references: config.references.clone(),
            warm_start: 0,
            emulate: config.emulate,
            cold: config.cold,
            captured: config.kernels.iter().map(|k| k.capture.clone()).collect(),
            budget: stored.budget,
            ..Request::new(config.kernels.iter().map(|k| (k.path.clone(), k.build.clone(), k.scop)).collect())
        })
    }
}

/// The peers `--peers` names: with `auto` every installed one (a line on
/// step for each one skipped); a named peer that cannot be built here is an
/// error, before anything is measured.
fn peers(peers: &Peers, threads: usize, observer: &dyn Observer) -> Result<Vec<String>> {
    match peers {
        Peers::Auto => {
            let (found, missing) = executor::peers::installed(threads);
            for line in missing {
                observer.event(Event::Step(line));
            }
            Ok(found.into_iter().map(|p| p.name.to_string()).collect())
        }
        Peers::Named(names) => names
            .iter()
            .map(|n| match executor::peers::find(n, threads) {
                Ok(p) => Ok(p.name.to_string()),
                Err(why) => Err(Error::input(format!("--peers: {why}"))),
            })
            .collect(),
    }
}

/// Runs `request`'s campaign, its events to `observer`. With `joining` (a
/// campaign read from the store), the campaign `request` makes must be that
/// one: the same machine fingerprint and the same key (files unchanged, the
/// same polytune), else nothing is measured. Everything that can be wrong
/// with the input is checked before the store is opened.
pub fn run(
    request: &Request,
    joining: Option<&store::Campaign>,
    observer: Arc<dyn Observer>,
) -> Result<Outcome> {
    let started = std::time::Instant::now();
    let args = request;
    let gpu = grid::knob_grid(&args.settings, 1)?.iter().any(|o| o.target == vocab::knobs::Target::Gpu);
    let setup = Setup::new(&args.machine, args.threads)?;
    let gpus = gpu_slots(args, &setup, gpu)?;
    let threads = setup.threads;
    let spec = grid::Spec {
        knobs: grid::knob_grid(&args.settings, threads)?,
        code: grid::code_grid(&args.settings, threads, setup.profile.compiler().avx512())?,
        gpu_code: grid::gpu_code_grid(&args.settings)?,
        tiles: args.tiles.clone(),
        threads,
        seed: args.seed,
        peers: peers(&args.peers, threads, &*observer)?,
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
        return Ok(Outcome::Submitted(submit_workers(args.db.as_deref(), workers, threads)?));
    }

    let cache = match &args.cache {
        Some(dir) => dir.clone(),
        None => crate::program::cache_dir()?,
    };
    let (evaluator, fingerprint) = setup.evaluator_in(&cache, args.runs, args.tolerance)?;
    // Each original measured before the store is written: a refused one leaves no row.
    let mut noise = crate::noise::Noise::new(args.on_noise);
    let first = &setup.slots[0];
    noise.check(&[(&first.name, &first.cores)], &super::interrupted)?;
    capture_inputs(args, &evaluator, &mut kernels, &*observer)?;
    let originals = measure_originals(&evaluator, &kernels, args.dataset, &*observer)?;
    let location = match &args.db {
        Some(db) => db.clone(),
        None => store::Store::default_location()?.display().to_string(),
    };
    // The store's errors name the location (a password in a URL hidden).
    let db = store::Store::open(&location)?;
    let location = db.target().to_string();
    let machine_id = db.machine(&setup.profile.name, &serde_json::to_string(&fingerprint)?)?;
    let config = campaign_config(args, &kernels, &spec, &fingerprint, gpu);
    if let Some(stored) = joining {
        check_joining(stored, &config, &setup.profile.name)?;
    }
    warm_starts(&db, &mut kernels, args, machine_id, &spec, &*observer)?;
    let originals = kernels.iter().zip(originals).map(|(k, r)| (k, args.dataset, r)).collect();
    let mut campaign = Campaign::open(&db, evaluator, config, args.budget, machine_id)?
        .started_at(started)
        .with_observer(observer)
        .with_originals(originals)
        .with_slots(setup.slots.clone());
    if let Some(gpus) = gpus {
        campaign = campaign.with_gpus(gpus);
    }
    if let Some(profile) = &args.profile {
        db.set_campaign_profile(campaign.campaign_id, profile)?;
    }
    campaign.variant_timeout = args.variant_timeout;
    campaign.noise = noise;
    campaign.lease = args.lease;
    if let Some(exe) = &args.executable {
        campaign = campaign.with_executable(exe);
    }
    let end = campaign.run(&kernels)?;
    ran(args, &setup, &kernels, &campaign, end, location).map(Outcome::Ran)
}

/// The GPU slots and nvcc GPU points run their CUDA form with (`None`: no
/// GPU target, or emulated); a GPU target with nowhere to run it is refused.
fn gpu_slots(args: &Request, setup: &Setup, gpu: bool) -> Result<Option<super::Gpus>> {
    if gpu && !args.emulate && setup.profile.gpus.is_empty() {
        return Err(Error::input(format!("--set target=gpu: machine profile `{}` has no GPU slot, so GPU variants cannot be measured here; \
             add --emulate to measure their emulation on the CPU (it checks each mapping's outputs; its times say \
             nothing of a GPU), or a slot `gpu = N` to the profile", args.machine)));
    }
    // GPU points run their CUDA form on the profile's GPU slots.
    Ok(match gpu && !args.emulate {
        true => Some(super::Gpus {
            slots: setup.profile.gpus.clone(),
            nvcc: executor::cuda::Nvcc::of(&setup.profile)
                .map_err(|e| Error::failed(format!("machine profile `{}`: {e}", setup.profile.name)))?,
        }),
        false => None,
    })
}

/// `--submit slurm`: `workers` batch jobs started on this same command
/// instead of measuring here; their ids.
fn submit_workers(db: Option<&str>, workers: usize, threads: usize) -> Result<Vec<String>> {
    // The jobs need the store: opened (created) here, a bad location refused before any job starts.
    if let Some(db) = db {
        store::Store::open(db)?;
    }
    let command = crate::slurm::job_arguments(&std::env::args().skip(1).collect::<Vec<_>>());
    crate::slurm::submit(&command, workers, threads, &std::env::current_dir()?)
}

/// Each replayed kernel's captured inputs: a stored campaign's capture, or
/// one run of the program now.
fn capture_inputs(
    args: &Request,
    evaluator: &executor::evaluate::Evaluator,
    kernels: &mut [Kernel],
    observer: &dyn Observer,
) -> Result<()> {
    for (i, k) in kernels.iter_mut().enumerate() {
        let capture = match (args.captured.get(i).cloned().flatten(), &args.capture) {
            (Some(hash), _) => crate::capture::stored(&hash)?,
            (None, Some(how)) => {
                observer.event(Event::Step(format!(
                    "{} [{}] capturing the region's inputs from one run",
                    k.spec.name,
                    args.dataset.name()
                )));
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
    args: &Request,
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
    args: &Request,
    machine_id: i64,
    spec: &grid::Spec,
    observer: &dyn Observer,
) -> Result<()> {
    for k in kernels {
        let from = k.warm_start(db, args.dataset, machine_id, args.warm_start, spec)?;
        if !from.is_empty() {
            observer.event(Event::Step(format!(
                "{} [{}] warm start: first the best points known on other machines ({})",
                k.spec.name,
                args.dataset.name(),
                from.join(", ")
            )));
        }
    }
    Ok(())
}

/// What the campaign invocation did, and each kernel's best.
fn ran(
    args: &Request,
    setup: &Setup,
    kernels: &[Kernel],
    campaign: &Campaign,
    end: End,
    location: String,
) -> Result<Ran> {
    let mut bests = Vec::new();
    for k in kernels {
        bests.push(campaign.store.best(
            &k.spec.name,
            Some(&setup.profile.name),
            Some(args.dataset.name()),
        )?);
    }
    Ok(Ran {
        campaign_id: campaign.campaign_id,
        end,
        location,
        kernels: kernels.iter().map(|k| k.spec.name.clone()).collect(),
        points: kernels.iter().map(|k| k.space.len() + k.references.len()).collect(),
        bests,
        slots: setup.slots.len(),
        peak_busy_slots: campaign.peak_busy_slots,
        worker: campaign.worker.clone(),
        trace: campaign.trace.clone(),
    })
}

/// Each kernel's original measured on `dataset`, its rounding noise said.
fn measure_originals(
    evaluator: &executor::evaluate::Evaluator,
    kernels: &[Kernel],
    dataset: Dataset,
    observer: &dyn Observer,
) -> Result<Vec<executor::evaluate::Reference>> {
    let mut originals = Vec::new();
    for k in kernels {
        observer.event(Event::Step(format!(
            "{} [{}] measuring the original program",
            k.spec.name,
            dataset.name()
        )));
        let original = super::measure_original(evaluator, k, dataset)?;
        if let Some(rounding) = original.measurement.rounding_noise.as_ref().filter(|n| !n.is_empty()) {
            observer.event(Event::Step(format!(
                "{} [{}] rounding noise in the original's outputs, which variants are compared within: {rounding}",
                k.spec.name,
                dataset.name()
            )));
        }
        originals.push(original);
    }
    Ok(originals)
}

/// A worker joins `stored` only as the process that made it would have run
/// it: results are per machine, and a changed file or another polytune is
/// another campaign.
fn check_joining(stored: &store::Campaign, ours: &Config, profile: &str) -> Result<()> {
    let theirs: Config = serde_json::from_str(&stored.config)?;
    if theirs.machine != ours.machine {
        return Err(Error::input(format!("campaign {} tunes for machine fingerprint {}, and this machine (profile `{profile}`) is {}: \
             results are per machine, so this worker does not join (run `polytune tune` here for this machine)", stored.id, theirs.machine, ours.machine)));
    }
    if stored.key != ours.key() {
        let changed: Vec<String> = theirs
            .kernels
            .iter()
            .zip(&ours.kernels)
            .filter(|(a, b)| a.source_hash != b.source_hash)
            .map(|(a, _)| a.path.display().to_string())
            .collect();
        return Err(Error::input(format!(
            "campaign {}: this worker would run another campaign ({}); it does not join",
            stored.id,
            if changed.is_empty() {
                "the settings differ".to_string()
            } else {
                format!("changed since the campaign started: {}", changed.join(", "))
            }
        )));
    }
    Ok(())
}
