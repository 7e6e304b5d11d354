//! A program as the tuner takes it: its dataset sizes, its SCoP and dependences, how it
//! is built (`polytune.toml` or options), the machine profile it is measured on and the
//! cache that keeps its builds. A library module: commands, campaigns and strategies use
//! it, and it uses none of them.

use std::path::{Path, PathBuf};

use crate::choice::Choice;
use crate::error::{Context, Error, Result};
use executor::machine::{self, MachineProfile};
use model::deps::{self, Dependences};
use model::scop::{self, ExtractOptions, Scop, Source};
use serde::{Deserialize, Serialize};

/// PolyBench's five dataset sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Dataset {
    Mini,
    Small,
    Medium,
    Large,
    Extralarge,
}

impl Dataset {
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Mini => "MINI",
            Dataset::Small => "SMALL",
            Dataset::Medium => "MEDIUM",
            Dataset::Large => "LARGE",
            Dataset::Extralarge => "EXTRALARGE",
        }
    }
}

impl Choice for Dataset {
    const WHAT: &'static str = "dataset";
    const ALL: &'static [Dataset] =
        &[Dataset::Mini, Dataset::Small, Dataset::Medium, Dataset::Large, Dataset::Extralarge];
    fn name(self) -> &'static str {
        Dataset::name(self)
    }
}
crate::choice::named!(Dataset);

/// One SCoP of a file with its dependences.
#[derive(Serialize, Deserialize)]
pub struct Program {
    pub source: Source,
    pub scop: Scop,
    pub deps: Dependences,
}

/// Preprocessor arguments for `dataset`: `-D<SIZE>_DATASET`, then the
/// user's. A dataset the user defines (`-DMINI_DATASET` among `cc_args`)
/// replaces ours.
pub fn cpp_args(dataset: Dataset, cc_args: &[String]) -> Vec<String> {
    let user_dataset = cc_args.iter().any(|a| a.strip_prefix("-D").is_some_and(|d| d.ends_with("_DATASET")));
    let ours = (!user_dataset).then(|| format!("-D{}_DATASET", dataset.name()));
    ours.into_iter().chain(cc_args.iter().cloned()).collect()
}

/// The SHA-256 of `bytes` in hex: how a source file and a capture are named.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Extracts SCoP `index` of `file` under [`cpp_args`] (among the regions
/// `build.autodetect` finds, or those between pragmas) and analyses its
/// dependences.
pub fn load(file: &Path, dataset: Dataset, build: &ProgramConfig, index: usize) -> Result<Program> {
    let (source, mut scops) = scops(file, dataset, build)?;
    if index >= scops.len() {
        return Err(Error::input_at(
            file.display(),
            format!("has {} SCoP(s); SCoP {index} does not exist", scops.len()),
        ));
    }
    let scop = scops.swap_remove(index);
    let deps = deps::analyze(&scop).with_context(|| format!("{}: dependence analysis", file.display()))?;
    Ok(Program { source, scop, deps })
}

/// Every SCoP of `file` as [`load`] counts them, with the source they stand in.
pub fn scops(file: &Path, dataset: Dataset, build: &ProgramConfig) -> Result<(Source, Vec<Scop>)> {
    let opts = ExtractOptions {
        cc_args: cpp_args(dataset, &build.cc_args),
        autodetect: build.autodetect,
        ..ExtractOptions::default()
    };
    Ok(scop::extract(file, &opts)?)
}

/// A program that [`write`] saved, for a campaign's children.
pub fn read(path: &Path) -> Result<Program> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a saved program", path.display()))
}

/// Saves `program` at `path` whole or not at all (written aside, then
/// renamed), unless it is there already.
pub fn write(program: &Program, path: &Path) -> Result<()> {
    if path.is_file() {
        return Ok(());
    }
    let tmp = path.with_extension(format!("{}.tmp", executor::process::unique_suffix()));
    std::fs::write(&tmp, serde_json::to_string(program)?)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// A program's build description: `polytune.toml`, or the options.
/// Paths are absolute once resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProgramConfig {
    /// Further translation units (relative to the file's directory).
    pub sources: Vec<PathBuf>,
    /// Preprocessor arguments (`-I` relative to the file's directory).
    pub cc_args: Vec<String>,
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    /// The SCoPs are the regions `--autodetect` finds, not those between
    /// pragmas (`model::scop::detect`). Left out when false, so that other
    /// campaigns keep their keys.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub autodetect: bool,
}

impl ProgramConfig {
    pub fn is_empty(&self) -> bool {
        *self == ProgramConfig::default()
    }

