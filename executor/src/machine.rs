//! Machine profiles (`configs/machines/*.toml`): the compiler, its flags and
//! the measurement slots; and the machine fingerprint that keys results.
//!
//! A *slot* is a set of logical cores that one measurement owns while it runs.
//! Slots of a profile are disjoint, so measurements may run in parallel on
//! different slots without sharing cores (docs/design.md, "The measurement protocol").
//!
//! Profile file format:
//!
//! ```toml
//! name = "default"                       # optional; defaults to the file stem
//! compiler = "gcc"
//! flags = ["-O3", "-march=native", "-fopenmp"]
//!
//! [[slots]]
//! name = "all"
//! cores = "all"      # or a list [0, 1], or a range text "0-3,6"
//!
//! [[slots]]           # a GPU slot: CUDA variants run on GPU 0
//! name = "h100"
//! gpu = 0
//! cores = [7]        # optional: where its host code runs (unpinned without)
//!
//! nvcc = "nvcc"                          # optional; else POLYTUNE_NVCC, PATH, CUDA_HOME
//! nvcc_flags = ["-O3", "-arch=native"]   # the default
//! ```
//!
//! `"all"` means every core this process may run on (its affinity mask), so the
//! default profile follows whatever cpuset a container or `taskset` gives it.

use crate::build::{BuildError, Compiler};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A disjoint set of logical cores owned by one measurement at a time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Slot {
    pub name: String,
    /// Sorted, distinct logical core numbers (as in `/proc/cpuinfo`'s `processor`).
    pub cores: Vec<usize>,
}

impl Slot {
    /// A slot of every core this process may run on.
    pub fn all_available() -> Slot {
        Slot { name: "all".to_string(), cores: available_cores() }
    }
}

/// A GPU that one measurement owns at a time, and the cores its host code
/// runs on (none: not pinned).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuSlot {
    pub name: String,
    /// The CUDA device number (`CUDA_VISIBLE_DEVICES` of its runs).
    pub gpu: u32,
    pub cores: Vec<usize>,
}

impl GpuSlot {
    /// The cores of its host code as a slot, for the measurement protocol.
    pub fn host(&self) -> Slot {
        Slot { name: self.name.clone(), cores: self.cores.clone() }
    }
}

