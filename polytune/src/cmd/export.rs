//! `polytune export KERNEL|FILE`: the user's file with the tuned region in
//! place (`tuner::export`), written only once it is verified.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use tuner::export::{Machines, Request};

use super::common::{Dataset, StoreArg};

#[derive(clap::Args)]
pub struct Args {
    /// The kernel (the C file's stem, as `best` takes it) or the C file that was tuned.
    kernel: String,
    /// Where to write the file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// A machine whose winner goes into the file, by name (repeatable: one
    /// variant per machine, chosen at build or run time). Default: the best of all.
    #[arg(long = "machine", value_name = "NAME", conflicts_with = "all_machines")]
    machines: Vec<String>,
    /// Every machine of the store with a verified winner.
    #[arg(long)]
    all_machines: bool,
    /// Only winners measured on this dataset.
    #[arg(long, value_parser = crate::choice::choice::<Dataset>())]
    dataset: Option<Dataset>,
    /// The machine profile (of this machine) whose compiler and cores verify the export.
    #[arg(long, default_value = "default")]
    profile: String,
    #[command(flatten)]
    store: StoreArg,
}

pub fn run(args: Args) -> Result<()> {
    let db = args.store.open()?;
    let machines = match (args.all_machines, args.machines.is_empty()) {
        (true, _) => Machines::All,
        (false, true) => Machines::Best,
        (false, false) => Machines::Named(args.machines.clone()),
    };
    let request =
        Request { kernel: args.kernel.clone(), machines, dataset: args.dataset, profile: args.profile };
    let export = tuner::export::export(&db, &request)?;
    match (&args.output, &export.cuda) {
        (Some(path), cuda) => {
            // The unit first: the file that calls it is the last thing written.
            if let Some(unit) = cuda {
                let cu = path.with_extension("cu");
                write_whole(&cu, unit)?;
                eprintln!("wrote {} (the CUDA unit the file calls)", cu.display());
            }
            write_whole(path, &export.text)?;
            eprintln!("wrote {} (from {})", path.display(), export.file.display());
        }
        (None, Some(_)) => bail!(
            "kernel {}: the winner is a GPU variant, exported as two files (the C file and its CUDA unit): give -o",
            args.kernel
        ),
        (None, None) => print!("{}", export.text),
    }
    for b in &export.branches {
        eprintln!("  variant {b}");
    }
    for m in &export.unchanged {
        eprintln!("  machine {m}: no winner faster than the original: the code as written runs there");
    }
    for v in &export.verified {
        eprintln!("  verified: {v}");
    }
    eprintln!("  compile:  {}", export.compile);
    Ok(())
}

/// `text` written to `path` whole or not at all.
fn write_whole(path: &std::path::Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", executor::process::unique_suffix()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("{}: cannot write", path.display()))
}
