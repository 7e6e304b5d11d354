//! From a SCoP and a schedule tree to a complete C program: tiling of
//! permutable bands, OpenMP marks on coincident loops, isl's AST generator,
//! our own C printer, and the instrumentation the measurement protocol needs.
//!
//! The generated region replaces the bytes of the SCoP in the preprocessed
//! source, so the rest of the program (initialisation, `main`) is untouched.
//!
//! The steps, one file each: `transform` (tiling, marks, wavefront and
//! point-loop order on the tree), `isolate` (full tiles), `ast` (the tree as
//! isl's AST generator gets it, and the generator), `print` (C from the AST),
//! `splice` (the region in the program, with the timer and the output dump);
//! `pack` and `accumulate` graft copies into the checked tree (packed tiles,
//! micro tiles' registers), `gpu` maps kernels to CUDA. `replay` puts the
//! region apart from its program: the build that captures its inputs, a
//! driver for a SCoP with no `main`, and the program that replays it.

mod accumulate;
mod ast;
mod footprint;
mod gpu;
mod isolate;
mod marks;
mod outline;
mod pack;
mod passes;
mod print;
mod replay;
mod rows;
mod splice;
mod transform;

pub use accumulate::reduces_in_three_loops;
pub use gpu::cuda::Cuda;
pub use gpu::mma::has_contraction;

use ast::{build_ast, every_statement_runs, group_tiles, iterator_prefix};
use isolate::{strip_ast_options, ISOLATED_AST_OPS, MICRO_AST_OPS};
use print::{restrict_pointers, statement_macros, undef_macros, Printer, MACRO_PREFIX};
pub use replay::{
    capturing_program, generating_program, marked_exported, original_exported, replay_program, REPLACED_MAIN,
};
use splice::{copy_code, splice, splice_original};
pub use splice::{instrumented, profiling_program};

use isl_rs::{Context, Schedule, Set, UnionSet};
use model::deps::Dependences;
use model::isl::{new_context, IslError, IslResultExt};
use model::legality::Violation;
use model::scop::{Scop, Source};
use serde::{Deserialize, Serialize};
use space::clay::Planned;
use vocab::knobs::{CodeOptions, Consecutivity, PostTileReorder, Target, UnifiedOptions, Wavefront};

/// How to turn a schedule into loops.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodegenOptions {
    /// Rectangular tile sizes for permutable bands of two or more members,
    /// outermost first; the last size repeats for deeper members. `None`: no tiling.
    pub tile_sizes: Option<Vec<u32>>,
    /// Mark the outermost coincident loop of each band (not nested in another
    /// parallel loop) `#pragma omp parallel for`.
    pub openmp: bool,
    /// After tiling, sink the point loop with the best Pluto locality score
    /// (RR-9110 (2)) innermost.
    #[serde(default)]
    pub posttile_reorder: PostTileReorder,
    /// Skew the tile loops of a band whose outer tile loop is not parallel:
    /// the first becomes the sum of itself and the next (`single`) or of all.
    #[serde(default)]
    pub wavefront: Wavefront,
    /// After tiling, the point loop that makes the most references
    /// stride-one (consecutivity report §3.1.1, f = 1) goes innermost.
    #[serde(default)]
    pub intra_tile_consecutivity: bool,
    /// `restrict`, `omp simd`, register tiling, the OpenMP schedule.
    #[serde(default)]
    pub code: CodeOptions,
    /// Map to the GPU (`gpu`): kernels launched from host code, tiles of
    /// `tile_sizes` per block; the CPU knobs above do not apply.
    #[serde(default)]
    pub gpu: bool,
    /// Band by band what to tile, reorder, skew, unroll, run in parallel and
    /// vectorise (a script's code steps), instead of the uniform options
    /// above; every action must find its band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<Planned>>,
    /// Fault injection for the tests of the GPU emulation: a GPU variant
    /// leaves out this barrier (numbered from 0 in each kernel).
    #[serde(skip)]
    pub drop_barrier: Option<usize>,
}

