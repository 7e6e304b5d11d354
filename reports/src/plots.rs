//! The report's plots, drawn by plotters into SVG text.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::model::{Report, Row};

const SIZE: (u32, u32) = (900, 420);

/// Draws with `draw` on an SVG canvas and returns the SVG text; a drawing error (none is
/// expected on a string backend) becomes a note in place of the plot.
fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), String>,
) -> String {
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let drawn = root.fill(&WHITE).map_err(|e| e.to_string()).and_then(|_| draw(&root));
        drawn.and_then(|_| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => out,
        Err(e) => format!("<p>plot not drawn: {}</p>", escape(&e)),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Upper end of a speedup axis: a little above the largest value, at least 1.
fn top(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(1.0_f64, f64::max) * 1.1
}

/// Height of a plot with `n` rows of categories along its y axis.
fn rows_height(n: usize) -> u32 {
    (n as u32 * 24 + 110).max(220)
}

/// Speedup per kernel, one marker colour per machine (a dot plot: a row per kernel).
pub fn speedup_per_kernel(report: &Report) -> String {
    let mut kernels: Vec<String> =
        report.rows.iter().map(|r| format!("{} {}", r.kernel, r.dataset)).collect();
    kernels.sort();
    kernels.dedup();
    let n = kernels.len() as i32;
    // Room on the right for the legend.
    let x_max = top(report.rows.iter().filter_map(|r| r.best.as_ref().map(|w| w.speedup))) * 1.25;
    svg((SIZE.0, rows_height(kernels.len())), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Best speedup over the original, per kernel and machine", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(160)
            .build_cartesian_2d(0.0..x_max, (0..n).into_segmented())
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n as usize)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => kernels.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .x_desc("speedup (×)")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(1.0, SegmentValue::Exact(0)), (1.0, SegmentValue::Last)],
                BLACK.mix(0.4),
            ))
            .map_err(err)?;
        for (mi, machine) in report.machines.iter().enumerate() {
            let color = Palette99::pick(mi).to_rgba();
            let points: Vec<(f64, SegmentValue<i32>)> = report
                .rows
                .iter()
                .filter(|r| &r.machine == machine)
                .filter_map(|r| {
                    let k = kernels.iter().position(|k| *k == format!("{} {}", r.kernel, r.dataset))?;
                    Some((r.best.as_ref()?.speedup, SegmentValue::CenterOf(k as i32)))
                })
                .collect();
            chart
                .draw_series(points.into_iter().map(|p| Circle::new(p, 5, color.filled())))
                .map_err(err)?
                .label(machine.as_str())
                .legend(move |(x, y)| Circle::new((x, y), 5, color.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(err)
    })
}

/// Best speedup so far on one machine, one line per kernel: against evaluations (`by_time`
/// false) or against seconds since the campaign started.
pub fn progress(report: &Report, machine: &str, by_time: bool) -> String {
    let rows: Vec<&Row> =
        report.rows.iter().filter(|r| r.machine == machine && !r.progress.is_empty()).collect();
    let x = |r: &Row, i: usize| {
        let s = &r.progress[i];
        if by_time {
            s.elapsed_s
        } else {
            s.evaluation as f64
        }
    };
    // Each line runs on to the end of its search.
    let end = |r: &Row| {
        if by_time {
            r.progress.last().map_or(0.0, |s| s.elapsed_s).max(r.wall_s)
        } else {
            r.evaluations as f64
        }
    };
    let x_max = rows.iter().map(|r| end(r)).fold(1.0, f64::max);
    let y_max = top(rows.iter().flat_map(|r| r.progress.iter().map(|s| s.speedup)));
    let (what, unit) = if by_time {
        ("time", "seconds since the campaign started")
    } else {
        ("evaluations", "variants measured")
    };
    svg(SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("Best speedup so far against {what} on {machine}"), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(err)?;
        chart.configure_mesh().x_desc(unit).y_desc("best speedup (×)").draw().map_err(err)?;
        for (i, r) in rows.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            // A step line: flat until the next improvement.
            let mut line = Vec::new();
            for j in 0..r.progress.len() {
                if j > 0 {
                    line.push((x(r, j), r.progress[j - 1].speedup));
                }
                line.push((x(r, j), r.progress[j].speedup));
            }
            if let Some(last) = r.progress.last() {
                line.push((end(r), last.speedup));
            }
            // A marker at each improvement: a search that improved once is a point, not a line.
            chart
                .draw_series(
                    r.progress
                        .iter()
                        .enumerate()
                        .map(|(j, s)| Circle::new((x(r, j), s.speedup), 3, color.filled())),
                )
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(2)))
                .map_err(err)?
                .label(format!("{} {}", r.kernel, r.dataset))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(err)
    })
}

/// Each knob's effect: the distribution (box plot) of verified variants' speedups per value
/// of the knob, over every kernel and machine in the report. Knobs with one value are left out.
pub fn knob_effects(report: &Report) -> Vec<(String, String)> {
    let mut by_knob: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for r in &report.rows {
        for s in &r.knobs {
            by_knob.entry(&s.knob).or_default().entry(&s.value).or_default().push(s.speedup);
        }
    }
    by_knob
        .into_iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|(knob, values)| (knob.to_string(), knob_plot(knob, &values)))
        .collect()
}

fn knob_plot(knob: &str, values: &BTreeMap<&str, Vec<f64>>) -> String {
    let names: Vec<String> = values.iter().map(|(v, s)| format!("{v} ({})", s.len())).collect();
    let n = names.len() as i32;
    // plotters draws box plots on an f32 axis.
    let x_max = top(values.values().flatten().copied()) as f32;
    svg((SIZE.0, rows_height(names.len()) + 20), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("Speedups of verified variants by {knob} (count)"), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(220)
            .build_cartesian_2d(0.0f32..x_max, (0..n).into_segmented())
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n as usize)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .x_desc("speedup (×)")
            .draw()
            .map_err(err)?;
        let boxes = values.values().enumerate().map(|(i, s)| {
            Boxplot::new_horizontal(SegmentValue::CenterOf(i as i32), &Quartiles::new(s))
                .width(14)
                .whisker_width(0.5)
        });
        chart.draw_series(boxes).map_err(err)?;
        Ok(())
    })
}

/// Text for XML and HTML: the markup characters as entities.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
