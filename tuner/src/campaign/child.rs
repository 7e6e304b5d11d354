//! The `polytune variant` child protocol, both sides: a campaign asks a
//! child process for each point's schedule and program (a [`Request`] on
//! its command line), so that a scheduler or code generator that loops or
//! aborts costs one point (killed after a timeout, recorded as a status),
//! never the campaign, and so that two points schedule in parallel, which
//! CBC's process-wide lock forbids inside one process. The children of one
//! campaign invocation share the schedules they make in a directory
//! ([`Schedules`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Result;
use executor::measure::Status;
use executor::pipeline::{self, Answer, Failure};
use executor::process;
use model::deps::Dependences;
use model::scop::Scop;
use sha2::{Digest, Sha256};
use store::Costs;
use vocab::knobs::{Point, Scheduler};

use super::Kernel;
use crate::program::{Dataset, Program};

/// A directory of schedules the points of one campaign invocation share
/// (see `polytune variant`), removed with it.
pub(super) struct Schedules(pub PathBuf);

const SCHEDULES_PREFIX: &str = "polytune-schedules-";

/// The environment variable naming a campaign's schedule directory to its
/// children (`polytune variant`), which share the schedules they compute there.
pub const SCHEDULES: &str = "POLYTUNE_SCHEDULE_DIR";

impl Schedules {
    /// A new directory, after removing those of campaigns killed before
    /// they could: their process no longer runs and nothing was added to
    /// them for an hour (a process in another PID namespace may share the
    /// directory for temporary files).
    pub fn new() -> Result<Schedules> {
        let temp = std::env::temp_dir();
        let idle = |e: &std::fs::DirEntry| {
            let modified = e.metadata().and_then(|m| m.modified());
            modified.is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(3600)))
        };
        for entry in std::fs::read_dir(&temp).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid =
                name.to_str().and_then(|n| n.strip_prefix(SCHEDULES_PREFIX)?.split('-').next()?.parse().ok());
            if pid.is_some_and(|pid: libc::pid_t| !process_runs(pid)) && idle(&entry) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = temp.join(format!("{SCHEDULES_PREFIX}{}", process::unique_suffix()));
        std::fs::create_dir_all(&dir)?;
        Ok(Schedules(dir))
    }
}

