//! `polytune scop FILE`: what polytune sees in a C file (`tuner::inspect::scop`).

use std::path::PathBuf;

use anyhow::Result;
use tuner::inspect::scop::Request;

use super::common;

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// Find the regions instead (no pragmas needed): in every function, the
    /// longest runs of statements with a loop that the model accepts; the
    /// outermost loops it refuses are listed with the reason.
    #[arg(long)]
    autodetect: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// An argument for the C preprocessor (`-I...`, `-DMINI_DATASET`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

pub fn run(args: Args) -> Result<()> {
    let request = Request {
        file: args.file,
        autodetect: args.autodetect,
        cc_args: args.cc_args,
        timeout_s: args.timeout.seconds,
    };
    let report = tuner::inspect::scop::run(&request)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.scops)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
