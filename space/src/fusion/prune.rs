//! Pruning, as in the paper: statements in one dependence cycle must be
//! fused (one node); a pair whose union is not fusable must be distributed;
//! a dependence forbids the order that would run its sink's group first.
//! Sets of three or more nodes along paths of the graph of dependent,
//! fusable pairs are tested with the compatible-pairwise-permutation
//! condition (Lemma 4), confirmed by the joint ILP when it fails. What is
//! left is a [`FusionSpace`], which `mod.rs` enumerates, counts and samples.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::fusable::LevelModel;
use super::{group_index, Allowed, DepGraph, Encoding, FusionError, FusionSpace, PruneStats};
use model::scop::Scop;
use vocab::preorder::Preorder;

/// Pruning at one level: nodes, must-fuse / must-distribute / forbidden
/// orders, the encoding, then the sets along paths.
pub(super) fn build(
    mut model: LevelModel,
    graph: &DepGraph,
    outer: Option<Preorder>,
    level: usize,
) -> Result<FusionSpace, FusionError> {
    let n = graph.n;
    let mut stats = PruneStats::default();
    let outer_group = outer.as_ref().map(|o| group_index(n, o));
    let (nodes, node_of) = cycle_nodes(graph, outer_group.as_deref());
    stats.must_fuse = nodes.iter().map(|g| g.len() * (g.len() - 1) / 2).sum();
    let fusable_node = nodes_fusable(&mut model, &nodes, level)?;
    let (first, mut apart) = fixed_orders(graph, &nodes, outer_group.as_deref());
    let adjacent = fusable_pairs(&mut model, graph, &nodes, &mut apart, &mut stats)?;
    let allowed = pair_relations(&node_of, &first, &apart, &mut stats);
    let rep: Vec<usize> = (0..n).map(|s| nodes[node_of[s]][0]).collect();
    let encoding = match Encoding::with_representatives(n, &allowed, &rep) {
        Some(e) => e,
        None => return Err(FusionError::Model("the dependences fix contradictory pair relations".into())),
    };
    if !fusable_node {
        stats.ilps = model.ilps;
        return Ok(FusionSpace {
            level,
            n,
            outer,
            nodes: Vec::new(),
            first: Vec::new(),
            apart: Vec::new(),
            infeasible: vec![0],
            encoding,
            stats,
            counts: RefCell::new(HashMap::new()),
        });
    }
    let mut space = FusionSpace {
        level,
        n,
        outer,
        nodes,
        first,
        apart,
        infeasible: Vec::new(),
        encoding,
        stats,
        counts: RefCell::new(HashMap::new()),
    };
    paths(&mut space, &mut model, graph, &adjacent)?;
    space.stats.ilps = model.ilps;
    space.stats.variables = space.encoding.vars.len();
    space.stats.constraints = space.encoding.constraints.len();
    Ok(space)
}

/// The nodes, the dependence cycles (SCCs), each a must-fuse group of
/// statements, and each statement's node.
fn cycle_nodes(graph: &DepGraph, outer_group: Option<&[usize]>) -> (Vec<Vec<usize>>, Vec<usize>) {
    // Nodes: dependence cycles, in an order where what must run first comes
    // first (the SCC numbering is one; at level 2 the outer order refines it).
    let mut node_ids: Vec<usize> = (0..graph.n_sccs()).collect();
    let members = |c: usize| -> Vec<usize> { (0..graph.n).filter(|&s| graph.scc[s] == c).collect() };
    if let Some(g) = outer_group {
        node_ids.sort_by_key(|&c| (g[members(c)[0]], c));
    }
    let nodes: Vec<Vec<usize>> = node_ids.iter().map(|&c| members(c)).collect();
    let mut node_of = vec![0; graph.n];
    for (x, ms) in nodes.iter().enumerate() {
        for &s in ms {
            node_of[s] = x;
        }
    }
    (nodes, node_of)
}

/// Whether every node (a dependence cycle) fits in one loop itself; every
/// node is asked, even after one does not fit.
fn nodes_fusable(model: &mut LevelModel, nodes: &[Vec<usize>], level: usize) -> Result<bool, FusionError> {
    let mut fusable_node = true;
    for g in nodes {
        if (g.len() > 1 || level > 1) && !model.witnessed(g) {
            let mu = vec![None; g.len()];
            if !model.fusable(g, &mu)? {
                fusable_node = false;
            }
        }
    }
    Ok(fusable_node)
}

/// The orders that dependences and the outer level fix between nodes, as
/// bit sets per node: `first[y]` holds the nodes that must run no later
/// than `y`, `apart[x]` those the outer level puts in another group.
fn fixed_orders(
    graph: &DepGraph,
    nodes: &[Vec<usize>],
    outer_group: Option<&[usize]>,
) -> (Vec<u128>, Vec<u128>) {
    // "a must run in an earlier or the same group as b".
    let must_first =
        |a: usize, b: usize| -> bool { graph.reach[a][b] || outer_group.is_some_and(|g| g[a] < g[b]) };
    let m = nodes.len();
    let mut first = vec![0u128; m];
    let mut apart = vec![0u128; m];
    for x in 0..m {
        for y in 0..m {
            if x == y {
                continue;
            }
            let (gx, gy) = (&nodes[x], &nodes[y]);
            if gx.iter().any(|&a| gy.iter().any(|&b| must_first(a, b))) {
                first[y] |= 1 << x;
            }
            if outer_group.is_some_and(|g| g[gx[0]] != g[gy[0]]) {
                apart[x] |= 1 << y;
            }
        }
    }
    (first, apart)
}

