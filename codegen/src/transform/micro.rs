//! The micro-kernel's register tile (`micro_tile=RxC`): BLIS's micro-kernel
//! as a schedule. In a tiled band whose statements write the same elements
//! all along one point loop `r` (gemm's `k`, a reduction), the point band
//! `[.., q, .., r, .., j]` becomes strips `[.., R⌊q/R⌋, C⌊j/C⌋]`, then `r`,
//! then the register tile `[q mod R, j mod C]`: `q`'s strip unrolled, `j`'s
//! vectorised, and `r` outside both. The strip's elements of the written
//! arrays then stay the same along `r`, and `accumulate` keeps them in a
//! local array around the `r` loop, which the compiler holds in registers:
//! each step of `r` loads a row of `C / vector` vectors of the `j` operand,
//! broadcasts `R` values of the `q` operand and does `R · C / vector`
//! multiply-adds, where unroll-and-jam reloads and stores the written
//! vectors at every step. Any rectangular tiling and any order of a
//! permutable band's loops is legal; the tree is checked all the same.

use isl_rs::{ASTLoopType, DimType, Id, MultiVal, ScheduleNode, Set, UnionSet, Val};
use model::isl::IslResultExt;
use model::scop::AccessKind;
use space::clay::Action;

use super::super::isolate::{isolate_option, whole_boxes, ISOLATE_OPS};
use super::super::marks::{ACCUMULATE_MARK, SIMD_MARK, UNROLL_MARK};
use super::order::permute;
use super::{leaf_band, Walk};
use crate::CodegenError;
use model::isl::within_budget;

/// A micro tile of a point band: the member strip-mined by the tile's
/// rows (`q`) and the one its writes stay put along (`r`), the innermost
/// one being the columns'; the rows and columns.
#[derive(Debug, Clone, Copy)]
pub(super) struct Micro {
    q: usize,
    r: usize,
    rows: u32,
    cols: u32,
}

