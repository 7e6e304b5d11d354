//! Compiles program sources into binaries, in parallel, through a cache.
//!
//! A binary is cached under a hash of everything that determines it: the
//! source text, the compiler command, its flags, its version line and the
//! runtime's source. A search proposes the same variant again and again (and
//! several processes may share one cache), so a hit must cost only a `stat`.
//!
//! Cache layout (`cache_dir/`):
//!
//! - `runtime/<key>.c`, `runtime/<key>.o`: the measurement runtime
//!   ([`crate::runtime::RUNTIME_C`]), compiled once per compiler and flags;
//! - `variants/<key>.c`, `variants/<key>`: each source and its binary;
//! - `objects/<key>.o`: the program's further translation units
//!   ([`Extras::sources`], e.g. PolyBench's `utilities/polybench.c`), each
//!   keyed by its *preprocessed* text, so an edited header rebuilds it.
//!
//! Every file is written under a unique temporary name and renamed into place,
//! so a concurrent builder (thread or process) sees either nothing or a whole
//! file, and the presence of `variants/<key>` means a complete binary.
//! Failed builds are not cached: a failure might be transient (disk full,
//! killed compiler), and compile errors are rare enough to redo.

use crate::process::{run_limited, unique_suffix, End, Limits};
use crate::runtime::RUNTIME_C;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A C compiler command and its flags (without `-o`, sources or libraries).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Compiler {
    pub cc: String,
    pub flags: Vec<String>,
}

impl Default for Compiler {
    /// `gcc -O3 -march=native -fopenmp`: the design's reference build.
    fn default() -> Self {
        Compiler {
            cc: "gcc".to_string(),
            flags: ["-O3", "-march=native", "-fopenmp"].map(String::from).to_vec(),
        }
    }
}

impl Compiler {
    pub fn new(cc: impl Into<String>, flags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Compiler { cc: cc.into(), flags: flags.into_iter().map(Into::into).collect() }
    }

    /// Whether the compiler targets AVX-512 with its flags (defines
    /// `__AVX512F__`: `-march=native` on an AVX-512 machine). gcc prefers 256-bit vectors even there, so
    /// `vector_width=512` is worth searching only on such a target.
    pub fn avx512(&self) -> bool {
        let out = Command::new(&self.cc)
            .args(&self.flags)
            .args(["-dM", "-E", "-x", "c", "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output();
        out.is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("__AVX512F__"))
    }

    /// First line of `cc --version`: part of the cache key and the machine fingerprint.
    pub fn version(&self) -> Result<String, BuildError> {
        let out = Command::new(&self.cc)
            .arg("--version")
            .output()
            .map_err(|source| BuildError::CompilerNotFound { cc: self.cc.clone(), source })?;
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text.lines().next().unwrap_or("").trim().to_string();
        if !out.status.success() || first.is_empty() {
            return Err(BuildError::CompilerVersion {
                cc: self.cc.clone(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(first)
    }
}

/// What a program needs to build besides its main source (which arrives
/// preprocessed, spliced with generated code): further translation units and
/// flags. The same for the original and every variant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extras {
    /// Further translation units, compiled once each and linked into every binary.
    pub sources: Vec<PathBuf>,
    /// Preprocessor arguments of the extra sources (`-I`, `-D`): the ones the
    /// main source was preprocessed with.
    pub cpp_args: Vec<String>,
    /// Flags for every compile, after the machine profile's.
    pub cflags: Vec<String>,
    /// Flags for every link, after the objects (`-L...`, `-lfoo`).
    pub ldflags: Vec<String>,
}

/// Objects and libraries linked into one program besides the usual ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Linked {
    pub objects: Vec<PathBuf>,
    /// Link arguments after the objects (`-L...`, `-lfoo`).
    pub libs: Vec<String>,
    /// What names the objects' contents in the program's cache key.
    pub key: String,
}

/// Errors that stop a builder as a whole (never a single source's compile error).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot run `{cc} --version`: {source}; install the compiler or name another one in the machine profile")]
    CompilerNotFound { cc: String, source: std::io::Error },
    #[error("`{cc} --version` failed: {message}")]
    CompilerVersion { cc: String, message: String },
    #[error("cache directory {}: {source}", path.display())]
    Cache { path: PathBuf, source: std::io::Error },
    #[error("the measurement runtime does not build with `{cc} {flags}`:\n{message}")]
    Runtime { cc: String, flags: String, message: String },
    #[error("cannot start a pool of {jobs} build threads: {message}")]
    Pool { jobs: usize, message: String },
    #[error("{}: this extra source does not build:\n{message}", path.display())]
    Extra { path: PathBuf, message: String },
}

/// The result of building one source. A compile error is data, not an `Err`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum BuildOutcome {
    Built {
        binary: PathBuf,
        /// The cache key (hex), also the binary's file name.
        key: String,
        /// True when the binary was already in the cache (nothing compiled).
        cached: bool,
        /// Wall seconds spent compiling (zero when cached).
        #[serde(default)]
        compile_s: f64,
    },
    Failed {
        /// The compiler's stderr (head and tail if long), or why it could not run.
        message: String,
    },
}

impl BuildOutcome {
    /// Wall seconds spent compiling (zero when cached or failed).
    pub fn compile_s(&self) -> f64 {
        match self {
            BuildOutcome::Built { compile_s, .. } => *compile_s,
            BuildOutcome::Failed { .. } => 0.0,
        }
    }

