//! Our scheduler's schedule of a SCoP, as `polytune schedule` shows it: the
//! tree, its bands and rows, the GPU mapping, the legality verdict.

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use space::schedule::{self, Backend, CoreOptions, CoreSchedule, Fusion};
use vocab::knobs::UnifiedOptions;

use crate::deadline::in_time;
use crate::error::Result;
use crate::program::{Dataset, Program, ProgramConfig};

pub struct Request {
    pub file: PathBuf,
    pub fusion: Fusion,
    pub backend: Backend,
    pub scop: usize,
    /// The unified scheduler's settings (`target=...` first, then `KNOB=VALUE`);
    /// none: the core scheduler.
    pub settings: Vec<String>,
    pub dataset: Dataset,
    pub cc_args: Vec<String>,
    pub autodetect: bool,
    /// The limit on scheduling, in seconds.
    pub timeout_s: f64,
}

/// The schedule, checked legal, and how long it took.
#[derive(Serialize)]
pub struct Report {
    pub schedule: CoreSchedule,
    pub legal: bool,
    pub seconds: f64,
    /// The file, and the unified scheduler's settings where it ran.
    #[serde(skip)]
    file: PathBuf,
    #[serde(skip)]
    knobs: Option<UnifiedOptions>,
    #[serde(skip)]
    program: Arc<Program>,
}

/// The schedule `request` asks for, within its limit.
pub fn run(request: &Request) -> Result<Report> {
    // Sizes do not matter to the schedule: the model is parametric.
    let program = Arc::new(crate::program::load(
        &request.file,
        request.dataset,
        &ProgramConfig::preprocessed(&request.cc_args, request.autodetect),
        request.scop,
    )?);
    let mut opts = CoreOptions {
        fusion: request.fusion.clone(),
        backend: request.backend,
        cross_check: false,
        knobs: None,
    };
    // What the user set, printed; the scheduler sees the part that reaches it.
    let mut knobs = None;
    if !request.settings.is_empty() {
        let set = UnifiedOptions::default().with_settings(&request.settings)?;
        opts.knobs = Some(set.scheduler());
        knobs = Some(set);
    }
    let started = std::time::Instant::now();
    let s = {
        let (program, opts) = (program.clone(), opts.clone());
        let what = format!("{}: scheduling", request.file.display());
        in_time(&what, request.timeout_s, move || {
            Ok(schedule::schedule(&program.scop, &program.deps, &opts)?)
        })?
    };
    let seconds = started.elapsed().as_secs_f64();
    // `schedule` only returns schedules that passed the legality check.
    Ok(Report { schedule: s, legal: true, seconds, file: request.file.clone(), knobs, program })
}

impl Report {
    /// The schedule as text: the preorder, each band's rows, the mapping, the verdict, the tree.
    pub fn text(&self) -> String {
        let (s, scop) = (&self.schedule, &self.program.scop);
        let mut text = String::new();
        macro_rules! w {
            ($($t:tt)*) => {{
                let _ = writeln!(text, $($t)*);
            }};
        }
        w!("{}: preorder {}", self.file.display(), s.preorder.display());
        if let Some(k) = &self.knobs {
            w!("  unified scheduler: {}", k.settings().join(" "));
        }
        let mut last = None;
        for r in &s.rows {
            if last != Some((r.group, r.band)) {
                w!("  group {} band {}:", r.group, r.band);
                last = Some((r.group, r.band));
            }
            let exprs: Vec<String> = r
                .affine
                .iter()
                .map(|(st, c, d, e)| {
                    let stmt = &scop.statements[*st];
                    format!("{}: {}", stmt.name, schedule::affine_text(scop, *st, c, d, *e))
                })
                .collect();
            let flags = format!("{:?}{}", r.kind, if r.coincident { ", coincident" } else { "" });
            w!("    [{flags}] {}", exprs.join("; "));
            if !r.carries.is_empty() {
                w!("      carries {}", r.carries.join(", "));
            }
            if !r.spatial.is_empty() {
                w!("      carries spatial proximity of {}", r.spatial.join(", "));
            }
        }
        for m in &s.mapping {
            let threads: Vec<String> = m.threads.iter().map(|(row, t)| format!("row {row} -> {t}")).collect();
            w!("  GPU mapping, group {} band {}: {}", m.group, m.band, threads.join(", "));
        }
        w!("  legal: yes (isl check); {} lexmins, {} ILPs, {:.3} s", s.lexmins, s.ilps, self.seconds);
        for note in &s.notes {
            w!("  note: {note}");
        }
        w!("  tree: {}", s.tree);
        text
    }
}
