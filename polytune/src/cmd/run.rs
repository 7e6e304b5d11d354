//! `polytune run FILE --schedule ...`: one variant, built, timed and verified
//! against the original program.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use executor::evaluate::Evaluator;
use executor::machine::Fingerprint;
use executor::measure::{MeasureConfig, Measurement};
use executor::pipeline;
use executor::verify::Tolerance;
use serde::Serialize;
use vocab::knobs::{Point, Scheduler};

use super::common::{self, Dataset};

#[derive(clap::Args)]
pub struct Args {
    /// The C file holding `#pragma scop` regions.
    file: PathBuf,
    /// `original` (the identity schedule through isl's code generator), `isl`
    /// (isl's scheduler, default options), `unified` (our scheduler, original
    /// fusion) or a file holding an isl schedule tree.
    #[arg(long, default_value = "original")]
    schedule: String,
    /// A script of Clay transformations (as `polytune explain` prints them), replayed on
    /// the original program and checked legal, instead of `--schedule` (`polytune apply
    /// FILE --script S` is the same command). Its code steps (tile, point-order,
    /// tile-order, wavefront, unroll-jam, micro-tile, fission, parallelize, vectorize),
    /// if any, replace --tile and the simd, unroll_jam, micro_tile and fission knobs.
    #[arg(long, value_name = "FILE", conflicts_with = "schedule")]
    script: Option<PathBuf>,
    /// PolyBench dataset size (passed as -D<SIZE>_DATASET).
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Tile size for permutable bands, or a shape such as 32x32x256
    /// (outermost first, the last size repeating); 0 disables tiling.
    /// Default: 32, except for `original` and scripts, which are not tiled.
    #[arg(long, value_parser = crate::campaign::grid::parse_tile)]
    tile: Option<crate::campaign::grid::Tiles>,
    /// OpenMP threads (default: every core of the measurement slot).
    #[arg(long, value_parser = common::at_least_one)]
    threads: Option<usize>,
    /// A knob, `KNOB=VALUE`; repeatable. The unified scheduler's (with
    /// `--schedule unified`): target, hlim, spatial, posttile_reorder,
    /// consecutivity, wavefront, line_bytes; code generation's (any
    /// schedule): restrict, simd, unroll_jam, omp_schedule.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    set: Vec<String>,
    /// Which SCoP of the file, counted from 0.
    #[arg(long, default_value_t = 0)]
    scop: usize,
    /// Relative tolerance when comparing outputs with the original's.
    #[arg(long, default_value_t = Tolerance::default().relative)]
    tolerance: f64,
    /// Timed runs (after one warm-up).
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Machine profile: a name in configs/machines or a path to a .toml file.
    #[arg(long, default_value = "default")]
    machine: String,
    /// Where the generated sources are kept.
    #[arg(long, default_value = "polytune-out")]
    out: PathBuf,
    #[command(flatten)]
    build: common::BuildArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// What to do when the measurement slot's cores are busy with other
    /// processes just before measuring: warn (and record the load with the
    /// measurement), wait for quiet, or fail.
    #[arg(long, value_parser = crate::choice::choice::<crate::noise::OnNoise>(), default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    #[command(flatten)]
    timeout: common::TimeoutArg,
    #[command(flatten)]
    replay: common::ReplayArgs,
}

#[derive(Serialize)]
struct Report {
    file: PathBuf,
    schedule: String,
    /// The Clay script replayed instead of `schedule`.
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<PathBuf>,
    dataset: Dataset,
    status: executor::measure::Status,
    reason: String,
    median_s: Option<f64>,
    spread: Option<f64>,
    samples: Vec<f64>,
    original: Measurement,
    speedup: Option<f64>,
    source: PathBuf,
    original_source: PathBuf,
    codegen_s: f64,
    /// A GPU variant (`target=gpu`): measured as its emulation on the CPU.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    emulated: bool,
    /// The slot's cores that were busy with other processes when measuring
    /// began (`--on-noise warn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    noise: Option<String>,
    /// The GPU that ran its CUDA form (a profile's GPU slot), and the median
    /// of its kernel times (CUDA events; `median_s` is the region's time
    /// with allocation and copies).
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<String>,
    /// A GPU variant's kernels (how many run on one thread), and its
    /// launches in one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    kernels: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    serial_kernels: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    launches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel_s: Option<f64>,
    /// Its CUDA unit, written next to the sources, and what nvcc said of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    cuda: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nvcc: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let knobs = knobs_of(&args)?;
    let gpu_target = knobs.gpu_target;
    let build = args.build.resolve(&args.file)?;
    let program = std::sync::Arc::new(common::load(&args.file, args.dataset, &build, args.scop)?);
    let capturing = args.replay.invocation();
    // A replayed region gets its inputs from the capturing run, which may read them.
    if capturing.is_none() {
        model::scop::check_runnable(&program.source, &program.scop)?;
    }
    let profile = common::machine_profile(&args.machine)?;
    let Some(slot) = profile.slots.first().cloned() else {
        bail!("machine profile `{}` has no slot", profile.name)
    };
    let point = point_of(&args, knobs, slot.cores.len());
    let threads = point.threads;
    let at = format!("{}:{}", args.file.display(), program.scop.start.line);
    let Generated { program: variant, cuda, exported, gpu, codegen_s } =
        generate(&args, &program, &point, gpu_target, &at)?;
    let original = codegen::original_program(&program.source, &program.scop)
        .context(at.clone() + ": the original SCoP")?;

