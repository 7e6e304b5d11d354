//! `polytune schedule FILE`: our scheduler's schedule tree, its bands and the
//! legality verdict (`tuner::inspect::schedule`).

use std::path::PathBuf;

use anyhow::Result;
use space::schedule::{Backend, Fusion};
use tuner::inspect::schedule::Request;

use super::common;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FusionArg {
    /// Statements share outer loops as in the original program.
    Original,
    /// Adjacent loop nests fused wherever a shared outer loop stays legal.
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    Cbc,
    Isl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetArg {
    Seq,
    Openmp,
    Gpu,
}

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    #[arg(long, value_enum, default_value_t = FusionArg::Original)]
    fusion: FusionArg,
    /// The ILP backend: CBC (successive ILPs) or isl's exact lexmin.
    #[arg(long, value_enum, default_value_t = BackendArg::Cbc)]
    backend: BackendArg,
    /// Schedule with the unified scheduler for this target (RR-9110 §4.7
    /// CPU, §4.8 GPU). Without `--target` and `--set`: the core scheduler.
    #[arg(long, value_enum)]
    target: Option<TargetArg>,
    /// A knob of the unified scheduler, `KNOB=VALUE`; repeatable. Knobs:
    /// target, hlim, spatial, posttile_reorder, consecutivity, wavefront, line_bytes.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    scop: common::ScopArgs,
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

/// The scheduler's options the arguments name.
fn options(fusion: FusionArg, backend: BackendArg) -> (Fusion, Backend) {
    let fusion = match fusion {
        FusionArg::Original => Fusion::Original,
        FusionArg::Max => Fusion::Max,
    };
    let backend = match backend {
        BackendArg::Cbc => Backend::Cbc,
        BackendArg::Isl => Backend::Isl,
    };
    (fusion, backend)
}

pub fn run(args: Args) -> Result<()> {
    let (fusion, backend) = options(args.fusion, args.backend);
    let target = args.target.map(|t| format!("target={}", format!("{t:?}").to_lowercase()));
    let request = Request {
        file: args.file,
        fusion,
        backend,
        scop: args.scop.scop,
        settings: target.into_iter().chain(args.set).collect(),
        dataset: args.scop.dataset,
        cc_args: args.scop.cc_args,
        autodetect: args.scop.autodetect,
        timeout_s: args.timeout.seconds,
    };
    let report = tuner::inspect::schedule::run(&request)?;
    if args.scop.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
