//! SCoP extraction: from the `#pragma scop` regions of a C file to the
//! polyhedral model (iteration domains, access relations, original schedule).
//!
//! Everything here is plain serializable data; isl objects are rebuilt from
//! the text on demand in whichever isl context the caller owns (an isl context
//! is not thread-safe, so none is ever stored).

mod affine;
mod c;
mod rewrites;
mod source;
pub mod text;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vocab::preorder::Preorder;

pub use affine::isl_name;
pub use rewrites::{Expansion, TransposedCopy};
pub use source::{Location, Source};

/// One static control part of a C file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scop {
    /// The file the user named.
    pub file: PathBuf,
    /// The function whose body holds the SCoP; empty for a SCoP at file
    /// scope (a fragment).
    pub function: String,
    /// Where `#pragma scop` stands in the user's file.
    pub start: Location,
    /// Bytes of the preprocessed text from the start of the `#pragma scop` line to
    /// the end of the `#pragma endscop` line: what generated code replaces.
    pub span: (usize, usize),
    /// Integer symbols that are constant in the SCoP (sizes, in PolyBench).
    pub params: Vec<String>,
    /// The isl parameter context, `[n, m] -> { : n >= 0 and m >= 0 }`: parameters
    /// are sizes, assumed non-negative. Schedules are legal and code is generated
    /// under this context.
    pub context: String,
    pub arrays: Vec<Array>,
    pub statements: Vec<Statement>,
    /// The original execution order as an isl schedule tree (isl's YAML form).
    pub schedule: String,
    /// The same order as a flat `2d+1` union map, padded to a common depth.
    pub schedule_map: String,
    /// Arrays the region makes at its start from other arrays (the
    /// `transpose` knob, `space::layout`); none in an extracted SCoP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<TransposedCopy>,
    /// Scalars given a copy per loop iteration for GPU variants
    /// ([`crate::expansion`]); none in an extracted SCoP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expansions: Vec<Expansion>,
    /// Integer literals of [`LIFTED_LITERAL`] or more that the SCoP uses in
    /// affine positions (`#define N 6000`), each modelled as a size
    /// parameter (`polytune_c6000`) with its value here: the name and the
    /// value. Close literals share one (`5999` is `polytune_c5999 + 0`,
    /// `6000` is `polytune_c5999 + 1`). The model and the scheduler treat
    /// them as they treat `n`, so a program's schedule does not depend on
    /// the numbers chosen for its sizes (and the scheduler's ILPs keep
    /// small coefficients); generated code declares them at the region.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constants: Vec<(String, i64)>,
    /// What extraction left out of the model, each at `file:line:column`
    /// with its reason (a statement that never runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Variables the region must leave with a value its statements do not
    /// compute: the loop iterators the SCoP assigns and the program may
    /// read after it, each with its exit value (as pet models it, `max(lb,
    /// ub)` after `for (i = lb; i < ub; i++)`). Generated code assigns them
    /// after the region, since its loops use iterators of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exit_values: Vec<ExitValue>,
    /// The functions of the program's file that the statements call (pure
    /// on their arguments, or inlined as their bodies' accesses): the
    /// statements' text names them, so generated code must reach them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
    /// Bytes of the preprocessed text of the function definition that
    /// holds the SCoP (`(0, 0)` for a fragment): where `export` puts the
    /// code the region needs at file scope.
    #[serde(default)]
    pub function_span: (usize, usize),
    /// Declarations (without initialisers) of the enclosing function's
    /// variables that the SCoP's text names but its model does not (those
    /// of statements that never run): the code as written, replayed apart
    /// from its function, still compiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled: Vec<String>,
    /// Found without pragmas ([`detect`]): the user's file has no pragma
    /// lines around it, and `start` is its first statement's line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detected: bool,
    /// What the model assumes of the parameters beyond what the program
    /// states, already part of `context` (the rows of a linearised array
    /// hold their columns: `n <= lda`). Measured programs stop where it
    /// fails; variants check it and run the code as written where it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed: Option<Assumed>,
}

/// `variable = value;` after the region: a C variable, a C expression of
/// the parameters, and the variable's C type (for the output dump).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExitValue {
    pub variable: String,
    pub value: String,
    #[serde(default = "int")]
    pub ty: String,
}

