//! `polytune space FILE`: the fusion space (POPL'11) of a SCoP: |O| and |F|
//! per level, the legal preorders, and whether our scheduler finds a
//! schedule for each.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;
use space::fusion::{self, Count, Criterion, FusionOptions, FusionSpace, Objective, PruneStats};
use space::schedule::{self, CoreOptions, Fusion};
use vocab::preorder::Preorder;

use super::common::{self, Dataset};

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// Also build level 2 under the outer preorder (`--outer`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    level: u8,
    /// The outer preorder for level 2, e.g. `(S1 S2)(S3)`; default: the
    /// program's own loop nests.
    #[arg(long)]
    outer: Option<String>,
    /// Require the statements of a group to interleave, first instances at
    /// most this far apart (the paper's criterion) instead of the
    /// scheduler's shared loop (parametric shifts allowed).
    #[arg(long, value_name = "OFFSET")]
    interleaved: Option<i64>,
    /// How many preorders to list (and check with the scheduler) per level;
    /// 0 lists all.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// List without asking the scheduler.
    #[arg(long)]
    no_check: bool,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
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
}

#[derive(Serialize)]
struct Listed {
    preorder: Preorder,
    text: String,
    /// `None` when not checked (level 2, or `--no-check`).
    legal: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Serialize)]
struct Level {
    level: usize,
    outer: Option<String>,
    /// |O| and |F| as decimal strings (they outgrow JSON numbers).
    unpruned: Count,
    legal: Count,
    build_seconds: f64,
    enumerate_seconds: Option<f64>,
    stats: PruneStats,
    max_fusion: Option<String>,
    max_distribution: Option<String>,
    listed: Vec<Listed>,
}

#[derive(Serialize)]
struct Report {
    file: String,
    statements: usize,
    criterion: Criterion,
    levels: Vec<Level>,
}

/// Enumerating F is skipped above this many points (it is counted).
const ENUMERATE_LIMIT: u64 = 1_000_000;

pub fn run(args: Args) -> Result<()> {
    let program = common::load(
        &args.file,
        args.dataset,
        &common::ProgramConfig::preprocessed(&args.cc_args, args.autodetect),
        args.scop,
    )?;
    let (scop, deps) = (&program.scop, &program.deps);
    let criterion = match args.interleaved {
        Some(max_offset) if max_offset < 0 => anyhow::bail!("--interleaved takes an offset >= 0"),
        Some(max_offset) => Criterion::Interleaved { max_offset },
        None => Criterion::SharedLoop,
    };
    let opts = FusionOptions { criterion };
    let mut levels = Vec::new();
    let started = Instant::now();
    let outer_space = FusionSpace::outer(scop, deps, &opts)?;
    levels.push(describe(&args, scop, deps, outer_space, started.elapsed().as_secs_f64())?);
    if args.level == 2 {
        let outer = match &args.outer {
            Some(t) => fusion::parse_preorder(t, scop)?,
            None => scop.original_preorder(),
        };
        let started = Instant::now();
        let inner = FusionSpace::inner(scop, deps, &outer, &opts)?;
        levels.push(describe(&args, scop, deps, inner, started.elapsed().as_secs_f64())?);
    } else if args.outer.is_some() {
        anyhow::bail!("--outer is for --level 2");
    }
    let report = Report {
        file: args.file.display().to_string(),
        statements: scop.statements.len(),
        criterion,
        levels,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("{}: {} statements, criterion {:?}", report.file, report.statements, report.criterion);
    for l in &report.levels {
        match &l.outer {
            Some(o) => println!("level {} under {o}:", l.level),
            None => println!("level {}:", l.level),
        }
        println!("  |O| = {}   |F| = {}", l.unpruned, l.legal);
        let s = &l.stats;
        println!(
            "  pruning: {} pairs must fuse, {} must be distributed, {} with a forbidden order; \
             {} pair and {} set tests, {} infeasible sets, {} ILPs",
            s.must_fuse,
            s.must_distribute,
            s.forbidden_orders,
            s.pairs_tested,
            s.sets_tested,
            s.infeasible_sets,
            s.ilps
        );
        println!("  encoding: {} variables, {} constraints", s.variables, s.constraints);
        match l.enumerate_seconds {
            Some(e) => println!("  built in {:.3} s, enumerated in {:.3} s", l.build_seconds, e),
            None => println!("  built in {:.3} s (too many points to enumerate)", l.build_seconds),
        }
        if let (Some(f), Some(d)) = (&l.max_fusion, &l.max_distribution) {
            println!("  max fusion: {f}   max distribution: {d}");
        }
        for p in &l.listed {
            let verdict = match (p.legal, &p.reason) {
                (Some(true), _) => "scheduled".to_string(),
                (Some(false), Some(r)) => format!("NO SCHEDULE: {r}"),
                (Some(false), None) => "NO SCHEDULE".to_string(),
                (None, _) => String::new(),
            };
            println!("  {:<40} {verdict}", p.text);
        }
        let shown = l.listed.len();
        if l.legal.to_u64().is_none_or(|c| c > shown as u64) {
            println!("  ... ({shown} listed; --limit 0 lists all)");
        }
    }
    Ok(())
}

fn describe(
    args: &Args,
    scop: &model::scop::Scop,
    deps: &model::deps::Dependences,
    space: FusionSpace,
    build_seconds: f64,
) -> Result<Level> {
    let legal = space.count();
    let mut enumerate_seconds = None;
    let mut all = Vec::new();
    if legal.to_u64().is_some_and(|c| c <= ENUMERATE_LIMIT) {
        let t = Instant::now();
        all = space.preorders();
        enumerate_seconds = Some(t.elapsed().as_secs_f64());
    } else if args.limit > 0 {
        // Too many to enumerate: the first `limit` in enumeration order.
        space.for_each(&mut |p| {
            all.push(p);
            all.len() < args.limit
        });
    }
    let max_fusion = space.optimise(&Objective::MaxFusion)?.map(|p| p.display());
    let max_distribution = space.optimise(&Objective::MaxDistribution)?.map(|p| p.display());
    let shown = if args.limit == 0 { all.len() } else { args.limit.min(all.len()) };
    let mut listed = Vec::new();
    for p in all.into_iter().take(shown) {
        // The scheduler takes an outer preorder only.
        let (legal, reason) = if args.no_check || space.level > 1 {
            (None, None)
        } else {
            let opts = CoreOptions { fusion: Fusion::Preorder(p.clone()), ..Default::default() };
            match schedule::schedule(scop, deps, &opts) {
                Ok(_) => (Some(true), None),
                Err(e) => (Some(false), Some(e.to_string())),
            }
        };
        listed.push(Listed { text: p.display(), preorder: p, legal, reason });
    }
    Ok(Level {
        level: space.level,
        outer: space.outer.as_ref().map(|o| o.display()),
        unpruned: space.unpruned(),
        legal,
        build_seconds,
        enumerate_seconds,
        stats: space.stats.clone(),
        max_fusion,
        max_distribution,
        listed,
    })
}
