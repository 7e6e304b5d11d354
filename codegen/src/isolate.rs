//! Full/partial tile separation on point bands, within a budget of isl
//! operations.

use super::marks::{is_tile_mark, point_band};
use super::CodegenError;
use isl_rs::{ASTLoopType, DimType, Map, ScheduleNode, ScheduleNodeType, Set, UnionSet};
use model::isl::{within_budget, IslResultExt};

/// isl operations (allocations and simplex pivots; a deterministic measure,
/// unlike time) allowed for computing one band's full tiles. Rectangular
/// bands need a few ten thousand, jacobi-2d's skewed band about 300 000;
/// heat-3d's 4-d skewed band (isl's schedule) about 11 million, 10 s, and its
/// full tiles are 12 polyhedra: past the budget the band is not isolated.
pub(super) const ISOLATE_OPS: u64 = 500_000;

/// isl operations allowed for generating the AST of a tree with isolated
/// full tiles (2mm needs 1-2 million, about 1.5 s); past it, the AST is
/// generated without isolation.
pub(super) const ISOLATED_AST_OPS: u64 = 3_000_000;

/// The same with micro tiles, whose copies isl generates in each isolated
/// piece (3mm's three nests need 3-10 million).
pub(super) const MICRO_AST_OPS: u64 = 10_000_000;

/// Full/partial tile separation (ppcg's `--isolate-full-tiles`, here on the
/// point band as Polly does): the point band below the tile band `tile`
/// (member k ranging over `0..point_sizes[k]`) gets the AST build option
/// `isolate[[outer, tile] -> [point]]` for the tiles whose every point
/// executes some statement instance, and its members the isolated loop
/// type `separate`. isl then generates, inside each tile, `if (full tile)`
/// loops whose bounds are the tile sizes (no `min`/`max`), separated where
/// the statements that run change (gemm's fused `C[i][j] *= beta` gets its
/// own copy of the loop at `k == 0` instead of a guard in the innermost
/// loop), and the partial tiles as before. This is that option, `None`
/// when no tile is full or the full tiles cost more than the budget.
pub(super) fn full_tiles(tile: &ScheduleNode, point_sizes: &[i64]) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating full tiles".to_string();
    let ctx = tile.get_ctx();
    let d = tile.get_schedule_depth().ctx(what)? as u32;
    let n = tile.band_n_member().ctx(what)? as u32;
    let point = point_band(tile)?;
    if point.get_type().ctx(what)? != ScheduleNodeType::Band || point.band_n_member().ctx(what)? as u32 != n {
        return Ok(None);
    }
    Ok(within_budget(&ctx, ISOLATE_OPS, || full_tile_option(&point, d, n, point_sizes))?.flatten())
}

/// Register tiles isolated where they are whole: after register tiling
/// (`Walk::register_tile`), the band of strips below the tile band `tile`
/// gets the isolate option of the strips whose every point (the box
/// `0 <= u < factor` of the unrolled band below them) runs some statement
/// instance, instead of the tiles that are full. On rectangular domains the
/// two agree inside full tiles; on triangular ones (syrk's `j <= i`) the
/// tiles along the diagonal are never full, and isolating their whole strips
/// gives them the unrolled, vectorised register tile too, leaving only the
/// strips the diagonal cuts to the general code. `None` when the band is not
/// register-tiled, no strip is whole, or the budget runs out.
pub(super) fn full_strips(tile: &ScheduleNode, factor: i64) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating whole register tiles".to_string();
    let ctx = tile.get_ctx();
    let d = tile.get_schedule_depth().ctx(what)? as u32;
    let n = tile.band_n_member().ctx(what)? as u32;
    let strips = point_band(tile)?;
    if strips.get_type().ctx(what)? != ScheduleNodeType::Band || strips.band_n_member().ctx(what)? as u32 != n
    {
        return Ok(None);
    }
    let mark = strips.get_child(0).ctx(what)?;
    if mark.get_type().ctx(what)? != ScheduleNodeType::Mark {
        return Ok(None);
    }
    let unrolled = mark.get_child(0).ctx(what)?;
    if unrolled.get_type().ctx(what)? != ScheduleNodeType::Band {
        return Ok(None);
    }
    Ok(within_budget(&ctx, ISOLATE_OPS, || full_strip_option(&unrolled, d, n, factor))?.flatten())
}

/// The isolate option of the band of strips above `unrolled` (the register
/// tile's band, schedule depth `d + 2n`) for the strips that are whole,
/// `None` when none is.
fn full_strip_option(
    unrolled: &ScheduleNode,
    d: u32,
    n: u32,
    factor: i64,
) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating whole register tiles".to_string();
    let u = unrolled.band_n_member().ctx(what)? as usize;
    let (full, _, _) = whole_boxes(unrolled, &vec![factor; u], what)?;
    // isl generates a non-convex isolated set as its hull, which would take
    // in the strips that are not whole (doitgen's first strip, shifted by
    // one): then the full tiles are the better option.
    let hull = Set::from_basic_set(full.copy().ctx(what)?.unshifted_simple_hull().ctx(what)?).ctx(what)?;
    if full.is_empty().ctx(what)? || !hull.is_equal(&full).ctx(what)? {
        return Ok(None);
    }
    Ok(Some(isolate_option(full, d + n, what)?))
}

