//! The variant of `single`: the point its request makes (`--set`'s knobs,
//! the tiles, the threads), its schedule tree (a scheduler's, a file's or a
//! script's) and its code, within the request's time limit.

use std::sync::Arc;

use executor::pipeline;
use vocab::knobs::{Point, Scheduler};

use super::Request;
use crate::deadline::in_time;
use crate::error::{Context, Error, Result};
use crate::program::Program;

/// `--set`'s knobs, parsed.
pub struct Knobs {
    /// The unified scheduler's.
    scheduler: vocab::knobs::UnifiedOptions,
    /// Code generation's.
    code: vocab::knobs::CodeOptions,
    /// `target=gpu`: any schedule mapped to the GPU.
    pub gpu_target: bool,
}

/// The request's knobs; the scheduler's are refused unless `unified` is
/// the scheduler they shape.
pub fn knobs_of(request: &Request) -> Result<Knobs> {
    let knobs = vocab::knobs::UnifiedOptions::default().with_settings(&request.set)?;
    let code = vocab::knobs::CodeOptions::default().with_settings(&request.set)?;
    // `target=gpu` maps any schedule to the GPU (code generation does it);
    // the scheduler's other knobs shape our schedule only.
    let gpu_target = knobs.target == vocab::knobs::Target::Gpu;
    let scheduler_knobs = request.set.iter().any(|s| {
        let knob = s.split('=').next().unwrap_or("").trim();
        !(vocab::knobs::is_code_knob(knob) || knob == "target" && gpu_target)
    });
    if scheduler_knobs && request.schedule != "unified" {
        return Err(Error::input(
            "--set: the scheduler's knobs apply to --schedule unified only (code knobs, and target=gpu, to any)",
        ));
    }
    Ok(Knobs { scheduler: knobs, code, gpu_target })
}

/// The point the variant is generated from: the request's scheduler, its
/// tiles, the threads (default: the slot's `cores`) and the knobs.
pub fn point_of(request: &Request, knobs: Knobs, cores: usize) -> Point {
    // As the measurement will run it: one thread gets no OpenMP pragmas.
    let threads = request.threads.unwrap_or(cores).max(1);
    let tiles = match &request.tile {
        Some(t) => t.clone(),
        // A script says its own tiles (code steps), if any.
        None if request.schedule == "original" || request.script.is_some() => None,
        None => Some(vec![32]),
    };
    let scheduler = match request.schedule.as_str() {
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
pub struct Generated {
    pub program: String,
    /// Its CUDA form, for a GPU target.
    pub cuda: Option<codegen::Cuda>,
    /// Its region as replays call it.
    pub exported: Option<codegen::Exported>,
    /// Whether it was generated for the GPU.
    pub gpu: bool,
    /// How long code generation took, in seconds.
    pub codegen_s: f64,
}

/// The variant of `point` generated from its schedule tree, within the
/// request's limit; `at` names the SCoP in errors.
pub fn generate(
    request: &Request,
    program: &Arc<Program>,
    point: &Point,
    gpu_target: bool,
    at: &str,
) -> Result<Generated> {
    let mut opts = pipeline::codegen_options(point);
    if gpu_target {
        (opts.gpu, opts.openmp) = (true, false);
    }
    let schedule = schedule_for(request, program, point, &mut opts)?;
    let started = std::time::Instant::now();
    let gpu = opts.gpu;
    let (variant, cuda, exported) = {
        let (p, what) = (program.clone(), format!("{at}: code generation"));
        in_time(&what.clone(), request.timeout_s, move || {
            let v =
                pipeline::generate_variant(&p.source, &p.scop, &p.deps, &opts, &schedule).context(what)?;
            Ok((v.program, v.cuda, v.exported))
        })?
    };
    let codegen_s = started.elapsed().as_secs_f64();
    Ok(Generated { program: variant, cuda, exported, gpu, codegen_s })
}

/// The schedule tree the variant is generated from: a script's (its code
/// steps then go into `opts`), a scheduler's (within the limit) or a file's.
fn schedule_for(
    request: &Request,
    program: &Arc<Program>,
    point: &Point,
    opts: &mut codegen::CodegenOptions,
) -> Result<String> {
    Ok(match (&request.script, request.schedule.as_str()) {
        (Some(path), _) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
            let ctx = model::isl::new_context();
            let applied = space::clay::apply_script(&ctx, &program.scop, &program.deps, &text)
                .with_context(|| format!("{}", path.display()))?;
            if !applied.code.is_empty() {
                // The script says band by band what the options would say for all.
                let knob = |s: &String| ["simd=", "unroll_jam=", "fission="].iter().any(|k| s.starts_with(k));
                if request.tile.is_some() || request.set.iter().any(knob) {
                    return Err(Error::input_at(
                        path.display(),
                        "the script's code steps tile, unroll, split and vectorise its loops; leave out --tile, --set simd, --set unroll_jam and --set fission",
                    ));
                }
                opts.plan = Some(applied.code);
            }
            space::clay::to_banded_tree(&ctx, &applied.form, &program.scop, &program.deps)?
        }
        (None, "original" | "isl" | "unified") => {
            let (p, name, point) = (program.clone(), request.schedule.clone(), point.clone());
            let what = format!("{}: {name} scheduling", request.file.display());
            in_time(&what, request.timeout_s, move || {
                pipeline::schedule_of(&p.scop, &p.deps, &point).map_err(|e| {
                    let who = if name == "isl" { "isl's scheduler" } else { "the unified scheduler" };
                    Error::from(e).with_context(format!("{who} found no schedule for this SCoP"))
                })
            })?
        }
        (None, path) => std::fs::read_to_string(path).with_context(|| {
            format!("{path}: cannot read the schedule (expected original, isl, unified or a file)")
        })?,
    })
}
