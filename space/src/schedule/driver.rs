//! Row-by-row construction of permutable bands for each fusion group.
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
//!
//! Non-triviality: the row must be linearly independent of the earlier rows
//! for every statement that still needs one, i.e. `r·c ≠ 0` for some vector
//! `r` of a basis of the orthogonal complement of its rows so far. That is a
//! union of sign cases `r₁·c ≥ 1`, `r₁·c ≤ −1`, `r₁·c = 0 ∧ r₂·c ≥ 1`, …,
//! searched by branch and bound: each node is the lexmin without the
//! condition (plus the valid inequality that some coefficient on the
//! complement's support is non-zero); where it is trivial for a statement,
//! the node branches on that statement's cases. First the head alone, then
//! the whole vector with the head pinned at its optimum, so the answer is
//! the lexmin of the whole objective vector over the non-trivial points,
//! whatever the order of the cases.

use std::collections::HashMap;

use isl_rs::{Context, Set, UnionMap};

use super::farkas::{farkas, Farkas};
use super::ilp::{self, Backend, Constraint, Outcome, Problem, Relation};
use super::{tree, CoreOptions, CoreSchedule, Fusion, Preorder, Row, RowKind, ScheduleError, ThreadMapping};
use crate::deps::{DepKind, Dependences};
use crate::isl::{new_context, IslResultExt};
use crate::knobs::{Consecutivity, SchedulerOptions, Spatial, Target};
use crate::linalg::{null_space, rank};
use crate::scop::Scop;
use crate::spatial::{self, InterConsecutive, Locality, Reference};

type Result<T> = std::result::Result<T, ScheduleError>;

/// Objectives that rank non-trivial solutions: bound, constant, parameter and
/// iterator coefficient sums.
const PREFIX: usize = 4;

/// At most this many prefix lexmins in one row's sign-case search; past it the
/// best solution found so far is kept.
const SEARCH_BUDGET: usize = 64;

/// All validity dependences from one statement to another, as one relation.
#[derive(Clone)]
struct DepGroup {
    src: usize,
    dst: usize,
    /// The part not yet carried by a finished band.
    relation: String,
}

impl DepGroup {
    fn label(&self) -> String {
        format!("S{}->S{}", self.src + 1, self.dst + 1)
    }
}

/// Solves lexmins with the chosen backend, optionally cross-checked.
struct Solver {
    backend: Backend,
    cross_check: bool,
    lexmins: usize,
    /// Cross-checked lexmins, and those isl gave up on (operation quota).
    checked: usize,
    unchecked: usize,
}

impl Solver {
    fn lexmin(&mut self, p: &Problem) -> Result<Outcome> {
        Ok(self.lexmin_below(p, None)?.expect("no cutoff, no early stop"))
    }

    /// [`ilp::lexmin_below`]: `None` when the optimum is not below `cutoff`.
    fn lexmin_below(&mut self, p: &Problem, cutoff: Option<&[i64]>) -> Result<Option<Outcome>> {
        self.lexmins += 1;
        let reduced = without_redundant_rows(p);
        let p = &reduced;
        let out = ilp::lexmin_below(p, self.backend, cutoff)?;
        if self.cross_check {
            let other = if self.backend == Backend::Cbc { Backend::Isl } else { Backend::Cbc };
            let theirs = match ilp::lexmin_below(p, other, cutoff) {
                Err(ilp::IlpError::Quota) => {
                    self.unchecked += 1;
                    return Ok(out);
                }
                r => r?,
            };
            self.checked += 1;
            let opt = |o: &Option<Outcome>| match o {
                Some(Outcome::Optimal { objective_values, .. }) => Some(Some(objective_values.clone())),
                Some(Outcome::Infeasible) => Some(None),
                None => None,
            };
            if opt(&out) != opt(&theirs) {
                return Err(ScheduleError::BackendsDisagree(format!(
                    "{:?}: {:?}, {:?}: {:?} ({} variables, {} constraints, cutoff {:?})",
                    self.backend,
                    opt(&out),
                    other,
                    opt(&theirs),
                    p.vars.len(),
                    p.constraints.len(),
                    cutoff
                )));
            }
        }
        Ok(out)
    }
}

/// `p` without constraints that repeat an earlier one and without
/// inequalities that every point within the variables' bounds satisfies (no
/// negative coefficient on a variable bounded below by 0, a non-negative
/// constant). The feasible set is unchanged. Locality ILPs repeat the same
/// Farkas rows many times (one per relation of equal shape): heat-3d's (4)
/// had 4 544 constraints of which 425 distinct.
fn without_redundant_rows(p: &Problem) -> Problem {
    let mut seen = std::collections::HashSet::new();
    let constraints = p
        .constraints
        .iter()
        .filter(|c| {
            let mut key = c.coeffs.clone();
            key.sort_unstable();
            let implied = c.relation == Relation::Ge
                && c.constant >= 0
                && c.coeffs.iter().all(|&(v, a)| a >= 0 && p.vars[v].lower.is_some_and(|l| l >= 0));
            !implied && seen.insert((key, c.constant, c.relation == Relation::Eq))
        })
        .cloned()
        .collect();
    Problem { vars: p.vars.clone(), constraints, objectives: p.objectives.clone() }
}

pub(super) fn schedule(scop: &Scop, deps: &Dependences, opts: &CoreOptions) -> Result<CoreSchedule> {
    let ctx = new_context();
    let solves_before = ilp::solves();
    let all = dep_groups(&ctx, scop, deps)?;
    let mut solver =
        Solver { backend: opts.backend, cross_check: opts.cross_check, lexmins: 0, checked: 0, unchecked: 0 };
    let preorder = match &opts.fusion {
        Fusion::Original => Preorder::original(scop),
        Fusion::Preorder(p) => p.clone(),
        Fusion::Max => max_fusion(&ctx, scop, &all, &mut solver)?,
    };
    check_preorder(scop, &preorder, &all)?;
    let locality = match &opts.knobs {
        Some(k) if k.spatial != Spatial::Off => {
            Some(spatial::locality(&ctx, scop, deps, k.line_bytes, k.spatial)?)
        }
        _ => None,
    };
    let references = match &locality {
        Some(l) => l.references.clone(),
        None if opts.knobs.is_some() => spatial::references(&ctx, scop)?,
        None => Vec::new(),
    };
    let inter = match &opts.knobs {
        Some(k) if k.consecutivity == Consecutivity::Global => spatial::inter_consecutive(&ctx, scop)?,
        _ => Vec::new(),
    };
    let mut rows = Vec::new();
    let mut mapping = Vec::new();
    for (g, members) in preorder.0.iter().enumerate() {
        let inside: Vec<DepGroup> =
            all.iter().filter(|d| members.contains(&d.src) && members.contains(&d.dst)).cloned().collect();
        let mut group = Group::new(&ctx, scop, g, members.clone(), inside);
        if let Some(knobs) = &opts.knobs {
            group.unified = Some(Unified::new(scop, knobs, &references, locality.as_ref(), &inter, members));
        }
        let group_rows = group.run(&mut solver)?;
        if opts.knobs.as_ref().is_some_and(|k| k.target == Target::Gpu) {
            mapping.extend(thread_mapping(g, &group_rows));
        }
        rows.extend(group_rows);
    }
    let tree = tree::build(scop, &preorder, &rows);
    let violations = crate::legality::violations(&ctx, &scop.context, &tree, deps)?;
    if let Some(v) = violations.first() {
        return Err(ScheduleError::Illegal(format!(
            "{} {} -> {}: {}",
            v.kind, v.source, v.sink, v.bad_distances
        )));
    }
    Ok(CoreSchedule {
        preorder,
        tree,
        rows,
        lexmins: solver.lexmins,
        ilps: ilp::solves() - solves_before,
        cross_checked: solver.checked,
        cross_unchecked: solver.unchecked,
        mapping,
    })
}

