//! The generated region in the program: timer calls around it, the
//! block-scope declarations it needs, and the dump of every output after it.

use super::ast::build_ast;
use super::ast::iterator_prefix;
use super::print::Printer;
use super::print::AST_MACROS;
use super::print::DUMP_PREFIX;
use super::print::UNDEF_AST_MACROS;
use super::CodegenError;
use isl_rs::{Context, DimType, Schedule, Set, UnionSet};
use model::isl::new_context;
use model::isl::IslResultExt;
use model::scop::isl_name;
use model::scop::AccessKind;
use model::scop::Scop;
use model::scop::Source;

/// Replaces the SCoP's bytes with `code`, between the timer calls and
/// followed by the dump of everything the SCoP writes; the loop iterators
/// the program reads after it get their exit values ([`Scop::exit_values`]).
pub(super) fn splice(source: &Source, scop: &Scop, code: &str) -> Result<String, CodegenError> {
    splice_region(source, scop, code, &exit_values(scop), "")
}

/// [`splice`] for the original code, whose own loops leave the iterators
/// their values: the dump then compares those with what a variant assigns.
pub(super) fn splice_original(source: &Source, scop: &Scop, code: &str) -> Result<String, CodegenError> {
    splice_region(source, scop, code, "", "")
}

/// [`splice_original`] with `capture` (the code that captures the region's
/// inputs, `replay::capturing_program`) at the region's entry.
pub(super) fn splice_capturing(source: &Source, scop: &Scop, capture: &str) -> Result<String, CodegenError> {
    splice_region(source, scop, super::original_region(source, scop), "", capture)
}

fn splice_region(
    source: &Source,
    scop: &Scop,
    code: &str,
    exits: &str,
    entry: &str,
) -> Result<String, CodegenError> {
    let ctx = new_context();
    let mut dumps = dump_code(&ctx, scop)?;
    for e in &scop.exit_values {
        dumps.push_str(&format!(
            "  polytune_rt_dump(\"{0}\", \"{1}\", (const void *)&{0}, (unsigned long)sizeof({1}));\n",
            e.variable, e.ty
        ));
    }
    let region = format!(
        "{{ /* polytune: SCoP of {} */\n{}{}{entry}  void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         polytune_rt_start();\n  {{\n{code}\n  }}\n  polytune_rt_stop();\n{}{dumps}{}}}\n",
        scop.function,
        local_declarations(scop),
        assumption_check(&ctx, scop)?,
        exits,
        expansion_frees(scop)
    );
    let (a, b) = scop.span;
    Ok(format!("{}{}{}", &source.text[..a], region, &source.text[b..]))
}

/// Code that stops a measured program (exit status 3, the reason on
/// stderr) where the model's assumption on the parameters
/// ([`Scop::assumed`]) fails at the program's sizes: its variants would
/// run the code as written there, and its footprints, captures and dumps
/// hold only where it holds.
fn assumption_check(ctx: &Context, scop: &Scop) -> Result<String, CodegenError> {
    let Some(a) = &scop.assumed else { return Ok(String::new()) };
    let what = || "the model's assumption on the parameters".to_string();
    let known = Set::read_from_str(ctx, &a.known).ctx(what)?;
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let holds = super::ast::c_condition(ctx, known, context)?;
    Ok(format!(
        "  {{\n  void polytune_rt_assumption_broken(const char *);\n  if (!({holds}))\n    \
         polytune_rt_assumption_broken(\"{}\");\n  }}\n",
        c_string(&a.why.join("; "))
    ))
}

/// The program as written with each of `scops` (of `source`, spans in
/// order and disjoint) timed by the runtime's profile
/// (`polytune_rt_region_enter(k)` and `_exit(k)` around SCoP `k`): how
/// `tune --autodetect` finds where a program spends its time.
pub fn profiling_program(source: &Source, scops: &[Scop]) -> String {
    let mut out = String::with_capacity(source.text.len() + 200 * scops.len());
    let mut at = 0;
    for (k, scop) in scops.iter().enumerate() {
        let (a, b) = scop.span;
        out.push_str(&source.text[at..a]);
        out.push_str(&format!(
            "{{ /* polytune: region {k} of the profile */\n  void polytune_rt_region_enter(int);\n  \
             void polytune_rt_region_exit(int);\n  polytune_rt_region_enter({k});\n{}  polytune_rt_region_exit({k});\n}}\n",
            &source.text[a..b]
        ));
        at = b;
    }
    out.push_str(&source.text[at..]);
    out
}

