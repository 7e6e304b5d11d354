//! A region run apart from its program (CERE's codelet replay, exact here
//! because the model knows every element the region reads).
//!
//! `capturing_program` is the original program, instrumented as usual, that
//! also writes the region's inputs at its entry (the runtime's
//! `polytune_rt_capturing`, in the dump's format): the size parameters, the
//! scalars, and for every array the region may read before writing it
//! exactly the elements it reads (its read footprint), in the order
//! `element_loops` lists them.
//!
//! `replay_program` is a program whose `main` loads such a capture into
//! arrays of the program's shapes, calls the region as a function of its
//! data (the `Outliner`'s signature), times that call and dumps what the
//! region wrote. The rest of the user's translation unit stays in it (the
//! types, globals and functions the statements use); its own `main` is
//! renamed away. The original region replayed this way is the reference its
//! variants are compared with.

use isl_rs::{Context, Set};
use model::isl::{new_context, IslResultExt};
use model::scop::{AccessKind, Array, Scop, Source};

use super::outline::{stated_extent, Outliner};
use super::print::{AST_MACROS, UNDEF_AST_MACROS};
use super::splice::{
    c_string, dump_code, element_loops, footprint, read_first, record_code, splice_capturing,
};
use super::{ast, pinned, CodegenError, Exported};

/// What a replay's program calls the user's own `main`, which its own
/// `main` replaces (`#define main ...` before the user's text; the
/// program's other files are compiled with `-Dmain=...` likewise).
pub const REPLACED_MAIN: &str = "polytune_replaced_main";

/// The original program, instrumented as for a reference run, that also
/// writes the region's inputs where the runtime is asked to capture them.
pub fn capturing_program(source: &Source, scop: &Scop) -> Result<String, CodegenError> {
    let ctx = new_context();
    let scop = &*pinned(&ctx, scop)?;
    replayable(scop)?;
    let capture = capture_code(&ctx, scop)?;
    splice_capturing(source, scop, &capture)
}

/// The code that writes the region's inputs where the runtime is asked to
/// capture them: the parameters, the scalars, each read array's footprint.
fn capture_code(ctx: &Context, scop: &Scop) -> Result<String, CodegenError> {
    let mut capture = String::from(
        "  {\n  int polytune_rt_capturing(void);\n  \
         void polytune_rt_capture(const char *, const char *, const void *, unsigned long);\n  \
         void polytune_rt_capture_end(void);\n  \
         void polytune_rt_capture_range(const char *, unsigned long, unsigned long, int);\n  \
         if (polytune_rt_capturing()) {\n",
    );
    for p in &scop.params {
        capture.push_str(&format!(
            "  {{ long polytune_v = (long)({p}); polytune_rt_capture(\"{p}\", \"long\", &polytune_v, sizeof polytune_v); }}\n"
        ));
    }
    let read_first = read_first(ctx, scop)?;
    for a in inputs(scop, &read_first) {
        capture.push_str(&record_code(ctx, scop, a, AccessKind::Read, "polytune_rt_capture")?);
    }
    for a in scop.arrays.iter().filter(|a| !a.local && !a.extents.is_empty()) {
        capture.push_str(&range_code(ctx, scop, a)?);
    }
    capture.push_str("  polytune_rt_capture_end();\n  }\n  }\n");
    Ok(capture)
}

