//! The fusion space (Pouchet et al., POPL'11): the distinct total preorders
//! of the statements at one level (which statements share a loop there, and
//! in which order the groups run), pruned by the dependences down to F, the
//! preorders that have a legal schedule.
//!
//! - `encoding`: O as a convex set of binaries `p_ij`, `e_ij` with mutual
//!   exclusion and transitivity; pairs fixed by dependences substituted away.
//! - `graph`: validity dependences per statement pair, reachability, SCCs.
//! - `fusable`: the nonnegative-coefficient fusability test (an ILP on Farkas
//!   constraints), optionally with pinned loop permutations µ.
//! - `count`: exact big counts (Fubini numbers pass `u128` at 34 statements).
//! - `prune`: building F at one level (below); this file enumerates it.
//!
//! Pruning, as in the paper: statements in one dependence cycle must be fused
//! (merged into one node); a pair whose union is not fusable must be
//! distributed; a dependence forbids the order that would run its sink's
//! group first. Sets of three or more nodes along paths of the graph of
//! dependent, fusable pairs are tested with the compatible-pairwise-
//! permutation condition (Lemma 4), confirmed by the joint ILP when it
//! fails; each infeasible set adds `Σ e ≤ |path| − 2` to F.
//!
//! Points of F are enumerated, counted and sampled on the node graph
//! directly (ordered partitions into blocks that are closed under "must run
//! first" and contain no forbidden pair or set), which is the same set as the
//! integer points of the encoding; tests check that equivalence.

mod count;
mod encoding;
mod fusable;
mod graph;
mod prune;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use isl_rs::{Context, UnionMap};
use rand::Rng;
use serde::Serialize;

pub use count::Count;
pub use encoding::{Affine, Allowed, Encoding, Var};
pub use graph::{DepGraph, Edge};

use crate::schedule::ilp::{self, Backend, IlpError, Outcome};
use crate::schedule::{self, CoreOptions, Fusion, ScheduleError};
use fusable::LevelModel;
use model::deps::Dependences;
use model::isl::{new_context, IslError, IslResultExt};
use model::scop::Scop;
use prune::{build, directions, original_rows, subset};
use vocab::preorder::Preorder;

/// What "the statements of a group share a loop" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// As the core scheduler decides: one schedule row per statement, with a
    /// non-null linear part, respecting every dependence in the group;
    /// parametric shifts allowed (so a group can be a loop whose statements'
    /// instances never interleave).
    #[default]
    SharedLoop,
    /// The paper's interleaving criterion: in addition, equal parametric
    /// parts and constant parts at most `max_offset` apart, so the first
    /// instances of the statements are close and their instances interleave.
    Interleaved { max_offset: i64 },
}

#[derive(Debug, Clone, Default)]
pub struct FusionOptions {
    pub criterion: Criterion,
}

#[derive(Debug, thiserror::Error)]
pub enum FusionError {
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("fusion ILP: {0}")]
    Ilp(#[from] IlpError),
    #[error("the scheduler found no schedule for the outer preorder {preorder}: {error}")]
    Outer { preorder: String, error: ScheduleError },
    #[error("{0}")]
    Model(String),
    #[error("{0} statements: the fusion space handles at most 128")]
    TooManyStatements(usize),
    #[error("the preorder {0} does not list every statement exactly once")]
    BadPreorder(String),
}

/// What pruning did, for reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PruneStats {
    /// Statement pairs fused by a dependence cycle.
    pub must_fuse: usize,
    /// Statement pairs that cannot share a loop.
    pub must_distribute: usize,
    /// Statement pairs with one order forbidden by dependences.
    pub forbidden_orders: usize,
    /// Node pairs tested for fusability with the ILP.
    pub pairs_tested: usize,
    /// Sets of three or more nodes tested (pairwise permutations, then ILP).
    pub sets_tested: usize,
    /// Sets found infeasible (each added a constraint).
    pub infeasible_sets: usize,
    pub ilps: usize,
    /// Variables and constraints of the encoding after substitution.
    pub variables: usize,
    pub constraints: usize,
}

