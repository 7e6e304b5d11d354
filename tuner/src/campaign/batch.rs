//! One batch's programs: each point's schedule and code made by a
//! `polytune variant` child, then built by its builder (ours, a peer's
//! compiler, or nvcc and ours for a GPU point's CUDA form).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use codegen::Cuda;
use executor::build::{BuildOutcome, Builder};
use executor::cuda::Nvcc;
use executor::measure::Status;
use executor::pipeline::{Answer, Failure};
use executor::process;
use sha2::{Digest, Sha256};
use store::{BuildRef, Costs};
use vocab::knobs::{Point, Scheduler};

use super::{interrupted, Campaign, Kernel, On};
use crate::program::Dataset;

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

/// A program of the batch and how it is built.
#[derive(Clone, Copy)]
pub(super) struct Program<'a> {
    pub builder: &'a Builder,
    pub code: &'a str,
    /// A GPU point's CUDA form, built for the profile's GPU slots.
    pub cuda: Option<(&'a Nvcc, &'a Cuda)>,
    /// The environment it runs with (`CodeOptions::run_env`): one program
    /// under two wait policies is measured twice, built once.
    pub env: &'a [(String, String)],
}

impl Program<'_> {
    /// Names the program and what builds it: programs with one key are
    /// measured once.
    pub fn key(&self) -> String {
        match self.cuda {
            None if self.env.is_empty() => self.builder.key(self.code),
            None => {
                let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
                self.builder.key(&format!("{}\n/* run with {} */\n", self.code, env.join(" ")))
            }
            Some((nvcc, c)) => {
                let both = format!("{}\n/* CUDA ({}) */\n{}", c.program, nvcc.flags.join(" "), c.unit);
                self.builder.key(&both)
            }
        }
    }

    /// Compiles the program (or finds it in the build cache).
    pub fn build(&self) -> BuildOutcome {
        match self.cuda {
            None => self.builder.build(self.code),
            Some((nvcc, c)) => executor::cuda::build(self.builder, nvcc, &c.program, &c.unit),
        }
    }

    /// The program as the build cache keeps it (hash and path: the C file,
    /// or a CUDA form's unit).
    pub fn source(&self) -> BuildRef {
        let key = self.key();
        let path: PathBuf = match self.cuda {
            None => {
                self.builder.cache_dir().join("variants").join(format!("{}.c", self.builder.key(self.code)))
            }
            Some((nvcc, c)) => executor::cuda::unit_path(self.builder, nvcc, &c.unit),
        };
        BuildRef { source_hash: key, source_path: path.display().to_string() }
    }
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
    kernel: &Kernel,
    dataset: Dataset,
    point: &Point,
    timeout: Duration,
    schedules: &Path,
) -> (Answer, Costs) {
    let started = std::time::Instant::now();
    let (answer, schedule_s, codegen_s) = match reply_of_child(kernel, dataset, point, timeout, schedules) {
        Ok(r) => (r.answer, r.schedule_s, r.codegen_s),
        Err(f) => (Err(f), 0.0, 0.0),
    };
    let costs =
        Costs { variant_s: started.elapsed().as_secs_f64(), schedule_s, codegen_s, ..Costs::default() };
    (answer, costs)
}