/// RR-9110 §4.8: in the outermost band with coincident rows, the first
/// coincident row that carries spatial proximity is mapped to thread `x`; the
/// other coincident rows (at most three in all) to `z, y, x` in order.
fn thread_mapping(group: usize, rows: &[Row]) -> Option<ThreadMapping> {
    let band = rows.iter().find(|r| r.coincident)?.band;
    let coincident: Vec<(usize, &Row)> =
        rows.iter().filter(|r| r.band == band).enumerate().filter(|(_, r)| r.coincident).collect();
    let spatial = coincident.iter().find(|(_, r)| !r.spatial.is_empty()).map(|(i, _)| *i);
    let others: Vec<usize> = coincident.iter().map(|(i, _)| *i).filter(|i| Some(*i) != spatial).collect();
    let labels: &[char] = if spatial.is_some() { &['z', 'y'] } else { &['z', 'y', 'x'] };
    let take = others.len().min(labels.len());
    let mut threads: Vec<(usize, char)> = others[others.len() - take..]
        .iter()
        .copied()
        .zip(labels[labels.len() - take..].iter().copied())
        .collect();
    if let Some(i) = spatial {
        threads.push((i, 'x'));
    }
    threads.sort();
    Some(ThreadMapping { group, band, threads })
}

/// A group of references with its spatial and temporal relations inside one
/// fusion group, as dependence groups (per statement pair).
#[derive(Clone)]
struct LocGroup {
    label: String,
    refs: Vec<usize>,
    multiplicity: usize,
    spatial: Vec<DepGroup>,
    temporal: Vec<DepGroup>,
    /// Spatial relations still considered (§4.4: a carried group is removed).
    active: bool,
}

/// The unified scheduler's state for one fusion group (RR-9110 §4).
struct Unified {
    knobs: SchedulerOptions,
    references: Vec<Reference>,
    groups: Vec<LocGroup>,
    /// Register-pressure heuristic value h of the group (§4.7).
    pressure: u32,
    /// Per member: the innermost direction `v` and `h·v` for intra-statement
    /// consecutivity (global level), when some reference admits it.
    consec: Vec<Option<(Vec<i64>, i64)>>,
    /// Inter-statement consecutivity (consecutivity report §3.3.2, §3.4.3),
    /// per pair of members (first, next): the rows `q` of the orthogonal
    /// complement of its relation's affine hull over `(x, y, parameters, 1)`.
    /// `f_next(y) - f_first(x) = v` on every pair exactly when
    /// `q · (-c_first, c_next, d_next - d_first, e_next - e_first - v) = 0`.
    inter: Vec<(usize, usize, Vec<Vec<i64>>)>,
    /// Per pair: a row broke its distance condition (29), so it can no
    /// longer be satisfied and is not imposed again.
    inter_failed: Vec<bool>,
    /// Per member: whether it already has a coincident row (single degree of
    /// parallelism).
    has_coincident: Vec<bool>,
    /// GPU: spatial proximity handled (found, or given up).
    spatial_done: bool,
    /// Whether the consecutivity constraints are in force for the next ILP.
    consec_on: bool,
    /// A Feautrier row asked for by the strategy carried nothing.
    feautrier_useless: bool,
}

impl Unified {
    fn new(
        scop: &Scop,
        knobs: &SchedulerOptions,
        references: &[Reference],
        locality: Option<&Locality>,
        inter: &[InterConsecutive],
        members: &[usize],
    ) -> Unified {
        let inside = |(s, t, _): &&(usize, usize, String)| members.contains(s) && members.contains(t);
        let index = |id: &str| references.iter().position(|r| r.id == id).unwrap();
        let groups = locality
            .map(|l| {
                l.groups
                    .iter()
                    .map(|g| LocGroup {
                        label: g.label(),
                        refs: g.refs.iter().map(|r| index(r)).collect(),
                        multiplicity: g.multiplicity,
                        spatial: g
                            .spatial
                            .iter()
                            .filter(inside)
                            .map(|(s, t, r)| DepGroup { src: *s, dst: *t, relation: r.clone() })
                            .collect(),
                        temporal: g
                            .temporal
                            .iter()
                            .filter(inside)
                            .map(|(s, t, r)| DepGroup { src: *s, dst: *t, relation: r.clone() })
                            .collect(),
                        active: true,
                    })
                    .filter(|g| !g.spatial.is_empty() || !g.temporal.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let consec = members
            .iter()
            .map(|&s| {
                if knobs.consecutivity != Consecutivity::Global {
                    return None;
                }
                innermost_direction(scop.statements[s].iterators.len(), references, s)
            })
            .collect();
        let pos = |s: usize| members.iter().position(|&m| m == s);
        let np = scop.params.len();
        let inter = inter
            .iter()
            .filter_map(|p| {
                let (j, k) = (pos(p.first)?, pos(p.next)?);
                let n = scop.statements[p.first].iterators.len() + scop.statements[p.next].iterators.len();
                // Hull rows are over the SCoP's parameters; anything else is not ours to read.
                if p.hull.iter().any(|r| r.len() != n + np + 1) {
                    return None;
                }
                Some((j, k, null_space(&p.hull, n + np + 1)))
            })
            .collect::<Vec<_>>();
        Unified {
            knobs: knobs.clone(),
            references: references.to_vec(),
            groups,
            inter_failed: vec![false; inter.len()],
            inter,
            pressure: spatial::register_pressure(scop, references, members),
            consec,
            has_coincident: vec![false; members.len()],
            spatial_done: false,
            consec_on: knobs.consecutivity == Consecutivity::Global,
            feautrier_useless: false,
        }
    }

    fn spatial_on(&self) -> bool {
        self.knobs.spatial != Spatial::Off
    }
}

/// Consecutivity report §3.1.1 for one statement with `n` iterators: the
/// direction `v` of the innermost loop such that as many references as
/// possible have `G·v = 0` (outer subscripts unchanged) and `h·v ≠ 0` (last
/// subscript moves); the first such reference (writes first) fixes `h·v`.
fn innermost_direction(n: usize, references: &[Reference], stmt: usize) -> Option<(Vec<i64>, i64)> {
    let mut refs: Vec<&Reference> = references
        .iter()
        .filter(|r| r.stmt == stmt && r.subscripts.as_ref().is_some_and(|s| !s.is_empty()))
        .collect();
    refs.sort_by_key(|r| r.kind != crate::scop::AccessKind::Write);
    let mut candidates: Vec<Vec<i64>> = (0..n)
        .rev()
        .map(|k| {
            let mut e = vec![0; n];
            e[k] = 1;
            e
        })
        .collect();
    for r in &refs {
        let f = r.matrix();
        candidates.extend(null_space(&f[..f.len() - 1], n));
    }
    let consecutive = |r: &Reference, v: &[i64]| {
        let f = r.matrix();
        let (h, g) = f.split_last().unwrap();
        g.iter().all(|row| dot(row, v) == 0) && dot(h, v) != 0
    };
    let mut best: Option<(usize, Vec<i64>)> = None;
    for v in candidates {
        let score = refs.iter().filter(|r| consecutive(r, &v)).count();
        if score > 0 && best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, v));
        }
    }
    let (_, v) = best?;
    let first = refs.iter().find(|r| consecutive(r, &v))?;
    let hv = dot(first.matrix().last().unwrap(), &v);
    Some((v, hv))
}

