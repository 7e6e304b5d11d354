//! Non-triviality: the row must be linearly independent of the earlier rows
//! for every statement that still needs one, i.e. `r·c ≠ 0` for some vector
//! `r` of a basis of the orthogonal complement of its rows so far. That is a
//! union of sign cases `r₁·c ≥ 1`, `r₁·c ≤ −1`, `r₁·c = 0 ∧ r₂·c ≥ 1`, …,
//! searched by branch and bound: each node is the lexmin without the
//! condition (plus the valid inequality that some coefficient on the
//! complement's support is non-zero); where it is trivial for a statement,
//! the node branches on that statement's cases. First the head alone, then
//! the whole vector with the head pinned at its optimum, so the answer is
//! the lexmin of the whole objective vector over the non-trivial points,
//! whatever the order of the cases.

use super::constraints::{tail_objectives, PREFIX};
use super::group::{Group, Layout, Lin, Result, RowStrategy};
use super::ilp::{Constraint, Outcome, Problem, Relation};
use super::solver::Solver;
use super::{Row, RowKind};
use crate::linalg::{dot, null_space};

/// At most this many prefix lexmins in one row's sign-case search; past it the
/// best solution found so far is kept.
pub(super) const SEARCH_BUDGET: usize = 64;

impl Group<'_> {
    /// The lexmin of `p` over the points that are non-trivial for every
    /// member in `need` (see the module comment), or `None` when there is
    /// none. Branch and bound on sign cases, each node solved for the whole
    /// objective vector (the head, then [`tail_objectives`]): a node whose
    /// relaxed optimum is not below the best leaf so far is not explored,
    /// and a node whose optimum is non-trivial everywhere is the optimum of
    /// every case below it. Equal vectors are equal points, so the answer
    /// does not depend on the order of the cases (within the budget).
    pub(super) fn nontrivial(
        &self,
        solver: &mut Solver,
        p: Problem,
        l: &Layout,
        need: &[usize],
        head: usize,
    ) -> Result<Option<Vec<i64>>> {
        // First the head's optimum alone (cheap nodes, ties pruned), then
        // the rest of the vector with the head pinned there: cases that
        // cannot reach the head's optimum are infeasible at once.
        let (mut root, tail) = self.nontrivial_root(p, l, need, head);
        let mut best: Option<(Vec<i64>, Vec<i64>)> = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), l, need, &mut best, &mut budget)?;
        let Some((optimum, values)) = best else { return Ok(None) };
        if tail.is_empty() {
            return Ok(Some(values));
        }
        for (o, v) in root.objectives.iter().zip(&optimum) {
            root.constraints.push(Constraint { coeffs: o.clone(), constant: -v, relation: Relation::Eq });
        }
        root.objectives = tail;
        let mut best = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), l, need, &mut best, &mut budget)?;
        Ok(best.map(|(_, values)| values))
    }

    /// The root of [`Self::nontrivial`]'s search: `p` with the head of
    /// [`tail_objectives`] and the valid inequality, and the tail apart.
    pub(super) fn nontrivial_root(
        &self,
        p: Problem,
        l: &Layout,
        need: &[usize],
        head: usize,
    ) -> (Problem, Vec<Lin>) {
        let mut root = p;
        root.objectives = tail_objectives(&root, head);
        // Valid for every non-trivial point, so that relaxed optima are
        // closer to the leaves below them: a coefficient vector that is zero
        // wherever some basis vector of the orthogonal complement is not
        // lies in the span of the rows so far, so a non-trivial one has a
        // non-zero coefficient there.
        for &k in need {
            let basis = null_space(&self.h[k], self.dims[k]);
            let coeffs: Lin = (0..self.dims[k])
                .filter(|&i| basis.iter().any(|r| r[i] != 0))
                .flat_map(|i| [(l.c_minus[k][i], 1), (l.c_plus[k][i], 1)])
                .collect();
            root.constraints.push(Constraint { coeffs, constant: -1, relation: Relation::Ge });
        }
        let head = head.min(root.objectives.len());
        let tail = root.objectives.split_off(head);
        (root, tail)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn search(
        &self,
        solver: &mut Solver,
        root: &Problem,
        extra: Vec<Constraint>,
        l: &Layout,
        need: &[usize],
        best: &mut Option<(Vec<i64>, Vec<i64>)>,
        budget: &mut usize,
    ) -> Result<()> {
        if *budget == 0 {
            return Ok(());
        }
        *budget -= 1;
        let mut q = root.clone();
        q.constraints.extend(extra.iter().cloned());
        // Only a strictly better optimum matters: stopped as soon as the
        // optima so far show it is not.
        let cutoff = best.as_ref().map(|(b, _)| b.as_slice());
        let (values, bound) = match solver.lexmin_below(&q, cutoff)? {
            Some(Outcome::Optimal { values, objective_values }) => (values, objective_values),
            Some(Outcome::Infeasible) | None => return Ok(()),
        };
        let c_of = |k: usize| -> Vec<i64> {
            (0..self.dims[k]).map(|i| values[l.c_plus[k][i]] - values[l.c_minus[k][i]]).collect()
        };
        let trivial = need.iter().copied().find(|&k| {
            let c = c_of(k);
            null_space(&self.h[k], self.dims[k]).iter().all(|r| dot(r, &c) == 0)
        });
        let Some(k) = trivial else {
            *best = Some((bound, values));
            return Ok(());
        };
        let basis = null_space(&self.h[k], self.dims[k]);
        for j in 0..basis.len() {
            for sign in [1, -1] {
                let mut case = extra.clone();
                case.extend(self.sign_case(l, k, &basis, j, sign));
                self.search(solver, root, case, l, need, best, budget)?;
                if best.as_ref().is_some_and(|(b, _)| *b <= bound) {
                    // A leaf attains this node's relaxed optimum, below
                    // every case here: none can do better.
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Sign case `j` of member `k` for the orthogonal-complement `basis` of
    /// its rows so far: `rᵢ·c = 0` for `i < j` and `sign·r_j·c ≥ 1`.
    fn sign_case(&self, l: &Layout, k: usize, basis: &[Vec<i64>], j: usize, sign: i64) -> Vec<Constraint> {
        let r_dot = |r: &[i64]| -> Lin {
            (0..self.dims[k])
                .flat_map(|i| [(l.c_plus[k][i], r[i]), (l.c_minus[k][i], -r[i])])
                .filter(|(_, a)| *a != 0)
                .collect()
        };
        let mut case: Vec<Constraint> = basis[..j]
            .iter()
            .map(|r| Constraint { coeffs: r_dot(r), constant: 0, relation: Relation::Eq })
            .collect();
        let lin: Lin = r_dot(&basis[j]).into_iter().map(|(v, a)| (v, sign * a)).collect();
        case.push(Constraint { coeffs: lin, constant: -1, relation: Relation::Ge });
        case
    }

    /// The core ILP (3)'s row, non-trivial for every member in `need`.
    pub(super) fn pluto_row(
        &mut self,
        solver: &mut Solver,
        strategy: &impl RowStrategy,
        need: &[usize],
        coincident: bool,
    ) -> Result<Option<Row>> {
        let (p, l) = self.pluto_problem(strategy, coincident)?;
        let Some(values) = self.nontrivial(solver, p, &l, need, PREFIX)? else { return Ok(None) };
        let kind = if coincident { RowKind::Coincident } else { RowKind::Pluto };
        Ok(Some(self.row_from(&l, &values, kind)))
    }
}
