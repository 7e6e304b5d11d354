//! Row-by-row construction of permutable bands for each fusion group
//! (RR-9110 §2–3, Pluto): [`schedule`] checks the fusion preorder, then
//! for each group asks a [`RowStrategy`] for rows until every statement has
//! a full-rank schedule and every dependence is carried; a band is closed
//! when no row fits, a Feautrier row is taken when a band would be empty.
//!
//! The rest of the driver, by concern (all `impl Group` or on its data):
//! - `solver`: the lexmin wrapper (backend, cross-check);
//! - `constraints`: one row's ILPs (the core ILP (3), Feautrier's) on
//!   Farkas constraints, their variables and objectives;
//! - `nontrivial`: linear independence, by branch and bound on sign cases;
//! - `band`: what a row carries, closing a band, isl work kept per band;
//! - `unified`: the unified scheduler's strategy (RR-9110 §4), a
//!   [`RowStrategy`] with state of its own; [`Core`](super::group::Core) is the core rule.

use std::collections::HashMap;

use isl_rs::{Context, UnionMap};

use super::constraints::PREFIX;
use super::group::{Core, DepGroup, Group, Next, Result, RowStrategy};
use super::ilp::{self, memo::Memo};
use super::nontrivial::SEARCH_BUDGET;
use super::solver::Solver;
use super::unified::{place_thread_x, thread_mapping, Unified};
use super::{tree, CoreOptions, CoreSchedule, Fusion, Row, ScheduleError};
use crate::spatial;
use model::deps::{DepKind, Dependences};
use model::isl::{new_context, IslResultExt};
use model::scop::Scop;
use vocab::knobs::{Spatial, Target};
use vocab::preorder::Preorder;

pub(super) fn schedule(
    scop: &Scop,
    deps: &Dependences,
    opts: &CoreOptions,
    memo: Option<&dyn Memo>,
) -> Result<CoreSchedule> {
    let ctx = new_context();
    let solves_before = ilp::solves();
    let stated = super::order::with_stated_order(&ctx, scop, deps)?;
    let deps = &stated;
    let all = dep_groups(&ctx, scop, deps)?;
    let mut solver = Solver {
        backend: opts.backend,
        cross_check: opts.cross_check,
        memo,
        lexmins: 0,
        remembered: 0,
        checked: 0,
        unchecked: 0,
    };
    let preorder = match &opts.fusion {
        Fusion::Original => scop.original_preorder(),
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
        Some(k) if k.global_consecutivity => spatial::inter_consecutive(&ctx, scop)?,
        _ => Vec::new(),
    };
    let mut rows = Vec::new();
    let mut mapping = Vec::new();
    let mut notes = Vec::new();
    for (g, members) in preorder.0.iter().enumerate() {
        let inside: Vec<DepGroup> =
            all.iter().filter(|d| members.contains(&d.src) && members.contains(&d.dst)).cloned().collect();
        let mut group = Group::new(&ctx, scop, g, members.clone(), inside.clone());
        let mut group_rows = match &opts.knobs {
            Some(knobs) => {
                let mut unified = Unified::new(scop, knobs, &references, locality.as_ref(), &inter, members);
                match group.run(&mut unified, &mut solver) {
                    // Spatial proximity is a preference: where the rows it
                    // chose leave no row that carries the rest (random
                    // program 428), the group is scheduled without it.
                    Err(ScheduleError::Stuck(why)) if locality.is_some() => {
                        notes.push(format!("scheduled without spatial proximity: with it, {why}"));
                        let mut group = Group::new(&ctx, scop, g, members.clone(), inside);
                        let mut plain = Unified::new(scop, knobs, &references, None, &inter, members);
                        group.run(&mut plain, &mut solver)?
                    }
                    rows => rows?,
                }
            }
            None => group.run(&mut Core, &mut solver)?,
        };
        if opts.knobs.as_ref().is_some_and(|k| k.target == Target::Gpu) {
            place_thread_x(&mut group_rows);
            mapping.extend(thread_mapping(g, &group_rows));
        }
        rows.extend(group_rows);
    }
    let tree = tree::build(scop, &preorder, &rows);
    let violations = model::legality::violations(&ctx, &scop.context, &tree, deps)?;
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
        remembered: solver.remembered,
        ilps: ilp::solves() - solves_before,
        cross_checked: solver.checked,
        cross_unchecked: solver.unchecked,
        mapping,
        notes,
    })
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
    let original = scop.original_preorder();
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