    /// A program read for its model only: its preprocessor arguments, and
    /// whether its regions are found without pragmas.
    pub fn preprocessed(cc_args: &[String], autodetect: bool) -> ProgramConfig {
        ProgramConfig { cc_args: cc_args.to_vec(), autodetect, ..ProgramConfig::default() }
    }

    /// What the builder needs for `dataset`.
    pub fn extras(&self, dataset: Dataset) -> executor::build::Extras {
        executor::build::Extras {
            sources: self.sources.clone(),
            cpp_args: cpp_args(dataset, &self.cc_args),
            cflags: self.cflags.clone(),
            ldflags: self.ldflags.clone(),
        }
    }

    /// Relative paths made absolute against `dir`; every source must exist.
    fn anchored(mut self, dir: &Path, origin: &str) -> Result<ProgramConfig> {
        for s in &mut self.sources {
            let p = dir.join(&*s);
            *s = p.canonicalize().with_context(|| format!("{origin}: extra source {}", p.display()))?;
        }
        for a in &mut self.cc_args {
            if let Some(inc) = a.strip_prefix("-I").filter(|i| !i.is_empty() && Path::new(i).is_relative()) {
                *a = format!("-I{}", dir.join(inc).display());
            }
        }
        Ok(self)
    }

    /// The build description of `file`: `config` (default: `polytune.toml` next to the
    /// file, when there is one), then `cli`'s options (paths relative to the working
    /// directory).
    pub fn resolve(file: &Path, config: Option<&Path>, cli: ProgramConfig) -> Result<ProgramConfig> {
        let default = file.parent().unwrap_or(Path::new(".")).join("polytune.toml");
        let path = match config {
            Some(p) => Some(p.to_path_buf()),
            None => default.is_file().then_some(default),
        };
        let mut config = match path {
            Some(p) => {
                let text =
                    std::fs::read_to_string(&p).with_context(|| format!("{}: cannot read", p.display()))?;
                let c: ProgramConfig =
                    toml::from_str(&text).map_err(|e| Error::input_at(p.display(), e.to_string().trim()))?;
                c.anchored(p.parent().unwrap_or(Path::new(".")), &p.display().to_string())?
            }
            None => ProgramConfig::default(),
        };
        let cli = cli.anchored(&std::env::current_dir()?, "--source")?;
        config.sources.extend(cli.sources);
        config.cc_args.extend(cli.cc_args);
        config.cflags.extend(cli.cflags);
        config.ldflags.extend(cli.ldflags);
        config.autodetect |= cli.autodetect;
        Ok(config)
    }
}

/// How a program is built, as a command gives it: a build description
/// (`None`: `polytune.toml` next to the program, when there is one), then
/// options.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub config: Option<PathBuf>,
    pub options: ProgramConfig,
}

impl BuildOptions {
    /// The build description of `file`: its description, then the options.
    pub fn resolve(&self, file: &Path) -> Result<ProgramConfig> {
        ProgramConfig::resolve(file, self.config.as_deref(), self.options.clone())
    }
}

/// The profile shipped in `configs/machines/default.toml`, used when no
/// profile directory is around (polytune run from anywhere).
const DEFAULT_PROFILE: &str = include_str!("../../configs/machines/default.toml");

/// A profile by name (searched in `$POLYTUNE_CONFIG/machines`, then
/// `configs/machines`) or by path to a `.toml` file.
pub fn machine_profile(name: &str) -> Result<MachineProfile> {
    let path = Path::new(name);
    if path.extension().is_some_and(|e| e == "toml") {
        return Ok(MachineProfile::load(path)?);
    }
    let mut dirs = Vec::new();
    if let Ok(dir) = std::env::var("POLYTUNE_CONFIG") {
        dirs.push(PathBuf::from(dir).join("machines"));
    }
    dirs.push(PathBuf::from("configs/machines"));
    for dir in &dirs {
        if dir.join(format!("{name}.toml")).is_file() {
            return Ok(machine::load_named(dir, name)?);
        }
    }
    if name == "default" {
        return Ok(MachineProfile::parse(
            DEFAULT_PROFILE,
            Path::new("<built-in default>"),
            &machine::available_cores(),
        )?);
    }
    Err(Error::input(format!(
        "no machine profile `{name}` in {}",
        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
    )))
}

/// `$XDG_CACHE_HOME/polytune`, else `~/.cache/polytune`.
pub fn cache_dir() -> Result<PathBuf> {
    if let Ok(dir) = std::env::var("XDG_CACHE_HOME") {
        if !dir.is_empty() {
            return Ok(PathBuf::from(dir).join("polytune"));
        }
    }
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() => Ok(PathBuf::from(home).join(".cache/polytune")),
        _ => Err(Error::input("set XDG_CACHE_HOME or HOME: polytune keeps compiled variants there")),
    }
}
