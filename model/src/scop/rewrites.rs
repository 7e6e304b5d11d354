//! Rewrites of the model that a variant's code must honour: arrays the
//! region makes at its start (`space::layout`) and scalars given a copy per
//! loop iteration (`crate::expansion`). The data lives with the SCoP; the
//! analyses that choose them live above it.

use serde::{Deserialize, Serialize};

/// A matrix made at the region's start: `copy[b][a] = of[a][b]` for every
/// element the SCoP reads of `copy`, or `factor * of[a][b]` where the
/// statements read the products (`space::layout::transpose`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransposedCopy {
    pub copy: String,
    pub of: String,
    #[serde(default)]
    pub factor: Option<String>,
}

/// A scalar given a copy per iteration of a loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expansion {
    /// The scalar, as the program names it.
    pub scalar: String,
    /// Its expansion, a local array with a dimension per loop.
    pub array: String,
    /// `[params] -> { [e0, ...] }`: the element the original's last write
    /// of the scalar went to, which the scalar takes after the region;
    /// `None` for an expansion of a web that does not write last
    /// (`crate::expansion`).
    pub last: Option<String>,
    /// `[params] -> { [e] }` for each dimension: its loop's values, from 0:
    /// one more than the largest is the dimension's extent.
    pub values: Vec<String>,
}
