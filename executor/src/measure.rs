//! Runs a built program under the measurement protocol and verifies its output.
//!
//! Protocol (docs/design.md, "The measurement protocol"): `warmups` runs (default 1) whose
//! times are kept but not used, then `runs` timed runs (default 5), each a
//! separate process pinned to its slot's cores. A run's *sample* is the region
//! time the runtime wrote to `POLYTUNE_TIME_FILE` (the sum, if the region ran
//! more than once in that process). The result reports the median and the
//! **spread = (max − min) / median** of the samples: simple to read ("all samples
//! lie within 7% of each other") and deliberately sensitive to a single outlier,
//! which is what should trigger a re-measurement on a noisy shared machine. When
//! the spread exceeds `spread_threshold` (default 10%), `remeasure_runs` more runs
//! are made once and all samples are pooled.
//!
//! Racing (`race_above_s`, set by campaigns from their best time so far):
//! when the warm-ups and the first timed run all took longer than the
//! threshold, the measurement stops there, verified, with that one sample
//! and no spread. A variant that much slower than the best cannot win, and
//! its four more runs would be most of an evaluation's cost on large
//! datasets.
//!
//! Campaigns also re-measure a high spread only for a contender
//! (`remeasure_below_s`): a variant well behind the best keeps its five
//! samples, since more of them would not change which one wins.
//!
//! Every run gets a fresh `POLYTUNE_TIME_FILE`; only the first timed run gets a
//! `POLYTUNE_DUMP_FILE` (all of them with `verify_every_run`): dumping large
//! arrays on every run costs disk and time and, for a deterministic program,
//! checks nothing new. That first dump is the reference's output
//! ([`measure`]) or is compared with it ([`measure_against`]).
//!
//! A replay driver (`replayed`) makes the warm-ups and the timed runs in
//! one process (`POLYTUNE_RUNS`), racing there (`POLYTUNE_RACE_ABOVE_S`
//! after `POLYTUNE_RACE_AFTER` runs), and dumps its first run, which is the
//! one verified; a re-measurement is one more process. Where the region is
//! short beside the process's set-up (its start, loading the capture, and
//! the dump with its reading and comparison here), the driver makes more
//! timed runs until the regions take `fill_share` of
//! their time and the set-up's (`POLYTUNE_FILL_SHARE`), so that a
//! campaign's run time is spent mostly measuring. Its timeout is the
//! per-run timeout times the runs asked of it, and each run's wall time is
//! its share of the process's.
//!
//! Each child runs in its own process group (killed whole at the timeout),
//! pinned to its slot's cores (the first `threads` of them where it runs
//! fewer threads than the slot has cores), with `OMP_NUM_THREADS` set, no core dumps, a
//! bounded address space and a CPU-time limit of `timeout × threads`.
//!
//! Failures are data: nothing here panics or returns `Err` because of what the
//! child did. A run that times out, crashes, or prints a wrong result ends the
//! measurement with that status and a reason.

use crate::build::BuildOutcome;
use crate::machine::{GpuSlot, Slot};
use crate::process::{run_limited, unique_suffix, End, Limits};
use crate::runtime::{self, DumpedArray};
use crate::verify::{self, Expected, Tolerance, Verdict};
use serde::{Deserialize, Serialize};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How a measurement ends (and any evaluation of a point: see the `outcome` crate).
pub use vocab::Status;

/// How long a run may take, scaled from the original program.
///
/// The scale is the original's *process* wall time per run
/// ([`Measurement::wall_max_s`] of the reference), not its region time: a
/// variant also has to initialise its inputs and dump its outputs, which for
/// small regions takes longer than the region itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeoutPolicy {
    pub factor: f64,
    pub offset_s: f64,
    pub min_s: f64,
    /// Used when there is no original time yet (measuring the original itself).
    pub unscaled_s: f64,
}

impl Default for TimeoutPolicy {
    fn default() -> Self {
        TimeoutPolicy { factor: 10.0, offset_s: 1.0, min_s: 1.0, unscaled_s: 600.0 }
    }
}

