//! Where one run of a user's program spent its time, region by region: what
//! `tune --autodetect` measured to choose the regions it tunes, kept with
//! the campaign that tuned them.

use serde::{Deserialize, Serialize};

/// One profiled run of the program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunProfile {
    /// The whole run, in seconds.
    pub run_s: f64,
    /// Every region found, in file order.
    pub regions: Vec<RegionShare>,
}

/// One region's part of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionShare {
    /// The kernel name its measurements are stored under.
    pub kernel: String,
    /// The function that holds it.
    pub function: String,
    /// Its first and last source lines.
    pub lines: (u32, u32),
    /// Its share of the run, from 0 to 1.
    pub share: f64,
    /// Whether the campaign tunes it.
    pub tuned: bool,
}
