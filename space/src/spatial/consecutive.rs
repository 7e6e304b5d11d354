//! Inter-statement consecutivity pairs (consecutivity report §3.2.2,
//! §3.4.3): which instances of two statements touch neighbouring elements,
//! and the affine hull of those pairs, for the unified scheduler's global
//! consecutivity. Built on the tagged accesses of `spatial`.

use std::collections::HashMap;

use isl_rs::{Context, DimType, Map, Schedule, UnionAccessInfo, UnionMap};
use serde::{Deserialize, Serialize};

use super::{pulled_back, references, tagged, tags, untagged, Reference};
use model::isl::{IslError, IslResultExt};
use model::scop::{AccessKind, Scop};

/// Inter-statement consecutivity (consecutivity report §3.2.2, innermost
/// index expression): pairs of instances of two distinct statements whose
/// references of one kind (reads with reads, writes with writes) touch
/// `A[.., y]` and `A[.., y + 1]` with no write to either element between
/// them in the original program, the instance touching `y` first. Only
/// injective references take part: an element touched several times has no
/// single neighbour to pair with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterConsecutive {
    /// Statement touching `y`, statement touching `y + 1`.
    pub first: usize,
    pub next: usize,
    /// The pairs, `{ S[x] -> T[y] }` in isl text.
    pub relation: String,
    /// Equalities of the relation's affine hull, each over `(x, y, the SCoP's
    /// parameters, 1)`: a form vanishes on every pair exactly when it is a
    /// combination of these (§3.4.3).
    pub hull: Vec<Vec<i64>>,
}

pub fn inter_consecutive(ctx: &Context, scop: &Scop) -> Result<Vec<InterConsecutive>, IslError> {
    let what = || "inter-statement consecutivity".to_string();
    let refs = references(ctx, scop)?;
    let schedule = Schedule::read_from_str(ctx, &scop.schedule).ctx(what)?;
    let relation_of = |r: &Reference| {
        let st = &scop.statements[r.stmt];
        st.accesses.iter().find(|a| a.id == r.id).map(|a| a.relation.clone()).unwrap_or_default()
    };
    // Writes to either element cut a pair (kill C ∪ N∘C).
    let mut untag_all = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut writes = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut accesses: Vec<(usize, UnionMap)> = Vec::new();
    for (r, reference) in refs.iter().enumerate() {
        let (access, untag) = tagged(ctx, scop, reference, &relation_of(reference))?;
        if reference.kind != AccessKind::Read {
            writes = writes.union(access.copy().ctx(what)?).ctx(what)?;
        }
        untag_all = untag_all.union(untag).ctx(what)?;
        by_id.insert(reference.id.as_str(), r);
        accesses.push((r, access));
    }
    // N: each element to the next one along the last subscript.
    let mut arrays: Vec<(String, usize)> = Vec::new();
    for reference in &refs {
        let map = Map::read_from_str(ctx, &relation_of(reference)).ctx(what)?;
        let rank = map.dim(DimType::Out).ctx(what)? as usize;
        let name = map.get_tuple_name(DimType::Out).ctx(what)?.to_string();
        if rank > 0 && !arrays.contains(&(name.clone(), rank)) {
            arrays.push((name, rank));
        }
    }
    let mut next = UnionMap::empty_ctx(ctx).ctx(what)?;
    for (name, rank) in &arrays {
        let x: Vec<String> = (0..*rank).map(|k| format!("x{k}")).collect();
        let mut y = x.clone();
        *y.last_mut().unwrap() = format!("{} + 1", x.last().unwrap());
        let text = format!("{{ {name}[{}] -> {name}[{}] }}", x.join(", "), y.join(", "));
        next = next.union(UnionMap::read_from_str(ctx, &text).ctx(what)?).ctx(what)?;
    }
    let kill =
        writes.copy().ctx(what)?.union(writes.apply_range(next.copy().ctx(what)?).ctx(what)?).ctx(what)?;
    let schedule = pulled_back(&schedule, untag_all)?;
    let mut pairs: Vec<InterConsecutive> = Vec::new();
    for kind in [AccessKind::Read, AccessKind::Write] {
        let mut a = UnionMap::empty_ctx(ctx).ctx(what)?;
        for (r, access) in &accesses {
            let reference = &refs[*r];
            let same_kind = (reference.kind == AccessKind::Read) == (kind == AccessKind::Read);
            if same_kind
                && reference.subscripts.as_ref().is_some_and(|s| !s.is_empty())
                && access.is_injective().ctx(what)?
            {
                a = a.union(access.copy().ctx(what)?).ctx(what)?;
            }
        }
        if a.is_empty().ctx(what)? {
            continue;
        }
        let a_next = a.copy().ctx(what)?.apply_range(next.copy().ctx(what)?).ctx(what)?;
        let flow = |sink: &UnionMap, source: &UnionMap| -> Result<UnionMap, IslError> {
            UnionAccessInfo::from_sink(sink.copy().ctx(what)?)
                .ctx(what)?
                .set_may_source(source.copy().ctx(what)?)
                .ctx(what)?
                .set_kill(kill.copy().ctx(what)?)
                .ctx(what)?
                .set_schedule(schedule.copy().ctx(what)?)
                .ctx(what)?
                .compute_flow()
                .ctx(what)?
                .get_may_dependence()
                .ctx(what)
        };
        // Earlier instance on the first element, then the reverse order.
        let forward = flow(&a, &a_next)?;
        let backward = flow(&a_next, &a)?.reverse().ctx(what)?;
        let both = forward.union(backward).ctx(what)?;
        let list = both.get_map_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            let map = list.get_at(i).ctx(what)?;
            let (Some(s), Some(t)) = tags(&map, &by_id)? else { continue };
            let (first, next) = (refs[s].stmt, refs[t].stmt);
            if first == next {
                continue;
            }
            let map = untagged(map)?;
            match pairs.iter_mut().find(|p| (p.first, p.next) == (first, next)) {
                Some(p) => {
                    let m = Map::read_from_str(ctx, &p.relation)
                        .ctx(what)?
                        .union(map)
                        .ctx(what)?
                        .coalesce()
                        .ctx(what)?;
                    p.relation = m.to_str().ctx(what)?.to_string();
                }
                None => pairs.push(InterConsecutive {
                    first,
                    next,
                    relation: map.coalesce().ctx(what)?.to_str().ctx(what)?.to_string(),
                    hull: Vec::new(),
                }),
            }
        }
    }
    for p in &mut pairs {
        p.hull = hull_equalities(ctx, &p.relation, &scop.context)?;
    }
    pairs.sort_by_key(|p| (p.first, p.next));
    Ok(pairs)
}

