//! One batch's programs: each point's schedule and code made by a
//! `polytune variant` child, then built by its builder (ours, a peer's
//! compiler, or nvcc and ours for a GPU point's CUDA form).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::error::Result;
use codegen::Cuda;
use executor::build::{BuildOutcome, Builder};
use executor::cuda::Nvcc;
use executor::measure::Status;
use executor::pipeline::Failure;
use store::{BuildRef, Costs};
use vocab::knobs::{Point, Scheduler};

use super::child::answer_in_child;
use super::{interrupted, Campaign, On};

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
                        self.executable.as_ref().map(|e| e.path.as_path()),
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
        let dir = std::env::temp_dir().join(format!("polytune-key-{}", executor::process::unique_suffix()));
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
}
