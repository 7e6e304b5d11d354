//! Small glue around isl-rs: one context per call site, errors as text.

use isl_rs::{Context, LibISLError};

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
        self.map_err(|e| IslError { what: what(), message: format!("{e:?}") })
    }
}

/// A fresh isl context that reports errors through return values only.
pub fn new_context() -> Context {
    let ctx = Context::alloc();
    // ISL_ON_ERROR_CONTINUE: errors come back as results instead of warnings on stderr.
    unsafe { isl_options_set_on_error(ctx.ptr, 1) };
    ctx
}

unsafe extern "C" {
    fn isl_options_set_on_error(ctx: libc::uintptr_t, val: libc::c_int) -> libc::c_int;
}
