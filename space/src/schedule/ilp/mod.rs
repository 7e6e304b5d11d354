//! Lexicographic minimisation of integer linear programs.
//!
//! The affine scheduler asks one question many times: "among the integer points
//! of this polyhedron, which minimises these objectives in order?" This module is
//! its only solver entry point, with two interchangeable backends:
//!
//! - [`Backend::Cbc`]: COIN-OR CBC through `good_lp`, one ILP per objective,
//!   each solved with the earlier objectives pinned at their optima, except
//!   non-negative objectives that the last point already makes zero (the
//!   scheduler's long tails of mostly-zero coefficients). Floating
//!   point and fragile outside a finite box, so it only ever sees one, and
//!   every answer is rounded and then checked exactly in integers here.
//! - [`Backend::Isl`]: isl's exact integer programming: one exact minimum per
//!   objective (`isl_set_min_val`), each pinned before the next.
//!
//! Both are kept because each checks the other: the tests compare their optimal
//! objective values (and a brute-force enumeration) on hundreds of random
//! problems. Both backends needed workarounds for solver bugs those tests
//! found; the module docs of `cbc` and `isl` say which and why.
//!
//! Only the objective values are canonical. Variables that no objective pins
//! are tie-broken differently by the two backends (CBC: whatever its last solve
//! returned, pulled towards zero if it lies far out; isl: the lexicographically
//! smallest point when isl finds it, else any point), so callers who need a
//! unique point must add objectives for it.
//!
//! Files: this one holds the model ([`Problem`]) and the entry points;
//! `cbc` the CBC backend, with `lattice` (equalities eliminated exactly),
//! `presolve` (gcd division, parallel rows merged) and `fold` (runs of
//! single-variable objectives as one solve) for it; `isl` the isl backend;
//! `tests` both against each other and brute force; `memo` answers
//! remembered across schedules.

use std::cell::Cell;

use model::isl::new_context;

/// An integer variable with optional bounds.
///
/// Bounds are kept apart from general constraints because both backends have
/// a cheaper native form for them (column bounds in CBC), and because most
/// scheduler variables are bounded coefficients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// For debugging and error messages only; the backends use indices.
    pub name: String,
    /// Inclusive lower bound; `None` is unbounded below.
    pub lower: Option<i64>,
    /// Inclusive upper bound; `None` is unbounded above.
    pub upper: Option<i64>,
}

/// How a constraint's affine expression relates to zero.
///
/// Only `==` and `>=` exist, as in isl's own constraint form: `<=` is a `>=`
/// with negated coefficients, so a third variant would only add cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// `sum + constant == 0`
    Eq,
    /// `sum + constant >= 0`
    Ge,
}

/// One affine constraint `sum(coeff * var) + constant (== | >=) 0`.
///
/// Coefficients are a sparse list of `(variable index, coefficient)`; a
/// variable listed twice counts with the sum of its coefficients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub coeffs: Vec<(usize, i64)>,
    pub constant: i64,
    pub relation: Relation,
}

/// An integer linear program with lexicographic objectives.
///
/// Minimise objectives[0], then objectives[1] among its optima, and so on.
/// Objectives are linear (no constant: it would not change the optimum).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    pub vars: Vec<Var>,
    pub constraints: Vec<Constraint>,
    pub objectives: Vec<Vec<(usize, i64)>>,
}

impl Problem {
    /// An empty problem: no variables, no constraints, no objectives.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an integer variable and returns its index, which constraints and
    /// objectives use to refer to it.
    pub fn add_var(&mut self, name: impl Into<String>, lower: Option<i64>, upper: Option<i64>) -> usize {
        self.vars.push(Var { name: name.into(), lower, upper });
        self.vars.len() - 1
    }

    /// Adds `sum(coeff * var) + constant (== | >=) 0`.
    pub fn add_constraint(
        &mut self,
        coeffs: impl Into<Vec<(usize, i64)>>,
        constant: i64,
        relation: Relation,
    ) {
        self.constraints.push(Constraint { coeffs: coeffs.into(), constant, relation });
    }

