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
//! A copy is made at the outermost tile loop below which its footprint no
//! longer changes ([`hoisted`]), and the transform walk orders the tile
//! loops so that the larger copies get there ([`tile_order`]: gemm's `B`
//! tile above the `i` tile loop, as BLIS packs its panel once for every
//! block of rows). The walk marks the point bands ([`PACK_MARK`]); packing
//! runs after the tree is checked legal, since a tree with copy statements
//! grafted (extension nodes) has no schedule map to check.

use isl_rs::{Context, DimType, Map, Schedule, ScheduleNode};
use model::isl::IslResultExt;
use model::scop::{Array, Scop};

use super::footprint::{
    all_instances_below, copy_args, copy_graft_loops, element_bytes, footprint, read_groups, retargeted,
    statements, uses_of, written_in, Bodies, Read,
};
use super::marks::{find_mark, PARALLEL_MARK};
use super::print::MACRO_PREFIX;
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
    buffers: usize,
}

/// `tree` with copies into buffers at every point band the transform walk
/// marked, and what the region needs for them; the statements that read
/// buffers get their new bodies in `bodies`.
pub(crate) fn apply(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    bodies: &mut Bodies,
) -> Result<(Schedule, Packing), CodegenError> {
    let what = || "packing tiles".to_string();
    let mut packing = Packing::default();
    let mut root = tree.get_root().ctx(what)?;
    while let Some(mark) = find_mark(root.copy().ctx(what)?, PACK_MARK)? {
        let mark = pack_band(ctx, scop, mark, &mut packing, bodies)?;
        root = mark.delete().ctx(what)?.root().ctx(what)?;
    }
    Ok((root.get_schedule().ctx(what)?, packing))
}

/// Copies for the matrices that the statements of the point band below
/// `mark` read and its band does not write, each at the outermost loop of
/// the tile band where its footprint stops changing (gemm's `A[i][k]`
/// above the `j` tile loop: one copy serves every `j` tile); returns the
/// node of `mark`, found again after each graft.
fn pack_band(
    ctx: &Context,
    scop: &Scop,
    mark: ScheduleNode,
    packing: &mut Packing,
    bodies: &mut Bodies,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "packing a tile".to_string();
    let point = mark.copy().ctx(what)?.child(0).ctx(what)?;
    let domain = point.get_domain().ctx(what)?;
    if !all_instances_below(&point)? {
        return Ok(mark);
    }
    let names = statements(&domain)?;
    let stmts: Vec<_> = scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    if stmts.iter().any(|s| bodies.contains(&s.name)) {
        return Ok(mark);
    }
    // Each thread fills its own buffers: not where a point loop is the
    // parallel one (the copies would run on one thread before it).
    if parallel_below(&point)? {
        return Ok(mark);
    }
    // The tile band: copies go no higher than its first loop, inside the
    // parallel loop.
    let tile = mark.copy().ctx(what)?.parent().ctx(what)?;
    if tile.get_type().ctx(what)? != isl_rs::ScheduleNodeType::Band {
        return Ok(mark);
    }
    let first = tile.get_schedule_depth().ctx(what)? as usize + 1;
    let prefix = point.get_prefix_schedule_union_map().ctx(what)?;
    let depth = prefix.range().ctx(what)?;
    let depth = isl_rs::Set::from_union_set(depth).ctx(what)?.dim(DimType::Set).ctx(what)? as usize;
    let written = written_in(scop, &domain)?;
    let mut bytes = 0usize;
    let mut copies = Vec::new();
    for Candidate { array, group, tiles, extents, bytes: need } in candidates(ctx, scop, &point)? {
        if bytes + need > BUDGET {
            continue;
        }
        let n = packing.buffers + copies.len();
        let (buffer, offset) = (format!("{MACRO_PREFIX}pack_{n}"), format!("{MACRO_PREFIX}pack_offset_{n}"));
        let uses = uses_of(&stmts, &group, bodies);
        let subscript = |d: usize, e: &str| format!("[({e}) - {offset}[{d}]]");
        let Some((texts, factor)) =
            retargeted(scop, array, &written, &uses, &buffer, array.rank(), subscript)
        else {
            continue;
        };
        for (name, body) in texts {
            bodies.set(name, body);
        }
        bytes += need;
        let at = hoisted(&tiles, &extents, first, depth)?;
        let tiles = tiles.project_out(DimType::In, at as u32, (depth - at) as u32).ctx(what)?;
        copies.push(Buffer { at, array, factor, buffer, offset, tiles, extents });
    }
    // Outermost first: each graft splits the band around the next depth.
    copies.sort_by_key(|c| c.at);
    let mut mark = mark;
    for copy in copies {
        mark = graft_copy(ctx, mark, copy, packing)?;
    }
    Ok(mark)
}

