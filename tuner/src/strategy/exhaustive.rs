//! Every point of the space, in the space's order.

use vocab::knobs::Point;

use super::{first_missing, Outcomes, Proposal, Strategy};
use crate::program::Dataset;

pub struct Exhaustive {
    space: Vec<Point>,
    dataset: Dataset,
}

impl Exhaustive {
    pub fn new(space: Vec<Point>, dataset: Dataset) -> Exhaustive {
        Exhaustive { space, dataset }
    }
}

impl Strategy for Exhaustive {
    fn propose(&mut self, outcomes: &Outcomes, batch: usize) -> Vec<Proposal> {
        first_missing(&self.space, self.dataset, outcomes, batch)
    }
}
