//! The store a command reads, where it names one (a SQLite path or a
//! `postgres://` URL) or by default in the user's data directory: a query
//! never creates one; and a stored best as a line of text.

use store::Store;

use crate::error::{Error, Result};
use crate::units::seconds;

/// Opens the existing store at `db` (default: the user's data directory).
pub fn open_existing(db: Option<&str>) -> Result<Store> {
    let location = match db {
        Some(db) => db.to_string(),
        None => Store::default_location()?.display().to_string(),
    };
    let is_url = location.contains("://");
    if !is_url && !std::path::Path::new(&location).exists() {
        return Err(Error::input(format!(
            "{location}: no store here yet (run `polytune tune` first, or pass --db)"
        )));
    }
    Ok(Store::open(&location)?)
}

/// `1.84x over the original (...) with unified ...`: a kernel's best as one
/// line, with what makes its lead doubtful.
pub fn summary(b: &store::Best) -> String {
    let point = serde_json::from_str::<vocab::knobs::Point>(&b.point_json)
        .map(|p| p.to_string())
        .unwrap_or(b.point_json.clone());
    let pct = |s: Option<f64>| s.map(|s| format!("{:.1}%", 100.0 * s)).unwrap_or("-".into());
    // A lead that is not significant is noise, and is said to be.
    let mut caveats = Vec::new();
    if b.clear_of_original == Some(false) {
        caveats.push(
            "its lead over the original is not significant (Welch's t-test on log times, 5%)".to_string(),
        );
    }
    if let (Some(false), Some(m)) = (b.clear_of_runner_up, b.runner_up_median_s) {
        caveats.push(format!(
            "its lead over the runner-up ({}, spread {}) is not significant (Welch's t-test on log times, 5%)",
            seconds(m),
            pct(b.runner_up_spread)
        ));
    }
    if let Some(machine) = &b.origin {
        caveats.push(format!("a warm start: the best known on machine {machine}"));
    }
    let caveats: String = caveats.iter().map(|c| format!("; {c}")).collect();
    format!(
        "{:.2}x over the original ({}{} vs {}, spreads {} / {}) with {point}{caveats}",
        b.speedup,
        seconds(b.median_s),
        kernels_time(b.kernel_s),
        seconds(b.reference_median_s),
        pct(b.spread),
        pct(b.reference_spread)
    )
}

/// ` (kernels 557.1 µs)` for a GPU variant's time, where its kernels' is known.
pub fn kernels_time(kernel_s: Option<f64>) -> String {
    kernel_s.map(|k| format!(" (kernels {})", seconds(k))).unwrap_or_default()
}