impl TimeoutPolicy {
    /// `max(min_s, factor × original_s + offset_s)`, or `unscaled_s` without an original.
    pub fn timeout_s(&self, original_s: Option<f64>) -> f64 {
        match original_s {
            Some(t) if t.is_finite() && t >= 0.0 => (self.factor * t + self.offset_s).max(self.min_s),
            _ => self.unscaled_s,
        }
    }
}

/// Knobs of the measurement protocol; `Default` is the design's protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MeasureConfig {
    pub warmups: usize,
    /// Timed runs (at least one is made).
    pub runs: usize,
    /// Re-measure once when `(max − min) / median` exceeds this.
    pub spread_threshold: f64,
    /// Extra timed runs made by the one re-measurement (0 disables it).
    pub remeasure_runs: usize,
    pub timeout: TimeoutPolicy,
    /// `RLIMIT_AS` of the child in bytes; `None` leaves it unlimited.
    pub address_space_bytes: Option<u64>,
    /// `OMP_NUM_THREADS`; `None` means one thread per core of the slot.
    pub threads: Option<usize>,
    pub tolerance: Tolerance,
    /// Probe the original's rounding noise when it is measured as the
    /// reference (`crate::verify`): two more builds and runs of it. Ignored
    /// with a bitwise tolerance, which admits no noise.
    pub probe_noise: bool,
    /// Verify the dump of every timed run rather than only the first: catches
    /// racy parallel variants that are right only some of the time, at the cost
    /// of writing and comparing the outputs on every run.
    pub verify_every_run: bool,
    /// Extra environment for the child (e.g. `OMP_PROC_BIND`).
    pub env: Vec<(String, String)>,
    /// Stop after the first timed run when it and every warm-up took longer
    /// than this many seconds (see the module doc); `None` never stops early.
    pub race_above_s: Option<f64>,
    /// Re-measure a high spread only when the median is below this (a
    /// contender: campaigns pass a little above their best so far); `None`
    /// re-measures every high spread.
    pub remeasure_below_s: Option<f64>,
    /// The binary is a replay driver (`codegen::replay_program`): it makes
    /// its warm-ups and timed runs in one process, the capture loaded once
    /// and the written arrays restored only where floating-point
    /// exceptions call for it (`codegen::replay`'s `FP_WATCH`).
    pub replayed: bool,
    /// A replay driver makes more runs than asked while its regions' time
    /// is under this share of theirs and its set-up's before the first run
    /// (a short region, whose capture takes longer to load than a few runs
    /// of it), within [`FILL_RUNS`] times the runs asked and half its
    /// timeout; `None` makes the runs asked.
    pub fill_share: Option<f64>,
}

/// How many times the runs asked a replay driver may make to fill its
/// process (`MeasureConfig::fill_share`).
pub const FILL_RUNS: usize = 40;

impl MeasureConfig {
    /// This protocol for CUDA programs on `gpu`: that device alone visible,
    /// and no address-space limit (CUDA maps the device's memory and more
    /// into the process).
    pub fn on_gpu(&self, gpu: &GpuSlot) -> MeasureConfig {
        let mut env = self.env.clone();
        env.push(("CUDA_VISIBLE_DEVICES".into(), gpu.gpu.to_string()));
        MeasureConfig { address_space_bytes: None, env, ..self.clone() }
    }
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            warmups: 1,
            runs: 5,
            spread_threshold: 0.10,
            remeasure_runs: 10,
            timeout: TimeoutPolicy::default(),
            address_space_bytes: Some(8 << 30),
            threads: None,
            tolerance: Tolerance::default(),
            probe_noise: true,
            verify_every_run: false,
            env: Vec::new(),
            race_above_s: None,
            remeasure_below_s: None,
            replayed: false,
            fill_share: Some(0.9),
        }
    }
}