impl Group<'_> {
    fn run(&mut self, strategy: &mut impl RowStrategy, solver: &mut Solver) -> Result<Vec<Row>> {
        let mut first = true;
        loop {
            let need = self.need();
            if need.is_empty() && self.deps.is_empty() {
                self.close_band(strategy, solver)?;
                return Ok(std::mem::take(&mut self.done));
            }
            if need.is_empty() && !self.band.is_empty() {
                self.close_band(strategy, solver)?;
                continue;
            }
            let mut feautrier = false;
            if !need.is_empty() {
                match strategy.next_row(self, solver, &need)? {
                    Next::Row(row) => {
                        self.push(strategy, row)?;
                        first = false;
                        continue;
                    }
                    Next::Feautrier => feautrier = true,
                    Next::Split(phases) => {
                        // A band of its own: the sequence, then each
                        // phase's rows (only its own dependences left).
                        self.close_band(strategy, solver)?;
                        let row = self.split_row(&phases);
                        self.push(strategy, row)?;
                        self.close_band(strategy, solver)?;
                        first = false;
                        continue;
                    }
                    Next::None => {}
                }
                if !feautrier && !self.band.is_empty() {
                    self.close_band(strategy, solver)?;
                    continue;
                }
                if !feautrier && first && self.members.len() > 1 {
                    return Err(ScheduleError::IllegalPreorder {
                        preorder: Preorder(vec![self.members.clone()]).display(),
                        reason: "its statements admit no shared outer loop".into(),
                    });
                }
            }
            self.close_band(strategy, solver)?;
            let row = self.feautrier_row(solver, strategy.carry_self_first())?;
            self.push(strategy, row)?;
            // A Feautrier row the strategy asked for (GPU, hlim) that
            // carries nothing: dropped, and not asked for again.
            if feautrier
                && self.band.last().is_some_and(|r| r.carries.is_empty())
                && strategy.drop_useless_feautrier()
            {
                self.band.pop();
                self.band_changed();
                for h in &mut self.h {
                    h.pop();
                }
                continue;
            }
            if self.band.last().is_some_and(|r| r.carries.is_empty()) {
                return Err(ScheduleError::Stuck(format!(
                    "group {}: no row carries any of {} remaining dependence groups",
                    self.index,
                    self.deps.len()
                )));
            }
            self.close_band(strategy, solver)?;
            first = false;
        }
    }

    /// Adds a row to the current band, recording what it carries and whether
    /// it is coincident; the strategy sees it before the group holds it.
    pub(super) fn push(&mut self, strategy: &mut impl RowStrategy, row: Row) -> Result<()> {
        let row = self.classify(row)?;
        strategy.row_pushed(self, &row);
        self.add_to_band(row);
        Ok(())
    }

    /// Ends the current band: dependences it carries are dropped, the rest
    /// keep only the instance pairs it did not separate; the strategy cuts
    /// its own relations down the same way.
    fn close_band(&mut self, strategy: &mut impl RowStrategy, solver: &mut Solver) -> Result<()> {
        if self.band.is_empty() {
            return Ok(());
        }
        if strategy.diamond() {
            self.diamond(strategy, solver)?;
        }
        let eq = self.band_eq()?;
        self.keep_uncarried(&eq)?;
        strategy.band_closing(self, &eq)?;
        self.end_band();
        Ok(())
    }

    /// Whether the first row of this group can be a loop shared by all members.
    fn shared_outer_loop(&mut self, solver: &mut Solver) -> Result<bool> {
        let need = self.need();
        let (p, l) = self.pluto_problem(&Core, false)?;
        // Any non-trivial row will do: the head's search decides, and the
        // rest of the objective vector (hundreds of objectives on a merged
        // group, most of deriche's time under maximal fusion) is not needed.
        let (root, _) = self.nontrivial_root(p, &l, &need, PREFIX);
        let mut best = None;
        let mut budget = SEARCH_BUDGET;
        self.search(solver, &root, Vec::new(), &l, &need, &mut best, &mut budget)?;
        Ok(best.is_some())
    }
}