impl CodegenOptions {
    /// Code generation for a point: tiles and threads, and the knobs of the
    /// unified scheduler that act after tiling.
    pub fn for_point(tile_sizes: Option<Vec<u32>>, threads: usize, knobs: Option<&UnifiedOptions>) -> Self {
        let mut o = CodegenOptions { tile_sizes, openmp: threads > 1, ..Default::default() };
        if let Some(k) = knobs {
            o.posttile_reorder = k.posttile_reorder;
            o.wavefront = k.wavefront;
            o.intra_tile_consecutivity = k.consecutivity == Consecutivity::IntraTile;
            o.openmp = o.openmp && k.target == Target::Openmp;
            o.gpu = k.target == Target::Gpu;
        }
        o
    }
}

/// A generated program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    /// The whole C program, ready for the compiler.
    pub program: String,
    /// Only the code that replaced the SCoP.
    pub region: String,
    /// The schedule tree after tiling and parallel marks.
    pub schedule: String,
    /// What code generation did at each band of the given tree: a plan
    /// that does the same again.
    pub bands: Vec<Planned>,
    /// A GPU variant's CUDA form (`program` is then its emulation on the
    /// CPU); `None` for CPU variants, and where the region cannot be a
    /// function of its arrays.
    #[serde(default)]
    pub cuda: Option<Cuda>,
    /// A CPU variant's code as it goes into the user's own file (`polytune
    /// export`), without the measurement's instrumentation (of a GPU
    /// variant, its emulation's); not sent between processes.
    #[serde(skip)]
    pub exported: Option<Exported>,
}

/// A CPU variant's pieces for the user's file: what goes at file scope
/// before the function holding the SCoP, and the block that replaces the
/// SCoP's lines. The statement macros are still in them (`export` expands
/// them with the C preprocessor, as the measured build did).
#[derive(Debug, Clone, Default)]
pub struct Exported {
    /// `#pragma GCC target(...)` lines the variant was compiled under.
    pub target: String,
    /// File-scope declarations (packing buffers).
    pub declarations: String,
    /// The outlined functions, defined after the program in a measurement.
    pub helpers: String,
    /// The region with its block-scope declarations and the iterators'
    /// exit values, no timer and no dump.
    pub block: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("the schedule is illegal: it breaks {} dependence(s), first {} {} -> {} (bad distances {})",
        .0.len(), .0[0].kind, .0[0].source, .0[0].sink, .0[0].bad_distances)]
    Illegal(Vec<Violation>),
    #[error("{0}")]
    Unsupported(String),
}

impl model::isl::RanOut for CodegenError {
    fn ran_out(&self) -> bool {
        matches!(self, CodegenError::Isl(e) if e.ran_out())
    }
}

/// The original program with the SCoP instrumented (timer and output dump)
/// but otherwise as written: the reference every variant is compared with.
pub fn original_program(source: &Source, scop: &Scop) -> Result<String, CodegenError> {
    let scop = pinned(&new_context(), scop)?;
    splice_original(source, &scop, original_region(source, &scop))
}

/// `scop` with its context pinned ([`model::deps::pinned`]): the literals
/// modelled as parameters at their values, as they are wherever the code
/// runs. Given them free, isl's AST generator can lose statement instances
/// (random program 997: a tiled band whose domains name `polytune_c987`
/// lost five of 1,035).
fn pinned<'s>(ctx: &Context, scop: &'s Scop) -> Result<std::borrow::Cow<'s, Scop>, CodegenError> {
    use std::borrow::Cow;
    if scop.constants.is_empty() {
        return Ok(Cow::Borrowed(scop));
    }
    let what = || "pinning the literals in the context".to_string();
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let context = model::deps::pinned(context, scop).ctx(what)?;
    let mut out = scop.clone();
    out.context = context.to_str().ctx(what)?.to_string();
    if let Some(a) = &mut out.assumed {
        let known = model::deps::pinned(Set::read_from_str(ctx, &a.known).ctx(what)?, scop).ctx(what)?;
        a.known = known.to_str().ctx(what)?.to_string();
    }
    Ok(Cow::Owned(out))
}

