//! A campaign: the loop that asks a strategy for points, turns each point
//! into a verified measurement, and commits every finished measurement to the
//! store at once (one transaction each), so that a campaign can be killed at
//! any moment and resumed by running the same command again.
//!
//! Order of work per kernel and dataset: the original program (the
//! reference every output is compared with), then the strategy's first
//! batch with the reference points measured after it, then whatever the
//! strategy proposes. Points whose generated code is identical to one
//! already measured in this run share that measurement.

mod batch;
pub mod child;
mod config;
use batch::Made;
pub use config::{program_hash, stored_kernel, Budget, Config, KernelSpec, TraceEntry, RACE};
pub mod grid;
mod kernel;
pub mod observer;
pub mod request;
mod stop;
use stop::Running;
pub use stop::{interrupt, interrupted, running};
mod slots;
pub mod transfer;
pub use kernel::{jobs, kernel_name, measure_original, Kernel, Setup};

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::{Context, Error, Result};
use executor::build::{BuildOutcome, Builder};
use executor::cuda::Nvcc;
use executor::evaluate::{Evaluator, Reference};
use executor::machine::{GpuSlot, Slot};
use executor::measure::{Measurement, Status};
use serde::Serialize;
use store::{BuildRef, CampaignState, Costs, NewCampaign, Record, Role, Store};
use vocab::knobs::{Point, Scheduler};

use crate::program::Dataset;
use crate::strategy::{self, Outcomes};
use observer::{Event, Observer};

/// How a campaign invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// Every strategy ran out of points.
    Finished,
    /// The evaluation or time budget ran out.
    Budget,
    /// Ctrl-C.
    Interrupted,
}

pub struct Campaign<'a> {
    pub store: &'a Store,
    pub evaluator: Evaluator,
    pub config: Config,
    pub budget: Budget,
    pub machine_id: i64,
    pub campaign_id: i64,
    /// Points built and measured together (compile in parallel, then measure).
    pub batch: usize,
    /// How long one point's scheduling and code generation may take.
    pub variant_timeout: Duration,
    /// Where variants are measured, one at a time on each (the evaluator's
    /// slot alone unless [`Campaign::with_slots`]).
    slots: Vec<Slot>,
    /// The GPU slots and nvcc, where GPU points run their CUDA form
    /// ([`Campaign::with_gpus`]; without, they run their emulation).
    gpus: Option<Gpus>,
    /// The schedules this invocation's points share.
    schedules: child::Schedules,
    /// What to do when the slots are busy before a batch is measured.
    pub noise: crate::noise::Noise,
    /// The most measurements that ran at once in this invocation.
    pub peak_busy_slots: usize,
    /// Where the time budget counts from ([`Campaign::started_at`]).
    started: Instant,
    /// This executable as it was when the campaign opened: the children
    /// that schedule points run it again.
    executable: Option<Executable>,
    evaluations: usize,
    /// The evaluations the campaign may have reached when the kernel being
    /// tuned gives way to the next: each kernel's even share of `--evals`,
    /// counted from the campaign's start (what one leaves, the next gets).
    quota: Option<usize>,
    /// Build key (the program and the compiler that built it) → its
    /// measurement in this run.
    measured_code: HashMap<String, (Point, Measurement)>,
    /// Originals measured before the store was written (see [`measure_original`]), by
    /// kernel name (two SCoPs of one file are two kernels) and dataset; each is used
    /// (and recorded) at its first need.
    premeasured: HashMap<(String, Dataset), Reference>,
    /// Where the campaign's events go ([`Campaign::with_observer`]; lines on
    /// standard error unless told).
    observer: std::sync::Arc<dyn Observer>,
    /// Every evaluation of this invocation.
    pub trace: Vec<TraceEntry>,
    /// What the current kernel's strategy knows.
    outcomes: Outcomes,
    /// Best speedup over the original so far, and of which kernel.
    best: Option<(f64, String)>,
    /// Whether a spread parallel point on a virtual machine is still to be
    /// warned of (once a campaign).
    spread_warning: bool,
    /// This process's name in the store's claims (`host:pid:random`).
    pub worker: String,
    /// How long a claim lasts without a heartbeat (three per lease).
    pub lease: Duration,
    /// Stop once one of these points is evaluated on the campaign's dataset
    /// (`bench search`: those the exhaustive campaign measured within 5% of its best).
    pub stop_at: Option<HashSet<String>>,
}

