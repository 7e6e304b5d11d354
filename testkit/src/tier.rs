//! The test suite's tiers. The README's test command, `cargo test
//! --workspace`, is the fast tier: each heavy sweep (the knob sweep, the
//! GPU sweep, the explain round trip, the random programs, the core
//! scheduler's variants) takes a small, fixed sample of its items that
//! still touches every setting. `POLYTUNE_TIER=heavy` (CI's second tier,
//! `.ci/run`) takes the rest of a larger sample, what the fast tier left
//! out; `POLYTUNE_TIER=full` (or the older `POLYTUNE_FULL_SWEEP=1`) takes
//! every item.

/// How much of each heavy sweep a test run takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Fast,
    Heavy,
    Full,
}

/// The tier of this test run, from `POLYTUNE_TIER` (`fast`, `heavy`,
/// `full`) or `POLYTUNE_FULL_SWEEP`. An unknown value stops the test, naming it.
pub fn tier() -> Tier {
    if std::env::var_os("POLYTUNE_FULL_SWEEP").is_some() {
        return Tier::Full;
    }
    match std::env::var("POLYTUNE_TIER").as_deref().map(str::trim) {
        Err(_) | Ok("") | Ok("fast") => Tier::Fast,
        Ok("heavy") => Tier::Heavy,
        Ok("full") => Tier::Full,
        Ok(other) => panic!("POLYTUNE_TIER={other}: expected fast, heavy or full"),
    }
}

/// Whether this run takes item `j` of sweep row `i` (a kernel), for a
/// sweep whose fast tier takes every `fast`-th item and whose heavy tier
/// every `heavy`-th (`heavy` divides `fast`), shifted by the row so that
/// across the rows every item is taken. The heavy tier leaves out what the
/// fast tier takes: CI runs both tiers on one build, and an item run twice
/// finds nothing new. The full tier takes every item.
pub fn takes(i: usize, j: usize, fast: usize, heavy: usize) -> bool {
    match tier() {
        Tier::Fast => sampled(i, j, fast),
        Tier::Heavy => sampled(i, j, heavy) && !sampled(i, j, fast),
        Tier::Full => true,
    }
}

/// Whether item `j` of row `i` is among every `stride`-th item, shifted by
/// the row (whatever the tier).
pub fn sampled(i: usize, j: usize, stride: usize) -> bool {
    (i + j).is_multiple_of(stride.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_sample_takes_every_item_across_the_rows() {
        // The knob sweep: 30 kernels, 48 settings, stride 24: 2 settings
        // each, every setting at least once.
        let taken: Vec<Vec<usize>> =
            (0..30).map(|i| (0..48).filter(|&j| sampled(i, j, 24)).collect()).collect();
        assert!(taken.iter().all(|t| t.len() == 2));
        assert!((0..48).all(|j| taken.iter().any(|t| t.contains(&j))));
        // The heavy sample holds the fast one: its rest is the heavy tier's.
        let heavy = |i, j| sampled(i, j, 4) && !sampled(i, j, 24);
        assert!((0..30).all(|i| (0..48).filter(|&j| heavy(i, j)).count() == 10));
    }
}
