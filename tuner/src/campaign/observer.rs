//! What a campaign tells while it runs, as events: the binary renders them
//! (a progress bar on a terminal, lines on standard error otherwise), a
//! program that calls the library does what it likes with them, a test
//! records them.

use std::sync::Mutex;

use executor::measure::Status;
use vocab::knobs::Point;

use crate::program::Dataset;

/// One thing a campaign reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The evaluations the campaign expects in all (its budget, or every
    /// point of its kernels' spaces).
    Planned { evaluations: usize },
    /// The evaluations done so far (a resumed campaign starts above 0).
    Done { evaluations: usize },
    /// What the campaign is doing (measuring an original, waiting for other
    /// workers), one line.
    Step(String),
    /// A variant measured and recorded; `line` says it as a person reads it.
    Evaluated {
        kernel: String,
        dataset: Dataset,
        point: Point,
        status: Status,
        median_s: Option<f64>,
        line: String,
    },
    /// The best speedup over the original so far, and of which kernel.
    Best { speedup: f64, of: String },
    /// Something the user should know (a spread measurement on a virtual
    /// machine, a claim that could not be extended).
    Warning(String),
    /// The campaign invocation ended.
    Finished,
}

/// Receives a campaign's events, possibly from two threads (the store's
/// heartbeat warns from its own).
pub trait Observer: Send + Sync {
    fn event(&self, event: Event);
}

/// Each step, evaluation and warning as a line on standard error.
pub struct Lines;

impl Observer for Lines {
    fn event(&self, event: Event) {
        match event {
            Event::Step(line) | Event::Evaluated { line, .. } => eprintln!("{line}"),
            Event::Warning(w) => eprintln!("warning: {w}"),
            Event::Planned { .. } | Event::Done { .. } | Event::Best { .. } | Event::Finished => {}
        }
    }
}

/// Every event, in order.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<Event>>);

impl Recorder {
    pub fn events(&self) -> Vec<Event> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Observer for Recorder {
    fn event(&self, event: Event) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }
}
