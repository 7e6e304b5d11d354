//! isl's AST generator: the tree as it gets it (tiles grouped over a relaxed
//! domain) and the call itself, with iterator names that shadow nothing.

use super::marks::{is_tile_mark, TILE_MARK};
use super::CodegenError;
use isl_rs::{
    ASTNode, ASTNodeType, BasicSet, Context, DimType, Id, IdList, PwAff, Schedule, ScheduleNode, Set,
    UnionSet,
};
use model::isl::{ffi, IslResultExt};
use model::scop::Scop;

/// The tree as the AST generator gets it when some band was tiled with tile
/// iterators: at each `TILE_MARK`, the instances are grouped by their
/// prefix schedule (the outer loops and the tile loops, isl's
/// `isl_schedule_node_group`, an expansion node), and the groups' domain,
/// the tiles, is replaced by a simple superset without integer divisions
/// (`relax_tiles`). isl then generates the tile loops from that
/// polyhedron, as CLooG does for Pluto, and the point loops below the
/// expansion exactly, for the given tile; a tile of the superset that
/// holds no instance runs an empty body. Otherwise isl generates the tile
/// loops from the exact integer projection of the instances: for a
/// wavefront over a 4-d time-skewed band (heat-3d) a union of dozens of
/// parametric cases whose strides cost minutes to detect.
pub(super) fn group_tiles(tree: Schedule) -> Result<Schedule, CodegenError> {
    let what = || "grouping tiles".to_string();
    fn visit(mut node: ScheduleNode, groups: &mut usize) -> Result<ScheduleNode, CodegenError> {
        let what = || "grouping tiles".to_string();
        if is_tile_mark(&node)? {
            let id = Id::read_from_str(&node.get_ctx(), &format!("{TILE_MARK}_{groups}")).ctx(what)?;
            *groups += 1;
            // The point band, now below an expansion node, below the mark.
            node = node.child(0).ctx(what)?.group(id).ctx(what)?.parent().ctx(what)?.parent().ctx(what)?;
        }
        for i in 0..node.n_children().ctx(what)? {
            node = visit(node.child(i).ctx(what)?, groups)?.parent().ctx(what)?;
        }
        Ok(node)
    }
    let mut groups = 0;
    let root = visit(tree.get_root().ctx(what)?, &mut groups)?;
    let tree = root.get_schedule().ctx(what)?;
    if groups == 0 {
        return Ok(tree);
    }
    let domain = tree.get_domain().ctx(what)?;
    let mut relaxed = UnionSet::empty_ctx(&tree.get_ctx()).ctx(what)?;
    let list = domain.get_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let mut set = list.get_at(i).ctx(what)?;
        if set.get_tuple_name().ctx(what)?.starts_with(TILE_MARK) {
            set = relax_tiles(set)?;
        }
        relaxed = relaxed.union(UnionSet::from_set(set).ctx(what)?).ctx(what)?;
    }
    // isl has no way to widen a domain: the tree is read back with the
    // relaxed one (its text is printed first).
    let text = tree.to_str().ctx(what)?.to_string();
    let rest = text
        .strip_prefix("{ domain: \"")
        .and_then(|r| r.split_once('"'))
        .map(|(_, rest)| rest)
        .ok_or_else(|| CodegenError::Unsupported(format!("unexpected schedule text: {text}")))?;
    let text = format!("{{ domain: \"{}\"{rest}", relaxed.to_str().ctx(what)?);
    Ok(Schedule::read_from_str(&tree.get_ctx(), &text).ctx(what)?)
}

