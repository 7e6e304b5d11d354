//! The kernels and the machine side of a campaign: each kernel loaded on
//! the datasets its strategy uses, with its space (fusion preorders × the
//! grid) and reference points; the profile's slots and the evaluator;
//! the original measured before any store is written.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Context, Error, Result};
use executor::build::Builder;
use executor::evaluate::{Evaluator, Reference};
use executor::machine::{Fingerprint, MachineProfile, Slot};
use executor::measure::MeasureConfig;
use executor::verify::Tolerance;
use model::deps::Dependences;
use model::scop::Scop;
use space::fusion::{FusionOptions, FusionSpace};
use space::schedule::{CoreOptions, Fusion};
use vocab::knobs::{CodeOptions, Point, Scheduler, Target};
use vocab::preorder::Preorder;

use super::{grid, KernelSpec};
use crate::program::{self, Dataset, Program, ProgramConfig};
use crate::strategy::{self, StrategyKind};

/// Points scheduled and compiled at once by a campaign's evaluator: one
/// per core this process may use (at least 2). Nothing is measured while a
/// batch is made, so every core can make one.
pub fn jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).max(2)
}

/// One kernel, loaded on every dataset the strategy may use.
pub struct Kernel {
    pub spec: KernelSpec,
    pub programs: HashMap<Dataset, Program>,
    /// The search space (in the grid's order) and the reference points.
    pub space: Vec<Point>,
    pub references: Vec<Point>,
    /// Points of the references that a warm start took from other machines
    /// (by id), with the machine each came from.
    pub warm: HashMap<String, String>,
    /// The capture its region is replayed from, if it is (`crate::capture`).
    pub capture: Option<crate::capture::Capture>,
}

/// The machine side of a campaign: profile, measurement slots, threads.
pub struct Setup {
    pub profile: MachineProfile,
    /// The profile's slots: variants are measured on all of them at once, the
    /// originals on the first.
    pub slots: Vec<Slot>,
    pub threads: usize,
}

impl Setup {
    /// `threads` defaults to the cores of the profile's smallest slot; more
    /// threads than some slot has cores is an error (they would share cores).
    pub fn new(machine: &str, threads: Option<usize>) -> Result<Setup> {
        let profile = program::machine_profile(machine)?;
        let slots = profile.slots.clone();
        let Some(smallest) = slots.iter().min_by_key(|s| s.cores.len()) else {
            return Err(Error::input(format!("machine profile `{}` has no slot", profile.name)));
        };
        let threads = threads.unwrap_or(smallest.cores.len().max(1));
        if threads > smallest.cores.len() {
            return Err(Error::input(format!("--threads {threads}: slot `{}` of machine profile `{}` has {} core(s); give fewer threads or \
                 larger slots", smallest.name, profile.name, smallest.cores.len())));
        }
        Ok(Setup { profile, slots, threads })
    }

    /// An evaluator on the first slot (builds cached in the user's cache
    /// directory) and the fingerprint its results are keyed by.
    pub fn evaluator(&self, runs: usize, tolerance: f64) -> Result<(Evaluator, Fingerprint)> {
        self.evaluator_in(&program::cache_dir()?, runs, tolerance)
    }

    /// [`Setup::evaluator`] with its builds cached under `cache`.
    pub fn evaluator_in(
        &self,
        cache: &Path,
        runs: usize,
        tolerance: f64,
    ) -> Result<(Evaluator, Fingerprint)> {
        let builder = Builder::new(self.profile.compiler(), cache.join("builds"))?;
        let fingerprint = Fingerprint::detect(builder.compiler())?.with_gpus(&self.profile.gpus)?;
        let config = MeasureConfig {
            runs,
            threads: Some(self.threads),
            tolerance: Tolerance { relative: tolerance },
            ..MeasureConfig::default()
        };
        Ok((Evaluator { builder, slot: self.slots[0].clone(), config, jobs: jobs() }, fingerprint))
    }
}

impl Kernel {
    /// The program its variants are compared with on `dataset`: the
    /// original program, or where the kernel is replayed, the original
    /// region replayed from the capture.
    pub fn original(&self, dataset: Dataset) -> Result<String> {
        let prog = &self.programs[&dataset];
        match &self.capture {
            Some(capture) => crate::capture::replay_original(prog, capture),
            None => codegen::original_program(&prog.source, &prog.scop).with_context(|| {
                format!("{}:{}: the original SCoP", self.spec.path.display(), prog.scop.start.line)
            }),
        }
    }

    /// `base` for this kernel's programs on `dataset`: its extra sources
    /// linked, their `main` renamed where the kernel is replayed
    /// ([`crate::capture::replaying`]).
    pub fn builder(&self, base: &Builder, dataset: Dataset) -> Result<Builder> {
        let b = base.with_extras(&self.spec.build.extras(dataset)).with_context(|| {
            format!("{} [{}]: the program's extra sources", self.spec.name, dataset.name())
        })?;
        match self.capture {
            Some(_) => crate::capture::replaying(&b),
            None => Ok(b),
        }
    }

