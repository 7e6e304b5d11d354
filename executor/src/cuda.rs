//! nvcc for GPU variants' CUDA units: where it is, a compile check (no GPU
//! needed) and the build of a CUDA variant: its unit compiled by nvcc, the
//! host program by the profile's compiler, linked with CUDA's static
//! runtime. PyPI's `nvidia-cuda-nvcc`, `-runtime`, `-crt` and `-cccl` make
//! a working nvcc on any Linux machine (under `nvidia/cu13/`); `.ci/run`
//! installs them and points `POLYTUNE_NVCC` at it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::build::{BuildOutcome, Builder, Linked};
use crate::machine::MachineProfile;
use crate::process::{run_limited, unique_suffix, End, Limits};

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
    compile(nvcc, &gencode(archs), unit, &unit.with_extension("o"), 4000).map(|_| ())
}

/// [`compile_check`] with ptxas's report of each kernel for each arch
/// (`-Xptxas -v`: registers, stack frame, spill stores and loads), which
/// is returned.
pub fn compile_report(nvcc: &Path, unit: &Path, archs: &[&str]) -> Result<String, String> {
    let mut flags = gencode(archs);
    flags.extend(["-Xptxas".to_string(), "-v".to_string()]);
    compile(nvcc, &flags, unit, &unit.with_extension("o"), 1 << 20)
}

