//! Clay's loop transformations on the (β, α) form, each named by the β-prefix of the loop
//! (or statement) it acts on: `(0,1)` is the second node inside the first outermost loop.
//!
//! Structure: `reorder`, `fuse` (Clay's FUSENEXT), `distribute`, and `insert` (Chlore's
//! pseudo strip-mine: a loop that runs once, at 0, wrapped around a node). Loops, for every
//! statement inside the named loop at its depth: `interchange`, `reverse`, `skew`, `shift`;
//! and `reshape`, which changes one iterator's coefficient of one statement's loop.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::form::{Aff, ClayForm};

/// One transformation; `prefix` is the β-prefix of the node it acts on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum Step {
    /// The children of `prefix` move: child `c` goes to position `order[c]`.
    Reorder { prefix: Vec<i64>, order: Vec<i64> },
    /// The loop `prefix` and the loop right after it become one loop: the second's
    /// children follow the first's.
    Fuse { prefix: Vec<i64> },
    /// The children of loop `prefix` from position `at` on move to a new loop right after it.
    Distribute { prefix: Vec<i64>, at: i64 },
    /// A loop that runs once (at 0) wraps the node `prefix`.
    Insert { prefix: Vec<i64> },
    /// The loop `prefix` (at depth d = its length) trades places with the loop at `depth`,
    /// for the statements inside it.
    Interchange { prefix: Vec<i64>, depth: usize },
    /// The loop `prefix` runs backwards.
    Reverse { prefix: Vec<i64> },
    /// The loop `prefix` runs over itself plus `factor` times the loop at `depth`.
    Skew { prefix: Vec<i64>, depth: usize, factor: i64 },
    /// The loop `prefix` runs over itself plus `params`·parameters + `constant`.
    Shift { prefix: Vec<i64>, params: Vec<i64>, constant: i64 },
    /// The loop `prefix` runs over itself plus `factor` times iterator `iterator` of the
    /// (one) statement inside.
    Reshape { prefix: Vec<i64>, iterator: usize, factor: i64 },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {reason}")]
pub struct StepError {
    pub step: String,
    pub reason: String,
}

/// `(0,1,0)`; `()` for the root.
pub fn prefix_text(p: &[i64]) -> String {
    format!("({})", p.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(","))
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Reorder { prefix, order } => write!(
                f,
                "reorder {} [{}]",
                prefix_text(prefix),
                order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(" ")
            ),
            Step::Fuse { prefix } => write!(f, "fuse {}", prefix_text(prefix)),
            Step::Distribute { prefix, at } => write!(f, "distribute {} {at}", prefix_text(prefix)),
            Step::Insert { prefix } => write!(f, "insert {}", prefix_text(prefix)),
            Step::Interchange { prefix, depth } => write!(f, "interchange {} {depth}", prefix_text(prefix)),
            Step::Reverse { prefix } => write!(f, "reverse {}", prefix_text(prefix)),
            Step::Skew { prefix, depth, factor } => {
                write!(f, "skew {} {depth} {factor}", prefix_text(prefix))
            }
            Step::Shift { prefix, params, constant } => write!(
                f,
                "shift {} [{}] {constant}",
                prefix_text(prefix),
                params.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(" ")
            ),
            Step::Reshape { prefix, iterator, factor } => {
                write!(f, "reshape {} {iterator} {factor}", prefix_text(prefix))
            }
        }
    }
}

impl Step {
    pub fn prefix(&self) -> &[i64] {
        match self {
            Step::Reorder { prefix, .. }
            | Step::Fuse { prefix }
            | Step::Distribute { prefix, .. }
            | Step::Insert { prefix }
            | Step::Interchange { prefix, .. }
            | Step::Reverse { prefix }
            | Step::Skew { prefix, .. }
            | Step::Shift { prefix, .. }
            | Step::Reshape { prefix, .. } => prefix,
        }
    }
}

fn under(beta: &[i64], prefix: &[i64]) -> bool {
    beta.len() >= prefix.len() && beta[..prefix.len()] == *prefix
}