/// The linear objectives `optimise` knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Objective {
    /// Maximise Σ e_ij: as much fusion as possible.
    MaxFusion,
    /// Minimise Σ e_ij.
    MaxDistribution,
    /// Maximise Σ w·e_ij over the given pairs (e.g. [`reuse_weights`]).
    Weighted(Vec<(usize, usize, i64)>),
}

/// One statement's schedule row: iterator coefficients, parameter
/// coefficients, constant (as in [`crate::schedule::Row`]'s `affine`).
type AffineRow = (Vec<i64>, Vec<i64>, i64);

/// The legal fusion preorders of one level.
pub struct FusionSpace {
    /// 1 for the outermost loop level, 2 for the next one.
    pub level: usize,
    pub n: usize,
    /// The outer preorder a level-2 space refines.
    pub outer: Option<Preorder>,
    /// Statements fused by dependence cycles (nodes), in the order the
    /// enumeration visits them (a topological order of "must run first").
    nodes: Vec<Vec<usize>>,
    /// Per node: the nodes that must run in an earlier or the same group.
    first: Vec<u128>,
    /// Per node: the nodes that cannot share its group.
    apart: Vec<u128>,
    /// Node sets that cannot all share one group.
    infeasible: Vec<u128>,
    pub encoding: Encoding,
    pub stats: PruneStats,
    counts: RefCell<HashMap<u128, Count>>,
}

impl FusionSpace {
    /// F at the outermost level.
    pub fn outer(scop: &Scop, deps: &Dependences, opts: &FusionOptions) -> Result<FusionSpace, FusionError> {
        let n = scop.statements.len();
        if n > 128 {
            return Err(FusionError::TooManyStatements(n));
        }
        let ctx = new_context();
        let graph = DepGraph::build(&ctx, scop, deps)?;
        let dims = scop.statements.iter().map(|s| s.iterators.len()).collect();
        let mut model = LevelModel::new(
            &ctx,
            scop.context.clone(),
            scop.params.len(),
            dims,
            1,
            graph.edges.clone(),
            vec![Vec::new(); n],
            opts.criterion,
        );
        model.directions = directions(scop);
        // Statements under one top-level loop of the original program share
        // it legally: its iterator is a witness row for either criterion
        // (every dependence among them has a non-negative distance on it),
        // so such sets need no ILP.
        let original = scop.original_preorder();
        let rows = original_rows(scop);
        model.original_nest = (0..n)
            .map(|s| {
                let g = original.0.iter().position(|g| g.contains(&s));
                let first = scop.statements[s].iterators.first();
                let outer_is_first =
                    rows[s].get(1).zip(first).is_some_and(|(r, it)| r.trim_start_matches('-') == it);
                g.filter(|_| outer_is_first)
            })
            .collect();
        build(model, &graph, None, 1)
    }

