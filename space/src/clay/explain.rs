//! From one schedule to another as a sequence of Clay transformations (after Chlore's
//! recovery, simplified for schedules whose loops are affine functions, as ours and isl's
//! are: no index-set split, no strip-mined dimension in the tree itself).
//!
//! Three phases, each replayed on the form as it is emitted so that every prefix names the
//! node it means at that point of the script:
//! 1. `distribute` until every statement has a loop nest of its own;
//! 2. per statement, its loops: `insert` the loops the target has beyond the statement's
//!    depth, then turn the original loops into the target's by integer row operations
//!    (`interchange`, `reverse`, `skew`; `reshape` where the change is not unimodular),
//!    the inserted ones by `skew` (or `reshape`), and `shift` the constants;
//! 3. `reorder` the nests into the target's order and `fuse` them, depth by depth, into
//!    the target's loops.
//!
//! The result is checked: replayed on the original it must give the target exactly. Steps
//! that cancel out (a loop distributed, then fused back) are dropped afterwards.

use super::form::ClayForm;
use super::transform::{Step, StepError};

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("the two schedules are not of the same statements")]
    Statements,
    #[error("statement {0}: the target has fewer loops than the statement's depth")]
    FewerLoops(String),
    #[error("a step of the explanation failed: {0}")]
    Step(#[from] StepError),
    #[error("the explanation does not reach the target: {0}")]
    Missed(String),
}

/// The steps that turn `from` into `to`.
pub fn explain(from: &ClayForm, to: &ClayForm) -> Result<Vec<Step>, ExplainError> {
    if from.relations.len() != to.relations.len()
        || from.relations.iter().zip(&to.relations).any(|(a, b)| a.statement != b.statement)
    {
        return Err(ExplainError::Statements);
    }
    if from == to {
        return Ok(Vec::new());
    }
    let mut e = Emitter { form: from.clone(), steps: Vec::new() };
    e.distribute_all()?;
    for s in 0..to.relations.len() {
        e.loops_of(s, to)?;
    }
    e.structure(to)?;
    if e.form != *to {
        return Err(ExplainError::Missed(format!("reached {:?}, wanted {:?}", e.form, to)));
    }
    Ok(simplify(from, to, e.steps))
}

/// Scripts up to this long are simplified (the search replays the script O(n²) times).
const SIMPLIFY_UP_TO: usize = 60;

/// Drops steps, one or two at a time, while the rest still reaches `to`: phase 1 distributes
/// every loop and phase 3 fuses back what the target keeps together, and such pairs undo
/// each other.
fn simplify(from: &ClayForm, to: &ClayForm, mut steps: Vec<Step>) -> Vec<Step> {
    if steps.len() > SIMPLIFY_UP_TO {
        return steps;
    }
    let reaches = |steps: &[Step]| {
        let mut f = from.clone();
        steps.iter().all(|s| f.apply(s).is_ok()) && f == *to
    };
    'again: loop {
        for i in 0..steps.len() {
            for j in i..steps.len() {
                let candidate: Vec<Step> = steps
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i && k != j)
                    .map(|(_, s)| s.clone())
                    .collect();
                if reaches(&candidate) {
                    steps = candidate;
                    continue 'again;
                }
            }
        }
        return steps;
    }
}

struct Emitter {
    form: ClayForm,
    steps: Vec<Step>,
}

impl Emitter {
    fn emit(&mut self, step: Step) -> Result<(), StepError> {
        self.form.apply(&step)?;
        self.steps.push(step);
        Ok(())
    }