fn add(a: &mut Aff, b: &Aff, factor: i64) {
    for (x, y) in a.iters.iter_mut().zip(&b.iters) {
        *x += factor * y;
    }
    for (x, y) in a.params.iter_mut().zip(&b.params) {
        *x += factor * y;
    }
    a.constant += factor * b.constant;
}

impl ClayForm {
    /// The indices of the relations inside the node `prefix`.
    pub fn inside(&self, prefix: &[i64]) -> Vec<usize> {
        (0..self.relations.len()).filter(|&r| under(&self.relations[r].beta, prefix)).collect()
    }

    /// Applies `step`; on an error the form is unchanged.
    pub fn apply(&mut self, step: &Step) -> Result<(), StepError> {
        let mut next = self.clone();
        next.apply_in_place(step).map_err(|reason| StepError { step: step.to_string(), reason })?;
        *self = next;
        Ok(())
    }

    fn apply_in_place(&mut self, step: &Step) -> Result<(), String> {
        let prefix = step.prefix();
        let inside = self.inside(prefix);
        if inside.is_empty() {
            return Err("no statement is inside this node".into());
        }
        let d = prefix.len();
        match step {
            Step::Reorder { order, .. } => self.reorder(&inside, d, order),
            Step::Fuse { .. } => self.fuse_next(prefix, &inside),
            Step::Distribute { at, .. } => self.distribute(prefix, &inside, *at),
            Step::Insert { .. } => self.insert_loop(&inside, d),
            Step::Interchange { depth, .. } => self.interchange(&inside, d, *depth),
            Step::Reverse { .. } | Step::Skew { .. } | Step::Shift { .. } | Step::Reshape { .. } => {
                self.transform_loop(step, &inside, d)
            }
        }
    }

    /// A loop: every statement of `rels` has an α at depth `d`.
    fn is_loop(&self, rels: &[usize], d: usize) -> bool {
        d >= 1 && rels.iter().all(|&r| self.relations[r].alpha.len() >= d)
    }

    /// Reorder: the children at depth `d` of the node holding `inside` take
    /// the β positions of the permutation `order`.
    fn reorder(&mut self, inside: &[usize], d: usize, order: &[i64]) -> Result<(), String> {
        let n = inside.iter().filter_map(|&r| self.relations[r].beta.get(d)).max().map_or(0, |m| m + 1);
        let mut sorted = order.to_vec();
        sorted.sort();
        if sorted != (0..n).collect::<Vec<_>>() {
            return Err(format!("the order must be a permutation of 0..{n}"));
        }
        for &r in inside {
            if let Some(b) = self.relations[r].beta.get_mut(d) {
                *b = order[*b as usize];
            }
        }
        Ok(())
    }

    /// Clay's FUSENEXT: the loop after `prefix` (holding `inside`) joins it,
    /// its children after the first's, and the later siblings move up one.
    fn fuse_next(&mut self, prefix: &[i64], inside: &[usize]) -> Result<(), String> {
        let d = prefix.len();
        let mut next_prefix = prefix.to_vec();
        *next_prefix.last_mut().ok_or("the root is not a loop")? += 1;
        let next = self.inside(&next_prefix);
        if next.is_empty() {
            return Err("no loop follows this one".into());
        }
        if !self.is_loop(inside, d) || !self.is_loop(&next, d) {
            return Err("both nodes must be loops".into());
        }
        let shift = inside.iter().map(|&r| self.relations[r].beta[d]).max().unwrap_or(0) + 1;
        for &r in &next {
            let b = &mut self.relations[r].beta;
            b[d - 1] -= 1;
            b[d] += shift;
        }
        let parent = &prefix[..d - 1];
        for r in &mut self.relations {
            if under(&r.beta, parent) && r.beta[d - 1] > next_prefix[d - 1] {
                r.beta[d - 1] -= 1;
            }
        }
        Ok(())
    }