    /// Loads SCoP `scop` of `file` on every dataset a `strategy` campaign
    /// on `dataset` may use, and lays out its space: fusion preorders (see
    /// [`preorders`]) × the knobs and tile sizes of `spec`. A kernel to be
    /// `replayed` from a capture may read its own input (the capturing run
    /// gets it), and has the one dataset of its capture.
    pub fn load(
        file: &Path,
        scop: usize,
        strategy: StrategyKind,
        dataset: Dataset,
        build: &ProgramConfig,
        spec: &grid::Spec,
        replayed: bool,
    ) -> Result<Kernel> {
        if file.is_dir() {
            return Err(Error::input_at(file.display(), "is a directory; name a C file"));
        }
        let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
        let name = kernel_name(file, scop);
        let mut programs = HashMap::new();
        let datasets = strategy::datasets(strategy, dataset);
        if replayed && datasets.len() > 1 {
            return Err(Error::input_at(file.display(), format!("--strategy {strategy:?} measures on several datasets, and a capture is one input; choose another \
                 strategy, or run the whole program (--replay off)")));
        }
        for d in datasets {
            let program = program::load(file, d, build, scop)?;
            if !replayed {
                model::scop::check_runnable(&program.source, &program.scop)?;
            }
            programs.insert(d, program);
        }
        let max = max_fusion(&programs[&dataset]);
        let model = &programs[&dataset].scop;
        let deps = &programs[&dataset].deps;
        let mut preorders = preorders(model, deps, max.as_ref(), spec.seed);
        let expanded_only = expanded_preorders(model, deps, spec, &mut preorders);
        let spec = &grid::Spec {
            knobs: grid::knobs_for_scop(&spec.knobs, model, deps),
            code: grid::for_scop(&spec.code, model)?,
            // Narrowed only where GPU points use it: the analyses are not repeated for nothing.
            gpu_code: match spec.knobs.iter().any(|o| o.target == Target::Gpu) {
                true => grid::for_scop(&spec.gpu_code, model)?,
                false => spec.gpu_code.clone(),
            },
            tiles: grid::tiles_for_scop(&spec.tiles, model),
            ..spec.clone()
        };
        Ok(Kernel {
            spec: KernelSpec {
                name,
                path: file.to_path_buf(),
                source_hash: program::sha256_hex(&bytes),
                build: build.clone(),
                capture: None,
                scop,
            },
            programs,
            space: grid::points(&preorders, spec)
                .into_iter()
                .filter(|p| match &p.scheduler {
                    Scheduler::Unified { preorder, .. } if expanded_only.contains(preorder) => {
                        p.code.expand || p.on_gpu()
                    }
                    _ => true,
                })
                .collect(),
            warm: HashMap::new(),
            capture: None,
            references: grid::references(
                spec.threads,
                max,
                spec.knobs.iter().any(|o| o.target == Target::Gpu),
            )
            .into_iter()
            .filter(|p| {
                spec.references
                    .as_ref()
                    .is_none_or(|keep| grid::reference_label(p).is_some_and(|label| keep.contains(&label)))
            })
            .chain(spec.peers.iter().map(|name| Point {
                scheduler: Scheduler::Peer { name: name.clone() },
                tiles: None,
                threads: spec.threads,
                code: Default::default(),
            }))
            .collect(),
        })
    }
}

impl Kernel {
    /// The kernel's warm start on this machine (`machine`): where it has no
    /// variant of the kernel measured on `dataset`, the `per_machine` best
    /// points of each other machine of `db` come before its reference
    /// points, made this campaign's (`grid::transferred`). Returns each
    /// one's speedup and machine, for the log.
    pub fn warm_start(
        &mut self,
        db: &store::Store,
        dataset: Dataset,
        machine: i64,
        per_machine: usize,
        spec: &grid::Spec,
    ) -> Result<Vec<String>> {
        let name = &self.spec.name;
        if per_machine == 0 || db.has_history(name, dataset.name(), machine)? {
            return Ok(Vec::new());
        }
        let (mut from, mut taken, mut warm) = (Vec::new(), HashMap::<i64, usize>::new(), Vec::new());
        for known in db.known_elsewhere(name, dataset.name(), machine)? {
            let n = taken.entry(known.machine_id).or_default();
            let Ok(point) = serde_json::from_str::<Point>(&known.point_json) else { continue };
            let point =
                grid::transferred(point, spec).filter(|p| !self.references.contains(p) && !warm.contains(p));
            if let (Some(p), true) = (point, *n < per_machine) {
                *n += 1;
                self.warm.insert(p.id(), known.machine.clone());
                warm.push(p);
                from.push(format!("{:.2}x on {}", known.speedup, known.machine));
            }
        }
        // First: a budget too small for all keeps these.
        self.references.splice(0..0, warm);
        Ok(from)
    }
}

