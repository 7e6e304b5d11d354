//! `polytune report`: the store's measurements as tables and plots (the `reports` crate).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use reports::Format;
use store::ReportFilter;

use super::common::StoreArg;
use crate::campaign::grid::reference_label;

#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Md,
    Csv,
    Html,
}

#[derive(clap::Args)]
pub struct Args {
    /// Only this machine profile (repeatable; default: every machine).
    #[arg(long = "machine", value_name = "MACHINE")]
    machines: Vec<String>,
    /// Only this kernel (repeatable; default: every kernel).
    #[arg(long = "kernel", value_name = "KERNEL")]
    kernels: Vec<String>,
    /// Markdown tables, CSV (one line per machine, kernel, dataset and campaign), or one
    /// self-contained HTML file with the tables and SVG plots.
    #[arg(long, value_enum, default_value = "md")]
    format: FormatArg,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

pub fn run(args: Args) -> Result<()> {
    let store = args.store.open()?;
    let report = collect(&store, &ReportFilter { machines: args.machines, kernels: args.kernels }, None)?;
    let format = match args.format {
        FormatArg::Md => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Html => Format::Html,
    };
    let text = format.render(&report);
    match &args.output {
        // Written beside and renamed: a reader never sees half a report.
        Some(path) => {
            let tmp = path.with_extension("partial");
            std::fs::write(&tmp, &text).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("report: {} rows written to {}", report.rows.len(), path.display());
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}

/// Explanations already made, by kernel and point (a page made again and
/// again explains each winner once).
pub type Explained = std::sync::Mutex<std::collections::HashMap<(String, String), Option<String>>>;

/// The report of what `filter` selects, each winner explained (as `report`
/// and `serve`'s page show it), through `cache` where one is given.
pub fn collect(
    store: &store::Store,
    filter: &ReportFilter,
    cache: Option<&Explained>,
) -> Result<reports::Report> {
    let rows = store.report_rows(filter)?;
    let mut report = reports::collect(&rows, &reference_label);
    let cached = |key: &(String, String)| {
        cache.and_then(|c| c.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned())
    };
    // Each winner explained from the schedule recorded for its point; a program that moved
    // or no longer reads costs the explanation only.
    report.explain_winners(|row, w| {
        let key = (row.kernel.clone(), w.point_id.clone());
        if let Some(text) = cached(&key) {
            return text;
        }
        let text = explain(store, row, w);
        if let Some(c) = cache {
            c.lock().unwrap_or_else(|e| e.into_inner()).insert(key, text.clone());
        }
        text
    });
    Ok(report)
}

/// Winner `w` of `row` as loop transformations of the original.
fn explain(store: &store::Store, row: &reports::model::Row, w: &reports::model::Winner) -> Option<String> {
    let m = store.measured_schedule(&row.kernel, &w.point_id).ok()??;
    let point = super::explain::point_of(&m.point_json);
    let file = std::path::Path::new(&m.program_path);
    let (build, scop) = super::explain::stored_build(store, &row.kernel);
    let e = super::explain::script_of(file, &m.dataset, (&build, scop), &m.tree, point.as_ref()).ok()?;
    Some(if e.script.is_empty() { "(the original loops, unchanged)\n".to_string() } else { e.script })
}