/// A loaded, validated machine profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineProfile {
    pub name: String,
    pub compiler: String,
    pub flags: Vec<String>,
    /// The CPU slots: never empty.
    pub slots: Vec<Slot>,
    /// The GPU slots, where CUDA variants run.
    #[serde(default)]
    pub gpus: Vec<GpuSlot>,
    /// nvcc for CUDA variants (`None`: found as [`crate::cuda::nvcc`] says).
    #[serde(default)]
    pub nvcc: Option<String>,
    #[serde(default)]
    pub nvcc_flags: Vec<String>,
    /// The file it came from (for messages).
    pub source: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("{}: cannot read the machine profile: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: not a valid machine profile: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("no machine profile named `{name}` in {}; available: {}", dir.display(), if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    NotFound { name: String, dir: PathBuf, available: Vec<String> },
    #[error(transparent)]
    Compiler(#[from] BuildError),
    #[error("GPU slot `{slot}` (GPU {gpu}): {message}")]
    Gpu { slot: String, gpu: u32, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Option<String>,
    compiler: Option<String>,
    flags: Option<Vec<String>>,
    #[serde(default)]
    slots: Vec<SlotFile>,
    nvcc: Option<String>,
    nvcc_flags: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlotFile {
    name: Option<String>,
    cores: Option<CoreSpec>,
    gpu: Option<u32>,
}

/// nvcc's flags when the profile names none: the GPU nvcc finds on the
/// machine that builds (the one that measures).
pub const DEFAULT_NVCC_FLAGS: [&str; 2] = ["-O3", "-arch=native"];

#[derive(Deserialize)]
#[serde(untagged)]
enum CoreSpec {
    List(Vec<usize>),
    Text(String),
}

impl MachineProfile {
    /// Reads and validates a profile file against this process's cores.
    pub fn load(path: &Path) -> Result<MachineProfile, MachineError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| MachineError::Read { path: path.to_path_buf(), source })?;
        MachineProfile::parse(&text, path, &available_cores())
    }

    /// Parses profile text; `path` names it in errors, `available` is the set of
    /// cores that exist for us (a listed core outside it is an error).
    pub fn parse(text: &str, path: &Path, available: &[usize]) -> Result<MachineProfile, MachineError> {
        let invalid = |message: String| MachineError::Invalid { path: path.to_path_buf(), message };
        let file: ProfileFile = toml::from_str(text)
            .map_err(|e| MachineError::Parse { path: path.to_path_buf(), message: e.to_string() })?;
        let default = Compiler::default();
        let name = file
            .name
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "default".to_string());
        let compiler = file.compiler.unwrap_or(default.cc);
        let flags = file.flags.unwrap_or(default.flags);
        let available_set: BTreeSet<usize> = available.iter().copied().collect();
        let mut slots = Vec::new();
        let mut used: BTreeSet<usize> = BTreeSet::new();
        let mut gpus: Vec<GpuSlot> = Vec::new();
        for (i, s) in file.slots.into_iter().enumerate() {
            let slot_name = s.name.unwrap_or_else(|| format!("slot{i}"));
            if slots.iter().any(|x: &Slot| x.name == slot_name) || gpus.iter().any(|g| g.name == slot_name) {
                return Err(invalid(format!("two slots are named `{slot_name}`")));
            }
            let cores = match (s.cores, s.gpu) {
                (None, Some(_)) => BTreeSet::new(),
                (None, None) => {
                    return Err(invalid(format!("slot `{slot_name}` names neither `cores` nor `gpu`")))
                }
                (Some(spec), gpu) => {
                    let cores = slot_cores(&slot_name, spec, &available_set).map_err(invalid)?;
                    if cores.is_empty() && gpu.is_none() {
                        return Err(invalid(format!("slot `{slot_name}` has no cores")));
                    }
                    cores
                }
            };
            let shared: Vec<String> = cores.intersection(&used).map(|c| c.to_string()).collect();
            if !shared.is_empty() {
                return Err(invalid(format!(
                    "slot `{slot_name}` shares core(s) {} with an earlier slot; slots must be disjoint",
                    shared.join(", ")
                )));
            }
            used.extend(&cores);
            match s.gpu {
                Some(gpu) if gpus.iter().any(|g| g.gpu == gpu) => {
                    return Err(invalid(format!("slot `{slot_name}`: GPU {gpu} is already another slot's")))
                }
                Some(gpu) => gpus.push(GpuSlot { name: slot_name, gpu, cores: cores.into_iter().collect() }),
                None => slots.push(Slot { name: slot_name, cores: cores.into_iter().collect() }),
            }
        }
        // No CPU slot listed: every core no GPU slot holds, as one.
        if slots.is_empty() {
            let rest: Vec<usize> = available_set.difference(&used).copied().collect();
            if rest.is_empty() {
                return Err(invalid(
                    "the GPU slots hold every core: no core is left to run the original program".into(),
                ));
            }
            slots.push(Slot { name: "all".to_string(), cores: rest });
        }
        let nvcc_flags =
            file.nvcc_flags.unwrap_or_else(|| DEFAULT_NVCC_FLAGS.iter().map(|f| f.to_string()).collect());
        Ok(MachineProfile {
            name,
            compiler,
            flags,
            slots,
            gpus,
            nvcc: file.nvcc,
            nvcc_flags,
            source: path.to_path_buf(),
        })
    }

    /// The compiler this profile builds with.
    pub fn compiler(&self) -> Compiler {
        Compiler { cc: self.compiler.clone(), flags: self.flags.clone() }
    }
}

/// The cores `spec` names for slot `name`, each of which must exist.
fn slot_cores(name: &str, spec: CoreSpec, available: &BTreeSet<usize>) -> Result<BTreeSet<usize>, String> {
    let cores: BTreeSet<usize> = match spec {
        CoreSpec::List(v) => v.into_iter().collect(),
        CoreSpec::Text(t) if t.trim() == "all" => available.clone(),
        CoreSpec::Text(t) => parse_core_list(&t).map_err(|m| format!("slot `{name}`: cores {t:?}: {m}"))?,
    };
    let missing: Vec<String> = cores.difference(available).map(|c| c.to_string()).collect();
    if !missing.is_empty() {
        let available: Vec<usize> = available.iter().copied().collect();
        return Err(format!(
            "slot `{name}` lists core(s) {} that do not exist here (available: {}); edit the profile",
            missing.join(", "),
            format_core_list(&available)
        ));
    }
    Ok(cores)
}

/// Loads `<dir>/<name>.toml` (e.g. `configs/machines`, `default`).
pub fn load_named(dir: &Path, name: &str) -> Result<MachineProfile, MachineError> {
    let path = dir.join(format!("{name}.toml"));
    if !path.is_file() {
        return Err(MachineError::NotFound {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            available: list_profiles(dir),
        });
    }
    MachineProfile::load(&path)
}

/// Names of the profiles in `dir` (file stems of `*.toml`), sorted.
pub fn list_profiles(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// Parses Linux cpu-list text such as `0-3,6`.
pub fn parse_core_list(text: &str) -> Result<BTreeSet<usize>, String> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("`{s}` is not a core number"));
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range `{part}` is backwards"));
                }
                set.extend(a..=b);
            }
            None => {
                set.insert(num(part)?);
            }
        }
    }
    Ok(set)
}

