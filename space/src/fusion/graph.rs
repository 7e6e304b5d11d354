//! The statement-level dependence graph: validity dependences (flow, anti,
//! output) merged per ordered statement pair, with reachability and strongly
//! connected components.

use std::collections::{BTreeMap, HashMap};

use isl_rs::{Context, UnionMap};

use crate::schedule::order::Order;
use model::deps::{DepKind, Dependences};
use model::isl::{IslError, IslResultExt};
use model::scop::Scop;

/// One edge: every validity dependence from `src` to `dst` as one relation.
#[derive(Debug, Clone)]
pub struct Edge {
    pub src: usize,
    pub dst: usize,
    pub relation: String,
}

#[derive(Debug, Clone)]
pub struct DepGraph {
    pub n: usize,
    /// Sorted by `(src, dst)`, self edges included.
    pub edges: Vec<Edge>,
    /// `reach[a][b]`: a path of one or more edges from `a` to `b`.
    pub reach: Vec<Vec<bool>>,
    /// Strongly connected component of each statement, numbered in
    /// topological order of the condensation (sources first).
    pub scc: Vec<usize>,
}

impl DepGraph {
    pub fn build(ctx: &Context, scop: &Scop, deps: &Dependences) -> Result<DepGraph, IslError> {
        let stmt_of: HashMap<&str, usize> = scop
            .statements
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.accesses.iter().map(move |a| (a.id.as_str(), i)))
            .collect();
        let mut merged: BTreeMap<(usize, usize), UnionMap> = BTreeMap::new();
        for d in deps.deps.iter().filter(|d| matches!(d.kind, DepKind::Flow | DepKind::War | DepKind::Waw)) {
            let what = || format!("dependence {} -> {}", d.source, d.sink);
            let (Some(&a), Some(&b)) = (stmt_of.get(d.source.as_str()), stmt_of.get(d.sink.as_str())) else {
                return Err(IslError {
                    what: what(),
                    message: "names a reference that no statement has".into(),
                });
            };
            let rel = UnionMap::read_from_str(ctx, &d.relation).ctx(what)?;
            let rel = match merged.remove(&(a, b)) {
                Some(m) => m.union(rel).ctx(what)?,
                None => rel,
            };
            merged.insert((a, b), rel);
        }
        // Coalesced to keep the fusion ILPs small, then the original order
        // stated where a piece's rational relaxation lost it, as for the
        // scheduler: else Farkas' lemma can call a legal fusion illegal.
        let order = Order::new(ctx, scop)?;
        let mut edges = Vec::new();
        for ((src, dst), m) in merged {
            let what = || "printing a merged dependence".to_string();
            let m = m.coalesce().ctx(what)?;
            let m = match order.state(m.copy().ctx(what)?)? {
                Some(stated) => stated,
                None => m,
            };
            let relation = m.to_str().ctx(what)?.to_string();
            edges.push(Edge { src, dst, relation });
        }
        Ok(Self::from_edges(scop.statements.len(), edges))
    }

    pub fn from_edges(n: usize, edges: Vec<Edge>) -> DepGraph {
        let mut reach = vec![vec![false; n]; n];
        for e in &edges {
            reach[e.src][e.dst] = true;
        }
        // Warshall's transitive closure: n is at most a few dozen.
        for k in 0..n {
            let via = reach[k].clone();
            for row in reach.iter_mut().filter(|row| row[k]) {
                row.iter_mut().zip(&via).for_each(|(r, &v)| *r |= v);
            }
        }
        // Components: a and b together iff each reaches the other; numbered
        // by a topological order of the condensation, smallest statement
        // first among the ready ones (deterministic).
        let mut rep: Vec<usize> = (0..n).collect();
        for a in 0..n {
            for b in 0..a {
                if reach[a][b] && reach[b][a] {
                    rep[a] = rep[b];
                    break;
                }
            }
        }
        let reps: Vec<usize> = (0..n).filter(|&a| rep[a] == a).collect();
        let mut scc = vec![usize::MAX; n];
        let mut done = vec![false; n];
        for next in 0..reps.len() {
            let r = *reps
                .iter()
                .find(|&&r| !done[r] && reps.iter().all(|&q| q == r || done[q] || !reach[q][r]))
                .expect("the condensation of a graph is acyclic");
            done[r] = true;
            for a in 0..n {
                if rep[a] == r {
                    scc[a] = next;
                }
            }
        }
        DepGraph { n, edges, reach, scc }
    }

    /// Whether some validity dependence goes from `a` to `b` directly.
    pub fn has_edge(&self, a: usize, b: usize) -> bool {
        self.edges.iter().any(|e| e.src == a && e.dst == b)
    }

    pub fn n_sccs(&self) -> usize {
        self.scc.iter().map(|&c| c + 1).max().unwrap_or(0)
    }
}
