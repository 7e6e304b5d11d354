//! Small glue around isl-rs: one context per call site, errors as text.

use isl_rs::{Context, LibISLError};

pub mod ffi;
pub use ffi::last_error;

/// An isl failure, with what we were doing when it happened.
#[derive(Debug, Clone, thiserror::Error)]
#[error("isl: {what}: {message}")]
pub struct IslError {
    pub what: String,
    pub message: String,
}

/// Adds context to an isl-rs result.
pub trait IslResultExt<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T, IslError>;
}

impl<T> IslResultExt<T> for Result<T, LibISLError> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T, IslError> {
        self.map_err(|e| IslError { what: what(), message: e.to_string() })
    }
}

/// A fresh isl context that reports errors through return values only.
pub fn new_context() -> Context {
    let ctx = Context::alloc();
    ffi::continue_on_error(&ctx);
    ctx
}

/// `f` with isl's operation counter limited to `ops` (allocations and
/// simplex pivots: a count, the same on every machine): `None` where the
/// budget ran out ([`RanOut`]), `f`'s other errors as they are. The limit
/// is lifted after.
pub fn within_budget<T, E: RanOut>(
    ctx: &Context,
    ops: u64,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<Option<T>, E> {
    ctx.reset_operations();
    ctx.set_max_operations(ops);
    let out = f();
    ctx.set_max_operations(0);
    ctx.reset_operations();
    match out {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.ran_out() => {
            ctx.reset_error();
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// How an isl error names its kind: isl-rs reads isl's error code, resets
/// it, and keeps it only as this prefix of the error's text (its
/// `LibISLError` has no accessor); [`ffi`] writes its errors the same way.
pub const QUOTA: &str = "[Quota]";

/// An error that may be isl's operation quota running out (isl's error
/// code `isl_error_quota`), whatever step it passed through.
pub trait RanOut {
    fn ran_out(&self) -> bool;
}

impl RanOut for LibISLError {
    fn ran_out(&self) -> bool {
        self.to_string().starts_with(QUOTA)
    }
}

impl RanOut for IslError {
    fn ran_out(&self) -> bool {
        self.message.starts_with(QUOTA)
    }
}

/// The flat map of a schedule tree, every statement's range zero-padded to one
/// length so that schedule vectors of different statements compare
/// lexicographically.
pub fn flat_schedule_map(schedule: &isl_rs::Schedule) -> Result<isl_rs::UnionMap, IslError> {
    use isl_rs::{DimType, UnionMap};
    let what = || "flattening a schedule".to_string();
    let map = schedule.get_map().ctx(what)?.intersect_domain(schedule.get_domain().ctx(what)?).ctx(what)?;
    let list = map.get_map_list().ctx(what)?;
    let n = list.size().ctx(what)?;
    let mut maps = Vec::new();
    for i in 0..n {
        maps.push(list.get_at(i).ctx(what)?);
    }
    let depth = maps.iter().map(|m| m.dim(DimType::Out).unwrap_or(0)).max().unwrap_or(0);
    let mut out = UnionMap::empty_ctx(&schedule.get_ctx()).ctx(what)?;
    for m in maps {
        let have = m.dim(DimType::Out).ctx(what)?;
        let mut m = m.add_dims(DimType::Out, (depth - have) as u32).ctx(what)?;
        for d in have..depth {
            m = m.fix_si(DimType::Out, d as u32, 0).ctx(what)?;
        }
        // Anonymous range tuples so that all statements share one space.
        m = m.reset_tuple_id(DimType::Out).ctx(what)?;
        out = out.union(m.to_union_map().ctx(what)?).ctx(what)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context that holds no error has no message: a stand-in, not a crash.
    #[test]
    fn the_last_error_of_a_context_without_one_is_a_stand_in() {
        assert_eq!(last_error(&new_context()), "isl gave no message");
    }
}
