//! The independent legality test every schedule passes before code is
//! generated: each validity dependence's sink runs strictly after its source.
//!
//! It reads only the schedule tree and the dependences, never the scheduler's
//! own bookkeeping, so a scheduler bug cannot hide behind it.

use isl_rs::{Context, Schedule, Set, UnionMap, UnionSet};
use serde::{Deserialize, Serialize};

use crate::deps::{DepKind, Dependences};
use crate::isl::{flat_schedule_map, IslError, IslResultExt};

/// A dependence the schedule breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub kind: DepKind,
    pub source: String,
    pub sink: String,
    /// Schedule distances (sink minus source) that are not lexicographically
    /// positive: the dependence runs backwards or at the same time.
    pub bad_distances: String,
}

/// `Ok(vec![])` when legal; otherwise every violated dependence.
/// Checked under the SCoP's parameter `context`.
pub fn violations(
    ctx: &Context,
    context: &str,
    schedule: &str,
    deps: &Dependences,
) -> Result<Vec<Violation>, IslError> {
    let tree = Schedule::read_from_str(ctx, schedule).ctx(|| "reading the schedule tree".into())?;
    let params = Set::read_from_str(ctx, context).ctx(|| "reading the context".into())?;
    let flat = flat_schedule_map(&tree)?;
    let mut out = Vec::new();
    for d in deps.deps.iter().filter(|d| matches!(d.kind, DepKind::Flow | DepKind::War | DepKind::Waw)) {
        let what = || format!("legality of {} {} -> {}", d.kind, d.source, d.sink);
        let rel = UnionMap::read_from_str(ctx, &d.relation)
            .ctx(what)?
            .intersect_params(params.copy().ctx(what)?)
            .ctx(what)?;
        let deltas = distances(rel, &flat).ctx(what)?;
        let depth = first_dim(&deltas).ctx(what)?;
        // Intersect with the complement rather than subtract the positive
        // cone: subtracting from distances with integer divisions (tiled,
        // skewed schedules) makes isl compute explicit divisions by
        // parametric integer programming, which took 16 GB on heat-3d.
        let bad = deltas.intersect(lex_nonpositive(ctx, depth).ctx(what)?).ctx(what)?;
        if !bad.is_empty().ctx(what)? {
            let bad_distances = bad.to_str().ctx(what)?.to_string();
            out.push(Violation {
                kind: d.kind,
                source: d.source.clone(),
                sink: d.sink.clone(),
                bad_distances,
            });
        }
    }
    Ok(out)
}

/// Schedule distances `schedule(sink) − schedule(source)` of a dependence.
fn distances(rel: UnionMap, schedule: &UnionMap) -> Result<UnionSet, isl_rs::LibISLError> {
    rel.apply_domain(schedule.copy()?)?.apply_range(schedule.copy()?)?.deltas()
}

/// The depth of the (single-space) delta set.
fn first_dim(set: &UnionSet) -> Result<u32, isl_rs::LibISLError> {
    let list = set.get_set_list()?;
    if list.size()? == 0 {
        return Ok(0);
    }
    Ok(list.get_at(0)?.dim(isl_rs::DimType::Set)? as u32)
}

/// `{ [d0, ..., dn] : d not lexicographically positive }`: zero, or a
/// first non-zero component that is negative.
fn lex_nonpositive(ctx: &Context, depth: u32) -> Result<UnionSet, isl_rs::LibISLError> {
    let vars: Vec<String> = (0..depth).map(|i| format!("d{i}")).collect();
    let zero = |k: usize| vars[..k].iter().map(|v| format!("{v} = 0")).collect::<Vec<_>>();
    let mut cases: Vec<String> = (0..depth as usize)
        .map(|k| {
            let mut c = zero(k);
            c.push(format!("{} < 0", vars[k]));
            format!("({})", c.join(" and "))
        })
        .collect();
    if depth > 0 {
        cases.push(format!("({})", zero(depth as usize).join(" and ")));
    }
    let cond = if cases.is_empty() { "true".to_string() } else { cases.join(" or ") };
    UnionSet::read_from_str(ctx, &format!("{{ [{}] : {cond} }}", vars.join(", ")))
}

/// Whether a band may be tiled rectangularly: every validity dependence
/// between instances that reach the band and that the outer schedule (`prefix`)
/// does not already separate has a non-negative distance along every member of
/// the band's partial schedule (`band`). Returns the dependences that do not.
///
/// With the schedule itself legal, this is exactly the condition under which
/// tiling the band keeps it legal; it is far cheaper than re-checking the tiled
/// schedule, whose tile dimensions bring integer divisions.
pub fn band_violations(
    ctx: &Context,
    context: &str,
    prefix: &UnionMap,
    band: &UnionMap,
    deps: &Dependences,
) -> Result<Vec<Violation>, IslError> {
    // Bad: some member negative.
    unseparated_violations(ctx, context, prefix, band, deps, |vars| {
        vars.iter().map(|v| format!("{v} < 0")).collect::<Vec<_>>().join(" or ")
    })
}

/// Whether the first member of a band may run in parallel: every validity
/// dependence between instances that reach the band and that the outer
/// schedule (`prefix`) does not separate has distance zero along it. `band`
/// is the band's partial schedule; only its first member is checked.
pub fn parallel_violations(
    ctx: &Context,
    context: &str,
    prefix: &UnionMap,
    band: &UnionMap,
    deps: &Dependences,
) -> Result<Vec<Violation>, IslError> {
    // Bad: the first member non-zero.
    unseparated_violations(ctx, context, prefix, band, deps, |vars| format!("{0} > 0 or {0} < 0", vars[0]))
}

