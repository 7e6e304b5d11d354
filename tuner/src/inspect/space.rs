//! The fusion space (POPL'11) of a SCoP, as `polytune space` shows it: |O|
//! and |F| per level, the legal preorders, and whether our scheduler finds a
//! schedule for each.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;
use space::fusion::{self, Count, Criterion, FusionOptions, FusionSpace, Objective, PruneStats};
use space::schedule::{self, CoreOptions, Fusion};
use vocab::preorder::Preorder;

use crate::error::{Error, Result};
use crate::program::{Dataset, ProgramConfig};

pub struct Request {
    pub file: PathBuf,
    /// 1, or 2: also level 2 under `outer`.
    pub level: u8,
    /// The outer preorder for level 2 (default: the program's own loop nests).
    pub outer: Option<String>,
    /// Groups interleave, first instances at most this far apart, instead
    /// of sharing a loop.
    pub interleaved: Option<i64>,
    /// How many preorders to list and check per level; 0 lists all.
    pub limit: usize,
    /// List without asking the scheduler.
    pub no_check: bool,
    pub scop: usize,
    pub dataset: Dataset,
    pub cc_args: Vec<String>,
    pub autodetect: bool,
}

#[derive(Serialize)]
pub struct Listed {
    pub preorder: Preorder,
    pub text: String,
    /// `None` when not checked (level 2, or `--no-check`).
    pub legal: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Serialize)]
pub struct Level {
    pub level: usize,
    pub outer: Option<String>,
    /// |O| and |F| as decimal strings (they outgrow JSON numbers).
    pub unpruned: Count,
    pub legal: Count,
    pub build_seconds: f64,
    pub enumerate_seconds: Option<f64>,
    pub stats: PruneStats,
    pub max_fusion: Option<String>,
    pub max_distribution: Option<String>,
    pub listed: Vec<Listed>,
}

#[derive(Serialize)]
pub struct Report {
    pub file: String,
    pub statements: usize,
    pub criterion: Criterion,
    pub levels: Vec<Level>,
}

/// Enumerating F is skipped above this many points (it is counted).
const ENUMERATE_LIMIT: u64 = 1_000_000;

/// The space `request` asks for, level by level.
pub fn run(request: &Request) -> Result<Report> {
    let program = crate::program::load(
        &request.file,
        request.dataset,
        &ProgramConfig::preprocessed(&request.cc_args, request.autodetect),
        request.scop,
    )?;
    let (scop, deps) = (&program.scop, &program.deps);
    let criterion = match request.interleaved {
        Some(max_offset) if max_offset < 0 => return Err(Error::input("--interleaved takes an offset >= 0")),
        Some(max_offset) => Criterion::Interleaved { max_offset },
        None => Criterion::SharedLoop,
    };
    let opts = FusionOptions { criterion };
    let mut levels = Vec::new();
    let started = Instant::now();
    let outer_space = FusionSpace::outer(scop, deps, &opts)?;
    levels.push(describe(request, scop, deps, outer_space, started.elapsed().as_secs_f64())?);
    if request.level == 2 {
        let outer = match &request.outer {
            Some(t) => fusion::parse_preorder(t, scop)?,
            None => scop.original_preorder(),
        };
        let started = Instant::now();
        let inner = FusionSpace::inner(scop, deps, &outer, &opts)?;
        levels.push(describe(request, scop, deps, inner, started.elapsed().as_secs_f64())?);
    } else if request.outer.is_some() {
        return Err(Error::input("--outer is for --level 2"));
    }
    Ok(Report {
        file: request.file.display().to_string(),
        statements: scop.statements.len(),
        criterion,
        levels,
    })
}

impl Report {
    /// The report as text, a line per fact.
    pub fn text(&self) -> String {
        let mut text = String::new();
        macro_rules! w {
            ($($t:tt)*) => {{
                let _ = writeln!(text, $($t)*);
            }};
        }
        w!("{}: {} statements, criterion {:?}", self.file, self.statements, self.criterion);
        for l in &self.levels {
            match &l.outer {
                Some(o) => w!("level {} under {o}:", l.level),
                None => w!("level {}:", l.level),
            }
            w!("  |O| = {}   |F| = {}", l.unpruned, l.legal);
            let s = &l.stats;
            w!(
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
            w!("  encoding: {} variables, {} constraints", s.variables, s.constraints);
            match l.enumerate_seconds {
                Some(e) => w!("  built in {:.3} s, enumerated in {:.3} s", l.build_seconds, e),
                None => w!("  built in {:.3} s (too many points to enumerate)", l.build_seconds),
            }
            if let (Some(f), Some(d)) = (&l.max_fusion, &l.max_distribution) {
                w!("  max fusion: {f}   max distribution: {d}");
            }
            for p in &l.listed {
                let verdict = match (p.legal, &p.reason) {
                    (Some(true), _) => "scheduled".to_string(),
                    (Some(false), Some(r)) => format!("NO SCHEDULE: {r}"),
                    (Some(false), None) => "NO SCHEDULE".to_string(),
                    (None, _) => String::new(),
                };
                w!("  {:<40} {verdict}", p.text);
            }
            let shown = l.listed.len();
            if l.legal.to_u64().is_none_or(|c| c > shown as u64) {
                w!("  ... ({shown} listed; --limit 0 lists all)");
            }
        }
        text
    }
}

fn describe(
    request: &Request,
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
    } else if request.limit > 0 {
        // Too many to enumerate: the first `limit` in enumeration order.
        space.for_each(&mut |p| {
            all.push(p);
            all.len() < request.limit
        });
    }
    let max_fusion = space.optimise(&Objective::MaxFusion)?.map(|p| p.display());
    let max_distribution = space.optimise(&Objective::MaxDistribution)?.map(|p| p.display());
    let shown = if request.limit == 0 { all.len() } else { request.limit.min(all.len()) };
    let mut listed = Vec::new();
    for p in all.into_iter().take(shown) {
        // The scheduler takes an outer preorder only.
        let (legal, reason) = if request.no_check || space.level > 1 {
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
