//! From a point to a program: its schedule (the original order, isl's scheduler or ours
//! with the point's preorder and knobs), checked legal, and the code generated for it with
//! the point's tiles, threads and code-generation knobs. `run`, the campaign's scheduling
//! children and the tests all go through here; a failure is a [`Failure`] with the status
//! it is recorded under.

use std::borrow::Cow;

use model::deps::Dependences;
use model::scop::{Scop, Source};
use serde::{Deserialize, Serialize};
use space::schedule::{CoreOptions, Memo};
use vocab::knobs::{CodeOptions, Point, Scheduler};

use crate::measure::Status;
use codegen::{self, CodegenError, CodegenOptions};

/// Why a point produced no program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub status: Status,
    pub reason: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.status)
    }
}

impl std::error::Error for Failure {}

/// A point's schedule tree and generated program (for a GPU point, its
/// emulation) with a GPU point's CUDA form, or why there is none.
pub type Answer = Result<(String, String, Option<codegen::Cuda>), Failure>;

/// The model a point's schedule and code are made from: the SCoP as
/// extracted, for a GPU point or with `expand=on` with its scalars and
/// arrays expanded, and with `transpose=on` (CPU variants) the SCoP reading its
/// read-only matrices that are walked down their columns through
/// transposed copies ([`space::layout`]), its dependences analysed again.
pub fn model<'a>(
    scop: &'a Scop,
    deps: &'a Dependences,
    code: &CodeOptions,
    gpu: bool,
) -> Result<(Cow<'a, Scop>, Cow<'a, Dependences>), Failure> {
    if gpu {
        return expanded(scop, deps);
    }
    let (scop, deps) = match code.expand {
        true => expanded(scop, deps)?,
        false => (Cow::Borrowed(scop), Cow::Borrowed(deps)),
    };
    if !code.transpose {
        return Ok((scop, deps));
    }
    let failed = |e: model::isl::IslError| Failure {
        status: Status::ScheduleError,
        reason: format!("transposed copies: {e}"),
    };
    let ctx = model::isl::new_context();
    let arrays = space::layout::candidates(&ctx, &scop).map_err(failed)?;
    let transposed = space::layout::transpose(&ctx, &scop, &arrays).map_err(failed)?;
    if transposed.copies.is_empty() {
        return Ok((scop, deps));
    }
    let deps = model::deps::analyze_in(&ctx, &transposed).map_err(failed)?;
    Ok((Cow::Owned(transposed), Cow::Owned(deps)))
}

/// A GPU point's model: the SCoP with the scalars that would keep a loop
/// from running in parallel expanded ([`model::expansion`]), its
/// dependences analysed again.
fn expanded<'a>(
    scop: &'a Scop,
    deps: &'a Dependences,
) -> Result<(Cow<'a, Scop>, Cow<'a, Dependences>), Failure> {
    let failed = |e: model::isl::IslError| Failure {
        status: Status::ScheduleError,
        reason: format!("array expansion: {e}"),
    };
    let ctx = model::isl::new_context();
    let mut expanded = model::expansion::expand(&ctx, scop).map_err(failed)?;
    if expanded.expansions.is_empty() {
        return Ok((Cow::Borrowed(scop), Cow::Borrowed(deps)));
    }
    codegen::state_expansion_extents(&ctx, &mut expanded)
        .map_err(|e| Failure { status: Status::CodegenError, reason: e.to_string() })?;
    let deps = model::deps::analyze_in(&ctx, &expanded).map_err(failed)?;
    Ok((Cow::Owned(expanded), Cow::Owned(deps)))
}

/// The schedule tree of `point` (isl's YAML text).
pub fn schedule_of(scop: &Scop, deps: &Dependences, point: &Point) -> Result<String, Failure> {
    let (scop, deps) = model(scop, deps, &point.code, point.on_gpu())?;
    schedule_modelled(scop.as_ref(), deps.as_ref(), point, None)
}

/// [`schedule_of`] on the point's [`model`], made by the caller; our
/// scheduler's lexmins answered from `memo` where an earlier schedule asked
/// the same (`space::schedule::schedule_with`).
pub fn schedule_modelled(
    scop: &Scop,
    deps: &Dependences,
    point: &Point,
    memo: Option<&dyn Memo>,
) -> Result<String, Failure> {
    let failed = |reason: String| Failure { status: Status::ScheduleError, reason };
    match &point.scheduler {
        Scheduler::Original => Ok(scop.schedule.clone()),
        Scheduler::Isl => {
            space::reference::isl_schedule(scop, deps).map_err(|e| failed(format!("isl's scheduler: {e}")))
        }
        Scheduler::IslGpu => space::reference::isl_gpu_schedule(scop, deps)
            .map_err(|e| failed(format!("isl's scheduler for the GPU: {e}"))),
        Scheduler::Unified { preorder, options } => {
            let opts = CoreOptions::unified(preorder.clone(), &options.scheduler());
            let schedule = space::schedule::schedule_with(scop, deps, &opts, memo);
            Ok(schedule.map_err(|e| failed(e.to_string()))?.tree)
        }
        Scheduler::Peer { name } => {
            Err(failed(format!("the peer {name} has no schedule of ours: it builds the program as written")))
        }
    }
}

/// Code generation's options for `point`: its tiles, threads and knobs.
pub fn codegen_options(point: &Point) -> CodegenOptions {
    let knobs = match &point.scheduler {
        Scheduler::Unified { options, .. } => Some(options),
        _ => None,
    };
    let mut opts = CodegenOptions {
        code: point.code.clone(),
        ..CodegenOptions::for_point(point.tiles.clone(), point.threads, knobs)
    };
    if point.on_gpu() {
        (opts.gpu, opts.openmp) = (true, false);
    }
    opts
}

/// The program `tree` gives under `point`'s tiles, threads and code-generation knobs.
pub fn generate(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    point: &Point,
    tree: &str,
) -> Result<String, Failure> {
    generate_with(source, scop, deps, &codegen_options(point), tree)
}

/// The program `tree` gives under `opts`.
pub fn generate_with(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    opts: &CodegenOptions,
    tree: &str,
) -> Result<String, Failure> {
    Ok(generate_variant(source, scop, deps, opts, tree)?.program)
}

/// The whole variant (a GPU variant's CUDA form too), failures as statuses.
pub fn generate_variant(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    opts: &CodegenOptions,
    tree: &str,
) -> Result<codegen::Variant, Failure> {
    let (scop, deps) = model(scop, deps, &opts.code, opts.gpu)?;
    generate_modelled(source, scop.as_ref(), deps.as_ref(), opts, tree)
}

/// [`generate_variant`] on the point's [`model`], made by the caller.
pub fn generate_modelled(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    opts: &CodegenOptions,
    tree: &str,
) -> Result<codegen::Variant, Failure> {
    codegen::generate(source, scop, deps, tree, opts).map_err(|e| match e {
        // An illegal schedule is a bug of ours: recorded, never run.
        CodegenError::Illegal(_) => Failure { status: Status::Illegal, reason: e.to_string() },
        e => Failure { status: Status::CodegenError, reason: e.to_string() },
    })
}
