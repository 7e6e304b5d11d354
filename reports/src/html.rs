//! The report as one self-contained HTML file: the Markdown's tables, then the plots as
//! inline SVG (no script, no external file).

use crate::model::{Report, NEAR_BEST};
use crate::plots::{self, escape};
use crate::text::{across_machines, machine_table, Table};

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}\
th,td{border:1px solid #bbb;padding:3px 8px;text-align:right}\
th{background:#eee}td:nth-child(-n+2){text-align:left}\
figure{margin:1.5em 0}";

pub fn render(report: &Report) -> String {
    page(report, None)
}

/// The page `polytune serve` answers at `/`: the report, reloaded by the
/// browser every `refresh_s` seconds (a campaign may be running), with a
/// link per kernel and machine to its tuned file (`export/KERNEL`, relative,
/// so that a proxy may mount the server anywhere).
pub fn render_served(report: &Report, refresh_s: u32) -> String {
    page(report, Some(refresh_s))
}

fn page(report: &Report, served: Option<u32>) -> String {
    let refresh =
        served.map(|s| format!("<meta http-equiv=\"refresh\" content=\"{s}\">\n")).unwrap_or_default();
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{refresh}\
         <title>polytune report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>polytune report</h1>\n\
         <p>Speedups are over each campaign's own original program (same machine); ± is the spread of \
         the samples, (max − min) / median; \"n.s.\" marks a lead over the runner-up or the original \
         that is not significant (Welch's t-test on the runs' log times, one-sided, 5%; the spreads where \
         a side has one run). \"Evaluations to within 5%\": variants measured until one was \
         within {:.0}% of the final best's time.</p>\n",
        NEAR_BEST * 100.0
    );
    if report.rows.is_empty() {
        out.push_str("<p>No measurements match.</p>\n</body>\n</html>\n");
        return out;
    }
    for m in &report.machines {
        out.push_str(&format!("<h2>Machine <code>{}</code></h2>\n", escape(m)));
        table(&mut out, &machine_table(report, m), m);
        if served.is_some() {
            exports(&mut out, report, m);
        }
        for r in report.rows.iter().filter(|r| r.machine == *m) {
            if let Some(text) = r.best.as_ref().and_then(|w| w.explanation.as_ref()) {
                out.push_str(&format!(
                    "<details data-explanation=\"{}\"><summary>{} {} (campaign {}): the winner as loop transformations of the original</summary>\n<pre>{}</pre>\n</details>\n",
                    escape(&r.kernel),
                    escape(&r.kernel),
                    escape(&r.dataset),
                    r.campaign,
                    escape(text)
                ));
            }
        }
    }
    out.push_str("<h2>Across machines: best speedup</h2>\n");
    table(&mut out, &across_machines(report), "across");
    out.push_str("<h2>Plots</h2>\n");
    figure(&mut out, "speedup-per-kernel", &plots::speedup_per_kernel(report));
    for m in &report.machines {
        figure(&mut out, &format!("progress-evaluations-{m}"), &plots::progress(report, m, false));
        figure(&mut out, &format!("progress-time-{m}"), &plots::progress(report, m, true));
    }
    for (knob, svg) in plots::knob_effects(report) {
        figure(&mut out, &format!("knob-{knob}"), &svg);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Links to the tuned file of each kernel with a winner on machine `m`.
fn exports(out: &mut String, report: &Report, m: &str) {
    let mut kernels: Vec<&str> = report
        .rows
        .iter()
        .filter(|r| r.machine == m && r.best.is_some())
        .map(|r| r.kernel.as_str())
        .collect();
    kernels.dedup();
    if kernels.is_empty() {
        return;
    }
    out.push_str(&format!("<p data-exports=\"{}\">Tuned code (verified when asked for):", escape(m)));
    for k in kernels {
        let href = format!("export/{}?machine={}", percent(k), percent(m));
        out.push_str(&format!(" <a href=\"{}\">{}</a>", escape(&href), escape(k)));
    }
    out.push_str("</p>\n");
}

/// `s` as a URL path segment or query value: unreserved characters kept,
/// every other byte percent-encoded.
fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn table(out: &mut String, t: &Table, id: &str) {
    out.push_str(&format!("<table data-table=\"{}\">\n<tr>", escape(id)));
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            out.push_str(&format!("<td>{}</td>", escape(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn figure(out: &mut String, id: &str, svg: &str) {
    // plotters starts its SVG with an XML declaration, which is not allowed inside HTML.
    let svg = svg.find("<svg").map_or(svg, |i| &svg[i..]);
    out.push_str(&format!("<figure data-plot=\"{}\">\n{svg}\n</figure>\n", escape(id)));
}
