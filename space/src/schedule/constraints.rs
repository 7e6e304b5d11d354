//! The ILPs of one schedule row, built on the Farkas constraints of the
//! group's dependences: the core ILP (3) (validity, coincidence, proximity
//! bound) and the Feautrier ILP (carry as many dependence groups as
//! possible), with the objective vectors they share.
//!
//! Variables of one row's ILP, all non-negative integers:
//! `u⁻ₗ, u⁺ₗ` (parameter coefficients of the proximity distance bound), `w`
//! (its constant), and per statement `dₗ` (parameter coefficients), `e`
//! (constant) and `c⁻ₖ, c⁺ₖ` (iterator coefficients, `c = c⁺ − c⁻`: negative
//! coefficients mean loop reversal). A Feautrier row adds `ε ∈ [0, 1]` per
//! dependence group.
//!
//! Objectives, in order: a head of sums (isl's objective prefix: proximity
//! bound, constant, parameter and iterator coefficient sums, or the locality
//! and carrying objectives of the unified ILPs), the sum of the statement
//! constants, then every coefficient on its own (see [`tail_objectives`]).

use std::collections::HashMap;

use super::farkas::{farkas, Farkas};
use super::group::{DepGroup, Group, Layout, Lin, Result, RowStrategy};
use super::ilp::{Constraint, Problem, Relation};
use super::solver::{lexmin_values, Solver};
use super::{Row, RowKind, ScheduleError};

/// Objectives that rank non-trivial solutions: bound, constant, parameter and
/// iterator coefficient sums.
pub(super) const PREFIX: usize = 4;

/// Every ILP variable is bounded by this: far beyond any sensible schedule
/// coefficient, and it keeps CBC on a box, where it is reliable, with row
/// activities exact in floating point.
pub(super) const COEFFICIENT_BOUND: i64 = 1 << 12;

