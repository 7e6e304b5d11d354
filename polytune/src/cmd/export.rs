//! `polytune export KERNEL|FILE`: the user's file with the tuned region in
//! place (`tuner::export`), written only once it is verified.

use std::path::PathBuf;

use anyhow::{bail, Result};
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
        (Some(path), _) => export.write(path, &mut |line| eprintln!("{line}"))?,
        (None, Some(_)) => bail!(
            "kernel {}: the winner is a GPU variant, exported as two files (the C file and its CUDA unit): give -o",
            args.kernel
        ),
        (None, None) => print!("{}", export.text),
    }
    eprint!("{}", export.notes());
    Ok(())
}
