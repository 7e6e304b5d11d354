//! The one place the driver solves ILPs: [`ilp::lexmin_below`] with the
//! chosen backend, optionally cross-checked against the other, with
//! repeated and trivially satisfied rows removed first, and answered from
//! a memo where an earlier schedule asked the same.

use super::ilp::memo::{self, Memo};
use super::ilp::{self, Backend, Outcome, Problem, Relation};
use super::ScheduleError;

type Result<T> = std::result::Result<T, ScheduleError>;

/// Solves lexmins with the chosen backend, optionally cross-checked.
pub(super) struct Solver<'m> {
    pub backend: Backend,
    pub cross_check: bool,
    /// Not used when cross-checking: that is for solving.
    pub memo: Option<&'m dyn Memo>,
    pub lexmins: usize,
    /// Lexmins answered by the memo.
    pub remembered: usize,
    /// Cross-checked lexmins, and those isl gave up on (operation quota).
    pub checked: usize,
    pub unchecked: usize,
}

impl Solver<'_> {
    pub(super) fn lexmin(&mut self, p: &Problem) -> Result<Outcome> {
        Ok(self.lexmin_below(p, None)?.expect("no cutoff, no early stop"))
    }

    /// [`ilp::lexmin_below`]: `None` when the optimum is not below `cutoff`.
    pub(super) fn lexmin_below(&mut self, p: &Problem, cutoff: Option<&[i64]>) -> Result<Option<Outcome>> {
        self.lexmins += 1;
        let memo = self.memo.filter(|_| !self.cross_check).map(|m| (m, memo::key(p, self.backend, cutoff)));
        if let Some((m, key)) = &memo {
            if let Some(answer) = m.get(key).and_then(|text| memo::decode(&text, p)) {
                self.remembered += 1;
                return Ok(answer);
            }
        }
        let reduced = without_redundant_rows(p);
        let p = &reduced;
        let out = ilp::lexmin_below(p, self.backend, cutoff)?;
        if let Some((m, key)) = &memo {
            m.put(key, &memo::encode(&out));
        }
        if self.cross_check {
            let other = if self.backend == Backend::Cbc { Backend::Isl } else { Backend::Cbc };
            let theirs = match ilp::lexmin_below(p, other, cutoff) {
                Err(ilp::IlpError::Quota) => {
                    self.unchecked += 1;
                    return Ok(out);
                }
                r => r?,
            };
            self.checked += 1;
            let opt = |o: &Option<Outcome>| match o {
                Some(Outcome::Optimal { objective_values, .. }) => Some(Some(objective_values.clone())),
                Some(Outcome::Infeasible) => Some(None),
                None => None,
            };
            if opt(&out) != opt(&theirs) {
                return Err(ScheduleError::BackendsDisagree(format!(
                    "{:?}: {:?}, {:?}: {:?} ({} variables, {} constraints, cutoff {:?})",
                    self.backend,
                    opt(&out),
                    other,
                    opt(&theirs),
                    p.vars.len(),
                    p.constraints.len(),
                    cutoff
                )));
            }
        }
        Ok(out)
    }
}

/// `p` without constraints that repeat an earlier one and without
/// inequalities that every point within the variables' bounds satisfies (no
/// negative coefficient on a variable bounded below by 0, a non-negative
/// constant). The feasible set is unchanged. Locality ILPs repeat the same
/// Farkas rows many times (one per relation of equal shape): heat-3d's (4)
/// had 4 544 constraints of which 425 distinct.
fn without_redundant_rows(p: &Problem) -> Problem {
    let mut seen = std::collections::HashSet::new();
    let constraints = p
        .constraints
        .iter()
        .filter(|c| {
            let mut key = c.coeffs.clone();
            key.sort_unstable();
            let implied = c.relation == Relation::Ge
                && c.constant >= 0
                && c.coeffs.iter().all(|&(v, a)| a >= 0 && p.vars[v].lower.is_some_and(|l| l >= 0));
            !implied && seen.insert((key, c.constant, c.relation == Relation::Eq))
        })
        .cloned()
        .collect();
    Problem { vars: p.vars.clone(), constraints, objectives: p.objectives.clone() }
}

pub(super) fn lexmin_values(solver: &mut Solver, p: &Problem) -> Result<Option<Vec<i64>>> {
    Ok(match solver.lexmin(p)? {
        Outcome::Optimal { values, .. } => Some(values),
        Outcome::Infeasible => None,
    })
}
