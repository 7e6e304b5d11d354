//! `polytune explain`: a schedule as Clay loop transformations of the original program,
//! then code generation's steps, as one script `polytune apply` replays (`tuner::explain`).

use std::path::PathBuf;

use anyhow::Result;
use tuner::explain::Request;

use super::common::{Dataset, StoreArg};

#[derive(clap::Args)]
pub struct Args {
    /// Kernel name: explain its best variant in the store (or `--point`'s). Leave it out to
    /// explain a schedule file (`--schedule`, with `--file`).
    kernel: Option<String>,
    /// Explain this point (its id, as `history` prints it) instead of the best.
    #[arg(long)]
    point: Option<String>,
    /// A file holding an isl schedule tree to explain instead of a stored one.
    #[arg(long)]
    schedule: Option<PathBuf>,
    /// The C file (default: the path the store recorded for the kernel).
    #[arg(long)]
    file: Option<PathBuf>,
    /// Only measurements on this machine profile (for the best).
    #[arg(long)]
    machine: Option<String>,
    /// Only this dataset (for the best; default for a schedule file: LARGE).
    #[arg(long, value_parser = crate::choice::choice::<Dataset>())]
    dataset: Option<Dataset>,
    /// Preprocessor arguments for reading the C file (`-I`, `-D`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let request = Request {
        kernel: args.kernel,
        point: args.point,
        schedule: args.schedule,
        file: args.file,
        machine: args.machine,
        dataset: args.dataset,
        cc_args: args.cc_args,
        db: args.store.db,
    };
    let e = tuner::explain::explain(&request)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&e.json())?);
    } else {
        print!("{}", e.text());
    }
    Ok(())
}