/// The kernels in ptxas's report (`compile_report`) that spill to local
/// memory, each as its line of spills.
pub fn spills(report: &str) -> Vec<String> {
    report
        .lines()
        .filter(|l| l.contains("spill stores") && !l.contains(" 0 bytes spill stores, 0 bytes spill loads"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// `-O3` and a `-gencode` for each of `archs`.
fn gencode(archs: &[&str]) -> Vec<String> {
    let mut flags = vec!["-O3".to_string()];
    for arch in archs {
        let n = arch.trim_start_matches("sm_");
        flags.push("-gencode".into());
        flags.push(format!("arch=compute_{n},code=sm_{n}"));
    }
    flags
}

/// `nvcc FLAGS -c unit -o object`, within five minutes; its messages (at
/// most `keep` bytes of them).
fn compile(nvcc: &Path, flags: &[String], unit: &Path, object: &Path, keep: usize) -> Result<String, String> {
    let mut cmd = Command::new(nvcc);
    cmd.args(flags).arg("-c").arg(unit).arg("-o").arg(object);
    let run = run_limited(cmd, &Limits::default(), Duration::from_secs(300), keep)
        .map_err(|e| format!("{}: cannot run: {e}", nvcc.display()))?;
    match run.end {
        End::Exited(s) if s.success() => Ok(run.output.text()),
        End::Exited(s) => Err(format!("{s}: {}", run.output.text())),
        End::TimedOut => Err("timed out after 300 s".into()),
    }
}

/// nvcc as a machine profile names it, with its flags and version.
#[derive(Debug, Clone)]
pub struct Nvcc {
    pub path: PathBuf,
    pub flags: Vec<String>,
    /// The last line of `nvcc --version` (its release).
    pub version: String,
}

impl Nvcc {
    /// The profile's nvcc (else [`nvcc`]'s), checked by asking its version.
    pub fn of(profile: &MachineProfile) -> Result<Nvcc, String> {
        let path = match &profile.nvcc {
            Some(p) => PathBuf::from(p),
            None => nvcc().ok_or(
                "no nvcc: set `nvcc` in the machine profile, POLYTUNE_NVCC, PATH or CUDA_HOME".to_string(),
            )?,
        };
        let out = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run `{} --version`: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        if !out.status.success() || version.is_empty() {
            return Err(format!("`{} --version` failed", path.display()));
        }
        Ok(Nvcc { path, flags: profile.nvcc_flags.clone(), version })
    }

    /// The directory of CUDA's static runtime beside this nvcc (a
    /// toolkit's `lib64`, PyPI's `lib`), if it is not on the default path.
    fn runtime_dir(&self) -> Option<PathBuf> {
        let top = self.path.parent()?.parent()?;
        ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]
            .iter()
            .map(|d| top.join(d))
            .find(|d| d.join("libcudart_static.a").is_file())
    }
}

/// Builds a CUDA variant: `unit` by nvcc into an object (cached by its
/// text, nvcc and flags), then `host` (the program calling the unit's
/// host function) by `builder` linked with it and CUDA's runtime. A
/// failure of either is a compile error of the variant.
pub fn build(builder: &Builder, nvcc: &Nvcc, host: &str, unit: &str) -> BuildOutcome {
    let key = unit_key(nvcc, unit);
    let dir = builder.cache_dir().join("cuda");
    let object = dir.join(format!("{key}.o"));
    let started = std::time::Instant::now();
    if !object.is_file() {
        let failed = |message: String| BuildOutcome::Failed { message };
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return failed(format!("{}: {e}", dir.display()));
        }
        let src = dir.join(format!("{key}.cu"));
        let tmp = dir.join(format!(".{key}.o.tmp-{}", unique_suffix()));
        if let Err(e) = std::fs::write(&src, unit) {
            return failed(format!("cannot write {}: {e}", src.display()));
        }
        if let Err(e) = compile(&nvcc.path, &nvcc.flags, &src, &tmp, 4000) {
            let _ = std::fs::remove_file(&tmp);
            return failed(format!("nvcc: {e}"));
        }
        if let Err(e) = std::fs::rename(&tmp, &object) {
            return failed(format!("cannot move the object to {}: {e}", object.display()));
        }
    }
    let mut libs: Vec<String> =
        nvcc.runtime_dir().map(|d| format!("-L{}", d.display())).into_iter().collect();
    libs.extend(["-lcudart_static", "-ldl", "-lpthread", "-lrt", "-lstdc++"].map(String::from));
    let nvcc_s = started.elapsed().as_secs_f64();
    match builder.build_linked(host, &Linked { objects: vec![object], libs, key }) {
        BuildOutcome::Built { binary, key, cached, compile_s } => {
            BuildOutcome::Built { binary, key, cached, compile_s: compile_s + nvcc_s }
        }
        failed => failed,
    }
}

/// The launches one run of a GPU variant makes: its counting program
/// ([`codegen::Cuda::counting`]) built by `builder` and run once.
pub fn count_launches(builder: &Builder, counting: &str, timeout: Duration) -> Result<u64, String> {
    let binary = match builder.build(counting) {
        BuildOutcome::Built { binary, .. } => binary,
        BuildOutcome::Failed { message } => {
            return Err(format!("the counting program does not build: {message}"))
        }
    };
    let dump = std::env::temp_dir().join(format!("polytune-launches-{}", unique_suffix()));
    let mut cmd = Command::new(&binary);
    cmd.env("POLYTUNE_DUMP_FILE", &dump).env_remove("POLYTUNE_TIME_FILE").stdout(std::process::Stdio::null());
    let run = run_limited(cmd, &Limits::default(), timeout, 4000);
    let bytes = std::fs::read(&dump).unwrap_or_default();
    let _ = std::fs::remove_file(&dump);
    match run.map_err(|e| format!("cannot run the counting program: {e}"))?.end {
        End::Exited(s) if s.success() => {}
        End::Exited(s) => return Err(format!("the counting program failed: {s}")),
        End::TimedOut => return Err(format!("the counting program ran past {} s", timeout.as_secs())),
    }
    let arrays = crate::runtime::parse_dump(&bytes).map_err(|e| e.to_string())?;
    let count = arrays.iter().find(|a| a.name == "polytune_launches").ok_or("no count in the dump")?;
    let bytes: [u8; 8] = count.data.as_slice().try_into().map_err(|_| "a count of the wrong size")?;
    Ok(i64::from_ne_bytes(bytes) as u64)
}

/// Where [`build`] keeps `unit` (compiled by `nvcc`) in `builder`'s cache.
pub fn unit_path(builder: &Builder, nvcc: &Nvcc, unit: &str) -> PathBuf {
    builder.cache_dir().join("cuda").join(format!("{}.cu", unit_key(nvcc, unit)))
}

/// The cache key of `unit` compiled by `nvcc` with its flags.
fn unit_key(nvcc: &Nvcc, unit: &str) -> String {
    let mut h = Sha256::new();
    for part in [unit, &nvcc.path.to_string_lossy(), &nvcc.flags.join("\0"), &nvcc.version] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}
