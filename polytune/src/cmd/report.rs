//! `polytune report`: the store's measurements as tables and plots (the `reports` crate).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use reports::Format;
use store::ReportFilter;

use super::common::StoreArg;

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
    let report = tuner::explain::report(
        &store,
        &ReportFilter { machines: args.machines, kernels: args.kernels },
        None,
    )?;
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
