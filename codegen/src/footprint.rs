//! Tile footprints and the copy statements that stage them, shared by the
//! GPU's shared and private promotion and the CPU's packing: what a set of
//! references reads under one value of the outer loops (a box of constant
//! size, as isl bounds it), a copy statement over it grafted into the
//! schedule tree, and statement bodies rewritten to read the copy.

use isl_rs::{ASTLoopType, Context, DimType, Map, MultiUnionPwAff, ScheduleNode, UnionMap, UnionSet};
use model::isl::IslResultExt;
use model::scop::text::{fold, squeeze, uses};
use model::scop::{Access, AccessKind, Array, Scop, Statement};

use super::print::{parenthesize, statement_body, MACRO_PREFIX};
use super::CodegenError;

/// One read with its statement's iterators (to spell it as the statement's
/// macro does).
pub(crate) type Read<'s> = (&'s Access, &'s [String]);

/// The reads of `array` by `stmts`, grouped for buffers: all in one where
/// one box bounds their tile's footprint, else one group per access
/// relation (syrk's `A[i][k]` and `A[j][k]`, whose tiles lie apart). Empty
/// where they do not read it.
pub(crate) fn read_groups<'s>(
    ctx: &Context,
    prefix: &UnionMap,
    domain: &UnionSet,
    stmts: &[&'s Statement],
    array: &str,
) -> Result<Vec<Vec<Read<'s>>>, CodegenError> {
    let reads: Vec<Read<'s>> = stmts
        .iter()
        .flat_map(|s| {
            s.accesses
                .iter()
                .filter(|a| a.kind == AccessKind::Read && a.array == array)
                .map(|a| (a, s.c_iterators.as_slice()))
        })
        .collect();
    if reads.is_empty() || footprint(ctx, prefix, domain, &reads)?.is_some() {
        return Ok(if reads.is_empty() { Vec::new() } else { vec![reads] });
    }
    let mut groups: Vec<Vec<Read<'s>>> = Vec::new();
    for r in reads {
        match groups.iter_mut().find(|g| g[0].0.relation == r.0.relation) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    Ok(groups)
}

/// Every reference to `array` by `stmts`, reads and writes.
pub(crate) fn references<'s>(stmts: &[&'s Statement], array: &str) -> Vec<Read<'s>> {
    stmts
        .iter()
        .flat_map(|s| s.accesses.iter().filter(|a| a.array == array).map(|a| (a, s.c_iterators.as_slice())))
        .collect()
}

/// Whether uses of `array` can be retargeted to a copy: subscripted
/// (`name[...]`, not a struct member's), of an element type we know.
pub(crate) fn copyable(array: &Array) -> bool {
    array.rank() > 0 && !array.is_struct_member() && element_bytes(&array.element_type).is_some()
}

/// Statement macros rewritten to read copies (shared memory, private
/// arrays, packed tiles), by statement name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bodies(Vec<(String, String)>);

impl Bodies {
    /// `s`'s macro body as rewritten so far.
    pub(crate) fn current(&self, s: &Statement) -> String {
        self.0.iter().find(|(n, _)| *n == s.name).map(|(_, b)| b.clone()).unwrap_or_else(|| statement_body(s))
    }

    pub(crate) fn set(&mut self, name: String, body: String) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = body,
            None => self.0.push((name, body)),
        }
    }

    /// Each of `stmts`' bodies with the uses of `array` among `refs` read
    /// from `buffer` ([`retarget`]), set; `false`, nothing set, where one
    /// body cannot be rewritten.
    pub(crate) fn retarget_all(
        &mut self,
        stmts: &[&Statement],
        array: &Array,
        buffer: &str,
        refs: &[Read],
        subscript: impl Fn(usize, &str) -> String,
    ) -> bool {
        let spelled: Vec<String> = refs.iter().map(|(a, its)| squeeze(&parenthesize(&a.text, its))).collect();
        let mut bodies = Vec::new();
        for s in stmts {
            match retarget(&self.current(s), &array.name, buffer, array.rank(), &spelled, &subscript) {
                Some(b) => bodies.push((s.name.clone(), b)),
                None => return false,
            }
        }
        for (s, b) in bodies {
            self.set(s, b);
        }
        true
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    /// The rewritten macros defined (for before the code that needs them)
    /// and the statements' own restored (for after it).
    pub(crate) fn redefine(&self, scop: &Scop) -> (String, String) {
        let (mut prelude, mut postlude) = (String::new(), String::new());
        for (name, body) in &self.0 {
            let s = scop.statements.iter().find(|s| s.name == *name).expect("a statement of the SCoP");
            let args = s.c_iterators.join(", ");
            prelude.push_str(&format!(
                "#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {body}\n"
            ));
            postlude.push_str(&format!(
                "#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {}\n",
                statement_body(s)
            ));
        }
        (prelude, postlude)
    }
}

