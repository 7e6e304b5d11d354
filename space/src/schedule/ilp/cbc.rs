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

use super::fold::{foldable_run, implied_upper_bounds};
use super::lattice::{lattice, Lattice};
use super::presolve::presolve;
use super::{count_solve, eval, Constraint, Cutoff, IlpError, Outcome, Problem, Relation, Var};
use good_lp::{
    coin_cbc, variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus, SolverModel,
    Variable, WithTimeLimit,
};
use std::ops::ControlFlow;

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
fn solve(problem: &Problem, objective: &[(usize, i64)], fixed: &[i64]) -> Result<Option<Vec<i64>>, IlpError> {
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
    let sparse_basis: Vec<Vec<(usize, i128)>> =
        basis.iter().map(|row| row.iter().copied().enumerate().filter(|&(_, b)| b != 0).collect()).collect();
    let rewrite = |a: &[(usize, i64)]| -> Result<(Vec<i128>, i128), IlpError> {
        let mut coeffs = vec![0i128; d];
        let mut constant = 0i128;
        for &(i, ai) in a.iter().filter(|&&(_, ai)| ai != 0) {
            let ai = ai as i128;
            constant =
                constant.checked_add(ai.checked_mul(origin[i]).ok_or_else(overflow)?).ok_or_else(overflow)?;
            for &(j, b) in &sparse_basis[i] {
                coeffs[j] =
                    coeffs[j].checked_add(ai.checked_mul(b).ok_or_else(overflow)?).ok_or_else(overflow)?;
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
        let (l, u) =
            (l.checked_sub(origin[i]).ok_or_else(overflow)?, u.checked_sub(origin[i]).ok_or_else(overflow)?);
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
            x = x.checked_add(basis[i][j].checked_mul(z[j]).ok_or_else(overflow)?).ok_or_else(overflow)?;
        }
        values.push(i64::try_from(x).map_err(|_| overflow())?);
    }
    let pinned = fixed.iter().enumerate().all(|(k, &v)| eval(&problem.objectives[k], &values) == v as i128);
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
    let mut successive = Successive::new(problem, &presolved, cutoff);
    // With no objectives, one feasibility solve.
    for k in 0..problem.objectives.len().max(1) {
        if k < successive.solved {
            continue;
        }
        if let ControlFlow::Break(answer) = successive.objective(k)? {
            return Ok(answer);
        }
    }
    successive.finish()
}

/// Where a step of [`lexmin`] leaves it: on to the next objective, or
/// done with this answer (`None`: stopped by the cutoff).
type Step = ControlFlow<Option<Outcome>>;

/// The successive solves of one [`lexmin`]: the problem CBC sees, the
/// optima pinned so far and the last point found.
struct Successive<'a> {
    problem: &'a Problem,
    presolved: &'a Problem,
    /// `presolved` with every missing bound at `±b`.
    boxed: Problem,
    b: i64,
    /// Some variable of `presolved` lacks a bound.
    open: bool,
    implied: Vec<Option<i64>>,
    cutoff: Cutoff<'a>,
    fixed: Vec<i64>,
    last: Option<Vec<i64>>,
    /// Objectives before this one were solved by a folded run.
    solved: usize,
    /// Where the last sum of positive objectives was solved.
    polished: usize,
}

impl<'a> Successive<'a> {
    fn new(problem: &'a Problem, presolved: &'a Problem, cutoff: Cutoff<'a>) -> Self {
        let b = artificial_bound(presolved);
        let boxed = boxed(presolved, b);
        let open = presolved.vars.iter().any(|v| v.lower.is_none() || v.upper.is_none());
        Successive {
            problem,
            presolved,
            boxed,
            b,
            open,
            implied: implied_upper_bounds(presolved),
            cutoff,
            fixed: Vec::with_capacity(problem.objectives.len()),
            last: None,
            solved: 0,
            polished: 0,
        }
    }

    /// Objective `k`'s optimum (with a folded run, those of `k..`), pinned
    /// for the later solves.
    fn objective(&mut self, k: usize) -> Result<Step, IlpError> {
        let problem = self.problem;
        let objective = problem.objectives.get(k).map_or(&[][..], Vec::as_slice);
        // A non-negative objective that the last point (which meets
        // every earlier optimum) already makes zero is at its optimum
        // there: nothing to solve.
        if let Some(values) = &self.last {
            if objective.is_empty()
                || (super::nonnegative(problem, objective) && eval(objective, values) == 0)
            {
                return Ok(self.pin(k, 0));
            }
        }
        let run = foldable_run(self.presolved, k, &self.fixed, &self.implied);
        if run.len() < 2 && self.polish(k, objective)? {
            return Ok(self.pin(k, 0));
        }
        if run.len() >= 2 {
            return self.fold(k, &run);
        }
        self.optimum(k, objective)
    }