    pub fn binary(&self) -> Option<&Path> {
        match self {
            BuildOutcome::Built { binary, .. } => Some(binary),
            BuildOutcome::Failed { .. } => None,
        }
    }
}

/// Builds sources with one compiler into one cache directory.
#[derive(Debug, Clone)]
pub struct Builder {
    compiler: Compiler,
    version: String,
    cache_dir: PathBuf,
    runtime_object: PathBuf,
    compile_timeout: Duration,
    /// The program's extras, their objects and their part of every key.
    extras: Extras,
    extra_objects: Vec<PathBuf>,
    extras_key: String,
}

/// How much of a compiler's stderr a `Failed` message keeps (head and tail each).
const MESSAGE_BYTES: usize = 16 * 1024;

impl Builder {
    /// Checks the compiler, creates the cache directory and builds the runtime
    /// object if this compiler and flags have not built it yet.
    pub fn new(compiler: Compiler, cache_dir: impl Into<PathBuf>) -> Result<Builder, BuildError> {
        let cache_dir = cache_dir.into();
        let version = compiler.version()?;
        for sub in ["runtime", "variants"] {
            let p = cache_dir.join(sub);
            std::fs::create_dir_all(&p).map_err(|source| BuildError::Cache { path: p, source })?;
        }
        let key = hash_key(&[b"runtime", RUNTIME_C.as_bytes()], &compiler, &version);
        let runtime_object = cache_dir.join("runtime").join(format!("{key}.o"));
        let builder = Builder {
            compiler,
            version,
            cache_dir,
            runtime_object,
            compile_timeout: Duration::from_secs(600),
            extras: Extras::default(),
            extra_objects: Vec::new(),
            extras_key: String::new(),
        };
        if !builder.runtime_object.is_file() {
            let src = builder.cache_dir.join("runtime").join(format!("{key}.c"));
            write_atomic(&src, RUNTIME_C.as_bytes())
                .map_err(|source| BuildError::Cache { path: src.clone(), source })?;
            let mut cmd = Command::new(&builder.compiler.cc);
            cmd.args(&builder.compiler.flags).arg("-c").arg(&src);
            builder.compile_to(cmd, &builder.runtime_object).map_err(|message| BuildError::Runtime {
                cc: builder.compiler.cc.clone(),
                flags: builder.compiler.flags.join(" "),
                message,
            })?;
        }
        Ok(builder)
    }

    /// This builder for a program with `extras`: each extra source is
    /// preprocessed (its text is its cache key) and compiled to an object
    /// unless the cache has it. An extra source that does not build is an
    /// error of the whole program, not of a variant.
    pub fn with_extras(&self, extras: &Extras) -> Result<Builder, BuildError> {
        let mut b = self.clone();
        b.extras = extras.clone();
        b.extra_objects.clear();
        let dir = b.cache_dir.join("objects");
        std::fs::create_dir_all(&dir).map_err(|source| BuildError::Cache { path: dir.clone(), source })?;
        let mut keys = Vec::new();
        for path in &extras.sources {
            let fail = |message: String| BuildError::Extra { path: path.clone(), message };
            let mut cpp = Command::new(&b.compiler.cc);
            cpp.args(&b.compiler.flags).args(&extras.cflags).args(&extras.cpp_args).arg("-E").arg(path);
            let out = cpp.output().map_err(|e| fail(format!("cannot run `{}`: {e}", b.compiler.cc)))?;
            if !out.status.success() {
                return Err(fail(String::from_utf8_lossy(&out.stderr).into_owned()));
            }
            let flags = [&extras.cflags[..], &extras.cpp_args[..]].concat().join("\0");
            let key = hash_key(&[b"extra", &out.stdout, flags.as_bytes()], &b.compiler, &b.version);
            let object = dir.join(format!("{key}.o"));
            if !object.is_file() {
                let mut cmd = Command::new(&b.compiler.cc);
                cmd.args(&b.compiler.flags).args(&extras.cflags).args(&extras.cpp_args).arg("-c").arg(path);
                b.compile_to(cmd, &object).map_err(fail)?;
            }
            keys.push(key);
            b.extra_objects.push(object);
        }
        let link =
            [&keys[..], &["--".to_string()], &extras.cflags[..], &["--".to_string()], &extras.ldflags[..]];
        b.extras_key = link.concat().join("\0");
        Ok(b)
    }

    /// The extra sources this builder links into every program.
    pub fn extras(&self) -> &Extras {
        &self.extras
    }

    /// This builder's cache, extra sources and timeout with another
    /// compiler (a peer's: `crate::peers`).
    pub fn with_compiler(&self, compiler: Compiler) -> Result<Builder, BuildError> {
        let b = Builder::new(compiler, &self.cache_dir)?.with_compile_timeout(self.compile_timeout);
        b.with_extras(&self.extras)
    }

