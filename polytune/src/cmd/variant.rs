//! `polytune variant FILE --dataset D --point JSON` (hidden): one point's
//! schedule and program, printed as one JSON object: the child's side of
//! [`tuner::campaign::child`], which campaigns run for every point.

use std::path::PathBuf;

use anyhow::{Context, Result};
use vocab::knobs::Point;

use super::common::Dataset;
use crate::campaign::child::{self, Request};

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>())]
    dataset: Dataset,
    /// The point's canonical JSON.
    #[arg(long)]
    point: String,
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
    /// The SCoPs are the regions found without pragmas.
    #[arg(long)]
    autodetect: bool,
    /// The program already extracted and analysed, as the campaign wrote
    /// it ([`crate::program::Program`] as JSON): read instead of the file.
    #[arg(long)]
    program: Option<PathBuf>,
    /// The program replays its region from this capture (`crate::capture`).
    #[arg(long)]
    replay_from: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let point: Point = serde_json::from_str(&args.point).context("--point is not a point's JSON")?;
    let request = Request {
        file: args.file,
        dataset: args.dataset,
        point,
        cc_args: args.cc_args,
        scop: args.scop,
        autodetect: args.autodetect,
        program: args.program,
        replay_from: args.replay_from,
    };
    println!("{}", serde_json::to_string(&child::reply(&request)?)?);
    Ok(())
}