    /// Records `value` as objective `k`'s optimum; a break once the optima
    /// cannot end below the cutoff.
    fn pin(&mut self, k: usize, value: i64) -> Step {
        self.fixed.push(value);
        if self.cutoff.admits(k, value) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(None)
        }
    }

    /// Where objective `k` is not foldable and many later non-negative
    /// objectives are positive at the last point (the unified scheduler's
    /// per-group bounds, left free by the earlier solves): one solve of
    /// their sum gives a point where those that can be zero mostly are,
    /// which [`Self::objective`]'s zero test then takes for free. Whether
    /// objective `k` is zero there.
    fn polish(&mut self, k: usize, objective: &[(usize, i64)]) -> Result<bool, IlpError> {
        let Some(x) = &self.last else { return Ok(false) };
        let problem = self.problem;
        let ahead: Vec<&Vec<(usize, i64)>> =
            problem.objectives[k..].iter().take_while(|o| super::nonnegative(problem, o)).collect();
        let positive = ahead.iter().filter(|o| eval(o, x) != 0).count();
        if positive < POLISH || k < self.polished + POLISH {
            return Ok(false);
        }
        self.polished = k;
        let sum: Vec<(usize, i64)> = ahead.iter().flat_map(|o| o.iter().copied()).collect();
        let Some(y) = solve(&self.boxed, &sum, &self.fixed)? else { return Ok(false) };
        let zero = eval(objective, &y) == 0;
        self.last = Some(y);
        Ok(zero)
    }

    /// The optima of objectives `k..` of `run`, single variables within
    /// [0, U], from one solve of their mixed-radix sum.
    fn fold(&mut self, k: usize, run: &[(usize, i64)]) -> Result<Step, IlpError> {
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
        let Some(values) = solve(&self.boxed, &folded, &self.fixed)? else {
            if k == 0 {
                return Ok(ControlFlow::Break(Some(Outcome::Infeasible)));
            }
            return Err(IlpError::Solver(format!(
                "CBC found objectives {k}.. infeasible after optima for the earlier ones"
            )));
        };
        let all = self.problem.objective_values(&values)?;
        for (j, &value) in all.iter().enumerate().skip(k).take(run.len()) {
            if self.pin(j, value).is_break() {
                return Ok(ControlFlow::Break(None));
            }
        }
        self.solved = k + run.len();
        self.last = Some(values);
        Ok(ControlFlow::Continue(()))
    }

    /// Objective `k` on its own: unboundedness decided exactly, then one
    /// solve with the earlier optima pinned.
    fn optimum(&mut self, k: usize, objective: &[(usize, i64)]) -> Result<Step, IlpError> {
        let problem = self.problem;
        // Unboundedness first: the box optimum of an unbounded objective
        // lies on the far box boundary, which CBC's branch and bound can
        // take very long to reach through equalities.
        let bounded =
            k >= problem.objectives.len() || !self.open || bounded_by_bounds(self.presolved, objective);
        if !bounded && has_ray(self.presolved, k)? {
            // A direction plus an integer point: for k > 0 the previous
            // solve found one.
            if k > 0 || solve(&self.boxed, &[], &[])?.is_some() {
                return Err(IlpError::Unbounded { objective: k });
            }
            return Ok(ControlFlow::Break(Some(Outcome::Infeasible)));
        }
        match solve(&self.boxed, objective, &self.fixed)? {
            None if k == 0 => Ok(ControlFlow::Break(Some(Outcome::Infeasible))),
            None => Err(IlpError::Solver(format!(
                "CBC found objective {k} infeasible after optima for the earlier ones"
            ))),
            Some(values) => {
                if k < problem.objectives.len() {
                    let value = problem.objective_values(&values)?[k];
                    if self.pin(k, value).is_break() {
                        return Ok(ControlFlow::Break(None));
                    }
                }
                self.last = Some(values);
                Ok(ControlFlow::Continue(()))
            }
        }
    }

    /// In the far half of an artificial range: free variables CBC left at
    /// the box boundary.
    fn far(&self, values: &[i64]) -> bool {
        let b = self.b;
        self.presolved
            .vars
            .iter()
            .zip(values)
            .any(|(v, &x)| (v.lower.is_none() && x < -b / 2) || (v.upper.is_none() && x > b / 2))
    }

    /// The answer once every objective is pinned: the last point, pulled
    /// back if CBC left it far out in the box, checked on the original problem.
    fn finish(mut self) -> Result<Option<Outcome>, IlpError> {
        if self.cutoff.bound.is_some() && !self.cutoff.below {
            // No objectives: equal to the (empty) cutoff, not below it.
            return Ok(None);
        }
        let mut values = self.last.take().expect("at least one solve");
        if self.far(&values) {
            values = pull_back(&self.boxed, self.presolved, &self.fixed, self.b)?;
        }
        let problem = self.problem;
        if !problem.satisfied_by(&values) {
            return Err(IlpError::Solver(format!("CBC's point {values:?} violates the original problem")));
        }
        let objective_values = problem.objective_values(&values)?;
        Ok(Some(Outcome::Optimal { values, objective_values }))
    }
}

/// At least this many positive objectives ahead, at least this far
/// apart: one solve of their sum (see [`lexmin`]).
const POLISH: usize = 8;

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
