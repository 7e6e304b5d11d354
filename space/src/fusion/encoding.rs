//! The convex encoding of the total preorders of n statements at one level
//! (POPL'11 §3): for each pair `i < j`, binaries `p_ij` (i strictly before j)
//! and `e_ij` (i and j in the same group); `s_ij = 1 − p_ij − e_ij` (j before
//! i) is not a variable, so mutual exclusion is `p_ij + e_ij ≤ 1`. The
//! transitivity constraints make every integer point one total preorder and
//! every total preorder one point.
//!
//! Pairs whose relation the dependences fix are substituted away: a fixed
//! `e_ij = 0` or forbidden order removes a variable, and every constraint that
//! becomes constant is dropped (checked, never silently false).

use std::collections::BTreeSet;

use crate::schedule::ilp::{Constraint, Problem, Relation};
use vocab::preorder::Preorder;

/// Which relations a pair `i < j` may still take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    /// i strictly before j (`p_ij = 1`).
    pub before: bool,
    /// Same group (`e_ij = 1`).
    pub equal: bool,
    /// j strictly before i (`s_ij = 1`).
    pub after: bool,
}

impl Allowed {
    pub const ANY: Allowed = Allowed { before: true, equal: true, after: true };

    fn count(self) -> usize {
        self.before as usize + self.equal as usize + self.after as usize
    }
}

/// A variable of the encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Var {
    P(usize, usize),
    E(usize, usize),
}

impl Var {
    pub fn name(self) -> String {
        match self {
            Var::P(i, j) => format!("p_{}_{}", i + 1, j + 1),
            Var::E(i, j) => format!("e_{}_{}", i + 1, j + 1),
        }
    }
}

/// `constant + Σ coeff·x_var` over encoding variables (by index).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Affine {
    pub constant: i64,
    pub terms: Vec<(usize, i64)>,
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine { constant: c, terms: Vec::new() }
    }

    fn var(v: usize) -> Affine {
        Affine { constant: 0, terms: vec![(v, 1)] }
    }

    fn combine(parts: &[(&Affine, i64)]) -> Affine {
        let mut constant = 0;
        let mut terms: Vec<(usize, i64)> = Vec::new();
        for (a, k) in parts {
            constant += k * a.constant;
            for &(v, c) in &a.terms {
                match terms.iter_mut().find(|(w, _)| *w == v) {
                    Some(t) => t.1 += k * c,
                    None => terms.push((v, k * c)),
                }
            }
        }
        terms.retain(|t| t.1 != 0);
        terms.sort();
        Affine { constant, terms }
    }

    pub fn eval(&self, x: &[i64]) -> i64 {
        self.constant + self.terms.iter().map(|&(v, c)| c * x[v]).sum::<i64>()
    }
}

#[derive(Debug, Clone)]
pub struct Encoding {
    pub n: usize,
    pub vars: Vec<Var>,
    /// Per pair `i < j` (index `pair(i, j)`): `p_ij`, `e_ij` as affine forms.
    p: Vec<Affine>,
    e: Vec<Affine>,
    /// `form ≥ 0`, deduplicated; transitivity first, then pruning sets.
    pub constraints: Vec<Affine>,
    /// Constraints that transitivity contributes (for statistics).
    pub transitivity: usize,
}

impl Encoding {
    /// The encoding of every total preorder compatible with `allowed`
    /// (indexed by `pair(n, i, j)`). `None` when some pair allows nothing.
    pub fn new(n: usize, allowed: &[Allowed]) -> Option<Encoding> {
        Self::with_representatives(n, allowed, &(0..n).collect::<Vec<_>>())
    }

