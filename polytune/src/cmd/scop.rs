//! `polytune scop FILE`: what polytune sees in a C file.

use std::path::PathBuf;

use anyhow::{Context, Result};
use model::deps::{self, Dependences};
use model::scop::{self, ExtractOptions, Scop};
use serde::Serialize;

use super::common;

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// Find the regions instead (no pragmas needed): in every function, the
    /// longest runs of statements with a loop that the model accepts; the
    /// outermost loops it refuses are listed with the reason.
    #[arg(long)]
    autodetect: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// An argument for the C preprocessor (`-I...`, `-DMINI_DATASET`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

#[derive(Serialize)]
struct Report<'a> {
    scop: &'a Scop,
    dependences: &'a Dependences,
}

pub fn run(args: Args) -> Result<()> {
    let opts =
        ExtractOptions { cc_args: args.cc_args, autodetect: args.autodetect, ..ExtractOptions::default() };
    let file = args.file.clone();
    let (scops, analysed, refused) =
        common::in_time(&format!("modelling {}", args.file.display()), args.timeout, move || {
            let (scops, refused) = match opts.autodetect {
                true => scop::detect(&file, &opts).map(|(_, scops, refused)| (scops, refused))?,
                false => (scop::extract(&file, &opts)?.1, Vec::new()),
            };
            let mut analysed = Vec::new();
            for s in &scops {
                let d = deps::analyze(s)
                    .with_context(|| format!("dependence analysis of the SCoP at line {}", s.start.line))?;
                analysed.push(d);
            }
            Ok((scops, analysed, refused))
        })?;
    if args.json {
        let reports: Vec<Report> =
            scops.iter().zip(&analysed).map(|(scop, dependences)| Report { scop, dependences }).collect();
        println!("{}", serde_json::to_string_pretty(&reports)?);
        return Ok(());
    }
    if args.autodetect {
        println!("{} region(s) found without pragmas in {}\n", scops.len(), args.file.display());
    }
    for (i, (s, d)) in scops.iter().zip(&analysed).enumerate() {
        if args.autodetect {
            print!("[{i}] ");
        }
        print_text(s, d);
    }
    for e in &refused {
        println!("not a region: {e}");
    }
    Ok(())
}

fn print_text(s: &Scop, d: &Dependences) {
    println!("SCoP in {}() at {}:{}", s.function, s.file.display(), s.start.line);
    println!("  parameters: {}", if s.params.is_empty() { "(none)".into() } else { s.params.join(", ") });
    println!("  arrays:");
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
        println!("    {} {}{}  ({role}{rows})", a.element_type, a.name, ext.join(""));
    }
    println!("  statements:");
    for st in &s.statements {
        println!("    {} (line {}): {}", st.name, st.location.line, st.text.trim());
        println!("      domain: {}", st.domain);
        for a in &st.accesses {
            let kind = match a.kind {
                scop::AccessKind::Read => "read ",
                scop::AccessKind::Write => "write",
            };
            match &a.may {
                Some(why) => println!("      {kind} {:<6} {}  (may: {why})", a.id, a.relation),
                None => println!("      {kind} {:<6} {}", a.id, a.relation),
            }
        }
    }
    for note in &s.notes {
        println!("  note: {note}");
    }
    if let Some(a) = &s.assumed {
        println!(
            "  assumed, and checked when the code runs: {}  (the program states {})",
            s.context, a.known
        );
        for why in &a.why {
            println!("    {why}");
        }
    }
    println!("  original schedule: {}", s.schedule);
    let counts: Vec<String> = d.counts().iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!("  dependences (reference pairs): {}", counts.join(", "));
    for note in &d.notes {
        println!("  note: {note}");
    }
    println!();
}
