//! One variant of a program, generated, built, timed and verified against
//! the original (`polytune run` and `apply`): from a scheduler, a schedule
//! file or a script of Clay transformations; on the CPU, or on a GPU slot
//! where the profile has one (`gpu`); the whole program, or its region
//! replayed from a capture of its inputs.

mod gpu;
mod schedule;
mod text;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use executor::evaluate::Evaluator;
use executor::measure::{MeasureConfig, Measurement};
use executor::verify::Tolerance;
use serde::Serialize;

use crate::campaign::grid::Tiles;
use crate::capture::{Capture, Invocation};
use crate::error::{Context, Error, Result};
use crate::noise::OnNoise;
use crate::program::{BuildOptions, Dataset, Program};
use gpu::OnGpu;

/// What to generate and how to measure it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The C file holding the SCoP.
    pub file: PathBuf,
    /// `original`, `isl`, `unified` or a file holding an isl schedule tree.
    pub schedule: String,
    /// A script of Clay transformations replayed instead of `schedule`.
    pub script: Option<PathBuf>,
    pub dataset: Dataset,
    /// Tile sizes (default: 32, except for `original` and scripts).
    pub tile: Option<Tiles>,
    /// OpenMP threads (default: every core of the measurement slot).
    pub threads: Option<usize>,
    /// `KNOB=VALUE` settings of the unified scheduler and code generation.
    pub set: Vec<String>,
    /// Which SCoP of the file, counted from 0.
    pub scop: usize,
    pub tolerance: f64,
    /// Timed runs, after one warm-up.
    pub runs: usize,
    /// The machine profile's name or path.
    pub machine: String,
    /// Where the generated sources are written.
    pub out: PathBuf,
    pub build: BuildOptions,
    pub on_noise: OnNoise,
    /// The limit on scheduling and code generation, in seconds.
    pub timeout_s: f64,
    /// The capturing run, where the region is replayed.
    pub capture: Option<Invocation>,
}

