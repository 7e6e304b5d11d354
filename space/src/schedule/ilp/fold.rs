//! Folding for the CBC backend: a run of single-variable objectives, each
//! bounded in `[0, U]`, has the lexmin of one mixed-radix sum, so one CBC
//! solve replaces the run (the scheduler's long tails of coefficients).

use super::{Problem, Relation};

/// The product of `(U + 1)` over one folded run of objectives stays
/// within this: values and weights far inside f64's exact integers and
/// CBC's tolerances.
const FOLD_LIMIT: i64 = 1 << 16;

/// The objectives from `k` on that are each one variable (positive
/// coefficient) known to lie in `[0, U]`: a lower bound of at least 0
/// and an upper bound, its own or implied by an earlier objective that
/// is a positive sum of non-negative variables, pinned at its optimum
/// (`fixed`). As many as fit [`FOLD_LIMIT`].
pub(super) fn foldable_run(
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
pub(super) fn implied_upper_bounds(problem: &Problem) -> Vec<Option<i64>> {
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
