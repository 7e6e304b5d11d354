//! Lexicographic minimisation of integer linear programs.
//!
//! The affine scheduler asks one question many times: "among the integer points
//! of this polyhedron, which minimises these objectives in order?" This module is
//! its only solver entry point, with two interchangeable backends:
//!
//! - [`Backend::Cbc`]: COIN-OR CBC through `good_lp`, one ILP per objective,
//!   each solved with the earlier objectives pinned at their optima. Fast on the
//!   wide, shallow problems a scheduler builds, but floating point underneath,
//!   so every answer is rounded and then checked exactly in integers here.
//! - [`Backend::Isl`]: isl's exact parametric integer programming. One `lexmin`
//!   on the set `[o0, .., om, v0, .., vn]` with `o_k = objective_k(v)` gives the
//!   lexicographic optimum directly, in exact arithmetic.
//!
//! Both are kept because each checks the other: the tests compare their optimal
//! objective values (and a brute-force enumeration) on hundreds of random problems.
//!
//! Only the objective values are canonical. Variables that no objective pins
//! are tie-broken differently by the two backends (CBC: whatever its last solve
//! returned; isl: the lexicographically smallest point when that exists, else
//! any point), so callers who need a unique point must add objectives for it.

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
    /// isl's exact integer lexmin.
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

/// Minimises `problem.objectives` lexicographically over the integer points
/// satisfying its bounds and constraints.
///
/// With no objectives, this is a feasibility test that returns some point.
pub fn lexmin(problem: &Problem, backend: Backend) -> Result<Outcome, IlpError> {
    problem.validate()?;
    match backend {
        Backend::Cbc => cbc::lexmin(problem),
        Backend::Isl => isl::lexmin(problem),
    }
}

mod cbc {
    //! Successive CBC solves. CBC's status reporting for integer problems that
    //! are not optimal is unreliable (an unbounded ILP can come back as
    //! "infeasible" or as "continuous unbounded" when the ILP is in fact
    //! infeasible), so any non-optimal answer is re-examined: a feasibility
    //! solve decides infeasible versus unbounded, and for a feasible ILP an
    //! unbounded LP relaxation proves unboundedness (Meyer: with rational data,
    //! a non-empty integer hull has the recession cone of the polyhedron).

    use super::{count_solve, IlpError, Outcome, Problem, Relation};
    use good_lp::{
        coin_cbc, variable, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
    };

    enum Answer {
        Optimal(Vec<i64>),
        Infeasible,
        Unbounded,
    }

    /// One CBC solve: minimise `objective` (zero when `None`) subject to the
    /// problem and `fixed` (objective index, value) equalities.
    fn solve(
        problem: &Problem,
        objective: Option<&[(usize, i64)]>,
        fixed: &[i64],
        integer: bool,
    ) -> Result<Answer, IlpError> {
        count_solve();
        let mut vars = ProblemVariables::new();
        let xs: Vec<Variable> = problem
            .vars
            .iter()
            .map(|v| {
                let mut def = variable();
                if integer {
                    def = def.integer();
                }
                if let Some(l) = v.lower {
                    def = def.min(l as f64);
                }
                if let Some(u) = v.upper {
                    def = def.max(u as f64);
                }
                vars.add(def)
            })
            .collect();
        let expr = |coeffs: &[(usize, i64)], constant: i64| {
            let mut e = Expression::from(constant as f64);
            for &(i, a) in coeffs {
                e.add_mul(a as f64, xs[i]);
            }
            e
        };
        let mut model = vars.minimise(expr(objective.unwrap_or(&[]), 0)).using(coin_cbc);
        // good_lp already sets the log level to 0; "slogLevel" also silences
        // the LP (Clp) layer, which otherwise prints on some statuses.
        model.set_parameter("logLevel", "0");
        model.set_parameter("slogLevel", "0");
        for c in &problem.constraints {
            let e = expr(&c.coeffs, c.constant);
            model.add_constraint(match c.relation {
                Relation::Eq => e.eq(0.0),
                Relation::Ge => e.geq(0.0),
            });
        }
        for (k, &value) in fixed.iter().enumerate() {
            model.add_constraint(expr(&problem.objectives[k], 0).eq(value as f64));
        }
        match model.solve() {
            Ok(solution) => {
                let mut values = Vec::with_capacity(xs.len());
                for (i, &x) in xs.iter().enumerate() {
                    let v = solution.value(x);
                    let r = v.round();
                    if !integer {
                        // LP relaxation: only the status matters to callers.
                        values.push(0);
                        continue;
                    }
                    if (v - r).abs() > 1e-6 || !r.is_finite() || r.abs() > 2f64.powi(53) {
                        return Err(IlpError::Solver(format!(
                            "CBC returned non-integral {v} for variable {i} ({})",
                            problem.vars[i].name
                        )));
                    }
                    values.push(r as i64);
                }
                Ok(Answer::Optimal(values))
            }
            Err(ResolutionError::Infeasible) => Ok(Answer::Infeasible),
            Err(ResolutionError::Unbounded) => Ok(Answer::Unbounded),
            Err(e) => Err(IlpError::Solver(format!("CBC: {e}"))),
        }
    }

