//! Successive halving across dataset sizes: every point on the smallest
//! rung, the best third promoted to the next larger dataset, up to the
//! campaign's dataset. Small datasets are cheap and rank variants roughly;
//! the final rung decides on the size the user cares about.

use space::knobs::Point;

use super::random::shuffled;
use super::{first_missing, Outcomes, Proposal, Strategy};
use crate::program::Dataset;

/// Keep one in `ETA` points from one rung to the next.
const ETA: usize = 3;

pub struct Halving {
    rungs: Vec<Dataset>,
    /// The space in a seeded order, so that ties and partial rungs do not
    /// favour the first knobs of the grid.
    space: Vec<Point>,
}

impl Halving {
    pub fn new(space: Vec<Point>, dataset: Dataset, seed: u64) -> Halving {
        Halving { rungs: rungs(dataset), space: shuffled(space, seed) }
    }
}

/// SMALL, MEDIUM and `last`, ascending, those not above `last`.
pub(super) fn rungs(last: Dataset) -> Vec<Dataset> {
    let mut r: Vec<Dataset> = [Dataset::Small, Dataset::Medium].into_iter().filter(|d| *d < last).collect();
    r.push(last);
    r
}

impl Strategy for Halving {
    fn propose(&mut self, outcomes: &Outcomes, batch: usize) -> Vec<Proposal> {
        let mut candidates = self.space.clone();
        for (i, &dataset) in self.rungs.iter().enumerate() {
            let missing = first_missing(&candidates, dataset, outcomes, batch);
            if !missing.is_empty() {
                return missing;
            }
            if i + 1 == self.rungs.len() {
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
        let proposals = drive(&mut Halving::new(space, Dataset::Large, 1), time);
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
}