    /// F at level 2 under `outer`: the scheduler's schedule for `outer` gives
    /// each statement its outer row; the dependences that row leaves at zero
    /// distance are those level 2 must respect; statements of different outer
    /// groups stay apart, in the outer order.
    pub fn inner(
        scop: &Scop,
        deps: &Dependences,
        outer: &Preorder,
        opts: &FusionOptions,
    ) -> Result<FusionSpace, FusionError> {
        let n = scop.statements.len();
        if n > 128 {
            return Err(FusionError::TooManyStatements(n));
        }
        check_preorder(n, outer)?;
        let sched = schedule::schedule(
            scop,
            deps,
            &CoreOptions { fusion: Fusion::Preorder(outer.clone()), ..Default::default() },
        )
        .map_err(|error| FusionError::Outer { preorder: outer.display(), error })?;
        let ctx = new_context();
        let graph = DepGraph::build(&ctx, scop, deps)?;
        // The first row of each group.
        let mut row_of: Vec<Option<AffineRow>> = vec![None; n];
        for r in &sched.rows {
            for (s, c, d, e) in &r.affine {
                if row_of[*s].is_none() {
                    row_of[*s] = Some((c.clone(), d.clone(), *e));
                }
            }
        }
        let group_of = group_index(n, outer);
        let row_map = |ctx: &Context| -> Result<UnionMap, FusionError> {
            let parts: Vec<String> = (0..n)
                .map(|s| {
                    let st = &scop.statements[s];
                    let expr = match &row_of[s] {
                        Some((c, d, e)) => schedule::affine_text(scop, s, c, d, *e),
                        None => "0".to_string(),
                    };
                    format!("{}[{}] -> [{}]", st.name, st.iterators.join(", "), expr)
                })
                .collect();
            let text = format!("[{}] -> {{ {} }}", scop.params.join(", "), parts.join("; "));
            let what = || format!("outer rows {text}");
            Ok(UnionMap::read_from_str(ctx, &text).ctx(what)?)
        };
        let what = || "dependences left at level 2".to_string();
        let phi = row_map(&ctx)?;
        let same = phi.copy().ctx(what)?.apply_range(phi.reverse().ctx(what)?).ctx(what)?;
        let mut edges = Vec::new();
        for e in &graph.edges {
            if group_of[e.src] != group_of[e.dst] {
                continue;
            }
            let rel = UnionMap::read_from_str(&ctx, &e.relation)
                .ctx(what)?
                .intersect(same.copy().ctx(what)?)
                .ctx(what)?
                .coalesce()
                .ctx(what)?;
            if !rel.is_empty().ctx(what)? {
                edges.push(Edge { src: e.src, dst: e.dst, relation: rel.to_str().ctx(what)?.to_string() });
            }
        }
        let inner_graph = DepGraph::from_edges(n, edges.clone());
        let above = (0..n).map(|s| row_of[s].iter().map(|r| r.0.clone()).collect()).collect();
        let dims = scop.statements.iter().map(|s| s.iterators.len()).collect();
        let model = LevelModel::new(
            &ctx,
            scop.context.clone(),
            scop.params.len(),
            dims,
            2,
            edges,
            above,
            opts.criterion,
        );
        build(model, &inner_graph, Some(outer.clone()), 2)
    }

    /// |O|: all distinct total preorders of the statements at this level
    /// (at level 2, those refining the outer preorder).
    pub fn unpruned(&self) -> Count {
        match &self.outer {
            None => Count::fubini(self.n),
            Some(o) => o.0.iter().fold(Count::from_u64(1), |acc, g| acc.mul(&Count::fubini(g.len()))),
        }
    }

    /// |F|, without materialising the preorders.
    pub fn count(&self) -> Count {
        let all = self.all_nodes();
        self.count_from(all)
    }

    fn all_nodes(&self) -> u128 {
        if self.nodes.len() == 128 {
            u128::MAX
        } else {
            (1u128 << self.nodes.len()) - 1
        }
    }

    fn count_from(&self, rest: u128) -> Count {
        if rest == 0 {
            return Count::from_u64(1);
        }
        if let Some(c) = self.counts.borrow().get(&rest) {
            return c.clone();
        }
        let mut total = Count::zero();
        self.blocks(rest, &mut |b| {
            total = total.add(&self.count_from(rest & !b));
            true
        });
        self.counts.borrow_mut().insert(rest, total.clone());
        total
    }

    /// Calls `f` on each admissible first block of `rest` (a node set), in a
    /// fixed order; stops when `f` returns false.
    fn blocks(&self, rest: u128, f: &mut dyn FnMut(u128) -> bool) {
        let order: Vec<usize> = (0..self.nodes.len()).filter(|&x| rest >> x & 1 == 1).collect();
        self.blocks_rec(rest, &order, 0, 0, f);
    }