/// A superset of the tiles `tiles` (outer loops, then the tile loops) on
/// which isl's exact integer projections, as the AST generator computes
/// them loop by loop, are cheap: the rational projection of the tiles
/// (Fourier-Motzkin, `isl_set_remove_divs`), of whose constraints only
/// those with coefficients 0 or ±1 on the inner dimensions (up to a common
/// factor) are kept, within the rational bounds of each dimension alone.
/// The dropped constraints (`2 T3 >= 2 w - 3 T1 - 2 T2` for heat-3d's
/// wavefront) would leave integer divisions in every projection.
fn relax_tiles(tiles: Set) -> Result<Set, CodegenError> {
    let what = || "relaxing the tile domain".to_string();
    let name = tiles.get_tuple_name().ctx(what)?.to_string();
    let rational = tiles.remove_divs().ctx(what)?.coalesce().ctx(what)?;
    let n = rational.dim(DimType::Set).ctx(what)? as u32;
    let mut out = Set::empty(rational.get_space().ctx(what)?).ctx(what)?;
    let list = rational.get_basic_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let bset = list.get_at(i).ctx(what)?;
        let mut kept = BasicSet::universe(bset.get_space().ctx(what)?).ctx(what)?;
        let constraints = bset.get_constraint_list().ctx(what)?;
        for j in 0..constraints.size().ctx(what)? {
            let c = constraints.get_at(j).ctx(what)?;
            let mut coefficients = Vec::new();
            for d in 1..n as i32 {
                let v = c.get_coefficient_val(DimType::Set, d).ctx(what)?;
                coefficients.push(v.get_num_si().ctx(what)?.abs());
            }
            let g = coefficients.iter().fold(0, |g, &c| gcd(g, c));
            if g == 0 || coefficients.iter().all(|&c| c == 0 || c == g) {
                kept = kept.add_constraint(c).ctx(what)?;
            }
        }
        out = out.union(kept.to_set().ctx(what)?).ctx(what)?;
    }
    // Each dimension within its own rational bounds, so that dropping
    // constraints leaves the set bounded.
    for d in 0..n {
        let alone = rational
            .copy()
            .ctx(what)?
            .project_out(DimType::Set, d + 1, n - d - 1)
            .ctx(what)?
            .project_out(DimType::Set, 0, d)
            .ctx(what)?
            .remove_divs()
            .ctx(what)?
            .insert_dims(DimType::Set, 0, d)
            .ctx(what)?
            .insert_dims(DimType::Set, d + 1, n - d - 1)
            .ctx(what)?
            .set_tuple_name(&name)
            .ctx(what)?;
        out = out.intersect(alone).ctx(what)?;
    }
    Ok(out.coalesce().ctx(what)?)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The marks `{ANNOTATED_MARK}_{k}` are numbered again, after isl
/// generated them, by occurrence: isl may generate a mark's subtree more
/// than once (split loops, strided offsets), each copy for part of its
/// instances. Each occurrence's name gets the values of the outer schedule
/// dimensions there as C expressions in the AST's iterators:
/// `polytune_kernel_3;2 * c0 + 1` is occurrence 3. isl's iterators need not
/// be those values (it shifts and scales the loop of statements with
/// strided offsets: `S1 -> [2t]`, `S2 -> [2t + 1]` gives one loop over `t`
/// and two copies of the body), so code at a mark that needs the values
/// takes them from here.
pub(super) const ANNOTATED_MARK: &str = "polytune_kernel";

/// What `annotate` reads and writes: for each mark number, the map from
/// the statement instances below it to the outer schedule dimensions; for
/// each occurrence, its mark number and the instances isl put under it
/// (isl text).
struct Annotations {
    prefixes: Vec<std::ffi::CString>,
    occurrences: Vec<(usize, String)>,
}

impl Annotations {
    /// The new name of the mark `name` at `site`: its occurrence number and
    /// the outer schedule values there (`None`: not one of ours).
    fn annotate(&mut self, name: &str, site: &ffi::MarkSite) -> Option<String> {
        let k = name.strip_prefix(ANNOTATED_MARK)?.strip_prefix('_')?.parse::<usize>().ok()?;
        let prefix = self.prefixes.get(k)?;
        let mut text = format!("{ANNOTATED_MARK}_{}", self.occurrences.len());
        self.occurrences.push((k, site.instances()));
        for value in site.values(prefix) {
            text.push(';');
            text.push_str(&value);
        }
        Some(text)
    }
}

/// `pa`, a function of the parameters of `context`, as a C expression
/// (isl's `floord`, `min` and `max` macros, as in generated loops).
pub(super) fn c_expr(ctx: &Context, context: &str, pa: PwAff) -> Result<String, CodegenError> {
    let set = Set::read_from_str(ctx, context).ctx(|| "printing a bound".to_string())?;
    Ok(ffi::pw_aff_to_c(ctx, set, pa)?)
}

/// The parameter values under which every statement runs at least once
/// (within `scop.context`), as an isl context, and as a C condition when
/// it says more than the context (`None`: always). Code generated under
/// this context leaves out the cases where a size is zero, which isl
/// would otherwise generate apart (2mm tiled with isolated full tiles:
/// 8.5 s of compiling instead of 1.1 s, and three times the AST time);
/// the region runs the original code in those cases.
pub(super) fn every_statement_runs(
    ctx: &Context,
    scop: &Scop,
) -> Result<(String, Option<String>), CodegenError> {
    let what = || "the parameters under which every statement runs".to_string();
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let domain = UnionSet::read_from_str(ctx, &scop.domain()).ctx(what)?;
    let list = domain.get_set_list().ctx(what)?;
    let mut runs = context.copy().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let params = list.get_at(i).ctx(what)?.params().ctx(what)?;
        runs = runs.intersect(params).ctx(what)?;
    }
    let runs = runs.coalesce().ctx(what)?;
    let text = runs.to_str().ctx(what)?.to_string();
    // The guard holds where the model's assumption does too: what the
    // program states is what it is checked within.
    let known = match &scop.assumed {
        Some(a) => Set::read_from_str(ctx, &a.known).ctx(what)?,
        None => context,
    };
    if known.is_subset(&runs).ctx(what)? {
        return Ok((text, None));
    }
    Ok((text, Some(c_condition(ctx, known, runs)?)))
}