/// Validity dependences (flow, anti, output) merged per statement pair.
fn dep_groups(ctx: &Context, scop: &Scop, deps: &Dependences) -> Result<Vec<DepGroup>> {
    let stmt_of: HashMap<&str, usize> = scop
        .statements
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.accesses.iter().map(move |a| (a.id.as_str(), i)))
        .collect();
    let mut merged: Vec<((usize, usize), UnionMap)> = Vec::new();
    for d in deps.deps.iter().filter(|d| matches!(d.kind, DepKind::Flow | DepKind::War | DepKind::Waw)) {
        let key = (stmt_of[d.source.as_str()], stmt_of[d.sink.as_str()]);
        let what = || format!("merging dependence {} -> {}", d.source, d.sink);
        let rel = UnionMap::read_from_str(ctx, &d.relation).ctx(what)?;
        match merged.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => {
                let old = std::mem::replace(m, UnionMap::empty_ctx(ctx).ctx(what)?);
                *m = old.union(rel).ctx(what)?;
            }
            None => merged.push((key, rel)),
        }
    }
    merged.sort_by_key(|(k, _)| *k);
    let mut out = Vec::new();
    for ((src, dst), m) in merged {
        // Not coalesced: the Farkas constraints of a union are those of its
        // pieces, each cheap, while coalescing merges the pieces (a stencil's
        // per-reference dependences) into one polyhedron with many facets
        // whose dual isl computes slowly (heat-3d: 2 × 2.6 s of 3.5 s). The
        // coefficient sets are equal on every kernel but heat-3d and
        // jacobi-2d, where the union's is larger (the coalesced piece's
        // rational relaxation holds more than the pieces'); no schedule changed.
        let relation = m.to_str().ctx(|| "printing".into())?.to_string();
        out.push(DepGroup { src, dst, relation });
    }
    Ok(out)
}

/// Every statement exactly once, and no dependence from a later group to an
/// earlier one.
fn check_preorder(scop: &Scop, p: &Preorder, deps: &[DepGroup]) -> Result<()> {
    let mut seen = vec![0; scop.statements.len()];
    for g in &p.0 {
        for &s in g {
            if s >= seen.len() {
                return Err(ScheduleError::BadPreorder(p.display()));
            }
            seen[s] += 1;
        }
    }
    if seen.iter().any(|&n| n != 1) || p.0.iter().any(|g| g.is_empty()) {
        return Err(ScheduleError::BadPreorder(p.display()));
    }
    for d in deps {
        let (a, b) = (p.group_of(d.src).unwrap(), p.group_of(d.dst).unwrap());
        if a > b {
            return Err(ScheduleError::IllegalPreorder {
                preorder: p.display(),
                reason: format!("S{} depends on S{}, which runs later", d.dst + 1, d.src + 1),
            });
        }
    }
    Ok(())
}

/// Adjacent original groups merged left to right while the merged group still
/// has a shared outer loop.
fn max_fusion(ctx: &Context, scop: &Scop, deps: &[DepGroup], solver: &mut Solver) -> Result<Preorder> {
    let original = Preorder::original(scop);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for g in original.0 {
        if let Some(last) = groups.last() {
            let mut merged = last.clone();
            merged.extend(&g);
            let loops = merged.iter().all(|&s| !scop.statements[s].iterators.is_empty());
            let inside: Vec<DepGroup> =
                deps.iter().filter(|d| merged.contains(&d.src) && merged.contains(&d.dst)).cloned().collect();
            if loops && Group::new(ctx, scop, 0, merged.clone(), inside).shared_outer_loop(solver)? {
                *groups.last_mut().unwrap() = merged;
                continue;
            }
        }
        groups.push(g);
    }
    Ok(Preorder(groups))
}

/// The variable layout of one row's ILP.
struct Layout {
    u_minus: Vec<usize>,
    u_plus: Vec<usize>,
    w: usize,
    /// Per member statement (in `Group::members` order).
    d: Vec<Vec<usize>>,
    e: Vec<usize>,
    c_minus: Vec<Vec<usize>>,
    c_plus: Vec<Vec<usize>>,
}

/// A linear expression over ILP variables.
type Lin = Vec<(usize, i64)>;

struct Group<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    index: usize,
    members: Vec<usize>,
    dims: Vec<usize>,
    np: usize,
    deps: Vec<DepGroup>,
    /// Iterator-coefficient rows found so far, per member.
    h: Vec<Vec<Vec<i64>>>,
    band: Vec<Row>,
    band_index: usize,
    done: Vec<Row>,
    farkas_cache: HashMap<String, Option<Farkas>>,
    /// `live` of each relation under the current band (cleared when the
    /// band changes): the locality ILP (4) asks again on every iterative
    /// removal.
    live_cache: std::cell::RefCell<HashMap<String, String>>,
    /// `equal_on(band)` for the current band (cleared with `live_cache`).
    band_eq: std::cell::RefCell<Option<UnionMap>>,
    /// Relation texts parsed once: isl's parser is slow, and each row's
    /// classification and each band's end read every dependence again.
    parsed: std::cell::RefCell<HashMap<String, UnionMap>>,
    /// The unified scheduler's knobs and locality relations; `None`: core.
    unified: Option<Unified>,
}

/// What the next step of a group is.
enum Next {
    Row(Row),
    /// A Feautrier row (GPU without a coincident solution, or hlim exceeded).
    Feautrier,
    /// No band row fits.
    None,
}

impl<'a> Group<'a> {
    fn new(ctx: &'a Context, scop: &'a Scop, index: usize, members: Vec<usize>, deps: Vec<DepGroup>) -> Self {
        let dims = members.iter().map(|&s| scop.statements[s].iterators.len()).collect();
        let n = members.len();
        Group {
            ctx,
            scop,
            index,
            members,
            dims,
            np: scop.params.len(),
            deps,
            h: vec![Vec::new(); n],
            band: Vec::new(),
            band_index: 0,
            done: Vec::new(),
            farkas_cache: HashMap::new(),
            live_cache: Default::default(),
            band_eq: Default::default(),
            parsed: Default::default(),
            unified: None,
        }
    }

    fn pos(&self, stmt: usize) -> usize {
        self.members.iter().position(|&m| m == stmt).unwrap()
    }

    /// Members that still need a linearly independent row.
    fn need(&self) -> Vec<usize> {
        (0..self.members.len()).filter(|&k| rank(&self.h[k], self.dims[k]) < self.dims[k]).collect()
    }