/// The region as the user's own file gets it (`polytune export`): `code`
/// with the block-scope declarations it needs, the iterators' exit values
/// and the expanded scalars freed, and nothing of the measurement.
pub(super) fn plain_block(scop: &Scop, code: &str) -> String {
    format!(
        "{{\n{}  {{\n{code}\n  }}\n{}{}}}\n",
        local_declarations(scop),
        exit_values(scop),
        expansion_frees(scop)
    )
}

/// `block`, code that stands where `scop` stood in the user's file (an
/// exported region), between the timer calls and followed by the dump of
/// everything the SCoP writes, as [`splice`] instruments a variant: how
/// `export` verifies what it writes against the original's outputs.
pub fn instrumented(scop: &Scop, block: &str) -> Result<String, CodegenError> {
    let ctx = new_context();
    let scop = &*super::pinned(&ctx, scop)?;
    let mut dumps = dump_code(&ctx, scop)?;
    for e in &scop.exit_values {
        dumps.push_str(&format!(
            "  polytune_rt_dump(\"{0}\", \"{1}\", (const void *)&{0}, (unsigned long)sizeof({1}));\n",
            e.variable, e.ty
        ));
    }
    // The dumps' bounds may name the literals modelled as parameters.
    let constants: String =
        scop.constants.iter().map(|(name, value)| format!("  const long {name} = {value}L;\n")).collect();
    Ok(format!(
        "{{ /* polytune: the exported region of {}, instrumented */\n{constants}  \
         void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         polytune_rt_start();\n{block}\n  polytune_rt_stop();\n{dumps}}}\n",
        scop.function
    ))
}

/// The SCoP's literals modelled as parameters ([`Scop::constants`]), and
/// its block-scope variables, declared once for the whole region (the
/// statements of a schedule may leave the blocks that declared them). A
/// local struct's members (`p.a`) come with the struct (`p`).
pub(super) fn local_declarations(scop: &Scop) -> String {
    let mut out = String::new();
    for (name, value) in &scop.constants {
        out.push_str(&format!("  const long {name} = {value}L;\n"));
    }
    for a in scop.arrays.iter().filter(|a| a.local && !a.is_struct_member()) {
        // An expanded scalar's array ([`model::expansion`]) is ours, not
        // the program's: on the heap, whatever its loop's extent.
        if scop.expansions.iter().any(|e| e.array == a.name) {
            let extents: Vec<&str> = a.extents.iter().map(|e| e.as_deref().unwrap_or("1")).collect();
            let ty = &a.element_type;
            // A pointer to its rows (`double (*a)[(n) + 1]`): `a[i][j]`.
            let rows: String = extents[1..].iter().map(|e| format!("[{e}]")).collect();
            let size: String = extents.iter().map(|e| format!(" * (unsigned long) ({e})")).collect();
            out.push_str(&format!(
                "  {ty} (*{}){rows} = ({ty} (*){rows}) __builtin_malloc(sizeof({ty}){size});\n",
                a.name
            ));
            continue;
        }
        let extents: String = a.extents.iter().map(|e| format!("[{}]", e.as_deref().unwrap_or(""))).collect();
        out.push_str(&format!("  {} {}{extents};\n", a.element_type, a.name));
    }
    out
}

/// The loop iterators the program may read after the region, at the
/// values the original's loops leave ([`Scop::exit_values`]): the
/// region's loops use iterators of their own.
fn exit_values(scop: &Scop) -> String {
    scop.exit_values.iter().map(|e| format!("  {} = {};\n", e.variable, e.value)).collect()
}

/// The expanded scalars' arrays freed at the region's end.
fn expansion_frees(scop: &Scop) -> String {
    scop.expansions.iter().map(|e| format!("  __builtin_free({});\n", e.array)).collect()
}

/// Code that dumps, for every array and scalar the SCoP writes, exactly the
/// elements it writes (its write footprint), in lexicographic order. Elements
/// never written are not outputs: they may even be uninitialised (durbin's
/// local `z`), and no declared extent is needed.
pub(super) fn dump_code(ctx: &Context, scop: &Scop) -> Result<String, CodegenError> {
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| a.written && !a.local) {
        out.push_str(&record_code(ctx, scop, a, AccessKind::Write, "polytune_rt_dump")?);
    }
    Ok(out)
}

