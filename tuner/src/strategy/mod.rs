//! Search strategies, one file each behind one small trait (as Kernel Tuner
//! organises them). A strategy sees points and the outcomes recorded so far;
//! it never builds, runs or stores anything, so the campaign can stop and
//! resume anywhere: every strategy here derives its next step from the
//! outcomes alone (plus its seed), never from state kept between calls.

mod exhaustive;
pub mod features;
mod halving;
mod model;
mod random;

use std::collections::{HashMap, HashSet};

use vocab::knobs::Point;

use crate::choice::Choice;
use crate::program::Dataset;

pub use exhaustive::Exhaustive;
pub use halving::Halving;
pub use model::{Known, Model, Prior};
pub use random::Random;

/// What the search knows: each evaluated point on one dataset with its
/// median time when its status was `ok`, `None` for any failure; and the
/// points other workers are measuring now (claimed, not yet recorded),
/// which no strategy proposes and none may take for a result.
#[derive(Debug, Default, Clone)]
pub struct Outcomes {
    pub measured: HashMap<(Dataset, String), Option<f64>>,
    pub pending: HashSet<(Dataset, String)>,
    /// What each recorded evaluation cost, where it was recorded.
    pub costs: HashMap<(Dataset, String), Split>,
}

/// An evaluation's cost in two parts: making its program (the variant
/// child's scheduling and code generation, and the compile) and running it.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Split {
    pub make_s: f64,
    pub run_s: f64,
}

impl Outcomes {
    /// `Some` once measured; `None` before, pending or not.
    pub fn get(&self, dataset: Dataset, point: &Point) -> Option<Option<f64>> {
        self.measured.get(&(dataset, point.id())).copied()
    }

    /// Measured, or being measured by another worker.
    pub fn contains(&self, dataset: Dataset, point: &Point) -> bool {
        let key = (dataset, point.id());
        self.measured.contains_key(&key) || self.pending.contains(&key)
    }

    pub fn is_pending(&self, dataset: Dataset, point: &Point) -> bool {
        self.pending.contains(&(dataset, point.id()))
    }
}

/// One point to evaluate on one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub dataset: Dataset,
    pub point: Point,
}

pub trait Strategy {
    /// Up to `batch` points neither evaluated nor pending; empty when the
    /// search is over, or waits on pending points (a rung of halving).
    fn propose(&mut self, outcomes: &Outcomes, batch: usize) -> Vec<Proposal>;
}

/// A search strategy (what each does: [`Choice::about`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrategyKind {
    Exhaustive,
    Random,
    Halving,
    Model,
}

impl Choice for StrategyKind {
    const WHAT: &'static str = "strategy";
    const ALL: &'static [StrategyKind] =
        &[StrategyKind::Exhaustive, StrategyKind::Random, StrategyKind::Halving, StrategyKind::Model];
    fn name(self) -> &'static str {
        match self {
            StrategyKind::Exhaustive => "exhaustive",
            StrategyKind::Random => "random",
            StrategyKind::Halving => "halving",
            StrategyKind::Model => "model",
        }
    }
    fn about(self) -> Option<&'static str> {
        Some(match self {
            StrategyKind::Exhaustive => "Every point of the space, in a fixed order",
            StrategyKind::Random => "Points drawn uniformly without replacement (seeded)",
            StrategyKind::Halving => "Successive halving across dataset sizes (SMALL → MEDIUM → the campaign's)",
            StrategyKind::Model => {
                "A random forest over knob values learns from the outcomes; the next points are those of \
                 highest expected improvement (after 4 seeded random ones), refitted after every batch of one \
                 point per worker"
            }
        })
    }
}
crate::choice::named!(StrategyKind);

impl StrategyKind {
    /// Points per batch when `parallel` points are made or measured at once. The model
    /// learns from every outcome, so it gets one point per worker: it refits after each
    /// pair instead of each eight. The others get enough to keep the pipeline of
    /// children and compiles full.
    pub fn batch(self, parallel: usize) -> usize {
        match self {
            StrategyKind::Model => parallel.max(1),
            _ => (2 * parallel).max(8),
        }
    }
}