/// Whether a process `pid` exists (one of another user counts).
fn process_runs(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

impl Drop for Schedules {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a child is asked: one point of one SCoP of a file, as `polytune
/// variant`'s arguments say it.
pub struct Request {
    pub file: PathBuf,
    pub dataset: Dataset,
    pub point: Point,
    pub cc_args: Vec<String>,
    /// Which SCoP of the file, counted from 0.
    pub scop: usize,
    /// The SCoPs are the regions found without pragmas.
    pub autodetect: bool,
    /// The program already extracted and analysed, as the campaign wrote
    /// it ([`crate::program::Program`] as JSON): read instead of the file.
    pub program: Option<PathBuf>,
    /// The program replays its region from this capture (`crate::capture`).
    pub replay_from: Option<PathBuf>,
}

/// The child's side: the point's schedule and program (a peer's point: the
/// program as written, preprocessed by the peer's compiler, or its region's
/// replay driver).
pub fn reply(req: &Request) -> Result<Reply> {
    let point = &req.point;
    if let Scheduler::Peer { name } = &point.scheduler {
        let cpp = crate::program::cpp_args(req.dataset, &req.cc_args);
        let (file, scop, autodetect) = (&req.file, req.scop, req.autodetect);
        let answer: Answer = executor::peers::find(name, point.threads)
            .and_then(|peer| match &req.replay_from {
                None => executor::peers::program(&peer, file, &cpp, scop, autodetect),
                Some(capture) => {
                    let capture = capture.display().to_string();
                    executor::peers::replayed_program(&peer, file, &cpp, scop, autodetect, &capture)
                }
            })
            .map(|program| (String::new(), program, None))
            .map_err(|reason| Failure { status: Status::ScheduleError, reason });
        return Ok(Reply { answer, schedule_s: 0.0, codegen_s: 0.0 });
    }
    let p = match &req.program {
        Some(path) => crate::program::read(path)?,
        None => {
            let build = crate::program::ProgramConfig::preprocessed(&req.cc_args, req.autodetect);
            crate::program::load(&req.file, req.dataset, &build, req.scop)?
        }
    };
    // The point's model once, for its schedule and its code.
    let started = Instant::now();
    let model = pipeline::model(&p.scop, &p.deps, &point.code, point.on_gpu());
    let tree =
        model.as_ref().map_err(Clone::clone).and_then(|(scop, deps)| shared_schedule(&p, scop, deps, point));
    let schedule_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let answer = model.and_then(|(scop, deps)| {
        let tree = tree?;
        let opts = pipeline::codegen_options(point);
        let v = pipeline::generate_modelled(&p.source, &scop, &deps, &opts, &tree)?;
        match &req.replay_from {
            None => Ok((tree, v.program, v.cuda)),
            Some(capture) => {
                let (program, cuda) = replayed(&p, v, capture)?;
                Ok((tree, program, cuda))
            }
        }
    });
    let codegen_s = started.elapsed().as_secs_f64();
    Ok(Reply { answer, schedule_s, codegen_s })
}

/// `v`'s region replayed from `capture`: a CPU variant's code or a GPU
/// variant's emulation, and a GPU variant's CUDA form replaying the call
/// of its host function (built with its unit where a GPU slot runs it).
fn replayed(
    p: &Program,
    v: codegen::Variant,
    capture: &Path,
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
fn shared_schedule(p: &Program, scop: &Scop, deps: &Dependences, point: &Point) -> Result<String, Failure> {
    let Some(dir) = std::env::var_os(SCHEDULES).map(PathBuf::from) else {
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

/// What `polytune variant` prints: the point's answer and what its
/// scheduling and code generation took.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Reply {
    pub answer: Answer,
    pub schedule_s: f64,
    pub codegen_s: f64,
}

/// Runs `polytune variant` for one point in a child (the one runner with limits,
/// `executor::process`), its answer written to a file; a timeout, a crash or an error of
/// the child is a failure of the point. With the answer, what it cost (the
/// child's wall time, and its scheduling and code generation).
pub(super) fn answer_in_child(
    exe: Option<&Path>,
    kernel: &Kernel,
    dataset: Dataset,
    point: &Point,
    timeout: Duration,
    schedules: &Path,
) -> (Answer, Costs) {
    let started = std::time::Instant::now();
    let (answer, schedule_s, codegen_s) =
        match reply_of_child(exe, kernel, dataset, point, timeout, schedules) {
            Ok(r) => (r.answer, r.schedule_s, r.codegen_s),
            Err(f) => (Err(f), 0.0, 0.0),
        };
    let costs =
        Costs { variant_s: started.elapsed().as_secs_f64(), schedule_s, codegen_s, ..Costs::default() };
    (answer, costs)
}

fn reply_of_child(
    exe: Option<&Path>,
    kernel: &Kernel,
    dataset: Dataset,
    point: &Point,
    timeout: Duration,
    schedules: &Path,
) -> Result<Reply, Failure> {
    use std::process::{Command, Stdio};
    let fail = |status: Status, reason: String| Err(Failure { status, reason });
    let Some(exe) = exe else {
        return fail(Status::ScheduleError, "cannot find the polytune executable".into());
    };
    let answer_file = std::env::temp_dir().join(format!("polytune-answer-{}.json", process::unique_suffix()));
    let file = match std::fs::File::create(&answer_file) {
        Ok(f) => f,
        Err(e) => {
            return fail(Status::ScheduleError, format!("{}: cannot create: {e}", answer_file.display()))
        }
    };
    let mut cmd = Command::new(exe);
    cmd.arg("variant")
        .arg(&kernel.spec.path)
        .args(["--dataset", dataset.name(), "--point", &point.canonical_json()])
        .args(kernel.spec.build.cc_args.iter().map(|a| format!("--cc-arg={a}")))
        .args(["--scop", &kernel.spec.scop.to_string()])
        .env(SCHEDULES, schedules)
        .stdin(Stdio::null())
        .stdout(file);
    if let Some(program) = saved_program(kernel, dataset, schedules) {
        cmd.arg("--program").arg(program);
    }
    if kernel.spec.build.autodetect {
        cmd.arg("--autodetect");
    }
    if let Some(capture) = &kernel.capture {
        cmd.arg("--replay-from").arg(&capture.path);
    }
    let run = process::run_limited(cmd, &process::Limits::default(), timeout, 4096);
    let text = std::fs::read_to_string(&answer_file).unwrap_or_default();
    let _ = std::fs::remove_file(&answer_file);
    match run {
        Err(e) => fail(Status::ScheduleError, format!("cannot start `polytune variant`: {e}")),
        Ok(r) => match r.end {
            process::End::TimedOut => {
                fail(Status::ScheduleTimeout, format!("no schedule and code within {} s", timeout.as_secs()))
            }
            process::End::Exited(s) if s.success() => serde_json::from_str::<Reply>(&text).or_else(|e| {
                fail(Status::ScheduleError, format!("unreadable answer from `polytune variant`: {e}"))
            }),
            process::End::Exited(s) => fail(
                Status::ScheduleError,
                format!("`polytune variant` failed ({s}): {}", r.output.text().trim()),
            ),
        },
    }
}

/// The kernel's program on `dataset`, saved in the schedule directory for
/// the children to read instead of extracting and analysing the file again
/// (`None` where it cannot be saved: the child reads the file).
fn saved_program(kernel: &Kernel, dataset: Dataset, schedules: &Path) -> Option<PathBuf> {
    let program = kernel.programs.get(&dataset)?;
    // The whole spec: two SCoPs of one file, or one file built two ways, are two programs.
    let key = format!("{}:{}", serde_json::to_string(&kernel.spec).ok()?, dataset.name());
    let key: String = Sha256::digest(key.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect();
    let path = schedules.join(format!("program-{key}.json"));
    crate::program::write(program, &path).ok().map(|()| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed campaign's directory goes when the next campaign starts; a
    /// running campaign's, or one used within the hour, stays.
    #[test]
    fn schedule_directories_of_killed_campaigns_are_removed() {
        let temp = std::env::temp_dir();
        let unique = process::unique_suffix().replace('-', "x");
        // Beyond any kernel's pid_max: no such process.
        let dead = format!("{SCHEDULES_PREFIX}999999999-{unique}-0");
        let live = format!("{SCHEDULES_PREFIX}{}-{unique}-1", std::process::id());
        let fresh = format!("{SCHEDULES_PREFIX}999999999-{unique}-2");
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
        for name in [&dead, &live, &fresh] {
            std::fs::create_dir_all(temp.join(name)).unwrap();
            std::fs::write(temp.join(name).join("lexmins.log"), "").unwrap();
        }
        for name in [&dead, &live] {
            std::fs::File::open(temp.join(name)).unwrap().set_modified(hour_ago).unwrap();
        }
        let new = Schedules::new().unwrap();
        assert!(!temp.join(&dead).exists(), "the killed campaign's directory stayed");
        assert!(temp.join(&live).exists() && temp.join(&fresh).exists());
        for name in [&live, &fresh] {
            std::fs::remove_dir_all(temp.join(name)).unwrap();
        }
        drop(new);
    }
}
