//! `polytune variant FILE --dataset D --point JSON` (hidden): one point's
//! schedule and program, printed as one JSON object. Campaigns run it as a
//! child process, so that a scheduler or code generator that loops or aborts
//! costs one point (killed after a timeout, recorded as a status), never the
//! campaign — and so that two points schedule in parallel, which CBC's
//! process-wide lock forbids inside one process.

use std::path::PathBuf;

use anyhow::{Context, Result};
use executor::measure::Status;
use executor::pipeline::{self, Answer, Failure};
use std::time::Instant;

use crate::campaign::Reply;
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
        println!("{}", serde_json::to_string(&Reply { answer, schedule_s: 0.0, codegen_s: 0.0 })?);
        return Ok(());
    }
    let p = common::load(&args.file, args.dataset, &args.cc_args, 0)?;
    let started = Instant::now();
    let tree = pipeline::schedule_of(&p.scop, &p.deps, &point);
    let schedule_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let answer = tree.and_then(|tree| {
        let v = pipeline::generate_variant(
            &p.source,
            &p.scop,
            &p.deps,
            &pipeline::codegen_options(&point),
            &tree,
        )?;
        Ok((tree, v.program, v.cuda))
    });
    let codegen_s = started.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string(&Reply { answer, schedule_s, codegen_s })?);
    Ok(())
}