/// One program's measurement: plain data, stored as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub status: Status,
    /// Why, for every status; for `ok` a one-line summary.
    pub reason: String,
    /// Region times in seconds of every timed run (re-measurement included), in order.
    pub samples: Vec<f64>,
    /// Region times of the warm-up runs (not used for the median).
    pub warmup_samples: Vec<f64>,
    /// Process wall time in seconds of each timed run: the scale for variants' timeouts.
    pub wall_s: Vec<f64>,
    pub median_s: Option<f64>,
    /// `(max − min) / median` of `samples`; `None` when undefined.
    pub spread: Option<f64>,
    pub remeasured: bool,
    /// Stopped after the first timed run by racing (`race_above_s`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raced: bool,
    /// The per-run timeout that was applied.
    pub timeout_s: f64,
    pub threads: usize,
    pub cores: Vec<usize>,
    /// A CUDA variant's kernel times (CUDA events, first launch to end of
    /// the last) of the timed runs; `samples` are its region times with
    /// allocation and copies. Empty for CPU programs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_samples: Vec<f64>,
    /// The original's rounding noise (`crate::verify`), found when it is the
    /// reference; `None` for variants and where it was not probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding_noise: Option<vocab::RoundingNoise>,
}

impl Measurement {
    /// The record of a variant that did not compile.
    pub fn compile_error(message: impl Into<String>) -> Measurement {
        Measurement::failed(Status::CompileError, message)
    }

    /// An evaluation that ended before anything ran (scheduling, code generation,
    /// compilation failed), with its status and reason.
    pub fn failed(status: Status, reason: impl Into<String>) -> Measurement {
        Measurement { reason: reason.into(), ..Measurement::empty(status, 0.0, 0, Vec::new()) }
    }

    /// A measurement with no runs yet.
    fn empty(status: Status, timeout_s: f64, threads: usize, cores: Vec<usize>) -> Measurement {
        Measurement {
            status,
            reason: String::new(),
            samples: Vec::new(),
            warmup_samples: Vec::new(),
            wall_s: Vec::new(),
            median_s: None,
            spread: None,
            remeasured: false,
            raced: false,
            timeout_s,
            threads,
            cores,
            kernel_samples: Vec::new(),
            rounding_noise: None,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// Seconds inside the timer: the region times of the warm-up and timed runs.
    pub fn timed_s(&self) -> f64 {
        self.warmup_samples.iter().chain(&self.samples).sum()
    }

    /// Longest process wall time of the timed runs: pass it as `original_s`
    /// when measuring variants of this program.
    pub fn wall_max_s(&self) -> Option<f64> {
        self.wall_s.iter().copied().reduce(f64::max)
    }
}

/// Why a run that exited normally is a crash when it never reached the SCoP.
pub const NO_REGION_TIME: &str =
    "exited normally but recorded no region time (polytune_rt_stop was never called)";

/// A measurement plus the outputs of its first timed run (the reference's dump).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub measurement: Measurement,
    /// `None` when the program failed before its first timed run finished.
    pub dump: Option<Vec<DumpedArray>>,
}

/// Measures `binary` on `slot` without verifying it: used for the original
/// program, whose dump becomes the reference. `original_s` scales the timeout
/// (see [`TimeoutPolicy`]); `None` uses the unscaled limit.
pub fn measure(binary: &Path, slot: &Slot, config: &MeasureConfig, original_s: Option<f64>) -> Measured {
    Session::new(binary, slot, config, original_s, None).run()
}

/// Measures a variant and compares its outputs with `reference` (the original's
/// dump, and its rounding noise where known): a mismatch makes it `wrong` with
/// the mismatch as reason.
pub fn measure_against<'a>(
    reference: impl Into<Expected<'a>>,
    binary: &Path,
    slot: &Slot,
    config: &MeasureConfig,
    original_s: Option<f64>,
) -> Measurement {
    Session::new(binary, slot, config, original_s, Some(reference.into())).run().measurement
}

