//! Successive halving across dataset sizes: every point on the smallest
//! rung, the best third promoted to the next larger dataset, up to the
//! campaign's dataset. Small datasets are cheap and rank variants roughly;
//! the final rung decides on the size the user cares about.
//!
//! A smaller dataset saves only the running. With `Rungs::Auto` the first
//! few points of the seeded order are evaluated on the campaign's dataset
//! first, and the rungs below are used only where running was at least half
//! of what those evaluations cost; otherwise the search is the final rung
//! alone, in the seeded order. (At MEDIUM, where scheduling and compiling
//! dominate, evaluating every point on SMALL first cost more than
//! evaluating it once.) Where running does dominate, the probe's points are
//! evaluated on each smaller rung too, and a rung is used only where it
//! ranks them as the campaign's dataset does (an in-cache winner need not
//! win out of cache).

use vocab::knobs::Point;

use super::random::shuffled;
use super::{first_missing, rank_correlation, Outcomes, Proposal, Rungs, Strategy};
use crate::program::Dataset;

/// Keep one in `ETA` points from one rung to the next.
const ETA: usize = 3;

/// Points of the seeded order evaluated on the campaign's dataset first,
/// whose cost split decides on the rungs (`Rungs::Auto`).
pub const PROBE: usize = 4;

/// The least share of running in the probe's evaluations for the smaller
/// rungs to be used. With `ETA` = 3 and a point costing `m` to make
/// (schedule, code, compile: about the same on every dataset) and `r` to
/// run on the final one, halving costs `m (1 + 1/3 + 1/9) + r / 9` per
/// point against `m + r` for one evaluation on the final dataset: it breaks
/// even at `r = m / 2`, a third. Half leaves a margin for the lower rungs'
/// ranking errors (in-cache winners are not always the winners out of it).
pub const MIN_RUN_SHARE: f64 = 0.5;

/// The least rank correlation (Spearman's) between a smaller rung's times
/// of the probe's points and the campaign dataset's for the rung to be
/// used: with 4 points, one swap of neighbours (0.8) passes, two (0.4) do
/// not.
pub const MIN_RANK_CORRELATION: f64 = 0.6;

pub struct Halving {
    rungs: Vec<Dataset>,
    /// The space in a seeded order, so that ties and partial rungs do not
    /// favour the first knobs of the grid.
    space: Vec<Point>,
    rule: Rungs,
}

impl Halving {
    pub fn new(space: Vec<Point>, rule: Rungs, dataset: Dataset, seed: u64) -> Halving {
        Halving { rungs: rungs(dataset), space: shuffled(space, seed), rule }
    }

    /// The rungs to search, or the probe's points still to evaluate (on the
    /// final dataset) before the rule can tell; empty while they are pending.
    fn rungs_or_probe(&self, outcomes: &Outcomes, batch: usize) -> Result<Vec<Dataset>, Vec<Proposal>> {
        let last = *self.rungs.last().expect("at least the campaign's dataset");
        if self.rule == Rungs::All || self.rungs.len() == 1 {
            return Ok(self.rungs.clone());
        }
        let probe = &self.space[..PROBE.min(self.space.len())];
        let missing = first_missing(probe, last, outcomes, batch);
        if !missing.is_empty() || probe.iter().any(|p| outcomes.is_pending(last, p)) {
            return Err(missing);
        }
        if run_share(outcomes, last, probe).is_some_and(|share| share < MIN_RUN_SHARE) {
            return Ok(vec![last]);
        }
        // The probe on each smaller rung, then the rungs that rank it alike.
        let lower = &self.rungs[..self.rungs.len() - 1];
        let mut missing = Vec::new();
        for &d in lower {
            missing.extend(first_missing(probe, d, outcomes, batch - missing.len()));
        }
        let pending = lower.iter().any(|&d| probe.iter().any(|p| outcomes.is_pending(d, p)));
        if !missing.is_empty() || pending {
            return Err(missing);
        }
        let times = |d: Dataset, p: &Point| outcomes.get(d, p).flatten();
        let kept = lower.iter().copied().filter(|&d| {
            let pairs: Vec<(f64, f64)> =
                probe.iter().filter_map(|p| Some((times(d, p)?, times(last, p)?))).collect();
            // Too few verified on both to tell: the cost rule stands.
            pairs.len() < 3 || rank_correlation(&pairs) >= MIN_RANK_CORRELATION
        });
        Ok(kept.chain([last]).collect())
    }
}