    /// Distribution: the children of loop `prefix` (holding `inside`) from
    /// position `at` on move to a new loop right after it.
    fn distribute(&mut self, prefix: &[i64], inside: &[usize], at: i64) -> Result<(), String> {
        let d = prefix.len();
        if !self.is_loop(inside, d) {
            return Err("only a loop is distributed".into());
        }
        let n = inside.iter().map(|&r| self.relations[r].beta[d]).max().unwrap_or(0) + 1;
        if at <= 0 || at >= n {
            return Err(format!("the split must leave both loops a child (1..{})", n - 1));
        }
        let parent = &prefix[..d - 1];
        for r in &mut self.relations {
            if under(&r.beta, parent) && r.beta[d - 1] > prefix[d - 1] {
                r.beta[d - 1] += 1;
            }
        }
        for &r in inside {
            let b = &mut self.relations[r].beta;
            if b[d] >= at {
                b[d - 1] += 1;
                b[d] -= at;
            }
        }
        Ok(())
    }

    /// Chlore's pseudo strip-mine: a loop that runs once, at 0, wraps the
    /// node at depth `d` holding `inside`.
    fn insert_loop(&mut self, inside: &[usize], d: usize) -> Result<(), String> {
        if d == 0 {
            return Err("the root cannot be wrapped".into());
        }
        for &r in inside {
            let rel = &mut self.relations[r];
            let zero = Aff { iters: vec![0; rel.iterators], params: vec![0; rel.params], constant: 0 };
            if rel.alpha.len() < d - 1 {
                return Err("the node is not at a loop depth of every statement inside".into());
            }
            rel.alpha.insert(d - 1, zero);
            rel.beta.insert(d, 0);
        }
        Ok(())
    }

    /// Interchange: the loops at depths `d` and `depth` trade places for
    /// every statement of `inside`.
    fn interchange(&mut self, inside: &[usize], d: usize, depth: usize) -> Result<(), String> {
        if !self.is_loop(inside, d)
            || depth == 0
            || inside.iter().any(|&r| self.relations[r].alpha.len() < depth)
        {
            return Err(format!("both loops (depth {d} and {depth}) must enclose every statement inside"));
        }
        for &r in inside {
            self.relations[r].alpha.swap(d - 1, depth - 1);
        }
        Ok(())
    }

    /// Reverse, skew, shift or reshape: the α at depth `d` of every
    /// statement of `inside` changes by `step`.
    fn transform_loop(&mut self, step: &Step, inside: &[usize], d: usize) -> Result<(), String> {
        if !self.is_loop(inside, d) {
            return Err("only a loop is transformed".into());
        }
        for &r in inside {
            let alpha = &mut self.relations[r].alpha;
            match step {
                Step::Reverse { .. } => add_scaled_self(&mut alpha[d - 1], -1),
                Step::Skew { depth, factor, .. } => {
                    if *depth == 0 || *depth == d || *depth > alpha.len() {
                        return Err(format!("no other loop at depth {depth}"));
                    }
                    let other = alpha[depth - 1].clone();
                    add(&mut alpha[d - 1], &other, *factor);
                }
                Step::Shift { params, constant, .. } => {
                    if params.len() != alpha[d - 1].params.len() {
                        return Err(format!("{} parameter coefficients expected", alpha[d - 1].params.len()));
                    }
                    let by = Aff {
                        iters: vec![0; alpha[d - 1].iters.len()],
                        params: params.clone(),
                        constant: *constant,
                    };
                    add(&mut alpha[d - 1], &by, 1);
                }
                Step::Reshape { iterator, factor, .. } => {
                    if inside.len() != 1 {
                        return Err("reshape acts on a loop around one statement".into());
                    }
                    let a = &mut alpha[d - 1];
                    *a.iters.get_mut(*iterator).ok_or("no such iterator")? += factor;
                }
                _ => unreachable!(),
            }
        }
        Ok(())
    }
}

/// `a ← factor·a` (−1: reversal).
fn add_scaled_self(a: &mut Aff, factor: i64) {
    for x in a.iters.iter_mut().chain(a.params.iter_mut()) {
        *x *= factor;
    }
    a.constant *= factor;
}
