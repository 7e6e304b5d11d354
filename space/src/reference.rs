//! Reference schedules every campaign compares against: the original program
//! order and isl's own scheduler with its default options, fed the way ppcg
//! feeds it (validity and coincidence = flow ∪ anti ∪ output, proximity = the
//! same), under the SCoP's parameter context.

use isl_rs::{ScheduleConstraints, Set, UnionSet};

use model::deps::Dependences;
use model::isl::{new_context, IslError, IslResultExt};
use model::scop::Scop;

/// isl's schedule tree text for `scop`; an error when isl cannot schedule it.
pub fn isl_schedule(scop: &Scop, deps: &Dependences) -> Result<String, IslError> {
    isl_schedule_with(scop, deps, false)
}

/// isl's schedule as ppcg asks for it when it maps to a GPU: the outermost
/// member of each band coincident where isl can make it so
/// (`schedule_outer_coincidence`), so that blocks have a loop to take.
pub fn isl_gpu_schedule(scop: &Scop, deps: &Dependences) -> Result<String, IslError> {
    isl_schedule_with(scop, deps, true)
}

fn isl_schedule_with(scop: &Scop, deps: &Dependences, outer_coincidence: bool) -> Result<String, IslError> {
    let ctx = new_context();
    let what = || "isl's scheduler".to_string();
    if outer_coincidence {
        isl_rs::Options::set_schedule_outer_coincidence(&ctx, 1).ctx(what)?;
    }
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