/// The variant's measurement against the original's, and where its files are.
#[derive(Serialize)]
pub struct Report {
    pub file: PathBuf,
    pub schedule: String,
    /// The Clay script replayed instead of `schedule`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
    pub dataset: Dataset,
    pub status: executor::measure::Status,
    pub reason: String,
    pub median_s: Option<f64>,
    pub spread: Option<f64>,
    pub samples: Vec<f64>,
    pub original: Measurement,
    pub speedup: Option<f64>,
    pub source: PathBuf,
    pub original_source: PathBuf,
    pub codegen_s: f64,
    /// A GPU variant (`target=gpu`): measured as its emulation on the CPU.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// The slot's cores that were busy with other processes when measuring
    /// began (`--on-noise warn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
    /// The GPU that ran its CUDA form (a profile's GPU slot), and the median
    /// of its kernel times (CUDA events; `median_s` is the region's time
    /// with allocation and copies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// A GPU variant's kernels (how many run on one thread), and its
    /// launches in one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_kernels: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_s: Option<f64>,
    /// Its CUDA unit, written next to the sources, and what nvcc said of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvcc: Option<String>,
    /// What the measurement's spread suggests, for standard error.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// The variant `request` asks for, generated, written to `request.out`,
/// built, measured and verified against the original.
pub fn run(request: &Request) -> Result<Report> {
    let knobs = schedule::knobs_of(request)?;
    let gpu_target = knobs.gpu_target;
    let build = request.build.resolve(&request.file)?;
    let program = Arc::new(crate::program::load(&request.file, request.dataset, &build, request.scop)?);
    let capturing = request.capture.as_ref();
    // A replayed region gets its inputs from the capturing run, which may read them.
    if capturing.is_none() {
        model::scop::check_runnable(&program.source, &program.scop)?;
    }
    let profile = crate::program::machine_profile(&request.machine)?;
    let Some(slot) = profile.slots.first().cloned() else {
        return Err(Error::input(format!("machine profile `{}` has no slot", profile.name)));
    };
    let point = schedule::point_of(request, knobs, slot.cores.len());
    let threads = point.threads;
    let at = format!("{}:{}", request.file.display(), program.scop.start.line);
    let schedule::Generated { program: variant, cuda, exported, gpu, codegen_s } =
        schedule::generate(request, &program, &point, gpu_target, &at)?;
    let original = codegen::original_program(&program.source, &program.scop)
        .context(at.clone() + ": the original SCoP")?;

    let (name, source, original_source) = written(request, &variant, &original)?;
    // A GPU slot runs the CUDA form; without one it is emulated on the CPU.
    let gpu_slot = profile.gpus.first().filter(|_| gpu).cloned();
    let cuda_form = cuda.clone();
    let (cuda, nvcc, on_gpu) = gpu::cuda_files(&request.out, &name, cuda.as_ref(), gpu, gpu_slot, &profile)?;
    let config = MeasureConfig {
        runs: request.runs,
        threads: Some(threads),
        tolerance: Tolerance { relative: request.tolerance },
        env: point.code.run_env(),
        ..MeasureConfig::default()
    };
    let builder =
        executor::build::Builder::new(profile.compiler(), crate::program::cache_dir()?.join("builds"))?
            .with_extras(&build.extras(request.dataset))?;
    let (original, variant, captured) = match capturing {
        None => (original, variant, None),
        Some(how) => replayed(&at, how, &builder, &program, exported.as_ref(), [&original_source, &source])?,
    };
    let on_gpu = gpu::replayed_on_gpu(&program, captured.as_ref(), on_gpu)?;
    let config = MeasureConfig { replayed: captured.is_some(), ..config };
    let builder = match captured {
        Some(_) => crate::capture::replaying(&builder)?,
        None => builder,
    };
    let evaluator = Evaluator { builder, slot, config, jobs: 2 };
    let mut slots: Vec<(&str, &[usize])> = vec![(&evaluator.slot.name, &evaluator.slot.cores)];
    if let Some((_, _, g, _)) = &on_gpu {
        slots.push((&g.name, &g.cores));
    }
    let noise = crate::noise::Noise::new(request.on_noise).check(&slots, &|| false)?;
    let reference = evaluator.reference(&original)?;
    if let Some(cap) = &captured {
        crate::capture::check_reproduced(cap, &reference, evaluator.config.tolerance).context(at.clone())?;
    }
    // Kernels in the unit and launches in one run: what the mapping costs
    // in host-device round trips.
    let (kernels, launches) = gpu::launches(&evaluator, cuda_form.as_ref(), captured.is_none())?;
    let (m, device) = measure_variant(&evaluator, &reference, variant, on_gpu.as_ref())?;
    let warnings: Vec<String> =
        crate::noise::spread_hint(threads, &m, evaluator.config.spread_threshold).into_iter().collect();
    let speedup = match (reference.measurement.median_s, m.median_s) {
        (Some(a), Some(b)) if b > 0.0 && m.is_ok() => Some(a / b),
        _ => None,
    };
    Ok(Report {
        file: request.file.clone(),
        schedule: request.schedule.clone(),
        script: request.script.clone(),
        dataset: request.dataset,
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
        warnings,
    })
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

/// The variant's and the original's programs written to `request.out`: the
/// variant's name, and both paths (variant first).
fn written(request: &Request, variant: &str, original: &str) -> Result<(String, PathBuf, PathBuf)> {
    let stem = request.file.file_stem().and_then(|s| s.to_str()).unwrap_or("program");
    let named = request.script.as_deref().unwrap_or(Path::new(&request.schedule));
    let label = named.file_stem().and_then(|s| s.to_str()).unwrap_or("schedule");
    let out = &request.out;
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let name = format!("{stem}.{}.{label}", request.dataset.name());
    let source = out.join(format!("{name}.c"));
    let original_source = out.join(format!("{stem}.{}.original-program.c", request.dataset.name()));
    for (path, text) in [(&source, variant), (&original_source, original)] {
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok((name, source, original_source))
}

/// The original's and the variant's (`region`'s) programs replayed from one
/// capture made as `how` says, each written to its path (original first).
fn replayed(
    at: &str,
    how: &Invocation,
    builder: &executor::build::Builder,
    program: &Program,
    region: Option<&codegen::Exported>,
    paths: [&Path; 2],
) -> Result<(String, String, Option<Capture>)> {
    let Some(region) = region else {
        return Err(Error::failed(format!("{at}: code generation gave no form of the region to replay")));
    };
    let cap = crate::capture::capture(builder, program, how, std::time::Duration::from_secs(3600))?;
    let original = crate::capture::replay_original(program, &cap)?;
    let variant = crate::capture::replay(program, region, &cap)?;
    for (path, text) in paths.iter().zip([&original, &variant]) {
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok((original, variant, Some(cap)))
}