/// [`measure_against`] for a build outcome: a failed build is `compile-error`.
pub fn measure_outcome<'a>(
    reference: impl Into<Expected<'a>>,
    outcome: &BuildOutcome,
    slot: &Slot,
    config: &MeasureConfig,
    original_s: Option<f64>,
) -> Measurement {
    match outcome {
        BuildOutcome::Built { binary, .. } => measure_against(reference, binary, slot, config, original_s),
        BuildOutcome::Failed { message } => Measurement::compile_error(message.clone()),
    }
}

/// Median of a non-empty sample (mean of the two middle values when even).
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// `(max − min) / median`; `None` for no samples or a zero median with spread.
pub fn spread(samples: &[f64]) -> Option<f64> {
    let med = median(samples)?;
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    if max == min {
        Some(0.0)
    } else if med > 0.0 {
        Some((max - min) / med)
    } else {
        None
    }
}

/// State of one measurement: the config resolved for this binary and slot.
struct Session<'a> {
    binary: &'a Path,
    config: &'a MeasureConfig,
    reference: Option<Expected<'a>>,
    cores: Vec<usize>,
    threads: usize,
    timeout: Duration,
    m: Measurement,
    dump: Option<Vec<DumpedArray>>,
    /// Runs a replay driver left out (`polytune_rt_run_discard`).
    discarded: usize,
}

/// What one process that ended well produced.
struct Batch {
    /// Each run's region time.
    region_s: Vec<f64>,
    /// What a CUDA variant wrote to `POLYTUNE_KERNEL_TIME_FILE`: one
    /// sample for a whole program (its lines summed), one a run for a
    /// replay driver (a line each).
    kernel_s: Vec<f64>,
    /// The process's wall time.
    wall_s: f64,
    dump: Option<Vec<DumpedArray>>,
    /// Runs the process left out of its time file (`discard`).
    discarded: usize,
}

/// What ended a run that did not produce a sample.
struct Failure {
    status: Status,
    reason: String,
}

impl<'a> Session<'a> {
    fn new(
        binary: &'a Path,
        slot: &Slot,
        config: &'a MeasureConfig,
        original_s: Option<f64>,
        reference: Option<Expected<'a>>,
    ) -> Self {
        let threads = config.threads.unwrap_or(slot.cores.len()).max(1);
        // Fewer threads than cores: the first `threads` of them, so that every
        // run of every point keeps to the same cores (a VM's vCPUs can differ
        // by 20%, and which one a wandering thread lands on is chance).
        let cores = slot.cores[..threads.min(slot.cores.len())].to_vec();
        let timeout_s = config.timeout.timeout_s(original_s);
        Session {
            binary,
            config,
            reference,
            cores: cores.clone(),
            threads,
            timeout: Duration::from_secs_f64(if timeout_s.is_finite() {
                timeout_s.clamp(0.001, 1e9)
            } else {
                1e9
            }),
            m: Measurement::empty(Status::Ok, timeout_s, threads, cores),
            dump: None,
            discarded: 0,
        }
    }

    fn run(mut self) -> Measured {
        if let Err(f) = self.protocol() {
            self.m.status = f.status;
            self.m.reason = f.reason;
        }
        self.m.median_s = median(&self.m.samples);
        // One sample says nothing about the spread.
        self.m.spread = spread(&self.m.samples).filter(|_| !self.m.raced);
        if self.m.status == Status::Ok && self.m.raced {
            self.m.reason = format!(
                "1 run, {:.6e} s: stopped early, it and the warm-up took over {:.6e} s (racing)",
                self.m.median_s.unwrap_or(f64::NAN),
                self.config.race_above_s.unwrap_or(f64::NAN),
            );
        } else if self.m.status == Status::Ok {
            self.m.reason = format!(
                "{} runs, median {:.6e} s, spread {:.1}%{}",
                self.m.samples.len(),
                self.m.median_s.unwrap_or(f64::NAN),
                100.0 * self.m.spread.unwrap_or(f64::NAN),
                if self.m.remeasured { " (re-measured)" } else { "" }
            );
            if let Some(k) = median(&self.m.kernel_samples) {
                self.m.reason.push_str(&format!(", kernels {k:.6e} s"));
            }
            if self.discarded > 0 {
                self.m.reason.push_str(&format!(
                    ", {} discarded (a run on the outputs of the one before raised floating-point exceptions; the runs after it restored the inputs)",
                    self.discarded
                ));
            }
        }
        Measured { measurement: self.m, dump: self.dump }
    }