/// Code that tells the runtime which bytes the elements of array `a` the
/// region accesses span (`polytune_rt_capture_range`): two arrays that
/// overlap in the program's run, one of them written, are refused, since
/// replayed each is an array of its own (and variants take them
/// `restrict`).
fn range_code(ctx: &Context, scop: &Scop, a: &Array) -> Result<String, CodegenError> {
    let what = || format!("the elements of {}", a.name);
    let touched = footprint(ctx, scop, &a.name, AccessKind::Read)?
        .union(footprint(ctx, scop, &a.name, AccessKind::Write)?)
        .ctx(what)?;
    let (loops, macro_name, params, element) = element_loops(ctx, scop, a, &touched)?;
    Ok(format!(
        "  {{\n    unsigned long polytune_lo = ~0UL, polytune_hi = 0;\n{AST_MACROS}#define {macro_name}({params}) \
         do {{ unsigned long polytune_at = (unsigned long)(const void *)&{element}; \
         if (polytune_at < polytune_lo) polytune_lo = polytune_at; \
         if (polytune_at + sizeof({element}) > polytune_hi) polytune_hi = polytune_at + sizeof({element}); }} while (0)\n\
         {loops}#undef {macro_name}\n{UNDEF_AST_MACROS}    \
         polytune_rt_capture_range(\"{name}\", polytune_lo, polytune_hi, {written});\n  }}\n",
        name = a.name,
        written = i32::from(a.written),
    ))
}

/// The size parameters that are the program's variables, not literals
/// modelled as parameters (`Scop::constants`, declared at their values).
fn sizes(scop: &Scop) -> impl Iterator<Item = &str> {
    scop.params.iter().map(String::as_str).filter(|p| !scop.constants.iter().any(|(c, _)| c == p))
}

/// The non-local scalars and the arrays the region may read before writing
/// (`read_first`): what a capture holds besides the parameters. An array the
/// region writes before reading it (deriche's `y1`) needs no captured value.
fn inputs<'s>(scop: &'s Scop, read_first: &'s [String]) -> impl Iterator<Item = &'s Array> {
    scop.arrays.iter().filter(|a| !a.local && (a.extents.is_empty() || read_first.contains(&a.name)))
}

/// A program that makes a capture for a region with no program around it
/// (a library function, no `main`): each size parameter and scalar at the
/// value `values` gives it (a scalar it does not name, and every element the
/// region reads, from a seeded generator: floating-point values in
/// [0.5, 1.5), integers in 1..=8, so that the arithmetic stays finite), the
/// arrays as `replay_program` allocates them; written where the runtime is
/// asked to capture, as the program's own run would.
pub fn generating_program(
    source: &Source,
    scop: &Scop,
    values: &[(String, String)],
) -> Result<String, CodegenError> {
    let ctx = new_context();
    let scop = &*pinned(&ctx, scop)?;
    replayable(scop)?;
    let missing: Vec<&str> = sizes(scop).filter(|p| !values.iter().any(|(n, _)| n == *p)).collect();
    if !missing.is_empty() {
        return Err(CodegenError::Unsupported(format!(
            "the region's sizes need values: give --param {}",
            missing.iter().map(|p| format!("{p}=N")).collect::<Vec<_>>().join(" --param ")
        )));
    }
    let value = |name: &str| values.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut main = String::from(
        "#undef main\nstatic unsigned long long polytune_state = 0x9e3779b97f4a7c15ull;\n\
         static unsigned long long polytune_next(void)\n{\n  polytune_state = polytune_state * 6364136223846793005ull + 1442695040888963407ull;\n  \
         return polytune_state >> 11;\n}\n\
         #define polytune_real() (0.5 + (double)polytune_next() / 9007199254740992.0)\n\
         #define polytune_integer() (1 + (long)(polytune_next() % 8))\n\
         int main(void)\n{\n",
    );
    for (name, v) in &scop.constants {
        main.push_str(&format!("  const long {name} = {v}L;\n"));
    }
    for p in sizes(scop) {
        main.push_str(&format!("  long {p} = {};\n", value(p).unwrap_or_default()));
    }
    let generated = |ty: &str| match ty.contains("double") || ty.contains("float") {
        true => format!("({ty})polytune_real()"),
        false => format!("({ty})polytune_integer()"),
    };
    for a in scop.arrays.iter().filter(|a| !a.local) {
        let ty = &a.element_type;
        if a.extents.is_empty() {
            let v = value(&a.name).unwrap_or_else(|| generated(ty));
            main.push_str(&format!("  {ty} {} = {v};\n", a.name));
            continue;
        }
        main.push_str(&declare(&ctx, scop, a)?);
        let read = footprint(&ctx, scop, &a.name, AccessKind::Read)?;
        let (loops, name, params, element) = element_loops(&ctx, scop, a, &read)?;
        main.push_str(&format!(
            "  {{\n{AST_MACROS}#define {name}({params}) {element} = {}\n{loops}#undef {name}\n{UNDEF_AST_MACROS}  }}\n",
            generated(ty)
        ));
    }
    main.push_str(&capture_code(&ctx, scop)?);
    main.push_str("  return 0;\n}\n");
    Ok(format!("#define main {REPLACED_MAIN}\n{}\n{main}", source.text))
}

