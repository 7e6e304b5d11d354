//! `polytune bench`: the numbers docs/performance.md keeps —
//! extraction, dependence analysis, isl's and our scheduler (time, lexmins,
//! ILPs), code generation per kernel, and compile throughput with 1 and 2
//! parallel jobs. `bench search`, `bench ratios` and `bench peers` measure search
//! efficiency, the unified scheduler's speedups and the peers instead (one module each).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use codegen::{self, CodegenOptions};
use executor::build::{Builder, Compiler};

use super::common::{self, Dataset};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    mode: Option<Mode>,
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    /// Skip the compile-throughput part.
    #[arg(long)]
    no_compile: bool,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

#[derive(clap::Subcommand)]
enum Mode {
    /// Search efficiency: random sampling, halving and the model-based strategy against an
    /// exhaustive campaign on each file.
    Search(SearchArgs),
    /// The unified scheduler's default against isl's default and the original program,
    /// sequential and on two threads, on each file.
    Ratios(RatiosArgs),
    /// Transfer: from a store's measurements alone, how well the model's prior grown on the
    /// other kernels ranks each kernel's points, and how soon the model strategy replayed on
    /// them reaches a point within 5% of the best, cold and from the store.
    Transfer(TransferArgs),
    /// Peers: the original program built by clang with Polly, by gcc with Graphite and
    /// through Pluto's polycc in each of its settings (when installed), isl's and the
    /// Pluto-like points, and our points with the code-generation knobs, back to back and
    /// output-verified, with OpenBLAS's dgemm rate.
    Peers(PeersArgs),
}

#[derive(clap::Args)]
struct PeersArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// OpenMP threads of every variant, the parallel peers and dgemm.
    #[arg(long, default_value_t = 2, value_parser = common::at_least_one)]
    threads: usize,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
    /// How each file builds (PolyBench/C's official sources: `--cc-arg -I.../utilities
    /// --source .../utilities/polybench.c`), for the original, the peers and ours.
    #[command(flatten)]
    build: common::BuildArgs,
}

#[derive(clap::Args)]
struct SearchArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Fix a knob (`KNOB=VALUE`) to shrink the space; repeatable.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    settings: Vec<String>,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
}

#[derive(clap::Args)]
struct TransferArgs {
    #[command(flatten)]
    store: common::StoreArg,
    /// Campaigns' programs with fewer verified points are left out.
    #[arg(long, default_value_t = 8, value_parser = common::at_least_one)]
    min_points: usize,
}

#[derive(clap::Args)]
struct RatiosArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

fn files_or_polybench(files: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    if files.is_empty() {
        polybench_files()
    } else {
        Ok(files)
    }
}

pub fn run(args: Args) -> Result<()> {
    match args.mode {
        Some(Mode::Search(a)) => {
            return super::bench_search::run(&files_or_polybench(a.files)?, a.dataset, &a.settings, a.runs)
        }
        Some(Mode::Transfer(a)) => return super::bench_transfer::run(&a.store.open()?, a.min_points),
        Some(Mode::Ratios(a)) => {
            return super::bench_ratios::run(&files_or_polybench(a.files)?, a.dataset, a.runs, a.timeout)
        }
        Some(Mode::Peers(a)) => {
            let files = files_or_polybench(a.files)?;
            return super::bench_peers::run(&files, &a.build, a.dataset, a.threads, a.runs, a.timeout);
        }
        None => {}
    }
    let files = files_or_polybench(args.files)?;
    let opts = CodegenOptions { tile_sizes: Some(vec![32]), openmp: true, ..Default::default() };
    println!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>9}",
        "kernel", "model ms", "deps ms", "isl ms", "ours ms", "ours/isl", "lexmins", "ILPs", "codegen"
    );
    let mut ratios = Vec::new();
    let mut programs = Vec::new();
    let mut codegen_ms = Vec::new();
    for f in &files {
        let (file, opts) = (f.clone(), opts.clone());
        let what = format!("{}: model, schedules and code generation", f.display());
        let row = common::in_time(&what, args.timeout, move || step_times(&file, &opts))?;
        ratios.push(row.ours.as_secs_f64() / row.isl.as_secs_f64());
        codegen_ms.push(row.codegen.as_secs_f64() * 1e3);
        let name = f.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{name:<16} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>6} {:>9.1}",
            ms(row.model),
            ms(row.deps),
            ms(row.isl),
            ms(row.ours),
            ratios.last().unwrap(),
            row.lexmins,
            row.ilps,
            ms(row.codegen)
        );
        programs.push(row.program);
    }
    codegen_ms.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    println!(
        "our scheduler / isl's: median {:.1}x, max {:.1}x",
        ratios[ratios.len() / 2],
        ratios.last().unwrap()
    );
    println!(
        "codegen per variant: median {:.1} ms, max {:.1} ms",
        codegen_ms[codegen_ms.len() / 2],
        codegen_ms.last().copied().unwrap_or(0.0)
    );
    if args.no_compile {
        return Ok(());
    }
    let profile = common::machine_profile("default")?;
    for jobs in [1, 2] {
        // A fresh cache each time: every variant really compiles.
        let dir = std::env::temp_dir().join(format!("polytune-bench-{}-{jobs}", std::process::id()));
        let builder =
            Builder::new(Compiler { cc: profile.compiler.clone(), flags: profile.flags.clone() }, &dir)?;
        let t = Instant::now();
        let outcomes = builder.build_all(&programs, jobs)?;
        let s = t.elapsed().as_secs_f64();
        let failed = outcomes.iter().filter(|o| o.binary().is_none()).count();
        println!(
            "compile {} variants with {jobs} job(s): {s:.1} s, {:.2} variants/s{}",
            programs.len(),
            programs.len() as f64 / s,
            if failed > 0 { format!(" ({failed} failed)") } else { String::new() }
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// One kernel's row of the step table, and its isl-scheduled program.
struct StepTimes {
    model: Duration,
    deps: Duration,
    isl: Duration,
    ours: Duration,
    codegen: Duration,
    lexmins: usize,
    ilps: u64,
    program: String,
}

fn step_times(f: &Path, opts: &CodegenOptions) -> Result<StepTimes> {
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
    Ok(StepTimes {
        model,
        deps: dep_time,
        isl,
        ours: ours_time,
        codegen: t.elapsed(),
        lexmins: ours.lexmins,
        ilps: ours.ilps,
        program: v.program,
    })
}

fn polybench_files() -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for group in ["datamining", "linear-algebra", "medley", "stencils"] {
        for e in std::fs::read_dir(PathBuf::from("polybench").join(group))? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == "c") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
