//! From measurement rows to report rows: one per (machine, kernel, dataset, campaign).
//!
//! Times are compared only inside one campaign on one program (a median moves 10–20%
//! between sessions): every speedup is the campaign's own original over a variant of it.

use std::collections::BTreeMap;

use serde::Serialize;
use store::{ReportRow, Role, Status};
use vocab::knobs::Point;

/// Names the reference and peer points a campaign measures before it searches (the
/// tuner knows which they are); `None` for a point of the search.
pub type Labeler<'a> = &'a dyn Fn(&Point) -> Option<String>;

/// A variant whose time is within this fraction of the final best's counts as having found it.
pub const NEAR_BEST: f64 = 0.05;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub rows: Vec<Row>,
    /// Reference labels in the order of first appearance (the columns of the tables).
    pub labels: Vec<String>,
    pub machines: Vec<String>,
}

/// A median and the relative spread of its samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Timed {
    pub median_s: f64,
    /// (max − min) / median.
    pub spread: Option<f64>,
}

/// How a reference or peer point ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Cell {
    /// Verified, with its speedup over the original.
    Ok { time: Timed, speedup: f64 },
    /// Any other status (`wrong`, `timeout`, ...).
    Failed(Status),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Winner {
    pub point_id: String,
    /// The point in words (`unified (S0 S1) spatial=off tiles=32 threads=2`).
    pub point: String,
    pub time: Timed,
    pub speedup: f64,
    /// First-order relative spread of the speedup: the sum of both relative spreads.
    pub speedup_spread: Option<f64>,
    /// The next slower verified variant of the campaign (not a point sharing the winner's
    /// program and measurement).
    pub runner_up: Option<Timed>,
    /// Faster than the original, and than the runner-up, beyond noise
    /// (`store::faster_beyond_noise`); `None` where that cannot be said or there is no runner-up.
    pub clear_of_original: Option<bool>,
    pub clear_of_runner_up: Option<bool>,
    /// The schedule as loop transformations of the original (`polytune explain`), when the
    /// caller could work it out.
    pub explanation: Option<String>,
    /// The machine whose best it was, when a warm start brought it (`tune --warm-start`).
    pub origin: Option<String>,
}

/// One step of the best-so-far curve: after `evaluation` variants and `elapsed_s`
/// seconds since the campaign started, the best speedup is `speedup`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Step {
    pub evaluation: usize,
    pub elapsed_s: f64,
    pub speedup: f64,
}

/// One verified variant's knob values and speedup: what the knob-effect plots draw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KnobSample {
    pub knob: String,
    pub value: String,
    pub speedup: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub machine: String,
    pub kernel: String,
    pub dataset: String,
    pub campaign: i64,
    /// The original program (the newest `ok` reference measurement).
    pub original: Option<Timed>,
    /// Reference and peer points by label.
    pub references: BTreeMap<String, Cell>,
    pub best: Option<Winner>,
    /// Variants measured, and how many of them verified `ok`.
    pub evaluations: usize,
    pub verified: usize,
    /// Seconds from the first to the last measurement of this program in the campaign.
    pub wall_s: f64,
    /// Variants measured until the best so far was within [`NEAR_BEST`] of the final best.
    pub evaluations_to_near_best: Option<usize>,
    /// The best-so-far curve, one step per improvement.
    pub progress: Vec<Step>,
    pub knobs: Vec<KnobSample>,
}

/// Builds the report from the store's rows (oldest first, as `report_rows` returns them).
pub fn collect(rows: &[ReportRow], label: Labeler) -> Report {
    let mut groups: BTreeMap<(String, String, String, i64), Vec<&ReportRow>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.machine.clone(), r.kernel.clone(), r.dataset.clone(), r.campaign))
            .or_default()
            .push(r);
    }
    let mut report = Report::default();
    for ((machine, kernel, dataset, campaign), rows) in groups {
        let row = build_row(machine, kernel, dataset, campaign, &rows, label, &mut report.labels);
        if !report.machines.contains(&row.machine) {
            report.machines.push(row.machine.clone());
        }
        report.rows.push(row);
    }
    report
}