/// Code that hands `call` (the runtime's `polytune_rt_dump` or
/// `polytune_rt_capture`) a scalar `a`, or the elements of array `a` the
/// SCoP accesses as `kind`, gathered in the order of [`element_loops`].
pub(super) fn record_code(
    ctx: &Context,
    scop: &Scop,
    a: &model::scop::Array,
    kind: AccessKind,
    call: &str,
) -> Result<String, CodegenError> {
    let ty = &a.element_type;
    if a.extents.is_empty() {
        return Ok(format!(
            "  {call}(\"{0}\", \"{ty}\", (const void *)&{0}, (unsigned long)sizeof({ty}));\n",
            a.name
        ));
    }
    let footprint = footprint(ctx, scop, &a.name, kind)?;
    let (loops, macro_name, params, element) = element_loops(ctx, scop, a, &footprint)?;
    Ok(format!(
        "  {{\n    unsigned long polytune_n = 0;\n{AST_MACROS}#define {macro_name}({params}) polytune_n++\n{loops}\
         #undef {macro_name}\n    {ty} *polytune_buf = ({ty} *)__builtin_malloc(polytune_n * sizeof({ty}) + 1);\n    \
         polytune_n = 0;\n#define {macro_name}({params}) polytune_buf[polytune_n++] = {element}\n{loops}\
         #undef {macro_name}\n{UNDEF_AST_MACROS}    {call}(\"{name}\", \"{ty}\", (const void *)polytune_buf, \
         polytune_n * sizeof({ty}));\n    __builtin_free(polytune_buf);\n  }}\n",
        name = a.name,
    ))
}

/// Loops over the elements of `footprint` (of array `a`) in lexicographic
/// order that call the macro `polytune_W_<array>(x0, ...)` on each, with
/// that macro's name, its parameters and the element it names (`A[(x0)][(x1)]`):
/// the order in which dumps, captures and replays list an array's elements.
pub(super) fn element_loops(
    ctx: &Context,
    scop: &Scop,
    a: &model::scop::Array,
    footprint: &UnionSet,
) -> Result<(String, String, String, String), CodegenError> {
    let what = || format!("the elements of {}", a.name);
    let isl = isl_name(&a.name);
    let footprint = footprint.to_str().ctx(what)?;
    let (loops, vars) = lexicographic_loops(ctx, &scop.context, scop, &isl, a.rank(), footprint, 2)?;
    let element = a.element(&vars.iter().map(|v| format!("({v})")).collect::<Vec<_>>());
    Ok((loops, format!("{DUMP_PREFIX}{isl}"), vars.join(", "), element))
}

/// Loops, at `indent`, over the elements of `set` (tuple `isl`, `rank`
/// dimensions) in lexicographic order, calling `polytune_W_<isl>(x0, ...)`
/// on each under `context`; and the macro's parameters.
fn lexicographic_loops(
    ctx: &Context,
    context: &str,
    scop: &Scop,
    isl: &str,
    rank: usize,
    set: &str,
    indent: usize,
) -> Result<(String, Vec<String>), CodegenError> {
    let what = || format!("the elements of {isl}");
    let prefix = iterator_prefix(scop);
    let vars: Vec<String> = (0..rank).map(|d| format!("x{d}")).collect();
    let members: Vec<String> =
        vars.iter().map(|v| format!("{{ {isl}[{}] -> [({v})] }}", vars.join(", "))).collect();
    let tree = format!("{{ domain: \"{set}\", child: {{ schedule: \"[{}]\" }} }}", members.join(", "));
    let tree = Schedule::read_from_str(ctx, &tree).ctx(what)?;
    let ast = build_ast(ctx, context, tree, &prefix)?;
    let mut loops = Printer::plain(indent, DUMP_PREFIX, &prefix, Default::default());
    loops.node(&ast, None)?;
    Ok((loops.out, vars))
}

