//! Diamond tiles (Bondhugula, Bandishti and Pananilath, "Diamond tiling",
//! IEEE TPDS 2017): a band whose rows are a time row `t` and a skewed one
//! `a = α·t + s·x` (per statement, plus its constant) tiles the iteration
//! space in parallelograms whose first row of tiles starts one tile after
//! another. Replacing the time row by the skew's mirror `b = γ·t − s·x`
//! (its own constants) keeps the band permutable where every dependence
//! the band respects has a non-negative distance along `b`, and `a + b`
//! is then a multiple of `t`: under a wavefront of the two tile loops
//! every tile of the first time slab is on the same diagonal, so a row of
//! tiles starts at once (concurrent start). The mirror is the lexmin of
//! the core ILP (3) with the space coefficients fixed, so its time
//! coefficient and constants are the least that keep it valid.

use super::group::{Group, Result, RowStrategy};
use super::ilp::{Constraint, Relation};
use super::solver::{lexmin_values, Solver};
use super::RowKind;

impl Group<'_> {
    /// The current band with its time row replaced by the mirror of its
    /// first skewed row, where the band has both and the mirror is valid;
    /// else the band as it is. Rows keep their places; every row is
    /// classified again (carried dependences, coincidence) in order.
    pub(super) fn diamond(&mut self, strategy: &mut impl RowStrategy, solver: &mut Solver) -> Result<()> {
        let rows = &self.band;
        // Per member the time dimension is the outermost iterator.
        let time = |c: &[i64]| c.first().is_some_and(|&t| t != 0);
        let space = |c: &[i64]| c.iter().skip(1).any(|&x| x != 0);
        let is_time = |r: &super::Row| r.affine.iter().all(|(_, c, _, _)| time(c) && !space(c));
        let is_skew = |r: &super::Row| r.affine.iter().all(|(_, c, _, _)| time(c) && space(c));
        let (Some(t), Some(s)) = (rows.iter().position(is_time), rows.iter().position(is_skew)) else {
            return Ok(());
        };
        let skew: Vec<Vec<i64>> = rows[s].affine.iter().map(|(_, c, _, _)| c.clone()).collect();
        let (mut p, l) = self.pluto_problem(&super::group::Core, false)?;
        for (k, c) in skew.iter().enumerate() {
            // b's space coefficients are the skew's, negated; its time one positive.
            for (i, &x) in c.iter().enumerate().skip(1) {
                let coeffs = vec![(l.c_plus[k][i], 1), (l.c_minus[k][i], -1)];
                p.constraints.push(Constraint { coeffs, constant: x, relation: Relation::Eq });
            }
            let coeffs = vec![(l.c_plus[k][0], 1), (l.c_minus[k][0], -1)];
            p.constraints.push(Constraint { coeffs, constant: -1, relation: Relation::Ge });
        }
        let Some(values) = lexmin_values(solver, &p)? else { return Ok(()) };
        let mirror = self.row_from(&l, &values, RowKind::Diamond);
        // `b = −a` would be no second row.
        if mirror.affine.iter().zip(&skew).any(|((_, b, _, _), a)| b[0] == -a[0]) {
            return Ok(());
        }
        // The band again from its first row, the mirror in the time row's place.
        let mut band = std::mem::take(&mut self.band);
        band[t] = mirror;
        for h in &mut self.h {
            h.truncate(h.len() - band.len());
        }
        self.band_changed();
        for row in band {
            let row = Self::unclassified(row);
            self.push(strategy, row)?;
        }
        Ok(())
    }

    /// `row` as the ILP gave it: what it carries and whether it is
    /// coincident are for the band it joins to say.
    fn unclassified(mut row: super::Row) -> super::Row {
        row.carries.clear();
        row.coincident = false;
        row
    }
}