    /// Appends an objective, minimised after (and subordinate to) all earlier ones.
    pub fn add_objective(&mut self, coeffs: impl Into<Vec<(usize, i64)>>) {
        self.objectives.push(coeffs.into());
    }

    /// Every variable index in range, so that backends can index without checks.
    fn validate(&self) -> Result<(), IlpError> {
        let n = self.vars.len();
        let check = |coeffs: &[(usize, i64)], what: &dyn Fn() -> String| -> Result<(), IlpError> {
            match coeffs.iter().find(|&&(i, _)| i >= n) {
                Some(&(i, _)) => Err(IlpError::Solver(format!(
                    "{}: variable index {i} out of range ({n} variables)",
                    what()
                ))),
                None => Ok(()),
            }
        };
        for (c, constraint) in self.constraints.iter().enumerate() {
            check(&constraint.coeffs, &|| format!("constraint {c}"))?;
        }
        for (k, objective) in self.objectives.iter().enumerate() {
            check(objective, &|| format!("objective {k}"))?;
        }
        Ok(())
    }

    /// Whether `values` satisfies every bound and constraint, in exact integer
    /// arithmetic. CBC works in floating point, so its rounded answers are
    /// checked here rather than trusted.
    fn satisfied_by(&self, values: &[i64]) -> bool {
        let bounds_ok = self
            .vars
            .iter()
            .zip(values)
            .all(|(var, &x)| var.lower.is_none_or(|l| x >= l) && var.upper.is_none_or(|u| x <= u));
        bounds_ok
            && self.constraints.iter().all(|c| {
                let value = eval(&c.coeffs, values) + c.constant as i128;
                match c.relation {
                    Relation::Eq => value == 0,
                    Relation::Ge => value >= 0,
                }
            })
    }

    /// The value of every objective at `values`.
    fn objective_values(&self, values: &[i64]) -> Result<Vec<i64>, IlpError> {
        self.objectives
            .iter()
            .enumerate()
            .map(|(k, o)| {
                i64::try_from(eval(o, values))
                    .map_err(|_| IlpError::Solver(format!("objective {k} overflows i64 at the optimum")))
            })
            .collect()
    }
}

/// `sum(coeff * values[var])` in i128, wide enough that i64 inputs never overflow
/// for any realistic number of terms.
fn eval(coeffs: &[(usize, i64)], values: &[i64]) -> i128 {
    coeffs.iter().map(|&(i, a)| a as i128 * values[i] as i128).sum()
}

/// Which solver answers [`lexmin`]. Serialisable because a tuning campaign
/// records which backend produced its schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Backend {
    /// COIN-OR CBC through good_lp: successive ILPs, floats checked exactly.
    Cbc,
    /// isl's exact integer optimisation, one objective at a time.
    Isl,
}

/// The answer to a feasible or infeasible problem; unboundedness is an error
/// ([`IlpError::Unbounded`]) because a scheduler that builds an unbounded
/// problem has a bug, whereas infeasibility is an ordinary answer (e.g. no
/// legal schedule with these constraints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `values[i]` is variable `i`; `objective_values[k]` is objective `k`
    /// there, the lexicographic optimum.
    Optimal { values: Vec<i64>, objective_values: Vec<i64> },
    /// No integer point satisfies the bounds and constraints.
    Infeasible,
}

/// Why [`lexmin`] gave no [`Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum IlpError {
    /// Objective `objective` (index into `Problem::objectives`) is unbounded
    /// below once the earlier objectives are at their optima.
    #[error("objective {objective} is unbounded below")]
    Unbounded { objective: usize },
    /// The backend failed or gave an answer that did not check out.
    #[error("ILP solver: {0}")]
    Solver(String),
    /// The isl backend reached its operation cap ([`set_isl_quota`]).
    #[error("isl's operation quota or deadline ran out")]
    Quota,
}

thread_local! {
    static SOLVES: Cell<u64> = const { Cell::new(0) };
}