/// Why `scop` cannot be replayed, if it cannot: the region must be a
/// function of its data.
fn replayable(scop: &Scop) -> Result<(), CodegenError> {
    if scop.is_fragment() {
        return Err(CodegenError::Unsupported("a SCoP at file scope is not replayed".into()));
    }
    if Outliner::new(scop, "", "").is_none() {
        return Err(CodegenError::Unsupported(
            "the region is not a function of its arrays (a struct member, or an array whose rows have an extent \
             that is neither a literal nor a size parameter), so it is not replayed"
                .into(),
        ));
    }
    Ok(())
}

/// The original region in the form `replay_program` takes: its code as
/// written, with the block-scope declarations it needs.
pub fn original_exported(source: &Source, scop: &Scop) -> Exported {
    Exported {
        block: format!(
            "{{\n{}  {{\n{}\n  }}\n}}\n",
            super::splice::local_declarations(scop),
            super::original_region(source, scop)
        ),
        ..Exported::default()
    }
}

/// [`original_exported`] with the region between `#pragma scop` and
/// `#pragma endscop` again, and its iterators' exit values assigned after:
/// what a source-to-source peer (Pluto) transforms in a replay driver; its
/// loops use iterators of their own, so the values the program reads after
/// the region are set by these assignments.
pub fn marked_exported(source: &Source, scop: &Scop) -> Exported {
    let exits: String =
        scop.exit_values.iter().map(|e| format!("\n  {} = {};", e.variable, e.value)).collect();
    Exported {
        block: format!(
            "{{\n{}  {{\n#pragma scop\n{}\n#pragma endscop{exits}\n  }}\n}}\n",
            super::splice::local_declarations(scop),
            super::original_region(source, scop)
        ),
        ..Exported::default()
    }
}

