//! nvcc for GPU variants' CUDA units: where it is, and a compile check
//! (no GPU needed). PyPI's `nvidia-cuda-nvcc`, `-runtime`, `-crt` and
//! `-cccl` make a working nvcc on any Linux machine (under
//! `nvidia/cu13/`); `.ci/run` installs them and points `POLYTUNE_NVCC` at it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{run_limited, End, Limits};

/// `POLYTUNE_NVCC`, else `nvcc` on `PATH`, else `$CUDA_HOME/bin/nvcc`.
pub fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("POLYTUNE_NVCC") {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("nvcc"))
        .find(|p| p.is_file());
    on_path.or_else(|| {
        let home = PathBuf::from(std::env::var_os("CUDA_HOME")?).join("bin/nvcc");
        home.is_file().then_some(home)
    })
}

/// Compiles `unit` to an object file for each of `archs` (`sm_80`) beside
/// it; nvcc's messages on failure.
pub fn compile_check(nvcc: &Path, unit: &Path, archs: &[&str]) -> Result<(), String> {
    let object = unit.with_extension("o");
    let mut cmd = Command::new(nvcc);
    cmd.args(["-O3", "-c"]);
    for arch in archs {
        let n = arch.trim_start_matches("sm_");
        cmd.arg("-gencode").arg(format!("arch=compute_{n},code=sm_{n}"));
    }
    cmd.arg(unit).arg("-o").arg(&object);
    let run = run_limited(cmd, &Limits::default(), Duration::from_secs(300), 4000)
        .map_err(|e| format!("{}: cannot run: {e}", nvcc.display()))?;
    match run.end {
        End::Exited(s) if s.success() => Ok(()),
        End::Exited(s) => Err(format!("{s}: {}", run.output.text())),
        End::TimedOut => Err("timed out after 300 s".into()),
    }
}