fn int() -> String {
    "int".to_string()
}

/// The smallest integer literal that [`Scop::constants`] models as a size
/// parameter; literals closer than this to a smaller one share its
/// parameter.
pub const LIFTED_LITERAL: i64 = 100;

impl Scop {
    /// The last line of the user's file the SCoP covers: its code's last
    /// line, the one before its `#pragma endscop`.
    pub fn last_line(&self, source: &Source) -> u32 {
        source
            .location(source.line_start(self.span.1.saturating_sub(1)).saturating_sub(1))
            .map_or(0, |l| l.line)
    }

    /// A SCoP at file scope, read as if it were a function body.
    pub fn is_fragment(&self) -> bool {
        self.function.is_empty()
    }

    /// The grouping of the original program: one group per top-level loop
    /// nest or statement of the SCoP.
    pub fn original_preorder(&self) -> Preorder {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut last: Option<String> = None;
        for i in 0..self.statements.len() {
            let key = self.top_level_key(i);
            match (&last, &key) {
                (Some(l), Some(k)) if l == k => groups.last_mut().unwrap().push(i),
                _ => groups.push(vec![i]),
            }
            last = key;
        }
        Preorder(groups)
    }

    /// The top-level position of a statement under a loop (the first
    /// component of its `2d+1` original schedule, as extraction writes it);
    /// `None` for a statement outside any loop, which is a group of its own.
    fn top_level_key(&self, stmt: usize) -> Option<String> {
        let s = &self.statements[stmt];
        if s.iterators.is_empty() {
            return None;
        }
        let map = &self.schedule_map;
        let needle = format!(" {}[", s.name);
        let at = map.find(&needle)?;
        let start = at + map[at..].find("-> [")? + 4;
        map[start..].split([',', ']']).next().map(|v| v.trim().to_string())
    }

    /// The union of the statement domains, `[params] -> { S1[i] : ...; S2[...] }`.
    pub fn domain(&self) -> String {
        let bodies: Vec<String> = self
            .statements
            .iter()
            .map(|s| {
                let (open, close) =
                    (s.domain.find('{').unwrap_or(0), s.domain.rfind('}').unwrap_or(s.domain.len()));
                s.domain.get(open + 1..close).unwrap_or("").trim().to_string()
            })
            .collect();
        format!("[{}] -> {{ {} }}", self.params.join(", "), bodies.join("; "))
    }
}

/// An array or scalar (a 0-d array) the SCoP reads or writes.
/// The model's assumptions on the parameters ([`Scop::assumed`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Assumed {
    /// The parameter context without them: what the program guarantees.
    pub known: String,
    /// Each assumption as the user reads it, with the access that needs it.
    pub why: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Array {
    pub name: String,
    /// The C element type after preprocessing, e.g. `double`.
    pub element_type: String,
    /// Extents as C expressions, outermost first; `None` where the declaration
    /// does not say (a pointer, or the first dimension of a pointer to rows).
    pub extents: Vec<Option<String>>,
    /// Written somewhere in the SCoP: its final value is an output (unless
    /// `local`).
    pub written: bool,
    /// Declared inside the SCoP (block scope): code generation declares it
    /// once before the region, and it is no output.
    #[serde(default)]
    pub local: bool,
    /// One-dimensional in C, indexed as rows (`A[i * n + j]`): `extents`
    /// are the rows the model reads it as (delinearised, `None` first), and
    /// an element is spelled with one linear subscript.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linearised: bool,
}

