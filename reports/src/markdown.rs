//! The report as Markdown: a table per machine, then kernel × machine.

use crate::model::{Report, NEAR_BEST};
use crate::text::{across_machines, machine_table, Table};

pub fn render(report: &Report) -> String {
    let mut out = String::from("# polytune report\n\n");
    out.push_str(&format!(
        "Speedups are over each campaign's own original program (same binary run, same machine); \
         ± is the spread of the samples, (max − min) / median; \"n.s.\" marks a lead over the runner-up \
         or the original that is not significant (Welch's t-test on the runs' log times, one-sided, 5%; \
         the spreads where a side has one run). Reference columns: {}. \
         \"Evaluations to within 5%\": variants measured until one was within {:.0}% of the final best's time.\n",
        if report.labels.is_empty() { "none".to_string() } else { report.labels.join(", ") },
        NEAR_BEST * 100.0
    ));
    if report.rows.is_empty() {
        out.push_str("\nNo measurements match.\n");
        return out;
    }
    for m in &report.machines {
        out.push_str(&format!("\n## Machine `{m}`\n\n"));
        table(&mut out, &machine_table(report, m));
    }
    out.push_str("\n## Across machines: best speedup\n\n");
    table(&mut out, &across_machines(report));
    let explained: Vec<_> =
        report.rows.iter().filter_map(|r| Some((r, r.best.as_ref()?.explanation.as_ref()?))).collect();
    if !explained.is_empty() {
        out.push_str("\n## The winners as loop transformations of the original\n");
        for (r, text) in explained {
            out.push_str(&format!(
                "\n`{}` {} on `{}` (campaign {}):\n\n```\n{}```\n",
                r.kernel, r.dataset, r.machine, r.campaign, text
            ));
        }
    }
    out
}

fn table(out: &mut String, t: &Table) {
    let row = |cells: &[String]| {
        format!("| {} |\n", cells.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | "))
    };
    out.push_str(&row(&t.header));
    out.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
    for r in &t.rows {
        out.push_str(&row(r));
    }
}

/// A pipe would end the cell.
fn escape(c: &str) -> String {
    c.replace('|', "\\|")
}