/// The SCoP's code as written: what lies between its two pragma lines.
fn original_region<'s>(source: &'s Source, scop: &Scop) -> &'s str {
    let region = &source.text[scop.span.0..scop.span.1];
    let inner = region.split_once('\n').map(|(_, r)| r).unwrap_or("");
    let inner = inner.trim_end_matches('\n');
    inner.rsplit_once('\n').map(|(r, _)| r).unwrap_or("")
}

/// Code for `schedule` (isl schedule-tree text), after checking it legal
/// against `deps`, and each band it tiles permutable.
pub fn generate(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    schedule: &str,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    generate_inner(source, scop, Some(deps), schedule, opts, passes::CPU)
}

/// Test-only: code for a schedule without the legality check, so that tests
/// can show that output verification catches what legality would have.
#[doc(hidden)]
pub fn generate_unchecked(
    source: &Source,
    scop: &Scop,
    schedule: &str,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    generate_inner(source, scop, None, schedule, opts, passes::CPU)
}

fn generate_inner(
    source: &Source,
    scop: &Scop,
    deps: Option<&Dependences>,
    schedule: &str,
    opts: &CodegenOptions,
    cpu_passes: &[passes::Pass],
) -> Result<Variant, CodegenError> {
    let ctx = new_context();
    let scop = &*pinned(&ctx, scop)?;
    let tree = Schedule::read_from_str(&ctx, schedule).ctx(|| "reading the schedule tree".into())?;
    passes::check(&ctx, scop, deps, schedule)?;
    check_domain(&ctx, scop, &tree)?;
    if opts.gpu {
        return gpu::variant::generate_gpu(&ctx, source, scop, deps, tree, opts);
    }
    // Linearised arrays as rows inside the region; the code around it (the
    // dumps, the exported block's declarations) keeps the user's pointers.
    let views = rows::views(&ctx, scop)?;
    let inner = views.as_ref().map_or(scop, |v| &v.scop);
    let mut stage = passes::Stage::new(&ctx, inner, opts, deps, (tree, schedule));
    passes::run(&mut stage, cpu_passes)?;
    cpu_variant(source, scop, views.as_ref(), stage)
}

