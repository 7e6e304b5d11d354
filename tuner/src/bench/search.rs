//! `polytune bench search FILE...`: search efficiency. For each kernel, an
//! exhaustive campaign measures every point of the space, and the points it
//! found within 1.25× of its best are measured again, three rounds
//! interleaved: those whose median over the rounds lies within 5% of the
//! lowest are *close*. Random sampling, successive halving and the model
//! strategy then each run until they first evaluate a close point, and we
//! report how many evaluations and how much wall time each needed. On a
//! noisy machine two campaigns' measurements of one variant differ by more
//! than 5%: closeness is decided once, by the re-measured times, and the
//! bench is about where a strategy looks, not about that noise. Each
//! campaign uses its own temporary store and build cache, so that every
//! strategy pays for its own compiles.
//!
//! One campaign per strategy is one draw of its seed. The random and model
//! strategies are also replayed for `SEEDS` seeds on the exhaustive
//! campaign's times (no building or running: each proposal's outcome is the
//! time measured for that point), which shows how many of their own points
//! each needs, seed to seed; the model also in batches of 8, as the other
//! strategies run, to show what refitting after every pair buys.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::Out;
use crate::campaign::observer::Observer;
use crate::campaign::{grid, jobs, Budget, Campaign, Config, Kernel, Setup, TraceEntry};
use crate::error::Result;
use crate::program::Dataset;
use crate::strategy::{self, StrategyKind};
use crate::units::seconds;

/// "Within 5% of the best".
const CLOSE: f64 = 1.05;
/// Points the exhaustive campaign found within this factor of its best are re-measured.
const CANDIDATE: f64 = 1.25;
const ROUNDS: usize = 3;
/// Seeds of the replayed searches.
const SEEDS: u64 = 20;

pub struct Request {
    pub files: Vec<PathBuf>,
    pub dataset: Dataset,
    /// Knobs fixed (`KNOB=VALUE`) to shrink the space.
    pub settings: Vec<String>,
    /// Timed runs per measurement.
    pub runs: usize,
}

/// The table, written to `out` row by row; each campaign reports to an
/// observer `observer` makes.
pub fn run(request: &Request, observer: &dyn Fn() -> Arc<dyn Observer>, out: Out) -> Result<()> {
    let Request { files, dataset, settings, runs } = request;
    let (dataset, runs) = (*dataset, *runs);
    let setup = Setup::new("default", None)?;
    let spec = grid::Spec {
        knobs: grid::knob_grid(settings, setup.threads)?,
        code: grid::code_grid(settings, setup.threads, setup.profile.compiler().avx512())?,
        gpu_code: grid::gpu_code_grid(settings)?,
        tiles: grid::parse_tiles(grid::TILES).expect("default tiles parse"),
        threads: setup.threads,
        seed: 0,
        peers: Vec::new(),
        references: None,
    };
    header(out);
    for file in files {
        let kernel =
            Kernel::load(file, 0, StrategyKind::Halving, dataset, &Default::default(), &spec, false)?;
        let bench = Bench { setup: &setup, kernel: &kernel, dataset, settings, runs, observer };
        let Exhaustive { trace: exhaustive, times, truth } = bench.exhaustive()?;
        let best = truth.values().copied().fold(f64::INFINITY, f64::min);
        let close: HashSet<String> =
            truth.iter().filter(|(_, t)| **t <= CLOSE * best).map(|(p, _)| p.clone()).collect();
        let replays = replays(&kernel, dataset, &times, &close);
        let mut traces = vec![exhaustive];
        for strategy in [StrategyKind::Random, StrategyKind::Halving, StrategyKind::Model] {
            let stop = Some(close.clone());
            traces.push(bench.campaign(strategy, stop, |_, _| Ok(()))?);
        }
        // Reference points come first in every campaign and are often close
        // to the best: the second figure counts only the strategy's own points.
        let references: Vec<String> = kernel.references.iter().map(|p| p.id()).collect();
        let first_close = |trace: &[TraceEntry], searched_only: bool| -> Option<(usize, f64)> {
            trace
                .iter()
                .find(|t| {
                    t.dataset == dataset
                        && close.contains(&t.point_id)
                        && !(searched_only && references.contains(&t.point_id))
                })
                .map(|t| (t.evaluations, t.elapsed_s))
        };
        let reach = |trace: &[TraceEntry]| match (first_close(trace, false), first_close(trace, true)) {
            (Some((n, t)), Some((m, u))) => format!("{n}, {} (search: {m}, {})", seconds(t), seconds(u)),
            (Some((n, t)), None) => format!("{n}, {} (search: never)", seconds(t)),
            _ => "not reached".to_string(),
        };
        let all = traces[0]
            .last()
            .map(|t| format!("{}, {} (best {})", t.evaluations, seconds(t.elapsed_s), seconds(best)));
        out(&format!(
            "| {} | {} ({}, {}) | {} | {} | {} | {} | {} | {} | {} |",
            kernel.spec.name,
            kernel.space.len() + kernel.references.len(),
            truth.len(),
            close.len(),
            all.unwrap_or_default(),
            reach(&traces[1]),
            reach(&traces[2]),
            reach(&traces[3]),
            replays[0],
            replays[1],
            replays[2]
        ));
    }
    Ok(())
}