impl Array {
    /// The C text of the element at `subscripts` (C expressions, one per
    /// dimension): `A[i][j]`, a struct member's `g.u[i]`, and for a member
    /// of an array of structs, named `P[].y`, `P[i].y[k]`.
    pub fn element(&self, subscripts: &[String]) -> String {
        if self.linearised {
            // `A[((s0) * (n) + (s1)) * (m) + (s2)]`
            let mut linear = subscripts.first().cloned().unwrap_or_default();
            for (s, e) in subscripts.iter().zip(&self.extents).skip(1) {
                linear = format!("({linear}) * ({}) + {s}", e.as_deref().unwrap_or("1"));
            }
            return format!("{}[{linear}]", self.name);
        }
        let mut out = String::new();
        let mut rest = subscripts.iter();
        let segments: Vec<&str> = self.name.split('.').collect();
        for (n, segment) in segments.iter().enumerate() {
            if n > 0 {
                out.push('.');
            }
            let base = segment.trim_end_matches("[]");
            out.push_str(base);
            let count = match n + 1 == segments.len() {
                true => rest.len(),
                false => (segment.len() - base.len()) / 2,
            };
            for s in rest.by_ref().take(count) {
                out.push_str(&format!("[{s}]"));
            }
        }
        out
    }

    /// A struct member (`g.u`, `P[].y`): an array of the model whose
    /// elements are not one array in memory, spelled otherwise in C.
    pub fn is_struct_member(&self) -> bool {
        self.name.contains('.')
    }

    pub fn rank(&self) -> usize {
        self.extents.len()
    }
}

/// A statement instance set together with what it touches.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Statement {
    /// `S1`, `S2`, ... in textual order.
    pub name: String,
    /// The enclosing loop iterators, outermost first, as isl names them.
    pub iterators: Vec<String>,
    /// The C names of the same iterators (differ only for isl keywords).
    pub c_iterators: Vec<String>,
    /// `[params] -> { S1[i, j] : ... }`
    pub domain: String,
    /// In evaluation order: the reads of a value before the write(s) it
    /// feeds (`a = b = c` writes twice).
    pub accesses: Vec<Access>,
    /// The C expression statement, as preprocessed, with its `;`.
    pub text: String,
    pub location: Location,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Read,
    Write,
}

/// One array reference of a statement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Access {
    /// Unique in the SCoP (`ref0`, `ref1`, ...): the tag that lets a dependence
    /// name the pair of references that created it.
    pub id: String,
    pub kind: AccessKind,
    pub array: String,
    /// `[params] -> { S1[i, j] -> A[i, j] }` (not yet restricted to the domain).
    pub relation: String,
    /// The reference as written in C.
    pub text: String,
    /// Why this is a may-access, where it is one: a write under a branch on
    /// data (the statement may leave the element as it was), or the read of
    /// that element which stands for the value it then keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may: Option<String>,
}

/// What went wrong, and where in the user's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopError {
    pub file: PathBuf,
    pub location: Option<Location>,
    pub reason: String,
}

impl ScopError {
    pub fn new(file: &Path, location: Option<Location>, reason: impl Into<String>) -> Self {
        ScopError { file: file.to_path_buf(), location, reason: reason.into() }
    }
}

impl fmt::Display for ScopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(l) => write!(f, "{}:{}:{}: {}", self.file.display(), l.line, l.column, self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

impl std::error::Error for ScopError {}

/// How to run the preprocessor.
#[derive(Debug, Clone)]
pub struct ExtractOptions {
    /// The C compiler whose `-E` is used (`$CC`, else `gcc`).
    pub cc: String,
    /// Passed through: `-I...`, `-D...`.
    pub cc_args: Vec<String>,
    /// Find the regions instead of reading `#pragma scop` ([`detect`]).
    pub autodetect: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            cc: std::env::var("CC").unwrap_or_else(|_| "gcc".into()),
            cc_args: Vec::new(),
            autodetect: false,
        }
    }
}

/// Every SCoP of `path`, in file order, with the preprocessed source they
/// refer to. A file without `#pragma scop` is an error, unless
/// `opts.autodetect` finds the regions ([`detect`]).
pub fn extract(path: &Path, opts: &ExtractOptions) -> Result<(Source, Vec<Scop>), ScopError> {
    let source = Source::preprocess(path, &opts.cc, &opts.cc_args)?;
    if opts.autodetect {
        return detected(source).map(|(source, scops, _)| (source, scops));
    }
    let scops = on_large_stack(path, |depth| c::extract_scops(&source, depth))?;
    Ok((source, scops))
}

/// The regions of `path` found without pragmas, as [`extract`] with
/// `autodetect` reads them, and why each outermost loop no region covers
/// was refused.
pub fn detect(path: &Path, opts: &ExtractOptions) -> Result<(Source, Vec<Scop>, Vec<ScopError>), ScopError> {
    detected(Source::preprocess(path, &opts.cc, &opts.cc_args)?)
}

