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
//! found; the module docs of `cbc` and `isl` below say which and why.
//!
//! Only the objective values are canonical. Variables that no objective pins
//! are tie-broken differently by the two backends (CBC: whatever its last solve
//! returned, pulled towards zero if it lies far out; isl: the lexicographically
//! smallest point when isl finds it, else any point), so callers who need a
//! unique point must add objectives for it.

use std::cell::Cell;

use crate::isl::new_context;

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

mod cbc {
    //! Successive CBC solves, with defences against CBC's weak spots. Each
    //! was found by the random tests below (run with 20 000 problems per
    //! seed instead of 300), CBC being 2.10.8 (Debian):
    //!
    //! - Wrong optima: with its defaults, CBC returned suboptimal points as
    //!   "proven optimal" on tiny bounded problems, e.g. 0 instead of -1 on
    //!   three variables in [-5, 5]. The culprit is probing (a known bug,
    //!   coin-or/Cbc#293), both in CGL preprocessing and as a cut generator,
    //!   so both are off; the other cuts stay on. Preprocessing off exposes
    //!   another bug, an abort of the whole process on an assertion in
    //!   `OsiClpSolverInterface::crunch` for models of fewer than 3 rows
    //!   (coin-or/Clp#288), avoided by padding with redundant rows.
    //! - Infinite bounds: with preprocessing, a zero-cost column without a
    //!   lower bound came back with a value violating its constraints, and
    //!   cuts went wrong with free integer columns. So CBC only ever sees a
    //!   box: each missing bound becomes `±B` ([`artificial_bound`]). A point
    //!   left far out in the box (free variables pushed to its boundary) is
    //!   pulled back at the end by one more solve minimising the L1 norm of
    //!   the unbounded variables with every objective pinned.
    //! - Unboundedness, then, is decided exactly and first, before each
    //!   objective is solved: objective `k` is unbounded exactly when the
    //!   recession cone has an integer direction that decreases it while
    //!   keeping the earlier objectives constant (found by CBC in a small box,
    //!   checked in integers) and the problem has an integer point (Meyer:
    //!   with rational data a non-empty integer hull has the polyhedron's
    //!   recession cone). First, because the box optimum of an unbounded
    //!   objective sits on the box boundary, which branch and bound may take
    //!   very long to reach.
    //! - Equalities: on `2x - 2y = 1` CBC branches (practically) forever,
    //!   and on `3a - 3b + 3c + d = 1` with `d` in [-5, 5] over a wide box it
    //!   cannot prove that `d = 5` is impossible: branch and bound has no
    //!   notion of lattices. So CBC never sees an equality: each solve first
    //!   eliminates them exactly ([`lattice`]: the problem's equalities and
    //!   the pinned objectives), and CBC works on the lattice coordinates. A
    //!   presolve also divides each constraint by the gcd of its coefficients
    //!   (an inequality's constant is floored: a valid cut). A time limit
    //!   bounds what is left (lattice-free regions cut out by inequalities
    //!   alone), as an error.
    //! - Floats: answers are rounded, checked integral, and checked against
    //!   the problem in exact integer arithmetic.

    use super::{count_solve, eval, Constraint, Cutoff, IlpError, Outcome, Problem, Relation, Var};
    use good_lp::{
        coin_cbc, variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
        SolverModel, Variable, WithTimeLimit,
    };

    /// Per CBC call. Scheduler ILPs solve in milliseconds; this only turns
    /// pathological branching (lattice-free unbounded regions the presolve
    /// does not recognise) into an error instead of a hang.
    const TIME_LIMIT_SECONDS: f64 = 20.0;

    /// See the padding in [`solve`].
    const MIN_ROWS: usize = 3;

    /// Bound on the components of a recession direction: a cone is
    /// scale-invariant, so any bound works as long as the smallest integer
    /// direction fits, which for scheduler-sized data it does by far.
    const RAY_BOUND: i64 = 1 << 20;

    /// The `B` that replaces missing bounds: 64 times the largest coefficient
    /// times the largest bound or constant, so that the interesting points of
    /// the problem lie deep inside the box, but at least 2^20 and at most
    /// 2^40. Not larger, because CBC's tolerances are absolute (1e-6 for
    /// integrality): with `B = 2^30`, before equalities were eliminated, a
    /// 4-variable problem with a bounded objective ran into the time limit
    /// because its cuts could no longer close a lattice gap, while `2^20`
    /// solved it in 3 ms. The price: a bounded optimum that needs a value
    /// beyond `B` is not found (CBC answers with the box optimum, or
    /// infeasible); scheduler ILPs take values in the tens. Unboundedness
    /// does not depend on `B`.
    pub(super) fn artificial_bound(problem: &Problem) -> i64 {
        let coeffs =
            problem.constraints.iter().flat_map(|c| &c.coeffs).chain(problem.objectives.iter().flatten());
        let c = coeffs.map(|&(_, a)| a.unsigned_abs()).max().unwrap_or(1).max(1) as i128;
        let bounds = problem.vars.iter().flat_map(|v| [v.lower, v.upper]).flatten();
        let constants = problem.constraints.iter().map(|c| c.constant);
        let m = bounds.chain(constants).map(|x| x.unsigned_abs()).max().unwrap_or(1).max(1) as i128;
        (64 * c * m).clamp(1 << 20, 1 << 40) as i64
    }

    /// `problem` with every missing bound replaced by `±b`.
    fn boxed(problem: &Problem, b: i64) -> Problem {
        let vars = problem
            .vars
            .iter()
            .map(|v| Var { name: v.name.clone(), lower: v.lower.or(Some(-b)), upper: v.upper.or(Some(b)) })
            .collect();
        Problem { vars, ..problem.clone() }
    }

    /// Every integer solution `x` of a system of equalities, as
    /// `x = origin + basis z` for `z` in `Z^d`, with `z = inverse x`.
    pub(super) struct Lattice {
        pub origin: Vec<i128>,
        /// `n` rows of `d` entries.
        pub basis: Vec<Vec<i128>>,
        /// `d` rows of `n` entries.
        pub inverse: Vec<Vec<i128>>,
    }

    /// The integer solutions of `rows` (each `(a, b)` is `a . x = b`) over
    /// `n` variables, `None` when there are none.
    ///
    /// Unimodular column operations (extended Euclid on each row in turn,
    /// which maps `Z^n` onto itself) bring the system to lower echelon form
    /// with one pivot column per independent row; each row then fixes its
    /// pivot's value by forward substitution, which must be an integer, and a
    /// dependent row must agree with the values already fixed. The other
    /// columns are free: they are `z`. `U` (with `x = U y`) and its inverse
    /// `V` are tracked along. Exact, in checked i128.
    pub(super) fn lattice(n: usize, mut rows: Vec<(Vec<i128>, i128)>) -> Result<Option<Lattice>, IlpError> {
        let overflow = || IlpError::Solver("i128 overflow while eliminating equalities".into());
        let identity =
            || -> Vec<Vec<i128>> { (0..n).map(|i| (0..n).map(|j| (i == j) as i128).collect()).collect() };
        let (mut u, mut v) = (identity(), identity());
        let mut pivots: Vec<i128> = Vec::new(); // values of y_0 .. y_{p-1}
        for i in 0..rows.len() {
            let p = pivots.len();
            // Until only the pivot column p is non-zero among p.. in row i:
            // move the smallest entry to p, reduce the others modulo it.
            while let Some(j) = (p..n).filter(|&j| rows[i].0[j] != 0).min_by_key(|&j| rows[i].0[j].abs()) {
                if j != p {
                    // Swap columns p and j of A and U, rows p and j of V.
                    for (row, _) in &mut rows[i..] {
                        row.swap(p, j);
                    }
                    for row in &mut u {
                        row.swap(p, j);
                    }
                    v.swap(p, j);
                }
                let mut reduced = true;
                for j in p + 1..n {
                    let q = rows[i].0[j] / rows[i].0[p];
                    if q != 0 {
                        // Column j -= q column p in A and U; row p += q row j in V.
                        for row in rows[i..].iter_mut().map(|(row, _)| row).chain(u.iter_mut()) {
                            row[j] = row[j]
                                .checked_sub(q.checked_mul(row[p]).ok_or_else(overflow)?)
                                .ok_or_else(overflow)?;
                        }
                        let (head, tail) = v.split_at_mut(j);
                        for (a, &b) in head[p].iter_mut().zip(&tail[0]) {
                            *a =
                                a.checked_add(q.checked_mul(b).ok_or_else(overflow)?).ok_or_else(overflow)?;
                        }
                    }
                    reduced &= rows[i].0[j] == 0;
                }
                if reduced {
                    break;
                }
            }
            let (row, b) = &rows[i];
            let mut rest = *b;
            for (a, y) in row.iter().zip(&pivots) {
                rest = rest.checked_sub(a.checked_mul(*y).ok_or_else(overflow)?).ok_or_else(overflow)?;
            }
            if p < n && row[p] != 0 {
                if rest % row[p] != 0 {
                    return Ok(None);
                }
                pivots.push(rest / row[p]);
            } else if rest != 0 {
                return Ok(None);
            }
        }
        let p = pivots.len();
        let mut origin = Vec::with_capacity(n);
        for row in &u {
            let mut o = 0i128;
            for (a, y) in row.iter().zip(&pivots) {
                o = o.checked_add(a.checked_mul(*y).ok_or_else(overflow)?).ok_or_else(overflow)?;
            }
            origin.push(o);
        }
        Ok(Some(Lattice {
            origin,
            basis: u.iter().map(|row| row[p..].to_vec()).collect(),
            inverse: v.split_off(p),
        }))
    }