    /// A compile taking longer than this is a failure (default 10 minutes).
    pub fn with_compile_timeout(mut self, timeout: Duration) -> Builder {
        self.compile_timeout = timeout;
        self
    }

    pub fn compiler(&self) -> &Compiler {
        &self.compiler
    }

    /// The first line of the compiler's `--version`.
    pub fn compiler_version(&self) -> &str {
        &self.version
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// The cache key of `source` under this compiler (hex).
    pub fn key(&self, source: &str) -> String {
        self.key_linked(source, "")
    }

    /// The cache key of `source` linked with objects keyed `linked`.
    fn key_linked(&self, source: &str, linked: &str) -> String {
        let parts: [&[u8]; 5] = [
            b"variant",
            source.as_bytes(),
            RUNTIME_C.as_bytes(),
            self.extras_key.as_bytes(),
            linked.as_bytes(),
        ];
        // Without extras the key is what it always was: existing caches stay valid.
        let parts = match (self.extras_key.is_empty(), linked.is_empty()) {
            (true, true) => &parts[..3],
            (false, true) => &parts[..4],
            _ => &parts[..],
        };
        hash_key(parts, &self.compiler, &self.version)
    }

    /// Builds one source, linking the runtime, the extra objects, the link
    /// flags and `-lm`; a cache hit compiles nothing.
    pub fn build(&self, source: &str) -> BuildOutcome {
        self.build_linked(source, &Linked::default())
    }

    /// Builds one source as [`Builder::build`] does, linked with `linked`'s
    /// objects and libraries too (a CUDA variant's unit and runtime).
    pub fn build_linked(&self, source: &str, linked: &Linked) -> BuildOutcome {
        let key = self.key_linked(source, &linked.key);
        let dir = self.cache_dir.join("variants");
        let binary = dir.join(&key);
        if binary.is_file() {
            return BuildOutcome::Built { binary, key, cached: true, compile_s: 0.0 };
        }
        let src = dir.join(format!("{key}.c"));
        if let Err(e) = write_atomic(&src, source.as_bytes()) {
            return BuildOutcome::Failed { message: format!("cannot write {}: {e}", src.display()) };
        }
        let mut cmd = Command::new(&self.compiler.cc);
        cmd.args(&self.compiler.flags)
            .args(&self.extras.cflags)
            .arg(&src)
            .arg(&self.runtime_object)
            .args(&self.extra_objects)
            .args(&linked.objects)
            .args(&self.extras.ldflags)
            .args(&linked.libs)
            .arg("-lm");
        let started = std::time::Instant::now();
        match self.compile_to(cmd, &binary) {
            Ok(()) => {
                BuildOutcome::Built { binary, key, cached: false, compile_s: started.elapsed().as_secs_f64() }
            }
            Err(message) => BuildOutcome::Failed { message },
        }
    }

    /// Builds all `sources` on a pool of `jobs` threads (0: one per logical
    /// core); outcomes are in the order of `sources`.
    pub fn build_all<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        jobs: usize,
    ) -> Result<Vec<BuildOutcome>, BuildError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("polytune-build-{i}"))
            .build()
            .map_err(|e| BuildError::Pool { jobs, message: e.to_string() })?;
        Ok(pool.install(|| sources.par_iter().map(|s| self.build(s.as_ref())).collect()))
    }

    /// Runs `cmd -o <temp>` and renames the result to `out`. `Err` is the
    /// compiler's diagnostics (or why it could not run).
    fn compile_to(&self, mut cmd: Command, out: &Path) -> Result<(), String> {
        let tmp = temp_sibling(out);
        cmd.arg("-o").arg(&tmp).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        let run = run_limited(cmd, &Limits::default(), self.compile_timeout, MESSAGE_BYTES)
            .map_err(|e| format!("cannot run `{}`: {e}", self.compiler.cc))?;
        let stderr = run.output.text();
        let result = match run.end {
            End::TimedOut => Err(format!(
                "the compiler was killed after {:.0} s (compile timeout)\n{stderr}",
                self.compile_timeout.as_secs_f64()
            )),
            End::Exited(status) if status.success() && tmp.is_file() => std::fs::rename(&tmp, out)
                .map_err(|e| format!("cannot move the binary to {}: {e}", out.display())),
            End::Exited(status) => Err(if stderr.trim().is_empty() {
                format!("`{}` failed ({status}) without a message", self.compiler.cc)
            } else {
                stderr
            }),
        };
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// Hex key over length-prefixed parts, so that no two different inputs collide
/// by concatenation.
fn hash_key(parts: &[&[u8]], compiler: &Compiler, version: &str) -> String {
    let mut h = Sha256::new();
    let mut put = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    put(b"polytune-build-v1");
    for p in parts {
        put(p);
    }
    put(compiler.cc.as_bytes());
    put(&(compiler.flags.len() as u64).to_le_bytes());
    for f in &compiler.flags {
        put(f.as_bytes());
    }
    put(version.as_bytes());
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A unique temporary name next to `path` (same directory, so rename is atomic).
fn temp_sibling(path: &Path) -> PathBuf {
    let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", unique_suffix()))
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_sibling(path);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