    let (name, source, original_source) = written(&args, &variant, &original)?;
    // A GPU slot runs the CUDA form; without one it is emulated on the CPU.
    let gpu_slot = profile.gpus.first().filter(|_| gpu).cloned();
    let cuda_form = cuda.clone();
    let (cuda, nvcc, on_gpu) = cuda_files(&args, &name, cuda.as_ref(), gpu, gpu_slot, &profile)?;
    let config = MeasureConfig {
        runs: args.runs,
        threads: Some(threads),
        tolerance: Tolerance { relative: args.tolerance },
        env: point.code.run_env(),
        ..MeasureConfig::default()
    };
    let builder = executor::build::Builder::new(profile.compiler(), common::cache_dir()?.join("builds"))?
        .with_extras(&build.extras(args.dataset))?;
    let (original, variant, captured) = match &capturing {
        None => (original, variant, None),
        Some(how) => replayed(&at, how, &builder, &program, exported.as_ref(), [&original_source, &source])?,
    };
    let on_gpu = replayed_on_gpu(&program, captured.as_ref(), on_gpu)?;
    let config = MeasureConfig { replayed: captured.is_some(), ..config };
    let builder = match captured {
        Some(_) => tuner::capture::replaying(&builder)?,
        None => builder,
    };
    let evaluator = Evaluator { builder, slot, config, jobs: 2 };
    let mut slots: Vec<(&str, &[usize])> = vec![(&evaluator.slot.name, &evaluator.slot.cores)];
    if let Some((_, _, g, _)) = &on_gpu {
        slots.push((&g.name, &g.cores));
    }
    let noise = crate::noise::Noise::new(args.on_noise).check(&slots, &|| false)?;
    let reference = evaluator.reference(&original)?;
    if let Some(cap) = &captured {
        tuner::capture::check_reproduced(cap, &reference, evaluator.config.tolerance).context(at.clone())?;
    }
    // Kernels in the unit and launches in one run: what the mapping costs
    // in host-device round trips.
    let (kernels, launches) = launches(&evaluator, cuda_form.as_ref(), captured.is_none())?;
    let (m, device) = measure_variant(&evaluator, &reference, variant, on_gpu.as_ref())?;
    if let Some(hint) = crate::noise::spread_hint(threads, &m, evaluator.config.spread_threshold) {
        eprintln!("warning: {hint}");
    }
    let speedup = match (reference.measurement.median_s, m.median_s) {
        (Some(a), Some(b)) if b > 0.0 && m.is_ok() => Some(a / b),
        _ => None,
    };
    let report = Report {
        file: args.file.clone(),
        schedule: args.schedule.clone(),
        script: args.script.clone(),
        dataset: args.dataset,
        status: m.status,
        reason: m.reason.clone(),
        median_s: m.median_s,
        spread: m.spread,
        samples: m.samples.clone(),
        original: reference.measurement,
        speedup,
        source,
        original_source,
        codegen_s,
        emulated: gpu && device.is_none(),
        noise,
        kernels: kernels.map(|k| k.0),
        serial_kernels: kernels.map(|k| k.1),
        launches,
        kernel_s: executor::measure::median(&m.kernel_samples),
        device,
        cuda,
        nvcc,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(())
}

/// `--set`'s knobs, parsed.
struct Knobs {
    /// The unified scheduler's.
    scheduler: vocab::knobs::UnifiedOptions,
    /// Code generation's.
    code: vocab::knobs::CodeOptions,
    /// `target=gpu`: any schedule mapped to the GPU.
    gpu_target: bool,
}

/// `--set`'s knobs; the scheduler's are refused unless `--schedule unified`
/// is the scheduler they shape.
fn knobs_of(args: &Args) -> Result<Knobs> {
    let knobs = vocab::knobs::UnifiedOptions::default().with_settings(&args.set)?;
    let code = vocab::knobs::CodeOptions::default().with_settings(&args.set)?;
    // `target=gpu` maps any schedule to the GPU (code generation does it);
    // the scheduler's other knobs shape our schedule only.
    let gpu_target = knobs.target == vocab::knobs::Target::Gpu;
    let scheduler_knobs = args.set.iter().any(|s| {
        let knob = s.split('=').next().unwrap_or("").trim();
        !(vocab::knobs::is_code_knob(knob) || knob == "target" && gpu_target)
    });
    if scheduler_knobs && args.schedule != "unified" {
        bail!("--set: the scheduler's knobs apply to --schedule unified only (code knobs, and target=gpu, to any)");
    }
    Ok(Knobs { scheduler: knobs, code, gpu_target })
}

/// The point the variant is generated from: `--schedule`'s scheduler,
/// `--tile`'s tiles, the threads (default: the slot's `cores`) and the knobs.
fn point_of(args: &Args, knobs: Knobs, cores: usize) -> Point {
    // As the measurement will run it: one thread gets no OpenMP pragmas.
    let threads = args.threads.unwrap_or(cores).max(1);
    let tiles = match &args.tile {
        Some(t) => t.clone(),
        // A script says its own tiles (code steps), if any.
        None if args.schedule == "original" || args.script.is_some() => None,
        None => Some(vec![32]),
    };
    let scheduler = match args.schedule.as_str() {
        "original" => Scheduler::Original,
        "isl" if knobs.gpu_target => Scheduler::IslGpu,
        "isl" => Scheduler::Isl,
        "unified" => Scheduler::Unified { preorder: None, options: knobs.scheduler },
        // A schedule file: code generation takes the point's tiles and threads only.
        _ => Scheduler::Original,
    };
    Point { scheduler, tiles, threads, code: knobs.code }
}

/// The variant as code generation gave it.
struct Generated {
    program: String,
    /// Its CUDA form, for a GPU target.
    cuda: Option<codegen::Cuda>,
    /// Its region as replays call it.
    exported: Option<codegen::Exported>,
    /// Whether it was generated for the GPU.
    gpu: bool,
    /// How long code generation took, in seconds.
    codegen_s: f64,
}

/// The variant of `point` generated from its schedule tree, within
/// `--timeout`; `at` names the SCoP in errors.
fn generate(
    args: &Args,
    program: &std::sync::Arc<common::Program>,
    point: &Point,
    gpu_target: bool,
    at: &str,
) -> Result<Generated> {
    let mut opts = pipeline::codegen_options(point);
    if gpu_target {
        (opts.gpu, opts.openmp) = (true, false);
    }
    let schedule = schedule_for(args, program, point, &mut opts)?;
    let started = std::time::Instant::now();
    let gpu = opts.gpu;
    let (variant, cuda, exported) = {
        let (p, what) = (program.clone(), format!("{at}: code generation"));
        common::in_time(&what.clone(), args.timeout, move || {
            let v =
                pipeline::generate_variant(&p.source, &p.scop, &p.deps, &opts, &schedule).context(what)?;
            Ok((v.program, v.cuda, v.exported))
        })?
    };
    let codegen_s = started.elapsed().as_secs_f64();
    Ok(Generated { program: variant, cuda, exported, gpu, codegen_s })
}

/// The variant measured against `reference`: its CUDA form on the GPU where
/// it has one, else its program on the CPU; and the device it ran on.
fn measure_variant(
    evaluator: &Evaluator,
    reference: &executor::evaluate::Reference,
    variant: String,
    on_gpu: Option<&OnGpu>,
) -> Result<(Measurement, Option<String>)> {
    Ok(match on_gpu {
        Some((nvcc, c, g, device)) => {
            let built = executor::cuda::build(&evaluator.builder, nvcc, &c.program, &c.unit);
            let on = Evaluator {
                builder: evaluator.builder.clone(),
                slot: g.host(),
                config: evaluator.config.on_gpu(g),
                jobs: evaluator.jobs,
            };
            (on.measure(reference, &built, None), device.clone())
        }
        None => (evaluator.evaluate(reference, &[variant])?.remove(0), None),
    })
}

/// The variant's and the original's programs written to `--out`: the
/// variant's name, and both paths (variant first).
fn written(args: &Args, variant: &str, original: &str) -> Result<(String, PathBuf, PathBuf)> {
    let stem = args.file.file_stem().and_then(|s| s.to_str()).unwrap_or("program");
    let named = args.script.as_deref().unwrap_or(Path::new(&args.schedule));
    let label = named.file_stem().and_then(|s| s.to_str()).unwrap_or("schedule");
    std::fs::create_dir_all(&args.out).with_context(|| format!("{}: cannot create", args.out.display()))?;
    let name = format!("{stem}.{}.{label}", args.dataset.name());
    let source = args.out.join(format!("{name}.c"));
    let original_source = args.out.join(format!("{stem}.{}.original-program.c", args.dataset.name()));
    for (path, text) in [(&source, variant), (&original_source, original)] {
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok((name, source, original_source))
}

/// A GPU variant's kernels and how many of them run on one thread.
type Kernels = Option<(usize, usize)>;

/// A GPU variant's kernels and its launches in one run, counted by a run
/// of the whole program with no arguments (not `counted`: a replayed
/// program's, which needs its own).
fn launches(
    evaluator: &Evaluator,
    cuda: Option<&codegen::Cuda>,
    counted: bool,
) -> Result<(Kernels, Option<u64>)> {
    let Some(c) = cuda else { return Ok((None, None)) };
    if !counted {
        return Ok((Some((c.kernels, c.serial_kernels)), None));
    }
    let limit = std::time::Duration::from_secs(600);
    let n = executor::cuda::count_launches(&evaluator.builder, &c.counting, limit)
        .map_err(|e| anyhow::anyhow!("counting the launches: {e}"))?;
    Ok((Some((c.kernels, c.serial_kernels)), Some(n)))
}

/// On a GPU slot, a replayed variant's host program: the replay calling
/// the unit's host function.
fn replayed_on_gpu(
    program: &common::Program,
    captured: Option<&tuner::capture::Capture>,
    on_gpu: Option<OnGpu>,
) -> Result<Option<OnGpu>> {
    Ok(match (captured, on_gpu) {
        (Some(cap), Some((nvcc, c, g, device))) => {
            let call = codegen::Exported { block: c.region.clone(), ..Default::default() };
            let program = tuner::capture::replay(program, &call, cap)?;
            Some((nvcc, codegen::Cuda { program, ..c }, g, device))
        }
        (_, on_gpu) => on_gpu,
    })
}

/// The original's and the variant's (`region`'s) programs replayed from one
/// capture made as `how` says, each written to its path (original first).
fn replayed(
    at: &str,
    how: &tuner::capture::Invocation,
    builder: &executor::build::Builder,
    program: &common::Program,
    region: Option<&codegen::Exported>,
    paths: [&Path; 2],
) -> Result<(String, String, Option<tuner::capture::Capture>)> {
    let Some(region) = region else { bail!("{at}: code generation gave no form of the region to replay") };
    let cap = tuner::capture::capture(builder, program, how, std::time::Duration::from_secs(3600))?;
    let original = tuner::capture::replay_original(program, &cap)?;
    let variant = tuner::capture::replay(program, region, &cap)?;
    for (path, text) in paths.iter().zip([&original, &variant]) {
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok((original, variant, Some(cap)))
}

/// The schedule tree `run` generates code from: a script's (its code steps
/// then go into `opts`), a scheduler's (within `--timeout`) or a file's.
fn schedule_for(
    args: &Args,
    program: &std::sync::Arc<common::Program>,
    point: &Point,
    opts: &mut codegen::CodegenOptions,
) -> Result<String> {
    Ok(match (&args.script, args.schedule.as_str()) {
        (Some(path), _) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
            let ctx = model::isl::new_context();
            let applied = space::clay::apply_script(&ctx, &program.scop, &program.deps, &text)
                .with_context(|| format!("{}", path.display()))?;
            if !applied.code.is_empty() {
                // The script says band by band what the options would say for all.
                let knob = |s: &String| ["simd=", "unroll_jam=", "fission="].iter().any(|k| s.starts_with(k));
                if args.tile.is_some() || args.set.iter().any(knob) {
                    bail!(
                        "{}: the script's code steps tile, unroll, split and vectorise its loops; leave out --tile, --set simd, --set unroll_jam and --set fission",
                        path.display()
                    );
                }
                opts.plan = Some(applied.code);
            }
            space::clay::to_banded_tree(&ctx, &applied.form, &program.scop, &program.deps)?
        }
        (None, "original" | "isl" | "unified") => {
            let (p, name, point) = (program.clone(), args.schedule.clone(), point.clone());
            let what = format!("{}: {name} scheduling", args.file.display());
            common::in_time(&what, args.timeout, move || {
                pipeline::schedule_of(&p.scop, &p.deps, &point).map_err(|e| {
                    let who = if name == "isl" { "isl's scheduler" } else { "the unified scheduler" };
                    anyhow::anyhow!(e).context(format!("{who} found no schedule for this SCoP"))
                })
            })?
        }
        (None, path) => std::fs::read_to_string(path).with_context(|| {
            format!("{path}: cannot read the schedule (expected original, isl, unified or a file)")
        })?,
    })
}

/// A GPU variant on the GPU: the compiler, the CUDA form, the slot and the device.
type OnGpu = (executor::cuda::Nvcc, codegen::Cuda, executor::machine::GpuSlot, Option<String>);

/// A GPU variant's CUDA unit and host program written beside the variant
/// (`name`.cu, `name`.host.c), and what nvcc says of it: run on the profile's
/// GPU slot where there is one, else compiled for a check only.
fn cuda_files(
    args: &Args,
    name: &str,
    cuda: Option<&codegen::Cuda>,
    gpu: bool,
    gpu_slot: Option<executor::machine::GpuSlot>,
    profile: &executor::machine::MachineProfile,
) -> Result<(Option<PathBuf>, Option<String>, Option<OnGpu>)> {
    Ok(match cuda {
        Some(c) => {
            let unit = args.out.join(format!("{name}.cu"));
            std::fs::write(&unit, &c.unit).with_context(|| format!("{}: cannot write", unit.display()))?;
            let host = args.out.join(format!("{name}.host.c"));
            std::fs::write(&host, &c.program).with_context(|| format!("{}: cannot write", host.display()))?;
            match &gpu_slot {
                Some(slot) => {
                    let nvcc = executor::cuda::Nvcc::of(profile)
                        .map_err(|e| anyhow::anyhow!("machine profile `{}`: {e}", profile.name))?;
                    let said = format!("{} ({}) {}", nvcc.path.display(), nvcc.version, nvcc.flags.join(" "));
                    let fingerprint = Fingerprint::detect(&profile.compiler())?;
                    let device = fingerprint.with_gpus(std::slice::from_ref(slot))?.gpus.into_iter().next();
                    (Some(unit), Some(said), Some((nvcc, c.clone(), slot.clone(), device)))
                }
                None => {
                    let said = match executor::cuda::nvcc() {
                        None => "not found (set POLYTUNE_NVCC or put nvcc on PATH)".to_string(),
                        Some(nvcc) => match executor::cuda::compile_check(&nvcc, &unit, &["sm_80"]) {
                            Ok(()) => format!("compiled for sm_80 by {}", nvcc.display()),
                            Err(e) => format!("failed: {e}"),
                        },
                    };
                    (Some(unit), Some(said), None)
                }
            }
        }
        None if gpu => {
            (None, Some("no CUDA form: the region cannot be a function of its arrays".into()), None)
        }
        None => (None, None, None),
    })
}

fn print_text(r: &Report) {
    let time = |m: Option<f64>, s: Option<f64>| match (m, s) {
        (Some(m), Some(s)) => format!("{m:.6} s (spread {:.1}%)", 100.0 * s),
        _ => "-".to_string(),
    };
    match &r.script {
        Some(script) => println!("{} [{}] script {}", r.file.display(), r.dataset.name(), script.display()),
        None => println!("{} [{}] schedule {}", r.file.display(), r.dataset.name(), r.schedule),
    }
    println!("  status:   {} ({})", r.status, r.reason);
    println!("  variant:  {}", time(r.median_s, r.spread));
    println!("  original: {}", time(r.original.median_s, r.original.spread));
    if let Some(rounding) = r.original.rounding_noise.as_ref().filter(|n| !n.is_empty()) {
        println!("  rounding noise in the original's outputs: {rounding}");
    }
    if let Some(s) = r.speedup {
        println!("  speedup:  {s:.2}x");
    }
    println!("  source:   {} (original: {})", r.source.display(), r.original_source.display());
    if let Some(noise) = &r.noise {
        println!("  noise:    measured while {noise}, by other processes");
    }
    if r.emulated {
        println!("  GPU:      measured as its emulation on the CPU (blocks and threads as loops)");
    }
    if let Some(device) = &r.device {
        let kernels = r.kernel_s.map(|k| format!("; kernels {k:.6} s of it")).unwrap_or_default();
        println!("  GPU:      ran on {device} (time with allocation and copies{kernels})");
    }
    if let Some(unit) = &r.cuda {
        println!("  CUDA:     {}", unit.display());
    }
    if let (Some(k), Some(serial), Some(l)) = (r.kernels, r.serial_kernels, r.launches) {
        println!("  kernels:  {k} ({serial} on one thread), launched {l} times in one run");
    }
    if let Some(said) = &r.nvcc {
        println!("  nvcc:     {said}");
    }
}
