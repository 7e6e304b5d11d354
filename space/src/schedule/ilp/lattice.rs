//! Exact elimination of equalities for the CBC backend: CBC's branch and
//! bound has no notion of lattices (see `cbc`), so each of its solves works
//! on the coordinates of the equalities' integer solutions instead.

use super::IlpError;

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
                        *a = a.checked_add(q.checked_mul(b).ok_or_else(overflow)?).ok_or_else(overflow)?;
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
