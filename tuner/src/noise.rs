//! `--on-noise`: what `run` and `tune` do when the cores of a measurement
//! slot are busy just before they measure (other processes: a build, a
//! test, another user's job). Times measured then are slow and noisy, and
//! a tuner that says nothing presents noise as results. Also what to say of
//! spread parallel runs on a virtual machine ([`spread_hint`]).

use std::time::Duration;

use crate::choice::Choice;
use crate::error::{Error, Result};
use executor::quiet;

/// What to do about a busy slot (what each choice does: [`Choice::about`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnNoise {
    #[default]
    Warn,
    Wait,
    Fail,
}

impl Choice for OnNoise {
    const WHAT: &'static str = "--on-noise policy";
    const ALL: &'static [OnNoise] = &[OnNoise::Warn, OnNoise::Wait, OnNoise::Fail];
    fn name(self) -> &'static str {
        match self {
            OnNoise::Warn => "warn",
            OnNoise::Wait => "wait",
            OnNoise::Fail => "fail",
        }
    }
    fn about(self) -> Option<&'static str> {
        Some(match self {
            OnNoise::Warn => "Warn once, measure anyway, and record the load with each measurement",
            OnNoise::Wait => "Wait until the slot is quiet (checking every few seconds)",
            OnNoise::Fail => "Stop with an error",
        })
    }
}
crate::choice::named!(OnNoise);

/// A core busier than this over the check's window makes its slot noisy.
pub const BUSY: f64 = 0.25;
const WINDOW: Duration = Duration::from_millis(250);
const WAIT_STEP: Duration = Duration::from_secs(5);

/// The policy and whether it has warned yet.
#[derive(Debug, Default)]
pub struct Noise {
    pub on: OnNoise,
    warned: bool,
}

impl Noise {
    pub fn new(on: OnNoise) -> Noise {
        Noise { on, warned: false }
    }

    /// Checks the cores of `slots` (name, cores) while nothing of ours runs
    /// there. Quiet: `None`. Busy: with `warn`, a warning on stderr (the
    /// first time) and the note to record with the measurements; with
    /// `wait`, checks again until quiet or `stop()`; with `fail`, an error.
    pub fn check(&mut self, slots: &[(&str, &[usize])], stop: &dyn Fn() -> bool) -> Result<Option<String>> {
        let mut waited = false;
        loop {
            let Some(busy) = busy(slots) else {
                if waited {
                    eprintln!("polytune: the measurement slots are quiet again; measuring");
                }
                return Ok(None);
            };
            match self.on {
                OnNoise::Warn => {
                    if !self.warned {
                        eprintln!(
                            "polytune: warning: {busy}, by other processes: times measured now are slow and \
                             noisy (the load is recorded with each measurement; --on-noise wait waits for \
                             quiet, --on-noise fail stops)"
                        );
                        self.warned = true;
                    }
                    return Ok(Some(busy));
                }
                OnNoise::Fail => {
                    return Err(Error::failed(format!(
                        "--on-noise fail: {busy}, by other processes; measure on a quiet machine"
                    )))
                }
                OnNoise::Wait => {
                    if !waited {
                        eprintln!("polytune: {busy}; waiting for it to be quiet (--on-noise wait)");
                        waited = true;
                    }
                    if stop() {
                        return Ok(None);
                    }
                    std::thread::sleep(WAIT_STEP);
                }
            }
        }
    }
}

/// `slot \`a\`: core 0 (97% busy)` for each busy slot, or `None`.
fn busy(slots: &[(&str, &[usize])]) -> Option<String> {
    let cores: Vec<usize> = slots.iter().flat_map(|(_, c)| c.iter().copied()).collect();
    let load = quiet::load(&cores, WINDOW)?;
    let said: Vec<String> = slots
        .iter()
        .filter_map(|(name, cores)| {
            let mine: Vec<_> = load.iter().filter(|l| cores.contains(&l.core)).copied().collect();
            quiet::busy_cores(&mine, BUSY).map(|b| format!("slot `{name}`: {b}"))
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// What to say of a measurement on `threads` threads whose runs spread
/// beyond the protocol's `threshold`, on a virtual machine (whose host may
/// take cores from spinning OpenMP threads); `None` elsewhere.
pub fn spread_hint(threads: usize, m: &executor::measure::Measurement, threshold: f64) -> Option<String> {
    let s =
        m.spread.filter(|&s| s > threshold && m.status == executor::measure::Status::Ok && threads > 1)?;
    executor::machine::virtualised().then(|| {
        format!(
            "this machine looks virtual (a hypervisor) and a variant on {threads} threads spread {:.0}% over \
             its runs (the protocol re-measures above {:.0}%): idle OpenMP threads may be losing their cores; \
             `--set omp_wait=passive` (or `=default,passive` on `tune`) tries the passive wait policy",
            100.0 * s,
            100.0 * threshold
        )
    })
}
