//! `polytune explain`: a schedule as Clay loop transformations of the original program
//! (`space::clay`), then what code generation does with its loops (tiles, threads,
//! vectors), as one script `polytune apply` replays (`executor::explain`).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use executor::explain::Explained;
use serde::Serialize;
use space::clay::{CodeStep, Step};
use vocab::knobs::{CodeOptions, Point, Scheduler};

use super::common::StoreArg;
use super::common::{self, Dataset};

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

#[derive(Serialize)]
struct Explanation {
    file: PathBuf,
    dataset: String,
    point: Option<String>,
    steps: Vec<Step>,
    code: Vec<CodeStep>,
    script: String,
    codegen: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let (file, dataset, tree, point, title) = source(&args)?;
    if let Some(Point { scheduler: Scheduler::Peer { name }, .. }) = &point {
        if args.json {
            let e = serde_json::json!({ "file": file, "dataset": dataset, "peer": name });
            println!("{}", serde_json::to_string_pretty(&e)?);
            return Ok(());
        }
        println!("{title}: the peer {name}, the program as written built by another compiler; no schedule of ours to explain.");
        return Ok(());
    }
    // A stored kernel is read as its campaign built it; `--cc-arg` replaces that.
    let (build, scop) = match (&args.kernel, &args.schedule) {
        (Some(kernel), None) => stored_build(&args.store.open()?, kernel),
        _ => Default::default(),
    };
    let build = match args.cc_args.is_empty() {
        true => build,
        false => common::ProgramConfig { cc_args: args.cc_args.clone(), ..build },
    };
    let e = script_of(&file, &dataset, (&build, scop), &tree, point.as_ref())?;
    let codegen = point.as_ref().and_then(codegen_words);
    if args.json {
        let point = point.map(|p| p.to_string());
        let (steps, code, script) = (e.steps, e.code, e.script);
        let e = Explanation { file, dataset, point, steps, code, script, codegen };
        println!("{}", serde_json::to_string_pretty(&e)?);
        return Ok(());
    }
    println!("{title}");
    if e.steps.is_empty() && e.code.is_empty() {
        println!("The loops and statement order of the original program, unchanged.");
    } else {
        println!(
            "From the original program, {} Clay transformation(s) and {} code-generation step(s) (β-prefixes name loops; replay with `polytune apply`):",
            e.steps.len(),
            e.code.len()
        );
        for line in e.script.lines() {
            println!("  {line}");
        }
    }
    if let Some(c) = codegen {
        println!("Run with {c}.");
    }
    Ok(())
}

/// The steps from `file`'s original program to the schedule `tree`, then those of code
/// generation under `point`'s options (none without a point), and their text.
pub fn script_of(
    file: &std::path::Path,
    dataset: &str,
    (build, scop): (&common::ProgramConfig, usize),
    tree: &str,
    point: Option<&Point>,
) -> Result<Explained> {
    let d: Dataset = dataset.parse()?;
    let program = common::load(file, d, build, scop).with_context(|| {
        format!("reading {} to explain its schedule (pass --file or --cc-arg)", file.display())
    })?;
    let opts = point.map(executor::pipeline::codegen_options).unwrap_or_default();
    Ok(executor::explain::explain(&program.source, &program.scop, &program.deps, tree, &opts)?)
}

/// How the store's campaigns built kernel `name` and which SCoP of its file
/// it is (the first, as written, where no campaign says).
pub fn stored_build(store: &store::Store, name: &str) -> (common::ProgramConfig, usize) {
    crate::campaign::stored_kernel(store, name).map_or_else(Default::default, |k| (k.build, k.scop))
}

/// A stored point's JSON as a point, if it still reads as one.
pub fn point_of(json: &str) -> Option<Point> {
    serde_json::from_str(json).ok()
}

/// The C file, dataset, schedule tree, point and a title line for what `args` asks for.
fn source(args: &Args) -> Result<(PathBuf, String, String, Option<Point>, String)> {
    if let Some(path) = &args.schedule {
        let Some(file) = args.file.clone() else { bail!("--schedule needs --file: the C file it schedules") };
        let tree =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let dataset = args.dataset.unwrap_or(Dataset::Large).name().to_string();
        let title = format!("{}: the schedule in {}", file.display(), path.display());
        return Ok((file, dataset, tree, None, title));
    }
    let Some(kernel) = &args.kernel else {
        bail!("name a kernel (its best schedule in the store), or give --schedule and --file")
    };
    let store = args.store.open()?;
    let (program_path, dataset, point_json, tree, title) = match &args.point {
        Some(id) => {
            let Some(m) = store.measured_schedule(kernel, id)? else {
                return Err(tuner::Error::NoResult(format!(
                    "no schedule of point {id} for kernel `{kernel}` in the store (`polytune history {kernel}` lists points)"
                ))
                .into());
            };
            let title = format!("{kernel} [{}]: point {id}", m.dataset);
            (m.program_path, m.dataset, m.point_json, m.tree, title)
        }
        None => {
            let Some(b) = store.best(kernel, args.machine.as_deref(), args.dataset.map(|d| d.name()))? else {
                return Err(tuner::Error::NoResult(format!(
                    "no correct measurement of kernel `{kernel}` in the store"
                ))
                .into());
            };
            let title =
                format!("{kernel} [{}] on {}: {:.2}x over the original", b.dataset, b.machine, b.speedup);
            // A peer won: the program as written, nothing of ours to explain.
            let peer = point_of(&b.point_json).filter(|p| matches!(p.scheduler, Scheduler::Peer { .. }));
            let tree = match (b.schedule.clone(), peer) {
                (_, Some(p)) => return Ok((b.program_path.into(), b.dataset, String::new(), Some(p), title)),
                (Some(tree), None) => tree,
                (None, None) => bail!("the best variant of `{kernel}` has no recorded schedule"),
            };
            (b.program_path, b.dataset, b.point_json, tree, title)
        }
    };
    let point = point_of(&point_json);
    let title = match &point {
        Some(p) => format!("{title} with {p}"),
        None => title,
    };
    let file = args.file.clone().unwrap_or_else(|| PathBuf::from(program_path));
    Ok((file, dataset, tree, point, title))
}

/// What the script cannot say of the point: threads and the knobs that act on the whole
/// region, as `run`'s options.
fn codegen_words(p: &Point) -> Option<String> {
    let mut parts = Vec::new();
    if p.threads > 1 {
        parts.push(format!("--threads {}", p.threads));
    }
    // simd and unroll_jam are code steps of the script; these are not.
    const REGION_WIDE: &[&str] = &[
        "restrict",
        "omp_schedule",
        "parallel_min",
        "vector_width",
        "mtune",
        "transpose",
        "gpu_block",
        "gpu_thread_tile",
        "gpu_min_blocks",
        "gpu_mma",
        "gpu_shared",
        "gpu_unroll",
    ];
    for (set, default) in p.code.settings().into_iter().zip(CodeOptions::default().settings()) {
        if set != default && REGION_WIDE.iter().any(|k| set.split('=').next() == Some(*k)) {
            parts.push(format!("--set {set}"));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}
