//! One batch's programs: each point's schedule and code made by a
//! `polytune variant` child, then built by its builder (ours, a peer's
//! compiler, or nvcc and ours for a GPU point's CUDA form).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use executor::build::{BuildOutcome, Builder};
use executor::codegen::Cuda;
use executor::cuda::Nvcc;
use executor::measure::Status;
use executor::pipeline::{Answer, Failure};
use executor::process;
use space::knobs::Point;
use store::{BuildRef, Costs};

use super::Kernel;
use crate::program::Dataset;

/// A directory of schedules the points of one campaign invocation share
/// (see `polytune variant`), removed with it.
pub(super) struct Schedules(pub PathBuf);

impl Schedules {
    pub fn new() -> Result<Schedules> {
        let dir = std::env::temp_dir().join(format!("polytune-schedules-{}", process::unique_suffix()));
        std::fs::create_dir_all(&dir)?;
        Ok(Schedules(dir))
    }
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
}

impl Program<'_> {
    /// Names the program and what builds it: programs with one key are
    /// measured once.
    pub fn key(&self) -> String {
        match self.cuda {
            None => self.builder.key(self.code),
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
            None => self.builder.cache_dir().join("variants").join(format!("{key}.c")),
            Some((nvcc, c)) => executor::cuda::unit_path(self.builder, nvcc, &c.unit),
        };
        BuildRef { source_hash: key, source_path: path.display().to_string() }
    }
}

/// What `polytune variant` prints: the point's answer and what its
/// scheduling and code generation took.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Reply {
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
        .env(crate::cmd::variant::SCHEDULES, schedules)
        .stdin(Stdio::null())
        .stdout(file);
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