    fn run(&mut self, solver: &mut Solver) -> Result<Vec<Row>> {
        let mut first = true;
        loop {
            let need = self.need();
            if need.is_empty() && self.deps.is_empty() {
                self.close_band()?;
                return Ok(std::mem::take(&mut self.done));
            }
            if need.is_empty() && !self.band.is_empty() {
                self.close_band()?;
                continue;
            }
            let mut feautrier = false;
            if !need.is_empty() {
                match self.next_row(solver, &need)? {
                    Next::Row(row) => {
                        self.push(row)?;
                        first = false;
                        continue;
                    }
                    Next::Feautrier => feautrier = true,
                    Next::None => {}
                }
                if !feautrier && !self.band.is_empty() {
                    self.close_band()?;
                    continue;
                }
                if !feautrier && first && self.members.len() > 1 {
                    return Err(ScheduleError::IllegalPreorder {
                        preorder: Preorder(vec![self.members.clone()]).display(),
                        reason: "its statements admit no shared outer loop".into(),
                    });
                }
            }
            self.close_band()?;
            let row = self.feautrier_row(solver)?;
            self.push(row)?;
            if feautrier && self.band.last().is_some_and(|r| r.carries.is_empty()) {
                // A Feautrier row the strategy asked for (GPU, hlim) that
                // carries nothing: dropped, and not asked for again.
                if let Some(u) = self.unified.as_mut() {
                    if !u.feautrier_useless {
                        u.feautrier_useless = true;
                        u.spatial_done = true;
                        self.band.pop();
                        self.band_changed();
                        for h in &mut self.h {
                            h.pop();
                        }
                        continue;
                    }
                }
            }
            if self.band.last().is_some_and(|r| r.carries.is_empty()) {
                return Err(ScheduleError::Stuck(format!(
                    "group {}: no row carries any of {} remaining dependence groups",
                    self.index,
                    self.deps.len()
                )));
            }
            self.close_band()?;
            first = false;
        }
    }

    /// Rows the group still needs at least: the most any member still needs.
    fn rows_left(&self) -> usize {
        (0..self.members.len()).map(|k| self.dims[k] - rank(&self.h[k], self.dims[k])).max().unwrap_or(0)
    }

    /// The next row of the current band, by the core rule (coincident, then
    /// relaxed) or by the unified scheduler's strategy for its target.
    fn next_row(&mut self, solver: &mut Solver, need: &[usize]) -> Result<Next> {
        // Consecutivity constraints are optional: the whole strategy with
        // them first, then without.
        if self.unified.as_ref().is_some_and(|u| u.consec.iter().any(|c| c.is_some())) {
            self.unified.as_mut().unwrap().consec_on = true;
            let next = self.strategy(solver, need);
            self.unified.as_mut().unwrap().consec_on = false;
            if let Next::Row(row) = next? {
                return Ok(Next::Row(row));
            }
            // Intra-statement constraints alone: the inter-statement pairs
            // could not be met with them and are given up for good.
            let u = self.unified.as_mut().unwrap();
            if u.inter_failed.iter().any(|f| !f) {
                u.inter_failed.iter_mut().for_each(|f| *f = true);
                u.consec_on = true;
                let next = self.strategy(solver, need);
                self.unified.as_mut().unwrap().consec_on = false;
                if let Next::Row(row) = next? {
                    return Ok(Next::Row(row));
                }
            }
        }
        self.strategy(solver, need)
    }

    fn strategy(&mut self, solver: &mut Solver, need: &[usize]) -> Result<Next> {
        let Some(u) = &self.unified else {
            if let Some(row) = self.pluto_row(solver, need, true)? {
                return Ok(Next::Row(row));
            }
            return Ok(self.pluto_row(solver, need, false)?.map_or(Next::None, Next::Row));
        };
        let (target, hlim, pressure) = (u.knobs.target, u.knobs.hlim, u.pressure);
        let spatial_on = u.spatial_on();
        let feautrier_ok = !self.deps.is_empty() && !u.feautrier_useless;
        if !spatial_on {
            // The core ILP (3), with hlim and consecutivity.
            if target != Target::Seq {
                if let Some(row) = self.pluto_row(solver, need, true)? {
                    return Ok(Next::Row(row));
                }
                if self.band.is_empty() && feautrier_ok && hlim.is_some_and(|h| pressure > h) {
                    return Ok(Next::Feautrier);
                }
            }
            return Ok(self.pluto_row(solver, need, false)?.map_or(Next::None, Next::Row));
        }
        if solver.lexmins > LOCALITY_BUDGET {
            // Past the budget the locality ILPs give way to the core (3).
            if target != Target::Seq {
                if let Some(row) = self.pluto_row(solver, need, true)? {
                    return Ok(Next::Row(row));
                }
            }
            return Ok(self.pluto_row(solver, need, false)?.map_or(Next::None, Next::Row));
        }
        // Dimension slack: only members that need a row at every remaining
        // step must get a non-trivial one now.
        let left = self.rows_left();
        let tight: Vec<usize> =
            need.iter().copied().filter(|&k| self.dims[k] - rank(&self.h[k], self.dims[k]) == left).collect();
        if target == Target::Gpu {
            if !self.unified.as_ref().unwrap().spatial_done {
                // (5) with coincidence enforced; once it carries spatial
                // proximity, or a coincident solution carries none (then
                // discarded for (3)), spatial proximity is relaxed. Without a
                // coincident solution: a Feautrier row, and (5) again later.
                match self.spatial_row(solver, need, true)? {
                    Some(row) => {
                        self.unified.as_mut().unwrap().spatial_done = true;
                        if !row.spatial.is_empty() {
                            return Ok(Next::Row(row));
                        }
                    }
                    None if feautrier_ok => return Ok(Next::Feautrier),
                    None => self.unified.as_mut().unwrap().spatial_done = true,
                }
            }
            if let Some(row) = self.pluto_row(solver, need, true)? {
                return Ok(Next::Row(row));
            }
            return Ok(self.pluto_row(solver, need, false)?.map_or(Next::None, Next::Row));
        }
        // CPU (§4.7): (5) on the last row, (4) elsewhere.
        if left == 1 {
            if let Some(row) = self.spatial_row(solver, need, false)? {
                if !row.spatial.is_empty() {
                    return Ok(Next::Row(row));
                }
            }
        }
        let u = self.unified.as_ref().unwrap();
        let pending = self
            .deps
            .iter()
            .any(|d| !u.has_coincident[self.pos(d.src)] || !u.has_coincident[self.pos(d.dst)]);
        if target == Target::Openmp && left > 2 && pending {
            if let Some(row) = self.locality_row(solver, &tight, true)? {
                return Ok(Next::Row(row));
            }
            if self.band.is_empty() && feautrier_ok && hlim.is_some_and(|h| pressure > h) {
                return Ok(Next::Feautrier);
            }
        }
        Ok(self.locality_row(solver, &tight, false)?.map_or(Next::None, Next::Row))
    }

