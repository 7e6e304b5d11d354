//! Scalar replacement of a micro tile's written elements (Carr and
//! Kennedy's scalar replacement, BLIS's accumulators): at each `r` loop
//! that `transform::micro` marked, the elements of each array the tile's
//! statements write, a box of rows by columns that stays the same along
//! `r`, are copied into a local array before the loop and back after it,
//! and every reference to the array in between reads and writes the copy.
//! With the register tile unrolled and vectorised, the copy's subscripts
//! are constants and the compiler keeps it in registers: the multiply-adds
//! accumulate there instead of loading and storing the written vectors at
//! every step of `r`.
//!
//! Legal whatever the dependences: the statements below the mark are the
//! only ones that run between the copies, and every one of their
//! references to the array goes to the copy, which holds the elements the
//! array held. The copy is indexed by each subscript minus the box's offset
//! at this strip (set by the copy in, as packing's offsets are), so unit
//! strides stay unit strides.

use isl_rs::{Context, DimType, Id, Map, Schedule, ScheduleNode, ScheduleNodeType};
use model::isl::IslResultExt;
use model::scop::Scop;

use super::footprint::{
    all_instances_below, copy_args, copy_graft_loops, copyable, footprint, references, statements,
    written_in, Bodies,
};
use super::marks::{find_mark, ACCUMULATE_MARK};
use super::print::MACRO_PREFIX;
use super::CodegenError;

/// The most elements of one local copy: what registers hold, with room.
const MOST_ELEMENTS: i64 = 256;

/// What scalar replacement added to a region.
#[derive(Debug, Clone, Default)]
pub(crate) struct Accumulators {
    /// Macros of the copies and of the statements that use the local
    /// copies, defined before the region's code, and what restores them.
    pub prelude: String,
    pub postlude: String,
    /// The declarations of the block each `polytune_accumulate_K` mark
    /// opens, by `K`.
    pub locals: Vec<String>,
    copies: usize,
}

/// `tree` with the local copies at every mark `transform::micro` left, and
/// what the region needs for them; a mark where nothing is copied is
/// dropped. The statements that use local copies get their new bodies in
/// `bodies` (on top of packing's).
pub(crate) fn apply(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    bodies: &mut Bodies,
) -> Result<(Schedule, Accumulators), CodegenError> {
    let what = || "keeping register tiles in registers".to_string();
    let mut acc = Accumulators::default();
    let mut root = tree.get_root().ctx(what)?;
    while let Some(mark) = find_mark(root.copy().ctx(what)?, ACCUMULATE_MARK)? {
        let (mark, locals) = accumulate(ctx, scop, mark, &mut acc, bodies)?;
        let mut node = mark.delete().ctx(what)?;
        if !locals.is_empty() {
            let id = Id::read_from_str(ctx, &format!("{ACCUMULATE_MARK}_{}", acc.locals.len())).ctx(what)?;
            acc.locals.push(locals);
            node = node.insert_mark(id).ctx(what)?;
        }
        root = node.root().ctx(what)?;
    }
    Ok((root.get_schedule().ctx(what)?, acc))
}

