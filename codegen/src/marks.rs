//! The names that code-generation passes leave in a schedule tree (marks)
//! and in its domain (barrier statements) for later passes and the printer
//! to find. A leaf module: the passes that write a name and those that read
//! it depend on it, not on each other.

use isl_rs::{ScheduleNode, ScheduleNodeType};
use model::isl::IslResultExt;

use super::CodegenError;

/// The mark above a band whose first member is parallel, followed by that
/// member's schedule depth (`polytune_parallel_3`): only the loop isl
/// generates for that dimension may get `parallel for`. When the member is
/// constant for some statements, isl generates no loop for it there, and the
/// first loop below the mark belongs to a deeper member that may carry
/// dependences (gramschmidt's `nrm` reduction under a wavefront).
pub(crate) const PARALLEL_MARK: &str = "polytune_parallel";

/// The mark above a band whose loops of one schedule depth
/// (`polytune_simd_5`) are innermost and parallel: they get `omp simd`.
pub(crate) const SIMD_MARK: &str = "polytune_simd";

/// The mark above register tiling's band of strips, naming its first
/// schedule depth, its number of members and the factor
/// (`polytune_unroll_6_2_4`): their loops get `#pragma GCC unroll 4`, and
/// the compiler, with constant trip counts in full tiles, unrolls them
/// into the innermost loop's body (the jam is the schedule's).
pub(crate) const UNROLL_MARK: &str = "polytune_unroll";

/// The mark above a micro tile's `r` loop (`transform::micro`), where
/// `accumulate` keeps the strip's written elements in a local array.
pub(crate) const ACCUMULATE_MARK: &str = "polytune_accumulate";

/// The mark between the tile band and the point band of a band tiled with
/// tile iterators (`Walk::tile_lifted`): where `group_tiles` puts the
/// expansion from tiles to statement instances.
pub(crate) const TILE_MARK: &str = "polytune_tile_points";

/// The mark above each kernel's subtree, with the kernel's number
/// (`polytune_kernel_2`).
pub(crate) const KERNEL_MARK: &str = "polytune_kernel";

/// The barrier statements' name: `polytune_barrier_1` is a kernel's second
/// barrier.
pub(crate) const BARRIER: &str = "barrier_";

/// Whether `node` is a [`TILE_MARK`].
pub(crate) fn is_tile_mark(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "reading a mark".to_string();
    Ok(node.get_type().ctx(what)? == ScheduleNodeType::Mark
        && node.mark_get_id().ctx(what)?.to_str().ctx(what)? == TILE_MARK)
}

/// The node below the tile band `tile` (past its `TILE_MARK`): the point band.
pub(crate) fn point_band(tile: &ScheduleNode) -> Result<ScheduleNode, CodegenError> {
    let what = || "finding the point band".to_string();
    let point = tile.get_child(0).ctx(what)?;
    Ok(if is_tile_mark(&point)? { point.child(0).ctx(what)? } else { point })
}

/// The mark named `name` in the subtree at `node`.
pub(crate) fn find_mark(node: ScheduleNode, name: &str) -> Result<Option<ScheduleNode>, CodegenError> {
    let what = || format!("finding the mark {name}");
    if node.get_type().ctx(what)? == ScheduleNodeType::Mark
        && node.mark_get_id().ctx(what)?.to_str().ctx(what)? == name
    {
        return Ok(Some(node));
    }
    for i in 0..node.n_children().ctx(what)? {
        if let Some(found) = find_mark(node.get_child(i).ctx(what)?, name)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}
