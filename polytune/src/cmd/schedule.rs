//! `polytune schedule FILE`: our scheduler's schedule tree, its bands and the
//! legality verdict.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;
use space::schedule::{self, Backend, CoreOptions, CoreSchedule, Fusion};
use vocab::knobs::UnifiedOptions;

use super::common::{self, Dataset};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FusionArg {
    /// Statements share outer loops as in the original program.
    Original,
    /// Adjacent loop nests fused wherever a shared outer loop stays legal.
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    Cbc,
    Isl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetArg {
    Seq,
    Openmp,
    Gpu,
}

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    #[arg(long, value_enum, default_value_t = FusionArg::Original)]
    fusion: FusionArg,
    /// The ILP backend: CBC (successive ILPs) or isl's exact lexmin.
    #[arg(long, value_enum, default_value_t = BackendArg::Cbc)]
    backend: BackendArg,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
    /// Schedule with the unified scheduler for this target (RR-9110 §4.7
    /// CPU, §4.8 GPU). Without `--target` and `--set`: the core scheduler.
    #[arg(long, value_enum)]
    target: Option<TargetArg>,
    /// A knob of the unified scheduler, `KNOB=VALUE`; repeatable. Knobs:
    /// target, hlim, spatial, posttile_reorder, consecutivity, wavefront, line_bytes.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    set: Vec<String>,
    /// PolyBench dataset size (passed as -D<SIZE>_DATASET): it matters where sizes are
    /// macros rather than parameters.
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// An argument for the C preprocessor (`-I...`, `-D...`); repeatable.
    #[arg(long = "cc-arg", value_name = "ARG", allow_hyphen_values = true)]
    cc_args: Vec<String>,
    /// The SCoPs are the regions found without pragmas (see `scop --autodetect`).
    #[arg(long)]
    autodetect: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

#[derive(Serialize)]
struct Report<'a> {
    schedule: &'a CoreSchedule,
    legal: bool,
    seconds: f64,
}

/// The options `polytune run --schedule unified` uses too.
pub fn options(fusion: FusionArg, backend: BackendArg) -> CoreOptions {
    CoreOptions {
        fusion: match fusion {
            FusionArg::Original => Fusion::Original,
            FusionArg::Max => Fusion::Max,
        },
        backend: match backend {
            BackendArg::Cbc => Backend::Cbc,
            BackendArg::Isl => Backend::Isl,
        },
        cross_check: false,
        knobs: None,
    }
}

pub fn run(args: Args) -> Result<()> {
    // Sizes do not matter to the schedule: the model is parametric.
    let program = std::sync::Arc::new(common::load(
        &args.file,
        args.dataset,
        &common::ProgramConfig::preprocessed(&args.cc_args, args.autodetect),
        args.scop,
    )?);
    let mut opts = options(args.fusion, args.backend);
    // What the user set, printed; the scheduler sees the part that reaches it.
    let mut knobs = None;
    if args.target.is_some() || !args.set.is_empty() {
        let mut settings: Vec<String> = Vec::new();
        if let Some(t) = args.target {
            settings.push(format!("target={}", format!("{t:?}").to_lowercase()));
        }
        settings.extend(args.set.iter().cloned());
        let set = UnifiedOptions::default().with_settings(&settings)?;
        opts.knobs = Some(set.scheduler());
        knobs = Some(set);
    }
    let started = std::time::Instant::now();
    let s = {
        let (program, opts) = (program.clone(), opts.clone());
        let what = format!("{}: scheduling", args.file.display());
        common::in_time(&what, args.timeout, move || {
            Ok(schedule::schedule(&program.scop, &program.deps, &opts)?)
        })?
    };
    let seconds = started.elapsed().as_secs_f64();
    // `schedule` only returns schedules that passed the legality check.
    let report = Report { schedule: &s, legal: true, seconds };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("{}: preorder {}", args.file.display(), s.preorder.display());
    if let Some(k) = &knobs {
        println!("  unified scheduler: {}", k.settings().join(" "));
    }
    let mut last = None;
    for r in &s.rows {
        if last != Some((r.group, r.band)) {
            println!("  group {} band {}:", r.group, r.band);
            last = Some((r.group, r.band));
        }
        let exprs: Vec<String> = r
            .affine
            .iter()
            .map(|(st, c, d, e)| {
                let stmt = &program.scop.statements[*st];
                format!("{}: {}", stmt.name, space::schedule::affine_text(&program.scop, *st, c, d, *e))
            })
            .collect();
        let flags = format!("{:?}{}", r.kind, if r.coincident { ", coincident" } else { "" });
        println!("    [{flags}] {}", exprs.join("; "));
        if !r.carries.is_empty() {
            println!("      carries {}", r.carries.join(", "));
        }
        if !r.spatial.is_empty() {
            println!("      carries spatial proximity of {}", r.spatial.join(", "));
        }
    }
    for m in &s.mapping {
        let threads: Vec<String> = m.threads.iter().map(|(row, t)| format!("row {row} -> {t}")).collect();
        println!("  GPU mapping, group {} band {}: {}", m.group, m.band, threads.join(", "));
    }
    println!("  legal: yes (isl check); {} lexmins, {} ILPs, {:.3} s", s.lexmins, s.ilps, seconds);
    for note in &s.notes {
        println!("  note: {note}");
    }
    println!("  tree: {}", s.tree);
    Ok(())
}
