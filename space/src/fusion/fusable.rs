//! Fusability of a set of statements at one level, in the nonnegative-
//! coefficient form (POPL'11 §4.2): is there one schedule row per statement,
//! with nonnegative iterator coefficients and a non-null linear part, that
//! every dependence among them respects (non-negative distance, Farkas'
//! lemma through isl)? Optionally with a pinned loop permutation µ (the
//! iterator each statement's row must use) for the pairwise test of §4.3.

use std::collections::HashMap;

use isl_rs::Context;

use super::graph::Edge;
use super::{Criterion, FusionError};
use crate::schedule::farkas::{farkas, Farkas};
use crate::schedule::ilp::{self, Backend, Constraint, Outcome, Problem, Relation};

/// What a level's tests need: the dependences still to respect there, and per
/// statement its loop depth and the linear parts of the rows above.
pub(super) struct LevelModel<'a> {
    pub ctx: &'a Context,
    pub context: String,
    pub n_params: usize,
    pub dims: Vec<usize>,
    pub level: usize,
    /// Validity dependences not yet strongly satisfied above this level.
    pub edges: Vec<Edge>,
    /// Per statement, the iterator coefficients of the rows above.
    pub above: Vec<Vec<Vec<i64>>>,
    pub criterion: Criterion,
    farkas: HashMap<String, Option<Farkas>>,
    /// ILPs solved so far.
    pub ilps: usize,
    /// Level 1: the original top-level loop of each statement (`None`
    /// outside any loop); sets within one are fusable without an ILP.
    pub original_nest: Vec<Option<usize>>,
    /// Per statement and iterator, +1 or −1: the sign the nonnegative
    /// coefficient takes (the original loop's direction).
    pub directions: Vec<Vec<i64>>,
}

