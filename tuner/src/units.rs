//! How times read in the tuner's output.

/// A time with a unit that keeps three significant digits.
pub fn seconds(t: f64) -> String {
    match t {
        t if t >= 1.0 => format!("{t:.3} s"),
        t if t >= 1e-3 => format!("{:.3} ms", t * 1e3),
        t => format!("{:.3} µs", t * 1e6),
    }
}