/// Counts of solves for benchmarks: number of ILPs solved by this thread so far.
///
/// One per underlying solver call (a CBC solve, an isl lexmin or optimum
/// query), so that the cost of a scheduling strategy can be compared across
/// backends and runs. Thread-local because each scheduling thread solves its
/// own problems and benchmarks measure one thread.
pub fn solves() -> u64 {
    SOLVES.with(Cell::get)
}

fn count_solve() {
    SOLVES.with(|s| s.set(s.get() + 1));
}

thread_local! {
    static ISL_QUOTA: Cell<u64> = const { Cell::new(0) };
}

/// Caps the work of each isl-backend lexmin on this thread (isl's operation
/// count; 0 = no cap). isl's exact ILP can take minutes on the largest
/// scheduler problems; past the cap the lexmin fails with [`IlpError::Quota`].
pub fn set_isl_quota(max_operations: u64) {
    ISL_QUOTA.with(|q| q.set(max_operations));
}

thread_local! {
    static ISL_DEADLINE: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// Caps the total time of isl-backend lexmins on this thread: past
/// `deadline`, each one fails with [`IlpError::Quota`] before its next isl
/// call. The operation quota bounds one call; this bounds a whole
/// cross-checked schedule, whose feasibility searches make thousands.
pub fn set_isl_deadline(deadline: Option<std::time::Instant>) {
    ISL_DEADLINE.with(|d| d.set(deadline));
}

fn isl_past_deadline() -> bool {
    ISL_DEADLINE.with(Cell::get).is_some_and(|d| std::time::Instant::now() >= d)
}

/// Minimises `problem.objectives` lexicographically over the integer points
/// satisfying its bounds and constraints.
///
/// With no objectives, this is a feasibility test that returns some point.
pub fn lexmin(problem: &Problem, backend: Backend) -> Result<Outcome, IlpError> {
    Ok(lexmin_below(problem, backend, None)?.expect("no cutoff, no early stop"))
}

/// [`lexmin`], stopped early when its objective values cannot be
/// lexicographically below `cutoff` (one value per objective): then `None`,
/// as soon as the optima found so far show it (a branch and bound that only
/// wants strictly better solutions need not solve the rest).
pub fn lexmin_below(
    problem: &Problem,
    backend: Backend,
    cutoff: Option<&[i64]>,
) -> Result<Option<Outcome>, IlpError> {
    problem.validate()?;
    if cutoff.is_some_and(|c| c.len() != problem.objectives.len()) {
        return Err(IlpError::Solver("a cutoff needs one value per objective".into()));
    }
    let cutoff = Cutoff { bound: cutoff, below: false };
    match backend {
        Backend::Cbc => cbc::lexmin(problem, cutoff),
        Backend::Isl => isl::lexmin(problem, cutoff),
    }
}

/// Whether the optima found so far can still end lexicographically below a
/// cutoff.
struct Cutoff<'a> {
    bound: Option<&'a [i64]>,
    /// The optima so far are already below the cutoff's prefix.
    below: bool,
}

impl Cutoff<'_> {
    /// Records that objective `k` (all earlier ones recorded) has optimum
    /// `value`; `false` once the vector cannot end below the cutoff.
    fn admits(&mut self, k: usize, value: i64) -> bool {
        let Some(bound) = self.bound else { return true };
        if self.below || value < bound[k] {
            self.below = true;
            return true;
        }
        value == bound[k] && k + 1 < bound.len()
    }
}

/// Whether `objective` is a positive combination of variables bounded below
/// by zero, so that its minimum is zero exactly when it can be made zero.
fn nonnegative(problem: &Problem, objective: &[(usize, i64)]) -> bool {
    !objective.is_empty()
        && objective.iter().all(|&(v, a)| a > 0 && problem.vars[v].lower.is_some_and(|l| l >= 0))
}

mod cbc;
mod fold;
mod isl;
mod lattice;
pub mod memo;
mod presolve;

#[cfg(test)]
mod tests;
