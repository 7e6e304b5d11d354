//! `polytune space FILE`: the fusion space (POPL'11) of a SCoP
//! (`tuner::inspect::space`).

use std::path::PathBuf;

use anyhow::Result;
use tuner::inspect::space::Request;

use super::common;

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
    #[command(flatten)]
    scop: common::ScopArgs,
}

pub fn run(args: Args) -> Result<()> {
    let request = Request {
        file: args.file,
        level: args.level,
        outer: args.outer,
        interleaved: args.interleaved,
        limit: args.limit,
        no_check: args.no_check,
        scop: args.scop.scop,
        dataset: args.scop.dataset,
        cc_args: args.scop.cc_args,
        autodetect: args.scop.autodetect,
    };
    let report = tuner::inspect::space::run(&request)?;
    if args.scop.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