fn reply_of_child(
    kernel: &Kernel,
    dataset: Dataset,
    point: &Point,
    timeout: Duration,
    schedules: &Path,
) -> Result<Reply, Failure> {
    use std::process::{Command, Stdio};
    let fail = |status: Status, reason: String| Err(Failure { status, reason });
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(Status::ScheduleError, format!("cannot find the polytune executable: {e}")),
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

/// A point's program, or why there is none and what finding out cost.
pub(super) type MadeOrFailed = Result<Made, (Failure, Costs)>;

/// A point of a batch whose child made its program.
pub(super) struct Made {
    pub point: Point,
    pub schedule: String,
    pub code: String,
    /// Ours, or a peer's compiler.
    pub builder: Builder,
    pub cuda: Option<Cuda>,
    pub costs: Costs,
    /// The program's build key ([`Program::key`]).
    pub key: String,
    /// Its build, made by the batch's first point with this key when no
    /// earlier batch measured it (taken when measured).
    pub build: Option<BuildOutcome>,
}

impl Campaign<'_> {
    /// The builder of `point`'s program: ours, or for a peer's point the
    /// peer's compiler with the same cache and extra sources.
    fn builder_of(&self, point: &Point) -> Result<Builder, Failure> {
        let Scheduler::Peer { name } = &point.scheduler else { return Ok(self.evaluator.builder.clone()) };
        let failed = |reason: String| Failure { status: Status::CompileError, reason };
        let peer = executor::peers::find(name, point.threads).map_err(failed)?;
        self.evaluator.builder.with_compiler(peer.compiler).map_err(|e| failed(format!("{name}: {e}")))
    }

    /// Every point's schedule and program, each made by a `polytune variant`
    /// child (killed after `variant_timeout`) and then built, `jobs` points
    /// at a time: a point's compile overlaps the next points' children. A
    /// program is built by the first point of the batch that makes it, and
    /// not at all when an earlier batch measured it.
    pub(super) fn make(&self, on: &On, points: &[Point]) -> Vec<MadeOrFailed> {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let claimed = std::sync::Mutex::new(std::collections::HashSet::new());
        let made: Vec<std::sync::Mutex<Option<MadeOrFailed>>> =
            points.iter().map(|_| std::sync::Mutex::new(None)).collect();
        let nvcc = self.gpus.as_ref().map(|g| &g.nvcc);
        std::thread::scope(|scope| {
            for _ in 0..self.evaluator.jobs.max(1) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= points.len() || interrupted() {
                        break;
                    }
                    let point = &points[i];
                    let (answer, costs) = answer_in_child(
                        on.kernel,
                        on.dataset,
                        point,
                        self.variant_timeout,
                        &self.schedules.0,
                    );
                    // A peer's point is built by the peer's compiler.
                    let answer = answer.and_then(|a| Ok((a, self.builder_of(point)?)));
                    let m = match answer {
                        Err(failure) => Err((failure, costs)),
                        Ok(_) if interrupted() => break,
                        Ok(((schedule, code, cuda), builder)) => {
                            // A GPU point's CUDA form where the profile has GPU slots.
                            let cuda = cuda.filter(|_| self.gpus.is_some());
                            let env = point.code.run_env();
                            let program = Program {
                                builder: &builder,
                                code: &code,
                                cuda: cuda.as_ref().and_then(|c| Some((nvcc?, c))),
                                env: &env,
                            };
                            let key = program.key();
                            let first = !self.measured_code.contains_key(&key)
                                && claimed.lock().expect("no panics while holding it").insert(key.clone());
                            let build = first.then(|| program.build());
                            Ok(Made {
                                point: point.clone(),
                                schedule,
                                code,
                                builder,
                                cuda,
                                costs,
                                key,
                                build,
                            })
                        }
                    };
                    *made[i].lock().expect("no panics while holding it") = Some(m);
                });
            }
        });
        made.into_iter()
            .map(|m| {
                m.into_inner().expect("no panics while holding it").unwrap_or_else(|| {
                    let interrupted = Failure { status: Status::Interrupted, reason: "Ctrl-C".into() };
                    Err((interrupted, Costs::default()))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One program under two run settings: two keys (measured apart), one
    /// source file and one build.
    #[test]
    fn a_run_setting_makes_a_program_of_its_own_key_on_one_build() {
        let dir = std::env::temp_dir().join(format!("polytune-key-{}", process::unique_suffix()));
        let builder = Builder::new(executor::build::Compiler::default(), dir.clone()).unwrap();
        let code = "int main(void) { return 0; }\n";
        let passive = vocab::knobs::CodeOptions::default().with_settings(&["omp_wait=passive"]).unwrap();
        let env = passive.run_env();
        let plain = Program { builder: &builder, code, cuda: None, env: &[] };
        let waiting = Program { env: &env, ..plain };
        assert_ne!(plain.key(), waiting.key());
        assert_eq!(plain.key(), builder.key(code));
        assert_eq!(plain.source().source_path, waiting.source().source_path);
        let _ = std::fs::remove_dir_all(&dir);
    }

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
