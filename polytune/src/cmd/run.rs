//! `polytune run FILE --schedule ...`: one variant, built, timed and verified
//! against the original program (`tuner::single`).

use std::path::PathBuf;

use anyhow::Result;
use executor::verify::Tolerance;
use tuner::single::Request;

use super::common::{self, Dataset};

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// `original` (the identity schedule through isl's code generator), `isl`
    /// (isl's scheduler, default options), `unified` (our scheduler, original
    /// fusion) or a file holding an isl schedule tree.
    #[arg(long, default_value = "original")]
    schedule: String,
    /// A script of Clay transformations (as `polytune explain` prints them), replayed on
    /// the original program and checked legal, instead of `--schedule` (`polytune apply
    /// FILE --script S` is the same command). Its code steps (tile, point-order,
    /// tile-order, wavefront, unroll-jam, micro-tile, fission, parallelize, vectorize),
    /// if any, replace --tile and the simd, unroll_jam, micro_tile and fission knobs.
    #[arg(long, value_name = "FILE", conflicts_with = "schedule")]
    script: Option<PathBuf>,
    /// PolyBench dataset size (passed as -D<SIZE>_DATASET).
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Tile size for permutable bands, or a shape such as 32x32x256
    /// (outermost first, the last size repeating); 0 disables tiling.
    /// Default: 32, except for `original` and scripts, which are not tiled.
    #[arg(long, value_parser = crate::campaign::grid::parse_tile)]
    tile: Option<crate::campaign::grid::Tiles>,
    /// OpenMP threads (default: every core of the measurement slot).
    #[arg(long, value_parser = common::at_least_one)]
    threads: Option<usize>,
    /// A knob, `KNOB=VALUE`; repeatable. The unified scheduler's (with
    /// `--schedule unified`): target, hlim, spatial, posttile_reorder,
    /// consecutivity, wavefront, line_bytes; code generation's (any
    /// schedule): restrict, simd, unroll_jam, omp_schedule.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    set: Vec<String>,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
    /// Relative tolerance when comparing outputs with the original's.
    #[arg(long, default_value_t = Tolerance::default().relative)]
    tolerance: f64,
    /// Timed runs (after one warm-up).
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Machine profile: a name in configs/machines or a path to a .toml file.
    #[arg(long, default_value = "default")]
    machine: String,
    /// Where the generated sources are kept.
    #[arg(long, default_value = "polytune-out")]
    out: PathBuf,
    #[command(flatten)]
    build: common::BuildArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// What to do when the measurement slot's cores are busy with other
    /// processes just before measuring: warn (and record the load with the
    /// measurement), wait for quiet, or fail.
    #[arg(long, value_parser = crate::choice::choice::<crate::noise::OnNoise>(), default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    #[command(flatten)]
    timeout: common::TimeoutArg,
    #[command(flatten)]
    replay: common::ReplayArgs,
}

pub fn run(args: Args) -> Result<()> {
    let request = Request {
        file: args.file,
        schedule: args.schedule,
        script: args.script,
        dataset: args.dataset,
        tile: args.tile,
        threads: args.threads,
        set: args.set,
        scop: args.scop,
        tolerance: args.tolerance,
        runs: args.runs,
        machine: args.machine,
        out: args.out,
        build: args.build.options(),
        on_noise: args.on_noise,
        timeout_s: args.timeout.seconds,
        capture: args.replay.invocation(),
    };
    let report = tuner::single::run(&request)?;
    for hint in &report.warnings {
        eprintln!("warning: {hint}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