    fn protocol(&mut self) -> Result<(), Failure> {
        let scratch = Scratch::new().map_err(|e| Failure {
            status: Status::Crash,
            reason: format!("cannot create a scratch directory for the run: {e}"),
        })?;
        if self.config.replayed && !self.config.verify_every_run {
            return self.in_one_process(&scratch);
        }
        for i in 0..self.config.warmups {
            let what = format!("warm-up run {}", i + 1);
            let run = self.runs(&scratch, 1, false, None).map_err(|f| f.context(&what))?;
            self.m.warmup_samples.extend(run.region_s);
        }
        // At least one timed run: it is the one whose outputs are verified.
        self.timed(&scratch, 1, 0)?;
        if let Some(limit) = self.config.race_above_s {
            if self.m.warmup_samples.iter().chain(&self.m.samples).all(|&t| t > limit) {
                self.m.raced = true;
                return Ok(());
            }
        }
        self.timed(&scratch, self.config.runs.max(1) - 1, 1)?;
        if self.high_spread() {
            self.m.remeasured = true;
            self.timed(&scratch, self.config.remeasure_runs, self.config.runs)?;
        }
        Ok(())
    }

    /// A replay driver's protocol: the warm-ups and the timed runs in one
    /// process, which races them itself; its dump (the first run's) verified.
    fn in_one_process(&mut self, scratch: &Scratch) -> Result<(), Failure> {
        let warmups = self.config.warmups;
        let wanted = warmups + self.config.runs.max(1);
        let race = self.config.race_above_s.map(|above| (warmups + 1, above));
        let batch = self.runs(scratch, wanted, true, race).map_err(|f| f.context("the replayed runs"))?;
        let made = batch.region_s.len();
        self.m.raced = race.is_some() && made == warmups + 1 && made < wanted;
        if made < wanted && !self.m.raced {
            return Err(Failure {
                status: Status::Crash,
                reason: format!("the replay made {made} of the {wanted} runs asked of it"),
            });
        }
        self.m.warmup_samples = batch.region_s[..warmups.min(made)].to_vec();
        self.keep(batch, warmups, "the replayed runs")?;
        if !self.m.raced && self.high_spread() {
            self.m.remeasured = true;
            let what = "the re-measurement";
            let more =
                self.runs(scratch, self.config.remeasure_runs, false, None).map_err(|f| f.context(what))?;
            self.keep(more, 0, what)?;
        }
        Ok(())
    }

    /// Whether the samples so far call for the one re-measurement: a spread
    /// above the threshold, on a contender.
    fn high_spread(&self) -> bool {
        let contender = |m: f64| self.config.remeasure_below_s.is_none_or(|below| m < below);
        self.config.remeasure_runs > 0
            && median(&self.m.samples).is_some_and(contender)
            && spread(&self.m.samples).is_some_and(|s| s > self.config.spread_threshold)
    }

    /// `n` timed runs, a process each; the very first timed run
    /// (`first_index == 0`) dumps.
    fn timed(&mut self, scratch: &Scratch, n: usize, first_index: usize) -> Result<(), Failure> {
        for i in 0..n {
            let index = first_index + i;
            let dumps = index == 0 || (self.config.verify_every_run && self.reference.is_some());
            let what = format!("timed run {}", index + 1);
            let run = self.runs(scratch, 1, dumps, None).map_err(|f| f.context(&what))?;
            self.keep(run, 0, &what)?;
        }
        Ok(())
    }