    /// Phase 1: while some loop has two children, split its first child off.
    fn distribute_all(&mut self) -> Result<(), StepError> {
        'again: loop {
            for r in 0..self.form.relations.len() {
                let rel = &self.form.relations[r];
                for d in 1..=rel.alpha.len() {
                    let prefix = rel.beta[..d].to_vec();
                    let children =
                        self.form.inside(&prefix).iter().map(|&x| self.form.relations[x].beta[d]).max();
                    if children.is_some_and(|m| m > 0) {
                        self.emit(Step::Distribute { prefix, at: 1 })?;
                        continue 'again;
                    }
                }
            }
            return Ok(());
        }
    }

    /// The prefix naming statement `s`'s loop at α position `p` (0-based) while it has a
    /// nest of its own: its top-level position, then zeros.
    fn nest_prefix(&self, s: usize, p: usize) -> Vec<i64> {
        let mut prefix = vec![self.form.relations[s].beta[0]];
        prefix.resize(p + 1, 0);
        prefix
    }

    /// Phase 2 for statement `s`.
    fn loops_of(&mut self, s: usize, to: &ClayForm) -> Result<(), ExplainError> {
        let target = to.relations[s].alpha.clone();
        let depth = self.form.relations[s].alpha.len();
        let name = || to.relations[s].statement.clone();
        // The target rows that raise the rank of the iterator coefficients: the statement's
        // own loops transformed; the others are inserted.
        let mut core: Vec<usize> = Vec::new();
        for (p, row) in target.iter().enumerate() {
            let mut rows: Vec<Vec<i64>> = core.iter().map(|&c| target[c].iters.clone()).collect();
            rows.push(row.iters.clone());
            if rank(&rows) > core.len() {
                core.push(p);
            }
        }
        if core.len() != depth {
            // Rank below the depth: the domain has equalities (nussinov's S4 runs where
            // i = j - 1, and isl writes its loop -i as -j + 1). Then the loops are set
            // coefficient by coefficient below (the reduction finds no unimodular E).
            if target.len() < depth {
                return Err(ExplainError::FewerLoops(name()));
            }
            core = (0..depth).collect();
        }
        for p in 0..target.len() {
            if !core.contains(&p) {
                self.emit(Step::Insert { prefix: self.nest_prefix(s, p) })?;
            }
        }
        // Current core rows X (iterator coefficients C), target M: find E with E·C = M.
        let current: Vec<Vec<i64>> =
            core.iter().map(|&p| self.form.relations[s].alpha[p].iters.clone()).collect();
        let wanted: Vec<Vec<i64>> = core.iter().map(|&p| target[p].iters.clone()).collect();
        let unimodular = match signed_permutation_inverse(&current) {
            Some(c_inv) => {
                let e = mul(&wanted, &c_inv);
                match reduce_to_identity(e) {
                    Some(ops) => {
                        // R·E = I, so E = R⁻¹: the inverse operations, last first.
                        for op in ops.iter().rev() {
                            let step = match *op {
                                RowOp::Swap(a, b) => Step::Interchange {
                                    prefix: self.nest_prefix(s, core[a]),
                                    depth: core[b] + 1,
                                },
                                RowOp::Negate(a) => Step::Reverse { prefix: self.nest_prefix(s, core[a]) },
                                RowOp::Add(a, b, f) => Step::Skew {
                                    prefix: self.nest_prefix(s, core[a]),
                                    depth: core[b] + 1,
                                    factor: -f,
                                },
                            };
                            self.emit(step)?;
                        }
                        true
                    }
                    None => false,
                }
            }
            None => false,
        };
        // Inserted rows: integer combinations of the core rows where the core is unimodular
        // (λ = row · M⁻¹), else coefficient by coefficient.
        let m_inv = if unimodular { integer_inverse(&wanted) } else { None };
        for (p, row) in target.iter().enumerate() {
            let is_core = core.contains(&p);
            if is_core && unimodular {
                continue;
            }
            let combination = m_inv
                .as_ref()
                .filter(|_| !is_core)
                .map(|inv| mul(std::slice::from_ref(&row.iters), inv).remove(0));
            match combination {
                Some(lambda) => {
                    for (c, &l) in lambda.iter().enumerate() {
                        if l != 0 {
                            self.emit(Step::Skew {
                                prefix: self.nest_prefix(s, p),
                                depth: core[c] + 1,
                                factor: l,
                            })?;
                        }
                    }
                }
                None => {
                    let have = self.form.relations[s].alpha[p].iters.clone();
                    for (j, (&t, &h)) in row.iters.iter().zip(&have).enumerate() {
                        if t != h {
                            self.emit(Step::Reshape {
                                prefix: self.nest_prefix(s, p),
                                iterator: j,
                                factor: t - h,
                            })?;
                        }
                    }
                }
            }
        }
        // Constants and parameters last.
        for (p, t) in target.iter().enumerate() {
            let have = &self.form.relations[s].alpha[p];
            let params: Vec<i64> = t.params.iter().zip(&have.params).map(|(t, h)| t - h).collect();
            let constant = t.constant - have.constant;
            if constant != 0 || params.iter().any(|&x| x != 0) {
                self.emit(Step::Shift { prefix: self.nest_prefix(s, p), params, constant })?;
            }
        }
        if self.form.relations[s].alpha != target {
            return Err(ExplainError::Missed(format!("the loops of {}", name())));
        }
        Ok(())
    }

    /// Phase 3: order the nests as the target's β-vectors, then fuse depth by depth.
    fn structure(&mut self, to: &ClayForm) -> Result<(), StepError> {
        let mut order: Vec<usize> = (0..to.relations.len()).collect();
        order.sort_by(|&a, &b| to.relations[a].beta.cmp(&to.relations[b].beta));
        // Each statement has a nest of its own: its β0 is its nest's position.
        let mut new_position = vec![0; order.len()];
        for (pos, &s) in order.iter().enumerate() {
            new_position[self.form.relations[s].beta[0] as usize] = pos as i64;
        }
        if new_position.iter().enumerate().any(|(i, &p)| p != i as i64) {
            self.emit(Step::Reorder { prefix: vec![], order: new_position })?;
        }
        self.fuse_level(to, &[], &order, 0)
    }

    /// The statements `group` (in target order) are inside the current node `prefix` and
    /// share the target's β up to `depth`: fuse those that share the target's β at `depth`.
    fn fuse_level(
        &mut self,
        to: &ClayForm,
        prefix: &[i64],
        group: &[usize],
        depth: usize,
    ) -> Result<(), StepError> {
        let mut start = 0;
        while start < group.len() {
            let key = to.relations[group[start]].beta[depth];
            let end =
                start + group[start..].iter().take_while(|&&s| to.relations[s].beta[depth] == key).count();
            let members = &group[start..end];
            let first = self.form.relations[members[0]].beta[depth];
            let mut node = prefix.to_vec();
            node.push(first);
            // One fuse per further child of the current node among the members.
            let mut children: Vec<i64> =
                members.iter().map(|&s| self.form.relations[s].beta[depth]).collect();
            children.dedup();
            for _ in 1..children.len() {
                self.emit(Step::Fuse { prefix: node.clone() })?;
            }
            if members.iter().all(|&s| to.relations[s].beta.len() > depth + 1) {
                self.fuse_level(to, &node, members, depth + 1)?;
            }
            start = end;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
enum RowOp {
    Swap(usize, usize),
    Negate(usize),
    /// row a += f · row b
    Add(usize, usize, i64),
}

/// Integer row operations R with R·m = I, or `None` when `m` is not unimodular.
fn reduce_to_identity(mut m: Vec<Vec<i64>>) -> Option<Vec<RowOp>> {
    let n = m.len();
    let mut ops = Vec::new();
    let apply = |m: &mut Vec<Vec<i64>>, op: RowOp, ops: &mut Vec<RowOp>| {
        match op {
            RowOp::Swap(a, b) => m.swap(a, b),
            RowOp::Negate(a) => m[a].iter_mut().for_each(|x| *x = -*x),
            RowOp::Add(a, b, f) => {
                let rb = m[b].clone();
                m[a].iter_mut().zip(rb).for_each(|(x, y)| *x += f * y);
            }
        }
        ops.push(op);
    };
    for j in 0..n {
        loop {
            let pivot = (j..n).filter(|&r| m[r][j] != 0).min_by_key(|&r| m[r][j].abs())?;
            if pivot != j {
                apply(&mut m, RowOp::Swap(j, pivot), &mut ops);
            }
            let mut done = true;
            for r in j + 1..n {
                if m[r][j] != 0 {
                    let q = m[r][j] / m[j][j];
                    apply(&mut m, RowOp::Add(r, j, -q), &mut ops);
                    done &= m[r][j] == 0;
                }
            }
            if done {
                break;
            }
        }
        match m[j][j] {
            1 => {}
            -1 => apply(&mut m, RowOp::Negate(j), &mut ops),
            _ => return None,
        }
    }
    for j in (0..n).rev() {
        for r in 0..j {
            if m[r][j] != 0 {
                let f = -m[r][j];
                apply(&mut m, RowOp::Add(r, j, f), &mut ops);
            }
        }
    }
    Some(ops)
}

fn mul(a: &[Vec<i64>], b: &[Vec<i64>]) -> Vec<Vec<i64>> {
    a.iter()
        .map(|row| {
            (0..b.first().map_or(0, |r| r.len()))
                .map(|j| row.iter().zip(b).map(|(x, r)| x * r[j]).sum())
                .collect()
        })
        .collect()
}

/// The inverse of a signed permutation matrix (its transpose), or `None` for another matrix.
fn signed_permutation_inverse(m: &[Vec<i64>]) -> Option<Vec<Vec<i64>>> {
    let n = m.len();
    let ok = m.iter().all(|r| {
        r.len() == n && r.iter().filter(|&&x| x != 0).count() == 1 && r.iter().all(|x| x.abs() <= 1)
    }) && (0..n).all(|j| m.iter().filter(|r| r[j] != 0).count() == 1);
    ok.then(|| (0..n).map(|i| (0..n).map(|j| m[j][i]).collect()).collect())
}

/// The integer inverse of a unimodular matrix (by the same row reduction).
fn integer_inverse(m: &[Vec<i64>]) -> Option<Vec<Vec<i64>>> {
    let n = m.len();
    let ops = reduce_to_identity(m.to_vec())?;
    let mut inv: Vec<Vec<i64>> = (0..n).map(|i| (0..n).map(|j| i64::from(i == j)).collect()).collect();
    for op in ops {
        match op {
            RowOp::Swap(a, b) => inv.swap(a, b),
            RowOp::Negate(a) => inv[a].iter_mut().for_each(|x| *x = -*x),
            RowOp::Add(a, b, f) => {
                let rb = inv[b].clone();
                inv[a].iter_mut().zip(rb).for_each(|(x, y)| *x += f * y);
            }
        }
    }
    Some(inv)
}

/// Rank over the rationals (fraction-free elimination in i128).
fn rank(rows: &[Vec<i64>]) -> usize {
    let mut m: Vec<Vec<i128>> = rows.iter().map(|r| r.iter().map(|&x| x as i128).collect()).collect();
    let cols = m.first().map_or(0, |r| r.len());
    let mut rank = 0;
    for c in 0..cols {
        let Some(p) = (rank..m.len()).find(|&r| m[r][c] != 0) else { continue };
        m.swap(rank, p);
        for r in rank + 1..m.len() {
            let (a, b) = (m[rank][c], m[r][c]);
            if b != 0 {
                let pivot = m[rank].clone();
                m[r].iter_mut().zip(pivot).for_each(|(x, y)| *x = *x * a - y * b);
                let g = m[r].iter().fold(0i128, |g, &x| gcd(g, x.abs()));
                if g > 1 {
                    m[r].iter_mut().for_each(|x| *x /= g);
                }
            }
        }
        rank += 1;
    }
    rank
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unimodular_matrices_reduce_and_invert() {
        let m = vec![vec![1, 1, 0], vec![0, 1, 0], vec![1, 0, -1]];
        let inv = integer_inverse(&m).unwrap();
        assert_eq!(mul(&m, &inv), vec![vec![1, 0, 0], vec![0, 1, 0], vec![0, 0, 1]]);
        assert!(reduce_to_identity(vec![vec![2, 0], vec![0, 1]]).is_none());
        assert_eq!(rank(&[vec![1, 2], vec![2, 4]]), 1);
        assert_eq!(rank(&[vec![0, 1], vec![1, 0], vec![1, 1]]), 2);
    }
}