/// Code that gives each element of an expanded array ([`model::expansion`])
/// the value of its copy that the original's last write of it went to
/// (`e.last`, `{ [e..., x...] }`): `sum[x] = polytune_expanded_sum[e][x]`
/// over every element the region writes. `context`: where the loops run.
pub(super) fn write_back_loops(
    ctx: &Context,
    context: &str,
    scop: &Scop,
    e: &model::scop::Expansion,
    last: &str,
) -> Result<String, CodegenError> {
    let what = || format!("the last values of {}", e.scalar);
    let Some(original) = scop.arrays.iter().find(|a| a.name == e.scalar) else {
        return Err(CodegenError::Unsupported(format!(
            "the expanded {} is not an array of the SCoP",
            e.scalar
        )));
    };
    let isl = isl_name(&e.array);
    let domain = Set::read_from_str(ctx, last).ctx(what)?.set_tuple_name(&isl).ctx(what)?;
    let domain = domain.to_str().ctx(what)?;
    let (loops, vars) = lexicographic_loops(ctx, context, scop, &isl, e.values.len(), domain, 1)?;
    let subscripts: Vec<String> = vars.iter().map(|v| format!("({v})")).collect();
    let own = original.element(&subscripts[subscripts.len() - e.rank..]);
    let copy: String = subscripts.iter().map(|s| format!("[{s}]")).collect();
    Ok(format!(
        "#define {DUMP_PREFIX}{isl}({}) {own} = {}{copy}
{}#undef {DUMP_PREFIX}{isl}
",
        vars.join(", "),
        e.array,
        loops
    ))
}

/// The elements of `array` the SCoP's statements access as `kind`, as a
/// set of `array[...]` under the SCoP's context. An expanded array's
/// writes are its expansion's, and its elements written after the region
/// ([`write_back_loops`]) those its statements wrote.
pub(super) fn footprint(
    ctx: &Context,
    scop: &Scop,
    array: &str,
    kind: AccessKind,
) -> Result<UnionSet, CodegenError> {
    let what = || format!("the footprint of {array}");
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let mut footprint = UnionSet::empty_ctx(ctx).ctx(what)?;
    for st in &scop.statements {
        let domain = Set::read_from_str(ctx, &st.domain).ctx(what)?;
        for acc in st.accesses.iter().filter(|x| x.kind == kind && x.array == array) {
            let touched = isl_rs::Map::read_from_str(ctx, &acc.relation)
                .ctx(what)?
                .intersect_domain(domain.copy().ctx(what)?)
                .ctx(what)?
                .range()
                .ctx(what)?;
            footprint = footprint.union(UnionSet::from_set(touched).ctx(what)?).ctx(what)?;
        }
    }
    let expansions = scop.expansions.iter().filter(|e| e.scalar == array && e.rank > 0);
    for e in expansions.filter(|_| kind == AccessKind::Write) {
        let Some(last) = &e.last else { continue };
        let loops = (e.values.len() - e.rank) as u32;
        let written =
            Set::read_from_str(ctx, last).ctx(what)?.project_out(DimType::Set, 0, loops).ctx(what)?;
        let written = written.set_tuple_name(&isl_name(array)).ctx(what)?;
        footprint = footprint.union(UnionSet::from_set(written).ctx(what)?).ctx(what)?;
    }
    Ok(footprint.intersect_params(context).ctx(what)?.coalesce().ctx(what)?)
}

/// The arrays (and scalars) whose elements the region may read before it
/// writes them: a read that no earlier write of the region feeds, by isl's
/// dataflow in the original order. An array read only after the region has
/// written it (2mm's `tmp`) is not among them.
pub(super) fn read_first(ctx: &Context, scop: &Scop) -> Result<Vec<String>, CodegenError> {
    let what = || "the elements the region reads before writing".to_string();
    let (flow, _) = model::deps::untagged_flow(ctx, scop, |_| true)?;
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let live_in =
        flow.get_may_no_source().ctx(what)?.range().ctx(what)?.intersect_params(context).ctx(what)?;
    let mut out = Vec::new();
    for a in &scop.arrays {
        let zeros = vec!["0"; a.rank()].join(", ");
        let space = Set::read_from_str(ctx, &format!("{{ {}[{zeros}] }}", isl_name(&a.name)))
            .ctx(what)?
            .get_space()
            .ctx(what)?;
        if !live_in.copy().ctx(what)?.extract_set(space).ctx(what)?.is_empty().ctx(what)? {
            out.push(a.name.clone());
        }
    }
    Ok(out)
}