    fn blocks_rec(
        &self,
        rest: u128,
        order: &[usize],
        k: usize,
        block: u128,
        f: &mut dyn FnMut(u128) -> bool,
    ) -> bool {
        if k == order.len() {
            if block == 0 || self.infeasible.iter().any(|&s| subset(s, block)) {
                return true;
            }
            return f(block);
        }
        let x = order[k];
        let bit = 1u128 << x;
        // Include x only if what must run first is in the block already
        // (nodes are ordered so that those come earlier) and nothing in the
        // block must stay apart from it.
        let needs = self.first[x] & rest;
        if needs & !block == 0
            && self.apart[x] & block == 0
            && !self.blocks_rec(rest, order, k + 1, block | bit, f)
        {
            return false;
        }
        self.blocks_rec(rest, order, k + 1, block, f)
    }

    fn preorder_of(&self, blocks: &[u128]) -> Preorder {
        Preorder(
            blocks
                .iter()
                .map(|&b| {
                    let mut g: Vec<usize> = (0..self.nodes.len())
                        .filter(|&x| b >> x & 1 == 1)
                        .flat_map(|x| self.nodes[x].iter().copied())
                        .collect();
                    g.sort();
                    g
                })
                .collect(),
        )
    }

    /// Calls `f` on every point of F in a deterministic order (largest first
    /// groups first); stops early when `f` returns false.
    pub fn for_each(&self, f: &mut dyn FnMut(Preorder) -> bool) {
        let mut stack = Vec::new();
        self.walk(self.all_nodes(), &mut stack, f);
    }

    fn walk(&self, rest: u128, stack: &mut Vec<u128>, f: &mut dyn FnMut(Preorder) -> bool) -> bool {
        if rest == 0 {
            return f(self.preorder_of(stack));
        }
        let mut go_on = true;
        self.blocks(rest, &mut |b| {
            stack.push(b);
            go_on = self.walk(rest & !b, stack, f);
            stack.pop();
            go_on
        });
        go_on
    }

    /// Every point of F, in the order of [`for_each`](Self::for_each).
    pub fn preorders(&self) -> Vec<Preorder> {
        let mut out = Vec::new();
        self.for_each(&mut |p| {
            out.push(p);
            true
        });
        out
    }

    /// One point of F drawn uniformly (exact counts guide each block
    /// choice); `None` when F is empty.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Preorder> {
        let total = self.count();
        if total.is_zero() {
            return None;
        }
        let mut r = total.random_below(rng);
        let mut rest = self.all_nodes();
        let mut stack = Vec::new();
        while rest != 0 {
            let mut chosen = None;
            self.blocks(rest, &mut |b| {
                let c = self.count_from(rest & !b);
                match r.checked_sub(&c) {
                    Some(left) => {
                        r = left;
                        true
                    }
                    None => {
                        chosen = Some(b);
                        false
                    }
                }
            });
            let b = chosen.expect("the counts cover every point");
            stack.push(b);
            rest &= !b;
        }
        Some(self.preorder_of(&stack))
    }

    /// Whether `p` is a point of F.
    pub fn contains(&self, p: &Preorder) -> bool {
        check_preorder(self.n, p).is_ok() && self.encoding.contains(p) && self.respects_outer(p)
    }

    fn respects_outer(&self, p: &Preorder) -> bool {
        let Some(outer) = &self.outer else { return true };
        let (go, gp) = (group_index(self.n, outer), group_index(self.n, p));
        (0..self.n).all(|a| (0..self.n).all(|b| go[a] >= go[b] || gp[a] < gp[b]))
    }

    /// The point of F that optimises `objective`, solved with CBC on the
    /// encoding; ties go to the preorder keeping most pairs in textual order.
    /// `None` when F is empty.
    pub fn optimise(&self, objective: &Objective) -> Result<Option<Preorder>, FusionError> {
        let enc = &self.encoding;
        let mut p = enc.problem();
        let mut obj: Vec<(usize, i64)> = Vec::new();
        let add = |form: Affine, w: i64, obj: &mut Vec<(usize, i64)>| {
            for (v, c) in form.terms {
                match obj.iter_mut().find(|(x, _)| *x == v) {
                    Some(t) => t.1 += w * c,
                    None => obj.push((v, w * c)),
                }
            }
        };
        let pairs: Vec<(usize, usize, i64)> = match objective {
            Objective::MaxFusion => all_pairs(self.n, -1),
            Objective::MaxDistribution => all_pairs(self.n, 1),
            Objective::Weighted(w) => {
                for &(i, j, _) in w {
                    if i == j || i >= self.n || j >= self.n {
                        return Err(FusionError::Model(format!("weight on a bad pair ({i}, {j})")));
                    }
                }
                w.iter().map(|&(i, j, k)| (i, j, -k)).collect()
            }
        };
        for (i, j, w) in pairs {
            add(enc.eq(i, j), w, &mut obj);
        }
        obj.retain(|t| t.1 != 0);
        p.add_objective(obj);
        let mut order = Vec::new();
        for (i, j, _) in all_pairs(self.n, 1) {
            add(enc.before(i, j), -1, &mut order);
        }
        order.retain(|t| t.1 != 0);
        p.add_objective(order);
        match ilp::lexmin(&p, Backend::Cbc)? {
            Outcome::Infeasible => Ok(None),
            Outcome::Optimal { values, .. } => {
                let pre = enc.decode(&values);
                if !self.contains(&pre) {
                    return Err(FusionError::Model(format!(
                        "CBC's optimum {} is not a point of F",
                        pre.display()
                    )));
                }
                Ok(Some(pre))
            }
        }
    }

    /// Σ e_ij of a preorder: how many statement pairs share a loop.
    pub fn fused_pairs(p: &Preorder) -> usize {
        p.0.iter().map(|g| g.len() * (g.len().saturating_sub(1)) / 2).sum()
    }
}

