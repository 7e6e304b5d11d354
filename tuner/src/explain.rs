//! A schedule as Clay loop transformations of the original program
//! (`space::clay`), then what code generation does with its loops (tiles,
//! threads, vectors), as one script `polytune apply` replays
//! (`executor::explain`): of a kernel's best in the store, of a stored
//! point, of a schedule file; and each winner of a report explained.

use std::fmt::Write;
use std::path::PathBuf;

use executor::explain::Explained;
use serde::Serialize;
use space::clay::{CodeStep, Step};
use store::{ReportFilter, Store};
use vocab::knobs::{CodeOptions, Point, Scheduler};

use crate::error::{Context, Error, Result};
use crate::program::{Dataset, ProgramConfig};

pub struct Request {
    /// The kernel whose best (or `point`) is explained; none: `schedule`'s file.
    pub kernel: Option<String>,
    /// A stored point's id, instead of the best.
    pub point: Option<String>,
    /// A file holding an isl schedule tree, instead of a stored one.
    pub schedule: Option<PathBuf>,
    /// The C file (default: the path the store recorded).
    pub file: Option<PathBuf>,
    /// The best on this machine only.
    pub machine: Option<String>,
    pub dataset: Option<Dataset>,
    /// Preprocessor arguments replacing those the campaign read the file with.
    pub cc_args: Vec<String>,
    /// The store (default: the user's data directory).
    pub db: Option<String>,
}

/// What `polytune explain` says.
pub enum Explanation {
    /// A peer's build won: nothing of ours to explain.
    Peer {
        file: PathBuf,
        dataset: String,
        name: String,
        title: String,
    },
    Script(Scripted),
}

/// A schedule's script, and what it cannot say of its point.
#[derive(Serialize)]
pub struct Scripted {
    pub file: PathBuf,
    pub dataset: String,
    pub point: Option<String>,
    pub steps: Vec<Step>,
    pub code: Vec<CodeStep>,
    pub script: String,
    pub codegen: Option<String>,
    #[serde(skip)]
    pub title: String,
}

/// The explanation `request` asks for.
pub fn explain(request: &Request) -> Result<Explanation> {
    let (file, dataset, tree, point, title) = source(request)?;
    if let Some(Point { scheduler: Scheduler::Peer { name }, .. }) = &point {
        return Ok(Explanation::Peer { file, dataset, name: name.clone(), title });
    }
    // A stored kernel is read as its campaign built it; `cc_args` replaces that.
    let (build, scop) = match (&request.kernel, &request.schedule) {
        (Some(kernel), None) => stored_build(&crate::stored::open_existing(request.db.as_deref())?, kernel),
        _ => Default::default(),
    };
    let build = match request.cc_args.is_empty() {
        true => build,
        false => ProgramConfig { cc_args: request.cc_args.clone(), ..build },
    };
    let e = script_of(&file, &dataset, (&build, scop), &tree, point.as_ref())?;
    let codegen = point.as_ref().and_then(codegen_words);
    let point = point.map(|p| p.to_string());
    let (steps, code, script) = (e.steps, e.code, e.script);
    Ok(Explanation::Script(Scripted { file, dataset, point, steps, code, script, codegen, title }))
}

impl Explanation {
    /// As JSON.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Explanation::Peer { file, dataset, name, .. } => {
                serde_json::json!({ "file": file, "dataset": dataset, "peer": name })
            }
            Explanation::Script(s) => serde_json::to_value(s).unwrap_or_default(),
        }
    }

    /// As text: the title, then the script's steps, then the run's options.
    pub fn text(&self) -> String {
        let e = match self {
            Explanation::Peer { name, title, .. } => {
                return format!("{title}: the peer {name}, the program as written built by another compiler; no schedule of ours to explain.\n");
            }
            Explanation::Script(e) => e,
        };
        let mut text = format!("{}\n", e.title);
        if e.steps.is_empty() && e.code.is_empty() {
            text.push_str("The loops and statement order of the original program, unchanged.\n");
        } else {
            let _ = writeln!(
                text,
                "From the original program, {} Clay transformation(s) and {} code-generation step(s) (β-prefixes name loops; replay with `polytune apply`):",
                e.steps.len(),
                e.code.len()
            );
            for line in e.script.lines() {
                let _ = writeln!(text, "  {line}");
            }
        }
        if let Some(c) = &e.codegen {
            let _ = writeln!(text, "Run with {c}.");
        }
        text
    }
}

/// The steps from `file`'s original program to the schedule `tree`, then those of code
/// generation under `point`'s options (none without a point), and their text.
pub fn script_of(
    file: &std::path::Path,
    dataset: &str,
    (build, scop): (&ProgramConfig, usize),
    tree: &str,
    point: Option<&Point>,
) -> Result<Explained> {
    let d: Dataset = dataset.parse()?;
    let program = crate::program::load(file, d, build, scop).with_context(|| {
        format!("reading {} to explain its schedule (pass --file or --cc-arg)", file.display())
    })?;
    let opts = point.map(executor::pipeline::codegen_options).unwrap_or_default();
    Ok(executor::explain::explain(&program.source, &program.scop, &program.deps, tree, &opts)?)
}

