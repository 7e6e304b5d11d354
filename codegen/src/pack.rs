//! Packing (`pack=on`, the panels of BLIS and OpenBLAS, on the CPU): at each
//! tile of a tiled band, what the tile's statements read of a matrix that
//! no statement of the band writes is copied into a contiguous, aligned
//! buffer of the thread's own, and the statements read the buffer instead.
//! The tile then walks a few pages of rows packed end to end rather than
//! rows a whole matrix row apart (one TLB entry and one cache set each).
//!
//! Legal because the band writes none of the packed arrays: the copy made
//! when a tile starts holds what every read of the tile would have found,
//! and the other threads, running tiles of the same band, write none of
//! them either.
//!
//! A buffer holds the box isl bounds the tile's footprint by (as the GPU's
//! shared memory does) and is indexed by each subscript minus the box's
//! offset at this tile, an affine function of the tile loops: isl's AST
//! generator writes it as the copy statement's last arguments, and the copy
//! keeps it in the thread's offset variables, which the statements read. A
//! reference that walks its array with unit stride walks the buffer with
//! unit stride too, so the point loops vectorise as before (the GPU's
//! modulo indexing would not).
//!
//! The transform walk marks the point bands ([`PACK_MARK`]); packing runs
//! after the tree is checked legal, since a tree with copy statements
//! grafted (extension nodes) has no schedule map to check.

use isl_rs::{Context, DimType, Map, Schedule, ScheduleNode};
use model::isl::IslResultExt;
use model::scop::{Access, AccessKind, Scop};

use super::footprint::{
    copy_args, copy_graft_loops, element_bytes, footprint, retarget, squeeze, statements,
};
use super::marks::find_mark;
use super::print::{parenthesize, statement_body, MACRO_PREFIX};
use super::CodegenError;

/// The mark above a point band that packing visits.
pub(crate) const PACK_MARK: &str = "polytune_pack";

/// The most bytes of one band's buffers, per thread: about what a core's
/// L2 holds.
const BUDGET: usize = 512 * 1024;

/// What packing added to a region.
#[derive(Debug, Clone, Default)]
pub(crate) struct Packing {
    /// File-scope declarations: each buffer and its offsets, thread-local
    /// (each OpenMP thread packs its own tiles).
    pub declarations: String,
    /// Macros of the copies and of the statements that read buffers,
    /// defined before the region's code, and what restores them after.
    pub prelude: String,
    pub postlude: String,
    /// The statements that read buffers, with their new bodies.
    bodies: Vec<(String, String)>,
    buffers: usize,
}

/// `tree` with copies into buffers at every point band the transform walk
/// marked, and what the region needs for them.
pub(crate) fn apply(ctx: &Context, scop: &Scop, tree: Schedule) -> Result<(Schedule, Packing), CodegenError> {
    let what = || "packing tiles".to_string();
    let mut packing = Packing::default();
    let mut root = tree.get_root().ctx(what)?;
    while let Some(mark) = find_mark(root.copy().ctx(what)?, PACK_MARK)? {
        let point = pack_band(ctx, scop, mark.delete().ctx(what)?, &mut packing)?;
        root = point.root().ctx(what)?;
    }
    for (name, body) in &packing.bodies {
        let s = scop.statements.iter().find(|s| s.name == *name).expect("a statement of the SCoP");
        let args = s.c_iterators.join(", ");
        packing
            .prelude
            .push_str(&format!("#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {body}\n"));
        packing.postlude.push_str(&format!(
            "#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {}\n",
            statement_body(s)
        ));
    }
    Ok((root.get_schedule().ctx(what)?, packing))
}

