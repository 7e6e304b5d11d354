//! `polytune variant FILE --dataset D --point JSON` (hidden): one point's
//! schedule and program, printed as one JSON object. Campaigns run it as a
//! child process, so that a scheduler or code generator that loops or aborts
//! costs one point (killed after a timeout, recorded as a status), never the
//! campaign — and so that two points schedule in parallel, which CBC's
//! process-wide lock forbids inside one process.

use std::path::PathBuf;

use anyhow::{Context, Result};
use executor::measure::Status;
use executor::pipeline::{Answer, Failure};
use space::knobs::{Point, Scheduler};

use super::common::{self, Dataset};

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[arg(long, value_enum)]
    dataset: Dataset,
    /// The point's canonical JSON.
    #[arg(long)]
    point: String,
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
}

pub fn run(args: Args) -> Result<()> {
    let point: Point = serde_json::from_str(&args.point).context("--point is not a point's JSON")?;
    if let Scheduler::Peer { name } = &point.scheduler {
        // The program as written, preprocessed by the peer's compiler; no schedule.
        let cpp = crate::program::cpp_args(args.dataset, &args.cc_args);
        let answer: Answer = executor::peers::find(name, point.threads)
            .and_then(|peer| executor::peers::program(&peer, &args.file, &cpp, 0))
            .map(|program| (String::new(), program, None))
            .map_err(|reason| Failure { status: Status::ScheduleError, reason });
        println!("{}", serde_json::to_string(&answer)?);
        return Ok(());
    }
    let program = common::load(&args.file, args.dataset, &args.cc_args, 0)?;
    let answer = executor::pipeline::variant(&program.source, &program.scop, &program.deps, &point);
    println!("{}", serde_json::to_string(&answer)?);
    Ok(())
}