/// Which rungs halving searches (`--rungs`; what each choice does: [`Choice::about`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rungs {
    #[default]
    Auto,
    All,
}

impl Choice for Rungs {
    const WHAT: &'static str = "--rungs choice";
    const ALL: &'static [Rungs] = &[Rungs::Auto, Rungs::All];
    fn name(self) -> &'static str {
        match self {
            Rungs::Auto => "auto",
            Rungs::All => "all",
        }
    }
    fn about(self) -> Option<&'static str> {
        Some(match self {
            Rungs::Auto => {
                "The smaller datasets only where running is at least half of what the first points evaluated \
                 on the campaign's dataset cost; else the campaign's dataset alone"
            }
            Rungs::All => "SMALL, MEDIUM and the campaign's dataset, whatever the costs",
        })
    }
}
crate::choice::named!(Rungs);

/// The strategy of `kind` over `space` (in the space's order) for a campaign
/// whose dataset is `dataset`; the model starts from `prior` where there is
/// one (what other campaigns measured).
pub fn new(
    kind: StrategyKind,
    space: Vec<Point>,
    rungs: Rungs,
    dataset: Dataset,
    seed: u64,
    prior: Option<&Prior>,
) -> Box<dyn Strategy> {
    match kind {
        StrategyKind::Exhaustive => Box::new(Exhaustive::new(space, dataset)),
        StrategyKind::Random => Box::new(Random::new(space, dataset, seed)),
        StrategyKind::Halving => Box::new(Halving::new(space, rungs, dataset, seed)),
        StrategyKind::Model => Box::new(Model::with_prior(space, dataset, seed, prior)),
    }
}

/// The datasets a strategy of `kind` may propose for a campaign on `dataset`.
pub fn datasets(kind: StrategyKind, dataset: Dataset) -> Vec<Dataset> {
    match kind {
        StrategyKind::Halving => halving::rungs(dataset),
        _ => vec![dataset],
    }
}

/// Every proposal of `strategy` in order, run to its end in batches of `batch` with
/// `time` as each point's outcome (`None`: it failed): a campaign without the
/// campaign, to replay a search on times measured once (`bench search`).
pub fn replay(
    strategy: &mut dyn Strategy,
    batch: usize,
    time: impl Fn(&Point, Dataset) -> Option<f64>,
) -> Vec<Proposal> {
    replay_until(strategy, batch, time, |_| false)
}

/// [`replay`] that stops after the batch in which a proposal meets `stop`
/// (a bench that asks when the first close point comes need not replay the
/// rest of a large space).
pub fn replay_until(
    strategy: &mut dyn Strategy,
    batch: usize,
    time: impl Fn(&Point, Dataset) -> Option<f64>,
    stop: impl Fn(&Proposal) -> bool,
) -> Vec<Proposal> {
    let mut outcomes = Outcomes::default();
    let mut all = Vec::new();
    loop {
        let proposed = strategy.propose(&outcomes, batch);
        if proposed.is_empty() {
            return all;
        }
        let mut done = false;
        for p in proposed {
            assert!(!outcomes.contains(p.dataset, &p.point), "proposed twice: {p:?}");
            outcomes.measured.insert((p.dataset, p.point.id()), time(&p.point, p.dataset));
            done |= stop(&p);
            all.push(p);
        }
        if done {
            return all;
        }
    }
}

/// Spearman's rank correlation of the pairs (ranks of ties averaged); 1
/// where either side is constant.
pub fn rank_correlation(pairs: &[(f64, f64)]) -> f64 {
    let ranks = |xs: Vec<f64>| -> Vec<f64> {
        xs.iter()
            .map(|x| {
                let below = xs.iter().filter(|y| *y < x).count() as f64;
                let equal = xs.iter().filter(|y| *y == x).count() as f64;
                below + (equal + 1.0) / 2.0
            })
            .collect()
    };
    let a = ranks(pairs.iter().map(|p| p.0).collect());
    let b = ranks(pairs.iter().map(|p| p.1).collect());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let denominator = (var(&a, ma) * var(&b, mb)).sqrt();
    if denominator == 0.0 {
        1.0
    } else {
        cov / denominator
    }
}

