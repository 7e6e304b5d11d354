//! `polytune space FILE`: the fusion space (POPL'11) of a SCoP
//! (`tuner::inspect::space`).

use std::path::PathBuf;

use anyhow::Result;
use tuner::inspect::space::Request;

use super::common::Dataset;

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// Also build level 2 under the outer preorder (`--outer`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    level: u8,
    /// The outer preorder for level 2, e.g. `(S1 S2)(S3)`; default: the
    /// program's own loop nests.
    #[arg(long)]
    outer: Option<String>,
    /// Require the statements of a group to interleave, first instances at
    /// most this far apart (the paper's criterion) instead of the
    /// scheduler's shared loop (parametric shifts allowed).
    #[arg(long, value_name = "OFFSET")]
    interleaved: Option<i64>,
    /// How many preorders to list (and check with the scheduler) per level;
    /// 0 lists all.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// List without asking the scheduler.
    #[arg(long)]
    no_check: bool,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
    /// PolyBench dataset size (passed as -D<SIZE>_DATASET): it matters where sizes are
    /// macros rather than parameters.
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// An argument for the C preprocessor (`-I...`, `-D...`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    /// The SCoPs are the regions found without pragmas (see `scop --autodetect`).
    #[arg(long)]
    autodetect: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let request = Request {
        file: args.file,
        level: args.level,
        outer: args.outer,
        interleaved: args.interleaved,
        limit: args.limit,
        no_check: args.no_check,
        scop: args.scop,
        dataset: args.dataset,
        cc_args: args.cc_args,
        autodetect: args.autodetect,
    };
    let report = tuner::inspect::space::run(&request)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