fn format_core_list(cores: &[usize]) -> String {
    let mut sorted = cores.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { sorted[i].to_string() } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(",")
    }
}

/// The logical cores this process may run on (its affinity mask), sorted.
/// Falls back to `0..available_parallelism` if the mask cannot be read.
pub fn available_cores() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a zeroed cpu_set_t of the size we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = 8 * std::mem::size_of::<libc::cpu_set_t>();
            let cores: Vec<usize> = (0..n).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
            if !cores.is_empty() {
                return cores;
            }
        }
    }
    (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect()
}

/// Whether this machine runs under a hypervisor (x86's `hypervisor` CPU
/// flag in `/proc/cpuinfo`): its host may take cores away mid-run, which
/// spinning OpenMP threads feel most.
pub fn virtualised() -> bool {
    static VIRTUAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VIRTUAL.get_or_init(|| {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        cpuinfo.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
    })
}

/// One cache level of cpu0, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheInfo {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// As sysfs prints it, e.g. `48K`.
    pub size: String,
}

/// What results depend on: the same variant measured on two machines with
/// different fingerprints is two different results. Keys the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub cpu_model: String,
    pub logical_cores: usize,
    pub caches: Vec<CacheInfo>,
    /// Each GPU slot's device as `nvidia-smi` names it, with its driver;
    /// empty on profiles without GPU slots (so CPU fingerprints keep their ids).
    pub gpus: Vec<String>,
    pub compiler: String,
    /// First line of `<compiler> --version`.
    pub compiler_version: String,
    pub flags: Vec<String>,
}

impl Fingerprint {
    /// Reads this machine's CPU model, core count and cpu0's caches, and asks
    /// `compiler` for its version.
    pub fn detect(compiler: &Compiler) -> Result<Fingerprint, MachineError> {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Ok(Fingerprint {
            cpu_model: cpu_model(&cpuinfo),
            logical_cores: logical_cores(&cpuinfo),
            caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
            gpus: Vec::new(),
            compiler: compiler.cc.clone(),
            compiler_version: compiler.version()?,
            flags: compiler.flags.clone(),
        })
    }

    /// This fingerprint with the GPU of each of `slots` (its name and
    /// driver, from `nvidia-smi`): a profile with GPU slots measures there,
    /// and a slot whose GPU cannot be found is an error.
    pub fn with_gpus(mut self, slots: &[GpuSlot]) -> Result<Fingerprint, MachineError> {
        for s in slots {
            let fail = |message: String| MachineError::Gpu { slot: s.name.clone(), gpu: s.gpu, message };
            let out = std::process::Command::new("nvidia-smi")
                .args(["--query-gpu=name,driver_version", "--format=csv,noheader", "-i", &s.gpu.to_string()])
                .output()
                .map_err(|e| {
                    fail(format!("cannot run nvidia-smi ({e}): is there an NVIDIA GPU and its driver?"))
                })?;
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !out.status.success() || text.is_empty() {
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(fail(format!("nvidia-smi knows no such GPU: {} {}", text, err.trim())));
            }
            let (name, driver) = text.split_once(',').unwrap_or((&text, ""));
            self.gpus.push(format!("{} (driver {})", name.trim(), driver.trim()));
        }
        Ok(self)
    }

    /// A stable short id: the first 16 hex digits of SHA-256 over the
    /// fingerprint's JSON (fields in declaration order).
    pub fn id(&self) -> String {
        let json = serde_json::to_string(self).expect("fingerprint serialises");
        let digest = Sha256::digest(json.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

fn cpu_model(cpuinfo: &str) -> String {
    for key in ["model name", "Model", "cpu model", "Processor"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return v.split_whitespace().collect::<Vec<_>>().join(" ");
                }
            }
        }
    }
    "unknown".to_string()
}

fn logical_cores(cpuinfo: &str) -> usize {
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if online > 0 {
        return online as usize;
    }
    let n = cpuinfo.lines().filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor")).count();
    n.max(1)
}