/// A CPU variant from the tree its passes left: the AST (with full tiles
/// isolated where isl can within its budget), C, the outlined functions,
/// and the program around the region.
fn cpu_variant(
    source: &Source,
    original: &Scop,
    views: Option<&rows::RowViews>,
    stage: passes::Stage<'_>,
) -> Result<Variant, CodegenError> {
    let (ctx, scop, opts) = (stage.ctx, stage.scop, stage.opts);
    let mut final_text = stage.checked.clone();
    let (redefined, restored) = stage.bodies.redefine(scop);
    let (packing, accumulators) = (&stage.packing, &stage.accumulators);
    let prelude = format!("{}{}{redefined}", packing.prelude, accumulators.prelude);
    let postlude = format!("{restored}{}{}", accumulators.postlude, packing.postlude);
    let prefix = iterator_prefix(scop);
    let (runs, guard) = every_statement_runs(ctx, scop)?;
    let ops = if accumulators.locals.is_empty() { ISOLATED_AST_OPS } else { MICRO_AST_OPS };
    let tree = stage.tree().copy().ctx(|| "copying the schedule".into())?;
    let (ast, fell_back) = region_ast(ctx, &runs, tree, &prefix, stage.isolated.then_some(ops))?;
    if let Some(plain) = &fell_back {
        final_text = stage.text(plain)?;
    }
    // Whether the AST holds isolated full tiles.
    let full_tiles = stage.isolated && fell_back.is_none();
    let mut printer = Printer {
        omp_schedule: opts.code.omp_schedule,
        parallel_min: opts.code.parallel_min,
        unroll_constant_only: full_tiles,
        outliner: match opts.code.restrict {
            true => outline::Outliner::new(
                scop,
                &format!("{}{prelude}", statement_macros(scop)),
                &format!("{postlude}{}", undef_macros(scop)),
            ),
            false => None,
        },
        locals: accumulators.locals.clone(),
        ..Printer::plain(1, MACRO_PREFIX, &prefix, arities(scop))
    };
    printer.node(&ast, None)?;
    let register_tiles = !printer.locals.is_empty();
    if register_tiles && printer.outliner.as_ref().is_some_and(|o| o.definitions.is_empty()) {
        // No parallel loop: the outermost loops' bodies become the functions.
        printer.out.clear();
        printer.outline_outermost = true;
        printer.node(&ast, None)?;
    }
    // `restrict`: the parallel loops' bodies are functions with restricted
    // parameters by now, else the outermost loops' bodies; without loops
    // the whole region becomes one. Code left in place gets block-scope
    // restricted pointers.
    let (body, functions) = match printer.outliner.take() {
        Some(mut o) if o.definitions.is_empty() => (o.function(&[], &printer.out), o.definitions),
        Some(o) => (restrict_pointers(scop, &printer.out), o.definitions),
        None if opts.code.restrict => (restrict_pointers(scop, &printer.out), Vec::new()),
        None => (printer.out, Vec::new()),
    };
    let (make, free) = copy_code(ctx, scop, opts.openmp)?;
    // Expanded scalars (`expand=on`) leave with their last values, as on the GPU.
    let (last, _) = write_back(ctx, &runs, scop)?;
    let code = format!("{prelude}{make}{body}{last}{free}{postlude}");
    let code = match views {
        Some(v) => v.wrap(&code),
        None => code,
    };
    let region = guarded(source, scop, guard.as_deref(), &code);
    let mut program = splice(source, original, &region)?;
    program.insert_str(0, &packing.declarations);
    // The target pragmas go before everything, so that the function holding
    // the SCoP and the outlined ones are all compiled under them.
    let target = target_pragmas(&opts.code);
    program.insert_str(0, &target);
    let functions = functions.concat();
    program.push_str(&functions);
    let exported = Exported {
        target,
        declarations: packing.declarations.clone(),
        helpers: functions.clone(),
        block: splice::plain_block(original, &region),
    };
    let region = format!("{region}{functions}");
    Ok(Variant {
        program,
        region,
        schedule: final_text,
        bands: stage.trace,
        cuda: None,
        exported: Some(exported),
    })
}

/// The region's AST from `tree`; where it isolates full tiles
/// (`isolated_ops`, isl's budget for it), the AST of the tree without the
/// isolation, and that tree, where isl runs out of the budget.
fn region_ast(
    ctx: &Context,
    runs: &str,
    tree: Schedule,
    prefix: &str,
    isolated_ops: Option<u64>,
) -> Result<(isl_rs::ASTNode, Option<Schedule>), CodegenError> {
    let Some(ops) = isolated_ops else {
        return Ok((build_ast(ctx, runs, group_tiles(tree)?, prefix)?, None));
    };
    let plain = tree.copy().ctx(|| "copying the schedule".into())?;
    let tree = group_tiles(tree)?;
    if let Some(ast) = model::isl::within_budget(ctx, ops, || build_ast(ctx, runs, tree, prefix))? {
        return Ok((ast, None));
    }
    let root = plain.get_root().ctx(|| "schedule root".into())?;
    let plain = strip_ast_options(root)?.get_schedule().ctx(|| "schedule".into())?;
    let ast =
        build_ast(ctx, runs, group_tiles(plain.copy().ctx(|| "copying the schedule".into())?)?, prefix)?;
    Ok((ast, Some(plain)))
}

/// The `#pragma GCC target` lines of a point's `mtune` and `vector_width`.
fn target_pragmas(code: &CodeOptions) -> String {
    let mut out = String::new();
    if code.vector_width > 0 {
        out.push_str(&format!("#pragma GCC target(\"prefer-vector-width={}\")\n", code.vector_width));
    }
    if let Some(cpu) = code.mtune.gcc_name() {
        // Only gcc on x86 knows its processors' names; clang ignores the pragma.
        out.push_str(&format!(
            "#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)\n#pragma GCC target(\"tune={cpu}\")\n#endif\n"
        ));
    }
    out
}

