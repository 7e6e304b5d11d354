//! `polytune bench ratios FILE...`: the unified scheduler with its default
//! knobs against isl's default scheduler and the original program, each
//! kernel sequential and on two threads. One original, isl and unified
//! measurement per row, taken back to back on one slot, so the ratios of a
//! row come from one run.

use std::path::PathBuf;

use anyhow::{Context, Result};
use codegen::{self, CodegenOptions};
use executor::evaluate::Evaluator;
use executor::measure::{MeasureConfig, Measurement};
use vocab::knobs::{Target, UnifiedOptions};

use super::common::{self, Dataset};

/// Tile size of both variants (isl's and ours), as in `polytune run`.
const TILE: u32 = 32;

pub fn run(files: &[PathBuf], dataset: Dataset, runs: usize, timeout: common::TimeoutArg) -> Result<()> {
    let profile = common::machine_profile("default")?;
    let slot = profile.slots.first().cloned().context("the default machine profile has no slot")?;
    let builder = executor::build::Builder::new(profile.compiler(), common::cache_dir()?.join("builds"))?;
    println!("median of {runs} runs, {} dataset, tiles {TILE}; speedup = original / variant", dataset.name());
    println!("| kernel | threads | original | isl | unified | unified/isl |");
    println!("|---|---|---|---|---|---|");
    let mut evaluator = Evaluator { builder, slot, config: MeasureConfig::default(), jobs: 2 };
    for file in files {
        let program = std::sync::Arc::new(common::load(file, dataset, &Default::default(), 0)?);
        let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("program");
        let original = codegen::original_program(&program.source, &program.scop)?;
        for threads in [1, 2] {
            evaluator.config = MeasureConfig { runs, threads: Some(threads), ..MeasureConfig::default() };
            let p = program.clone();
            let what = format!("{}: schedules and code generation, {threads} thread(s)", file.display());
            let variants = common::in_time(&what, timeout, move || variants(&p, threads))?;
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
            println!(
                "| {name} | {threads} | {} | {} | {} | {versus} |",
                crate::units::seconds(base),
                speedup(&m[0]),
                speedup(&m[1])
            );
        }
    }
    Ok(())
}

/// isl's and the unified scheduler's variants of `p` for `threads`, tiled.
fn variants(p: &common::Program, threads: usize) -> Result<[String; 2]> {
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