/// `copy` grafted into the tile band above `mark` at its depth, and its
/// macro and buffer declared in `packing`; the node of `mark`, found again.
fn graft_copy(
    ctx: &Context,
    mark: ScheduleNode,
    copy: Buffer<'_>,
    packing: &mut Packing,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "packing a tile".to_string();
    let Buffer { at, array, factor, buffer, offset, tiles, extents } = copy;
    let rank = array.rank();
    let name = format!("pack_in_{}", packing.buffers);
    packing.buffers += 1;
    // Each instance of the copy: the outer values, the element, and
    // the box's offset there.
    let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
    let origin = Map::from_multi_aff(hull.get_offset().ctx(what)?).ctx(what)?;
    let origin = origin.intersect_domain(tiles.copy().ctx(what)?.domain().ctx(what)?).ctx(what)?;
    let instances = tiles.range_product(origin).ctx(what)?;
    let graft = copy_graft_loops(ctx, instances, &name, rank, false)?;
    // The band holding loop `at - 1` is the nearest above the mark.
    let mut band = mark.copy().ctx(what)?.parent().ctx(what)?;
    while band.get_type().ctx(what)? != isl_rs::ScheduleNodeType::Band {
        band = band.parent().ctx(what)?;
    }
    let start = band.get_schedule_depth().ctx(what)? as usize;
    let members = band.band_n_member().ctx(what)? as usize;
    // At the band's start (a copy already split it there), inside it
    // (split it), or at its end (before the point band).
    let grafted = match at - start {
        0 => band.graft_before(graft).ctx(what)?,
        n if n == members => mark.graft_before(graft).ctx(what)?,
        n => band.band_split(n as i32).ctx(what)?.child(0).ctx(what)?.graft_before(graft).ctx(what)?,
    };
    let mark = find_mark(grafted.root().ctx(what)?, PACK_MARK)?
        .ok_or_else(|| CodegenError::Unsupported("packing lost its band's mark".into()))?;
    let (args, all) = copy_args(at, 2 * rank);
    let (elements, origins) = args.split_at(rank);
    let sets: Vec<String> =
        origins.iter().enumerate().map(|(d, o)| format!("{offset}[{d}] = ({o})")).collect();
    let slots: String = elements.iter().zip(origins).map(|(a, o)| format!("[({a}) - ({o})]")).collect();
    let subscripts: Vec<String> = elements.iter().map(|a| format!("({a})")).collect();
    let value = match factor {
        Some(f) => format!("{f} * {}", array.element(&subscripts)),
        None => array.element(&subscripts),
    };
    packing.prelude.push_str(&format!(
        "#define {MACRO_PREFIX}{name}({all}) ({}, {buffer}{slots} = {value})\n",
        sets.join(", "),
    ));
    packing.postlude.push_str(&format!("#undef {MACRO_PREFIX}{name}\n"));
    let dims: String = extents.iter().map(|e| format!("[{e}]")).collect();
    packing.declarations.push_str(&format!(
        "static _Thread_local {} {buffer}{dims} __attribute__((aligned(64)));\nstatic _Thread_local long {offset}[{rank}];\n",
        array.element_type.trim()
    ));
    Ok(mark)
}

/// One buffer of a band: where its copy goes (the schedule depth), the
/// array, the scalar its elements are multiplied by (see [`fold`]),
/// the buffer's and its offsets' names, the footprint of the loops above
/// the copy and its box's extents.
struct Buffer<'s> {
    at: usize,
    array: &'s Array,
    factor: Option<String>,
    buffer: String,
    offset: String,
    tiles: Map,
    extents: Vec<i64>,
}

/// The outermost schedule depth, from `first` to `depth` (the point
/// band's), at which the footprint `tiles` (of the outer values up to
/// `depth`) still fits the box of `extents`: below it, the inner tile
/// loops read nothing the copy does not hold.
fn hoisted(tiles: &Map, extents: &[i64], first: usize, depth: usize) -> Result<usize, CodegenError> {
    let what = || "hoisting a copy".to_string();
    for at in first..depth {
        let outer =
            tiles.copy().ctx(what)?.project_out(DimType::In, at as u32, (depth - at) as u32).ctx(what)?;
        if fits(&outer, extents)? {
            return Ok(at);
        }
    }
    Ok(depth)
}