/// The share of running in the summed costs of `points` on `dataset`;
/// `None` when none of them has recorded costs.
pub(super) fn run_share(outcomes: &Outcomes, dataset: Dataset, points: &[Point]) -> Option<f64> {
    let splits: Vec<_> = points.iter().filter_map(|p| outcomes.costs.get(&(dataset, p.id()))).collect();
    let (make, run) = splits.iter().fold((0.0, 0.0), |(m, r), s| (m + s.make_s, r + s.run_s));
    (!splits.is_empty() && make + run > 0.0).then(|| run / (make + run))
}

/// SMALL, MEDIUM and `last`, ascending, those not above `last`.
pub(super) fn rungs(last: Dataset) -> Vec<Dataset> {
    let mut r: Vec<Dataset> = [Dataset::Small, Dataset::Medium].into_iter().filter(|d| *d < last).collect();
    r.push(last);
    r
}

impl Strategy for Halving {
    fn propose(&mut self, outcomes: &Outcomes, batch: usize) -> Vec<Proposal> {
        let rungs = match self.rungs_or_probe(outcomes, batch) {
            Ok(rungs) => rungs,
            Err(probe) => return probe,
        };
        let mut candidates = self.space.clone();
        for (i, &dataset) in rungs.iter().enumerate() {
            let missing = first_missing(&candidates, dataset, outcomes, batch);
            if !missing.is_empty() {
                return missing;
            }
            if i + 1 == rungs.len() {
                break;
            }
            // The rung is complete only once other workers' points are measured too.
            if candidates.iter().any(|p| outcomes.is_pending(dataset, p)) {
                return Vec::new();
            }
            // Promote the fastest `ok` third (at least one), stable on ties.
            let mut timed: Vec<(f64, Point)> = candidates
                .into_iter()
                .filter_map(|p| outcomes.get(dataset, &p).flatten().map(|t| (t, p)))
                .collect();
            timed.sort_by(|a, b| a.0.total_cmp(&b.0));
            let keep = timed.len().div_ceil(ETA).max(1).min(timed.len());
            candidates = timed.into_iter().take(keep).map(|(_, p)| p).collect();
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{drive, points};
    use super::*;

    #[test]
    fn halving_promotes_the_fastest_third_per_rung() {
        let space = points(27);
        let tile = |p: &Point| p.tiles.as_ref().unwrap()[0] as f64;
        // Time = tile size, so small tiles win; point 27 fails everywhere.
        let time = |p: &Point, _: Dataset| (tile(p) < 27.0).then(|| tile(p));
        let proposals = drive(&mut Halving::new(space, Rungs::All, Dataset::Large, 1), time);
        let on = |d: Dataset| {
            let mut t: Vec<f64> =
                proposals.iter().filter(|p| p.dataset == d).map(|p| tile(&p.point)).collect();
            t.sort_by(f64::total_cmp);
            t
        };
        assert_eq!(on(Dataset::Small).len(), 27);
        assert_eq!(on(Dataset::Medium), (1..=9).map(f64::from).collect::<Vec<_>>());
        assert_eq!(on(Dataset::Large), vec![1.0, 2.0, 3.0]);
        assert_eq!(rungs(Dataset::Small), vec![Dataset::Small]);
        assert_eq!(rungs(Dataset::Mini), vec![Dataset::Mini]);
    }

    /// The rule: the first `PROBE` points of the order run on LARGE first;
    /// running a third of their cost keeps the search on LARGE, in the
    /// seeded order; running 80% of it sends it down to SMALL.
    #[test]
    fn halving_uses_smaller_datasets_only_where_running_dominates() {
        let space = points(9);
        let order = shuffled(space.clone(), 5);
        let mut h = Halving::new(space.clone(), Rungs::Auto, Dataset::Large, 5);
        let probe = h.propose(&Outcomes::default(), 8);
        assert_eq!(probe.iter().map(|p| p.point.clone()).collect::<Vec<_>>(), order[..PROBE]);
        assert!(probe.iter().all(|p| p.dataset == Dataset::Large), "{probe:?}");
        let mut after = |make_s: f64, run_s: f64| {
            let mut o = Outcomes::default();
            for p in &order[..PROBE] {
                o.measured.insert((Dataset::Large, p.id()), Some(1.0));
                o.costs.insert((Dataset::Large, p.id()), super::super::Split { make_s, run_s });
            }
            h.propose(&o, 3)
        };
        let cheap = after(2.0, 1.0);
        assert_eq!(cheap.into_iter().map(|p| (p.dataset, p.point)).collect::<Vec<_>>(), {
            order[PROBE..PROBE + 3].iter().map(|p| (Dataset::Large, p.clone())).collect::<Vec<_>>()
        });
        let dear = after(1.0, 4.0);
        assert!(dear.len() == 3 && dear.iter().all(|p| p.dataset == Dataset::Small), "{dear:?}");
        assert!(dear.iter().all(|p| order[..PROBE].contains(&p.point)), "the probe on SMALL first: {dear:?}");
        let mut pending = Outcomes::default();
        pending.pending.insert((Dataset::Large, order[0].id()));
        let waiting = h.propose(&pending, 8);
        assert_eq!(waiting.len(), PROBE - 1, "the probe's other points, then a wait: {waiting:?}");
        assert_eq!(run_share(&Outcomes::default(), Dataset::Large, &order), None);
    }

    /// Where running dominates, the probe runs on each smaller rung too; a
    /// rung that ranks it as LARGE does is used, one that ranks it backwards
    /// is not (the search stays on LARGE). MEDIUM and SMALL are judged apart.
    #[test]
    fn halving_uses_a_smaller_dataset_only_where_it_ranks_the_probe_alike() {
        let space = points(9);
        let order = shuffled(space.clone(), 5);
        let probe = &order[..PROBE];
        let search = |small_backwards: bool, medium_backwards: bool| {
            let mut o = Outcomes::default();
            for (i, p) in probe.iter().enumerate() {
                let (up, down) = (i as f64 + 1.0, (PROBE - i) as f64);
                o.measured.insert((Dataset::Large, p.id()), Some(up));
                o.costs.insert((Dataset::Large, p.id()), super::super::Split { make_s: 1.0, run_s: 4.0 });
                o.measured
                    .insert((Dataset::Small, p.id()), Some(if small_backwards { down } else { up } / 100.0));
                o.measured
                    .insert((Dataset::Medium, p.id()), Some(if medium_backwards { down } else { up } / 10.0));
            }
            let next = Halving::new(space.clone(), Rungs::Auto, Dataset::Large, 5).propose(&o, 3);
            next.iter().map(|p| p.dataset).collect::<Vec<_>>()
        };
        assert_eq!(search(false, false), [Dataset::Small; 3]);
        assert_eq!(search(true, false), [Dataset::Medium; 3], "SMALL dropped, MEDIUM kept");
        assert_eq!(search(true, true), [Dataset::Large; 3], "both dropped");
        assert!((rank_correlation(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 4.0)]) - 0.8).abs() < 1e-12);
        assert!((rank_correlation(&[(1.0, 4.0), (2.0, 3.0), (3.0, 2.0), (4.0, 1.0)]) + 1.0).abs() < 1e-12);
    }
}
