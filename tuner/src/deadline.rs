//! A step of one program (modelling, scheduling, code generation) within a
//! limit of wall time: the commands' `--timeout`.

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use crate::error::{Error, Result};

/// Runs `f` on a thread of its own and returns its result, or an error
/// naming `what` once `limit_s` seconds have passed. A step that never
/// returns cannot be stopped from outside; the caller then ends with that
/// error, and the process takes the thread with it.
pub fn in_time<T, F>(what: &str, limit_s: f64, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let (tx, rx) = channel();
    std::thread::Builder::new().name(what.to_string()).spawn(move || {
        let _ = tx.send(f());
    })?;
    match rx.recv_timeout(Duration::from_secs_f64(limit_s)) {
        Ok(out) => out,
        Err(RecvTimeoutError::Timeout) => Err(Error::failed(format!(
            "{what}: no result after {limit_s} s (--timeout); raise --timeout, or report the file and the command \
             if the scheduler or code generator is stuck"
        ))),
        // The thread panicked: its message is already on stderr.
        Err(RecvTimeoutError::Disconnected) => Err(Error::failed(format!("{what}: failed (see the panic above)"))),
    }
}
