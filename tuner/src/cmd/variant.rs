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
use model::deps::Dependences;
use model::scop::Scop;
use sha2::{Digest, Sha256};
use std::time::Instant;

use crate::campaign::{Reply, SCHEDULES};
use vocab::knobs::{Point, Scheduler};

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
    if let (Scheduler::Peer { name }, Some(_)) = (&point.scheduler, &args.replay_from) {
        let reason =
            format!("the peer {name} builds the whole program, and this campaign replays its region");
        let answer: Answer = Err(Failure { status: Status::ScheduleError, reason });
        println!("{}", serde_json::to_string(&Reply { answer, schedule_s: 0.0, codegen_s: 0.0 })?);
        return Ok(());
    }
    if let Scheduler::Peer { name } = &point.scheduler {
        // The program as written, preprocessed by the peer's compiler; no schedule.
        let cpp = crate::program::cpp_args(args.dataset, &args.cc_args);
        let answer: Answer = executor::peers::find(name, point.threads)
            .and_then(|peer| executor::peers::program(&peer, &args.file, &cpp, args.scop, args.autodetect))
            .map(|program| (String::new(), program, None))
            .map_err(|reason| Failure { status: Status::ScheduleError, reason });
        println!("{}", serde_json::to_string(&Reply { answer, schedule_s: 0.0, codegen_s: 0.0 })?);
        return Ok(());
    }
    let p = match &args.program {
        Some(path) => crate::program::read(path)?,
        None => {
            let build = common::ProgramConfig::preprocessed(&args.cc_args, args.autodetect);
            common::load(&args.file, args.dataset, &build, args.scop)?
        }
    };
    // The point's model once, for its schedule and its code.
    let started = Instant::now();
    let model = pipeline::model(&p.scop, &p.deps, &point.code, point.on_gpu());
    let tree =
        model.as_ref().map_err(Clone::clone).and_then(|(scop, deps)| shared_schedule(&p, scop, deps, &point));
    let schedule_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let answer = model.and_then(|(scop, deps)| {
        let tree = tree?;
        let opts = pipeline::codegen_options(&point);
        let v = pipeline::generate_modelled(&p.source, &scop, &deps, &opts, &tree)?;
        match &args.replay_from {
            None => Ok((tree, v.program, v.cuda)),
            Some(capture) => {
                let (program, cuda) = replayed(&p, v, capture)?;
                Ok((tree, program, cuda))
            }
        }
    });
    let codegen_s = started.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string(&Reply { answer, schedule_s, codegen_s })?);
    Ok(())
}

/// `v`'s region replayed from `capture`: a CPU variant's code or a GPU
/// variant's emulation, and a GPU variant's CUDA form replaying the call
/// of its host function (built with its unit where a GPU slot runs it).
fn replayed(
    p: &common::Program,
    v: codegen::Variant,
    capture: &std::path::Path,
) -> Result<(String, Option<codegen::Cuda>), Failure> {
    let failed = |reason: String| Failure { status: Status::CodegenError, reason };
    let capture = capture.display().to_string();
    let replay = |region: &codegen::Exported| {
        codegen::replay_program(&p.source, &p.scop, region, &capture)
            .map_err(|e| failed(format!("the replay of the region: {e}")))
    };
    let Some(region) = &v.exported else {
        return Err(failed("code generation gave no form to replay".into()));
    };
    let program = replay(region)?;
    let cuda = match v.cuda {
        Some(c) => {
            let call = codegen::Exported { block: c.region.clone(), ..Default::default() };
            Some(codegen::Cuda { program: replay(&call)?, ..c })
        }
        None => None,
    };
    Ok((program, cuda))
}

/// The schedule of `point`, taken from the campaign's schedule directory
/// ([`SCHEDULES`], made for one invocation) when a point with the same
/// scheduler on the same SCoP (and layout: `transpose`) made it already:
/// points that differ only in tiles, threads or other code knobs share one
/// schedule, and the others the answers of the ILPs they have in common
/// ([`crate::memo`]). Code generation checks a shared tree legal again, as
/// any tree.
/// `scop` and `deps` are the point's model of `p`.
fn shared_schedule(
    p: &common::Program,
    scop: &Scop,
    deps: &Dependences,
    point: &Point,
) -> Result<String, Failure> {
    let Some(dir) = std::env::var_os(SCHEDULES).map(std::path::PathBuf::from) else {
        return pipeline::schedule_modelled(scop, deps, point, None);
    };
    let mut h = Sha256::new();
    let parts = [
        serde_json::to_string(&p.scop),
        serde_json::to_string(&point.scheduler),
        serde_json::to_string(&point.code.transpose),
    ];
    for part in parts {
        let part = part.map_err(|e| Failure { status: Status::ScheduleError, reason: e.to_string() })?;
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let key: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("{key}.yaml"));
    if let Ok(tree) = std::fs::read_to_string(&path) {
        return Ok(tree);
    }
    let tree = pipeline::schedule_modelled(scop, deps, point, Some(&crate::memo::Log::open(&dir)))?;
    // Written whole or not at all: two children may make it at once.
    let tmp = dir.join(format!(".{key}.{}", executor::process::unique_suffix()));
    if std::fs::write(&tmp, &tree).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(tree)
}
