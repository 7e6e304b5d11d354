//! The affine scheduler (Pluto and isl style, RR-9110 §2–3): permutable bands
//! built row by row from ILPs on Farkas constraints, Feautrier rows when a band
//! would be empty, a fusion preorder given from outside.
//!
//! - `farkas`: dependence relation → linear constraints on form coefficients;
//!   `order`: the original order stated on the relations whose rational
//!   relaxation does not say it.
//! - `ilp`: the one lexmin entry point (CBC successive ILPs, or isl's exact
//!   integer optimisation, objective by objective).
//! - `driver`: the row-by-row construction for one fusion group, on
//!   `group` (its state, the row strategy), with `solver` (the lexmin
//!   wrapper), `constraints` (one row's ILPs),
//!   `nontrivial` (linear independence by branch and bound), `band` (band
//!   bookkeeping) and `unified` (the unified scheduler's strategy, §4).
//! - `tree`: rows and bands → isl schedule tree text.

pub mod farkas;
pub mod ilp;
pub mod order;

mod band;
mod constraints;
mod diamond;
mod driver;
mod group;
mod nontrivial;
mod solver;
mod tree;
mod unified;

use serde::{Deserialize, Serialize};

use model::deps::Dependences;
use model::isl::IslError;
use model::scop::Scop;
use vocab::knobs::SchedulerOptions;
use vocab::preorder::Preorder;

pub use ilp::memo::{InMemory, Key as MemoKey, Memo};
pub use ilp::Backend;
pub use tree::affine_text;

/// Which fusion structure to honour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fusion {
    /// As in the original program.
    Original,
    /// Adjacent original groups merged greedily, left to right, whenever the
    /// merged group still admits a shared outer loop.
    Max,
    /// An explicit preorder (the fusion space hands these out).
    Preorder(Preorder),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreOptions {
    pub fusion: Fusion,
    pub backend: Backend,
    /// Solve every ILP with both backends and fail if their optima differ.
    pub cross_check: bool,
    /// The unified scheduler's knobs (RR-9110 §4); `None`: the core scheduler
    /// alone (one proximity bound, coincidence first on every row, no slack).
    #[serde(default)]
    pub knobs: Option<SchedulerOptions>,
}

impl Default for CoreOptions {
    fn default() -> Self {
        CoreOptions { fusion: Fusion::Original, backend: Backend::Cbc, cross_check: false, knobs: None }
    }
}

impl CoreOptions {
    /// The unified scheduler with a fusion preorder (`None`: the original
    /// program's) and knob values.
    pub fn unified(preorder: Option<Preorder>, knobs: &SchedulerOptions) -> CoreOptions {
        CoreOptions {
            fusion: preorder.map(Fusion::Preorder).unwrap_or(Fusion::Original),
            knobs: Some(*knobs),
            ..Default::default()
        }
    }
}

/// Which ILP produced a schedule row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// Proximity-minimising row with zero distance on coincidence relations.
    Coincident,
    /// The same ILP with the coincidence requirement relaxed.
    Pluto,
    /// Feautrier-style: carries as many dependence groups as possible.
    Feautrier,
    /// A scalar row (no iterator coefficients) that orders the strongly
    /// connected components of the remaining dependences in phases: a
    /// sequence, as isl splits a graph it finds no coincident row for.
    Split,
    /// RR-9110 (5): carries as many spatial-proximity groups as possible with
    /// the smallest coefficient sum; a member of its permutable band.
    Spatial,
    /// The mirror of a skewed row, in the place of its band's time row
    /// (`diamond=on`: diamond tiles).
    Diamond,
}

/// One schedule dimension of one fusion group.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub group: usize,
    pub band: usize,
    pub kind: RowKind,
    pub coincident: bool,
    /// Per statement of the group: `(statement, iterator coefficients,
    /// parameter coefficients, constant)`.
    pub affine: Vec<(usize, Vec<i64>, Vec<i64>, i64)>,
    /// Dependence groups (statement pairs, `S1->S2`) whose every remaining
    /// instance pair this row separates.
    pub carries: Vec<String>,
    /// Spatial-proximity groups (their references) this row carries (unified
    /// scheduler only).
    #[serde(default)]
    pub spatial: Vec<String>,
}

/// GPU thread mapping of one band (RR-9110 §4.8): the coincident row that
/// carries spatial proximity goes to `x`, the other coincident rows to
/// `z, y, x` in reverse order. Positions are row indices within the band.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadMapping {
    pub group: usize,
    pub band: usize,
    pub threads: Vec<(usize, char)>,
}

/// The scheduler's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CoreSchedule {
    pub preorder: Preorder,
    /// isl schedule tree text, bands marked permutable and coincident.
    pub tree: String,
    pub rows: Vec<Row>,
    /// Number of lexmin problems solved (each may be several ILPs on CBC).
    pub lexmins: usize,
    /// Of those, answered by the memo ([`schedule_with`]).
    #[serde(default)]
    pub remembered: usize,
    /// Number of underlying ILP solves.
    pub ilps: u64,
    /// With `cross_check`: lexmins whose optima both backends found equal, and
    /// lexmins the isl backend gave up on (its operation quota).
    pub cross_checked: usize,
    pub cross_unchecked: usize,
    /// Target `gpu` only: the outermost band with coincident rows of each group.
    #[serde(default)]
    pub mapping: Vec<ThreadMapping>,
    /// Where the schedule departs from what the knobs ask, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("ILP solver: {0}")]
    Ilp(#[from] ilp::IlpError),
    #[error("the preorder {preorder} is illegal: {reason}")]
    IllegalPreorder { preorder: String, reason: String },
    #[error("the preorder {0} does not list every statement exactly once")]
    BadPreorder(String),
    #[error("the CBC and isl backends disagree on an ILP: {0}")]
    BackendsDisagree(String),
    #[error("no progress: {0}")]
    Stuck(String),
    #[error("the schedule failed the legality check: {0}")]
    Illegal(String),
}

/// The unified scheduler for one point's scheduler settings.
pub fn unified(
    scop: &Scop,
    deps: &Dependences,
    preorder: Option<Preorder>,
    knobs: &SchedulerOptions,
) -> Result<CoreSchedule, ScheduleError> {
    driver::schedule(scop, deps, &CoreOptions::unified(preorder, knobs), None)
}

/// Schedules `scop` under `deps` (validity = coincidence = proximity =
/// flow ∪ anti ∪ output) with the given fusion structure. The result has
/// passed the independent legality check.
pub fn schedule(scop: &Scop, deps: &Dependences, opts: &CoreOptions) -> Result<CoreSchedule, ScheduleError> {
    driver::schedule(scop, deps, opts, None)
}

/// [`schedule`], answering each lexmin that `memo` remembers from an
/// earlier schedule, and telling it the others: the same schedule, in less
/// time when schedules share ILPs.
pub fn schedule_with(
    scop: &Scop,
    deps: &Dependences,
    opts: &CoreOptions,
    memo: Option<&dyn Memo>,
) -> Result<CoreSchedule, ScheduleError> {
    driver::schedule(scop, deps, opts, memo)
}
