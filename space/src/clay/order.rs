//! Whether two schedules run every pair of instances in the same order.

use isl_rs::{Context, Schedule, UnionMap, UnionSet};

use model::isl::{flat_schedule_map, IslError, IslResultExt};
use model::scop::Scop;

/// `{ a -> b : a runs before b }` under the schedule `map` (dates compared
/// lexicographically), for instances of `domain`.
fn before(map: UnionMap, domain: &UnionSet) -> Result<UnionMap, IslError> {
    let what = || "ordering the instances".to_string();
    let map = map.intersect_domain(domain.copy().ctx(what)?).ctx(what)?;
    map.copy().ctx(what)?.lex_lt_union_map(map).ctx(what)
}

fn before_of(ctx: &Context, scop: &Scop, map: &str) -> Result<UnionMap, IslError> {
    let what = || "comparing two schedules".to_string();
    let domain = UnionSet::read_from_str(ctx, &scop.domain()).ctx(what)?;
    before(UnionMap::read_from_str(ctx, map).ctx(what)?, &domain)
}

/// True when the union maps `a` and `b` (isl text, `S[i] -> [dates]`) order every pair of
/// `scop`'s instances alike: the same "runs before" relation.
pub fn same_order(ctx: &Context, scop: &Scop, a: &str, b: &str) -> Result<bool, IslError> {
    before_of(ctx, scop, a)?.is_equal(&before_of(ctx, scop, b)?).ctx(|| "comparing two schedules".into())
}

/// True when `a` runs before each other every pair of instances that `b` does (it may also
/// order pairs to which `b` gives one date: a tree orders such instances, which share no
/// dependence, only in the code it generates).
pub fn refines(ctx: &Context, scop: &Scop, a: &str, b: &str) -> Result<bool, IslError> {
    before_of(ctx, scop, b)?.is_subset(&before_of(ctx, scop, a)?).ctx(|| "comparing two schedules".into())
}

/// The flat map of a schedule tree (isl text), for [`same_order`].
pub fn tree_map(ctx: &Context, tree: &str) -> Result<String, IslError> {
    let what = || "flattening a schedule tree".to_string();
    let schedule = Schedule::read_from_str(ctx, tree).ctx(what)?;
    Ok(flat_schedule_map(&schedule)?.to_str().ctx(what)?.to_string())
}