/// Puts `isolate` (from [`full_tiles`]) on the point band below `tile`,
/// with the isolated loop type `separate` on every member; returns the tile
/// band again.
pub(super) fn isolate_full_tiles(tile: ScheduleNode, isolate: Set) -> Result<ScheduleNode, CodegenError> {
    let what = || "isolating full tiles".to_string();
    let n = tile.band_n_member().ctx(what)?;
    let mut point = tile.child(0).ctx(what)?;
    // A band tiled with tile iterators has its `TILE_MARK` in between.
    let marked = is_tile_mark(&point)?;
    if marked {
        point = point.child(0).ctx(what)?;
    }
    point = point.band_set_ast_build_options(UnionSet::from_set(isolate).ctx(what)?).ctx(what)?;
    for k in 0..n {
        point = point.band_member_set_isolate_ast_loop_type(k, ASTLoopType::Separate).ctx(what)?;
    }
    let up = point.parent().ctx(what)?;
    Ok(if marked { up.parent().ctx(what)? } else { up })
}

/// The isolate option of the point band `point` (schedule depth `d + n`)
/// for the full tiles, `None` when no tile is full: a tile (outer and tile
/// loop values) is full when every point of the box `point_sizes` runs
/// some instance, that is, when the box minus the executed points is empty.
pub(super) fn full_tile_option(
    point: &ScheduleNode,
    d: u32,
    n: u32,
    point_sizes: &[i64],
) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating full tiles".to_string();
    let (full, points, _) = whole_boxes(point, point_sizes, what)?;
    if full.is_empty().ctx(what)? {
        return Ok(None);
    }
    Ok(Some(isolate_option(full.flat_product(points).ctx(what)?, d + n, what)?))
}

/// The values of the loops above `band` (prefix schedule) for which every
/// point of the box `0 <= b_k < sizes[k]` over `band`'s members runs some
/// statement instance (the box minus the executed points is empty), that
/// box, and the values at which some point of it runs.
pub(super) fn whole_boxes(
    band: &ScheduleNode,
    sizes: &[i64],
    what: impl Fn() -> String + Copy,
) -> Result<(Set, Set, Set), CodegenError> {
    let schedule = band
        .get_prefix_schedule_union_map()
        .ctx(what)?
        .flat_range_product(band.band_get_partial_schedule_union_map().ctx(what)?)
        .ctx(what)?;
    let instances = band.get_domain().ctx(what)?.apply(schedule).ctx(what)?;
    // [outer, band]: every schedule point some instance runs at.
    let all = Set::from_union_set(instances).ctx(what)?;
    let vars: Vec<String> = (0..sizes.len()).map(|k| format!("b{k}")).collect();
    let bounds: Vec<String> = sizes.iter().zip(&vars).map(|(s, v)| format!("0 <= {v} < {s}")).collect();
    let bx = Set::read_from_str(
        &band.get_ctx(),
        &format!("{{ [{}] : {} }}", vars.join(", "), bounds.join(" and ")),
    )
    .ctx(what)?;
    let (outer, k) = (all.dim(DimType::Set).ctx(what)? as u32 - sizes.len() as u32, sizes.len() as u32);
    let boxes = all.copy().ctx(what)?.project_out(DimType::Set, outer, k).ctx(what)?;
    let partial = boxes
        .copy()
        .ctx(what)?
        .flat_product(bx.copy().ctx(what)?)
        .ctx(what)?
        .subtract(all)
        .ctx(what)?
        .project_out(DimType::Set, outer, k)
        .ctx(what)?;
    let full = boxes.copy().ctx(what)?.subtract(partial).ctx(what)?.coalesce().ctx(what)?;
    Ok((full, bx, boxes))
}

/// `isolate[[the first `outer` dimensions of `set`] -> [the rest]]`.
pub(super) fn isolate_option(set: Set, outer: u32, what: impl Fn() -> String) -> Result<Set, CodegenError> {
    Ok(Map::from_range(set)
        .ctx(&what)?
        .move_dims(DimType::In, 0, DimType::Out, 0, outer)
        .ctx(&what)?
        .wrap()
        .ctx(&what)?
        .set_tuple_name("isolate")
        .ctx(&what)?)
}

/// The tree without AST build options (isolated full tiles): the fallback
/// when generating the isolated code costs more than the budget. Atomic
/// loops (two-level tiling's outer band) stay atomic.
pub(super) fn strip_ast_options(mut node: ScheduleNode) -> Result<ScheduleNode, CodegenError> {
    let what = || "dropping AST build options".to_string();
    if node.get_type().ctx(what)? == ScheduleNodeType::Band
        && !node.band_get_ast_build_options().ctx(what)?.is_empty().ctx(what)?
    {
        let n = node.band_n_member().ctx(what)?;
        let atomic = (0..n)
            .map(|j| Ok(node.band_member_get_ast_loop_type(j).ctx(what)? == ASTLoopType::Atomic))
            .collect::<Result<Vec<_>, CodegenError>>()?;
        let empty = UnionSet::empty_ctx(&node.get_ctx()).ctx(what)?;
        node = node.band_set_ast_build_options(empty).ctx(what)?;
        for (j, _) in atomic.iter().enumerate().filter(|(_, &a)| a) {
            node = node.band_member_set_ast_loop_type(j as i32, ASTLoopType::Atomic).ctx(what)?;
        }
    }
    for i in 0..node.n_children().ctx(what)? {
        node = strip_ast_options(node.child(i).ctx(what)?)?.parent().ctx(what)?;
    }
    Ok(node)
}
