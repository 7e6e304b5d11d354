//! One place where build and measure meet: measure the original program once,
//! then evaluate variants against its outputs and time. Campaigns, the CLI and
//! the tests all go through [`Evaluator`].

use crate::build::{BuildError, BuildOutcome, Builder, Compiler};
use crate::machine::Slot;
use crate::measure::{
    measure, measure_against, measure_outcome, MeasureConfig, Measurement, Status, NO_REGION_TIME,
};
use crate::runtime::DumpedArray;
use crate::verify::{self, Expected, NoiseModel};

/// The original program's measurement and outputs.
#[derive(Debug, Clone)]
pub struct Reference {
    pub measurement: Measurement,
    pub dump: Vec<DumpedArray>,
    /// Process wall time of its slowest run: scales variant timeouts.
    pub wall_s: Option<f64>,
    /// Which of its outputs are rounding noise (empty where not probed).
    pub noise: NoiseModel,
    /// Seconds measuring it took: its runs, the second run, the probes.
    pub run_s: f64,
}

impl Reference {
    /// What variants' outputs are compared with.
    pub fn expected(&self) -> Expected<'_> {
        Expected { dump: &self.dump, noise: Some(&self.noise) }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvaluateError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("the original program does not compile:\n{0}")]
    OriginalCompile(String),
    #[error("the original program failed ({status:?}): {reason}")]
    OriginalFailed { status: Status, reason: String },
    #[error("the program has no `main`: polytune builds, runs and times whole programs (the file and its --source files); `scop` and `schedule` read a file without one")]
    NoMain,
    #[error("the program ended normally without running its SCoP: the region between `#pragma scop` and `#pragma endscop` was never reached (is the function that holds it called from `main`?)")]
    NeverRan,
    #[error("the SCoP ran zero times: with the program's sizes every loop of the region is empty and it wrote no element, so there is nothing to tune (check the sizes the program passes)")]
    ZeroRun,
    #[error("the original program is not deterministic: two runs gave different outputs ({0}); no variant can be verified against it (random seeds from the clock or the process id, uninitialised memory, races)")]
    NonDeterministic(String),
}

/// Builds with one builder and measures on one slot.
pub struct Evaluator {
    pub builder: Builder,
    pub slot: Slot,
    pub config: MeasureConfig,
    /// Parallel compile jobs.
    pub jobs: usize,
}

impl Evaluator {
    /// Builds and measures the original program; it must run its SCoP at
    /// least once and give the same outputs on a second run. Then builds it
    /// the probes' ways to find its rounding noise (`crate::verify`).
    pub fn reference(&self, original: &str) -> Result<Reference, EvaluateError> {
        let binary = match self.builder.build(original) {
            BuildOutcome::Built { binary, .. } => binary,
            BuildOutcome::Failed { message } if message.contains("undefined reference to `main'") => {
                return Err(EvaluateError::NoMain)
            }
            BuildOutcome::Failed { message } => return Err(EvaluateError::OriginalCompile(message)),
        };
        // The original runs on the same slot with the same threads as variants,
        // so that speedups compare like with like.
        let started = std::time::Instant::now();
        let measured = measure(&binary, &self.slot, &self.config, None);
        let dump = match (measured.measurement.status, measured.dump) {
            (Status::Ok, Some(dump)) => dump,
            (Status::Crash, _) if measured.measurement.reason.contains(NO_REGION_TIME) => {
                return Err(EvaluateError::NeverRan)
            }
            _ => {
                return Err(EvaluateError::OriginalFailed {
                    status: measured.measurement.status,
                    reason: measured.measurement.reason.clone(),
                })
            }
        };
        // The dump holds exactly the elements the SCoP wrote under the sizes
        // of the run (scalars always): none at all means no instance ran.
        if !dump.is_empty() && dump.iter().all(|a| a.data.is_empty()) {
            return Err(EvaluateError::ZeroRun);
        }
        let wall_s = measured.measurement.wall_max_s();
        let once = MeasureConfig { warmups: 0, runs: 1, remeasure_runs: 0, ..self.config.clone() };
        let again = measure_against(&dump, &binary, &self.slot, &once, wall_s);
        if again.status == Status::Wrong {
            return Err(EvaluateError::NonDeterministic(again.reason));
        }
        let noise = self.probe_noise(original, &dump, &once, wall_s);
        let mut measurement = measured.measurement;
        measurement.rounding_noise = (!noise.summary.probes.is_empty()).then(|| noise.summary.clone());
        Ok(Reference { wall_s, measurement, dump, noise, run_s: started.elapsed().as_secs_f64() })
    }

    /// The original built with each of [`verify::probes`]' flags added and
    /// run under `once`, its outputs compared with `dump`. A probe that does
    /// not build or run is left out: it would say nothing about the noise.
    fn probe_noise(
        &self,
        original: &str,
        dump: &[DumpedArray],
        once: &MeasureConfig,
        wall_s: Option<f64>,
    ) -> NoiseModel {
        let mut model = NoiseModel::default();
        let tolerance = self.config.tolerance;
        if !self.config.probe_noise || tolerance.relative <= 0.0 {
            return model;
        }
        let compiler = self.builder.compiler();
        for extra in verify::probes(&compiler.flags) {
            let flags = compiler.flags.iter().chain(&extra).cloned();
            let Ok(builder) = self.builder.with_compiler(Compiler::new(compiler.cc.clone(), flags)) else {
                continue;
            };
            let BuildOutcome::Built { binary, .. } = builder.build(original) else { continue };
            let probe = measure(&binary, &self.slot, once, wall_s);
            if let (Status::Ok, Some(outputs)) = (probe.measurement.status, &probe.dump) {
                model.add_probe(&extra.join(" "), dump, outputs, tolerance);
            }
        }
        model
    }

    /// Builds all variants in parallel, then measures them one after the other
    /// (a slot runs one measurement at a time). Compile errors are measurements
    /// with status `compile-error`.
    pub fn evaluate(
        &self,
        reference: &Reference,
        variants: &[String],
    ) -> Result<Vec<Measurement>, EvaluateError> {
        let outcomes = self.builder.build_all(variants, self.jobs)?;
        Ok(outcomes.iter().map(|o| self.measure(reference, o, self.config.threads)).collect())
    }

    /// Measures one built variant against `reference` with `threads` OpenMP threads
    /// (`None`: the configuration's); a failed build is a `compile-error` measurement.
    pub fn measure(
        &self,
        reference: &Reference,
        built: &BuildOutcome,
        threads: Option<usize>,
    ) -> Measurement {
        self.measure_in(reference, built, threads, &[])
    }

    /// [`measure`](Self::measure) with `env` added to the program's
    /// environment (a point's run settings, `CodeOptions::run_env`).
    pub fn measure_in(
        &self,
        reference: &Reference,
        built: &BuildOutcome,
        threads: Option<usize>,
        env: &[(String, String)],
    ) -> Measurement {
        let mut config = MeasureConfig { threads, ..self.config.clone() };
        config.env.extend(env.iter().cloned());
        measure_outcome(reference.expected(), built, &self.slot, &config, reference.wall_s)
    }
}