fn caches(dir: &Path) -> Vec<CacheInfo> {
    let read = |p: PathBuf| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    let mut entries: Vec<(u32, CacheInfo)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let idx: u32 = name.strip_prefix("index")?.parse().ok()?;
            let p = e.path();
            Some((
                idx,
                CacheInfo {
                    level: read(p.join("level")).parse().unwrap_or(0),
                    kind: read(p.join("type")),
                    size: read(p.join("size")),
                },
            ))
        })
        .collect();
    entries.sort_by_key(|(i, _)| *i);
    entries.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: &str = include_str!("../../configs/machines/default.toml");

    #[test]
    fn default_profile_parses() {
        let p = MachineProfile::parse(DEFAULT, Path::new("default.toml"), &[0, 1, 2, 3]).unwrap();
        assert_eq!(p.name, "default");
        assert_eq!(p.compiler, "gcc");
        assert_eq!(p.slots, vec![Slot { name: "all".into(), cores: vec![0, 1, 2, 3] }]);
    }

    /// The shipped GPU profile keeps its GPU's host code off the CPU slot.
    #[test]
    fn gpu_profile_parses_with_disjoint_slots() {
        let text = include_str!("../../configs/machines/gpu.toml");
        let p = MachineProfile::parse(text, Path::new("gpu.toml"), &[0, 1, 2, 3]).unwrap();
        assert_eq!(p.slots, vec![Slot { name: "all".into(), cores: vec![1, 2, 3] }]);
        assert_eq!(p.gpus, vec![GpuSlot { name: "gpu0".into(), gpu: 0, cores: vec![0] }]);
    }

    #[test]
    fn missing_core_names_the_file() {
        let text = "compiler = \"gcc\"\n[[slots]]\nname = \"a\"\ncores = [0, 7]\n";
        let err = MachineProfile::parse(text, Path::new("configs/machines/big.toml"), &[0, 1]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("configs/machines/big.toml"), "{msg}");
        assert!(msg.contains("core(s) 7"), "{msg}");
    }

    #[test]
    fn slots_must_be_disjoint() {
        let text = "[[slots]]\nname = \"a\"\ncores = \"0-1\"\n[[slots]]\nname = \"b\"\ncores = [1]\n";
        let err = MachineProfile::parse(text, Path::new("m.toml"), &[0, 1, 2]).unwrap_err();
        assert!(err.to_string().contains("disjoint"), "{err}");
    }

    #[test]
    fn gpu_slots_parse_beside_cpu_slots() {
        let text = "nvcc_flags = [\"-O3\", \"-arch=sm_90\"]\n[[slots]]\nname = \"h100\"\ngpu = 0\n";
        let p = MachineProfile::parse(text, Path::new("g.toml"), &[0, 1]).unwrap();
        assert_eq!(p.gpus, vec![GpuSlot { name: "h100".into(), gpu: 0, cores: vec![] }]);
        assert_eq!(p.slots, vec![Slot { name: "all".into(), cores: vec![0, 1] }]);
        assert_eq!(p.nvcc_flags, vec!["-O3", "-arch=sm_90"]);
        // Host cores of a GPU slot are its own: the CPU slot gets the rest.
        let text = "[[slots]]\nname = \"g\"\ngpu = 1\ncores = [1]\n";
        let p = MachineProfile::parse(text, Path::new("g.toml"), &[0, 1, 2]).unwrap();
        assert_eq!((p.gpus[0].cores.clone(), p.slots[0].cores.clone()), (vec![1], vec![0, 2]));
        assert_eq!(p.nvcc_flags, DEFAULT_NVCC_FLAGS);
        for (text, says) in [
            ("[[slots]]\ngpu = 0\n[[slots]]\ngpu = 0\n", "already another slot's"),
            ("[[slots]]\nname = \"x\"\n", "neither `cores` nor `gpu`"),
            ("[[slots]]\ngpu = 0\ncores = [0]\n", "no core is left"),
        ] {
            let err = MachineProfile::parse(text, Path::new("g.toml"), &[0]).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains("g.toml"), "{err}");
        }
        assert!(MachineProfile::parse(DEFAULT, Path::new("d.toml"), &[0]).unwrap().gpus.is_empty());
    }

    #[test]
    fn core_lists() {
        assert_eq!(parse_core_list("0-2, 5").unwrap().into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 5]);
        assert!(parse_core_list("3-1").is_err());
        assert_eq!(format_core_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    #[test]
    fn fingerprint_id_is_stable_and_sensitive() {
        let f = Fingerprint {
            cpu_model: "X".into(),
            logical_cores: 2,
            caches: vec![CacheInfo { level: 1, kind: "Data".into(), size: "48K".into() }],
            gpus: vec![],
            compiler: "gcc".into(),
            compiler_version: "gcc 12".into(),
            flags: vec!["-O3".into()],
        };
        assert_eq!(f.id(), f.clone().id());
        assert_eq!(f.id().len(), 16);
        let mut g = f.clone();
        g.flags.push("-fopenmp".into());
        assert_ne!(f.id(), g.id());
    }

    #[test]
    fn this_machine() {
        let f = Fingerprint::detect(&Compiler::default()).unwrap();
        assert!(f.logical_cores >= 1);
        assert!(!f.compiler_version.is_empty());
    }
}