/// What the table's columns mean, and its head.
fn header(out: Out) {
    out(&format!(
        "evaluations and wall time until a close point is evaluated (within {CLOSE}x of the best, both re-measured \
         {ROUNDS} rounds)"
    ));
    out(&format!(
        "(replayed: the strategy's own points until one is close, over {SEEDS} seeds on the exhaustive times: median, \
         min-max)"
    ));
    out(
        "| kernel | points (re-measured, close) | exhaustive (all) | random | halving | model | random, replayed | model, \
         replayed | model in batches of 8, replayed |",
    );
    out("|---|---|---|---|---|---|---|---|---|");
}

/// The replayed columns: how many of their own points the random and model
/// strategies need until one is `close` (median, min-max over `SEEDS` seeds),
/// each proposal's outcome its time in `times`.
fn replays(
    kernel: &Kernel,
    dataset: Dataset,
    times: &HashMap<String, f64>,
    close: &HashSet<String>,
) -> [String; 3] {
    let replayed = |kind: StrategyKind, batch: usize| {
        let mut n: Vec<Option<usize>> = (0..SEEDS)
            .map(|seed| {
                let mut s =
                    strategy::new(kind, kernel.space.clone(), Default::default(), dataset, seed, None);
                let proposed = strategy::replay(s.as_mut(), batch, |p, _| times.get(&p.id()).copied());
                proposed.iter().position(|p| close.contains(&p.point.id())).map(|i| i + 1)
            })
            .collect();
        n.sort();
        match (n.first(), n[n.len() / 2], n.last()) {
            (Some(Some(lo)), Some(mid), Some(Some(hi))) => format!("{mid}, {lo}-{hi}"),
            _ => "never (no close point in the space)".to_string(),
        }
    };
    // The model also in the other strategies' batches: what refitting per pair buys.
    let (random, model) = (StrategyKind::Random, StrategyKind::Model);
    [
        replayed(random, random.batch(jobs())),
        replayed(model, model.batch(jobs())),
        replayed(model, random.batch(jobs())),
    ]
}

/// What the exhaustive campaign of one kernel found.
struct Exhaustive {
    trace: Vec<TraceEntry>,
    /// Each point's time as the exhaustive campaign measured it.
    times: HashMap<String, f64>,
    /// The candidates' medians over the rounds of re-measurement.
    truth: HashMap<String, f64>,
}

/// What the campaigns of one kernel's bench share.
struct Bench<'a> {
    setup: &'a Setup,
    kernel: &'a Kernel,
    dataset: Dataset,
    settings: &'a [String],
    runs: usize,
    observer: &'a dyn Fn() -> Arc<dyn Observer>,
}

impl Bench<'_> {
    /// The exhaustive campaign, its candidates re-measured.
    fn exhaustive(&self) -> Result<Exhaustive> {
        let (kernel, dataset) = (self.kernel, self.dataset);
        let mut times: HashMap<String, f64> = HashMap::new();
        let mut truth: HashMap<String, f64> = HashMap::new();
        let trace = self.campaign(StrategyKind::Exhaustive, None, |c, trace| {
            times = trace
                .iter()
                .filter(|t| t.dataset == dataset)
                .filter_map(|t| Some((t.point_id.clone(), t.median_s?)))
                .collect();
            let best = times.values().copied().fold(f64::INFINITY, f64::min);
            let candidates: Vec<_> = kernel
                .references
                .iter()
                .chain(&kernel.space)
                .filter(|p| times.get(&p.id()).is_some_and(|t| *t <= CANDIDATE * best))
                .cloned()
                .collect();
            for (id, mut rounds) in c.remeasure(kernel, &candidates, ROUNDS)? {
                rounds.sort_by(f64::total_cmp);
                truth.insert(id, rounds[rounds.len() / 2]);
            }
            Ok(())
        })?;
        Ok(Exhaustive { trace, times, truth })
    }

    /// One campaign in a temporary store and build cache, to its end or until
    /// it evaluates one of `stop_at`, then `after` on it and its trace (before
    /// the build cache goes); the trace.
    fn campaign(
        &self,
        strategy: StrategyKind,
        stop_at: Option<HashSet<String>>,
        after: impl FnOnce(&mut Campaign, &[TraceEntry]) -> Result<()>,
    ) -> Result<Vec<TraceEntry>> {
        let Bench { setup, kernel, dataset, settings, runs, observer } = *self;
        let dir = std::env::temp_dir().join(format!("polytune-bench-search-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let db = store::Store::open(&dir.join("store.db").display().to_string())?;
        let (mut evaluator, fingerprint) =
            setup.evaluator(runs, executor::verify::Tolerance::default().relative)?;
        evaluator.builder =
            executor::build::Builder::new(evaluator.builder.compiler().clone(), dir.join("builds"))?;
        let machine = db.machine(&setup.profile.name, &serde_json::to_string(&fingerprint)?)?;
        let config = Config {
            polytune: env!("CARGO_PKG_VERSION").to_string(),
            kernels: vec![kernel.spec.clone()],
            dataset,
            strategy,
            seed: 0,
            threads: setup.threads,
            settings: settings.to_vec(),
            tiles: grid::parse_tiles(grid::TILES).expect("default tiles parse"),
            runs,
            tolerance: evaluator.config.tolerance.relative,
            machine: fingerprint.id(),
            peers: Vec::new(),
            emulate: false,
            cold: true,
            race: crate::campaign::RACE.into(),
            rungs: Default::default(),
            references: None,
        };
        let mut c =
            Campaign::open(&db, evaluator, config, Budget::default(), machine)?.with_observer(observer());
        c.stop_at = stop_at;
        c.run(std::slice::from_ref(kernel))?;
        let trace = std::mem::take(&mut c.trace);
        after(&mut c, &trace)?;
        drop(c);
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(trace)
    }
}
