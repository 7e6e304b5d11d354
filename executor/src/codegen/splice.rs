//! The generated region in the program: timer calls around it, the
//! block-scope declarations it needs, and the dump of every output after it.

use super::ast::build_ast;
use super::ast::iterator_prefix;
use super::print::Printer;
use super::print::AST_MACROS;
use super::print::DUMP_PREFIX;
use super::print::UNDEF_AST_MACROS;
use super::CodegenError;
use isl_rs::{Context, Schedule, Set, UnionSet};
use space::isl::new_context;
use space::isl::IslResultExt;
use space::scop::isl_name;
use space::scop::AccessKind;
use space::scop::Scop;
use space::scop::Source;

/// Replaces the SCoP's bytes with `code`, between the timer calls and
/// followed by the dump of everything the SCoP writes.
pub(super) fn splice(source: &Source, scop: &Scop, code: &str) -> Result<String, CodegenError> {
    let ctx = new_context();
    let dumps = dump_code(&ctx, scop)?;
    let region = format!(
        "{{ /* polytune: SCoP of {} */\n{}  void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         polytune_rt_start();\n  {{\n{code}\n  }}\n  polytune_rt_stop();\n{dumps}}}\n",
        scop.function,
        local_declarations(scop)
    );
    let (a, b) = scop.span;
    Ok(format!("{}{}{}", &source.text[..a], region, &source.text[b..]))
}

/// The SCoP's block-scope variables, declared once for the whole region
/// (the statements of a schedule may leave the blocks that declared them).
fn local_declarations(scop: &Scop) -> String {
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| a.local) {
        let extents: String = a.extents.iter().map(|e| format!("[{}]", e.as_deref().unwrap_or(""))).collect();
        out.push_str(&format!("  {} {}{extents};\n", a.element_type, a.name));
    }
    out
}

/// Code that dumps, for every array and scalar the SCoP writes, exactly the
/// elements it writes (its write footprint), in lexicographic order. Elements
/// never written are not outputs: they may even be uninitialised (durbin's
/// local `z`), and no declared extent is needed.
fn dump_code(ctx: &Context, scop: &Scop) -> Result<String, CodegenError> {
    let what = || "building the output dump".to_string();
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let prefix = iterator_prefix(scop);
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| a.written && !a.local) {
        let ty = &a.element_type;
        if a.extents.is_empty() {
            out.push_str(&format!(
                "  polytune_rt_dump(\"{0}\", \"{ty}\", (const void *)&{0}, (unsigned long)sizeof({ty}));\n",
                a.name
            ));
            continue;
        }
        let mut footprint = UnionSet::empty_ctx(ctx).ctx(what)?;
        for st in &scop.statements {
            let domain = Set::read_from_str(ctx, &st.domain).ctx(what)?;
            for acc in st.accesses.iter().filter(|x| x.kind == AccessKind::Write && x.array == a.name) {
                let written = isl_rs::Map::read_from_str(ctx, &acc.relation)
                    .ctx(what)?
                    .intersect_domain(domain.copy().ctx(what)?)
                    .ctx(what)?
                    .range()
                    .ctx(what)?;
                footprint = footprint.union(UnionSet::from_set(written).ctx(what)?).ctx(what)?;
            }
        }
        let footprint =
            footprint.intersect_params(context.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
        let isl = isl_name(&a.name);
        let vars: Vec<String> = (0..a.rank()).map(|d| format!("x{d}")).collect();
        let members: Vec<String> =
            vars.iter().map(|v| format!("{{ {isl}[{}] -> [({v})] }}", vars.join(", "))).collect();
        let tree = format!(
            "{{ domain: \"{}\", child: {{ schedule: \"[{}]\" }} }}",
            footprint.to_str().ctx(what)?,
            members.join(", ")
        );
        let tree = Schedule::read_from_str(ctx, &tree).ctx(what)?;
        let ast = build_ast(ctx, &scop.context, tree, &prefix)?;
        let mut loops = Printer::plain(2, DUMP_PREFIX, &prefix, Default::default());
        loops.node(&ast, None)?;
        let params = vars.join(", ");
        let element: String = vars.iter().map(|v| format!("[({v})]")).collect();
        let macro_name = format!("{DUMP_PREFIX}{isl}");
        out.push_str(&format!(
            "  {{\n    unsigned long polytune_n = 0;\n{AST_MACROS}#define {macro_name}({params}) polytune_n++\n{loops}\
             #undef {macro_name}\n    {ty} *polytune_buf = ({ty} *)__builtin_malloc(polytune_n * sizeof({ty}) + 1);\n    \
             polytune_n = 0;\n#define {macro_name}({params}) polytune_buf[polytune_n++] = {name}{element}\n{loops}\
             #undef {macro_name}\n{UNDEF_AST_MACROS}    polytune_rt_dump(\"{name}\", \"{ty}\", (const void *)polytune_buf, \
             polytune_n * sizeof({ty}));\n    __builtin_free(polytune_buf);\n  }}\n",
            loops = loops.out,
            name = a.name,
        ));
    }
    Ok(out)
}