    /// One CBC solve of `problem`, whose variables must all be bounded:
    /// minimise `objective` subject to the problem and `objective_j ==
    /// fixed[j]` for the earlier objectives. `None` is infeasible; a point is
    /// checked against `problem`.
    ///
    /// CBC never sees an equality: they are eliminated exactly first
    /// ([`lattice`]), and CBC solves for the lattice coordinates `z` under
    /// the inequalities and the variables' bounds rewritten in `z`. On
    /// equalities over wide ranges, branch and bound cannot prove lattice
    /// gaps (on `3a - 3b + 3c + d = 1` with `d` in [-5, 5] it searched until
    /// the time limit for `d = 5`), which the elimination makes explicit.
    fn solve(
        problem: &Problem,
        objective: &[(usize, i64)],
        fixed: &[i64],
    ) -> Result<Option<Vec<i64>>, IlpError> {
        count_solve();
        let n = problem.vars.len();
        let dense = |coeffs: &[(usize, i64)]| {
            let mut row = vec![0i128; n];
            for &(i, a) in coeffs {
                row[i] += a as i128;
            }
            row
        };
        let equalities = problem
            .constraints
            .iter()
            .filter(|c| c.relation == Relation::Eq)
            .map(|c| (dense(&c.coeffs), -(c.constant as i128)))
            .chain(fixed.iter().enumerate().map(|(k, &v)| (dense(&problem.objectives[k]), v as i128)))
            .collect();
        let Some(lattice) = lattice(n, equalities)? else { return Ok(None) };
        let Lattice { origin, basis, inverse } = &lattice;
        let d = inverse.len();
        let overflow = || IlpError::Solver("i128 overflow while rewriting the problem on its lattice".into());
        // a . (origin + basis z) = (a basis) . z + a . origin, with `a`
        // sparse (repeated indices add up) and the basis rows' non-zeros.
        let sparse_basis: Vec<Vec<(usize, i128)>> = basis
            .iter()
            .map(|row| row.iter().copied().enumerate().filter(|&(_, b)| b != 0).collect())
            .collect();
        let rewrite = |a: &[(usize, i64)]| -> Result<(Vec<i128>, i128), IlpError> {
            let mut coeffs = vec![0i128; d];
            let mut constant = 0i128;
            for &(i, ai) in a.iter().filter(|&&(_, ai)| ai != 0) {
                let ai = ai as i128;
                constant = constant
                    .checked_add(ai.checked_mul(origin[i]).ok_or_else(overflow)?)
                    .ok_or_else(overflow)?;
                for &(j, b) in &sparse_basis[i] {
                    coeffs[j] = coeffs[j]
                        .checked_add(ai.checked_mul(b).ok_or_else(overflow)?)
                        .ok_or_else(overflow)?;
                }
            }
            Ok((coeffs, constant))
        };
        let bound = |v: &super::Var| -> (i128, i128) {
            let (Some(l), Some(u)) = (v.lower, v.upper) else { unreachable!("CBC only sees boxed problems") };
            (l as i128, u as i128)
        };
        // Bounds on z from z = inverse x over the box; then each x_i's bounds,
        // directly on z_j when x_i = origin_i + a z_j, else as a row.
        let mut z_bounds: Vec<(i128, i128)> = Vec::with_capacity(d);
        for row in inverse {
            let (mut lo, mut hi) = (0i128, 0i128);
            for (k, &a) in row.iter().enumerate() {
                let (l, u) = bound(&problem.vars[k]);
                let (x, y) = (a.checked_mul(l).ok_or_else(overflow)?, a.checked_mul(u).ok_or_else(overflow)?);
                lo = lo.checked_add(x.min(y)).ok_or_else(overflow)?;
                hi = hi.checked_add(x.max(y)).ok_or_else(overflow)?;
            }
            z_bounds.push((lo, hi));
        }
        // Rows as (coefficients on z, lower, upper) of `coeffs . z`.
        let mut rows: Vec<(Vec<i128>, Option<i128>, Option<i128>)> = Vec::new();
        for (i, v) in problem.vars.iter().enumerate() {
            let (l, u) = bound(v);
            let (l, u) = (
                l.checked_sub(origin[i]).ok_or_else(overflow)?,
                u.checked_sub(origin[i]).ok_or_else(overflow)?,
            );
            let nonzero: Vec<usize> = (0..d).filter(|&j| basis[i][j] != 0).collect();
            match nonzero[..] {
                [] if l <= 0 && 0 <= u => {}
                [] => return Ok(None),
                [j] => {
                    let a = basis[i][j];
                    let (lo, hi) = if a > 0 { (l, u) } else { (-u, -l) };
                    let a = a.abs();
                    let (lo, hi) = (lo.div_euclid(a) + (lo.rem_euclid(a) != 0) as i128, hi.div_euclid(a));
                    let zb = &mut z_bounds[j];
                    *zb = (zb.0.max(lo), zb.1.min(hi));
                }
                _ => rows.push((basis[i].clone(), Some(l), Some(u))),
            }
        }
        for c in problem.constraints.iter().filter(|c| c.relation == Relation::Ge) {
            let (coeffs, constant) = rewrite(&c.coeffs)?;
            let constant = constant + c.constant as i128;
            if coeffs.iter().all(|&a| a == 0) {
                if constant < 0 {
                    return Ok(None);
                }
                continue;
            }
            rows.push((coeffs, Some(-constant), None));
        }
        let (goal, _) = rewrite(objective)?;
        if z_bounds.iter().any(|&(lo, hi)| lo > hi) {
            return Ok(None);
        }
        let z = if d == 0 {
            Vec::new()
        } else {
            match cbc(&z_bounds, &rows, &goal)? {
                Some(z) => z,
                None => return Ok(None),
            }
        };
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let mut x = origin[i];
            for j in 0..d {
                x = x
                    .checked_add(basis[i][j].checked_mul(z[j]).ok_or_else(overflow)?)
                    .ok_or_else(overflow)?;
            }
            values.push(i64::try_from(x).map_err(|_| overflow())?);
        }
        let pinned =
            fixed.iter().enumerate().all(|(k, &v)| eval(&problem.objectives[k], &values) == v as i128);
        if d == 0 && !problem.satisfied_by(&values) {
            // The equalities fix every variable, and that point fails an inequality.
            return Ok(None);
        }
        if !pinned || !problem.satisfied_by(&values) {
            return Err(IlpError::Solver(format!("CBC's point {values:?} violates the problem")));
        }
        Ok(Some(values))
    }

    /// CBC itself: minimise `goal . z` over integer `z` within `bounds` and
    /// `lower <= coeffs . z <= upper` for each row. All data is integer; it
    /// must be exact in f64.
    fn cbc(
        bounds: &[(i128, i128)],
        rows: &[(Vec<i128>, Option<i128>, Option<i128>)],
        goal: &[i128],
    ) -> Result<Option<Vec<i128>>, IlpError> {
        let exact = |x: i128| -> Result<f64, IlpError> {
            if x.unsigned_abs() > 1 << 53 {
                return Err(IlpError::Solver(format!("{x} is too large for CBC's floating point")));
            }
            Ok(x as f64)
        };
        // CBC's factorisation must not run on a threaded BLAS (`crate::blas`).
        crate::blas::single_threaded();
        let mut vars = ProblemVariables::new();
        let mut zs: Vec<Variable> = Vec::with_capacity(bounds.len());
        for &(lo, hi) in bounds {
            // Beyond 2^52 nothing is exact anyway; such bounds only arise from
            // the artificial box, so clamping them loses nothing of interest.
            let (lo, hi) = (lo.max(-(1 << 52)), hi.min(1 << 52));
            zs.push(vars.add(variable().integer().min(exact(lo)?).max(exact(hi)?)));
        }
        let expr = |coeffs: &[i128]| -> Result<Expression, IlpError> {
            let mut e = Expression::from(0.0);
            for (j, &a) in coeffs.iter().enumerate().filter(|(_, &a)| a != 0) {
                e.add_mul(exact(a)?, zs[j]);
            }
            Ok(e)
        };
        let mut model = vars.minimise(expr(goal)?).using(coin_cbc);
        // good_lp sets CBC's log level to 0 already; these also cover the
        // preprocessing and LP layers, so nothing reaches stdout.
        model.set_parameter("logLevel", "0");
        model.set_parameter("slogLevel", "0");
        // CBC 2.10.8's probing, in preprocessing and as a cut generator,
        // returns suboptimal points as proven optimal on 3-variable bounded
        // problems (see the module doc): both are off. The other cuts stay.
        model.set_parameter("preprocess", "off");
        model.set_parameter("probing", "off");
        let mut model = model.with_time_limit(TIME_LIMIT_SECONDS);
        let mut count = 0;
        for (coeffs, lower, upper) in rows {
            if let Some(l) = lower {
                model.add_constraint(expr(coeffs)?.geq(exact(*l)?));
                count += 1;
            }
            if let Some(u) = upper {
                model.add_constraint(expr(coeffs)?.leq(exact(*u)?));
                count += 1;
            }
        }
        // Without preprocessing, CBC 2.10.8 aborts the process (an assertion
        // in `OsiClpSolverInterface::crunch`, coin-or/Clp#288) on models of
        // fewer than 3 rows: pad with a redundant row, the sum of all
        // variables below the sum of their upper bounds.
        if count < MIN_ROWS {
            let all = vec![1i128; zs.len()];
            let top: f64 = bounds.iter().map(|&(_, hi)| hi as f64).sum();
            for _ in count..MIN_ROWS {
                model.add_constraint(expr(&all)?.leq(top + top.abs() * 1e-9 + 1.0));
            }
        }
        let solution = match model.solve() {
            Ok(solution) => solution,
            Err(ResolutionError::Infeasible) => return Ok(None),
            Err(e) => return Err(IlpError::Solver(format!("CBC on a bounded problem: {e}"))),
        };
        if !matches!(solution.status(), SolutionStatus::Optimal) {
            return Err(IlpError::Solver(format!(
                "CBC stopped ({:?}) without proving optimality or infeasibility within {TIME_LIMIT_SECONDS} s",
                solution.status()
            )));
        }
        zs.iter()
            .map(|&z| {
                let v = solution.value(z);
                let r = v.round();
                if (v - r).abs() <= 1e-6 && r.abs() <= 2f64.powi(53) {
                    Ok(r as i128)
                } else {
                    Err(IlpError::Solver(format!("CBC returned a non-integral value {v}")))
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The problem with every constraint divided by the gcd of its
    /// coefficients (and duplicates merged), or `None` when that shows it
    /// infeasible. Same integer points, so same answers; the floored
    /// constants of inequalities are cuts CBC need not find.
    fn presolve(problem: &Problem) -> Option<Problem> {
        fn gcd(a: i128, b: i128) -> i128 {
            if b == 0 {
                a.abs()
            } else {
                gcd(b, a % b)
            }
        }
        let mut out =
            Problem { constraints: Vec::with_capacity(problem.constraints.len()), ..problem.clone() };
        for c in &problem.constraints {
            let mut merged: Vec<(usize, i128)> = Vec::with_capacity(c.coeffs.len());
            for &(i, a) in &c.coeffs {
                match merged.iter_mut().find(|(j, _)| *j == i) {
                    Some((_, b)) => *b += a as i128,
                    None => merged.push((i, a as i128)),
                }
            }
            merged.retain(|&(_, a)| a != 0);
            let g = merged.iter().fold(0, |g, &(_, a)| gcd(g, a));
            let constant = c.constant as i128;
            if g == 0 {
                let holds = match c.relation {
                    Relation::Eq => constant == 0,
                    Relation::Ge => constant >= 0,
                };
                if !holds {
                    return None;
                }
                continue;
            }
            let constant = match c.relation {
                Relation::Eq if constant % g != 0 => return None,
                Relation::Eq => constant / g,
                Relation::Ge => constant.div_euclid(g),
            };
            // |a / g| <= |a| and |constant / g| <= |constant|, but merged
            // duplicates can leave i64: then the original is kept.
            let coeffs: Result<Vec<(usize, i64)>, _> =
                merged.iter().map(|&(i, a)| i64::try_from(a / g).map(|a| (i, a))).collect();
            out.constraints.push(match coeffs {
                Ok(coeffs) => Constraint { coeffs, constant: constant as i64, relation: c.relation },
                Err(_) => c.clone(),
            });
        }
        merge_parallel(&mut out.constraints).then_some(out)
    }

    /// Merges inequalities with equal or opposite coefficients: of equal ones
    /// the tightest stays; opposite ones `a·x + c ≥ 0`, `−a·x − c ≥ 0` become
    /// the equality `a·x + c = 0`. `false` when a pair leaves no room
    /// (`−c > c'` for `a·x + c ≥ 0` and `−a·x + c' ≥ 0`). Dependence cycles
    /// (S1 → S2 and back, carried further out) make the validity rows of a
    /// band such pairs, some 250 on adi: CBC cannot eliminate implicit
    /// equalities, while [`solve`]'s lattice removes explicit ones with
    /// their variables.
    fn merge_parallel(constraints: &mut Vec<Constraint>) -> bool {
        use std::cmp::Ordering;
        let key = |c: &Constraint| {
            let mut k = c.coeffs.clone();
            k.sort_unstable();
            k
        };
        // The first inequality with each coefficient vector.
        let mut first: std::collections::HashMap<Vec<(usize, i64)>, usize> = std::collections::HashMap::new();
        let mut merged = vec![false; constraints.len()];
        for i in 0..constraints.len() {
            if constraints[i].relation != Relation::Ge {
                continue;
            }
            let k = key(&constraints[i]);
            let ci = constraints[i].constant as i128;
            if let Some(&j) = first.get(&k) {
                let cj = constraints[j].constant as i128;
                match constraints[j].relation {
                    Relation::Ge => {
                        constraints[j].constant = constraints[j].constant.min(constraints[i].constant)
                    }
                    // a·x = −cj leaves a·x + ci = ci − cj.
                    Relation::Eq if ci < cj => return false,
                    Relation::Eq => {}
                }
                merged[i] = true;
                continue;
            }
            let negated: Vec<(usize, i64)> = k.iter().map(|&(v, a)| (v, -a)).collect();
            if let Some(&j) = first.get(&negated) {
                match (constraints[j].relation, (ci + constraints[j].constant as i128).cmp(&0)) {
                    (_, Ordering::Less) => return false,
                    (Relation::Ge, Ordering::Equal) => constraints[j].relation = Relation::Eq,
                    // An equality −a·x + cj = 0 implies a·x + ci ≥ 0 here.
                    (Relation::Eq, _) => {}
                    (Relation::Ge, Ordering::Greater) => {
                        first.insert(k, i);
                        continue;
                    }
                }
                merged[i] = true;
                continue;
            }
            first.insert(k, i);
        }
        let mut i = 0;
        constraints.retain(|_| {
            i += 1;
            !merged[i - 1]
        });
        true
    }

    pub(super) fn lexmin(problem: &Problem, mut cutoff: Cutoff) -> Result<Option<Outcome>, IlpError> {
        if problem.vars.iter().any(|v| matches!((v.lower, v.upper), (Some(l), Some(u)) if l > u)) {
            return Ok(Some(Outcome::Infeasible));
        }
        let Some(presolved) = presolve(problem) else { return Ok(Some(Outcome::Infeasible)) };
        if problem.vars.is_empty() {
            // Presolve has checked every (constant) constraint; CBC would only
            // see an empty model.
            let zeros = vec![0; problem.objectives.len()];
            if !zeros.iter().enumerate().all(|(k, &v)| cutoff.admits(k, v)) {
                return Ok(None);
            }
            return Ok(Some(Outcome::Optimal { values: Vec::new(), objective_values: zeros }));
        }
        let b = artificial_bound(&presolved);
        let boxed = boxed(&presolved, b);
        // In the far half of an artificial range: free variables CBC left at
        // the box boundary.
        let far = |values: &[i64]| {
            presolved
                .vars
                .iter()
                .zip(values)
                .any(|(v, &x)| (v.lower.is_none() && x < -b / 2) || (v.upper.is_none() && x > b / 2))
        };
        let open = presolved.vars.iter().any(|v| v.lower.is_none() || v.upper.is_none());
        let mut fixed: Vec<i64> = Vec::with_capacity(problem.objectives.len());
        let mut last: Option<Vec<i64>> = None;
        // With no objectives, one feasibility solve.
        // Objectives before this one were solved by a folded run.
        let mut solved = 0;
        // Where the last sum of positive objectives was solved.
        let mut polished = 0;
        let implied = implied_upper_bounds(&presolved);
        for k in 0..problem.objectives.len().max(1) {
            if k < solved {
                continue;
            }
            let objective = problem.objectives.get(k).map_or(&[][..], Vec::as_slice);
            // A non-negative objective that the last point (which meets
            // every earlier optimum) already makes zero is at its optimum
            // there: nothing to solve.
            if let Some(values) = &last {
                if objective.is_empty()
                    || (super::nonnegative(problem, objective) && eval(objective, values) == 0)
                {
                    fixed.push(0);
                    if !cutoff.admits(k, 0) {
                        return Ok(None);
                    }
                    continue;
                }
            }
            let run = foldable_run(&presolved, k, &fixed, &implied);
            // Not foldable, and many later non-negative objectives positive
            // at the last point (the unified scheduler's per-group bounds,
            // left free by the earlier solves): one solve of their sum gives a point where
            // those that can be zero mostly are, which the test above then
            // takes for free.
            if let Some(x) = last.as_ref().filter(|_| run.len() < 2) {
                let ahead: Vec<&Vec<(usize, i64)>> =
                    problem.objectives[k..].iter().take_while(|o| super::nonnegative(problem, o)).collect();
                let positive = ahead.iter().filter(|o| eval(o, x) != 0).count();
                if positive >= POLISH && k >= polished + POLISH {
                    polished = k;
                    let sum: Vec<(usize, i64)> = ahead.iter().flat_map(|o| o.iter().copied()).collect();
                    if let Some(y) = solve(&boxed, &sum, &fixed)? {
                        let zero = eval(objective, &y) == 0;
                        last = Some(y);
                        if zero {
                            fixed.push(0);
                            if !cutoff.admits(k, 0) {
                                return Ok(None);
                            }
                            continue;
                        }
                    }
                }
            }
            if run.len() >= 2 {
                // Objectives k.. are single variables within [0, U]: their
                // lexmin is the minimum of one mixed-radix sum, exact in
                // integers. Each is then pinned on its own (unit
                // equalities), never the weighted sum.
                let mut folded = Vec::with_capacity(run.len());
                let mut weight = 1i64;
                for &(v, upper) in run.iter().rev() {
                    folded.push((v, weight));
                    weight *= upper + 1;
                }
                let Some(values) = solve(&boxed, &folded, &fixed)? else {
                    if k == 0 {
                        return Ok(Some(Outcome::Infeasible));
                    }
                    return Err(IlpError::Solver(format!(
                        "CBC found objectives {k}.. infeasible after optima for the earlier ones"
                    )));
                };
                let all = problem.objective_values(&values)?;
                for (j, &value) in all.iter().enumerate().skip(k).take(run.len()) {
                    fixed.push(value);
                    if !cutoff.admits(j, value) {
                        return Ok(None);
                    }
                }
                solved = k + run.len();
                last = Some(values);
                continue;
            }
            // Unboundedness first: the box optimum of an unbounded objective
            // lies on the far box boundary, which CBC's branch and bound can
            // take very long to reach through equalities.
            let bounded = k >= problem.objectives.len() || !open || bounded_by_bounds(&presolved, objective);
            if !bounded && has_ray(&presolved, k)? {
                // A direction plus an integer point: for k > 0 the previous
                // solve found one.
                if k > 0 || solve(&boxed, &[], &[])?.is_some() {
                    return Err(IlpError::Unbounded { objective: k });
                }
                return Ok(Some(Outcome::Infeasible));
            }
            match solve(&boxed, objective, &fixed)? {
                None if k == 0 => return Ok(Some(Outcome::Infeasible)),
                None => {
                    return Err(IlpError::Solver(format!(
                        "CBC found objective {k} infeasible after optima for the earlier ones"
                    )))
                }
                Some(values) => {
                    if k < problem.objectives.len() {
                        let value = problem.objective_values(&values)?[k];
                        fixed.push(value);
                        if !cutoff.admits(k, value) {
                            return Ok(None);
                        }
                    }
                    last = Some(values);
                }
            }
        }
        if cutoff.bound.is_some() && !cutoff.below {
            // No objectives: equal to the (empty) cutoff, not below it.
            return Ok(None);
        }
        let mut values = last.expect("at least one solve");
        if far(&values) {
            values = pull_back(&boxed, &presolved, &fixed, b)?;
        }
        if !problem.satisfied_by(&values) {
            return Err(IlpError::Solver(format!("CBC's point {values:?} violates the original problem")));
        }
        let objective_values = problem.objective_values(&values)?;
        Ok(Some(Outcome::Optimal { values, objective_values }))
    }

    /// At least this many positive objectives ahead, at least this far
    /// apart: one solve of their sum (see [`lexmin`]).
    const POLISH: usize = 8;

    /// The product of `(U + 1)` over one folded run of objectives stays
    /// within this: values and weights far inside f64's exact integers and
    /// CBC's tolerances.
    const FOLD_LIMIT: i64 = 1 << 16;

    /// The objectives from `k` on that are each one variable (positive
    /// coefficient) known to lie in `[0, U]`: a lower bound of at least 0
    /// and an upper bound, its own or implied by an earlier objective that
    /// is a positive sum of non-negative variables, pinned at its optimum
    /// (`fixed`). As many as fit [`FOLD_LIMIT`].
    fn foldable_run(
        problem: &Problem,
        k: usize,
        fixed: &[i64],
        implied: &[Option<i64>],
    ) -> Vec<(usize, i64)> {
        let upper = |v: usize| -> Option<i64> {
            let own = match (problem.vars[v].upper, implied[v]) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let implied = problem.objectives[..fixed.len()]
                .iter()
                .zip(fixed)
                .filter(|(o, _)| super::nonnegative(problem, o))
                .filter_map(|(o, &f)| o.iter().find(|&&(x, _)| x == v).map(|&(_, a)| f / a))
                .min();
            match (own, implied) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        let mut run = Vec::new();
        let mut product = 1i64;
        for o in problem.objectives.iter().skip(k) {
            let &[(v, a)] = o.as_slice() else { break };
            if a <= 0 || problem.vars[v].lower.is_none_or(|l| l < 0) {
                break;
            }
            let Some(u) = upper(v).filter(|&u| u >= 0) else { break };
            if product.saturating_mul(u + 1) > FOLD_LIMIT {
                break;
            }
            product *= u + 1;
            run.push((v, u));
        }
        run
    }

    /// Upper bounds that single constraints imply on non-negative
    /// variables: `Σ aᵢ·xᵢ = f` or `Σ aᵢ·xᵢ ≤ f` with every `aᵢ > 0` and every
    /// `xᵢ ≥ 0` bounds each `xᵢ` by `f / aᵢ` (the scheduler's pinned sums).
    fn implied_upper_bounds(problem: &Problem) -> Vec<Option<i64>> {
        let mut out: Vec<Option<i64>> = vec![None; problem.vars.len()];
        let nonnegative = |v: usize| problem.vars[v].lower.is_some_and(|l| l >= 0);
        for c in &problem.constraints {
            if c.coeffs.is_empty() || !c.coeffs.iter().all(|&(v, _)| nonnegative(v)) {
                continue;
            }
            // As `Σ |aᵢ|·xᵢ ≤ f`, when the signs allow it.
            let sign = if c.coeffs.iter().all(|&(_, a)| a < 0) {
                1
            } else if c.relation == Relation::Eq && c.coeffs.iter().all(|&(_, a)| a > 0) {
                -1
            } else {
                continue;
            };
            let f = sign * c.constant;
            if f < 0 {
                continue;
            }
            for &(v, a) in &c.coeffs {
                let b = f / a.abs();
                out[v] = Some(out[v].map_or(b, |x| x.min(b)));
            }
        }
        out
    }

    /// Whether the variables' own bounds bound `objective` below: each
    /// coefficient positive on a variable with a lower bound or negative on
    /// one with an upper bound (the usual scheduler objective, a sum of
    /// non-negative variables). Saves the ray check.
    fn bounded_by_bounds(problem: &Problem, objective: &[(usize, i64)]) -> bool {
        let mut sums = vec![0i128; problem.vars.len()];
        for &(i, a) in objective {
            sums[i] += a as i128;
        }
        problem
            .vars
            .iter()
            .zip(&sums)
            .all(|(v, &a)| a == 0 || (a > 0 && v.lower.is_some()) || (a < 0 && v.upper.is_some()))
    }

    /// Whether some integer direction `r` of the problem's recession cone has
    /// `objective_k . r <= -1` and `objective_j . r = 0` for `j < k`:
    /// `A_eq r = 0`, `A_ge r >= 0`, `r_i >= 0` where `x_i` has a lower bound,
    /// `r_i <= 0` where it has an upper one, components within
    /// [`RAY_BOUND`]. The direction CBC returns is checked exactly.
    fn has_ray(problem: &Problem, k: usize) -> Result<bool, IlpError> {
        let vars = problem
            .vars
            .iter()
            .map(|v| Var {
                name: format!("ray of {}", v.name),
                lower: Some(if v.lower.is_some() { 0 } else { -RAY_BOUND }),
                upper: Some(if v.upper.is_some() { 0 } else { RAY_BOUND }),
            })
            .collect();
        let mut constraints: Vec<Constraint> =
            problem.constraints.iter().map(|c| Constraint { constant: 0, ..c.clone() }).collect();
        for objective in &problem.objectives[..k] {
            constraints.push(Constraint { coeffs: objective.clone(), constant: 0, relation: Relation::Eq });
        }
        let decrease = problem.objectives[k].iter().map(|&(i, a)| (i, -a)).collect();
        constraints.push(Constraint { coeffs: decrease, constant: -1, relation: Relation::Ge });
        let cone = Problem { vars, constraints, objectives: Vec::new() };
        Ok(solve(&cone, &[], &[])?.is_some())
    }

    /// A point at the same optima with the L1 norm of the variables that lack
    /// a bound minimised, replacing one that CBC left far out in the box.
    fn pull_back(boxed: &Problem, presolved: &Problem, fixed: &[i64], b: i64) -> Result<Vec<i64>, IlpError> {
        let n = boxed.vars.len();
        let mut near = boxed.clone();
        let mut l1 = Vec::new();
        for (i, v) in presolved.vars.iter().enumerate() {
            if v.lower.is_none() || v.upper.is_none() {
                let t = near.add_var(format!("|{}|", v.name), Some(0), Some(b));
                near.add_constraint([(t, 1), (i, -1)], 0, Relation::Ge);
                near.add_constraint([(t, 1), (i, 1)], 0, Relation::Ge);
                l1.push((t, 1));
            }
        }
        match solve(&near, &l1, fixed)? {
            Some(mut values) => {
                values.truncate(n);
                Ok(values)
            }
            None => Err(IlpError::Solver("CBC lost the optimum while pulling its point back".into())),
        }
    }
}

mod isl {
    //! isl's exact integer optimisation on the set
    //! `{ [v0, .., vn] : bounds and constraints }`.
    //!
    //! Each objective is minimised with `isl_set_min_val` (isl's exact ILP by
    //! generalised basis reduction: `-infty` when unbounded, `NaN` when
    //! empty) and pinned at its optimum (`objective = value`, intersected)
    //! before the next; the point is then the lexmin of what remains, or any
    //! point (`sample_point`) when that fails, e.g. because free variables
    //! are unbounded.
    //!
    //! The obvious formulation, one `lexmin` of `{ [o0, .., om, v0, .., vn] :
    //! o_k = objective_k(v), .. }`, is wrong with the isl bundled in isl-rs
    //! 0.3.1 (isl 0.27) on small bounded problems: its lexmin returned an
    //! empty set for a non-empty one and failed with "affine expression
    //! involves some of the domain dimensions" (from
    //! `isl_basic_map_try_find_output_div`) on another, and even `min_val` /
    //! `dim_min_val` of an `o_k` dimension returned 12 where 10 is attained
    //! (found by the random tests). The `o_k` equalities make isl describe
    //! the `v` as lattice functions of the `o`, where those bugs live. Without
    //! the `o` dimensions, `min_val`, `intersect` and `sample_point` agreed
    //! with brute force on every test. The final lexmin only picks among
    //! optimal points, so a bad answer from it is caught by the exact check
    //! on the point and replaced by a sample.

    use super::{count_solve, new_context, Cutoff, IlpError, Outcome, Problem, Relation};
    use crate::isl::IslResultExt as _;
    use isl_rs::{Aff, DimType, Set, Val};
    use std::fmt::Write as _;

    fn err(what: &'static str) -> impl Fn() -> String {
        move || what.to_string()
    }

    fn solver(e: crate::isl::IslError) -> IlpError {
        IlpError::Solver(e.to_string())
    }

    /// Appends `sum + constant` in isl syntax, e.g. `2*v0 - v3 + 5` (`0` when empty).
    fn affine(out: &mut String, coeffs: &[(usize, i64)], constant: i64) {
        let start = out.len();
        let terms = coeffs.iter().map(|&(i, a)| (a, Some(i))).chain([(constant, None)]);
        for (a, var) in terms.filter(|&(a, _)| a != 0) {
            let first = out.len() == start;
            let mag = a.unsigned_abs();
            match (first, a < 0) {
                (true, true) => out.push('-'),
                (true, false) => {}
                (false, true) => out.push_str(" - "),
                (false, false) => out.push_str(" + "),
            }
            match var {
                Some(i) if mag == 1 => write!(out, "v{i}").unwrap(),
                Some(i) => write!(out, "{mag}*v{i}").unwrap(),
                None => write!(out, "{mag}").unwrap(),
            }
        }
        if out.len() == start {
            out.push('0');
        }
    }

    /// The isl tuple `[v0, ..]` and the text of the problem's set.
    fn set_text(problem: &Problem) -> (String, String) {
        let dims: Vec<String> = (0..problem.vars.len()).map(|i| format!("v{i}")).collect();
        let tuple = format!("[{}]", dims.join(", "));
        let mut parts: Vec<String> = Vec::new();
        for (i, v) in problem.vars.iter().enumerate() {
            if let Some(l) = v.lower {
                parts.push(format!("v{i} >= {l}"));
            }
            if let Some(u) = v.upper {
                parts.push(format!("v{i} <= {u}"));
            }
        }
        for c in &problem.constraints {
            let mut s = String::new();
            affine(&mut s, &c.coeffs, c.constant);
            s.push_str(match c.relation {
                Relation::Eq => " = 0",
                Relation::Ge => " >= 0",
            });
            parts.push(s);
        }
        let text = if parts.is_empty() {
            format!("{{ {tuple} }}")
        } else {
            format!("{{ {tuple} : {} }}", parts.join(" and "))
        };
        (tuple, text)
    }

    fn val_to_i64(v: &Val, what: &str) -> Result<i64, IlpError> {
        if !v.is_int().unwrap_or(false) {
            return Err(IlpError::Solver(format!(
                "isl: {what} is not an integer: {}",
                v.to_str().unwrap_or("?")
            )));
        }
        v.get_num_si().map_err(|e| IlpError::Solver(format!("isl: {what} does not fit in i64: {e}")))
    }

    /// The coordinates of some point of `set`,
    /// or `None` when `set` is empty.
    fn point(set: Set, dims: usize) -> Result<Option<Vec<i64>>, IlpError> {
        let p = set.sample_point().ctx(err("sampling a point")).map_err(solver)?;
        if p.is_void().ctx(err("checking a point")).map_err(solver)? {
            return Ok(None);
        }
        (0..dims)
            .map(|d| {
                let v = p
                    .get_coordinate_val(DimType::Set, d as i32)
                    .ctx(err("reading a coordinate"))
                    .map_err(solver)?;
                val_to_i64(&v, "a coordinate")
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    pub(super) fn lexmin(problem: &Problem, cutoff: Cutoff) -> Result<Option<Outcome>, IlpError> {
        let n = problem.vars.len();
        let ctx = new_context();
        let quota = super::ISL_QUOTA.with(std::cell::Cell::get);
        if quota > 0 {
            ctx.set_max_operations(quota);
        }
        lexmin_in(&ctx, problem, n, cutoff).map_err(|e| match e {
            IlpError::Solver(m) if m.contains("Quota") => IlpError::Quota,
            e => e,
        })
    }

    fn lexmin_in(
        ctx: &isl_rs::Context,
        problem: &Problem,
        n: usize,
        mut cutoff: Cutoff,
    ) -> Result<Option<Outcome>, IlpError> {
        let (tuple, text) = set_text(problem);
        let mut set = Set::read_from_str(&ctx, &text)
            .map_err(|e| IlpError::Solver(format!("isl: reading {text}: {e}")))?;
        let mut optima = Vec::with_capacity(problem.objectives.len());
        for (k, objective) in problem.objectives.iter().enumerate() {
            if super::isl_past_deadline() {
                return Err(IlpError::Quota);
            }
            count_solve();
            let mut expr = String::new();
            affine(&mut expr, objective, 0);
            let aff = Aff::read_from_str(&ctx, &format!("{{ {tuple} -> [({expr})] }}"))
                .ctx(err("reading an objective"))
                .map_err(solver)?;
            let min = set.min_val(&aff).ctx(err("minimising an objective")).map_err(solver)?;
            if min.is_neginfty().ctx(err("reading an optimum")).map_err(solver)? {
                return Err(IlpError::Unbounded { objective: k });
            }
            if min.is_nan().ctx(err("reading an optimum")).map_err(solver)? {
                if k == 0 {
                    return Ok(Some(Outcome::Infeasible));
                }
                return Err(IlpError::Solver(format!(
                    "isl: objective {k} of {text} has no optimum after the earlier ones"
                )));
            }
            let value = val_to_i64(&min, "an optimum")?;
            let pin = Set::read_from_str(&ctx, &format!("{{ {tuple} : {expr} = {value} }}"))
                .ctx(err("reading an optimum"))
                .map_err(solver)?;
            set = set.intersect(pin).ctx(err("pinning an objective")).map_err(solver)?;
            optima.push(value);
            if !cutoff.admits(k, value) {
                return Ok(None);
            }
        }
        if cutoff.bound.is_some() && !cutoff.below {
            return Ok(None);
        }
        if super::isl_past_deadline() {
            return Err(IlpError::Quota);
        }
        // Any point of `set` is an answer. A sample, not the lexmin over all
        // variables: when the objectives leave variables free (a feasibility
        // test, a single objective solved for its value), that lexmin over a
        // hundred dimensions can take minutes where a sample takes
        // milliseconds; when they pin every variable the two coincide.
        count_solve();
        let values = match point(set, n)? {
            Some(values) => values,
            None if optima.is_empty() => return Ok(Some(Outcome::Infeasible)),
            None => return Err(IlpError::Solver(format!("isl: {text} emptied at its optima {optima:?}"))),
        };
        let answers = |values: &Vec<i64>| {
            problem.satisfied_by(values) && problem.objective_values(values).is_ok_and(|o| o == optima)
        };
        // Self-check: isl is exact, so a mismatch here is a bug in the text above or in isl.
        if !answers(&values) {
            return Err(IlpError::Solver(format!(
                "isl's point {values:?} does not solve {text} at {optima:?}"
            )));
        }
        Ok(Some(Outcome::Optimal { values, objective_values: optima }))
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn affine_text() {
            let mut s = String::new();
            super::affine(&mut s, &[(0, 1), (1, -1), (2, 3), (3, 0)], -5);
            assert_eq!(s, "v0 - v1 + 3*v2 - 5");
            let mut s = String::new();
            super::affine(&mut s, &[(0, -2)], 0);
            assert_eq!(s, "-2*v0");
            let mut s = String::new();
            super::affine(&mut s, &[], 0);
            assert_eq!(s, "0");
            let mut s = String::new();
            super::affine(&mut s, &[], i64::MIN);
            assert_eq!(s, "-9223372036854775808");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const BACKENDS: [Backend; 2] = [Backend::Cbc, Backend::Isl];

    fn optimum(problem: &Problem, backend: Backend) -> Option<Vec<i64>> {
        match lexmin(problem, backend).unwrap_or_else(|e| panic!("{backend:?}: {e} on {problem:?}")) {
            Outcome::Optimal { values, objective_values } => {
                assert!(problem.satisfied_by(&values), "{backend:?}: {values:?} infeasible for {problem:?}");
                assert_eq!(problem.objective_values(&values).unwrap(), objective_values);
                Some(objective_values)
            }
            Outcome::Infeasible => None,
        }
    }

    fn both(problem: &Problem) -> Option<Vec<i64>> {
        let cbc = optimum(problem, Backend::Cbc);
        let isl = optimum(problem, Backend::Isl);
        assert_eq!(cbc, isl, "backends disagree on {problem:?}");
        cbc
    }

    #[test]
    fn lexicographic_order_matters() {
        // x, y in [-3, 4], x + y >= 2: minimise x, then -y (maximise y).
        let mut p = Problem::new();
        let x = p.add_var("x", Some(-3), Some(4));
        let y = p.add_var("y", Some(-3), Some(4));
        p.add_constraint(vec![(x, 1), (y, 1)], -2, Relation::Ge);
        p.add_objective(vec![(x, 1)]);
        p.add_objective(vec![(y, -1)]);
        assert_eq!(both(&p), Some(vec![-2, -4]));
        for backend in BACKENDS {
            let Outcome::Optimal { values, .. } = lexmin(&p, backend).unwrap() else { panic!() };
            assert_eq!(values, vec![-2, 4], "{backend:?}");
        }
        // The other order: maximise y first, then minimise x.
        p.objectives.reverse();
        assert_eq!(both(&p), Some(vec![-4, -2]));
    }

    #[test]
    fn integrality_beats_the_relaxation() {
        // 2x = 2y + 1 has no integer solution; 3x - 2y = 1 with x in [0, 10]:
        // min x is 1 (y = 1), while the relaxation would give x = 1/3.
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), Some(10));
        let y = p.add_var("y", None, None);
        p.add_constraint(vec![(x, 2), (y, -2)], -1, Relation::Eq);
        assert_eq!(both(&p), None);
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), Some(10));
        let y = p.add_var("y", None, None);
        p.add_constraint([(x, 3), (y, -2)], -1, Relation::Eq);
        p.add_objective([(x, 1)]);
        p.add_objective([(y, 1)]);
        assert_eq!(both(&p), Some(vec![1, 1]));
        // Minimise 2x + 3y with x, y >= 0 and 2x + 3y >= 7 (LP: 7, but 2x + 3y
        // hits every integer >= 2 except 1, so 7 is attained: x = 2, y = 1).
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), None);
        let y = p.add_var("y", Some(0), None);
        p.add_constraint([(x, 2), (y, 3)], -7, Relation::Ge);
        p.add_objective([(x, 2), (y, 3)]);
        p.add_objective([(x, 1)]);
        assert_eq!(both(&p), Some(vec![7, 2]));
        // 4x + 6y >= 7, x, y >= 0: only even values, so the optimum is 8.
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), None);
        let y = p.add_var("y", Some(0), None);
        p.add_constraint([(x, 4), (y, 6)], -7, Relation::Ge);
        p.add_objective([(x, 4), (y, 6)]);
        assert_eq!(both(&p), Some(vec![8]));
    }

    #[test]
    fn negative_optima_and_equalities() {
        // x + y + z = -7, each in [-5, 5], minimise x - z, then y.
        let mut p = Problem::new();
        let v: Vec<usize> = (0..3).map(|i| p.add_var(format!("v{i}"), Some(-5), Some(5))).collect();
        p.add_constraint(vec![(v[0], 1), (v[1], 1), (v[2], 1)], 7, Relation::Eq);
        p.add_objective(vec![(v[0], 1), (v[2], -1)]);
        p.add_objective(vec![(v[1], 1)]);
        // x = -5, z = 5 forces y = -7: out of range; best is x - z = -8
        // (x = -5, z = 3, y = -5).
        assert_eq!(both(&p), Some(vec![-8, -5]));
        for backend in BACKENDS {
            let Outcome::Optimal { values, .. } = lexmin(&p, backend).unwrap() else { panic!() };
            assert_eq!(values, vec![-5, -5, 3]);
        }
    }

    #[test]
    fn large_values() {
        // Far from zero but well inside f64's exact integers.
        let mut p = Problem::new();
        let x = p.add_var("x", Some(-1_000_000_007), Some(1_000_000_007));
        let y = p.add_var("y", None, None);
        p.add_constraint([(y, 1), (x, -3)], -1, Relation::Eq);
        p.add_objective([(y, 1)]);
        assert_eq!(both(&p), Some(vec![-3_000_000_020]));
    }

    #[test]
    fn infeasible() {
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), Some(5));
        let y = p.add_var("y", Some(0), Some(5));
        p.add_constraint([(x, 1), (y, 1)], -11, Relation::Ge);
        p.add_objective([(x, 1)]);
        assert_eq!(both(&p), None);
        // Contradictory bounds, no objective.
        let mut p = Problem::new();
        p.add_var("x", Some(1), Some(0));
        assert_eq!(both(&p), None);
        // Infeasible and (relaxation-)unbounded at once: infeasible wins.
        let mut p = Problem::new();
        let x = p.add_var("x", None, None);
        let y = p.add_var("y", None, None);
        p.add_constraint([(x, 2), (y, -2)], -1, Relation::Eq);
        p.add_objective([(x, 1)]);
        assert_eq!(both(&p), None);
        // A constant constraint that fails.
        let mut p = Problem::new();
        p.add_var("x", Some(0), Some(1));
        p.add_constraint([], -1, Relation::Ge);
        assert_eq!(both(&p), None);
    }

    #[test]
    fn unbounded() {
        for backend in BACKENDS {
            // First objective unbounded.
            let mut p = Problem::new();
            let x = p.add_var("x", None, Some(3));
            p.add_objective([(x, 1)]);
            assert!(matches!(lexmin(&p, backend), Err(IlpError::Unbounded { objective: 0 })), "{backend:?}");
            // Second objective unbounded once the first is pinned.
            let mut p = Problem::new();
            let x = p.add_var("x", Some(0), None);
            let y = p.add_var("y", None, None);
            p.add_constraint([(x, 1), (y, 1)], 0, Relation::Ge);
            p.add_objective([(x, 1)]);
            p.add_objective([(y, -1)]);
            let r = lexmin(&p, backend);
            assert!(matches!(r, Err(IlpError::Unbounded { objective: 1 })), "{backend:?}: {r:?}");
            // Unbounded along a lattice: x - 2y = 1 and x <= 0, objective 0 constant.
            let mut p = Problem::new();
            let x = p.add_var("x", None, Some(0));
            let y = p.add_var("y", None, None);
            p.add_constraint([(x, 1), (y, -2)], -1, Relation::Eq);
            p.add_objective([(x, 0)]);
            p.add_objective([(y, 3)]);
            let r = lexmin(&p, backend);
            assert!(matches!(r, Err(IlpError::Unbounded { objective: 1 })), "{backend:?}: {r:?}");
        }
    }

    #[test]
    fn free_variables_are_not_an_error() {
        // No objective touches y, which is unbounded: still an optimum.
        let mut p = Problem::new();
        let x = p.add_var("x", Some(2), Some(9));
        let y = p.add_var("y", None, None);
        p.add_constraint([(y, 1), (x, -1)], 0, Relation::Ge);
        p.add_objective([(x, 1)]);
        assert_eq!(both(&p), Some(vec![2]));
        // No objectives at all: a feasibility answer.
        let mut p = Problem::new();
        let x = p.add_var("x", None, None);
        p.add_constraint([(x, 3)], -4, Relation::Ge);
        assert_eq!(both(&p), Some(vec![]));
        // No variables either.
        let p = Problem::new();
        assert_eq!(both(&p), Some(vec![]));
    }

    #[test]
    fn equality_lattice() {
        // None when there is no integer solution, else the lattice dimension,
        // after checking the parametrisation: A origin = b, A basis = 0,
        // inverse basis = I, inverse origin = 0.
        let check = |rows: &[(&[i128], i128)], n: usize| -> Option<usize> {
            let system: Vec<(Vec<i128>, i128)> = rows.iter().map(|&(a, b)| (a.to_vec(), b)).collect();
            let l = cbc::lattice(n, system).unwrap()?;
            let dot = |a: &[i128], x: &[i128]| a.iter().zip(x).map(|(a, x)| a * x).sum::<i128>();
            let d = l.inverse.len();
            let column = |j: usize| l.basis.iter().map(|row| row[j]).collect::<Vec<_>>();
            for &(a, b) in rows {
                assert_eq!(dot(a, &l.origin), b);
                for j in 0..d {
                    assert_eq!(dot(a, &column(j)), 0);
                }
            }
            for (i, row) in l.inverse.iter().enumerate() {
                assert_eq!(dot(row, &l.origin), 0);
                for j in 0..d {
                    assert_eq!(dot(row, &column(j)), (i == j) as i128);
                }
            }
            Some(d)
        };
        assert_eq!(check(&[(&[2, -2], 1)], 2), None);
        assert_eq!(check(&[(&[6, 10, 15], 1)], 3), Some(2));
        // x - 3y - z = -3 and -x + y - 3z = -4 add up to -2y - 4z = -7.
        assert_eq!(check(&[(&[1, -3, -1], -3), (&[-1, 1, -3], -4)], 3), None);
        assert_eq!(check(&[(&[1, -3, -1], -3), (&[-1, 1, -3], -5)], 3), Some(1));
        assert_eq!(check(&[(&[3, -3, 3, 1], 1)], 4), Some(3));
        // Dependent rows: consistent, then not.
        assert_eq!(check(&[(&[2, 4], 6), (&[1, 2], 3)], 2), Some(1));
        assert_eq!(check(&[(&[2, 4], 6), (&[1, 2], 4)], 2), None);
        assert_eq!(check(&[(&[0, 0], 0)], 2), Some(2));
        assert_eq!(check(&[(&[0, 0], 1)], 2), None);
        assert_eq!(check(&[(&[1, 0], 4), (&[0, 1], -7)], 2), Some(0));
    }

    #[test]
    fn bad_index_is_an_error() {
        let mut p = Problem::new();
        p.add_var("x", None, None);
        p.add_objective([(1, 1)]);
        for backend in BACKENDS {
            assert!(matches!(lexmin(&p, backend), Err(IlpError::Solver(_))));
        }
    }

    #[test]
    fn solve_counter_counts() {
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), Some(3));
        p.add_objective([(x, 1)]);
        p.add_objective([(x, -1)]);
        let before = solves();
        lexmin(&p, Backend::Cbc).unwrap();
        assert_eq!(solves() - before, 2, "one CBC solve per objective");
        let before = solves();
        lexmin(&p, Backend::Isl).unwrap();
        assert!(solves() > before);
    }

    /// A tiny deterministic generator (64-bit LCG, Knuth's constants): the
    /// property test must be reproducible without a dependency.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        /// Uniform in `lo..=hi`.
        fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + (self.next() % (hi - lo + 1) as u64) as i64
        }
    }

    fn random_problem(rng: &mut Lcg) -> Problem {
        let mut p = Problem::new();
        let n = rng.range(2, 4) as usize;
        for i in 0..n {
            // Mostly the full box; sometimes tighter, occasionally empty.
            let lo = if rng.range(0, 3) == 0 { rng.range(-5, 5) } else { -5 };
            let hi = if rng.range(0, 3) == 0 { rng.range(-5, 5) } else { 5 };
            p.add_var(format!("x{i}"), Some(lo), Some(hi));
        }
        let coeffs = |rng: &mut Lcg| -> Vec<(usize, i64)> {
            (0..n).map(|i| (i, rng.range(-3, 3))).filter(|&(_, a)| a != 0).collect()
        };
        for _ in 0..rng.range(1, 4) {
            let relation = if rng.range(0, 3) == 0 { Relation::Eq } else { Relation::Ge };
            let c = coeffs(rng);
            p.add_constraint(c, rng.range(-6, 6), relation);
        }
        for _ in 0..rng.range(1, 3) {
            let o = coeffs(rng);
            p.add_objective(o);
        }
        p
    }

    /// Lexicographic optimum over every integer point of the (finite) box.
    fn brute_force(p: &Problem) -> Option<Vec<i64>> {
        let lo: Vec<i64> = p.vars.iter().map(|v| v.lower.unwrap()).collect();
        let hi: Vec<i64> = p.vars.iter().map(|v| v.upper.unwrap()).collect();
        if lo.iter().zip(&hi).any(|(l, h)| l > h) {
            return None;
        }
        let mut x = lo.clone();
        let mut best: Option<Vec<i64>> = None;
        loop {
            if p.satisfied_by(&x) {
                let o = p.objective_values(&x).unwrap();
                if best.as_ref().is_none_or(|b| o < *b) {
                    best = Some(o);
                }
            }
            // Odometer increment.
            let mut i = 0;
            loop {
                if i == x.len() {
                    return best;
                }
                if x[i] < hi[i] {
                    x[i] += 1;
                    break;
                }
                x[i] = lo[i];
                i += 1;
            }
        }
    }

    #[test]
    fn random_problems_agree_with_brute_force() {
        let mut rng = Lcg(0x5eed_1e55);
        let (mut feasible, mut infeasible) = (0, 0);
        for case in 0..300 {
            let p = random_problem(&mut rng);
            let expected = brute_force(&p);
            let cbc = optimum(&p, Backend::Cbc);
            let isl = optimum(&p, Backend::Isl);
            assert_eq!(cbc, expected, "case {case}: CBC vs brute force on {p:?}");
            assert_eq!(isl, expected, "case {case}: isl vs brute force on {p:?}");
            if expected.is_some() {
                feasible += 1;
            } else {
                infeasible += 1;
            }
        }
        // The generator must exercise both answers to mean anything.
        assert!(feasible >= 50 && infeasible >= 20, "feasible {feasible}, infeasible {infeasible}");
    }

    /// Presolve's merging of equal and opposite inequalities: problems
    /// where a random inequality comes back negated (an implicit equality,
    /// or a range, or an empty range) or repeated with another constant.
    #[test]
    fn parallel_inequalities_agree_with_brute_force() {
        let mut rng = Lcg(0x0dd5_5173);
        let (mut feasible, mut infeasible) = (0, 0);
        for case in 0..300 {
            let mut p = random_problem(&mut rng);
            for _ in 0..rng.range(1, 3) {
                let c = p.constraints[rng.range(0, p.constraints.len() as i64 - 1) as usize].clone();
                let negated: Vec<(usize, i64)> = c.coeffs.iter().map(|&(v, a)| (v, -a)).collect();
                match rng.range(0, 2) {
                    0 => p.add_constraint(negated, -c.constant + rng.range(-1, 1), Relation::Ge),
                    1 => p.add_constraint(c.coeffs.clone(), c.constant + rng.range(-2, 2), Relation::Ge),
                    _ => p.add_constraint(negated, -c.constant, Relation::Ge),
                }
            }
            let expected = brute_force(&p);
            assert_eq!(optimum(&p, Backend::Cbc), expected, "case {case}: CBC vs brute force on {p:?}");
            if expected.is_some() {
                feasible += 1;
            } else {
                infeasible += 1;
            }
        }
        assert!(feasible >= 50 && infeasible >= 20, "feasible {feasible}, infeasible {infeasible}");
    }

    /// Like [`random_problem`], but some bounds are missing, so that
    /// unbounded objectives and unbounded free variables occur.
    fn random_open_problem(rng: &mut Lcg) -> Problem {
        let mut p = random_problem(rng);
        for v in &mut p.vars {
            if rng.range(0, 2) == 0 {
                v.lower = None;
            }
            if rng.range(0, 2) == 0 {
                v.upper = None;
            }
        }
        p
    }

    /// What the backends must agree on: the optimum, infeasibility, or which
    /// objective is unbounded.
    fn verdict(p: &Problem, backend: Backend) -> Result<Option<Vec<i64>>, usize> {
        match lexmin(p, backend) {
            Ok(Outcome::Optimal { values, objective_values }) => {
                assert!(p.satisfied_by(&values), "{backend:?}: {values:?} infeasible for {p:?}");
                Ok(Some(objective_values))
            }
            Ok(Outcome::Infeasible) => Ok(None),
            Err(IlpError::Unbounded { objective }) => Err(objective),
            Err(e) => panic!("{backend:?}: {e} on {p:?}"),
        }
    }

    #[test]
    fn random_open_problems_agree() {
        let mut rng = Lcg(0x0bad_cafe);
        let mut unbounded = 0;
        for case in 0..300 {
            let p = random_open_problem(&mut rng);
            let cbc = verdict(&p, Backend::Cbc);
            let isl = verdict(&p, Backend::Isl);
            assert_eq!(cbc, isl, "case {case}: CBC vs isl on {p:?}");
            unbounded += cbc.is_err() as usize;
        }
        assert!(unbounded >= 20, "only {unbounded} unbounded cases");
    }

    /// Two scheduler-sized problems: the backends agree; time per lexmin is
    /// printed, not asserted (`cargo test -p space --release timing -- --nocapture`).
    #[test]
    fn timing() {
        // Bounded: eight coefficients in [-4, 4], legality-like constraints,
        // three objectives.
        let mut bounded = Problem::new();
        let c: Vec<usize> = (0..8).map(|i| bounded.add_var(format!("c{i}"), Some(-4), Some(4))).collect();
        bounded.add_constraint([(c[0], 1), (c[1], -1), (c[2], 2)], -1, Relation::Ge);
        bounded.add_constraint([(c[3], 1), (c[4], 1), (c[5], -1), (c[0], 1)], -2, Relation::Ge);
        bounded.add_constraint([(c[6], 2), (c[7], -1), (c[1], 1)], 0, Relation::Eq);
        bounded.add_objective(c.iter().map(|&i| (i, 1)).collect::<Vec<_>>());
        bounded.add_objective([(c[0], 1)]);
        bounded.add_objective([(c[7], -1)]);
        // Farkas-like: coefficients split as c+ - c-, multipliers and a bound
        // w, all >= 0 without upper bounds, equalities tying them together.
        let mut farkas = Problem::new();
        let cp: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("c+{i}"), Some(0), None)).collect();
        let cm: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("c-{i}"), Some(0), None)).collect();
        let l: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("l{i}"), Some(0), None)).collect();
        let w = farkas.add_var("w", Some(0), None);
        let c = |i: usize, a: i64| [(cp[i], a), (cm[i], -a)];
        farkas.add_constraint([&c(0, 1)[..], &c(2, -1), &[(l[0], -1)]].concat(), 0, Relation::Eq);
        farkas.add_constraint([&c(1, 1)[..], &[(l[1], -1), (l[2], -1)]].concat(), 0, Relation::Eq);
        farkas.add_constraint([&c(2, 1)[..], &c(3, 1), &[(l[3], -1)]].concat(), -1, Relation::Eq);
        farkas.add_constraint([&c(0, -1)[..], &c(1, -1), &[(w, 1)]].concat(), 0, Relation::Ge);
        farkas.add_constraint(cp.iter().chain(&cm).map(|&i| (i, 1)).collect::<Vec<_>>(), -1, Relation::Ge);
        farkas.add_objective([(w, 1)]);
        farkas.add_objective(cp.iter().chain(&cm).map(|&i| (i, 1)).collect::<Vec<_>>());
        farkas.add_objective(l.iter().map(|&i| (i, 1)).collect::<Vec<_>>());
        for (name, p) in [("bounded", &bounded), ("farkas", &farkas)] {
            let optimum = |o: Outcome| match o {
                Outcome::Optimal { objective_values, .. } => Some(objective_values),
                Outcome::Infeasible => None,
            };
            assert_eq!(
                optimum(lexmin(p, Backend::Cbc).unwrap()),
                optimum(lexmin(p, Backend::Isl).unwrap()),
                "{name}"
            );
            for backend in BACKENDS {
                let runs = 20;
                let start = Instant::now();
                let before = solves();
                let mut last = None;
                for _ in 0..runs {
                    last = Some(lexmin(p, backend).unwrap());
                }
                let per = start.elapsed() / runs;
                let n = (solves() - before) / runs as u64;
                println!("{name} {backend:?}: {per:?} per lexmin ({n} solves each), {last:?}");
            }
        }
    }
}