/// A program that runs `region` (a variant's, or [`original_exported`]) on
/// the inputs in the capture file `capture`, timed, as many times as the
/// runtime says (`polytune_rt_run_end`; the inputs restored before each run),
/// and dumps the outputs of its first run as a measurement of the whole
/// program does.
pub fn replay_program(
    source: &Source,
    scop: &Scop,
    region: &Exported,
    capture: &str,
) -> Result<String, CodegenError> {
    let ctx = new_context();
    let scop = &*pinned(&ctx, scop)?;
    replayable(scop)?;
    let Some(outliner) = Outliner::new(scop, "", "") else { unreachable!("checked replayable") };
    let mut outliner = outliner.renamed("polytune_replayed_region");
    // The iterators the code as written assigns, and the exit values a
    // variant assigns them: locals of the region's function, the exit
    // values handed to `main` through file-scope copies (dumped after the timer).
    let mut body = String::new();
    let mut iterators: Vec<&str> = Vec::new();
    for s in &scop.statements {
        for it in &s.c_iterators {
            if !iterators.contains(&it.as_str()) && !scop.exit_values.iter().any(|e| e.variable == *it) {
                iterators.push(it);
            }
        }
    }
    for it in &iterators {
        body.push_str(&format!("  long {it};\n"));
    }
    for d in &scop.unmodelled {
        body.push_str(&format!("  {d};\n"));
    }
    let mut statics = String::new();
    let mut handed = String::new();
    let mut exit_dumps = String::new();
    for e in &scop.exit_values {
        body.push_str(&format!("  {} {};\n", e.ty, e.variable));
        statics.push_str(&format!("static {} polytune_replayed_exit_{};\n", e.ty, e.variable));
        handed.push_str(&format!("  polytune_replayed_exit_{0} = {0};\n", e.variable));
        exit_dumps.push_str(&format!(
            "  polytune_rt_dump(\"{0}\", \"{1}\", (const void *)&polytune_replayed_exit_{0}, (unsigned long)sizeof({1}));\n",
            e.variable, e.ty
        ));
    }
    body.push_str(&region.block);
    body.push_str(&handed);
    let call = outliner.function(&[], &body);
    let mut main = format!(
        "#undef main\nint main(void)\n{{\n  void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         void polytune_rt_replay_open(const char *);\n  const void *polytune_rt_replay(const char *, unsigned long);\n  \
         int polytune_rt_run_end(void);\n  long polytune_run;\n  \
         polytune_rt_replay_open(\"{}\");\n",
        c_string(capture)
    );
    for (name, value) in &scop.constants {
        main.push_str(&format!("  const long {name} = {value}L;\n"));
    }
    for p in sizes(scop) {
        main.push_str(&format!("  long {p} = *(const long *)polytune_rt_replay(\"{p}\", sizeof(long));\n"));
    }
    for a in scop.arrays.iter().filter(|a| !a.local) {
        main.push_str(&declare(&ctx, scop, a)?);
    }
    // OpenMP's threads started before the timer, as a program's earlier
    // parallel loops would have started them. Then the runs the runtime
    // asks for (`polytune_rt_run_end`): the scalars the region writes
    // restored before each, the elements it reads loaded before the first
    // (an array it only reads is as it was: restoring atax's matrix took
    // longer than its region), and those of the arrays it writes restored
    // only while floating-point exceptions say the data may time otherwise
    // (see `FP_WATCH`).
    let read_first = read_first(&ctx, scop)?;
    main.push_str(
        "#ifdef _OPENMP\n#pragma omp parallel\n  { }\n#endif\n  int polytune_restore = 1;\n  \
         for (polytune_run = 0; ; polytune_run++) {\n",
    );
    for a in inputs(scop, &read_first).filter(|a| a.extents.is_empty() && a.written) {
        main.push_str(&format!(
            "  {name} = *(const {ty} *)polytune_rt_replay(\"{name}\", sizeof({ty}));\n",
            name = a.name,
            ty = a.element_type
        ));
    }
    for a in inputs(scop, &read_first).filter(|a| !a.extents.is_empty()) {
        let ty = &a.element_type;
        let read = footprint(&ctx, scop, &a.name, AccessKind::Read)?;
        let (loops, name, params, element) = element_loops(&ctx, scop, a, &read)?;
        let guard =
            if a.written { "if (polytune_run == 0 || polytune_restore) " } else { "if (polytune_run == 0) " };
        main.push_str(&format!(
            "  {guard}{{\n    unsigned long polytune_n = 0;\n{AST_MACROS}#define {name}({params}) polytune_n++\n{loops}\
             #undef {name}\n    const {ty} *polytune_in = (const {ty} *)polytune_rt_replay(\"{array}\", \
             polytune_n * sizeof({ty}));\n    polytune_n = 0;\n#define {name}({params}) {element} = polytune_in[polytune_n++]\n\
             {loops}#undef {name}\n{UNDEF_AST_MACROS}  }}\n",
            array = a.name,
        ));
    }
    // The first run's outputs are the ones dumped (it starts from the
    // captured inputs): the runtime then knows what the dump cost before it
    // decides how many runs fill the process.
    main.push_str(&format!(
        "  polytune_fp_clear();\n  polytune_rt_start();\n{call}  polytune_rt_stop();\n  \
         int polytune_raised = polytune_fp_raised();\n  if (polytune_run == 0) {{\n{}{exit_dumps}  \
         polytune_restore = polytune_raised;\n  }} else if (!polytune_restore && polytune_raised) {{\n  \
         polytune_rt_run_discard();\n    polytune_restore = 1;\n  }}\n  \
         if (!polytune_rt_run_end())\n    break;\n  }}\n  return 0;\n}}\n",
        dump_code(&ctx, scop)?
    ));
    Ok(format!(
        "{target}#define main {REPLACED_MAIN}\n{text}\n{FP_WATCH}{declarations}{helpers}{statics}{functions}{main}",
        target = region.target,
        text = source.text,
        declarations = region.declarations,
        helpers = region.helpers,
        functions = outliner.definitions.concat(),
    ))
}