impl Group<'_> {
    pub(super) fn layout(&self, p: &mut Problem, with_bound: bool) -> Layout {
        let np = if with_bound { self.np } else { 0 };
        let b = Some(COEFFICIENT_BOUND);
        let u_minus = (0..np).map(|l| p.add_var(format!("u-{l}"), Some(0), b)).collect();
        let u_plus = (0..np).map(|l| p.add_var(format!("u+{l}"), Some(0), b)).collect();
        let w = p.add_var("w".to_string(), Some(0), if with_bound { b } else { Some(0) });
        let mut d = Vec::new();
        let mut e = Vec::new();
        let mut c_minus = Vec::new();
        let mut c_plus = Vec::new();
        for (k, &s) in self.members.iter().enumerate() {
            let name = &self.scop.statements[s].name;
            d.push((0..self.np).map(|l| p.add_var(format!("{name}.d{l}"), Some(0), None)).collect());
            e.push(p.add_var(format!("{name}.e"), Some(0), None));
            let max = &self.max_coefficient[k];
            c_minus.push(
                (0..self.dims[k]).map(|i| p.add_var(format!("{name}.c-{i}"), Some(0), max[i])).collect(),
            );
            c_plus.push(
                (0..self.dims[k]).map(|i| p.add_var(format!("{name}.c+{i}"), Some(0), max[i])).collect(),
            );
        }
        Layout { u_minus, u_plus, w, d, e, c_minus, c_plus }
    }

    /// The slot expressions of `φ_dst(y) − φ_src(x)` (Farkas slot order: constant,
    /// parameters, source iterators, sink iterators).
    pub(super) fn distance_slots(&self, l: &Layout, dep: &DepGroup) -> Vec<Lin> {
        let (s, t) = (self.pos(dep.src), self.pos(dep.dst));
        let mut slots = Vec::new();
        if s == t {
            slots.push(vec![]);
            slots.extend((0..self.np).map(|_| vec![]));
        } else {
            slots.push(vec![(l.e[t], 1), (l.e[s], -1)]);
            slots.extend((0..self.np).map(|p| vec![(l.d[t][p], 1), (l.d[s][p], -1)]));
        }
        slots.extend((0..self.dims[s]).map(|i| vec![(l.c_plus[s][i], -1), (l.c_minus[s][i], 1)]));
        slots.extend((0..self.dims[t]).map(|i| vec![(l.c_plus[t][i], 1), (l.c_minus[t][i], -1)]));
        slots
    }

    pub(super) fn farkas_of(&mut self, relation: &str) -> Result<Option<Farkas>> {
        if let Some(f) = self.farkas_cache.get(relation) {
            return Ok(f.clone());
        }
        let f = farkas(self.ctx, relation, &self.scop.context)?;
        self.farkas_cache.insert(relation.to_string(), f.clone());
        Ok(f)
    }

    /// Validity of the distance `slots` on `f`'s relation: non-negative, or
    /// zero when `zero` (coincidence), as equalities where `f` allows.
    pub(super) fn add_validity(p: &mut Problem, f: &Farkas, slots: &[Lin], zero: bool) {
        match f.vanishing().filter(|_| zero) {
            Some(vanishing) => Self::add_farkas(p, &vanishing, slots, 1),
            None => {
                Self::add_farkas(p, f, slots, 1);
                if zero {
                    Self::add_farkas(p, f, slots, -1);
                }
            }
        }
    }

    /// Adds `f(slots) ⋈ 0` for every Farkas constraint, `sign` flipping the form.
    pub(super) fn add_farkas(p: &mut Problem, f: &Farkas, slots: &[Lin], sign: i64) {
        for c in &f.constraints {
            let mut acc: HashMap<usize, i64> = HashMap::new();
            for (a, slot) in c.coeffs.iter().zip(slots) {
                if *a == 0 {
                    continue;
                }
                for (v, k) in slot {
                    *acc.entry(*v).or_default() += sign * a * k;
                }
            }
            let mut coeffs: Vec<(usize, i64)> = acc.into_iter().filter(|(_, k)| *k != 0).collect();
            coeffs.sort();
            let relation = if c.equality { Relation::Eq } else { Relation::Ge };
            p.constraints.push(Constraint { coeffs, constant: c.constant, relation });
        }
    }

    /// isl's objective prefix (bound, constant, parameter and iterator
    /// coefficient sums), then the individual coefficients, the last
    /// iterators first so that the original loop order wins ties.
    fn objectives(&self, p: &mut Problem, l: &Layout) {
        let sum = |vars: Vec<usize>| -> Lin { vars.into_iter().map(|v| (v, 1)).collect() };
        p.objectives.push(sum(l.u_minus.iter().chain(&l.u_plus).copied().collect()));
        p.objectives.push(vec![(l.w, 1)]);
        p.objectives.push(sum(l.d.iter().flatten().copied().collect()));
        p.objectives.push(sum(l.c_minus.iter().chain(&l.c_plus).flatten().copied().collect()));
        self.individual_objectives(p, l);
    }

    pub(super) fn individual_objectives(&self, p: &mut Problem, l: &Layout) {
        for (m, p_) in l.u_minus.iter().zip(&l.u_plus) {
            p.objectives.push(vec![(*m, 1)]);
            p.objectives.push(vec![(*p_, 1)]);
        }
        for k in 0..self.members.len() {
            for i in (0..self.dims[k]).rev() {
                p.objectives.push(vec![(l.c_minus[k][i], 1)]);
                p.objectives.push(vec![(l.c_plus[k][i], 1)]);
            }
            for v in &l.d[k] {
                p.objectives.push(vec![(*v, 1)]);
            }
            p.objectives.push(vec![(l.e[k], 1)]);
        }
    }

    /// The core ILP (3): validity (zero distance where `coincident`), the
    /// proximity bound, isl's objectives.
    pub(super) fn pluto_problem(
        &mut self,
        strategy: &impl RowStrategy,
        coincident: bool,
    ) -> Result<(Problem, Layout)> {
        let mut p = Problem::new();
        let l = self.layout(&mut p, true);
        let deps = self.deps.clone();
        for dep in &deps {
            let Some(f) = self.farkas_of(&dep.relation)? else { continue };
            let slots = self.distance_slots(&l, dep);
            // Zero distance on everything the band has to respect, not only
            // on what its earlier rows left: that is what makes the flag
            // survive tiling (isl's definition).
            Self::add_validity(&mut p, &f, &slots, coincident && strategy.enforce_coincidence(self, dep));
            // Proximity: u·p + w − distance ≥ 0.
            let mut bound =
                slots.iter().map(|s| s.iter().map(|(v, k)| (*v, -k)).collect::<Lin>()).collect::<Vec<_>>();
            bound[0].push((l.w, 1));
            for i in 0..self.np {
                bound[1 + i].push((l.u_plus[i], 1));
                bound[1 + i].push((l.u_minus[i], -1));
            }
            Self::add_farkas(&mut p, &f, &bound, 1);
        }
        self.objectives(&mut p, &l);
        p.constraints.extend(strategy.row_constraints(self, &l));
        Ok((p, l))
    }

    /// A row carrying as many dependence groups as possible, every other
    /// one kept valid. With `self_first`, only a statement's dependences on
    /// itself count, unless none of them can be carried.
    pub(super) fn feautrier_row(&mut self, solver: &mut Solver, self_first: bool) -> Result<Row> {
        if self_first && self.deps.iter().any(|d| d.src == d.dst) {
            if let Some((row, carried)) = self.feautrier_lexmin(solver, |d| d.src == d.dst)? {
                if carried > 0 {
                    return Ok(row);
                }
            }
        }
        self.feautrier_lexmin(solver, |_| true)?.map(|(row, _)| row).ok_or_else(|| {
            ScheduleError::Stuck(format!(
                "group {}: the Feautrier ILP is infeasible (a dependence cycle within one instance?)",
                self.index
            ))
        })
    }

    /// The Feautrier ILP where the groups `counted` says may be carried
    /// (an `ε` each); the others only need a distance of at least zero.
    /// The row, and how many counted groups it carries.
    fn feautrier_lexmin(
        &mut self,
        solver: &mut Solver,
        counted: impl Fn(&DepGroup) -> bool,
    ) -> Result<Option<(Row, i64)>> {
        let mut p = Problem::new();
        let l = self.layout(&mut p, false);
        let deps = self.deps.clone();
        let mut eps = Vec::new();
        for dep in &deps {
            let Some(f) = self.farkas_of(&dep.relation)? else { continue };
            let mut slots = self.distance_slots(&l, dep);
            if counted(dep) {
                let e = p.add_var(format!("eps.{}", dep.label()), Some(0), Some(1));
                eps.push(e);
                slots[0].push((e, -1));
            }
            Self::add_farkas(&mut p, &f, &slots, 1);
        }
        // Carry as many groups as possible: minimise Σ(1 − ε), i.e. −Σε.
        p.objectives.push(eps.iter().map(|&e| (e, -1)).collect());
        p.objectives.push(l.d.iter().flatten().map(|&v| (v, 1)).collect());
        p.objectives.push(l.c_minus.iter().chain(&l.c_plus).flatten().map(|&v| (v, 1)).collect());
        self.individual_objectives(&mut p, &l);
        Ok(staged_lexmin(solver, p, 3)?.map(|values| {
            let carried = eps.iter().map(|&e| values[e]).sum();
            (self.row_from(&l, &values, RowKind::Feautrier), carried)
        }))
    }

    pub(super) fn row_from(&self, l: &Layout, v: &[i64], kind: RowKind) -> Row {
        let affine = self
            .members
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let c = (0..self.dims[k]).map(|i| v[l.c_plus[k][i]] - v[l.c_minus[k][i]]).collect();
                let d = l.d[k].iter().map(|&x| v[x]).collect();
                (s, c, d, v[l.e[k]])
            })
            .collect();
        Row {
            group: self.index,
            band: self.band_index,
            kind,
            coincident: false,
            affine,
            carries: Vec::new(),
            spatial: Vec::new(),
        }
    }
}