/// A group of references to one read-only matrix under a point band that
/// a copy could serve: the references, their tile's footprint (outer
/// schedule values to elements), its box's extents and bytes.
struct Candidate<'s> {
    array: &'s Array,
    group: Vec<Read<'s>>,
    tiles: Map,
    extents: Vec<i64>,
    bytes: usize,
}

/// What the statements of the point band `point` read, with reuse, of the
/// matrices they do not write.
fn candidates<'s>(
    ctx: &Context,
    scop: &'s Scop,
    point: &ScheduleNode,
) -> Result<Vec<Candidate<'s>>, CodegenError> {
    let what = || "packing a tile".to_string();
    let domain = point.get_domain().ctx(what)?;
    let prefix = point.get_prefix_schedule_union_map().ctx(what)?;
    let names = statements(&domain)?;
    let stmts: Vec<_> = scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    let written = written_in(scop, &domain)?;
    let mut out = Vec::new();
    for array in &scop.arrays {
        // Vectors gain nothing; a struct member is not spelled `name[...]`.
        if array.rank() < 2 || array.is_struct_member() || written.contains(&array.name) {
            continue;
        }
        let Some(size) = element_bytes(&array.element_type) else { continue };
        let groups = read_groups(ctx, &prefix, &domain, &stmts, &array.name)?;
        for group in groups {
            let Some((relation, tiles, extents)) = footprint(ctx, &prefix, &domain, &group)? else {
                continue;
            };
            // A tile that reads each element once gains nothing from a copy.
            if group.len() == 1 && relation.is_injective().ctx(what)? {
                continue;
            }
            let bytes = extents.iter().product::<i64>() as usize * size;
            out.push(Candidate { array, group, tiles, extents, bytes });
        }
    }
    Ok(out)
}

/// The order of the tiled band `tile`'s tile loops under which packing's
/// copies serve the most tiles: the member along which the most bytes of
/// copies stay the same goes innermost, so that their copies are hoisted
/// above it (gemm's `B[k][j]` tile serves every `i` tile, as BLIS orders
/// its loops), the others keep their order; `None` where that is the
/// order already or no copy stays. Any order of a permutable band's tile
/// loops is legal.
pub(crate) fn tile_order(
    ctx: &Context,
    scop: &Scop,
    tile: &ScheduleNode,
) -> Result<Option<Vec<usize>>, CodegenError> {
    let what = || "ordering tile loops for packing".to_string();
    let n = tile.band_n_member().ctx(what)? as usize;
    let start = tile.get_schedule_depth().ctx(what)? as usize;
    let mut kept = vec![0usize; n];
    for c in candidates(ctx, scop, &tile.get_child(0).ctx(what)?)? {
        for (m, k) in kept.iter_mut().enumerate() {
            if fits(
                &c.tiles.copy().ctx(what)?.project_out(DimType::In, (start + m) as u32, 1).ctx(what)?,
                &c.extents,
            )? {
                *k += c.bytes;
            }
        }
    }
    // The latest of the members that keep the most.
    let best = (0..n).rev().max_by_key(|&m| kept[m]).unwrap_or(0);
    if n < 2 || kept[best] == 0 || best == n - 1 {
        return Ok(None);
    }
    Ok(Some((0..n).filter(|&m| m != best).chain([best]).collect()))
}

/// Whether a loop in the subtree at `node` is marked parallel.
fn parallel_below(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "looking for parallel loops".to_string();
    if node.get_type().ctx(what)? == isl_rs::ScheduleNodeType::Mark
        && node.mark_get_id().ctx(what)?.to_str().ctx(what)?.starts_with(PARALLEL_MARK)
    {
        return Ok(true);
    }
    for i in 0..node.n_children().ctx(what)? {
        if parallel_below(&node.get_child(i).ctx(what)?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the footprint `tiles` has a box of constant size within `extents`.
fn fits(tiles: &Map, extents: &[i64]) -> Result<bool, CodegenError> {
    let what = || "bounding a footprint".to_string();
    let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
    if !hull.is_valid().ctx(what)? {
        return Ok(false);
    }
    let size = hull.get_size().ctx(what)?;
    Ok((0..extents.len())
        .all(|d| size.get_val(d as i32).and_then(|v| v.get_num_si()).is_ok_and(|n| n <= extents[d])))
}