/// The running executable's path, size and modification time. Replaced
/// (a new build), Linux names it `PATH (deleted)`.
#[derive(Debug, PartialEq)]
struct Executable {
    path: PathBuf,
    len: u64,
    modified: std::time::SystemTime,
}

impl Executable {
    fn now() -> Option<Executable> {
        Executable::of(std::env::current_exe().ok()?)
    }

    fn of(path: PathBuf) -> Option<Executable> {
        let meta = std::fs::metadata(&path).ok();
        let (len, modified) = meta.map(|m| (m.len(), m.modified().ok())).unwrap_or_default();
        Some(Executable { path, len, modified: modified.unwrap_or(std::time::UNIX_EPOCH) })
    }
}

/// An evaluation's costs as strategies see them: making its program, and running it.
fn split(c: &Costs) -> strategy::Split {
    strategy::Split { make_s: c.variant_s + c.compile_s, run_s: c.run_s }
}

/// A profile's GPU slots and the nvcc that builds for them.
pub struct Gpus {
    pub slots: Vec<GpuSlot>,
    pub nvcc: Nvcc,
}

/// Where a batch runs: one kernel on one dataset, against its reference.
struct On<'k> {
    kernel: &'k Kernel,
    dataset: Dataset,
    program: i64,
    reference: &'k Reference,
}