    /// Keeps the runs of `batch` after its first `skip` as timed samples,
    /// each with its share of the process's wall time, and compares its
    /// dump with the reference; the first dump is the measurement's.
    fn keep(&mut self, batch: Batch, skip: usize, what: &str) -> Result<(), Failure> {
        let share = batch.wall_s / batch.region_s.len().max(1) as f64;
        self.discarded += batch.discarded;
        for &t in batch.region_s.iter().skip(skip) {
            self.m.samples.push(t);
            self.m.wall_s.push(share);
        }
        self.m.kernel_samples.extend(batch.kernel_s.iter().skip(skip));
        if let Some(dump) = batch.dump {
            if let Some(reference) = self.reference {
                let verdict = verify::compare_with(reference, &dump, self.config.tolerance);
                if let Verdict::Mismatch { .. } = verdict {
                    return Err(Failure { status: Status::Wrong, reason: format!("{what}: {verdict}") });
                }
            }
            if self.dump.is_none() {
                self.dump = Some(dump);
            }
        }
        Ok(())
    }

    /// One process asked for `runs` runs (a whole program makes one
    /// whatever it is asked), stopped early after `race.0` runs that all
    /// took over `race.1` s; returns their region times and, if asked, the
    /// dump it wrote at its end.
    fn runs(
        &self,
        scratch: &Scratch,
        runs: usize,
        dump: bool,
        race: Option<(usize, f64)>,
    ) -> Result<Batch, Failure> {
        let crash = |reason: String| Failure { status: Status::Crash, reason };
        let time_file = scratch.fresh("time");
        let dump_file = scratch.fresh("dump");
        let kernel_file = scratch.fresh("kernels");
        let mut cmd = Command::new(self.binary);
        cmd.env("POLYTUNE_TIME_FILE", &time_file)
            .env("POLYTUNE_KERNEL_TIME_FILE", &kernel_file)
            .env("OMP_NUM_THREADS", self.threads.to_string())
            .env("POLYTUNE_RUNS", runs.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if dump {
            cmd.env("POLYTUNE_DUMP_FILE", &dump_file);
        } else {
            cmd.env_remove("POLYTUNE_DUMP_FILE");
        }
        match race {
            Some((after, above)) => cmd
                .env("POLYTUNE_RACE_AFTER", after.to_string())
                .env("POLYTUNE_RACE_ABOVE_S", above.to_string()),
            None => cmd.env_remove("POLYTUNE_RACE_AFTER").env_remove("POLYTUNE_RACE_ABOVE_S"),
        };
        let timeout = self.timeout * u32::try_from(runs.max(1)).unwrap_or(u32::MAX);
        match self.config.fill_share.filter(|_| self.config.replayed) {
            Some(share) => cmd
                .env("POLYTUNE_FILL_SHARE", share.to_string())
                .env("POLYTUNE_FILL_MAX_RUNS", (FILL_RUNS * runs.max(1)).to_string())
                .env("POLYTUNE_FILL_UNTIL_S", (timeout.as_secs_f64() / 2.0).to_string())
                .env("POLYTUNE_FILL_SINCE", monotonic_s().to_string()),
            None => cmd
                .env_remove("POLYTUNE_FILL_SHARE")
                .env_remove("POLYTUNE_FILL_MAX_RUNS")
                .env_remove("POLYTUNE_FILL_UNTIL_S")
                .env_remove("POLYTUNE_FILL_SINCE"),
        };
        for (k, v) in &self.config.env {
            cmd.env(k, v);
        }
        let limits = Limits {
            // A GPU slot may leave its host code unpinned.
            cores: (!self.cores.is_empty()).then(|| self.cores.clone()),
            address_space: self.config.address_space_bytes,
            cpu_seconds: Some((timeout.as_secs_f64() * self.threads as f64).ceil() as u64 + 1),
        };
        let out = run_limited(cmd, &limits, timeout, TAIL_BYTES)
            .map_err(|e| crash(format!("cannot start {}: {e}", self.binary.display())))?;
        let stderr = out.output.text();
        let with_stderr = |s: String| {
            if stderr.trim().is_empty() {
                s
            } else {
                format!("{s}; stderr: {}", stderr.trim())
            }
        };
        match out.end {
            End::TimedOut => {
                return Err(Failure {
                    status: Status::Timeout,
                    reason: format!(
                        "killed after {:.3} s (limit {:.3} s)",
                        out.wall.as_secs_f64(),
                        timeout.as_secs_f64()
                    ),
                });
            }
            End::Exited(status) => {
                if let Some(sig) = status.signal() {
                    if sig == libc::SIGXCPU {
                        return Err(Failure {
                            status: Status::Timeout,
                            reason: format!(
                                "CPU time limit of {} s exceeded",
                                limits.cpu_seconds.unwrap_or(0)
                            ),
                        });
                    }
                    return Err(crash(with_stderr(format!("killed by signal {sig} ({})", signal_name(sig)))));
                }
                match status.code() {
                    Some(0) => {}
                    Some(code) => return Err(crash(with_stderr(format!("exit code {code}")))),
                    None => return Err(crash(with_stderr(format!("ended with status {status}")))),
                }
            }
        }
        let times = std::fs::read_to_string(&time_file).unwrap_or_default();
        let region_s = runtime::parse_runs(&times)
            .map_err(|line| crash(format!("unreadable region time {line:?} in the time file")))?;
        let discarded = times.lines().filter(|l| l.trim() == "discard").count();
        if region_s.is_empty() {
            return Err(crash(with_stderr(NO_REGION_TIME.to_string())));
        }
        // A whole program's kernel times sum to its run's; a replay driver
        // calls the region, and writes a line, once a run.
        let kernels = std::fs::read_to_string(&kernel_file).unwrap_or_default();
        let kernels = if self.config.replayed { kernels.replace('\n', "\nend\n") } else { kernels };
        let kernel_s = runtime::parse_runs(&kernels)
            .map_err(|line| crash(format!("unreadable kernel time {line:?}")))?;
        let parsed = if dump {
            Some(runtime::read_dump(&dump_file).map_err(|e| crash(format!("malformed dump file: {e}")))?)
        } else {
            None
        };
        let _ = std::fs::remove_file(&time_file);
        let _ = std::fs::remove_file(&dump_file);
        let _ = std::fs::remove_file(&kernel_file);
        Ok(Batch { region_s, kernel_s, wall_s: out.wall.as_secs_f64(), dump: parsed, discarded })
    }
}

impl Failure {
    fn context(self, what: &str) -> Failure {
        Failure { status: self.status, reason: format!("{what}: {}", self.reason) }
    }
}

/// Now on `CLOCK_MONOTONIC`, the clock the runtime's timer reads.
fn monotonic_s() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + 1e-9 * t.tv_nsec as f64
}

/// How much of a child's stderr is kept for reasons (head and tail each).
const TAIL_BYTES: usize = 2048;

/// A private scratch directory for one measurement's time and dump files,
/// removed when dropped.
struct Scratch {
    dir: PathBuf,
}

static SCRATCH_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("polytune-run-{}", unique_suffix()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch { dir })
    }

    /// A path that no earlier run of this measurement used.
    fn fresh(&self, what: &str) -> PathBuf {
        let n = SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = self.dir.join(format!("{what}-{n}"));
        let _ = std::fs::remove_file(&p);
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL: CPU limit or out-of-memory killer",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(spread(&[1.0, 1.0]), Some(0.0));
        assert!((spread(&[0.9, 1.0, 1.1]).unwrap() - 0.2).abs() < 1e-12);
    }

    #[test]
    fn timeout_scales() {
        let p = TimeoutPolicy::default();
        assert_eq!(p.timeout_s(Some(0.01)), 1.1);
        assert_eq!(p.timeout_s(Some(0.0)), 1.0);
        assert_eq!(p.timeout_s(Some(2.0)), 21.0);
        assert_eq!(p.timeout_s(None), 600.0);
    }
}
