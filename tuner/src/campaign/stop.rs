//! Stopping a campaign from outside its loop: a request to stop (the
//! binary's Ctrl-C) and whether a campaign runs to be stopped.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`interrupt`]: finish nothing new, record nothing half-done, end.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Whether [`super::Campaign::run`] is under way in this process.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Asks the campaigns of this process to stop once their evaluations in
/// flight end (`End::Interrupted`; what was measured is kept). It only
/// stores to an atomic, so a signal handler may call it: the binary's
/// Ctrl-C does.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Whether a campaign is running in this process, so that a caller can tell
/// a stop of the campaign ([`interrupt`]) from an end of the program.
pub fn running() -> bool {
    RUNNING.load(Ordering::SeqCst)
}

/// [`RUNNING`] for as long as it lives, on every path out of a run.
pub(super) struct Running;

impl Running {
    pub(super) fn start() -> Running {
        RUNNING.store(true, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.store(false, Ordering::SeqCst);
    }
}