/// The equalities of the affine hull of a map `{ S[x] -> T[y] }`, as rows
/// over `(x, y, parameters in the order of context, 1)`.
fn hull_equalities(ctx: &Context, relation: &str, context: &str) -> Result<Vec<Vec<i64>>, IslError> {
    let what = || format!("affine hull of {relation}");
    let model = isl_rs::Set::read_from_str(ctx, context).ctx(what)?.get_space().ctx(what)?;
    let hull = Map::read_from_str(ctx, relation)
        .ctx(what)?
        .align_params(model)
        .ctx(what)?
        .remove_divs()
        .ctx(what)?
        .wrap()
        .ctx(what)?
        .affine_hull()
        .ctx(what)?;
    let n = hull.dim(DimType::Set).ctx(what)? as usize;
    let np = hull.dim(DimType::Param).ctx(what)? as usize;
    let cons = hull.get_constraint_list().ctx(what)?;
    let mut rows = Vec::new();
    for k in 0..cons.size().ctx(what)? {
        let c = cons.get_at(k).ctx(what)?;
        if !c.is_equality().ctx(what)? {
            continue;
        }
        let int = |v: isl_rs::Val| v.get_num_si().ctx(what);
        let mut row = Vec::with_capacity(n + np + 1);
        for d in 0..n {
            row.push(int(c.get_coefficient_val(DimType::Set, d as i32).ctx(what)?)?);
        }
        for d in 0..np {
            row.push(int(c.get_coefficient_val(DimType::Param, d as i32).ctx(what)?)?);
        }
        row.push(int(c.get_constant_val().ctx(what)?)?);
        rows.push(row);
    }
    Ok(rows)
}