/// Code that makes the region's transposed copies (`Scop::copies`) before
/// it (`copy[x0][x1] = of[x1][x0]`, times the copy's factor, for each element the statements read of
/// the copy, by 32 × 32 blocks, the block rows in parallel with `openmp`),
/// and the code that frees them after it. The copies live on the heap: a
/// matrix is larger than a stack. Both go inside the region's statement
/// macros, whose `min`/`floord` the copy loops use: undefining them here
/// broke the loops after the copies where those were not outlined
/// (`transpose=on` without `restrict=on`).
pub(super) fn copy_code(ctx: &Context, scop: &Scop, openmp: bool) -> Result<(String, String), CodegenError> {
    let what = || "building the transposed copies".to_string();
    let prefix = iterator_prefix(scop);
    let (mut make, mut free) = (String::new(), String::new());
    for c in &scop.copies {
        let Some(a) = scop.arrays.iter().find(|a| a.name == c.copy) else {
            return Err(CodegenError::Unsupported(format!(
                "the copy {} is not an array of the SCoP",
                c.copy
            )));
        };
        let (ty, rows, cols) = match (&a.element_type, &a.extents[..]) {
            (ty, [Some(rows), Some(cols)]) => (ty, rows, cols),
            _ => return Err(CodegenError::Unsupported(format!("the copy {} needs both extents", c.copy))),
        };
        let isl = isl_name(&c.copy);
        let read = footprint(ctx, scop, &c.copy, AccessKind::Read)?;
        // Blocks of 32 × 32, rows of the copy innermost: writes contiguous, reads within a block.
        let members =
            ["floor(x0/32)", "floor(x1/32)", "x0", "x1"].map(|m| format!("{{ {isl}[x0, x1] -> [{m}] }}"));
        let tree = format!(
            "{{ domain: \"{}\", child: {{ schedule: \"[{}]\" }} }}",
            read.to_str().ctx(what)?,
            members.join(", ")
        );
        let tree = Schedule::read_from_str(ctx, &tree).ctx(what)?;
        let ast = build_ast(ctx, &scop.context, tree, &prefix)?;
        let mut loops = Printer::plain(1, COPY_PREFIX, &prefix, Default::default());
        let outer = format!("{prefix}0");
        loops.node(&ast, openmp.then_some(outer.as_str()))?;
        let (name, of) = (&c.copy, &c.of);
        let scaled = c.factor.as_ref().map(|f| format!("{f} * ")).unwrap_or_default();
        make.push_str(&format!(
            "  {ty} (*{name})[{cols}] = ({ty} (*)[{cols}])polytune_copy_alloc(sizeof({ty}) * ({rows}) * ({cols}) + 1);\n\
             #define {COPY_PREFIX}{isl}(x0, x1) {name}[(x0)][(x1)] = {scaled}{of}[(x1)][(x0)]\n{loops}\
             #undef {COPY_PREFIX}{isl}\n",
            cols = cols.trim(),
            rows = rows.trim(),
            loops = loops.out,
        ));
        free.push_str(&format!("  __builtin_free({name});\n"));
    }
    if !make.is_empty() {
        make.insert_str(0, COPY_ALLOC);
        free.push_str("#undef polytune_copy_alloc\n");
    }
    Ok((make, free))
}

/// How the copies are allocated: on Linux, copies of 2 MiB and more are
/// aligned to and advised onto huge pages (transparent huge pages in
/// `madvise` mode, the common default). A copy is made inside the timed
/// region and read down its columns' panels a row of the original apart:
/// with 4 KiB pages each page costs a fault when first written and the
/// panels a TLB miss per row (syrk LARGE, 1200 × 1000 doubles: about a
/// quarter of the variant's time). Elsewhere, or when that fails, `malloc`.
/// The block-scope declarations match glibc's.
const COPY_ALLOC: &str = "#if defined(__linux__)\n\
  int posix_memalign(void **, unsigned long, unsigned long);\n\
  int madvise(void *, unsigned long, int);\n\
#define polytune_copy_alloc(bytes) ({ \\\n\
    unsigned long polytune_b = (bytes), polytune_h = 2ul << 20; void *polytune_p = 0; \\\n\
    if (polytune_b >= polytune_h) { \\\n\
      polytune_b = (polytune_b + polytune_h - 1) & ~(polytune_h - 1); \\\n\
      if (posix_memalign(&polytune_p, polytune_h, polytune_b) == 0) \\\n\
        madvise(polytune_p, polytune_b, 14 /* MADV_HUGEPAGE */); \\\n\
      else \\\n\
        polytune_p = 0; \\\n\
    } \\\n\
    polytune_p ? polytune_p : __builtin_malloc(polytune_b); })\n\
#else\n\
#define polytune_copy_alloc(bytes) __builtin_malloc(bytes)\n\
#endif\n";

/// The macro prefix of a copy's statement.
const COPY_PREFIX: &str = "polytune_copy_";

/// `s` as the inside of a C string literal.
pub(super) fn c_string(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}