/// How the store's campaigns built kernel `name` and which SCoP of its file
/// it is (the first, as written, where no campaign says).
pub fn stored_build(store: &Store, name: &str) -> (ProgramConfig, usize) {
    crate::campaign::stored_kernel(store, name).map_or_else(Default::default, |k| (k.build, k.scop))
}

/// A stored point's JSON as a point, if it still reads as one.
pub fn point_of(json: &str) -> Option<Point> {
    serde_json::from_str(json).ok()
}

/// The C file, dataset, schedule tree, point and a title line for what `args` asks for.
fn source(request: &Request) -> Result<(PathBuf, String, String, Option<Point>, String)> {
    if let Some(path) = &request.schedule {
        let Some(file) = request.file.clone() else {
            return Err(Error::input("--schedule needs --file: the C file it schedules"));
        };
        let tree =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let dataset = request.dataset.unwrap_or(Dataset::Large).name().to_string();
        let title = format!("{}: the schedule in {}", file.display(), path.display());
        return Ok((file, dataset, tree, None, title));
    }
    let Some(kernel) = &request.kernel else {
        return Err(Error::input(
            "name a kernel (its best schedule in the store), or give --schedule and --file",
        ));
    };
    let store = crate::stored::open_existing(request.db.as_deref())?;
    let (program_path, dataset, point_json, tree, title) = match &request.point {
        Some(id) => {
            let Some(m) = store.measured_schedule(kernel, id)? else {
                return Err(Error::NoResult(format!(
                    "no schedule of point {id} for kernel `{kernel}` in the store (`polytune history {kernel}` lists points)"
                )));
            };
            let title = format!("{kernel} [{}]: point {id}", m.dataset);
            (m.program_path, m.dataset, m.point_json, m.tree, title)
        }
        None => {
            let Some(b) =
                store.best(kernel, request.machine.as_deref(), request.dataset.map(|d| d.name()))?
            else {
                return Err(Error::NoResult(format!(
                    "no correct measurement of kernel `{kernel}` in the store"
                )));
            };
            let title =
                format!("{kernel} [{}] on {}: {:.2}x over the original", b.dataset, b.machine, b.speedup);
            // A peer won: the program as written, nothing of ours to explain.
            let peer = point_of(&b.point_json).filter(|p| matches!(p.scheduler, Scheduler::Peer { .. }));
            let tree = match (b.schedule.clone(), peer) {
                (_, Some(p)) => return Ok((b.program_path.into(), b.dataset, String::new(), Some(p), title)),
                (Some(tree), None) => tree,
                (None, None) => {
                    return Err(Error::input(format!(
                        "the best variant of `{kernel}` has no recorded schedule"
                    )))
                }
            };
            (b.program_path, b.dataset, b.point_json, tree, title)
        }
    };
    let point = point_of(&point_json);
    let title = match &point {
        Some(p) => format!("{title} with {p}"),
        None => title,
    };
    let file = request.file.clone().unwrap_or_else(|| PathBuf::from(program_path));
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

/// Explanations already made, by kernel and point (a page made again and
/// again explains each winner once).
pub type Cache = std::sync::Mutex<std::collections::HashMap<(String, String), Option<String>>>;

/// The report of what `filter` selects, each winner explained (as `report`
/// and `serve`'s page show it), through `cache` where one is given.
pub fn report(store: &Store, filter: &ReportFilter, cache: Option<&Cache>) -> Result<reports::Report> {
    let rows = store.report_rows(filter)?;
    let mut report = reports::collect(&rows, &crate::campaign::grid::reference_label);
    let cached = |key: &(String, String)| {
        cache.and_then(|c| c.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned())
    };
    // Each winner explained from the schedule recorded for its point; a program that moved
    // or no longer reads costs the explanation only.
    report.explain_winners(|row, w| {
        let key = (row.kernel.clone(), w.point_id.clone());
        if let Some(text) = cached(&key) {
            return text;
        }
        let text = winner(store, row, w);
        if let Some(c) = cache {
            c.lock().unwrap_or_else(|e| e.into_inner()).insert(key, text.clone());
        }
        text
    });
    Ok(report)
}

/// Winner `w` of `row` as loop transformations of the original.
fn winner(store: &Store, row: &reports::model::Row, w: &reports::model::Winner) -> Option<String> {
    let m = store.measured_schedule(&row.kernel, &w.point_id).ok()??;
    let point = point_of(&m.point_json);
    let file = std::path::Path::new(&m.program_path);
    let (build, scop) = stored_build(store, &row.kernel);
    let e = script_of(file, &m.dataset, (&build, scop), &m.tree, point.as_ref()).ok()?;
    Some(if e.script.is_empty() { "(the original loops, unchanged)\n".to_string() } else { e.script })
}
