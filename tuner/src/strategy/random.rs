//! Uniform sampling without replacement: a seeded shuffle of the space,
//! visited in that order. The shuffle depends only on the seed and the space,
//! so a resumed campaign continues the same sequence.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use vocab::knobs::Point;

use super::{first_missing, Outcomes, Proposal, Strategy};
use crate::program::Dataset;

pub struct Random {
    order: Vec<Point>,
    dataset: Dataset,
}

impl Random {
    pub fn new(space: Vec<Point>, dataset: Dataset, seed: u64) -> Random {
        Random { order: shuffled(space, seed), dataset }
    }
}

/// `space` in a seeded random order (ChaCha8: the same sequence on every
/// platform and release).
pub(super) fn shuffled(mut space: Vec<Point>, seed: u64) -> Vec<Point> {
    space.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    space
}

impl Strategy for Random {
    fn propose(&mut self, outcomes: &Outcomes, batch: usize) -> Vec<Proposal> {
        first_missing(&self.order, self.dataset, outcomes, batch)
    }
}