/// The objective vector of a row problem whose objectives after the first
/// `head` are single non-negative variables (the individual coefficients):
/// the head, then the sum of the tail variables that no head sum contains
/// (statement constants), then the tail. Other shapes are left as they are.
pub(super) fn tail_objectives(p: &Problem, head: usize) -> Vec<Lin> {
    let head = head.min(p.objectives.len());
    let (first, tail) = p.objectives.split_at(head);
    let single = |o: &Lin| o.len() == 1 && o[0].1 == 1;
    if !tail.iter().all(single) {
        return p.objectives.clone();
    }
    let in_head_sum =
        |v: usize| first.iter().any(|o| o.iter().all(|&(_, a)| a == 1) && o.iter().any(|&(x, _)| x == v));
    let unbounded: Lin = tail.iter().map(|o| o[0].0).filter(|&v| !in_head_sum(v)).map(|v| (v, 1)).collect();
    let mut out = first.to_vec();
    if !unbounded.is_empty() {
        out.push(unbounded);
    }
    out.extend(tail.iter().cloned());
    out
}

/// The lexmin of a row problem (no non-triviality) for [`tail_objectives`].
fn staged_lexmin(solver: &mut Solver, p: Problem, head: usize) -> Result<Option<Vec<i64>>> {
    let mut p = p;
    p.objectives = tail_objectives(&p, head);
    lexmin_values(solver, &p)
}
