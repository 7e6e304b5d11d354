//! The unified scheduler's strategy (RR-9110 §4) on top of the core driver:
//! ILP (4) (carry as few spatial groups as possible, temporal bound before
//! spatial, iterative removal of the first carried group) on each row and
//! ILP (5) (carry as many as possible, coefficient sum first) on the last,
//! isl's dimension slack, a single degree of parallelism on CPU, the GPU
//! strategy with its thread mapping (§4.8), hlim, and global consecutivity
//! (consecutivity report §3: intra-statement, then inter-statement pairs).
//! Its state for one fusion group is a [`Unified`], which the driver
//! receives as its [`RowStrategy`].

use isl_rs::UnionMap;

use super::constraints::COEFFICIENT_BOUND;
use super::group::{DepGroup, Group, Layout, Lin, Next, Result, RowStrategy};
use super::ilp::{Constraint, Problem, Relation};
use super::solver::Solver;
use super::{Row, RowKind, ThreadMapping};
use crate::linalg::{dot, null_space, rank};
use crate::spatial::{self, InterConsecutive, Locality, Reference};
use model::isl::IslResultExt;
use model::scop::Scop;
use vocab::knobs::{Feautrier, SchedulerOptions, Spatial, Target};

/// Lexmins one schedule may spend on the unified scheduler's locality ILPs
/// (4) and (5) (each iterative removal repeats a sign-case search); past it
/// the remaining rows come from the core ILP (3). adi took minutes without it.
const LOCALITY_BUDGET: usize = 150;

/// How far below zero (5) lets the distance of a spatial group it does not
/// carry go: the `M` of `distance ≥ e − M(1 − e)`.
const UNCARRIED_BOUND: i64 = COEFFICIENT_BOUND;

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
pub(super) struct Unified {
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
    pub(super) fn new(
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
                if !knobs.global_consecutivity {
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
            knobs: *knobs,
            references: references.to_vec(),
            groups,
            inter_failed: vec![false; inter.len()],
            inter,
            pressure: spatial::register_pressure(scop, references, members),
            consec,
            has_coincident: vec![false; members.len()],
            spatial_done: false,
            consec_on: knobs.global_consecutivity,
            feautrier_useless: false,
        }
    }

    fn spatial_on(&self) -> bool {
        self.knobs.spatial != Spatial::Off
    }

    /// The strategy for the unified scheduler's target (§4.7, §4.8), with
    /// the consecutivity constraints as `consec_on` says.
    fn strategy(&mut self, group: &mut Group, solver: &mut Solver, need: &[usize]) -> Result<Next> {
        let (target, hlim, pressure) = (self.knobs.target, self.knobs.hlim, self.pressure);
        let spatial_on = self.spatial_on();
        let feautrier_ok = !group.deps.is_empty() && !self.feautrier_useless;
        if !spatial_on {
            // The core ILP (3), with hlim and consecutivity.
            if target != Target::Seq {
                if let Some(row) = group.pluto_row(solver, &*self, need, true)? {
                    return Ok(Next::Row(row));
                }
                if group.band.is_empty() && feautrier_ok && hlim.is_some_and(|h| pressure > h) {
                    return Ok(Next::Feautrier);
                }
            }
            return Ok(group.pluto_row(solver, &*self, need, false)?.map_or(Next::None, Next::Row));
        }
        if solver.lexmins > LOCALITY_BUDGET {
            // Past the budget the locality ILPs give way to the core (3).
            if target != Target::Seq {
                if let Some(row) = group.pluto_row(solver, &*self, need, true)? {
                    return Ok(Next::Row(row));
                }
            }
            return Ok(group.pluto_row(solver, &*self, need, false)?.map_or(Next::None, Next::Row));
        }
        // Dimension slack: only members that need a row at every remaining
        // step must get a non-trivial one now.
        let left = group.rows_left();
        let tight = group.tight(need);
        if target == Target::Gpu {
            if !self.spatial_done {
                // (5) with coincidence enforced, non-trivial for every
                // member that needs a row if it can be, else for those that
                // need one at every step left; once it carries spatial
                // proximity, or a coincident solution carries none (then
                // discarded for (3)), spatial proximity is relaxed. Without a
                // coincident solution: the phases of the dependences in
                // sequence when there are several (as isl splits), else a
                // Feautrier row; then (5) again.
                let mut coincident = self.spatial_row(group, solver, need, true)?;
                if coincident.is_none() && tight.len() < need.len() {
                    coincident = self.spatial_row(group, solver, &tight, true)?;
                }
                match coincident {
                    Some(row) => {
                        self.spatial_done = true;
                        if !row.spatial.is_empty() {
                            return Ok(Next::Row(row));
                        }
                    }
                    None => {
                        if group.band.is_empty() {
                            if let Some(phases) = group.phases(solver)? {
                                return Ok(Next::Split(phases));
                            }
                        }
                        if feautrier_ok {
                            return Ok(Next::Feautrier);
                        }
                        self.spatial_done = true;
                    }
                }
            }
            if let Some(row) = group.pluto_row(solver, &*self, need, true)? {
                return Ok(Next::Row(row));
            }
            return Ok(group.pluto_row(solver, &*self, need, false)?.map_or(Next::None, Next::Row));
        }
        // CPU (§4.7): (5) on the last row, (4) elsewhere.
        if left == 1 {
            if let Some(row) = self.spatial_row(group, solver, need, false)? {
                if !row.spatial.is_empty() {
                    return Ok(Next::Row(row));
                }
            }
        }
        let pending = group
            .deps
            .iter()
            .any(|d| !self.has_coincident[group.pos(d.src)] || !self.has_coincident[group.pos(d.dst)]);
        if target == Target::Openmp && left > 2 && pending {
            if let Some(row) = self.locality_row(group, solver, &tight, true)? {
                return Ok(Next::Row(row));
            }
            if group.band.is_empty() && feautrier_ok && hlim.is_some_and(|h| pressure > h) {
                return Ok(Next::Feautrier);
            }
        }
        Ok(self.locality_row(group, solver, &tight, false)?.map_or(Next::None, Next::Row))
    }