impl<'a> Campaign<'a> {
    /// Opens (or resumes) the campaign in the store.
    pub fn open(
        store: &'a Store,
        evaluator: Evaluator,
        config: Config,
        budget: Budget,
        machine_id: i64,
    ) -> Result<Campaign<'a>> {
        let config_json = serde_json::to_string(&config)?;
        let strategy = serde_json::to_value(config.strategy)?.as_str().unwrap_or_default().to_string();
        let campaign = store.campaign(&NewCampaign {
            key: config.key(),
            config_json,
            strategy,
            seed: config.seed,
            budget,
        })?;
        let slots = vec![evaluator.slot.clone()];
        let batch = config.strategy.batch(evaluator.jobs);
        Ok(Campaign {
            store,
            evaluator,
            config,
            budget,
            machine_id,
            campaign_id: campaign.id,
            batch,
            variant_timeout: request::VARIANT_TIMEOUT,
            slots,
            gpus: None,
            schedules: child::Schedules::new()?,
            noise: Default::default(),
            peak_busy_slots: 0,
            started: Instant::now(),
            executable: Executable::now(),
            evaluations: 0,
            quota: None,
            measured_code: HashMap::new(),
            premeasured: HashMap::new(),
            observer: std::sync::Arc::new(observer::Lines),
            trace: Vec::new(),
            outcomes: Outcomes::default(),
            best: None,
            spread_warning: true,
            worker: worker_name(),
            lease: LEASE,
            stop_at: None,
        })
    }

    /// Runs every kernel until its strategy is done, the budget is spent or
    /// the user presses Ctrl-C. Other processes may work on the same
    /// campaign at the same time (`polytune worker`): each point is claimed
    /// in the store before it is evaluated, and a heartbeat thread keeps
    /// this worker's claims alive.
    pub fn run(&mut self, kernels: &[Kernel]) -> Result<End> {
        let _running = Running::start();
        self.store.set_campaign_state(self.campaign_id, CampaignState::Running)?;
        let (store, worker, lease) = (self.store, self.worker.clone(), self.lease);
        if let Some(evaluations) = self.budget.evals {
            self.observer.event(Event::Planned { evaluations });
        }
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let observer = self.observer.clone();
        let end = std::thread::scope(|scope| {
            scope.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(lease / 3) {
                    if let Err(e) = store.heartbeat(&worker, lease) {
                        observer.event(Event::Warning(format!("cannot extend this worker's claims: {e}")));
                    }
                }
            });
            let end = self.run_kernels(kernels);
            drop(stop);
            end
        });
        // Points claimed and not measured (Ctrl-C, the budget) are free for others at once;
        // where the store failed, the campaign's error comes first (the claims then expire).
        let released = self.store.release(&self.worker);
        let end = end?;
        released?;
        self.observer.event(Event::Finished);
        let state = match end {
            End::Finished => CampaignState::Finished,
            End::Budget | End::Interrupted => CampaignState::Stopped,
        };
        self.store.set_campaign_state(self.campaign_id, state)?;
        Ok(end)
    }

    fn run_kernels(&mut self, kernels: &[Kernel]) -> Result<End> {
        if self.budget.evals.is_none() {
            let total: usize = kernels.iter().map(|k| k.space.len() + k.references.len()).sum();
            self.observer.event(Event::Planned { evaluations: total });
        }
        let base = self.evaluator.builder.clone();
        for (i, kernel) in kernels.iter().enumerate() {
            self.quota = self.budget.evals.map(|n| (n * (i + 1)).div_ceil(kernels.len()));
            let program_ids = self.program_ids(kernel)?;
            self.refresh(&program_ids)?;
            self.observer.event(Event::Done { evaluations: self.evaluations });
            let prior = match self.config.strategy {
                strategy::StrategyKind::Model if !self.config.cold => self.prior(kernel)?,
                _ => None,
            };
            let mut strategy = strategy::new(
                self.config.strategy,
                kernel.space.clone(),
                self.config.rungs,
                self.config.dataset,
                self.config.seed,
                prior.as_ref(),
            );
            let mut references: HashMap<Dataset, Reference> = HashMap::new();
            // The builder of each dataset: the program's extra sources are
            // preprocessed with its dataset define.
            let mut builders: HashMap<Dataset, Builder> = HashMap::new();
            loop {
                if let Some(e) = self.stop_reason() {
                    return Ok(e);
                }
                if self.remaining_evals() == 0 {
                    break;
                }
                let batch = self.batch.min(self.remaining_evals());
                let proposals = strategy.propose(&self.outcomes, batch);
                // Reference points whose claim lapsed with a killed process
                // are due on any dataset the search measured on.
                let searched = |d: &Dataset| self.outcomes.measured.keys().any(|(m, _)| m == d);
                let due = || {
                    program_ids
                        .keys()
                        .copied()
                        .find(|&d| searched(&d) && !self.references_due(kernel, d).is_empty())
                };
                let Some(dataset) = proposals.first().map(|p| p.dataset).or_else(due) else {
                    if self.outcomes.pending.is_empty() {
                        break;
                    }
                    // The search waits on points other workers are measuring.
                    self.wait_for_others(&program_ids)?;
                    continue;
                };
                let program = program_ids[&dataset];
                if let Entry::Vacant(e) = builders.entry(dataset) {
                    e.insert(kernel.builder(&base, dataset)?);
                }
                self.evaluator.builder = builders[&dataset].clone();
                self.evaluator.config.replayed = kernel.capture.is_some();
                if let Entry::Vacant(e) = references.entry(dataset) {
                    e.insert(self.reference(kernel, dataset, program)?);
                }
                // The reference points join the first batch on every dataset
                // (they come first for the budget) and are measured last, so
                // that they are raced against its variants rather than
                // against the original alone.
                let mut points: Vec<Point> =
                    proposals.into_iter().filter(|p| p.dataset == dataset).map(|p| p.point).collect();
                let mut todo = self.references_due(kernel, dataset);
                todo.truncate(self.remaining_evals());
                points.retain(|p| !todo.contains(p));
                points.truncate(self.remaining_evals() - todo.len());
                points.extend(todo);
                let mine = self.claim(dataset, program, points)?;
                if !mine.is_empty() {
                    let on = On { kernel, dataset, program, reference: &references[&dataset] };
                    self.evaluate(&on, &mine)?;
                }
                self.refresh(&program_ids)?;
            }
        }
        Ok(End::Finished)
    }

    /// The outcomes of the current kernel's programs (`program_ids`) as the
    /// store has them, every worker's, with the points other workers hold;
    /// and the campaign's evaluations so far.
    fn refresh(&mut self, program_ids: &HashMap<Dataset, i64>) -> Result<()> {
        let dataset_of = |program: i64| program_ids.iter().find(|(_, &id)| id == program).map(|(&d, _)| d);
        let measured = self.store.outcomes(self.campaign_id)?;
        self.evaluations = measured.iter().filter(|m| m.role == Role::Variant).count();
        self.outcomes = Outcomes::default();
        for m in measured.into_iter().filter(|m| m.role == Role::Variant) {
            if let Some(d) = dataset_of(m.program) {
                if let Some(c) = &m.costs {
                    self.outcomes.costs.insert((d, m.point_id.clone()), split(c));
                }
                self.outcomes.measured.insert((d, m.point_id), m.median_s.filter(|_| m.status == Status::Ok));
            }
        }
        for c in self.store.live_claims(self.campaign_id)? {
            if let (Some(d), Role::Variant, false) = (dataset_of(c.program), c.role, c.worker == self.worker)
            {
                self.outcomes.pending.insert((d, c.point_id));
            }
        }
        Ok(())
    }

    /// `kernel`'s reference points on `dataset` that no process has
    /// measured or holds.
    fn references_due(&self, kernel: &Kernel, dataset: Dataset) -> Vec<Point> {
        kernel.references.iter().filter(|p| !self.outcomes.contains(dataset, p)).cloned().collect()
    }

    /// `points` that this worker now holds: each claimed in the store; one
    /// another worker holds is marked pending and left to it.
    fn claim(&mut self, dataset: Dataset, program: i64, points: Vec<Point>) -> Result<Vec<Point>> {
        let mut mine = Vec::new();
        for p in points {
            let id = p.id();
            let claim =
                store::Claim { campaign: self.campaign_id, program, point_id: &id, role: Role::Variant };
            if self.store.claim(&claim, &self.worker, self.lease)? {
                mine.push(p);
            } else {
                self.outcomes.pending.insert((dataset, id));
            }
        }
        Ok(mine)
    }

    /// Sleeps a little (Ctrl-C still stops at once), then reads what the
    /// other workers recorded and hold.
    fn wait_for_others(&mut self, program_ids: &HashMap<Dataset, i64>) -> Result<()> {
        self.log("waiting for points other workers are measuring");
        for _ in 0..10 {
            if interrupted() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.refresh(program_ids)
    }

    fn stop_reason(&self) -> Option<End> {
        if interrupted() {
            return Some(End::Interrupted);
        }
        let evals_spent = self.budget.evals.is_some_and(|n| self.evaluations >= n);
        let time_spent = time_spent(self.deadline(), self.trace.len());
        let reached = self.stop_at.as_ref().is_some_and(|points| {
            self.trace.iter().any(|e| e.dataset == self.config.dataset && points.contains(&e.point_id))
        });
        (evals_spent || time_spent || reached).then_some(End::Budget)
    }

    /// When the time budget is spent: no measurement starts after it.
    fn deadline(&self) -> Option<Instant> {
        self.budget.time.map(|t| self.started + t)
    }
}

