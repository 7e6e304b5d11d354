//! `polytune bench ratios FILE...`: the unified scheduler with its default
//! knobs against isl's default scheduler and the original program, each
//! kernel sequential and on two threads. One original, isl and unified
//! measurement per row, taken back to back on one slot, so the ratios of a
//! row come from one run.

use std::path::PathBuf;
use std::sync::Arc;

use codegen::CodegenOptions;
use executor::evaluate::Evaluator;
use executor::measure::{MeasureConfig, Measurement};
use vocab::knobs::{Target, UnifiedOptions};

use super::Out;
use crate::deadline::in_time;
use crate::error::{Context, Result};
use crate::program::{Dataset, Program};

/// Tile size of both variants (isl's and ours), as in `polytune run`.
const TILE: u32 = 32;

pub struct Request {
    pub files: Vec<PathBuf>,
    pub dataset: Dataset,
    /// Timed runs per measurement.
    pub runs: usize,
    /// The limit per kernel, in seconds.
    pub timeout_s: f64,
}

/// One row: a kernel on some threads, the original's time and the variants' measurements.
pub struct Row {
    pub kernel: String,
    pub threads: usize,
    pub original_s: f64,
    /// isl's, then the unified scheduler's.
    pub variants: Vec<Measurement>,
}

/// The table, written to `out` row by row.
pub fn run(request: &Request, out: Out) -> Result<Vec<Row>> {
    let (dataset, runs) = (request.dataset, request.runs);
    let (profile, slot) = super::default_slot()?;
    let builder =
        executor::build::Builder::new(profile.compiler(), crate::program::cache_dir()?.join("builds"))?;
    out(&format!(
        "median of {runs} runs, {} dataset, tiles {TILE}; speedup = original / variant",
        dataset.name()
    ));
    out("| kernel | threads | original | isl | unified | unified/isl |");
    out("|---|---|---|---|---|---|");
    let mut evaluator = Evaluator { builder, slot, config: MeasureConfig::default(), jobs: 2 };
    let mut rows = Vec::new();
    for file in &request.files {
        let program = Arc::new(crate::program::load(file, dataset, &Default::default(), 0)?);
        let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("program");
        let original = codegen::original_program(&program.source, &program.scop)?;
        for threads in [1, 2] {
            evaluator.config = MeasureConfig { runs, threads: Some(threads), ..MeasureConfig::default() };
            let p = program.clone();
            let what = format!("{}: schedules and code generation, {threads} thread(s)", file.display());
            let variants = in_time(&what, request.timeout_s, move || variants(&p, threads))?;
            let reference = evaluator.reference(&original)?;
            let m = evaluator.evaluate(&reference, &variants)?;
            let base = reference.measurement.median_s.unwrap_or(f64::NAN);
            let speedup = |m: &Measurement| match m.median_s {
                Some(s) if m.is_ok() => format!("{:.2}×", base / s),
                _ => m.status.to_string(),
            };
            let versus = match (m[0].median_s, m[1].median_s) {
                (Some(i), Some(u)) if m[0].is_ok() && m[1].is_ok() => format!("{:.2}", i / u),
                _ => "-".into(),
            };
            out(&format!(
                "| {name} | {threads} | {} | {} | {} | {versus} |",
                crate::units::seconds(base),
                speedup(&m[0]),
                speedup(&m[1])
            ));
            rows.push(Row { kernel: name.to_string(), threads, original_s: base, variants: m });
        }
    }
    Ok(rows)
}

/// isl's and the unified scheduler's variants of `p` for `threads`, tiled.
fn variants(p: &Program, threads: usize) -> Result<[String; 2]> {
    let isl =
        space::reference::isl_schedule(&p.scop, &p.deps).context("isl's scheduler found no schedule")?;
    let target = if threads == 1 { Target::Seq } else { Target::Openmp };
    let knobs = UnifiedOptions { target, ..UnifiedOptions::default() };
    let unified = space::schedule::unified(&p.scop, &p.deps, None, &knobs.scheduler())
        .context("the unified scheduler found no schedule")?
        .tree;
    let tiles = Some(vec![TILE]);
    let isl_opts = CodegenOptions::for_point(tiles.clone(), threads, None);
    let unified_opts = CodegenOptions::for_point(tiles, threads, Some(&knobs));
    let generate = |tree: &str, opts: &CodegenOptions| {
        codegen::generate(&p.source, &p.scop, &p.deps, tree, opts).map(|v| v.program)
    };
    Ok([generate(&isl, &isl_opts)?, generate(&unified, &unified_opts)?])
}