/// The region: `code` (between the statement macros) where every statement
/// runs, and the code as written where `guard` (of [`every_statement_runs`])
/// fails, outside the macros (the guard may use `floord`).
fn guarded(source: &Source, scop: &Scop, guard: Option<&str>, code: &str) -> String {
    let (macros, undef) = (statement_macros(scop), undef_macros(scop));
    match guard {
        None => format!("{macros}{code}{undef}"),
        Some(guard) => format!(
            "{macros}if ({guard}) {{\n{code}}}\n{undef}else {{\n{}\n}}\n",
            original_region(source, scop)
        ),
    }
}

/// Each statement's number of iterators: the arguments of its macro.
fn arities(scop: &Scop) -> std::collections::HashMap<String, usize> {
    scop.statements.iter().map(|s| (s.name.clone(), s.c_iterators.len())).collect()
}

/// The extents of each expansion's array ([`model::expansion`]) in C:
/// one more than the largest value of each of its loops, and then of each
/// of the original array's subscripts.
pub fn state_expansion_extents(ctx: &Context, scop: &mut Scop) -> Result<(), CodegenError> {
    for e in scop.expansions.clone() {
        let what = || format!("the extent of {}", e.array);
        let mut extents = Vec::new();
        for values in &e.values {
            let largest = Set::read_from_str(ctx, values).ctx(what)?.dim_max(0).ctx(what)?;
            extents.push(Some(format!("({}) + 1", ast::c_expr(ctx, &scop.context, largest)?)));
        }
        if let Some(a) = scop.arrays.iter_mut().find(|a| a.name == e.array) {
            a.extents = extents;
        }
    }
    Ok(())
}

/// After a region with expanded scalars ([`model::expansion`]), each
/// scalar takes its expansion's element that the original's last write
/// went to: the code that sets it, and each expansion array with that
/// element's subscripts (all a CUDA region copies back of it). An expanded
/// array takes, element by element, the copy of its last write
/// ([`splice::write_back_loops`]). `context`: where every statement runs
/// (so that one did).
fn write_back(ctx: &Context, context: &str, scop: &Scop) -> Result<(String, gpu::cuda::Last), CodegenError> {
    let (mut out, mut elements) = (String::new(), gpu::cuda::Last::new());
    for e in &scop.expansions {
        let what = || format!("the last value of {}", e.scalar);
        let Some(last) = &e.last else { continue };
        if e.rank > 0 {
            out.push_str(&splice::write_back_loops(ctx, context, scop, e, last)?);
            continue;
        }
        let last = Set::read_from_str(ctx, last).ctx(what)?;
        let mut index = Vec::new();
        for d in 0..e.values.len() {
            let at = last.copy().ctx(what)?.dim_max(d as i32).ctx(what)?;
            index.push(ast::c_expr(ctx, context, at)?);
        }
        let subscripts: String = index.iter().map(|i| format!("[{i}]")).collect();
        out.push_str(&format!("  {} = {}{subscripts};\n", e.scalar, e.array));
        elements.insert(e.array.clone(), index);
    }
    Ok((out, elements))
}

/// The schedule must schedule exactly the SCoP's statement instances.
fn check_domain(ctx: &Context, scop: &Scop, tree: &Schedule) -> Result<(), CodegenError> {
    let what = || "comparing the schedule's domain with the SCoP".to_string();
    let mut domain = UnionSet::empty_ctx(ctx).ctx(what)?;
    for s in &scop.statements {
        domain = domain.union(UnionSet::read_from_str(ctx, &s.domain).ctx(what)?).ctx(what)?;
    }
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let domain = domain.intersect_params(context.copy().ctx(what)?).ctx(what)?;
    let theirs = tree.get_domain().ctx(what)?.intersect_params(context).ctx(what)?;
    if !theirs.is_equal(&domain).ctx(what)? {
        return Err(CodegenError::Unsupported(
            "the schedule's domain differs from the SCoP's statement instances".into(),
        ));
    }
    Ok(())
}