impl Walk<'_> {
    /// The micro tile for the tiled band `tile`: the plan's, or the knob's;
    /// `None` where there is none, or (without a plan) where the point band
    /// has no member its writes stay put along, no member for the rows, or
    /// loops below it.
    pub(super) fn micro_choice(
        &self,
        tile: &ScheduleNode,
        statements: &[String],
        depth: usize,
    ) -> Result<Option<Micro>, CodegenError> {
        let what = || "choosing a micro tile".to_string();
        let tile_size = match &self.opts.plan {
            Some(_) => self.take(statements, depth..depth + 1, |a, _| match a {
                Action::MicroTile { rows, cols } => Some((*rows, *cols)),
                _ => None,
            }),
            None => Some(self.opts.code.micro_tile).filter(|&t| t != (0, 0)),
        };
        let Some((rows, cols)) = tile_size else { return Ok(None) };
        let point = tile.get_child(0).ctx(what)?;
        let members =
            match point.get_type().ctx(what)? == isl_rs::ScheduleNodeType::Band && leaf_band(&point)? {
                true => self.micro_members(&point)?,
                false => None,
            };
        match (members, &self.opts.plan) {
            (Some((q, r)), _) => Ok(Some(Micro { q, r, rows, cols })),
            (None, Some(_)) => Err(CodegenError::Unsupported(format!(
                "micro-tile at the loop of depth {depth} around {}: no point loop along which the writes stay put, with another outside the innermost",
                statements.join(" ")
            ))),
            (None, None) => Ok(None),
        }
    }

    /// `r`: the innermost member of `point` but the last along which every
    /// statement of the band writes the same element (for fixed values of
    /// the others); `q`: the innermost member but the last and `r`.
    fn micro_members(&self, point: &ScheduleNode) -> Result<Option<(usize, usize)>, CodegenError> {
        let what = || "choosing a micro tile".to_string();
        let m = point.band_n_member().ctx(what)? as usize;
        if m < 3 {
            return Ok(None);
        }
        let domain = point.get_domain().ctx(what)?;
        let names = super::super::footprint::statements(&domain)?;
        let mut writes: Option<isl_rs::UnionMap> = None;
        for s in self.scop.statements.iter().filter(|s| names.contains(&s.name)) {
            for a in s.accesses.iter().filter(|a| a.kind == AccessKind::Write) {
                let w = isl_rs::UnionMap::read_from_str(self.ctx, &a.relation).ctx(what)?;
                writes = Some(match writes {
                    None => w,
                    Some(acc) => acc.union(w).ctx(what)?,
                });
            }
        }
        let Some(writes) = writes else { return Ok(None) };
        let writes = writes.intersect_domain(domain).ctx(what)?;
        let schedule = point
            .get_prefix_schedule_union_map()
            .ctx(what)?
            .flat_range_product(point.band_get_partial_schedule_union_map().ctx(what)?)
            .ctx(what)?;
        let at_points = schedule.reverse().ctx(what)?.apply_range(writes).ctx(what)?;
        let first = point.get_schedule_depth().ctx(what)? as u32;
        let list = at_points.get_map_list().ctx(what)?;
        let mut maps = Vec::new();
        for i in 0..list.size().ctx(what)? {
            maps.push(list.get_at(i).ctx(what)?);
        }
        let stays = |k: usize| -> Result<bool, CodegenError> {
            for map in &maps {
                let without =
                    map.copy().ctx(what)?.project_out(DimType::In, first + k as u32, 1).ctx(what)?;
                if !without.is_single_valued().ctx(what)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut r = None;
        for k in (0..m - 1).rev() {
            if stays(k)? {
                r = Some(k);
                break;
            }
        }
        let Some(r) = r else { return Ok(None) };
        let q = (0..m - 1).rev().find(|&k| k != r);
        Ok(q.map(|q| (q, r)))
    }

    /// The tile band `tile`'s point band made a micro tile of `rows` by
    /// `cols` (see the module); returns the tile band. The strips' band
    /// isolates the strips whose register tiles are whole (constant trip
    /// counts, the unrolled and vectorised code), the `r` band gets an
    /// `ACCUMULATE_MARK`.
    pub(super) fn micro_tile(
        &self,
        tile: ScheduleNode,
        Micro { q, r, rows, cols }: Micro,
        statements: &[String],
        depth: usize,
    ) -> Result<ScheduleNode, CodegenError> {
        let what = || "making a micro tile".to_string();
        let mut point = tile.child(0).ctx(what)?;
        let m = point.band_n_member().ctx(what)? as usize;
        self.check_permutable(&point)?;
        self.record(depth, statements, Action::MicroTile { rows, cols });
        let j = m - 1;
        let others: Vec<usize> = (0..m).filter(|&k| k != q && k != r && k != j).collect();
        let order: Vec<usize> = others.iter().copied().chain([q, j, r]).collect();
        point = permute(point, &order)?;
        let n = others.len();
        // Rows along `q`, columns along `j`, 1 (no strip) elsewhere.
        let mut sizes = MultiVal::zero(point.band_get_space().ctx(what)?).ctx(what)?;
        for k in 0..m {
            let size = if k == n {
                rows
            } else if k == n + 1 {
                cols
            } else {
                1
            };
            sizes = sizes.set_val(k as i32, Val::int_from_si(self.ctx, size as i64).ctx(what)?).ctx(what)?;
        }
        // Strips [others, q', j', r] over [0.., q mod R, j mod C, 0].
        let mut inner = point.band_tile(sizes).ctx(what)?.child(0).ctx(what)?;
        inner = inner.band_set_ast_build_options(UnionSet::empty_ctx(self.ctx).ctx(what)?).ctx(what)?;
        if n > 0 {
            inner = inner.band_split(n as i32).ctx(what)?.delete().ctx(what)?;
        }
        inner = inner.band_split(2).ctx(what)?.child(0).ctx(what)?.delete().ctx(what)?.parent().ctx(what)?;
        let at = inner.get_schedule_depth().ctx(what)?;
        let simd = self.vectorise(&[(inner.copy().ctx(what)?, 1)], depth + m - 1, statements)?;
        if simd {
            let id = Id::read_from_str(self.ctx, &format!("{SIMD_MARK}_{}", at + 1)).ctx(what)?;
            inner = inner.insert_mark(id).ctx(what)?.child(0).ctx(what)?;
        }
        let id = Id::read_from_str(self.ctx, &format!("{UNROLL_MARK}_{at}_1_{rows}")).ctx(what)?;
        inner = inner.insert_mark(id).ctx(what)?.child(0).ctx(what)?;
        let size = [rows as i64, cols as i64];
        let runs = every_statement_runs(&inner)?;
        let whole =
            within_budget(self.ctx, ISOLATE_OPS, || whole_strips(&inner, &size, runs.copy().ctx(what)?))?
                .flatten();
        // A triangular band (trmm's `k > i`) has no strip whose tiles are
        // whole at every `r`: then the steps of `r` at which they are.
        let steps = match whole {
            Some(_) => None,
            None => within_budget(self.ctx, ISOLATE_OPS, || whole_steps(&inner, &size, runs))?.flatten(),
        };
        // Up to the strips' band, split before `r`.
        let mut strips = inner.parent().ctx(what)?.parent().ctx(what)?;
        if simd {
            strips = strips.parent().ctx(what)?;
        }
        strips = strips.band_split(m as i32 - 1).ctx(what)?;
        let id = Id::read_from_str(self.ctx, ACCUMULATE_MARK).ctx(what)?;
        strips = strips.child(0).ctx(what)?.insert_mark(id).ctx(what)?.parent().ctx(what)?;
        if let Some(whole) = whole {
            let d = strips.get_schedule_depth().ctx(what)? as u32;
            let option = isolate_option(whole, d, || "isolating whole micro tiles".to_string())?;
            strips = strips.band_set_ast_build_options(UnionSet::from_set(option).ctx(what)?).ctx(what)?;
            for k in 0..m as i32 - 1 {
                strips = strips.band_member_set_isolate_ast_loop_type(k, ASTLoopType::Separate).ctx(what)?;
            }
            self.isolated.set(true);
        }
        if let Some(steps) = steps {
            let mut r_band = strips.child(0).ctx(what)?.child(0).ctx(what)?;
            let d = r_band.get_schedule_depth().ctx(what)? as u32;
            let option = isolate_option(steps, d, || "isolating whole micro tiles".to_string())?;
            r_band = r_band.band_set_ast_build_options(UnionSet::from_set(option).ctx(what)?).ctx(what)?;
            r_band = r_band.band_member_set_isolate_ast_loop_type(0, ASTLoopType::Separate).ctx(what)?;
            strips = r_band.parent().ctx(what)?.parent().ctx(what)?;
            self.isolated.set(true);
        }
        Ok(strips.parent().ctx(what)?)
    }
}

/// The values of the loops down to the strips (all above `r`) at which
/// every register tile below `inner` (the band `[q mod R, j mod C]`, of
/// `size`) is whole, for every value of `r`; `None` where none is, or
/// where isl would generate their hull (see `full_strip_option`).
fn whole_strips(inner: &ScheduleNode, size: &[i64], runs: Set) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating whole micro tiles".to_string();
    let (full, _, boxes) = whole_boxes(inner, size, what)?;
    // [outer, strips, r]: the last is `r`.
    let last = boxes.dim(DimType::Set).ctx(what)? as u32 - 1;
    let partial = boxes.copy().ctx(what)?.subtract(full).ctx(what)?;
    let cut = |s: Set| s.project_out(DimType::Set, last, 1);
    let whole = cut(boxes).ctx(what)?.subtract(cut(partial).ctx(what)?).ctx(what)?;
    // Code is generated where every statement runs (`every_statement_runs`):
    // gemm's tiles at `k = 0` also run `C *= beta`, whole when `nk <= 0` too.
    let whole = whole.intersect_params(runs).ctx(what)?;
    let whole = whole.coalesce().ctx(what)?;
    let hull = Set::from_basic_set(whole.copy().ctx(what)?.unshifted_simple_hull().ctx(what)?).ctx(what)?;
    if whole.is_empty().ctx(what)? || !hull.is_equal(&whole).ctx(what)? {
        return Ok(None);
    }
    Ok(Some(whole))
}

