//! Rewrites of the model that a variant's code must honour: arrays the
//! region makes at its start (`space::layout`) and scalars and arrays given
//! a copy per loop iteration (`crate::expansion`). The data lives with the SCoP; the
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

/// A scalar or an array given a copy per iteration of the loops around
/// its uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expansion {
    /// The scalar or array, as the program names it.
    pub scalar: String,
    /// Its expansion, a local array with a dimension per loop and then the
    /// original's own dimensions.
    pub array: String,
    /// Of a scalar, `[params] -> { [e0, ...] }`: the element the
    /// original's last write of the scalar went to, which the scalar takes
    /// after the region. Of an array, `[params] -> { [e0, ..., x0, ...] }`:
    /// each element `x` the region writes with the element `e` of the
    /// loops the original's last write of `x` ran in. `None` for an
    /// expansion of a web that does not write last (`crate::expansion`).
    pub last: Option<String>,
    /// `[params] -> { [e] }` for each dimension, the loops' and then the
    /// original's: its values, from 0: one more than the largest is the
    /// dimension's extent.
    pub values: Vec<String>,
    /// The original's rank: the last `rank` dimensions are its own
    /// subscripts (0 for a scalar).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rank: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
