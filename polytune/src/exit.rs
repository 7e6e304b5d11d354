//! Exit codes scripts can use: 0 done, 1 an error, 2 a usage error (clap's: an
//! unknown option, a value out of range), 3 nothing to answer with (no
//! measurement of the kernel, no verified variant), 130 interrupted by Ctrl-C (as shells
//! report SIGINT).

pub const OK: u8 = 0;
pub const ERROR: u8 = 1;
// 2 is clap's own exit status for a command line it cannot read.
pub const NO_RESULT: u8 = 3;
pub const INTERRUPTED: u8 = 130;

/// The exit code for a command's error.
pub fn code(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<tuner::Error>() {
        Some(t) if t.is_no_result() => NO_RESULT,
        Some(t) if t.is_interrupted() => INTERRUPTED,
        _ => ERROR,
    }
}