impl Report {
    /// Sets each winner's explanation to what `explain` says of it.
    pub fn explain_winners(&mut self, explain: impl Fn(&Row, &Winner) -> Option<String>) {
        for i in 0..self.rows.len() {
            let text = self.rows[i].best.as_ref().and_then(|w| explain(&self.rows[i], w));
            if let Some(w) = self.rows[i].best.as_mut() {
                w.explanation = text;
            }
        }
    }
}

/// A verified row's times, as the significance test reads them.
fn times(r: &ReportRow) -> store::Times<'_> {
    let t = timed(r).expect("a verified time");
    store::Times { median_s: t.median_s, spread: t.spread, samples: &r.samples }
}

fn timed(r: &ReportRow) -> Option<Timed> {
    (r.status == Status::Ok).then_some(())?;
    r.median_s.filter(|m| *m > 0.0).map(|median_s| Timed { median_s, spread: r.spread })
}

fn build_row(
    machine: String,
    kernel: String,
    dataset: String,
    campaign: i64,
    rows: &[&ReportRow],
    label: Labeler,
    labels: &mut Vec<String>,
) -> Row {
    let original_row = rows.iter().rev().find(|r| r.role == Role::Reference && timed(r).is_some());
    let original = original_row.and_then(|r| timed(r));
    let variants: Vec<&ReportRow> = rows.iter().copied().filter(|r| r.role == Role::Variant).collect();
    let speedup = |t: &Timed| original.map(|o| o.median_s / t.median_s);
    let mut row = Row {
        machine,
        kernel,
        dataset,
        campaign,
        original,
        references: BTreeMap::new(),
        best: None,
        evaluations: variants.len(),
        verified: variants.iter().filter(|r| r.status == Status::Ok).count(),
        wall_s: match (rows.first(), rows.last()) {
            (Some(a), Some(b)) => (b.measured_at.millis() - a.measured_at.millis()) as f64 / 1e3,
            _ => 0.0,
        },
        evaluations_to_near_best: None,
        progress: Vec::new(),
        knobs: Vec::new(),
    };
    let mut best: Option<(f64, &ReportRow, Timed)> = None;
    for (n, r) in variants.iter().enumerate() {
        let point: Option<Point> = serde_json::from_str(&r.point_json).ok();
        let t = timed(r);
        if let Some(name) = point.as_ref().and_then(label) {
            if !labels.contains(&name) {
                labels.push(name.clone());
            }
            let cell = match (t, t.as_ref().and_then(speedup)) {
                (Some(time), Some(s)) => Cell::Ok { time, speedup: s },
                _ => Cell::Failed(r.status),
            };
            row.references.insert(name, cell);
        }
        let (Some(t), Some(s)) = (t, t.as_ref().and_then(speedup)) else { continue };
        if let Some(p) = &point {
            row.knobs.extend(p.knob_values().into_iter().map(|(knob, value)| KnobSample {
                knob,
                value,
                speedup: s,
            }));
        }
        if best.as_ref().is_none_or(|(b, _, _)| s > *b) {
            best = Some((s, r, t));
            let elapsed_s = (r.measured_at.millis() - r.campaign_started.millis()) as f64 / 1e3;
            row.progress.push(Step { evaluation: n + 1, elapsed_s, speedup: s });
        }
    }
    if let Some((s, r, t)) = best {
        let point = serde_json::from_str::<Point>(&r.point_json).map(|p| p.to_string());
        let runner_up_row = variants
            .iter()
            .filter_map(|v| Some((*v, timed(v)?)))
            .filter(|(_, v)| v.median_s > t.median_s)
            .min_by(|a, b| a.1.median_s.total_cmp(&b.1.median_s));
        let runner_up = runner_up_row.map(|(_, t)| t);
        let clear = |o: &&ReportRow| store::faster_beyond_noise(times(r), times(o));
        row.best = Some(Winner {
            point_id: r.point_id.clone(),
            point: point.unwrap_or_else(|_| r.point_json.clone()),
            time: t,
            speedup: s,
            speedup_spread: original.and_then(|o| Some(o.spread? + t.spread?)),
            runner_up,
            clear_of_original: original_row.and_then(clear),
            clear_of_runner_up: runner_up_row.map(|(r, _)| r).as_ref().and_then(clear),
            explanation: None,
            origin: r.origin.clone(),
        });
        row.evaluations_to_near_best = row
            .progress
            .iter()
            .find(|step| step.speedup * (1.0 + NEAR_BEST) >= s)
            .map(|step| step.evaluation);
    }
    row
}
