//! Reference schedules every campaign compares against: the original program
//! order and isl's own scheduler with its default options, fed the way ppcg
//! feeds it (validity and coincidence = flow ∪ anti ∪ output, proximity = the
//! same), under the SCoP's parameter context.

use isl_rs::{ScheduleConstraints, Set, UnionSet};

use crate::deps::Dependences;
use crate::isl::{new_context, IslError, IslResultExt};
use crate::scop::Scop;

/// isl's schedule tree text for `scop`; an error when isl cannot schedule it.
pub fn isl_schedule(scop: &Scop, deps: &Dependences) -> Result<String, IslError> {
    let ctx = new_context();
    let what = || "isl's scheduler".to_string();
    let mut domain = UnionSet::empty_ctx(&ctx).ctx(what)?;
    for s in &scop.statements {
        domain = domain.union(UnionSet::read_from_str(&ctx, &s.domain).ctx(what)?).ctx(what)?;
    }
    let context = Set::read_from_str(&ctx, &scop.context).ctx(what)?;
    let sc = ScheduleConstraints::on_domain(domain)
        .ctx(what)?
        .set_context(context)
        .ctx(what)?
        .set_validity(deps.validity(&ctx)?)
        .ctx(what)?
        .set_coincidence(deps.coincidence(&ctx)?)
        .ctx(what)?
        .set_proximity(deps.proximity(&ctx)?)
        .ctx(what)?;
    let schedule = sc.compute_schedule().ctx(what)?;
    Ok(schedule.to_str().ctx(what)?.to_string())
}