    /// Consecutivity report §3 (intra-statement, f = 1), on the linear part
    /// `T` of each member's schedule: every row but its last has `c·v = 0`
    /// and its last `c·v = h·v`, so the last loop advances the last subscript
    /// by one and leaves the others.
    fn consecutivity_constraints(&self, l: &Layout) -> Vec<Constraint> {
        let Some(u) = self.unified.as_ref().filter(|u| u.consec_on) else { return Vec::new() };
        let left = self.rows_left();
        let mut out = Vec::new();
        for (k, c) in u.consec.iter().enumerate() {
            let Some((v, hv)) = c else { continue };
            let remaining = self.dims[k] - rank(&self.h[k], self.dims[k]);
            if remaining == 0 {
                continue;
            }
            let coeffs: Lin = (0..self.dims[k])
                .flat_map(|i| [(l.c_plus[k][i], v[i]), (l.c_minus[k][i], -v[i])])
                .filter(|(_, a)| *a != 0)
                .collect();
            let constant = if remaining == 1 && remaining == left { -hv } else { 0 };
            out.push(Constraint { coeffs, constant, relation: Relation::Eq });
        }
        // Inter-statement: distance 0 on the pairs while both statements are
        // on rows before their consecutive one, 1 on that row (the same for
        // both, else the constraint has failed and is left out), nothing after.
        for (n, (j, k, complement)) in u.inter.iter().enumerate() {
            let Some(v) = self.inter_distance(n) else { continue };
            let (nj, nk) = (self.dims[*j], self.dims[*k]);
            for q in complement {
                let mut coeffs: Lin = Vec::new();
                for i in 0..nj {
                    coeffs.extend([(l.c_plus[*j][i], -q[i]), (l.c_minus[*j][i], q[i])]);
                }
                for i in 0..nk {
                    coeffs.extend([(l.c_plus[*k][i], q[nj + i]), (l.c_minus[*k][i], -q[nj + i])]);
                }
                for p in 0..self.np {
                    coeffs.extend([(l.d[*k][p], q[nj + nk + p]), (l.d[*j][p], -q[nj + nk + p])]);
                }
                let c = q[nj + nk + self.np];
                coeffs.extend([(l.e[*k], c), (l.e[*j], -c)]);
                coeffs.retain(|(_, a)| *a != 0);
                out.push(Constraint { coeffs, constant: -c * v, relation: Relation::Eq });
            }
        }
        out
    }

    /// The distance inter-statement pair `n` needs on the next row: 0 before
    /// both statements' consecutive row, 1 on it; `None` once it has failed,
    /// is done, or when its statements have no intra-statement constraint.
    fn inter_distance(&self, n: usize) -> Option<i64> {
        let u = self.unified.as_ref()?;
        if u.inter_failed[n] {
            return None;
        }
        let (j, k, _) = &u.inter[n];
        let left = self.rows_left();
        let last = |m: usize| {
            let remaining = self.dims[m] - rank(&self.h[m], self.dims[m]);
            (u.consec[m].is_some() && remaining > 0).then_some(remaining == 1 && remaining == left)
        };
        let (last_j, last_k) = (last(*j)?, last(*k)?);
        // Consecutive rows at different depths: (29) cannot hold.
        (last_j == last_k).then_some(last_j as i64)
    }

    /// Gives up the inter-statement pairs that `row` (about to be pushed)
    /// does not satisfy: one row off its distance and (29) is lost.
    fn note_inter_consecutivity(&mut self, row: &Row) {
        let Some(u) = self.unified.as_ref() else { return };
        let mut failed = Vec::new();
        for (n, (j, k, complement)) in u.inter.iter().enumerate() {
            let open = |m: usize| u.consec[m].is_some() && self.dims[m] > rank(&self.h[m], self.dims[m]);
            if u.inter_failed[n] || !open(*j) || !open(*k) {
                continue;
            }
            let ok = self.inter_distance(n).is_some_and(|v| {
                let (_, cj, dj, ej) = &row.affine[*j];
                let (_, ck, dk, ek) = &row.affine[*k];
                let w: Vec<i64> = cj
                    .iter()
                    .map(|x| -x)
                    .chain(ck.iter().copied())
                    .chain(dk.iter().zip(dj).map(|(a, b)| a - b))
                    .chain([ek - ej - v])
                    .collect();
                complement.iter().all(|q| dot(q, &w) == 0)
            });
            if !ok {
                failed.push(n);
            }
        }
        let u = self.unified.as_mut().unwrap();
        for n in failed {
            u.inter_failed[n] = true;
        }
    }

    /// Whether the coincidence relation of `dep` is still enforced (§4.7: it is
    /// relaxed for statements that already have a coincident row).
    fn enforce_coincidence(&self, dep: &DepGroup) -> bool {
        match &self.unified {
            Some(u) if u.spatial_on() && u.knobs.target != Target::Gpu => {
                !(u.has_coincident[self.pos(dep.src)] && u.has_coincident[self.pos(dep.dst)])
            }
            _ => true,
        }
    }

    /// Active locality groups in ILP order (§4.5): decreasing access rank,
    /// then multiplicity, so that the most promising are carried last.
    fn group_order(&self) -> Vec<usize> {
        let u = self.unified.as_ref().unwrap();
        let mut keyed: Vec<(usize, usize, usize)> = u
            .groups
            .iter()
            .enumerate()
            .map(|(g, grp)| {
                let rank = grp
                    .refs
                    .iter()
                    .map(|&r| {
                        let reference = &u.references[r];
                        match self.members.iter().position(|&m| m == reference.stmt) {
                            Some(k) => spatial::access_rank(reference, &self.h[k], self.dims[k]),
                            None => 0,
                        }
                    })
                    .max()
                    .unwrap_or(0);
                (g, rank, grp.multiplicity)
            })
            .collect();
        keyed.sort_by(|a, b| (b.1, b.2).cmp(&(a.1, a.2)).then(a.0.cmp(&b.0)));
        keyed.into_iter().map(|(g, ..)| g).collect()
    }

    /// RR-9110 (4): validity as in (3); per locality group a temporal then a
    /// spatial distance bound (both signs: proximity does not order), in
    /// group order; the first spatial group with a non-zero bound is removed
    /// and the ILP solved again until every remaining one has zero distance.
    fn locality_row(
        &mut self,
        solver: &mut Solver,
        tight: &[usize],
        coincident: bool,
    ) -> Result<Option<Row>> {
        let mut removed: Vec<String> = Vec::new();
        loop {
            if solver.lexmins > LOCALITY_BUDGET {
                return self.pluto_row(solver, tight, coincident);
            }
            let mut p = Problem::new();
            let l = self.layout(&mut p, false);
            let deps = self.deps.clone();
            for dep in &deps {
                let Some(f) = self.farkas_of(&dep.relation)? else { continue };
                let slots = self.distance_slots(&l, dep);
                Self::add_validity(&mut p, &f, &slots, coincident && self.enforce_coincidence(dep));
            }
            let mut prefix: Vec<Lin> = Vec::new();
            let mut spatial_bounds: Vec<(usize, Vec<usize>)> = Vec::new();
            let b = Some(COEFFICIENT_BOUND);
            for g in self.group_order() {
                let grp = self.unified.as_ref().unwrap().groups[g].clone();
                for (rels, is_spatial) in [(&grp.temporal, false), (&grp.spatial, true)] {
                    if rels.is_empty() || (is_spatial && !grp.active) {
                        continue;
                    }
                    let tag = if is_spatial { "S" } else { "T" };
                    let um: Vec<usize> =
                        (0..self.np).map(|i| p.add_var(format!("{tag}{g}.u-{i}"), Some(0), b)).collect();
                    let up: Vec<usize> =
                        (0..self.np).map(|i| p.add_var(format!("{tag}{g}.u+{i}"), Some(0), b)).collect();
                    let w = p.add_var(format!("{tag}{g}.w"), Some(0), b);
                    for rel in rels {
                        // Relations the band's earlier rows carry are out (§4.4).
                        let live = self.live(rel)?;
                        let Some(f) = self.farkas_of(&live)? else { continue };
                        let slots = self.distance_slots(&l, rel);
                        for sign in [1, -1] {
                            // u·p + w − sign·distance ≥ 0
                            let mut bound: Vec<Lin> = slots
                                .iter()
                                .map(|s| s.iter().map(|(v, k)| (*v, -sign * k)).collect())
                                .collect();
                            bound[0].push((w, 1));
                            for i in 0..self.np {
                                bound[1 + i].push((up[i], 1));
                                bound[1 + i].push((um[i], -1));
                            }
                            Self::add_farkas(&mut p, &f, &bound, 1);
                        }
                    }
                    prefix.push(um.iter().chain(&up).map(|&v| (v, 1)).collect());
                    prefix.push(vec![(w, 1)]);
                    if is_spatial {
                        let mut vars = um.clone();
                        vars.extend(&up);
                        vars.push(w);
                        spatial_bounds.push((g, vars));
                    }
                }
            }
            let n_prefix = prefix.len() + 2;
            p.objectives = prefix;
            p.objectives.push(l.d.iter().flatten().map(|&v| (v, 1)).collect());
            p.objectives.push(l.c_minus.iter().chain(&l.c_plus).flatten().map(|&v| (v, 1)).collect());
            self.individual_objectives(&mut p, &l);
            p.constraints.extend(self.consecutivity_constraints(&l));
            let Some(values) = self.nontrivial(solver, p, &l, tight, n_prefix)? else {
                if removed.is_empty() && spatial_bounds.is_empty() {
                    return Ok(None);
                }
                // Bounds that no schedule meets: fall back to the core ILP (3).
                return self.pluto_row(solver, tight, coincident);
            };
            let carried = spatial_bounds.iter().find(|(_, vars)| vars.iter().any(|&v| values[v] != 0));
            if let Some((g, _)) = carried {
                let u = self.unified.as_mut().unwrap();
                u.groups[*g].active = false;
                removed.push(u.groups[*g].label.clone());
                continue;
            }
            let kind = if coincident { RowKind::Coincident } else { RowKind::Pluto };
            let mut row = self.row_from(&l, &values, kind);
            row.spatial = removed;
            return Ok(Some(row));
        }
    }