/// The values of the loops down to `r` at which the register tile below
/// `inner` is whole, where [`whole_strips`] finds no strip whole at every
/// `r`: one convex piece of them, as isolation takes a hull; `None` where
/// there are none.
fn whole_steps(inner: &ScheduleNode, size: &[i64], runs: Set) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating whole micro tiles".to_string();
    let (full, _, _) = whole_boxes(inner, size, what)?;
    let whole = full.intersect_params(runs).ctx(what)?.coalesce().ctx(what)?;
    // The widest piece (fewest equalities): the steps but for slices such
    // as trmm's last, where `B[i][j] = alpha * B[i][j]` joins the tile.
    let pieces = whole.get_basic_set_list().ctx(what)?;
    let mut widest: Option<(i32, isl_rs::BasicSet)> = None;
    for k in 0..pieces.size().ctx(what)? {
        let piece = pieces.get_at(k).ctx(what)?;
        let equalities = piece.copy().ctx(what)?.affine_hull().ctx(what)?.n_constraint().ctx(what)?;
        if widest.as_ref().is_none_or(|(e, _)| equalities < *e) {
            widest = Some((equalities, piece));
        }
    }
    let Some((_, piece)) = widest else { return Ok(None) };
    Ok(Some(Set::from_basic_set(piece).ctx(what)?))
}

/// The parameters under which every statement of `node`'s tree runs.
fn every_statement_runs(node: &ScheduleNode) -> Result<Set, CodegenError> {
    let what = || "the parameters under which every statement runs".to_string();
    // isl gives the root (the domain node) an empty domain.
    let domain = node.get_schedule().ctx(what)?.get_domain().ctx(what)?;
    let list = domain.get_set_list().ctx(what)?;
    let mut runs = list.get_at(0).ctx(what)?.params().ctx(what)?;
    for i in 1..list.size().ctx(what)? {
        runs = runs.intersect(list.get_at(i).ctx(what)?.params().ctx(what)?).ctx(what)?;
    }
    Ok(runs)
}
