//! The report as CSV: one line per (machine, kernel, dataset, campaign), numbers unformatted.

use crate::model::{Cell, Report};

pub fn render(report: &Report) -> String {
    let mut header: Vec<String> =
        ["machine", "kernel", "dataset", "campaign", "original_s", "original_spread"]
            .map(String::from)
            .to_vec();
    for l in &report.labels {
        header.extend([format!("{l}_s"), format!("{l}_speedup"), format!("{l}_status")]);
    }
    header.extend(
        [
            "best_s",
            "best_speedup",
            "best_speedup_spread",
            "best_point_id",
            "best_point",
            "evaluations",
            "verified",
            "wall_s",
            "evaluations_to_within_5pct",
            "best_clear_of_original",
            "best_clear_of_runner_up",
            "best_origin",
        ]
        .map(String::from),
    );
    let num = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
    let flag = |x: Option<bool>| x.map(|x| x.to_string()).unwrap_or_default();
    let mut out = line(&header);
    for r in &report.rows {
        let mut cells = vec![
            r.machine.clone(),
            r.kernel.clone(),
            r.dataset.clone(),
            r.campaign.to_string(),
            num(r.original.map(|t| t.median_s)),
            num(r.original.and_then(|t| t.spread)),
        ];
        for l in &report.labels {
            cells.extend(match r.references.get(l) {
                Some(Cell::Ok { time, speedup }) => {
                    [num(Some(time.median_s)), num(Some(*speedup)), "ok".into()]
                }
                Some(Cell::Failed(status)) => [String::new(), String::new(), status.to_string()],
                None => Default::default(),
            });
        }
        let w = r.best.as_ref();
        cells.extend([
            num(w.map(|w| w.time.median_s)),
            num(w.map(|w| w.speedup)),
            num(w.and_then(|w| w.speedup_spread)),
            w.map(|w| w.point_id.clone()).unwrap_or_default(),
            w.map(|w| w.point.clone()).unwrap_or_default(),
            r.evaluations.to_string(),
            r.verified.to_string(),
            r.wall_s.to_string(),
            r.evaluations_to_near_best.map(|n| n.to_string()).unwrap_or_default(),
            flag(w.and_then(|w| w.clear_of_original)),
            flag(w.and_then(|w| w.clear_of_runner_up)),
            w.and_then(|w| w.origin.clone()).unwrap_or_default(),
        ]);
        out.push_str(&line(&cells));
    }
    out
}

/// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
fn line(cells: &[String]) -> String {
    let field = |c: &String| {
        if c.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", c.replace('"', "\"\""))
        } else {
            c.clone()
        }
    };
    format!("{}\r\n", cells.iter().map(field).collect::<Vec<_>>().join(","))
}