/// Whether every instance of the statements below `node` runs below it:
/// where a rewritten statement macro, which serves the whole region, may
/// read a copy made around `node`.
pub(crate) fn all_instances_below(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "finding where statements run".to_string();
    let here = node.get_domain().ctx(what)?;
    // isl gives the root (the domain node) an empty domain: the schedule's.
    let all = node.get_schedule().ctx(what)?.get_domain().ctx(what)?;
    let all = all.intersect(here.copy().ctx(what)?.universe().ctx(what)?).ctx(what)?;
    Ok(all.is_subset(&here).ctx(what)?)
}

/// The statements of `domain`, by name.
pub(crate) fn statements(domain: &UnionSet) -> Result<Vec<String>, CodegenError> {
    let what = || "listing a kernel's statements".to_string();
    let list = domain.get_set_list().ctx(what)?;
    let mut out = Vec::new();
    for i in 0..list.size().ctx(what)? {
        out.push(list.get_at(i).ctx(what)?.get_tuple_name().ctx(what)?.to_string());
    }
    Ok(out)
}

/// Bytes of one element of a C type; `None` for one we do not know.
pub(crate) fn element_bytes(ty: &str) -> Option<usize> {
    match ty.trim() {
        "double" | "long" | "long int" | "unsigned long" | "long long" | "unsigned long long" | "int64_t"
        | "uint64_t" | "size_t" => Some(8),
        "float" | "int" | "unsigned" | "unsigned int" | "int32_t" | "uint32_t" => Some(4),
        "short" | "unsigned short" | "int16_t" | "uint16_t" => Some(2),
        "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" => Some(1),
        _ => None,
    }
}

/// A tree to graft: the copy statement `name`, one instance per pair of
/// `footprint` (outer schedule values to array elements), its loops over
/// the elements (unrolled with `unroll`).
pub(crate) fn copy_graft(
    ctx: &Context,
    footprint: Map,
    name: &str,
    unroll: bool,
) -> Result<ScheduleNode, CodegenError> {
    let rank = footprint.dim(DimType::Out).ctx(|| format!("the copy statement {name}"))? as usize;
    copy_graft_loops(ctx, footprint, name, rank, unroll)
}

/// [`copy_graft`] whose statement's instances carry more than the
/// element (packing's offsets): only the first `loops` of the range's
/// dimensions get loops, the others are functions of them and of the outer
/// values.
pub(crate) fn copy_graft_loops(
    ctx: &Context,
    footprint: Map,
    name: &str,
    loops: usize,
    unroll: bool,
) -> Result<ScheduleNode, CodegenError> {
    let what = || format!("the copy statement {name}");
    let depth = footprint.dim(DimType::In).ctx(what)? as usize;
    let ext = footprint
        .domain_map()
        .ctx(what)?
        .reverse()
        .ctx(what)?
        .flatten_range()
        .ctx(what)?
        .set_tuple_name(DimType::Out, name)
        .ctx(what)?;
    let rank = ext.dim(DimType::Out).ctx(what)? as usize - depth;
    let (as_, all) = copy_args(depth, rank);
    let members: Vec<String> =
        as_[..loops].iter().map(|a| format!("{{ {name}[{all}] -> [({a})] }}")).collect();
    let schedule = MultiUnionPwAff::read_from_str(ctx, &format!("[{}]", members.join(", "))).ctx(what)?;
    let graft = ScheduleNode::from_extension(UnionMap::from_map(ext).ctx(what)?).ctx(what)?;
    let mut band = graft.child(0).ctx(what)?.insert_partial_schedule(schedule).ctx(what)?;
    if unroll {
        for m in 0..loops {
            band = band.band_member_set_ast_loop_type(m as i32, ASTLoopType::Unroll).ctx(what)?;
        }
    }
    Ok(band.root().ctx(what)?)
}

/// A copy statement's macro parameters: the element's (`a0`, ...), and
/// all of them after the outer schedule values' (`d0, ..., a0, ...`).
pub(crate) fn copy_args(depth: usize, rank: usize) -> (Vec<String>, String) {
    let ds = (0..depth).map(|d| format!("d{d}"));
    let as_: Vec<String> = (0..rank).map(|d| format!("a{d}")).collect();
    let all = ds.chain(as_.iter().cloned()).collect::<Vec<_>>().join(", ");
    (as_, all)
}