    pub(super) fn lexmin(problem: &Problem) -> Result<Outcome, IlpError> {
        let mut fixed: Vec<i64> = Vec::with_capacity(problem.objectives.len());
        let mut last = None;
        // With no objectives, one feasibility solve (objective 0 = "none").
        for k in 0..problem.objectives.len().max(1) {
            let objective = problem.objectives.get(k).map(Vec::as_slice);
            match solve(problem, objective, &fixed, true)? {
                Answer::Optimal(values) => {
                    if !problem.satisfied_by(&values) {
                        return Err(IlpError::Solver(format!(
                            "CBC's point {values:?} violates the problem (objective {k})"
                        )));
                    }
                    if objective.is_some() {
                        fixed.push(problem.objective_values(&values)?[k]);
                    }
                    last = Some(values);
                }
                other => return not_optimal(problem, k, &fixed, other),
            }
        }
        let values = last.expect("at least one solve");
        let objective_values = problem.objective_values(&values)?;
        Ok(Outcome::Optimal { values, objective_values })
    }

    /// Decides what a non-optimal CBC answer for objective `k` really means.
    fn not_optimal(problem: &Problem, k: usize, fixed: &[i64], claimed: Answer) -> Result<Outcome, IlpError> {
        let claimed = match claimed {
            Answer::Infeasible => "infeasible",
            Answer::Unbounded => "unbounded",
            Answer::Optimal(_) => unreachable!("only called on non-optimal answers"),
        };
        let Some(objective) = problem.objectives.get(k) else {
            // A pure feasibility solve cannot be unbounded.
            return Ok(Outcome::Infeasible);
        };
        match solve(problem, None, fixed, true)? {
            Answer::Infeasible if k == 0 => Ok(Outcome::Infeasible),
            Answer::Optimal(values) if problem.satisfied_by(&values) => {
                match solve(problem, Some(objective), fixed, false)? {
                    Answer::Unbounded => Err(IlpError::Unbounded { objective: k }),
                    _ => Err(IlpError::Solver(format!(
                        "CBC called objective {k} {claimed}, but the problem is feasible and its LP relaxation bounded"
                    ))),
                }
            }
            _ => Err(IlpError::Solver(format!(
                "CBC called objective {k} {claimed}, and its feasibility answer contradicts the earlier solves"
            ))),
        }
    }
}

mod isl {
    //! isl's exact integer lexmin on `{ [o0, .., om, v0, .., vn] : o_k = objective_k(v), .. }`.
    //! isl refuses ("unbounded optimum") when any dimension, objective or free
    //! variable, has no lexicographic minimum; then the objectives are
    //! minimised one at a time with `dim_min_val`, which says `-infty` for the
    //! unbounded one, and a bounded problem with unbounded free variables
    //! gets any point (`sample_point`) at the objective optimum.

    use super::{count_solve, new_context, IlpError, Outcome, Problem, Relation};
    use crate::isl::IslResultExt as _;
    use isl_rs::{DimType, Set, Val};
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

