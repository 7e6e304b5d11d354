//! A GPU variant of `single`: its CUDA unit written and compiled (run on
//! the profile's GPU slot where there is one, else checked by nvcc), its
//! kernels and launches counted, its replay calling the unit.

use std::path::{Path, PathBuf};

use executor::evaluate::Evaluator;
use executor::machine::{Fingerprint, GpuSlot, MachineProfile};

use crate::capture::Capture;
use crate::error::{Context, Error, Result};
use crate::program::Program;

/// A GPU variant on the GPU: the compiler, the CUDA form, the slot and the device.
pub type OnGpu = (executor::cuda::Nvcc, codegen::Cuda, GpuSlot, Option<String>);

/// A GPU variant's kernels and how many of them run on one thread.
pub type Kernels = Option<(usize, usize)>;

/// A GPU variant's CUDA unit and host program written beside the variant
/// (`name`.cu, `name`.host.c in `out`), and what nvcc says of it: run on the
/// profile's GPU slot where there is one, else compiled for a check only.
pub fn cuda_files(
    out: &Path,
    name: &str,
    cuda: Option<&codegen::Cuda>,
    gpu: bool,
    gpu_slot: Option<GpuSlot>,
    profile: &MachineProfile,
) -> Result<(Option<PathBuf>, Option<String>, Option<OnGpu>)> {
    Ok(match cuda {
        Some(c) => {
            let unit = out.join(format!("{name}.cu"));
            std::fs::write(&unit, &c.unit).with_context(|| format!("{}: cannot write", unit.display()))?;
            let host = out.join(format!("{name}.host.c"));
            std::fs::write(&host, &c.program).with_context(|| format!("{}: cannot write", host.display()))?;
            match &gpu_slot {
                Some(slot) => {
                    let nvcc = executor::cuda::Nvcc::of(profile)
                        .map_err(|e| Error::input(format!("machine profile `{}`: {e}", profile.name)))?;
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

/// A GPU variant's kernels and its launches in one run, counted by a run
/// of the whole program with no arguments (not `counted`: a replayed
/// program's, which needs its own).
pub fn launches(
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
        .map_err(|e| Error::failed(format!("counting the launches: {e}")))?;
    Ok((Some((c.kernels, c.serial_kernels)), Some(n)))
}

/// On a GPU slot, a replayed variant's host program: the replay calling
/// the unit's host function.
pub fn replayed_on_gpu(
    program: &Program,
    captured: Option<&Capture>,
    on_gpu: Option<OnGpu>,
) -> Result<Option<OnGpu>> {
    Ok(match (captured, on_gpu) {
        (Some(cap), Some((nvcc, c, g, device))) => {
            let call = codegen::Exported { block: c.region.clone(), ..Default::default() };
            let program = crate::capture::replay(program, &call, cap)?;
            Some((nvcc, codegen::Cuda { program, ..c }, g, device))
        }
        (_, on_gpu) => on_gpu,
    })
}