/// The dependent node pairs not yet apart, each tested for fusion: the
/// fusable ones become adjacent (the graph the paths walk, returned), the
/// others must be distributed (`apart`).
fn fusable_pairs(
    model: &mut LevelModel,
    graph: &DepGraph,
    nodes: &[Vec<usize>],
    apart: &mut [u128],
    stats: &mut PruneStats,
) -> Result<Vec<u128>, FusionError> {
    let m = nodes.len();
    let mut adjacent = vec![0u128; m];
    for x in 0..m {
        for y in x + 1..m {
            if apart[x] >> y & 1 == 1 {
                continue;
            }
            let dependent = nodes[x]
                .iter()
                .any(|&a| nodes[y].iter().any(|&b| graph.has_edge(a, b) || graph.has_edge(b, a)));
            if !dependent {
                continue;
            }
            let mut set = nodes[x].clone();
            set.extend(&nodes[y]);
            stats.pairs_tested += 1;
            if model.witnessed(&set) || model.fusable(&set, &vec![None; set.len()])? {
                adjacent[x] |= 1 << y;
                adjacent[y] |= 1 << x;
            } else {
                apart[x] |= 1 << y;
                apart[y] |= 1 << x;
            }
        }
    }
    Ok(adjacent)
}

/// The relations (before, equal, after) left to each statement pair for
/// the encoding, counted in `stats` as must-distribute and forbidden orders.
fn pair_relations(node_of: &[usize], first: &[u128], apart: &[u128], stats: &mut PruneStats) -> Vec<Allowed> {
    let n = node_of.len();
    let mut allowed = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (x, y) = (node_of[i], node_of[j]);
            let a = if x == y {
                Allowed { before: false, equal: true, after: false }
            } else {
                Allowed {
                    before: first[x] >> y & 1 == 0,
                    equal: apart[x] >> y & 1 == 0,
                    after: first[y] >> x & 1 == 0,
                }
            };
            if x != y {
                if !a.equal {
                    stats.must_distribute += 1;
                }
                if !a.before || !a.after {
                    stats.forbidden_orders += 1;
                }
            }
            allowed.push(a);
        }
    }
    allowed
}

/// Sets of three or more nodes along simple paths of the graph of dependent,
/// fusable node pairs; a path stops growing once its set is infeasible, holds
/// a pair that must stay apart, or was seen before.
fn paths(
    space: &mut FusionSpace,
    model: &mut LevelModel,
    graph: &DepGraph,
    adjacent: &[u128],
) -> Result<(), FusionError> {
    let m = space.nodes.len();
    let mut seen: HashSet<u128> = HashSet::new();
    let mut perms = HashMap::new();
    let mut stack: Vec<(Vec<usize>, u128)> = (0..m).map(|x| (vec![x], 1u128 << x)).collect();
    stack.reverse();
    while let Some((path, set)) = stack.pop() {
        let last = *path.last().unwrap();
        for y in (0..m).rev() {
            if adjacent[last] >> y & 1 == 0 || set >> y & 1 == 1 {
                continue;
            }
            let next = set | 1 << y;
            if (0..m).any(|x| next >> x & 1 == 1 && space.apart[x] & next != 0) {
                continue;
            }
            if space.infeasible.iter().any(|&s| subset(s, next)) {
                continue;
            }
            let mut p = path.clone();
            p.push(y);
            if !seen.insert(next) {
                continue;
            }
            if p.len() >= 3 && convex(space, next) {
                space.stats.sets_tested += 1;
                if !set_fusable(space, model, graph, next, &mut perms)? {
                    space.stats.infeasible_sets += 1;
                    space.infeasible.push(next);
                    let reps: Vec<usize> = p.iter().map(|&x| space.nodes[x][0]).collect();
                    space.encoding.forbid_group(&reps);
                    continue;
                }
            }
            stack.push((p, next));
        }
    }
    Ok(())
}

/// Whether a node set could be one group: no node outside it must run after
/// one member and before another.
/// Node set `s` within `of`: an infeasible set inside a candidate group
/// makes it infeasible too.
pub(super) fn subset(s: u128, of: u128) -> bool {
    s & of == s
}

/// The pairwise-permutation tests done, by their question.
type PermutationTests = HashMap<(usize, usize, Option<usize>, Option<usize>), bool>;

fn convex(space: &FusionSpace, set: u128) -> bool {
    let m = space.nodes.len();
    (0..m).filter(|&z| set >> z & 1 == 0).all(|z| {
        let after_some = space.first[z] & set != 0;
        let before_some = (0..m).any(|x| set >> x & 1 == 1 && space.first[x] >> z & 1 == 1);
        !(after_some && before_some)
    })
}