    /// Consecutivity report §3 (intra-statement, f = 1), on the linear part
    /// `T` of each member's schedule: every row but its last has `c·v = 0`
    /// and its last `c·v = h·v`, so the last loop advances the last subscript
    /// by one and leaves the others.
    fn consecutivity_constraints(&self, group: &Group, l: &Layout) -> Vec<Constraint> {
        if !self.consec_on {
            return Vec::new();
        }
        let left = group.rows_left();
        let mut out = Vec::new();
        for (k, c) in self.consec.iter().enumerate() {
            let Some((v, hv)) = c else { continue };
            let remaining = group.dims[k] - rank(&group.h[k], group.dims[k]);
            if remaining == 0 {
                continue;
            }
            let coeffs: Lin = (0..group.dims[k])
                .flat_map(|i| [(l.c_plus[k][i], v[i]), (l.c_minus[k][i], -v[i])])
                .filter(|(_, a)| *a != 0)
                .collect();
            let constant = if remaining == 1 && remaining == left { -hv } else { 0 };
            out.push(Constraint { coeffs, constant, relation: Relation::Eq });
        }
        // Inter-statement: distance 0 on the pairs while both statements are
        // on rows before their consecutive one, 1 on that row (the same for
        // both, else the constraint has failed and is left out), nothing after.
        for (n, (j, k, complement)) in self.inter.iter().enumerate() {
            let Some(v) = self.inter_distance(group, n) else { continue };
            let (nj, nk) = (group.dims[*j], group.dims[*k]);
            for q in complement {
                let mut coeffs: Lin = Vec::new();
                for (i, &qi) in q[..nj].iter().enumerate() {
                    coeffs.extend([(l.c_plus[*j][i], -qi), (l.c_minus[*j][i], qi)]);
                }
                for i in 0..nk {
                    coeffs.extend([(l.c_plus[*k][i], q[nj + i]), (l.c_minus[*k][i], -q[nj + i])]);
                }
                for p in 0..group.np {
                    coeffs.extend([(l.d[*k][p], q[nj + nk + p]), (l.d[*j][p], -q[nj + nk + p])]);
                }
                let c = q[nj + nk + group.np];
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
    fn inter_distance(&self, group: &Group, n: usize) -> Option<i64> {
        if self.inter_failed[n] {
            return None;
        }
        let (j, k, _) = &self.inter[n];
        let left = group.rows_left();
        let last = |m: usize| {
            let remaining = group.dims[m] - rank(&group.h[m], group.dims[m]);
            (self.consec[m].is_some() && remaining > 0).then_some(remaining == 1 && remaining == left)
        };
        let (last_j, last_k) = (last(*j)?, last(*k)?);
        // Consecutive rows at different depths: (29) cannot hold.
        (last_j == last_k).then_some(last_j as i64)
    }

    /// Gives up the inter-statement pairs that `row` (about to be pushed)
    /// does not satisfy: one row off its distance and (29) is lost.
    fn note_inter_consecutivity(&mut self, group: &Group, row: &Row) {
        let mut failed = Vec::new();
        for (n, (j, k, complement)) in self.inter.iter().enumerate() {
            let open =
                |m: usize| self.consec[m].is_some() && group.dims[m] > rank(&group.h[m], group.dims[m]);
            if self.inter_failed[n] || !open(*j) || !open(*k) {
                continue;
            }
            let ok = self.inter_distance(group, n).is_some_and(|v| {
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
        for n in failed {
            self.inter_failed[n] = true;
        }
    }

    /// Active locality groups in ILP order (§4.5): decreasing access rank,
    /// then multiplicity, so that the most promising are carried last.
    fn group_order(&self, group: &Group) -> Vec<usize> {
        let mut keyed: Vec<(usize, usize, usize)> = self
            .groups
            .iter()
            .enumerate()
            .map(|(g, grp)| {
                let rank = grp
                    .refs
                    .iter()
                    .map(|&r| {
                        let reference = &self.references[r];
                        match group.members.iter().position(|&m| m == reference.stmt) {
                            Some(k) => spatial::access_rank(reference, &group.h[k], group.dims[k]),
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
        group: &mut Group,
        solver: &mut Solver,
        tight: &[usize],
        coincident: bool,
    ) -> Result<Option<Row>> {
        let mut removed: Vec<String> = Vec::new();
        loop {
            if solver.lexmins > LOCALITY_BUDGET {
                return group.pluto_row(solver, &*self, tight, coincident);
            }
            let mut p = Problem::new();
            let l = group.layout(&mut p, false);
            let deps = group.deps.clone();
            for dep in &deps {
                let Some(f) = group.farkas_of(&dep.relation)? else { continue };
                let slots = group.distance_slots(&l, dep);
                Group::add_validity(&mut p, &f, &slots, coincident && self.enforce_coincidence(group, dep));
            }
            let mut prefix: Vec<Lin> = Vec::new();
            let mut spatial_bounds: Vec<(usize, Vec<usize>)> = Vec::new();
            let b = Some(COEFFICIENT_BOUND);
            for g in self.group_order(group) {
                let grp = self.groups[g].clone();
                for (rels, is_spatial) in [(&grp.temporal, false), (&grp.spatial, true)] {
                    if rels.is_empty() || (is_spatial && !grp.active) {
                        continue;
                    }
                    let tag = if is_spatial { "S" } else { "T" };
                    let um: Vec<usize> =
                        (0..group.np).map(|i| p.add_var(format!("{tag}{g}.u-{i}"), Some(0), b)).collect();
                    let up: Vec<usize> =
                        (0..group.np).map(|i| p.add_var(format!("{tag}{g}.u+{i}"), Some(0), b)).collect();
                    let w = p.add_var(format!("{tag}{g}.w"), Some(0), b);
                    for rel in rels {
                        // Relations the band's earlier rows carry are out (§4.4).
                        let live = group.live(rel)?;
                        let Some(f) = group.farkas_of(&live)? else { continue };
                        let slots = group.distance_slots(&l, rel);
                        for sign in [1, -1] {
                            // u·p + w − sign·distance ≥ 0
                            let mut bound: Vec<Lin> = slots
                                .iter()
                                .map(|s| s.iter().map(|(v, k)| (*v, -sign * k)).collect())
                                .collect();
                            bound[0].push((w, 1));
                            for i in 0..group.np {
                                bound[1 + i].push((up[i], 1));
                                bound[1 + i].push((um[i], -1));
                            }
                            Group::add_farkas(&mut p, &f, &bound, 1);
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
            group.individual_objectives(&mut p, &l);
            p.constraints.extend(self.consecutivity_constraints(group, &l));
            let Some(values) = group.nontrivial(solver, p, &l, tight, n_prefix)? else {
                if removed.is_empty() && spatial_bounds.is_empty() {
                    return Ok(None);
                }
                // Bounds that no schedule meets: fall back to the core ILP (3).
                return group.pluto_row(solver, &*self, tight, coincident);
            };
            let carried = spatial_bounds.iter().find(|(_, vars)| vars.iter().any(|&v| values[v] != 0));
            if let Some((g, _)) = carried {
                self.groups[*g].active = false;
                removed.push(self.groups[*g].label.clone());
                continue;
            }
            let kind = if coincident { RowKind::Coincident } else { RowKind::Pluto };
            let mut row = group.row_from(&l, &values, kind);
            row.spatial = removed;
            return Ok(Some(row));
        }
    }

    /// RR-9110 (5): validity as in (3) (so the row stays in the permutable
    /// band); minimise the coefficient sum first (discourages skew), then the
    /// number of active spatial groups not carried; non-triviality for every
    /// member that needs a row, slack or not.
    fn spatial_row(
        &mut self,
        group: &mut Group,
        solver: &mut Solver,
        need: &[usize],
        coincident: bool,
    ) -> Result<Option<Row>> {
        let mut p = Problem::new();
        let l = group.layout(&mut p, false);
        let deps = group.deps.clone();
        for dep in &deps {
            let Some(f) = group.farkas_of(&dep.relation)? else { continue };
            let slots = group.distance_slots(&l, dep);
            Group::add_validity(&mut p, &f, &slots, coincident && self.enforce_coincidence(group, dep));
        }
        let groups = self.groups.clone();
        let mut eps: Vec<(usize, usize)> = Vec::new();
        // `distance ≥ e − M(1 − e)`: a carried group (e = 1) has every
        // distance at least one; one left uncarried only a distance bounded
        // below, not ordered (proximity does not order, as in (4)). With
        // `distance ≥ e` alone, fdtd-2d's hz group (S4 after S3 on one line)
        // forced its last row to `15*t + j`.
        let one = p.add_var("one".to_string(), Some(1), Some(1));
        for (g, grp) in groups.iter().enumerate().filter(|(_, g)| g.active && !g.spatial.is_empty()) {
            let e = p.add_var(format!("eps.{g}"), Some(0), Some(1));
            eps.push((g, e));
            for rel in &grp.spatial {
                let Some(f) = group.farkas_of(&rel.relation)? else { continue };
                let mut slots = group.distance_slots(&l, rel);
                slots[0].extend([(one, UNCARRIED_BOUND), (e, -1 - UNCARRIED_BOUND)]);
                Group::add_farkas(&mut p, &f, &slots, 1);
            }
        }
        if eps.is_empty() {
            return Ok(None);
        }
        p.objectives.push(l.c_minus.iter().chain(&l.c_plus).flatten().map(|&v| (v, 1)).collect());
        p.objectives.push(eps.iter().map(|&(_, e)| (e, -1)).collect());
        p.objectives.push(l.d.iter().flatten().map(|&v| (v, 1)).collect());
        group.individual_objectives(&mut p, &l);
        p.constraints.extend(self.consecutivity_constraints(group, &l));
        let Some(values) = group.nontrivial(solver, p, &l, need, 3)? else { return Ok(None) };
        let mut row = group.row_from(&l, &values, RowKind::Spatial);
        for &(g, e) in &eps {
            if values[e] == 1 {
                self.groups[g].active = false;
                row.spatial.push(self.groups[g].label.clone());
            }
        }
        Ok(Some(row))
    }
}

impl RowStrategy for Unified {
    /// Consecutivity constraints are optional: the whole strategy with them
    /// first, then without.
    fn next_row(&mut self, group: &mut Group, solver: &mut Solver, need: &[usize]) -> Result<Next> {
        if self.consec.iter().any(|c| c.is_some()) {
            self.consec_on = true;
            let next = self.strategy(group, solver, need);
            self.consec_on = false;
            if let Next::Row(row) = next? {
                return Ok(Next::Row(row));
            }
            // Intra-statement constraints alone: the inter-statement pairs
            // could not be met with them and are given up for good.
            if self.inter_failed.iter().any(|f| !f) {
                self.inter_failed.iter_mut().for_each(|f| *f = true);
                self.consec_on = true;
                let next = self.strategy(group, solver, need);
                self.consec_on = false;
                if let Next::Row(row) = next? {
                    return Ok(Next::Row(row));
                }
            }
        }
        self.strategy(group, solver, need)
    }

    fn row_constraints(&self, group: &Group, l: &Layout) -> Vec<Constraint> {
        self.consecutivity_constraints(group, l)
    }

    /// Whether the coincidence relation of `dep` is still enforced (§4.7: it is
    /// relaxed for statements that already have a coincident row).
    fn enforce_coincidence(&self, group: &Group, dep: &DepGroup) -> bool {
        if self.spatial_on() && self.knobs.target != Target::Gpu {
            !(self.has_coincident[group.pos(dep.src)] && self.has_coincident[group.pos(dep.dst)])
        } else {
            true
        }
    }

    /// Inter-statement pairs the row breaks are given up; members with a
    /// non-zero coefficient on a coincident row have their parallelism.
    fn row_pushed(&mut self, group: &Group, row: &Row) {
        self.note_inter_consecutivity(group, row);
        for (k, (_, c, _, _)) in row.affine.iter().enumerate() {
            if row.coincident && c.iter().any(|&x| x != 0) {
                self.has_coincident[k] = true;
            }
        }
    }

    /// Locality relations the band carried leave the later ILPs too.
    fn band_closing(&mut self, group: &Group, eq: &UnionMap) -> Result<()> {
        let what = || "closing a band".to_string();
        for grp in &mut self.groups {
            for rels in [&mut grp.spatial, &mut grp.temporal] {
                let mut left = Vec::new();
                for dep in std::mem::take(rels) {
                    let rel = group
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
        Ok(())
    }

    /// Once: the row is dropped and a Feautrier row not asked for again
    /// (nor, on GPU, the spatial ILP (5) that led to it).
    fn drop_useless_feautrier(&mut self) -> bool {
        if self.feautrier_useless {
            return false;
        }
        self.feautrier_useless = true;
        self.spatial_done = true;
        true
    }

    fn carry_self_first(&self) -> bool {
        self.knobs.feautrier == Feautrier::SelfFirst
    }

    /// On CPUs: a GPU band's rows are mapped to threads, not tiled in time.
    fn diamond(&self) -> bool {
        self.knobs.diamond && self.knobs.target != Target::Gpu
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
    refs.sort_by_key(|r| r.kind != model::scop::AccessKind::Write);
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

/// RR-9110 §4.8 for code generation, which maps the innermost of the first
/// three members of a band's first run of coincident members to thread `x`
/// (`codegen::gpu`): the row of that run that carries spatial
/// proximity is moved there, in the outermost band with coincident rows.
/// Rows of such a run permute freely: each has distance zero on every
/// dependence the rows before the run leave, so none carries one the
/// others see.
pub(super) fn place_thread_x(rows: &mut [Row]) {
    let Some(band) = rows.iter().find(|r| r.coincident).map(|r| r.band) else { return };
    let Some(first) = rows.iter().position(|r| r.band == band && r.coincident) else { return };
    let run = rows[first..].iter().take_while(|r| r.band == band && r.coincident).count();
    let Some(x) = thread_x(rows[first..first + run].iter()) else { return };
    let target = run.min(3) - 1;
    match x.cmp(&target) {
        std::cmp::Ordering::Less => rows[first + x..=first + target].rotate_left(1),
        std::cmp::Ordering::Greater => rows[first + target..=first + x].rotate_right(1),
        std::cmp::Ordering::Equal => {}
    }
}

/// Which of `rows` (coincident) goes to thread `x`: the one that carries
/// the most spatial-proximity groups (the most references coalesced), the
/// later on ties; `None` when none carries any.
fn thread_x<'r>(rows: impl Iterator<Item = &'r Row>) -> Option<usize> {
    let best =
        rows.enumerate().filter(|(_, r)| !r.spatial.is_empty()).max_by_key(|(i, r)| (r.spatial.len(), *i));
    best.map(|(i, _)| i)
}

/// RR-9110 §4.8: in the outermost band with coincident rows, the coincident
/// row that carries spatial proximity ([`thread_x`]) is mapped to thread
/// `x`; the other coincident rows (at most three in all) to `z, y, x` in order.
pub(super) fn thread_mapping(group: usize, rows: &[Row]) -> Option<ThreadMapping> {
    let band = rows.iter().find(|r| r.coincident)?.band;
    let coincident: Vec<(usize, &Row)> =
        rows.iter().filter(|r| r.band == band).enumerate().filter(|(_, r)| r.coincident).collect();
    let spatial = thread_x(coincident.iter().map(|(_, r)| *r)).map(|k| coincident[k].0);
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