/// The floating-point exceptions of a run, on every thread. A SCoP's
/// control flow and accesses do not depend on its data, so a run on the
/// outputs of the run before times as one on the captured inputs, unless
/// the values reach the arithmetic's slow paths (subnormals) or leave the
/// finite numbers: restoring the written arrays, as large as the region's
/// own traffic, is then skipped after the first run while that run and
/// every later one raise no underflow, overflow, invalid operation or
/// division by zero; the run that first raises one is discarded
/// (`polytune_rt_run_discard`) and every later one restored. A thread's
/// flags are its own, so each thread of OpenMP's team clears and tests its
/// own (the region's loops run on that team).
const FP_WATCH: &str = "#include <fenv.h>
#define POLYTUNE_FP_WATCHED (FE_UNDERFLOW | FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO)
static void polytune_fp_clear(void)
{
#ifdef _OPENMP
#pragma omp parallel
#endif
  feclearexcept(POLYTUNE_FP_WATCHED);
}
static int polytune_fp_raised(void)
{
  int raised = 0;
#ifdef _OPENMP
#pragma omp parallel reduction(| : raised)
#endif
  raised |= fetestexcept(POLYTUNE_FP_WATCHED) != 0;
  return raised;
}
void polytune_rt_run_discard(void);
";

/// `a` declared in the replay's `main`: a scalar with its captured value,
/// an array on the heap, zeroed, of the program's row shape and as many
/// rows as the declaration says or the region touches.
fn declare(ctx: &Context, scop: &Scop, a: &Array) -> Result<String, CodegenError> {
    let ty = &a.element_type;
    let name = &a.name;
    if a.extents.is_empty() {
        return Ok(format!("  {ty} {name} = *(const {ty} *)polytune_rt_replay(\"{name}\", sizeof({ty}));\n"));
    }
    let rows = match &a.extents[0] {
        Some(e) if stated_extent(e, &scop.params) => e.trim().to_string(),
        _ => touched_rows(ctx, scop, a)?,
    };
    let inner = a.extents[1..].iter().map(|e| e.as_deref().unwrap_or("").trim());
    if a.linearised {
        // One-dimensional in C: its rows' elements in a row.
        let elements: String = inner.map(|e| format!(" * (unsigned long)({e})")).collect();
        return Ok(format!(
            "  {ty} *{name} = ({ty} *)__builtin_calloc((unsigned long)({rows}){elements} * sizeof(*{name}) + 1, 1);\n"
        ));
    }
    let shape: String = inner.map(|e| format!("[{e}]")).collect();
    Ok(format!(
        "  {ty} (*{name}){shape} = ({ty} (*){shape})__builtin_calloc((unsigned long)({rows}) * sizeof(*{name}) + 1, 1);\n"
    ))
}

/// One more than the largest first subscript the region reads or writes of
/// `a`, as C on the parameters.
fn touched_rows(ctx: &Context, scop: &Scop, a: &Array) -> Result<String, CodegenError> {
    let what = || format!("the rows of {} the region touches", a.name);
    let read = footprint(ctx, scop, &a.name, AccessKind::Read)?;
    let all = read.union(footprint(ctx, scop, &a.name, AccessKind::Write)?).ctx(what)?;
    if all.is_empty().ctx(what)? {
        return Ok("1".into());
    }
    let set = Set::read_from_str(ctx, all.to_str().ctx(what)?).ctx(what)?;
    let largest = set.dim_max(0).ctx(what)?;
    Ok(format!("({}) + 1", ast::c_expr(ctx, &scop.context, largest)?))
}