/// Whether the time budget ending at `deadline` is spent for an invocation
/// that has finished `finished` evaluations: never before the first, so
/// that the same command always goes on.
fn time_spent(deadline: Option<Instant>, finished: usize) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d) && finished > 0
}

impl<'a> Campaign<'a> {
    /// What the current kernel may still evaluate (its quota's rest).
    fn remaining_evals(&self) -> usize {
        self.quota.or(self.budget.evals).map_or(usize::MAX, |n| n.saturating_sub(self.evaluations))
    }

    /// Sends the campaign's events to `observer` instead of standard error.
    /// The children that schedule points run `polytune` at `path` (a
    /// program that links the library is not one).
    pub fn with_executable(mut self, path: &std::path::Path) -> Self {
        self.executable = Executable::of(path.to_path_buf());
        self
    }

    /// Counts the time budget from `started` (the command's start, so that
    /// capturing inputs and measuring the originals count) rather than from
    /// when the campaign opened.
    pub fn started_at(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    pub fn with_observer(mut self, observer: std::sync::Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// Measures variants on each of `slots` at once (the originals stay on the
    /// evaluator's slot); the batch grows to keep every slot busy.
    pub fn with_slots(mut self, slots: Vec<Slot>) -> Self {
        if !slots.is_empty() {
            self.batch = self.batch.max(self.config.strategy.batch(slots.len()));
            self.slots = slots;
        }
        self
    }

    /// GPU points run their CUDA form on `gpus` (each slot one at a time,
    /// beside the CPU slots).
    pub fn with_gpus(mut self, gpus: Gpus) -> Self {
        self.batch = self.batch.max(self.config.strategy.batch(self.slots.len() + gpus.slots.len()));
        self.gpus = Some(gpus);
        self
    }

    /// Originals already measured by [`measure_original`], used instead of measuring again.
    pub fn with_originals(mut self, measured: Vec<(&Kernel, Dataset, Reference)>) -> Self {
        for (kernel, dataset, r) in measured {
            self.premeasured.insert((kernel.spec.name.clone(), dataset), r);
        }
        self
    }

    /// Each of `kernel`'s programs' id in the store, its kernel features
    /// recorded there (what other campaigns' priors read of it).
    fn program_ids(&self, kernel: &Kernel) -> Result<HashMap<Dataset, i64>> {
        let mut ids = HashMap::new();
        for (d, prog) in &kernel.programs {
            let path = kernel.spec.path.display().to_string();
            let id = self.store.program(&kernel.spec.name, &path, &kernel.spec.program_hash(), d.name())?;
            let features = strategy::features::kernel(&prog.scop, &prog.deps, *d);
            self.store.set_program_features(id, &serde_json::to_string(&features)?)?;
            ids.insert(*d, id);
        }
        Ok(ids)
    }

    /// The model's prior for `kernel` on the campaign's dataset: what the
    /// store's other campaigns measured, on any kernel and machine.
    fn prior(&self, kernel: &Kernel) -> Result<Option<strategy::Prior>> {
        let fingerprint = self.store.fingerprint(self.machine_id)?.unwrap_or_default();
        let here = transfer::Here::of(kernel, self.config.dataset, self.machine_id, &fingerprint);
        transfer::campaign_prior(self.store, self.campaign_id, &here)
    }

    /// Measures the original program on `dataset` (every run again: variants
    /// are compared with outputs and times of this run only) and records it
    /// once per campaign.
    fn reference(&mut self, kernel: &Kernel, dataset: Dataset, program: i64) -> Result<Reference> {
        let original = kernel.original(dataset)?;
        let reference = match self.premeasured.remove(&(kernel.spec.name.clone(), dataset)) {
            Some(r) => r,
            None => {
                self.log(&format!(
                    "{} [{}] measuring the original program",
                    kernel.spec.name,
                    dataset.name()
                ));
                self.evaluator.reference(&original).with_context(|| {
                    format!("{} [{}]: the original program", kernel.spec.name, dataset.name())
                })?
            }
        };
        if !interrupted() {
            let point = Point {
                scheduler: Scheduler::Original,
                tiles: None,
                threads: self.config.threads,
                code: Default::default(),
            };
            let source =
                batch::Program { builder: &self.evaluator.builder, code: &original, cuda: None, env: &[] }
                    .source();
            let m = &reference.measurement;
            let costs = Costs {
                run_s: reference.run_s,
                timed_s: m.timed_s(),
                capture_s: kernel.capture.as_ref().map(|c| c.wall_s),
                ..Costs::default()
            };
            self.record(program, Role::Reference, &point, None, Some(source), m, Some(costs), None)?;
        }
        Ok(reference)
    }

    /// Schedules, generates, builds (in parallel), measures and records `points`.
    fn evaluate(&mut self, on: &On, points: &[Point]) -> Result<()> {
        self.same_executable()?;
        let made = self.make(on, points);
        // Children started after a replacement failed to start: none of the
        // batch is recorded.
        self.same_executable()?;
        let mut ready: Vec<Made> = Vec::new();
        for (point, made) in points.iter().zip(made) {
            match made {
                Ok(made) => ready.push(made),
                Err((failure, costs)) => {
                    if interrupted() {
                        return Ok(());
                    }
                    let m = Measurement::failed(failure.status, failure.reason);
                    self.finish(on, point, None, None, &m, costs)?;
                }
            }
        }
        let compile_s: HashMap<String, f64> =
            ready.iter().filter_map(|m| Some((m.key.clone(), m.build.as_ref()?.compile_s()))).collect();
        let builds: Vec<(usize, BuildOutcome)> =
            ready.iter_mut().enumerate().filter_map(|(i, m)| Some((i, m.build.take()?))).collect();
        let todo: Vec<_> = builds
            .into_iter()
            .map(|(i, b)| {
                let point = &ready[i].point;
                (&ready[i].key, Some(point.threads), ready[i].cuda.is_some(), point.code.run_env(), b)
            })
            .collect();
        // Nothing of ours runs on the slots now: are they quiet?
        let note = match todo.is_empty() {
            true => None,
            false => {
                let gpus = self.gpus.iter().flat_map(|g| &g.slots).map(|g| (g.name.as_str(), &g.cores[..]));
                let slots: Vec<(&str, &[usize])> =
                    self.slots.iter().map(|s| (s.name.as_str(), &s.cores[..])).chain(gpus).collect();
                self.noise.check(&slots, &interrupted)?
            }
        };
        let measured = self.measure_on_slots(on, todo);
        let mut measured: HashMap<String, (Measurement, f64)> = measured
            .into_iter()
            .map(|(k, mut m, run_s)| {
                if let Some(note) = &note {
                    m.reason.push_str(&format!("; measured while {note}, by other processes"));
                }
                (k.clone(), (m, run_s))
            })
            .collect();
        let nvcc = self.gpus.as_ref().map(|g| g.nvcc.clone());
        for Made { point, schedule, code, builder, cuda, costs, key, .. } in &ready {
            // Compile and run are paid by the first point with this code.
            let mut costs = costs.clone();
            let fresh = measured.remove(key);
            if let Some((m, run_s)) = &fresh {
                (costs.compile_s, costs.run_s, costs.timed_s) =
                    (compile_s.get(key.as_str()).copied().unwrap_or(0.0), *run_s, m.timed_s());
            }
            let m = match (self.measured_code.get(key), fresh.map(|(m, _)| m)) {
                (Some((first, m)), _) => Measurement {
                    reason: format!("same code as point {}: {}", first.id(), m.reason),
                    ..m.clone()
                },
                (None, Some(m)) => {
                    self.measured_code.insert(key.clone(), (point.clone(), m.clone()));
                    m
                }
                // Not measured: Ctrl-C or the time budget came first.
                (None, None) => continue,
            };
            let schedule = (!schedule.is_empty()).then_some(schedule.as_str());
            let cuda = cuda.as_ref().and_then(|c| Some((nvcc.as_ref()?, c)));
            let env = point.code.run_env();
            let source = batch::Program { builder, code, cuda, env: &env }.source();
            self.finish(on, point, schedule, Some(source), &m, costs)?;
        }
        Ok(())
    }

    /// `points` of `kernel` (on the campaign's dataset, made and measured by
    /// this campaign) measured `rounds` more times, round-robin, against a new
    /// measurement of the original: each point's median of every round. Nothing
    /// is recorded. `bench search` takes the best from these, so that one
    /// campaign's noise does not decide which points are close to it.
    pub fn remeasure(
        &mut self,
        kernel: &Kernel,
        points: &[Point],
        rounds: usize,
    ) -> Result<HashMap<String, Vec<f64>>> {
        let dataset = self.config.dataset;
        let reference = measure_original(&self.evaluator, kernel, dataset)?;
        self.evaluator.config.replayed = kernel.capture.is_some();
        let on = On { kernel, dataset, program: 0, reference: &reference };
        // Points with one program are measured once a round.
        let mut programs: Vec<(Made, Vec<String>)> = Vec::new();
        for made in self.make(&on, points).into_iter().flatten() {
            match programs.iter_mut().find(|(m, _)| m.key == made.key) {
                Some((_, ids)) => ids.push(made.point.id()),
                None => {
                    let id = made.point.id();
                    programs.push((made, vec![id]));
                }
            }
        }
        let mut medians: HashMap<String, Vec<f64>> = HashMap::new();
        for _ in 0..rounds {
            for (made, ids) in &programs {
                let env = made.point.code.run_env();
                let program =
                    batch::Program { builder: &made.builder, code: &made.code, cuda: None, env: &env };
                let m =
                    self.evaluator.measure_in(&reference, &program.build(), Some(made.point.threads), &env);
                if let (Status::Ok, Some(t)) = (m.status, m.median_s) {
                    ids.iter().for_each(|id| medians.entry(id.clone()).or_default().push(t));
                }
            }
        }
        Ok(medians)
    }

    /// Fails once this executable was replaced on disk since the campaign
    /// opened: the children that schedule points would be another program.
    fn same_executable(&self) -> Result<()> {
        let now = self.executable.as_ref().and_then(|e| Executable::of(e.path.clone()));
        if self.executable.is_some() && now != self.executable {
            return Err(Error::failed(
                "the polytune executable was replaced during the campaign (rebuilt or reinstalled): \
                 its points would be scheduled by another program. Run the same command again to go on",
            ));
        }
        Ok(())
    }

    /// Records one variant's measurement and updates the outcomes and the progress.
    fn finish(
        &mut self,
        on: &On,
        point: &Point,
        schedule: Option<&str>,
        source: Option<BuildRef>,
        m: &Measurement,
        costs: Costs,
    ) -> Result<()> {
        let (kernel, dataset) = (on.kernel, on.dataset);
        self.outcomes.costs.insert((dataset, point.id()), split(&costs));
        let origin = kernel.warm.get(&point.id()).cloned();
        self.record(on.program, Role::Variant, point, schedule, source, m, Some(costs), origin)?;
        let median_s = m.median_s.filter(|_| m.status == Status::Ok);
        self.outcomes.measured.insert((dataset, point.id()), median_s);
        if let (Some(v), Some(r)) = (median_s, on.reference.measurement.median_s) {
            if v > 0.0 && self.best.as_ref().is_none_or(|(b, _)| r / v > *b) {
                self.best = Some((r / v, format!("{} [{}]", kernel.spec.name, dataset.name())));
            }
        }
        self.warn_of_spread(point, m);
        self.evaluations += 1;
        self.trace.push(TraceEntry {
            evaluations: self.trace.len() + 1,
            elapsed_s: self.started.elapsed().as_secs_f64(),
            dataset,
            point_id: point.id(),
            median_s,
        });
        let time = m.median_s.map(crate::units::seconds).unwrap_or_else(|| "-".into());
        // A GPU point's kernels alone (the store keeps the region's time).
        let kernels = executor::measure::median(&m.kernel_samples)
            .map(|k| format!(" (kernels {})", crate::units::seconds(k)))
            .unwrap_or_default();
        let line = format!("{} [{}] {point}: {} {time}{kernels}", kernel.spec.name, dataset.name(), m.status);
        self.observer.event(Event::Evaluated {
            kernel: kernel.spec.name.clone(),
            dataset,
            point: point.clone(),
            status: m.status,
            median_s,
            line,
        });
        self.observer.event(Event::Done { evaluations: self.evaluations });
        if let Some((speedup, of)) = &self.best {
            self.observer.event(Event::Best { speedup: *speedup, of: of.clone() });
        }
        Ok(())
    }

    /// Records one measurement; `origin`: the machine a warm-started point
    /// came from.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        program: i64,
        role: Role,
        point: &Point,
        schedule: Option<&str>,
        source: Option<BuildRef>,
        m: &Measurement,
        costs: Option<Costs>,
        origin: Option<String>,
    ) -> Result<()> {
        self.store.record(&Record {
            campaign: self.campaign_id,
            program,
            machine: self.machine_id,
            role,
            point_id: point.id(),
            point_json: point.canonical_json(),
            schedule: schedule.map(str::to_string),
            build: source,
            status: m.status,
            reason: m.reason.clone(),
            median_s: m.median_s,
            spread: m.spread,
            samples: m.samples.clone(),
            costs,
            kernel_s: executor::measure::median(&m.kernel_samples),
            origin,
            rounding_noise: m.rounding_noise.clone(),
        })?;
        Ok(())
    }

    /// A spread parallel point on a virtual machine: said once a campaign
    /// ([`crate::noise::spread_hint`]).
    fn warn_of_spread(&mut self, point: &Point, m: &Measurement) {
        if !self.spread_warning {
            return;
        }
        let threshold = self.evaluator.config.spread_threshold;
        if let Some(hint) = crate::noise::spread_hint(point.threads, m, threshold) {
            self.spread_warning = false;
            self.observer.event(Event::Warning(hint));
        }
    }

    fn log(&self, line: &str) {
        self.observer.event(Event::Step(line.to_string()));
    }
}

/// How long a claim lasts without a heartbeat: a worker killed mid-measurement
/// leaves its point to others after at most this long.
pub const LEASE: Duration = Duration::from_secs(60);

/// A name for this process among a campaign's workers: host, process id and
/// a random suffix (process ids repeat across hosts and restarts).
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    let random: u32 = rand::random();
    format!("{}:{}:{random:08x}", if host.is_empty() { "host" } else { host }, std::process::id())
}