    /// RR-9110 (5): validity as in (3) (so the row stays in the permutable
    /// band); minimise the coefficient sum first (discourages skew), then the
    /// number of active spatial groups not carried; non-triviality for every
    /// member that needs a row, slack or not.
    fn spatial_row(&mut self, solver: &mut Solver, need: &[usize], coincident: bool) -> Result<Option<Row>> {
        let mut p = Problem::new();
        let l = self.layout(&mut p, false);
        let deps = self.deps.clone();
        for dep in &deps {
            let Some(f) = self.farkas_of(&dep.relation)? else { continue };
            let slots = self.distance_slots(&l, dep);
            Self::add_validity(&mut p, &f, &slots, coincident && self.enforce_coincidence(dep));
        }
        let groups = self.unified.as_ref().unwrap().groups.clone();
        let mut eps: Vec<(usize, usize)> = Vec::new();
        for (g, grp) in groups.iter().enumerate().filter(|(_, g)| g.active && !g.spatial.is_empty()) {
            let e = p.add_var(format!("eps.{g}"), Some(0), Some(1));
            eps.push((g, e));
            for rel in &grp.spatial {
                let Some(f) = self.farkas_of(&rel.relation)? else { continue };
                let mut slots = self.distance_slots(&l, rel);
                slots[0].push((e, -1));
                Self::add_farkas(&mut p, &f, &slots, 1);
            }
        }
        if eps.is_empty() {
            return Ok(None);
        }
        p.objectives.push(l.c_minus.iter().chain(&l.c_plus).flatten().map(|&v| (v, 1)).collect());
        p.objectives.push(eps.iter().map(|&(_, e)| (e, -1)).collect());
        p.objectives.push(l.d.iter().flatten().map(|&v| (v, 1)).collect());
        self.individual_objectives(&mut p, &l);
        p.constraints.extend(self.consecutivity_constraints(&l));
        let Some(values) = self.nontrivial(solver, p, &l, need, 3)? else { return Ok(None) };
        let mut row = self.row_from(&l, &values, RowKind::Spatial);
        let u = self.unified.as_mut().unwrap();
        for &(g, e) in &eps {
            if values[e] == 1 {
                u.groups[g].active = false;
                row.spatial.push(u.groups[g].label.clone());
            }
        }
        Ok(Some(row))
    }