/// Measures `kernel`'s original program on `dataset` with `evaluator` (its builder given
/// the program's extra sources for that dataset), touching no store: `tune` does this
/// before it writes any row, so that a program whose original is refused (no `main`, a
/// SCoP never reached or run zero times, outputs that differ between two runs) leaves
/// nothing behind.
pub fn measure_original(evaluator: &Evaluator, kernel: &Kernel, dataset: Dataset) -> Result<Reference> {
    let original = kernel.original(dataset)?;
    let evaluator = Evaluator {
        builder: kernel.builder(&evaluator.builder, dataset)?,
        slot: evaluator.slot.clone(),
        config: MeasureConfig { replayed: kernel.capture.is_some(), ..evaluator.config.clone() },
        jobs: evaluator.jobs,
    };
    let reference = evaluator
        .reference(&original)
        .with_context(|| format!("{} [{}]: the original program", kernel.spec.name, dataset.name()))?;
    if let Some(capture) = &kernel.capture {
        let at = format!("{}:{}", kernel.spec.path.display(), kernel.programs[&dataset].scop.start.line);
        crate::capture::check_reproduced(capture, &reference, evaluator.config.tolerance).context(at)?;
    }
    Ok(reference)
}

/// At most this many fusion preorders per kernel enter the grid.
const MAX_PREORDERS: usize = 16;

/// The fusion preorders a campaign searches: the original (`None`), maximal
/// fusion, and the points of the fusion space F at the outer level — all of
/// them when there are at most [`MAX_PREORDERS`], else a seeded uniform
/// sample. If the fusion space cannot be built, the first two alone.
fn preorders(scop: &Scop, deps: &Dependences, max: Option<&Preorder>, seed: u64) -> Vec<Option<Preorder>> {
    let mut out: Vec<Option<Preorder>> = vec![None];
    if let Some(m) = max {
        add_preorder(&mut out, scop, m.clone());
    }
    add_fusion_space(&mut out, scop, deps, seed, MAX_PREORDERS);
    out
}

/// Adds to `preorders` the outer fusion space's points that only the SCoP
/// with its arrays expanded has (where `spec` offers `expand=on` or GPU
/// points, whose model is always expanded; [`executor::pipeline::model`]),
/// and returns them: expansion removes the storage dependences that kept
/// them out (doitgen's `A[r][q][p] = sum[p]` in a nest after the row sums
/// once `sum` has a row per `(r, q)`). They are searched with expansion alone.
fn expanded_preorders(
    scop: &Scop,
    deps: &Dependences,
    spec: &grid::Spec,
    preorders: &mut Vec<Option<Preorder>>,
) -> Vec<Option<Preorder>> {
    let gpu = spec.knobs.iter().any(|o| o.target == Target::Gpu);
    let expanding = CodeOptions { expand: true, ..CodeOptions::default() };
    if !gpu && !spec.code.iter().any(|c| c.expand) {
        return Vec::new();
    }
    let Ok((expanded, expanded_deps)) = executor::pipeline::model(scop, deps, &expanding, false) else {
        return Vec::new();
    };
    if matches!(expanded, std::borrow::Cow::Borrowed(_)) {
        return Vec::new();
    }
    let known = preorders.len();
    add_fusion_space(preorders, &expanded, &expanded_deps, spec.seed, known + MAX_PREORDERS);
    preorders[known..].to_vec()
}

/// `p` added to `out` once, as `None` where it is the original grouping.
fn add_preorder(out: &mut Vec<Option<Preorder>>, scop: &Scop, p: Preorder) {
    let p = (p != scop.original_preorder()).then_some(p);
    if !out.contains(&p) {
        out.push(p);
    }
}

/// Adds the points of the outer fusion space of `scop` under `deps` to
/// `out`: all of them when there are at most [`MAX_PREORDERS`], else a
/// seeded uniform sample until `out` holds `until`. Nothing where the space
/// cannot be built.
fn add_fusion_space(
    out: &mut Vec<Option<Preorder>>,
    scop: &Scop,
    deps: &Dependences,
    seed: u64,
    until: usize,
) {
    use rand::SeedableRng;
    let Ok(space) = FusionSpace::outer(scop, deps, &FusionOptions::default()) else {
        return;
    };
    if space.count().to_u64().is_some_and(|n| n as usize <= MAX_PREORDERS) {
        space.preorders().into_iter().for_each(|p| add_preorder(out, scop, p));
        return;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // Draws may repeat; a bounded number of tries keeps this quick.
    for _ in 0..4 * MAX_PREORDERS {
        if out.len() >= until {
            break;
        }
        if let Some(p) = space.sample(&mut rng) {
            add_preorder(out, scop, p);
        }
    }
}

/// The preorder maximal fusion yields on `prog`, when it differs from the
/// original grouping and the scheduler finds one.
fn max_fusion(prog: &Program) -> Option<Preorder> {
    let opts = CoreOptions { fusion: Fusion::Max, ..CoreOptions::default() };
    let s = space::schedule::schedule(&prog.scop, &prog.deps, &opts).ok()?;
    (s.preorder != prog.scop.original_preorder()).then_some(s.preorder)
}

/// The store's name of SCoP `scop` of `file`: the file's stem for its first
/// (PolyBench's one), `stem.N` for the others.
pub fn kernel_name(file: &Path, scop: usize) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("program");
    match scop {
        0 => stem.to_string(),
        n => format!("{stem}.{n}"),
    }
}
