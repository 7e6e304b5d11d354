//! How numbers read in every format, and the tables all formats share.

use crate::model::{Cell, Report, Row, Timed};

/// `1.23 s`, `45.6 ms`, `789 µs`.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// `3h05m`, `12m40s`, `7.5 s`.
pub fn duration(s: f64) -> String {
    let whole = s.round() as u64;
    if whole >= 3600 {
        format!("{}h{:02}m", whole / 3600, whole % 3600 / 60)
    } else if whole >= 60 {
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        format!("{s:.1} s")
    }
}

/// ` (n.s. vs the original)` where the winner's lead over `what` is not significant.
pub fn noise(clear: Option<bool>, what: &str) -> String {
    match clear {
        Some(false) => format!(" (n.s. vs {what})"),
        _ => String::new(),
    }
}

/// `±4%`, or nothing when the spread is unknown.
pub fn spread(s: Option<f64>) -> String {
    s.map(|s| format!(" ±{:.0}%", s * 100.0)).unwrap_or_default()
}

pub fn timed(t: &Timed) -> String {
    format!("{}{}", seconds(t.median_s), spread(t.spread))
}

pub fn speedup(s: f64) -> String {
    format!("{s:.2}×")
}

pub fn cell(c: Option<&Cell>) -> String {
    match c {
        Some(Cell::Ok { speedup: s, .. }) => speedup(*s),
        Some(Cell::Failed(status)) => status.to_string(),
        None => "–".to_string(),
    }
}

/// A table: header and rows of text cells, before any format's quoting.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One machine's table: a row per (kernel, dataset, campaign).
pub fn machine_table(report: &Report, machine: &str) -> Table {
    let mut header: Vec<String> = ["kernel", "dataset", "campaign", "original"].map(String::from).to_vec();
    header.extend(report.labels.iter().cloned());
    header.extend(
        [
            "best",
            "speedup",
            "winning point",
            "evaluations",
            "verified",
            "wall time",
            "evaluations to within 5%",
        ]
        .map(String::from),
    );
    let rows = report
        .rows
        .iter()
        .filter(|r| r.machine == machine)
        .map(|r| {
            let mut cells = vec![
                r.kernel.clone(),
                r.dataset.clone(),
                r.campaign.to_string(),
                r.original.as_ref().map_or_else(|| "not measured".to_string(), timed),
            ];
            cells.extend(report.labels.iter().map(|l| cell(r.references.get(l))));
            match &r.best {
                Some(w) => cells.extend([
                    format!("{}{}", timed(&w.time), noise(w.clear_of_runner_up, "runner-up")),
                    format!("{}{}", speedup(w.speedup), spread(w.speedup_spread))
                        + &noise(w.clear_of_original, "original"),
                    w.point.clone() + &w.origin.as_ref().map(|m| format!(" (from {m})")).unwrap_or_default(),
                ]),
                None => cells.extend(["none verified".to_string(), "–".to_string(), "–".to_string()]),
            }
            cells.extend([
                r.evaluations.to_string(),
                r.verified.to_string(),
                duration(r.wall_s),
                r.evaluations_to_near_best.map_or_else(|| "–".to_string(), |n| n.to_string()),
            ]);
            cells
        })
        .collect();
    Table { header, rows }
}

/// Kernel × machine: the best speedup each machine reached (over its campaigns).
pub fn across_machines(report: &Report) -> Table {
    let mut header: Vec<String> = vec!["kernel".into(), "dataset".into()];
    header.extend(report.machines.iter().cloned());
    let mut keys: Vec<(&str, &str)> =
        report.rows.iter().map(|r| (r.kernel.as_str(), r.dataset.as_str())).collect();
    keys.sort();
    keys.dedup();
    let rows = keys
        .into_iter()
        .map(|(kernel, dataset)| {
            let mut cells = vec![kernel.to_string(), dataset.to_string()];
            for m in &report.machines {
                let best = best_speedup(
                    report
                        .rows
                        .iter()
                        .filter(|r| r.machine == *m && r.kernel == kernel && r.dataset == dataset),
                );
                cells.push(best.map_or_else(|| "–".to_string(), speedup));
            }
            cells
        })
        .collect();
    Table { header, rows }
}

/// The highest speedup found in `rows`.
pub fn best_speedup<'a>(rows: impl Iterator<Item = &'a Row>) -> Option<f64> {
    rows.filter_map(|r| r.best.as_ref().map(|w| w.speedup)).reduce(f64::max)
}