impl<'a> LevelModel<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &'a Context,
        context: String,
        n_params: usize,
        dims: Vec<usize>,
        level: usize,
        edges: Vec<Edge>,
        above: Vec<Vec<Vec<i64>>>,
        criterion: Criterion,
    ) -> Self {
        LevelModel {
            ctx,
            context,
            n_params,
            dims,
            level,
            edges,
            above,
            criterion,
            farkas: HashMap::new(),
            ilps: 0,
            original_nest: Vec::new(),
            directions: Vec::new(),
        }
    }

    /// Whether a statement still has a loop at this level (it needs a
    /// non-null row there; one without keeps a constant row).
    pub fn has_loop(&self, s: usize) -> bool {
        self.dims[s] >= self.level
    }

    /// Whether the original program's outer loop already fuses `set`.
    pub fn witnessed(&self, set: &[usize]) -> bool {
        self.level == 1
            && !self.original_nest.is_empty()
            && set.iter().all(|&s| {
                self.original_nest[s].is_some() && self.original_nest[s] == self.original_nest[set[0]]
            })
    }

    /// Whether `set` (statements) can share one loop at this level, with
    /// `mu[k] = Some(it)` requiring statement `set[k]` to use iterator `it`.
    pub fn fusable(&mut self, set: &[usize], mu: &[Option<usize>]) -> Result<bool, FusionError> {
        let mut p = Problem::new();
        // Per member: iterator coefficients, parameter coefficients, constant.
        let mut c = Vec::new();
        let mut d = Vec::new();
        let mut e = Vec::new();
        for &s in set {
            c.push(
                (0..self.dims[s])
                    .map(|k| p.add_var(format!("S{}.c{k}", s + 1), Some(0), None))
                    .collect::<Vec<_>>(),
            );
            d.push(
                (0..self.n_params)
                    .map(|k| p.add_var(format!("S{}.d{k}", s + 1), Some(0), None))
                    .collect::<Vec<_>>(),
            );
            e.push(p.add_var(format!("S{}.e", s + 1), Some(0), None));
        }
        for (k, &s) in set.iter().enumerate() {
            if !self.has_loop(s) {
                continue;
            }
            match mu.get(k).copied().flatten() {
                Some(it) => p.add_constraint(vec![(c[k][it], 1)], -1, Relation::Ge),
                None => p.add_constraint(c[k].iter().map(|&v| (v, 1)).collect::<Vec<_>>(), -1, Relation::Ge),
            }
            // Linearly independent of the rows above: some iterator that no
            // row above uses, or, when each is used, the first used one left
            // out (sufficient with nonnegative coefficients).
            if !self.above[s].is_empty() {
                let used: Vec<bool> =
                    (0..self.dims[s]).map(|i| self.above[s].iter().any(|r| r[i] != 0)).collect();
                let fresh: Vec<usize> = (0..self.dims[s]).filter(|&i| !used[i]).collect();
                if fresh.is_empty() {
                    let first = used.iter().position(|&u| u).unwrap_or(0);
                    p.add_constraint(vec![(c[k][first], 1)], 0, Relation::Eq);
                } else {
                    p.add_constraint(
                        fresh.iter().map(|&i| (c[k][i], 1)).collect::<Vec<_>>(),
                        -1,
                        Relation::Ge,
                    );
                }
            }
        }
        if let Criterion::Interleaved { max_offset } = self.criterion {
            // First instances at most `max_offset` apart: equal parametric
            // parts, constants within the bound.
            for k in 1..set.len() {
                for (&dk, &d0) in d[k].iter().zip(&d[0]).take(self.n_params) {
                    p.add_constraint(vec![(dk, 1), (d0, -1)], 0, Relation::Eq);
                }
                p.add_constraint(vec![(e[k], -1), (e[0], 1)], max_offset, Relation::Ge);
                p.add_constraint(vec![(e[k], 1), (e[0], -1)], max_offset, Relation::Ge);
            }
        }
        let pos = |s: usize| set.iter().position(|&x| x == s);
        let edges: Vec<Edge> =
            self.edges.iter().filter(|e| pos(e.src).is_some() && pos(e.dst).is_some()).cloned().collect();
        for edge in &edges {
            let Some(f) = self.farkas_of(&edge.relation)? else { continue };
            let (s, t) = (pos(edge.src).unwrap(), pos(edge.dst).unwrap());
            // Slots of φ_t(y) − φ_s(x): constant, parameters, source and
            // sink iterators.
            let mut slots: Vec<Vec<(usize, i64)>> = Vec::new();
            if s == t {
                slots.push(vec![]);
                slots.extend((0..self.n_params).map(|_| vec![]));
            } else {
                slots.push(vec![(e[t], 1), (e[s], -1)]);
                slots.extend((0..self.n_params).map(|l| vec![(d[t][l], 1), (d[s][l], -1)]));
            }
            let dir =
                |st: usize, k: usize| self.directions.get(st).and_then(|d| d.get(k)).copied().unwrap_or(1);
            slots.extend(c[s].iter().enumerate().map(|(k, &v)| vec![(v, -dir(edge.src, k))]));
            slots.extend(c[t].iter().enumerate().map(|(k, &v)| vec![(v, dir(edge.dst, k))]));
            if slots.len() != f.n_slots() {
                return Err(FusionError::Model(format!(
                    "dependence S{} -> S{}: {} Farkas slots for {} schedule slots",
                    edge.src + 1,
                    edge.dst + 1,
                    f.n_slots(),
                    slots.len()
                )));
            }
            for fc in &f.constraints {
                let mut acc: Vec<(usize, i64)> = Vec::new();
                for (a, slot) in fc.coeffs.iter().zip(&slots) {
                    for &(v, k) in slot {
                        match acc.iter_mut().find(|(w, _)| *w == v) {
                            Some(t) => t.1 += a * k,
                            None => acc.push((v, a * k)),
                        }
                    }
                }
                acc.retain(|t| t.1 != 0);
                let relation = if fc.equality { Relation::Eq } else { Relation::Ge };
                p.constraints.push(Constraint { coeffs: acc, constant: fc.constant, relation });
            }
        }
        self.ilps += 1;
        match ilp::lexmin(&p, Backend::Cbc)? {
            Outcome::Optimal { .. } => Ok(true),
            Outcome::Infeasible => Ok(false),
        }
    }

    fn farkas_of(&mut self, relation: &str) -> Result<Option<Farkas>, FusionError> {
        if let Some(f) = self.farkas.get(relation) {
            return Ok(f.clone());
        }
        let f = farkas(self.ctx, relation, &self.context)?;
        self.farkas.insert(relation.to_string(), f.clone());
        Ok(f)
    }
}
