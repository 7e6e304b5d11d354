//! What polytune sees in a C file, as `polytune scop` shows it: each SCoP's
//! statements, domains, accesses, original schedule and dependences; with
//! `autodetect`, the regions found without pragmas and the loops refused.

use std::fmt::Write;
use std::path::PathBuf;

use model::deps::{self, Dependences};
use model::scop::{self, ExtractOptions, Scop, ScopError};
use serde::Serialize;

use crate::deadline::in_time;
use crate::error::{Context, Result};

pub struct Request {
    pub file: PathBuf,
    /// Find the regions instead of reading pragmas.
    pub autodetect: bool,
    pub cc_args: Vec<String>,
    /// The limit on modelling, in seconds.
    pub timeout_s: f64,
}

/// One SCoP and its dependences.
#[derive(Serialize)]
pub struct Modelled {
    pub scop: Scop,
    pub dependences: Dependences,
}

/// The file's SCoPs, and (with `autodetect`) the outermost loops refused.
pub struct Report {
    pub file: PathBuf,
    pub autodetect: bool,
    pub scops: Vec<Modelled>,
    pub refused: Vec<ScopError>,
}

/// The model of `request.file`, within its limit.
pub fn run(request: &Request) -> Result<Report> {
    let opts = ExtractOptions {
        cc_args: request.cc_args.clone(),
        autodetect: request.autodetect,
        ..ExtractOptions::default()
    };
    let file = request.file.clone();
    let (scops, refused) =
        in_time(&format!("modelling {}", request.file.display()), request.timeout_s, move || {
            let (scops, refused) = match opts.autodetect {
                true => scop::detect(&file, &opts).map(|(_, scops, refused)| (scops, refused))?,
                false => (scop::extract(&file, &opts)?.1, Vec::new()),
            };
            let mut analysed = Vec::new();
            for s in scops {
                let d = deps::analyze(&s)
                    .with_context(|| format!("dependence analysis of the SCoP at line {}", s.start.line))?;
                analysed.push(Modelled { scop: s, dependences: d });
            }
            Ok((analysed, refused))
        })?;
    Ok(Report { file: request.file.clone(), autodetect: request.autodetect, scops, refused })
}

impl Report {
    /// The model as text, SCoP by SCoP.
    pub fn text(&self) -> String {
        let mut text = String::new();
        if self.autodetect {
            let _ = writeln!(
                text,
                "{} region(s) found without pragmas in {}\n",
                self.scops.len(),
                self.file.display()
            );
        }
        for (i, m) in self.scops.iter().enumerate() {
            if self.autodetect {
                let _ = write!(text, "[{i}] ");
            }
            text_of(&m.scop, &m.dependences, &mut text);
        }
        for e in &self.refused {
            let _ = writeln!(text, "not a region: {e}");
        }
        text
    }
}

fn text_of(s: &Scop, d: &Dependences, text: &mut String) {
    macro_rules! w {
        ($($t:tt)*) => {{
            let _ = writeln!(text, $($t)*);
        }};
    }
    w!("SCoP in {}() at {}:{}", s.function, s.file.display(), s.start.line);
    w!("  parameters: {}", if s.params.is_empty() { "(none)".into() } else { s.params.join(", ") });
    w!("  arrays:");
    for a in &s.arrays {
        let ext: Vec<String> =
            a.extents.iter().map(|e| format!("[{}]", e.as_deref().unwrap_or(""))).collect();
        let role = match (a.written, a.local) {
            (_, true) => "local to the SCoP",
            (true, false) => "written",
            (false, false) => "read-only",
        };
        let rows = match a.linearised {
            // Proven at extraction: every inner subscript stays within its row.
            true => "; one-dimensional in C, its linear subscripts read as these rows, each inner subscript within its row on every statement's domain (proven, or assumed below)",
            false => "",
        };
        w!("    {} {}{}  ({role}{rows})", a.element_type, a.name, ext.join(""));
    }
    w!("  statements:");
    for st in &s.statements {
        w!("    {} (line {}): {}", st.name, st.location.line, st.text.trim());
        w!("      domain: {}", st.domain);
        for a in &st.accesses {
            let kind = match a.kind {
                scop::AccessKind::Read => "read ",
                scop::AccessKind::Write => "write",
            };
            match &a.may {
                Some(why) => w!("      {kind} {:<6} {}  (may: {why})", a.id, a.relation),
                None => w!("      {kind} {:<6} {}", a.id, a.relation),
            }
        }
    }
    for note in &s.notes {
        w!("  note: {note}");
    }
    if let Some(a) = &s.assumed {
        w!("  assumed, and checked when the code runs: {}  (the program states {})", s.context, a.known);
        for why in &a.why {
            w!("    {why}");
        }
    }
    w!("  original schedule: {}", s.schedule);
    let counts: Vec<String> = d.counts().iter().map(|(k, n)| format!("{k} {n}")).collect();
    w!("  dependences (reference pairs): {}", counts.join(", "));
    for note in &d.notes {
        w!("  note: {note}");
    }
    w!();
}