    /// As [`new`](Self::new), where statements that must share a group (a
    /// dependence cycle) have one representative, `rep[i] ≤ i`: only pairs
    /// of representatives get variables and transitivity constraints; every
    /// other pair takes its representatives' forms (`e = 1` inside a group).
    pub fn with_representatives(n: usize, allowed: &[Allowed], rep: &[usize]) -> Option<Encoding> {
        let mut vars = Vec::new();
        let (mut p, mut e) = (Vec::new(), Vec::new());
        let mut constraints = BTreeSet::new();
        for i in 0..n {
            for j in i + 1..n {
                if rep[i] != i || rep[j] != j {
                    // Filled in below from the representatives.
                    p.push(Affine::constant(0));
                    e.push(Affine::constant(1));
                    continue;
                }
                let a = allowed[pair(n, i, j)];
                let mut fresh = |v: Var| {
                    vars.push(v);
                    Affine::var(vars.len() - 1)
                };
                let (pv, ev) = match (a.before, a.equal, a.after) {
                    (false, false, false) => return None,
                    (true, false, false) => (Affine::constant(1), Affine::constant(0)),
                    (false, true, false) => (Affine::constant(0), Affine::constant(1)),
                    (false, false, true) => (Affine::constant(0), Affine::constant(0)),
                    // One binary decides; the other is its complement or zero.
                    (true, true, false) => {
                        let ev = fresh(Var::E(i, j));
                        (Affine::combine(&[(&Affine::constant(1), 1), (&ev, -1)]), ev)
                    }
                    (false, true, true) => (Affine::constant(0), fresh(Var::E(i, j))),
                    (true, false, true) => (fresh(Var::P(i, j)), Affine::constant(0)),
                    (true, true, true) => {
                        let pv = fresh(Var::P(i, j));
                        let ev = fresh(Var::E(i, j));
                        // Relaxed mutual exclusion: s_ij = 1 − p − e ≥ 0.
                        constraints.insert(Affine::combine(&[
                            (&Affine::constant(1), 1),
                            (&pv, -1),
                            (&ev, -1),
                        ]));
                        (pv, ev)
                    }
                };
                debug_assert!(a.count() > 0);
                p.push(pv);
                e.push(ev);
            }
        }
        let mut enc = Encoding { n, vars, p, e, constraints: Vec::new(), transitivity: 0 };
        for i in 0..n {
            for j in i + 1..n {
                if (rep[i] != i || rep[j] != j) && rep[i] != rep[j] {
                    let (pv, ev) = (enc.before(rep[i], rep[j]), enc.eq(rep[i], rep[j]));
                    let k = pair(n, i, j);
                    enc.p[k] = pv;
                    enc.e[k] = ev;
                }
            }
        }
        // Transitivity over ordered triples of distinct elements, for the
        // preorder ≤ (before or equal) with < its strict part:
        //   a=b ∧ b=c → a=c,  a=b ∧ b<c → a<c,  a<b ∧ b=c → a<c,  a<b ∧ b<c → a<c.
        // Each `x ∧ y → z` is `z − x − y + 1 ≥ 0` on binaries.
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    if a == b || b == c || a == c || rep[a] != a || rep[b] != b || rep[c] != c {
                        continue;
                    }
                    let rules = [
                        (enc.eq(a, b), enc.eq(b, c), enc.eq(a, c)),
                        (enc.eq(a, b), enc.before(b, c), enc.before(a, c)),
                        (enc.before(a, b), enc.eq(b, c), enc.before(a, c)),
                        (enc.before(a, b), enc.before(b, c), enc.before(a, c)),
                    ];
                    for (x, y, z) in rules {
                        let f = Affine::combine(&[(&z, 1), (&x, -1), (&y, -1), (&Affine::constant(1), 1)]);
                        if f.terms.is_empty() {
                            if f.constant < 0 {
                                // Fixed relations that contradict each other.
                                return None;
                            }
                            continue;
                        }
                        // Redundant when even the most negative assignment of
                        // binaries keeps it non-negative.
                        let worst: i64 = f.constant + f.terms.iter().map(|t| t.1.min(0)).sum::<i64>();
                        if worst >= 0 {
                            continue;
                        }
                        constraints.insert(f);
                    }
                }
            }
        }
        enc.transitivity = constraints.len();
        enc.constraints = constraints.into_iter().collect();
        Some(enc)
    }

    /// `a` strictly before `b`.
    pub fn before(&self, a: usize, b: usize) -> Affine {
        if a < b {
            self.p[pair(self.n, a, b)].clone()
        } else {
            let k = pair(self.n, b, a);
            // s_ba = 1 − p_ba − e_ba
            Affine::combine(&[(&Affine::constant(1), 1), (&self.p[k], -1), (&self.e[k], -1)])
        }
    }

    /// `a` and `b` in the same group.
    pub fn eq(&self, a: usize, b: usize) -> Affine {
        self.e[pair(self.n, a.min(b), a.max(b))].clone()
    }

    /// Adds "not all of `set` in one group": along consecutive elements,
    /// `Σ e ≤ len − 2` (with transitivity, equivalent to the whole set).
    pub fn forbid_group(&mut self, set: &[usize]) {
        let mut parts: Vec<Affine> = set.windows(2).map(|w| self.eq(w[0], w[1])).collect();
        parts.push(Affine::constant(-(set.len() as i64 - 2)));
        let refs: Vec<(&Affine, i64)> = parts.iter().map(|a| (a, -1)).collect();
        let f = Affine::combine(&refs);
        if !self.constraints.contains(&f) {
            self.constraints.push(f);
        }
    }

    /// The point of a preorder (which must list each of the n statements once).
    pub fn point_of(&self, p: &Preorder) -> Vec<i64> {
        let mut group = vec![0usize; self.n];
        for (g, members) in p.0.iter().enumerate() {
            for &s in members {
                group[s] = g;
            }
        }
        self.vars
            .iter()
            .map(|v| match *v {
                Var::P(i, j) => (group[i] < group[j]) as i64,
                Var::E(i, j) => (group[i] == group[j]) as i64,
            })
            .collect()
    }

    /// Whether `x` satisfies every constraint, and every fixed pair relation
    /// holds (a point's variables alone cannot break a fixed one).
    pub fn satisfied(&self, x: &[i64]) -> bool {
        x.len() == self.vars.len()
            && x.iter().all(|&v| v == 0 || v == 1)
            && self.constraints.iter().all(|c| c.eval(x) >= 0)
    }

    /// Whether the preorder is a point of this encoding: its variables
    /// satisfy the constraints and its fixed relations are the fixed ones.
    pub fn contains(&self, pre: &Preorder) -> bool {
        let x = self.point_of(pre);
        if !self.satisfied(&x) {
            return false;
        }
        let mut group = vec![0usize; self.n];
        for (g, members) in pre.0.iter().enumerate() {
            for &s in members {
                group[s] = g;
            }
        }
        (0..self.n).all(|i| {
            (i + 1..self.n).all(|j| {
                self.before(i, j).eval(&x) == (group[i] < group[j]) as i64
                    && self.eq(i, j).eval(&x) == (group[i] == group[j]) as i64
            })
        })
    }

    /// The preorder of a point that satisfies the constraints.
    pub fn decode(&self, x: &[i64]) -> Preorder {
        // Rank = number of elements strictly before.
        let rank: Vec<usize> = (0..self.n)
            .map(|a| (0..self.n).filter(|&b| b != a && self.before(b, a).eval(x) == 1).count())
            .collect();
        let mut ranks: Vec<usize> = rank.clone();
        ranks.sort();
        ranks.dedup();
        Preorder(ranks.iter().map(|r| (0..self.n).filter(|&a| rank[a] == *r).collect()).collect())
    }

    /// The encoding as an ILP over binaries (no objective yet).
    pub fn problem(&self) -> Problem {
        let mut p = Problem::new();
        for v in &self.vars {
            p.add_var(v.name(), Some(0), Some(1));
        }
        for c in &self.constraints {
            p.constraints.push(Constraint {
                coeffs: c.terms.clone(),
                constant: c.constant,
                relation: Relation::Ge,
            });
        }
        p
    }
}

/// Index of the pair `i < j` among the n(n−1)/2 pairs.
pub fn pair(n: usize, i: usize, j: usize) -> usize {
    debug_assert!(i < j && j < n);
    i * n - i * (i + 1) / 2 + (j - i - 1)
}
