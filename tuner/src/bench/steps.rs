//! `polytune bench`: per kernel, the time of extraction, dependence
//! analysis, isl's and our scheduler (with its lexmins and ILPs) and code
//! generation; then the throughput of compiling the variants with 1 and 2
//! parallel jobs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use codegen::CodegenOptions;
use executor::build::{Builder, Compiler};

use super::Out;
use crate::deadline::in_time;
use crate::error::Result;
use crate::program::Dataset;

pub struct Request {
    pub files: Vec<PathBuf>,
    /// Skip the compile-throughput part.
    pub no_compile: bool,
    /// The limit per kernel, in seconds.
    pub timeout_s: f64,
}

/// One kernel's row of the step table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub kernel: String,
    pub model_s: f64,
    pub deps_s: f64,
    pub isl_s: f64,
    pub ours_s: f64,
    pub codegen_s: f64,
    pub lexmins: usize,
    pub ilps: u64,
}

/// Compiling every kernel's variant with `jobs` parallel jobs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Compile {
    pub jobs: usize,
    pub variants: usize,
    pub seconds: f64,
    pub failed: usize,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Steps {
    pub rows: Vec<Row>,
    pub compile: Vec<Compile>,
}

/// The table, written to `out` row by row.
pub fn run(request: &Request, out: Out) -> Result<Steps> {
    let opts = CodegenOptions { tile_sizes: Some(vec![32]), openmp: true, ..Default::default() };
    out(&format!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>9}",
        "kernel", "model ms", "deps ms", "isl ms", "ours ms", "ours/isl", "lexmins", "ILPs", "codegen"
    ));
    let mut steps = Steps::default();
    let mut ratios = Vec::new();
    let mut programs = Vec::new();
    let mut codegen_ms = Vec::new();
    for f in &request.files {
        let (file, opts) = (f.clone(), opts.clone());
        let what = format!("{}: model, schedules and code generation", f.display());
        let (row, program) = in_time(&what, request.timeout_s, move || step_times(&file, &opts))?;
        ratios.push(row.ours_s / row.isl_s);
        codegen_ms.push(row.codegen_s * 1e3);
        out(&format!(
            "{:<16} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>6} {:>9.1}",
            row.kernel,
            row.model_s * 1e3,
            row.deps_s * 1e3,
            row.isl_s * 1e3,
            row.ours_s * 1e3,
            ratios.last().unwrap(),
            row.lexmins,
            row.ilps,
            row.codegen_s * 1e3
        ));
        programs.push(program);
        steps.rows.push(row);
    }
    codegen_ms.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    out(&format!(
        "our scheduler / isl's: median {:.1}x, max {:.1}x",
        ratios[ratios.len() / 2],
        ratios.last().unwrap()
    ));
    out(&format!(
        "codegen per variant: median {:.1} ms, max {:.1} ms",
        codegen_ms[codegen_ms.len() / 2],
        codegen_ms.last().copied().unwrap_or(0.0)
    ));
    if !request.no_compile {
        steps.compile = compile_throughput(&programs, out)?;
    }
    Ok(steps)
}

/// `programs` compiled with 1 and 2 jobs, each time in a fresh cache.
fn compile_throughput(programs: &[String], out: Out) -> Result<Vec<Compile>> {
    let profile = crate::program::machine_profile("default")?;
    let mut done = Vec::new();
    for jobs in [1, 2] {
        // A fresh cache each time: every variant really compiles.
        let dir = std::env::temp_dir().join(format!("polytune-bench-{}-{jobs}", std::process::id()));
        let builder =
            Builder::new(Compiler { cc: profile.compiler.clone(), flags: profile.flags.clone() }, &dir)?;
        let t = Instant::now();
        let outcomes = builder.build_all(programs, jobs)?;
        let s = t.elapsed().as_secs_f64();
        let failed = outcomes.iter().filter(|o| o.binary().is_none()).count();
        out(&format!(
            "compile {} variants with {jobs} job(s): {s:.1} s, {:.2} variants/s{}",
            programs.len(),
            programs.len() as f64 / s,
            if failed > 0 { format!(" ({failed} failed)") } else { String::new() }
        ));
        let _ = std::fs::remove_dir_all(&dir);
        done.push(Compile { jobs, variants: programs.len(), seconds: s, failed });
    }
    Ok(done)
}

/// One kernel's row, and its isl-scheduled program.
fn step_times(f: &Path, opts: &CodegenOptions) -> Result<(Row, String)> {
    let secs = |d: Duration| d.as_secs_f64();
    let t = Instant::now();
    let cc_args = vec![format!("-D{}_DATASET", Dataset::Mini.name())];
    let (source, mut scops) =
        model::scop::extract(f, &model::scop::ExtractOptions { cc_args, ..Default::default() })?;
    let model = t.elapsed();
    let scop = scops.swap_remove(0);
    let t = Instant::now();
    let deps = model::deps::analyze(&scop)?;
    let dep_time = t.elapsed();
    let t = Instant::now();
    let schedule = space::reference::isl_schedule(&scop, &deps)?;
    let isl = t.elapsed();
    let t = Instant::now();
    let ours = space::schedule::schedule(&scop, &deps, &Default::default())?;
    let ours_time = t.elapsed();
    let t = Instant::now();
    let v = codegen::generate(&source, &scop, &deps, &schedule, opts)?;
    let row = Row {
        kernel: f.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string(),
        model_s: secs(model),
        deps_s: secs(dep_time),
        isl_s: secs(isl),
        ours_s: secs(ours_time),
        codegen_s: secs(t.elapsed()),
        lexmins: ours.lexmins,
        ilps: ours.ilps,
    };
    Ok((row, v.program))
}
