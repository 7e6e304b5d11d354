//! One place where build and measure meet: measure the original program once,
//! then evaluate variants against its outputs and time. Campaigns, the CLI and
//! the tests all go through [`Evaluator`].

use crate::build::{BuildError, BuildOutcome, Builder};
use crate::machine::Slot;
use crate::measure::{measure, measure_outcome, MeasureConfig, Measurement, Status};
use crate::runtime::DumpedArray;

/// The original program's measurement and outputs.
#[derive(Debug, Clone)]
pub struct Reference {
    pub measurement: Measurement,
    pub dump: Vec<DumpedArray>,
    /// Process wall time of its slowest run: scales variant timeouts.
    pub wall_s: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvaluateError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("the original program does not compile:\n{0}")]
    OriginalCompile(String),
    #[error("the original program failed ({status:?}): {reason}")]
    OriginalFailed { status: Status, reason: String },
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
    /// Builds and measures the original program; it must run and dump.
    pub fn reference(&self, original: &str) -> Result<Reference, EvaluateError> {
        let binary = match self.builder.build(original) {
            BuildOutcome::Built { binary, .. } => binary,
            BuildOutcome::Failed { message } => return Err(EvaluateError::OriginalCompile(message)),
        };
        // The original runs on the same slot with the same threads as variants,
        // so that speedups compare like with like.
        let measured = measure(&binary, &self.slot, &self.config, None);
        match (measured.measurement.status, measured.dump) {
            (Status::Ok, Some(dump)) => Ok(Reference {
                wall_s: measured.measurement.wall_max_s(),
                measurement: measured.measurement,
                dump,
            }),
            _ => Err(EvaluateError::OriginalFailed {
                status: measured.measurement.status,
                reason: measured.measurement.reason.clone(),
            }),
        }
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
        Ok(outcomes
            .iter()
            .map(|o| measure_outcome(&reference.dump, o, &self.slot, &self.config, reference.wall_s))
            .collect())
    }
}