/// `set`, parameters only, as a C condition that holds within `context`
/// exactly where `set` does.
pub(super) fn c_condition(ctx: &Context, context: Set, set: Set) -> Result<String, CodegenError> {
    Ok(ffi::set_to_c(ctx, context, set)?)
}

/// The type of an AST node (read past isl-rs, which maps it off by one).
pub(super) fn node_type(node: &ASTNode) -> ASTNodeType {
    ffi::ast_node_type(node)
}

/// isl's AST generator (through `model::isl::ffi`: isl-rs does not bind it).
pub(super) fn build_ast(
    ctx: &Context,
    context: &str,
    schedule: Schedule,
    prefix: &str,
) -> Result<ASTNode, CodegenError> {
    Ok(build_annotated_ast(ctx, context, schedule, prefix, &[])?.0)
}

/// `build_ast` without `else` branches, for a kernel's code: isl joins
/// consecutive code under disjoint guards into `if (g) {a} else {b}`, which
/// can put a block's barrier under a thread's guard (2mm's kernel of three
/// statements: one thread's copy-in of a private array, `else` a stage of
/// the blocks beyond that array). Every thread of a block still takes the
/// barrier or none does, but the phased emulation needs each barrier under
/// its own, block-wide guards.
pub(super) fn build_ast_without_else(
    ctx: &Context,
    context: &str,
    schedule: Schedule,
    prefix: &str,
) -> Result<ASTNode, CodegenError> {
    ffi::set_ast_build_allow_else(ctx, false);
    let ast = build_ast(ctx, context, schedule, prefix);
    ffi::set_ast_build_allow_else(ctx, true);
    ast
}

/// `build_ast`, with the marks `{ANNOTATED_MARK}_{k}` numbered by
/// occurrence and annotated with the outer schedule values there
/// (`annotate_mark`); `prefixes[k]`: the map (isl text) from the statement
/// instances below mark k to those values. Also each occurrence's mark
/// number and instances.
pub(super) fn build_annotated_ast(
    ctx: &Context,
    context: &str,
    schedule: Schedule,
    prefix: &str,
    prefixes: &[String],
) -> Result<(ASTNode, Vec<(usize, String)>), CodegenError> {
    let what = || "generating the AST".to_string();
    let mut marks = Annotations {
        prefixes: prefixes.iter().map(|p| std::ffi::CString::new(p.as_str()).unwrap_or_default()).collect(),
        occurrences: Vec::new(),
    };
    let mut names = IdList::alloc(ctx, MAX_LOOP_DEPTH as i32).ctx(what)?;
    for d in 0..MAX_LOOP_DEPTH {
        names = names.add(Id::read_from_str(ctx, &format!("{prefix}{d}")).ctx(what)?).ctx(what)?;
    }
    let set = Set::read_from_str(ctx, context).ctx(what)?;
    let mut annotate = |name: &str, site: &ffi::MarkSite| marks.annotate(name, site);
    let on_mark: Option<&mut ffi::OnMark> = match prefixes.is_empty() {
        true => None,
        false => Some(&mut annotate),
    };
    let node = ffi::ast_from_schedule(ctx, set, names, schedule, on_mark)?;
    Ok((node, marks.occurrences))
}

/// Loops deeper than this get isl's own iterator names (it never happens in
/// practice: tiling doubles a depth of at most a handful).
pub(super) const MAX_LOOP_DEPTH: usize = 64;

/// A prefix `p` such that no name `p0`, `p1`, ... appears in the SCoP's
/// statements: generated iterators must not shadow the program's variables
/// (deriche has a scalar `c1`).
pub(super) fn iterator_prefix(scop: &Scop) -> String {
    let mut taken = std::collections::HashSet::new();
    for s in &scop.statements {
        taken.extend(identifiers(&s.text));
    }
    taken.extend(scop.params.iter().cloned());
    let clashes = |p: &str| {
        taken.iter().any(|t| {
            t.strip_prefix(p).is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut prefix = String::from("c");
    while clashes(&prefix) {
        prefix.push('_');
    }
    prefix
}

/// C identifiers in `text` (numbers skipped).
fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for ch in text.chars().chain(std::iter::once(' ')) {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                out.push(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    out
}