    /// Whether the first row of this group can be a loop shared by all members.
    fn shared_outer_loop(&mut self, solver: &mut Solver) -> Result<bool> {
        let need = self.need();
        let (p, l) = self.pluto_problem(false)?;
        // Any non-trivial row will do: the head's search decides, and the
        // rest of the objective vector (hundreds of objectives on a merged
        // group, most of deriche's time under maximal fusion) is not needed.
        let (root, _) = self.nontrivial_root(p, &l, &need, PREFIX);
        let mut best = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), &l, &need, &mut best, &mut budget)?;
        Ok(best.is_some())
    }

    fn layout(&self, p: &mut Problem, with_bound: bool) -> Layout {
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
            c_minus
                .push((0..self.dims[k]).map(|i| p.add_var(format!("{name}.c-{i}"), Some(0), None)).collect());
            c_plus
                .push((0..self.dims[k]).map(|i| p.add_var(format!("{name}.c+{i}"), Some(0), None)).collect());
        }
        Layout { u_minus, u_plus, w, d, e, c_minus, c_plus }
    }

    /// The slot expressions of `φ_dst(y) − φ_src(x)` (Farkas slot order: constant,
    /// parameters, source iterators, sink iterators).
    fn distance_slots(&self, l: &Layout, dep: &DepGroup) -> Vec<Lin> {
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

    fn farkas_of(&mut self, relation: &str) -> Result<Option<Farkas>> {
        if let Some(f) = self.farkas_cache.get(relation) {
            return Ok(f.clone());
        }
        let f = farkas(self.ctx, relation, &self.scop.context)?;
        self.farkas_cache.insert(relation.to_string(), f.clone());
        Ok(f)
    }

    /// Validity of the distance `slots` on `f`'s relation: non-negative, or
    /// zero when `zero` (coincidence), as equalities where `f` allows.
    fn add_validity(p: &mut Problem, f: &Farkas, slots: &[Lin], zero: bool) {
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
    fn add_farkas(p: &mut Problem, f: &Farkas, slots: &[Lin], sign: i64) {
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

    fn individual_objectives(&self, p: &mut Problem, l: &Layout) {
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

    /// The part of each remaining dependence not yet carried by the rows of the
    /// current band: what a coincident row must give zero distance.
    fn live(&self, dep: &DepGroup) -> Result<String> {
        if self.band.is_empty() {
            return Ok(dep.relation.clone());
        }
        if let Some(live) = self.live_cache.borrow().get(&dep.relation) {
            return Ok(live.clone());
        }
        let live = self.live_uncached(dep)?;
        self.live_cache.borrow_mut().insert(dep.relation.clone(), live.clone());
        Ok(live)
    }

    fn live_uncached(&self, dep: &DepGroup) -> Result<String> {
        let what = || "restricting a dependence to the current band".to_string();
        let eq = self.band_eq()?;
        let rel = self.parse(&dep.relation)?.intersect(eq).ctx(what)?;
        Ok(rel.coalesce().ctx(what)?.to_str().ctx(what)?.to_string())
    }

    /// Forgets what depends on the current band's rows.
    fn band_changed(&self) {
        self.live_cache.borrow_mut().clear();
        *self.band_eq.borrow_mut() = None;
    }

    /// [`Self::equal_on`] the current band, computed once per band.
    fn band_eq(&self) -> Result<UnionMap> {
        let what = || "instances equal on a band".to_string();
        if let Some(eq) = self.band_eq.borrow().as_ref() {
            return eq.copy().ctx(what).map_err(Into::into);
        }
        let eq = self.equal_on(&self.band)?;
        *self.band_eq.borrow_mut() = Some(eq.copy().ctx(what)?);
        Ok(eq)
    }

    /// The relation `text`, parsed once.
    fn parse(&self, text: &str) -> Result<UnionMap> {
        let what = || format!("reading {text}");
        if let Some(m) = self.parsed.borrow().get(text) {
            return m.copy().ctx(what).map_err(Into::into);
        }
        let m = UnionMap::read_from_str(self.ctx, text).ctx(what)?;
        self.parsed.borrow_mut().insert(text.to_string(), m.copy().ctx(what)?);
        Ok(m)
    }

    /// `{ x -> y : rows(x) = rows(y) }` over the group's statements.
    fn equal_on(&self, rows: &[Row]) -> Result<UnionMap> {
        let what = || "instances equal on a band".to_string();
        let map = UnionMap::read_from_str(self.ctx, &self.rows_map(rows)).ctx(what)?;
        map.copy().ctx(what)?.apply_range(map.reverse().ctx(what)?).ctx(what).map_err(Into::into)
    }

    /// `[params] -> { S1[i, j] -> [row0, row1, ...]; ... }`
    fn rows_map(&self, rows: &[Row]) -> String {
        let parts: Vec<String> = self
            .members
            .iter()
            .map(|&s| {
                let st = &self.scop.statements[s];
                let vals: Vec<String> = rows.iter().map(|r| tree::row_expr(self.scop, r, s)).collect();
                format!("{}[{}] -> [{}]", st.name, st.iterators.join(", "), vals.join(", "))
            })
            .collect();
        format!("[{}] -> {{ {} }}", self.scop.params.join(", "), parts.join("; "))
    }

    fn pluto_row(&mut self, solver: &mut Solver, need: &[usize], coincident: bool) -> Result<Option<Row>> {
        let (p, l) = self.pluto_problem(coincident)?;
        let Some(values) = self.nontrivial(solver, p, &l, need, PREFIX)? else { return Ok(None) };
        let kind = if coincident { RowKind::Coincident } else { RowKind::Pluto };
        Ok(Some(self.row_from(&l, &values, kind)))
    }

    /// The core ILP (3): validity (zero distance where `coincident`), the
    /// proximity bound, isl's objectives.
    fn pluto_problem(&mut self, coincident: bool) -> Result<(Problem, Layout)> {
        let mut p = Problem::new();
        let l = self.layout(&mut p, true);
        let deps = self.deps.clone();
        for dep in &deps {
            let Some(f) = self.farkas_of(&dep.relation)? else { continue };
            let slots = self.distance_slots(&l, dep);
            // Zero distance on everything the band has to respect, not only
            // on what its earlier rows left: that is what makes the flag
            // survive tiling (isl's definition).
            Self::add_validity(&mut p, &f, &slots, coincident && self.enforce_coincidence(dep));
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
        p.constraints.extend(self.consecutivity_constraints(&l));
        Ok((p, l))
    }

    /// The lexmin of `p` over the points that are non-trivial for every
    /// member in `need` (see the module comment), or `None` when there is
    /// none. Branch and bound on sign cases, each node solved for the whole
    /// objective vector (the head, then [`tail_objectives`]): a node whose
    /// relaxed optimum is not below the best leaf so far is not explored,
    /// and a node whose optimum is non-trivial everywhere is the optimum of
    /// every case below it. Equal vectors are equal points, so the answer
    /// does not depend on the order of the cases (within the budget).
    fn nontrivial(
        &self,
        solver: &mut Solver,
        p: Problem,
        l: &Layout,
        need: &[usize],
        head: usize,
    ) -> Result<Option<Vec<i64>>> {
        // First the head's optimum alone (cheap nodes, ties pruned), then
        // the rest of the vector with the head pinned there: cases that
        // cannot reach the head's optimum are infeasible at once.
        let (mut root, tail) = self.nontrivial_root(p, l, need, head);
        let mut best: Option<(Vec<i64>, Vec<i64>)> = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), l, need, &mut best, &mut budget)?;
        let Some((optimum, values)) = best else { return Ok(None) };
        if tail.is_empty() {
            return Ok(Some(values));
        }
        for (o, v) in root.objectives.iter().zip(&optimum) {
            root.constraints.push(Constraint { coeffs: o.clone(), constant: -v, relation: Relation::Eq });
        }
        root.objectives = tail;
        let mut best = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), l, need, &mut best, &mut budget)?;
        Ok(best.map(|(_, values)| values))
    }

    /// The root of [`Self::nontrivial`]'s search: `p` with the head of
    /// [`tail_objectives`] and the valid inequality, and the tail apart.
    fn nontrivial_root(&self, p: Problem, l: &Layout, need: &[usize], head: usize) -> (Problem, Vec<Lin>) {
        let mut root = p;
        root.objectives = tail_objectives(&root, head);
        // Valid for every non-trivial point, so that relaxed optima are
        // closer to the leaves below them: a coefficient vector that is zero
        // wherever some basis vector of the orthogonal complement is not
        // lies in the span of the rows so far, so a non-trivial one has a
        // non-zero coefficient there.
        for &k in need {
            let basis = null_space(&self.h[k], self.dims[k]);
            let coeffs: Lin = (0..self.dims[k])
                .filter(|&i| basis.iter().any(|r| r[i] != 0))
                .flat_map(|i| [(l.c_minus[k][i], 1), (l.c_plus[k][i], 1)])
                .collect();
            root.constraints.push(Constraint { coeffs, constant: -1, relation: Relation::Ge });
        }
        let head = head.min(root.objectives.len());
        let tail = root.objectives.split_off(head);
        (root, tail)
    }

    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        solver: &mut Solver,
        root: &Problem,
        extra: Vec<Constraint>,
        l: &Layout,
        need: &[usize],
        best: &mut Option<(Vec<i64>, Vec<i64>)>,
        budget: &mut usize,
    ) -> Result<()> {
        if *budget == 0 {
            return Ok(());
        }
        *budget -= 1;
        let mut q = root.clone();
        q.constraints.extend(extra.iter().cloned());
        // Only a strictly better optimum matters: stopped as soon as the
        // optima so far show it is not.
        let cutoff = best.as_ref().map(|(b, _)| b.as_slice());
        let (values, bound) = match solver.lexmin_below(&q, cutoff)? {
            Some(Outcome::Optimal { values, objective_values }) => (values, objective_values),
            Some(Outcome::Infeasible) | None => return Ok(()),
        };
        let c_of = |k: usize| -> Vec<i64> {
            (0..self.dims[k]).map(|i| values[l.c_plus[k][i]] - values[l.c_minus[k][i]]).collect()
        };
        let trivial = need.iter().copied().find(|&k| {
            let c = c_of(k);
            null_space(&self.h[k], self.dims[k]).iter().all(|r| dot(r, &c) == 0)
        });
        let Some(k) = trivial else {
            *best = Some((bound, values));
            return Ok(());
        };
        let basis = null_space(&self.h[k], self.dims[k]);
        for j in 0..basis.len() {
            for sign in [1, -1] {
                let mut case = extra.clone();
                case.extend(self.sign_case(l, k, &basis, j, sign));
                self.search(solver, root, case, l, need, best, budget)?;
                if best.as_ref().is_some_and(|(b, _)| *b <= bound) {
                    // A leaf attains this node's relaxed optimum, below
                    // every case here: none can do better.
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Sign case `j` of member `k` for the orthogonal-complement `basis` of
    /// its rows so far: `rᵢ·c = 0` for `i < j` and `sign·r_j·c ≥ 1`.
    fn sign_case(&self, l: &Layout, k: usize, basis: &[Vec<i64>], j: usize, sign: i64) -> Vec<Constraint> {
        let r_dot = |r: &[i64]| -> Lin {
            (0..self.dims[k])
                .flat_map(|i| [(l.c_plus[k][i], r[i]), (l.c_minus[k][i], -r[i])])
                .filter(|(_, a)| *a != 0)
                .collect()
        };
        let mut case: Vec<Constraint> = basis[..j]
            .iter()
            .map(|r| Constraint { coeffs: r_dot(r), constant: 0, relation: Relation::Eq })
            .collect();
        let lin: Lin = r_dot(&basis[j]).into_iter().map(|(v, a)| (v, sign * a)).collect();
        case.push(Constraint { coeffs: lin, constant: -1, relation: Relation::Ge });
        case
    }

    fn feautrier_row(&mut self, solver: &mut Solver) -> Result<Row> {
        let mut p = Problem::new();
        let l = self.layout(&mut p, false);
        let deps = self.deps.clone();
        let mut eps = Vec::new();
        for dep in &deps {
            let Some(f) = self.farkas_of(&dep.relation)? else { continue };
            let e = p.add_var(format!("eps.{}", dep.label()), Some(0), Some(1));
            eps.push(e);
            let mut slots = self.distance_slots(&l, dep);
            slots[0].push((e, -1));
            Self::add_farkas(&mut p, &f, &slots, 1);
        }
        // Carry as many groups as possible: minimise Σ(1 − ε), i.e. −Σε.
        p.objectives.push(eps.iter().map(|&e| (e, -1)).collect());
        p.objectives.push(l.d.iter().flatten().map(|&v| (v, 1)).collect());
        p.objectives.push(l.c_minus.iter().chain(&l.c_plus).flatten().map(|&v| (v, 1)).collect());
        self.individual_objectives(&mut p, &l);
        match staged_lexmin(solver, p, 3)? {
            Some(values) => Ok(self.row_from(&l, &values, RowKind::Feautrier)),
            None => Err(ScheduleError::Stuck(format!(
                "group {}: the Feautrier ILP is infeasible (a dependence cycle within one instance?)",
                self.index
            ))),
        }
    }

    fn row_from(&self, l: &Layout, v: &[i64], kind: RowKind) -> Row {
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

    /// Adds a row to the current band, recording what it carries and whether it
    /// is coincident (zero distance on every dependence the band has not carried).
    fn push(&mut self, mut row: Row) -> Result<()> {
        let what = || "classifying a schedule row".to_string();
        let before = self.band.clone();
        let mut coincident = true;
        let deps = self.deps.clone();
        let this = UnionMap::read_from_str(self.ctx, &self.rows_map(std::slice::from_ref(&row))).ctx(what)?;
        let same = this.copy().ctx(what)?.apply_range(this.reverse().ctx(what)?).ctx(what)?;
        let params = Set::read_from_str(self.ctx, &self.scop.context).ctx(what)?;
        for dep in &deps {
            // Coincident: zero distance on every dependence the band must
            // respect (so the flag holds for tile loops too).
            let all = self.parse(&dep.relation)?.intersect_params(params.copy().ctx(what)?).ctx(what)?;
            if !all.copy().ctx(what)?.is_subset(&same).ctx(what)? {
                coincident = false;
            }
            // Carried: every pair the earlier rows of the band left is separated.
            let live = if before.is_empty() {
                all
            } else {
                self.parse(&self.live(dep)?)?.intersect_params(params.copy().ctx(what)?).ctx(what)?
            };
            let zero = live.copy().ctx(what)?.intersect(same.copy().ctx(what)?).ctx(what)?;
            if !live.is_empty().ctx(what)? && zero.is_empty().ctx(what)? {
                row.carries.push(dep.label());
            }
        }
        row.coincident = coincident;
        self.note_inter_consecutivity(&row);
        for (k, (_, c, _, _)) in row.affine.iter().enumerate() {
            if coincident && c.iter().any(|&x| x != 0) {
                if let Some(u) = self.unified.as_mut() {
                    u.has_coincident[k] = true;
                }
            }
            self.h[k].push(c.clone());
        }
        self.band.push(row);
        self.band_changed();
        Ok(())
    }

    /// Ends the current band: dependences it carries are dropped, the rest
    /// keep only the instance pairs it did not separate.
    fn close_band(&mut self) -> Result<()> {
        if self.band.is_empty() {
            return Ok(());
        }
        let what = || "closing a band".to_string();
        let eq = self.band_eq()?;
        let mut kept = Vec::new();
        let params = Set::read_from_str(self.ctx, &self.scop.context).ctx(what)?;
        for dep in std::mem::take(&mut self.deps) {
            let rel = self.parse(&dep.relation)?.intersect(eq.copy().ctx(what)?).ctx(what)?;
            let rel = rel.intersect_params(params.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
            if !rel.is_empty().ctx(what)? {
                kept.push(DepGroup { relation: rel.to_str().ctx(what)?.to_string(), ..dep });
            }
        }
        self.deps = kept;
        // Locality relations the band carried leave the later ILPs too.
        if let Some(mut u) = self.unified.take() {
            for grp in &mut u.groups {
                for rels in [&mut grp.spatial, &mut grp.temporal] {
                    let mut left = Vec::new();
                    for dep in std::mem::take(rels) {
                        let rel = self
                            .parse(&dep.relation)?
                            .intersect(eq.copy().ctx(what)?)
                            .ctx(what)?
                            .coalesce()
                            .ctx(what)?;
                        if !rel.is_empty().ctx(what)? {
                            left.push(DepGroup { relation: rel.to_str().ctx(what)?.to_string(), ..dep });
                        }
                    }
                    *rels = left;
                }
            }
            self.unified = Some(u);
        }
        self.done.append(&mut self.band);
        self.band_changed();
        self.band_index += 1;
        Ok(())
    }
}

/// Lexmins one schedule may spend on the unified scheduler's locality ILPs
/// (4) and (5) (each iterative removal repeats a sign-case search); past it
/// the remaining rows come from the core ILP (3). adi took minutes without it.
const LOCALITY_BUDGET: usize = 150;

/// Every ILP variable is bounded by this: far beyond any sensible schedule
/// coefficient, and it keeps CBC on a box, where it is reliable, with row
/// activities exact in floating point.
const COEFFICIENT_BOUND: i64 = 1 << 12;

/// The objective vector of a row problem whose objectives after the first
/// `head` are single non-negative variables (the individual coefficients):
/// the head, then the sum of the tail variables that no head sum contains
/// (statement constants), then the tail. Other shapes are left as they are.
fn tail_objectives(p: &Problem, head: usize) -> Vec<Lin> {
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

fn lexmin_values(solver: &mut Solver, p: &Problem) -> Result<Option<Vec<i64>>> {
    Ok(match solver.lexmin(p)? {
        Outcome::Optimal { values, .. } => Some(values),
        Outcome::Infeasible => None,
    })
}

fn dot(a: &[i64], b: &[i64]) -> i64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