/// Per statement pair `i < j`: the number of arrays both touch, a simple
/// measure of the reuse fusing them can exploit.
pub fn reuse_weights(scop: &Scop) -> Vec<(usize, usize, i64)> {
    let n = scop.statements.len();
    let arrays: Vec<HashSet<&str>> =
        scop.statements.iter().map(|s| s.accesses.iter().map(|a| a.array.as_str()).collect()).collect();
    let mut out = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let w = arrays[i].intersection(&arrays[j]).count() as i64;
            if w > 0 {
                out.push((i, j, w));
            }
        }
    }
    out
}

fn all_pairs(n: usize, w: i64) -> Vec<(usize, usize, i64)> {
    (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j, w))).collect()
}

fn group_index(n: usize, p: &Preorder) -> Vec<usize> {
    let mut g = vec![usize::MAX; n];
    for (k, members) in p.0.iter().enumerate() {
        for &s in members {
            if s < n {
                g[s] = k;
            }
        }
    }
    g
}

fn check_preorder(n: usize, p: &Preorder) -> Result<(), FusionError> {
    let mut seen = vec![0; n];
    for &s in p.0.iter().flatten() {
        if s >= n {
            return Err(FusionError::BadPreorder(p.display()));
        }
        seen[s] += 1;
    }
    if seen.iter().any(|&k| k != 1) || p.0.iter().any(|g| g.is_empty()) {
        return Err(FusionError::BadPreorder(p.display()));
    }
    Ok(())
}

