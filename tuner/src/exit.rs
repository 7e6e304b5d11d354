//! Exit codes scripts can use: 0 done, 1 an error, 2 a usage error (clap's: an
//! unknown option, a value out of range), 3 nothing to answer with (no
//! measurement of the kernel, no verified variant), 130 interrupted by Ctrl-C (as shells
//! report SIGINT).

use std::fmt;

/// An error that is not a failure: the command ran, but has no result to give.
#[derive(Debug)]
pub struct NoResult(pub String);

/// The user pressed Ctrl-C; what was done is kept.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl fmt::Display for NoResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoResult {}
impl std::error::Error for Interrupted {}

pub const OK: u8 = 0;
pub const ERROR: u8 = 1;
// 2 is clap's own exit status for a command line it cannot read.
pub const NO_RESULT: u8 = 3;
pub const INTERRUPTED: u8 = 130;

/// The exit code for a command's error.
pub fn code(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<NoResult>().is_some() {
        NO_RESULT
    } else if e.downcast_ref::<Interrupted>().is_some() {
        INTERRUPTED
    } else {
        ERROR
    }
}
