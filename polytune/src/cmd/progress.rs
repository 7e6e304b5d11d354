//! A campaign's events on a terminal: a progress bar with the best speedup
//! so far and the last line; lines on standard error elsewhere.

use std::io::IsTerminal;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};

use crate::campaign::observer::{Event, Lines, Observer};

/// The bar on a terminal, else [`Lines`].
pub fn observer() -> Arc<dyn Observer> {
    if !std::io::stderr().is_terminal() {
        return Arc::new(Lines);
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {pos}/{len} evals, ETA {eta}, {prefix} | {msg}",
        )
        .expect("valid template"),
    );
    Arc::new(Bar(bar))
}

struct Bar(ProgressBar);

impl Observer for Bar {
    fn event(&self, event: Event) {
        let bar = &self.0;
        match event {
            Event::Planned { evaluations } => bar.set_length(evaluations as u64),
            Event::Done { evaluations } => bar.set_position(evaluations as u64),
            Event::Step(line) | Event::Evaluated { line, .. } => bar.set_message(line),
            Event::Best { speedup, of } => bar.set_prefix(format!("best {speedup:.2}x {of}")),
            Event::Warning(w) => bar.suspend(|| eprintln!("warning: {w}")),
            Event::Finished => bar.finish_and_clear(),
        }
    }
}
