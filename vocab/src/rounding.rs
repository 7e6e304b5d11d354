//! The rounding noise of an original program's outputs, as the executor
//! finds it (`executor::verify`) and the store and reports keep it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What two builds of the *same* original program disagree on when they
/// differ only in the floating-point evaluation order a compiler may choose
/// (FMA contraction, reassociation). Those elements carry rounding noise,
/// not results, and are compared within a tolerance derived from it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundingNoise {
    /// The extra flags of each build compared with the original's, in order.
    pub probes: Vec<String>,
    /// Arrays with at least one element beyond the relative tolerance, in dump order.
    pub arrays: Vec<ArrayNoise>,
}

/// One array's noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrayNoise {
    /// The array's name as dumped (`A`, or `A (dump #2)`).
    pub array: String,
    /// Elements on which a build disagreed with the original beyond the tolerance.
    pub noisy: u64,
    /// Those of them on which it agreed on no digit (a factor of two apart,
    /// or of opposite signs): values that are not results at all.
    #[serde(default)]
    pub no_digit: u64,
    pub elements: u64,
    /// The largest absolute difference among them.
    pub largest: f64,
    /// The largest finite magnitude in the original's array.
    pub magnitude: f64,
}

impl RoundingNoise {
    /// No element is noise (or no build was compared).
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }
}

impl fmt::Display for RoundingNoise {
    /// One line: `` `Q` 512 of 1024 elements (differences up to 1.3e0, values up to 1e0); `nrm` … ``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.arrays.is_empty() {
            return write!(f, "none ({} agree with it)", self.probes.join(", "));
        }
        for (k, a) in self.arrays.iter().enumerate() {
            let sep = if k == 0 { "" } else { "; " };
            write!(
                f,
                "{sep}`{}` {} of {} elements ({} with no digit agreed; differences up to {:.1e}, values up to {:.1e})",
                a.array, a.noisy, a.elements, a.no_digit, a.largest, a.magnitude
            )?;
        }
        write!(f, ", between builds with {}", self.probes.join(", "))
    }
}