/// Copies before the point band `point` for the matrices its statements
/// read and its band does not write; returns the node at `point`'s
/// position.
fn pack_band(
    ctx: &Context,
    scop: &Scop,
    mut point: ScheduleNode,
    packing: &mut Packing,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "packing a tile".to_string();
    let domain = point.get_domain().ctx(what)?;
    // A statement's macro serves the whole region: only where every
    // instance of the band's statements runs in this band.
    let all = point.copy().ctx(what)?.root().ctx(what)?.get_domain().ctx(what)?;
    let all = all.intersect(domain.copy().ctx(what)?.universe().ctx(what)?).ctx(what)?;
    if !all.is_subset(&domain).ctx(what)? {
        return Ok(point);
    }
    let names = statements(&domain)?;
    let stmts: Vec<_> = scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    if stmts.iter().any(|s| packing.bodies.iter().any(|(n, _)| *n == s.name)) {
        return Ok(point);
    }
    let written: Vec<&str> = stmts
        .iter()
        .flat_map(|s| s.accesses.iter().filter(|a| a.kind == AccessKind::Write).map(|a| a.array.as_str()))
        .collect();
    let prefix = point.get_prefix_schedule_union_map().ctx(what)?;
    let mut bytes = 0usize;
    let mut copies = Vec::new();
    for array in &scop.arrays {
        // Vectors gain nothing; a struct member is not spelled `name[...]`.
        if array.rank() < 2 || array.is_struct_member() || written.contains(&array.name.as_str()) {
            continue;
        }
        let Some(size) = element_bytes(&array.element_type) else { continue };
        let reads: Vec<(&Access, &[String])> = stmts
            .iter()
            .flat_map(|s| {
                s.accesses
                    .iter()
                    .filter(|a| a.kind == AccessKind::Read && a.array == array.name)
                    .map(|a| (a, s.c_iterators.as_slice()))
            })
            .collect();
        if reads.is_empty() {
            continue;
        }
        // All references in one buffer; where their tiles lie apart (syrk's
        // `A[i][k]` and `A[j][k]`), one buffer per access relation.
        let mut groups = vec![reads.clone()];
        if footprint(ctx, &prefix, &domain, &reads)?.is_none() {
            groups = Vec::new();
            for r in &reads {
                match groups
                    .iter_mut()
                    .find(|g: &&mut Vec<(&Access, &[String])>| g[0].0.relation == r.0.relation)
                {
                    Some(g) => g.push(*r),
                    None => groups.push(vec![*r]),
                }
            }
        }
        for group in groups {
            let Some((relation, tiles, extents)) = footprint(ctx, &prefix, &domain, &group)? else {
                continue;
            };
            // A tile that reads each element once gains nothing from a copy.
            if group.len() == 1 && relation.is_injective().ctx(what)? {
                continue;
            }
            let need = extents.iter().product::<i64>() as usize * size;
            if bytes + need > BUDGET {
                continue;
            }
            let n = packing.buffers + copies.len();
            let (buffer, offset) =
                (format!("{MACRO_PREFIX}pack_{n}"), format!("{MACRO_PREFIX}pack_offset_{n}"));
            let mut texts = Vec::new();
            for s in &stmts {
                let refs: Vec<String> = group
                    .iter()
                    .filter(|(a, _)| s.accesses.iter().any(|b| std::ptr::eq(b, *a)))
                    .map(|(a, its)| squeeze(&parenthesize(&a.text, its)))
                    .collect();
                if refs.is_empty() {
                    continue;
                }
                let body = current_body(packing, s);
                match retarget(&body, &array.name, &buffer, array.rank(), &refs, |d, e| {
                    format!("[({e}) - {offset}[{d}]]")
                }) {
                    Some(b) => texts.push((s.name.clone(), b)),
                    None => {
                        texts.clear();
                        break;
                    }
                }
            }
            if texts.is_empty() {
                continue;
            }
            for (name, body) in texts {
                match packing.bodies.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = body,
                    None => packing.bodies.push((name, body)),
                }
            }
            bytes += need;
            copies.push((array, buffer, offset, tiles, extents));
        }
    }
    let depth = prefix.range().ctx(what)?;
    let depth = isl_rs::Set::from_union_set(depth).ctx(what)?.dim(DimType::Set).ctx(what)? as usize;
    for (array, buffer, offset, tiles, extents) in copies {
        let rank = array.rank();
        let name = format!("pack_in_{}", packing.buffers);
        packing.buffers += 1;
        // Each instance of the copy: the tile's values, the element, and
        // the box's offset at the tile.
        let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
        let origin = Map::from_multi_aff(hull.get_offset().ctx(what)?).ctx(what)?;
        let origin = origin.intersect_domain(tiles.copy().ctx(what)?.domain().ctx(what)?).ctx(what)?;
        let instances = tiles.range_product(origin).ctx(what)?;
        point = point.graft_before(copy_graft_loops(ctx, instances, &name, rank, false)?).ctx(what)?;
        let (args, all) = copy_args(depth, 2 * rank);
        let (elements, origins) = args.split_at(rank);
        let sets: Vec<String> =
            origins.iter().enumerate().map(|(d, o)| format!("{offset}[{d}] = ({o})")).collect();
        let slots: String = elements.iter().zip(origins).map(|(a, o)| format!("[({a}) - ({o})]")).collect();
        let subscripts: Vec<String> = elements.iter().map(|a| format!("({a})")).collect();
        packing.prelude.push_str(&format!(
            "#define {MACRO_PREFIX}{name}({all}) ({}, {buffer}{slots} = {})\n",
            sets.join(", "),
            array.element(&subscripts)
        ));
        packing.postlude.push_str(&format!("#undef {MACRO_PREFIX}{name}\n"));
        let dims: String = extents.iter().map(|e| format!("[{e}]")).collect();
        packing.declarations.push_str(&format!(
            "static _Thread_local {} {buffer}{dims} __attribute__((aligned(64)));\nstatic _Thread_local long {offset}[{rank}];\n",
            array.element_type.trim()
        ));
    }
    Ok(point)
}

/// A statement's macro body as packing has rewritten it so far.
fn current_body(packing: &Packing, s: &model::scop::Statement) -> String {
    packing
        .bodies
        .iter()
        .find(|(n, _)| *n == s.name)
        .map(|(_, b)| b.clone())
        .unwrap_or_else(|| statement_body(s))
}