/// The regions pet's autodetect would find: in each function, the longest
/// runs of statements the model accepts that hold a loop. The source they
/// refer to is the file with pragma lines put around them (line numbers
/// kept), so everything downstream reads them as marked regions.
fn detected(source: Source) -> Result<(Source, Vec<Scop>, Vec<ScopError>), ScopError> {
    let path = source.path.clone();
    let marked = on_large_stack(&path, |depth| c::detect::regions(&source, depth))?;
    if marked.spans.is_empty() {
        let why: Vec<String> = marked.refused.iter().take(5).map(|e| format!("\n  {e}")).collect();
        return Err(ScopError::new(
            &path,
            None,
            format!(
                "--autodetect found no region the model accepts (a run of statements with a loop in a function body){}",
                why.concat()
            ),
        ));
    }
    let source = source.with_regions_marked(&marked.spans);
    let mut scops = on_large_stack(&path, |depth| c::extract_scops(&source, depth))?;
    for s in &mut scops {
        s.detected = true;
    }
    Ok((source, scops, marked.refused))
}

/// The stack of the thread that walks a syntax tree: the walks recurse
/// once per level, and a tree may nest [`c::MAX_DEPTH`] levels (a debug
/// build's frames are the largest: 49,000 levels of each kind of nesting
/// fit in 1 GiB). Reserved, not committed: pages are touched only as deep
/// as a walk goes. Where the system refuses to reserve that much (strict
/// overcommit), smaller stacks are tried, and the depth limit shrinks with
/// them.
const WALK_STACKS: [usize; 3] = [1 << 30, 1 << 28, 1 << 26];

/// Runs `f` (a walk over a syntax tree, given the depth it may reach) on a
/// thread whose stack holds that many levels of recursion, instead of the
/// caller's.
fn on_large_stack<T: Send>(
    path: &Path,
    f: impl FnOnce(usize) -> Result<T, ScopError> + Send,
) -> Result<T, ScopError> {
    // Where a thread cannot start, its closure is dropped: `f` stays here
    // for the next try.
    let f = std::sync::Mutex::new(Some(f));
    std::thread::scope(|scope| {
        let mut refused = String::new();
        for stack in WALK_STACKS {
            let depth = c::MAX_DEPTH / (WALK_STACKS[0] / stack);
            let f = &f;
            let spawned = std::thread::Builder::new()
                .name("scop-walk".into())
                .stack_size(stack)
                .spawn_scoped(scope, move || {
                    let f = f.lock().unwrap_or_else(|e| e.into_inner()).take();
                    (f.expect("one thread runs the walk"))(depth)
                });
            match spawned {
                Ok(walk) => {
                    return match walk.join() {
                        Ok(out) => out,
                        Err(panic) => std::panic::resume_unwind(panic),
                    };
                }
                Err(e) => refused = e.to_string(),
            }
        }
        Err(ScopError::new(path, None, format!("cannot start the thread that reads the C file: {refused}")))
    })
}

/// Whether the program holding `scop` can be built and run to tune it: the
/// SCoP stands in a function (not a file-scope fragment), and the program
/// takes no input from outside (an argument past `argv[0]`, a stream or a
/// file it reads), since the original and every variant run without any.
/// Reads the user's file only.
pub fn check_runnable(source: &Source, scop: &Scop) -> Result<(), ScopError> {
    if scop.is_fragment() {
        return Err(ScopError::new(
            &scop.file,
            Some(scop.start),
            "this SCoP stands at file scope (a fragment): `scop` and `schedule` read it, but `run` and `tune` need a whole program with `main`",
        ));
    }
    on_large_stack(&source.path, |depth| c::check_inputs(source, depth))
}

/// Extraction from text that has already been preprocessed (tests, tools).
pub fn extract_preprocessed(path: &Path, text: &str) -> Result<Vec<Scop>, ScopError> {
    let source = Source::from_preprocessed(path, text.to_string());
    on_large_stack(path, |depth| c::extract_scops(&source, depth))
}