/// Lemma 4: a set is fusable when every statement can be given a loop
/// iterator µ so that each dependent pair is fusable with those iterators
/// ((µr, µs) ∈ M_rs, each membership one pair ILP, asked lazily and cached).
/// The lemma is only sufficient, so a set it does not clear is decided by
/// the ILP on the whole set.
fn set_fusable(
    space: &FusionSpace,
    model: &mut LevelModel,
    graph: &DepGraph,
    set: u128,
    perms: &mut PermutationTests,
) -> Result<bool, FusionError> {
    let m = space.nodes.len();
    let node_list: Vec<usize> = (0..m).filter(|&x| set >> x & 1 == 1).collect();
    let stmts: Vec<usize> = node_list.iter().flat_map(|&x| space.nodes[x].iter().copied()).collect();
    if model.witnessed(&stmts) {
        return Ok(true);
    }
    let node_of: HashMap<usize, usize> =
        node_list.iter().flat_map(|&x| space.nodes[x].iter().map(move |&s| (s, x))).collect();
    // Dependent statement pairs (by position in `stmts`) in different nodes.
    let mut pairs = Vec::new();
    for (k, &r) in stmts.iter().enumerate() {
        for (l, &s) in stmts.iter().enumerate().skip(k + 1) {
            if node_of[&r] != node_of[&s] && (graph.has_edge(r, s) || graph.has_edge(s, r)) {
                pairs.push((k, l));
            }
        }
    }
    let doms: Vec<Vec<Option<usize>>> = stmts
        .iter()
        .map(|&s| if model.has_loop(s) { (0..model.dims[s]).map(Some).collect() } else { vec![None] })
        .collect();
    // Whether (a, b) ∈ M_rs: the two nodes of r and s fusable with r on
    // iterator a and s on iterator b.
    let mut member = |model: &mut LevelModel, r: usize, s: usize, a: Option<usize>, b: Option<usize>| {
        if let Some(&v) = perms.get(&(r, s, a, b)) {
            return Ok::<bool, FusionError>(v);
        }
        let mut both = space.nodes[node_of[&r]].clone();
        both.extend(&space.nodes[node_of[&s]]);
        let mut mu = vec![None; both.len()];
        mu[both.iter().position(|&x| x == r).unwrap()] = a;
        mu[both.iter().position(|&x| x == s).unwrap()] = b;
        let v = model.fusable(&both, &mu)?;
        perms.insert((r, s, a, b), v);
        Ok(v)
    };
    // Depth-first over µ per statement, checking each pair once both ends
    // are set.
    let mut mu: Vec<usize> = vec![0; stmts.len()];
    let mut k = 0usize;
    loop {
        if k == stmts.len() {
            return Ok(true);
        }
        let mut ok = true;
        for &(i, j) in pairs.iter().filter(|&&(_, j)| j == k) {
            if !member(model, stmts[i], stmts[j], doms[i][mu[i]], doms[j][mu[j]])? {
                ok = false;
                break;
            }
        }
        if ok {
            k += 1;
            if k < stmts.len() {
                mu[k] = 0;
            }
            continue;
        }
        // Next value at k, backtracking over exhausted positions.
        loop {
            mu[k] += 1;
            if mu[k] < doms[k].len() {
                break;
            }
            if k == 0 {
                return model.fusable(&stmts, &vec![None; stmts.len()]);
            }
            k -= 1;
        }
    }
}

/// The components of each statement's original `2d+1` schedule, as text.
pub(super) fn original_rows(scop: &Scop) -> Vec<Vec<String>> {
    let map = &scop.schedule_map;
    scop.statements
        .iter()
        .map(|st| {
            let needle = format!("{}[", st.name);
            let mut at = 0;
            // The statement's own entry: its name right after `{` or `;`.
            while let Some(k) = map[at..].find(&needle) {
                let k = at + k;
                let before = map[..k].trim_end();
                if before.ends_with('{') || before.ends_with(';') {
                    let Some(arrow) = map[k..].find("-> [") else { break };
                    let start = k + arrow + 4;
                    let Some(end) = map[start..].find(']') else { break };
                    return map[start..start + end].split(',').map(|c| c.trim().to_string()).collect();
                }
                at = k + needle.len();
            }
            Vec::new()
        })
        .collect()
}

/// The direction (+1 or −1) in which the original program runs each loop of
/// each statement: nonnegative schedule coefficients are taken in these
/// directions, as on loops normalised to run upwards (the paper's
/// assumption), so a downward loop keeps its natural order.
pub(super) fn directions(scop: &Scop) -> Vec<Vec<i64>> {
    let rows = original_rows(scop);
    scop.statements
        .iter()
        .zip(&rows)
        .map(|(st, row)| {
            st.iterators
                .iter()
                .map(|it| if row.iter().any(|c| *c == format!("-{it}")) { -1 } else { 1 })
                .collect()
        })
        .collect()
}