    /// The isl text of the problem's set, objective dimensions first.
    fn set_text(problem: &Problem) -> String {
        let m = problem.objectives.len();
        let n = problem.vars.len();
        let dims: Vec<String> =
            (0..m).map(|k| format!("o{k}")).chain((0..n).map(|i| format!("v{i}"))).collect();
        let mut parts: Vec<String> = Vec::new();
        for (k, o) in problem.objectives.iter().enumerate() {
            let mut s = format!("o{k} = ");
            affine(&mut s, o, 0);
            parts.push(s);
        }
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
        if parts.is_empty() {
            format!("{{ [{}] }}", dims.join(", "))
        } else {
            format!("{{ [{}] : {} }}", dims.join(", "), parts.join(" and "))
        }
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

    /// The coordinates of some point of `set` (its only one, after lexmin),
    /// or `None` when `set` is empty.
    fn point(set: Set, dims: usize) -> Result<Option<Vec<i64>>, IlpError> {
        count_solve();
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

    pub(super) fn lexmin(problem: &Problem) -> Result<Outcome, IlpError> {
        let m = problem.objectives.len();
        let n = problem.vars.len();
        let ctx = new_context();
        let text = set_text(problem);
        let set = Set::read_from_str(&ctx, &text)
            .map_err(|e| IlpError::Solver(format!("isl: reading {text}: {e}")))?;
        count_solve();
        let coords = match set.copy().ctx(err("copying the set")).map_err(solver)?.lexmin() {
            Ok(optimum) => point(optimum, m + n)?,
            Err(e) if e.to_string().contains("unbounded") => {
                // Find which objective is unbounded, pinning each bounded one at
                // its optimum; if none is, the free variables are.
                let mut set = set;
                for k in 0..m {
                    count_solve();
                    let min = set.copy().ctx(err("copying the set")).map_err(solver)?.dim_min_val(k as i32);
                    let min = min.ctx(err("minimising an objective")).map_err(solver)?;
                    if min.is_neginfty().unwrap_or(false) {
                        return Err(IlpError::Unbounded { objective: k });
                    }
                    if min.is_nan().unwrap_or(false) {
                        return Ok(Outcome::Infeasible);
                    }
                    set = set
                        .fix_val(DimType::Set, k as u32, min)
                        .ctx(err("fixing an objective"))
                        .map_err(solver)?;
                }
                point(set, m + n)?
            }
            Err(e) => return Err(IlpError::Solver(format!("isl: lexmin of {text}: {e}"))),
        };
        let Some(coords) = coords else { return Ok(Outcome::Infeasible) };
        let values = coords[m..].to_vec();
        let objective_values = problem.objective_values(&values)?;
        // Self-check: isl is exact, so a mismatch here is a bug in the text above.
        if objective_values != coords[..m] || !problem.satisfied_by(&values) {
            return Err(IlpError::Solver(format!(
                "isl's point {coords:?} does not match the problem {text}"
            )));
        }
        Ok(Outcome::Optimal { values, objective_values })
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

    /// Time per solve on a scheduler-sized problem; printed, not asserted.
    /// Run with `cargo test -p space --release ilp::tests::timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing() {
        // Eight coefficients in [-4, 4], three legality-like constraints,
        // three objectives (sum of |c| surrogate, then two coefficients).
        let mut p = Problem::new();
        let c: Vec<usize> = (0..8).map(|i| p.add_var(format!("c{i}"), Some(-4), Some(4))).collect();
        p.add_constraint([(c[0], 1), (c[1], -1), (c[2], 2)], -1, Relation::Ge);
        p.add_constraint([(c[3], 1), (c[4], 1), (c[5], -1), (c[0], 1)], -2, Relation::Ge);
        p.add_constraint([(c[6], 2), (c[7], -1), (c[1], 1)], 0, Relation::Eq);
        p.add_objective(c.iter().map(|&i| (i, 1)).collect::<Vec<_>>());
        p.add_objective([(c[0], 1)]);
        p.add_objective([(c[7], -1)]);
        for backend in BACKENDS {
            let runs = 200;
            let start = Instant::now();
            let before = solves();
            let mut last = None;
            for _ in 0..runs {
                last = Some(lexmin(&p, backend).unwrap());
            }
            let per = start.elapsed() / runs;
            let n = (solves() - before) / runs as u64;
            println!("{backend:?}: {per:?} per lexmin ({n} solves each), {last:?}");
        }
    }
}