/// What the references `group` read under the stage whose instances are
/// `domain` and whose outer schedule is `prefix`: the access relation,
/// the footprint of each tile (a map from the outer schedule values to
/// the elements) and the extents of its box; `None` where isl finds no
/// box of constant size.
#[allow(clippy::type_complexity)]
pub(crate) fn footprint(
    ctx: &Context,
    prefix: &UnionMap,
    domain: &UnionSet,
    group: &[(&Access, &[String])],
) -> Result<Option<(UnionMap, Map, Vec<i64>)>, CodegenError> {
    let what = || "a tile's footprint".to_string();
    let mut relation: Option<UnionMap> = None;
    for (r, _) in group {
        let m = UnionMap::read_from_str(ctx, &r.relation).ctx(what)?;
        relation = Some(match relation {
            None => m,
            Some(acc) => acc.union(m).ctx(what)?,
        });
    }
    let Some(relation) = relation else { return Ok(None) };
    let relation = relation.intersect_domain(domain.copy().ctx(what)?).ctx(what)?;
    if relation.is_empty().ctx(what)? {
        return Ok(None);
    }
    let tiles =
        prefix.copy().ctx(what)?.reverse().ctx(what)?.apply_range(relation.copy().ctx(what)?).ctx(what)?;
    let tiles = Map::from_union_map(tiles).ctx(what)?;
    let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
    if !hull.is_valid().ctx(what)? {
        return Ok(None);
    }
    let size = hull.get_size().ctx(what)?;
    let mut extents = Vec::new();
    for d in 0..tiles.dim(DimType::Out).ctx(what)? {
        extents.push(size.get_val(d).ctx(what)?.get_num_si().ctx(what)?.max(1));
    }
    Ok(Some((relation, tiles, extents)))
}

/// `body` with each use of `array` that is one of `refs` (spelled as
/// [`squeeze`] gives them) reading `buffer` instead, its `d`-th subscript
/// `e` written `subscript(d, e)` (`[...]` included); `None` where a use of
/// `array` is not subscripted in full (`rank` subscripts).
pub(crate) fn retarget(
    body: &str,
    array: &str,
    buffer: &str,
    rank: usize,
    refs: &[String],
    subscript: impl Fn(usize, &str) -> String,
) -> Option<String> {
    let mut out = String::with_capacity(body.len() + 32);
    let mut at = 0;
    for u in uses(body, array, rank)? {
        if !refs.contains(&squeeze(&body[u.start..u.end])) {
            continue;
        }
        out.push_str(&body[at..u.start]);
        out.push_str(buffer);
        for (d, e) in u.subscripts.iter().enumerate() {
            out.push_str(&subscript(d, &body[e.clone()]));
        }
        at = u.end;
    }
    out.push_str(&body[at..]);
    Some(out)
}

/// A statement, its body as rewritten so far, and its own references of a
/// group (spelled as [`squeeze`] gives them).
pub(crate) type Use<'s> = (&'s Statement, String, Vec<String>);

/// A statement's name and its macro body.
pub(crate) type Body = (String, String);

/// The uses of `group` by each of `stmts` that has some: a statement's own
/// references only, since another may spell a reference of another group
/// alike (symm's `A[i][k]`, whose `i` is a row of the block in one
/// statement and of the stage in the other).
pub(crate) fn uses_of<'s>(stmts: &[&'s Statement], group: &[Read<'_>], bodies: &Bodies) -> Vec<Use<'s>> {
    let mut out = Vec::new();
    for s in stmts {
        let refs: Vec<String> = group
            .iter()
            .filter(|(a, _)| s.accesses.iter().any(|b| std::ptr::eq(b, *a)))
            .map(|(a, its)| squeeze(&parenthesize(&a.text, its)))
            .collect();
        if !refs.is_empty() {
            out.push((*s, bodies.current(s), refs));
        }
    }
    out
}

/// Each use's statement and its body reading `buffer` for `array` (see
/// [`retarget`]), and the scalar the copy multiplies by where every use
/// multiplied by it first (gemm's `alpha * A[i][k]`: once per element, not
/// once per use; [`fold`]). `None` where some use cannot be retargeted.
pub(crate) fn retargeted(
    scop: &Scop,
    array: &Array,
    written: &[String],
    uses: &[Use<'_>],
    buffer: &str,
    rank: usize,
    subscript: impl Fn(usize, &str) -> String,
) -> Option<(Vec<Body>, Option<String>)> {
    let folded = fold(scop, array, written, uses);
    let factor = folded.as_ref().map(|(_, f)| f.clone());
    let mut texts = Vec::new();
    for (i, (s, body, refs)) in uses.iter().enumerate() {
        let body = folded.as_ref().map_or(body, |(b, _)| &b[i]);
        texts.push((s.name.clone(), retarget(body, &array.name, buffer, rank, refs, &subscript)?));
    }
    (!texts.is_empty()).then_some((texts, factor))
}

/// The arrays (C names) the statements of `domain` write.
pub(crate) fn written_in(scop: &Scop, domain: &UnionSet) -> Result<Vec<String>, CodegenError> {
    let names = statements(domain)?;
    Ok(scop
        .statements
        .iter()
        .filter(|s| names.contains(&s.name))
        .flat_map(|s| s.accesses.iter().filter(|a| a.kind == AccessKind::Write).map(|a| a.array.clone()))
        .collect())
}