/// Reads a preorder written as [`Preorder::display`] prints it,
/// `(S1 S2)(S3)`, against the statements of `scop`.
pub fn parse_preorder(text: &str, scop: &Scop) -> Result<Preorder, FusionError> {
    let bad = |why: &str| FusionError::Model(format!("cannot read the preorder `{text}`: {why}"));
    let mut groups = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let inner = rest.strip_prefix('(').ok_or_else(|| bad("expected `(`"))?;
        let close = inner.find(')').ok_or_else(|| bad("missing `)`"))?;
        let mut g = Vec::new();
        for name in inner[..close].split([' ', ',']).filter(|s| !s.is_empty()) {
            let k = scop
                .statements
                .iter()
                .position(|s| s.name == name)
                .ok_or_else(|| bad(&format!("no statement {name}")))?;
            g.push(k);
        }
        groups.push(g);
        rest = inner[close + 1..].trim_start();
    }
    let p = Preorder(groups);
    check_preorder(scop.statements.len(), &p)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Every ordered set partition of n elements.
    fn all_preorders(n: usize) -> Vec<Preorder> {
        let mut out = Vec::new();
        let mut rank = vec![0usize; n];
        loop {
            let k = rank.iter().max().map_or(0, |m| m + 1);
            if (0..k).all(|r| rank.contains(&r)) {
                out.push(Preorder((0..k).map(|r| (0..n).filter(|&s| rank[s] == r).collect()).collect()));
            }
            let mut i = 0;
            loop {
                if i == n {
                    return out;
                }
                rank[i] += 1;
                if rank[i] < n {
                    break;
                }
                rank[i] = 0;
                i += 1;
            }
        }
    }

    /// The integer points of O for n elements are the total preorders: as
    /// many as the Fubini number, each decoding to a distinct preorder.
    #[test]
    fn points_of_o_are_the_total_preorders() {
        for n in 1..=5 {
            let enc = Encoding::new(n, &vec![Allowed::ANY; n * (n - 1) / 2]).unwrap();
            let v = enc.vars.len();
            let mut seen = HashSet::new();
            for bits in 0u64..(1 << v) {
                let x: Vec<i64> = (0..v).map(|k| (bits >> k & 1) as i64).collect();
                if enc.satisfied(&x) {
                    let p = enc.decode(&x);
                    assert_eq!(enc.point_of(&p), x, "n = {n}");
                    assert!(seen.insert(p.0));
                }
            }
            assert_eq!(Count::from_u64(seen.len() as u64), Count::fubini(n), "n = {n}");
        }
    }

    /// With random fixed relations and forbidden sets, the block enumeration
    /// (and counting, and sampling) visits exactly the points of the encoding.
    #[test]
    fn enumeration_visits_exactly_the_points_of_the_encoding() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for round in 0..60 {
            let n = 2 + round % 5;
            // A random order to respect (a DAG from index order) and random
            // pairs kept apart; singleton nodes.
            let mut first = vec![0u128; n];
            let mut apart = vec![0u128; n];
            for a in 0..n {
                for b in a + 1..n {
                    if rng.gen_bool(0.3) {
                        first[b] |= 1 << a;
                    }
                    if rng.gen_bool(0.2) {
                        apart[a] |= 1 << b;
                        apart[b] |= 1 << a;
                    }
                }
            }
            // Transitive "must run first".
            for _ in 0..n {
                for b in 0..n {
                    for a in 0..n {
                        if first[b] >> a & 1 == 1 {
                            first[b] |= first[a];
                        }
                    }
                }
            }
            let mut allowed = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    allowed.push(Allowed {
                        before: first[i] >> j & 1 == 0,
                        equal: apart[i] >> j & 1 == 0,
                        after: first[j] >> i & 1 == 0,
                    });
                }
            }
            let mut encoding = Encoding::new(n, &allowed).unwrap();
            let mut infeasible = Vec::new();
            if n >= 3 && rng.gen_bool(0.5) {
                let set: Vec<usize> = (0..3).collect();
                encoding.forbid_group(&set);
                infeasible.push(0b111u128);
            }
            let space = FusionSpace {
                level: 1,
                n,
                outer: None,
                nodes: (0..n).map(|x| vec![x]).collect(),
                first,
                apart,
                infeasible,
                encoding,
                stats: PruneStats::default(),
                counts: RefCell::new(HashMap::new()),
            };
            let listed: Vec<Vec<Vec<usize>>> = space.preorders().into_iter().map(|p| p.0).collect();
            let unique: HashSet<_> = listed.iter().cloned().collect();
            assert_eq!(unique.len(), listed.len(), "round {round}: a point listed twice");
            let brute: HashSet<Vec<Vec<usize>>> =
                all_preorders(n).into_iter().filter(|p| space.encoding.contains(p)).map(|p| p.0).collect();
            assert_eq!(unique, brute, "round {round}");
            assert_eq!(space.count(), Count::from_u64(brute.len() as u64), "round {round}");
            if let Some(p) = space.sample(&mut rng) {
                assert!(brute.contains(&p.0));
            }
        }
    }
}