/// The first `batch` points of `order` not evaluated on `dataset` yet.
fn first_missing(order: &[Point], dataset: Dataset, outcomes: &Outcomes, batch: usize) -> Vec<Proposal> {
    order
        .iter()
        .filter(|p| !outcomes.contains(dataset, p))
        .take(batch)
        .map(|p| Proposal { dataset, point: p.clone() })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use vocab::knobs::{Point, Scheduler};

    use super::*;

    /// `n` distinct points (tile sizes 1..=n).
    pub fn points(n: u32) -> Vec<Point> {
        (1..=n)
            .map(|t| Point {
                scheduler: Scheduler::Isl,
                tiles: Some(vec![t]),
                threads: 1,
                code: Default::default(),
            })
            .collect()
    }

    /// Runs a strategy to its end in batches of 3 with `time(point, dataset)`
    /// as the measured time; returns every proposal in order.
    pub fn drive(s: &mut dyn Strategy, time: impl Fn(&Point, Dataset) -> Option<f64>) -> Vec<Proposal> {
        replay(s, 3, time)
    }

    #[test]
    fn pending_points_are_left_to_their_workers() {
        let space = points(6);
        let mut outcomes = Outcomes::default();
        outcomes.pending.insert((Dataset::Small, space[0].id()));
        for kind in [StrategyKind::Exhaustive, StrategyKind::Random, StrategyKind::Model] {
            let proposed =
                new(kind, space.clone(), Rungs::Auto, Dataset::Small, 3, None).propose(&outcomes, 10);
            assert_eq!(proposed.len(), 5, "{kind:?}");
            assert!(proposed.iter().all(|p| p.point != space[0]), "{kind:?}");
        }
        // Halving promotes from a rung only once no point of it is pending.
        let mut o = Outcomes::default();
        for p in &space[1..] {
            o.measured.insert((Dataset::Small, p.id()), Some(1.0));
        }
        o.pending.insert((Dataset::Small, space[0].id()));
        assert!(new(StrategyKind::Halving, space.clone(), Rungs::All, Dataset::Medium, 3, None)
            .propose(&o, 10)
            .is_empty());
        o.pending.clear();
        o.measured.insert((Dataset::Small, space[0].id()), Some(0.5));
        let next =
            new(StrategyKind::Halving, space.clone(), Rungs::All, Dataset::Medium, 3, None).propose(&o, 10);
        assert!(next.iter().any(|p| p.dataset == Dataset::Medium && p.point == space[0]), "{next:?}");
    }

    #[test]
    fn exhaustive_and_random_visit_every_point_once() {
        let space = points(10);
        let ex = drive(&mut Exhaustive::new(space.clone(), Dataset::Small), |_, _| Some(1.0));
        assert_eq!(ex.iter().map(|p| p.point.clone()).collect::<Vec<_>>(), space);
        let r1 = drive(&mut Random::new(space.clone(), Dataset::Small, 7), |_, _| Some(1.0));
        let r2 = drive(&mut Random::new(space.clone(), Dataset::Small, 7), |_, _| Some(1.0));
        let r3 = drive(&mut Random::new(space.clone(), Dataset::Small, 8), |_, _| Some(1.0));
        assert_eq!(r1, r2, "same seed, same order");
        assert_ne!(r1, r3, "another seed, another order");
        let mut seen: Vec<Point> = r1.into_iter().map(|p| p.point).collect();
        seen.sort_by_key(|p| p.id());
        let mut want = space;
        want.sort_by_key(|p| p.id());
        assert_eq!(seen, want);
    }
}