/// The copies around the loop below `mark`: returns the mark (found again
/// after the grafts) and the declarations of the local copies, empty where
/// none is made.
fn accumulate(
    ctx: &Context,
    scop: &Scop,
    mark: ScheduleNode,
    acc: &mut Accumulators,
    bodies: &mut Bodies,
) -> Result<(ScheduleNode, String), CodegenError> {
    let what = || "keeping a register tile in registers".to_string();
    let mut node = mark.child(0).ctx(what)?;
    let domain = node.get_domain().ctx(what)?;
    let names = statements(&domain)?;
    let stmts: Vec<_> = scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    if !all_instances_below(&node)? {
        return Ok((node.parent().ctx(what)?, String::new()));
    }
    let prefix = node.get_prefix_schedule_union_map().ctx(what)?;
    let mut locals = String::new();
    let written = written_in(scop, &domain)?;
    for array in scop.arrays.iter().filter(|a| written.contains(&a.name)) {
        if !copyable(array) {
            continue;
        }
        let refs = references(&stmts, &array.name);
        let Some((_, tiles, extents)) = footprint(ctx, &prefix, &domain, &refs)? else { continue };
        if extents.iter().product::<i64>() > MOST_ELEMENTS {
            continue;
        }
        let n = acc.copies;
        let buffer = format!("{MACRO_PREFIX}acc_{n}");
        let offset = |d: usize| format!("{buffer}_o{d}");
        if !bodies.retarget_all(&stmts, array, &buffer, &refs, |d, e| format!("[({e}) - {}]", offset(d))) {
            continue;
        }
        acc.copies += 1;
        // Each copy's instances: the outer values, the element, and the
        // box's offset there.
        let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
        let origin = Map::from_multi_aff(hull.get_offset().ctx(what)?).ctx(what)?;
        let origin = origin.intersect_domain(tiles.copy().ctx(what)?.domain().ctx(what)?).ctx(what)?;
        let instances = tiles.range_product(origin).ctx(what)?;
        let rank = array.rank();
        let depth = instances.dim(DimType::In).ctx(what)? as usize;
        let (args, all) = copy_args(depth, 2 * rank);
        let (elements, origins) = args.split_at(rank);
        let slots: String = elements.iter().zip(origins).map(|(a, o)| format!("[({a}) - ({o})]")).collect();
        let subscripts: Vec<String> = elements.iter().map(|a| format!("({a})")).collect();
        let global = array.element(&subscripts);
        let sets: Vec<String> =
            origins.iter().enumerate().map(|(d, o)| format!("{} = ({o})", offset(d))).collect();
        for (copy, before) in [("acc_in_", true), ("acc_out_", false)] {
            let statement = format!("{copy}{n}");
            let graft = copy_graft_loops(ctx, instances.copy().ctx(what)?, &statement, rank, false)?;
            node = match before {
                true => node.graft_before(graft).ctx(what)?,
                false => node.graft_after(graft).ctx(what)?,
            };
            let text = match before {
                true => format!("({}, {buffer}{slots} = {global})", sets.join(", ")),
                false => format!("{global} = {buffer}{slots}"),
            };
            acc.prelude.push_str(&format!("#define {MACRO_PREFIX}{statement}({all}) {text}\n"));
            acc.postlude.push_str(&format!("#undef {MACRO_PREFIX}{statement}\n"));
        }
        let dims: String = extents.iter().map(|e| format!("[{e}]")).collect();
        let offsets: Vec<String> = (0..rank).map(offset).collect();
        locals.push_str(&format!(
            "{} {buffer}{dims} __attribute__((aligned(64)));\nlong {};\n",
            array.element_type.trim(),
            offsets.join(", ")
        ));
    }
    while node.get_type().ctx(what)? != ScheduleNodeType::Mark {
        node = node.parent().ctx(what)?;
    }
    Ok((node, locals))
}

/// Whether a statement three loops deep or more writes one element all
/// along one of its loops (gemm's `C[i][j]` along `k`): what a micro tile
/// keeps in registers (`micro_tile` acts nowhere else).
pub fn reduces_in_three_loops(ctx: &Context, scop: &Scop) -> Result<bool, CodegenError> {
    let what = || "looking for reductions".to_string();
    for s in scop.statements.iter().filter(|s| s.iterators.len() >= 3) {
        for a in s.accesses.iter().filter(|a| a.kind == model::scop::AccessKind::Write) {
            let map = Map::read_from_str(ctx, &a.relation).ctx(what)?;
            for k in 0..s.iterators.len() as u32 {
                if map
                    .copy()
                    .ctx(what)?
                    .project_out(DimType::In, k, 1)
                    .ctx(what)?
                    .is_single_valued()
                    .ctx(what)?
                {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}
