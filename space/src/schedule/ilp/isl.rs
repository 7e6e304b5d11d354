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
use isl_rs::{Aff, DimType, Set, Val};
use model::isl::IslResultExt as _;
use std::fmt::Write as _;

fn err(what: &'static str) -> impl Fn() -> String {
    move || what.to_string()
}

fn solver(e: model::isl::IslError) -> IlpError {
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
        IlpError::Solver(m) if m.contains(model::isl::QUOTA) => IlpError::Quota,
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
    let mut set =
        Set::read_from_str(ctx, &text).map_err(|e| IlpError::Solver(format!("isl: reading {text}: {e}")))?;
    let mut optima = Vec::with_capacity(problem.objectives.len());
    for (k, objective) in problem.objectives.iter().enumerate() {
        if super::isl_past_deadline() {
            return Err(IlpError::Quota);
        }
        count_solve();
        let mut expr = String::new();
        affine(&mut expr, objective, 0);
        let aff = Aff::read_from_str(ctx, &format!("{{ {tuple} -> [({expr})] }}"))
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
        let pin = Set::read_from_str(ctx, &format!("{{ {tuple} : {expr} = {value} }}"))
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
        return Err(IlpError::Solver(format!("isl's point {values:?} does not solve {text} at {optima:?}")));
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
