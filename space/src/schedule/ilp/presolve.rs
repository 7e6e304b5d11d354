//! The CBC backend's presolve: constraints divided by their gcd, parallel
//! inequalities merged, opposite ones with no room between them turned into
//! equalities. The integer points stay the same.

use super::{Constraint, Problem, Relation};

/// The problem with every constraint divided by the gcd of its
/// coefficients (and duplicates merged), or `None` when that shows it
/// infeasible. Same integer points, so same answers; the floored
/// constants of inequalities are cuts CBC need not find.
pub(super) fn presolve(problem: &Problem) -> Option<Problem> {
    fn gcd(a: i128, b: i128) -> i128 {
        if b == 0 {
            a.abs()
        } else {
            gcd(b, a % b)
        }
    }
    let mut out = Problem { constraints: Vec::with_capacity(problem.constraints.len()), ..problem.clone() };
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
/// equalities, while the lattice of each CBC solve removes explicit ones with
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