/// Whether a GPU mapping runs every dependence inside one thread: every
/// validity dependence between instances that reach the kernel and that the
/// host loops (`prefix`) do not separate has distance zero along each of
/// `mapped`'s members (an instance's block and thread indices). Threads of
/// a launch run in no order, so any other dependence is a race.
pub fn mapping_violations(
    ctx: &Context,
    context: &str,
    prefix: &UnionMap,
    mapped: &UnionMap,
    deps: &Dependences,
) -> Result<Vec<Violation>, IslError> {
    // Bad: some member non-zero.
    unseparated_violations(ctx, context, prefix, mapped, deps, |vars| {
        vars.iter().map(|v| format!("{v} > 0 or {v} < 0")).collect::<Vec<_>>().join(" or ")
    })
}

/// The validity dependences whose distances along `band`, between instances
/// that reach it and that `prefix` does not separate, fall in the set
/// `{ [d0, ...] : bad(d) }`.
fn unseparated_violations(
    ctx: &Context,
    context: &str,
    prefix: &UnionMap,
    band: &UnionMap,
    deps: &Dependences,
    bad: impl Fn(&[String]) -> String,
) -> Result<Vec<Violation>, IslError> {
    let what = || "distances inside a band".to_string();
    let params = Set::read_from_str(ctx, context).ctx(what)?;
    let reach = band.copy().ctx(what)?.domain().ctx(what)?;
    let same_prefix =
        prefix.copy().ctx(what)?.apply_range(prefix.copy().ctx(what)?.reverse().ctx(what)?).ctx(what)?;
    let mut out = Vec::new();
    for d in deps.deps.iter().filter(|d| matches!(d.kind, DepKind::Flow | DepKind::War | DepKind::Waw)) {
        let rel = UnionMap::read_from_str(ctx, &d.relation)
            .ctx(what)?
            .intersect_params(params.copy().ctx(what)?)
            .ctx(what)?
            .intersect_domain(reach.copy().ctx(what)?)
            .ctx(what)?
            .intersect_range(reach.copy().ctx(what)?)
            .ctx(what)?
            .intersect(same_prefix.copy().ctx(what)?)
            .ctx(what)?;
        if rel.is_empty().ctx(what)? {
            continue;
        }
        let deltas = distances(rel, band).ctx(what)?;
        let list = deltas.get_set_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            let set = list.get_at(i).ctx(what)?.reset_tuple_id().ctx(what)?;
            let n = set.dim(isl_rs::DimType::Set).ctx(what)?;
            if n == 0 {
                continue;
            }
            let vars: Vec<String> = (0..n).map(|k| format!("d{k}")).collect();
            let bad_set = Set::read_from_str(ctx, &format!("{{ [{}] : {} }}", vars.join(", "), bad(&vars)))
                .ctx(what)?;
            let found = set.intersect(bad_set).ctx(what)?;
            if !found.is_empty().ctx(what)? {
                let bad_distances = found.to_str().ctx(what)?.to_string();
                out.push(Violation {
                    kind: d.kind,
                    source: d.source.clone(),
                    sink: d.sink.clone(),
                    bad_distances,
                });
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::new_context;

    fn flow(relation: &str) -> Dependences {
        Dependences {
            deps: vec![crate::deps::Dependence {
                kind: DepKind::Flow,
                source: "ref0".into(),
                sink: "ref1".into(),
                array: "A".into(),
                relation: relation.into(),
            }],
            notes: Vec::new(),
        }
    }

    /// Forward, backward and simultaneous distances, also through the integer
    /// divisions of a tiled schedule (where the tile loop alone does not
    /// order two instances of one tile and the point loop must).
    #[test]
    fn violations_are_the_non_positive_distances() {
        let ctx = new_context();
        let deps = flow("[n] -> { S[i] -> S[i + 1] : 0 <= i < n - 1 }");
        let verdict =
            |schedule: &str| violations(&ctx, "[n] -> { : n >= 4 }", schedule, &deps).unwrap().len();
        let domain = "domain: \"[n] -> { S[i] : 0 <= i < n }\"";
        assert_eq!(
            verdict(&format!("{{ {domain}, child: {{ schedule: \"[n] -> [{{ S[i] -> [(i)] }}]\" }} }}")),
            0
        );
        assert_eq!(
            verdict(&format!("{{ {domain}, child: {{ schedule: \"[n] -> [{{ S[i] -> [(-i)] }}]\" }} }}")),
            1
        );
        assert_eq!(
            verdict(&format!("{{ {domain}, child: {{ schedule: \"[n] -> [{{ S[i] -> [(0)] }}]\" }} }}")),
            1
        );
        let tiled = |point: &str| {
            format!(
                "{{ {domain}, child: {{ schedule: \"[n] -> [{{ S[i] -> [(4*floor(i/4))] }}, {{ S[i] -> [({point})] }}]\" }} }}"
            )
        };
        assert_eq!(verdict(&tiled("i - 4*floor(i/4)")), 0);
        assert_eq!(verdict(&tiled("4*floor(i/4) - i")), 1);
    }
}
