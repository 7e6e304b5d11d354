//! The order of a tiled band's loops: of its point loops, the knobs that
//! sink one innermost (Pluto's post-tile score, intra-tile consecutivity);
//! of its tile loops, packing's; a plan's, for either; and the permutation
//! of a band's members.

use isl_rs::{MultiUnionPwAff, ScheduleNode, UnionMap, UnionSet};
use model::isl::IslResultExt;
use model::scop::isl_name;
use space::clay::Action;
use vocab::knobs::PostTileReorder;

use super::super::pack;
use super::Walk;
use crate::CodegenError;

impl Walk<'_> {
    /// The order of the point loops of the tiled `band` (its members'
    /// indices, innermost last), `None` for the band's own order.
    pub(super) fn point_order_of(
        &self,
        band: &ScheduleNode,
        statements: &[String],
        depth: usize,
    ) -> Result<Option<Vec<usize>>, CodegenError> {
        let order = match &self.opts.plan {
            Some(_) => self.take(statements, depth..depth + 1, |a, _| match a {
                Action::PointOrder { order } => Some(order.clone()),
                _ => None,
            }),
            None => self.point_order(band)?,
        };
        if let Some(order) = &order {
            check_order(band, order, "point-order")?;
            self.record(depth, statements, Action::PointOrder { order: order.clone() });
        }
        Ok(order)
    }

    /// The order of the tiled `band`'s tile loops (its members' indices,
    /// innermost last): the plan's, or packing's where it makes copies
    /// (`plain`: neither two levels nor a wavefront); `None` for the band's
    /// own order.
    pub(super) fn tile_order_of(
        &self,
        band: &ScheduleNode,
        statements: &[String],
        depth: usize,
        plain: bool,
    ) -> Result<Option<Vec<usize>>, CodegenError> {
        let order = match &self.opts.plan {
            Some(_) => self.take(statements, depth..depth + 1, |a, _| match a {
                Action::TileOrder { order } => Some(order.clone()),
                _ => None,
            }),
            None if self.opts.code.pack && plain => pack::tile_order(self.ctx, self.scop, band)?,
            None => None,
        };
        if let Some(order) = &order {
            check_order(band, order, "tile-order")?;
            if !plain {
                return Err(CodegenError::Unsupported(format!(
                    "tile-order {order:?}: not on two-level or wavefront tiles"
                )));
            }
            self.record(depth, statements, Action::TileOrder { order: order.clone() });
        }
        Ok(order)
    }

    /// The order of the point loops after tiling (`None`: as they are): the
    /// member with the most stride-one references (intra-tile consecutivity),
    /// then the best Pluto score (2), is sunk innermost. Scores come from
    /// the scheduled accesses: for member j, the subscript differences between
    /// instances whose schedules (outer loops, this band) differ by one in j.
    pub(super) fn point_order(&self, band: &ScheduleNode) -> Result<Option<Vec<usize>>, CodegenError> {
        let opts = self.opts;
        if opts.posttile_reorder == PostTileReorder::None && !opts.intra_tile_consecutivity {
            return Ok(None);
        }
        let ctx = self.ctx;
        let what = || "scoring point loops".to_string();
        let n = band.band_n_member().ctx(what)? as usize;
        let prefix = band.get_prefix_schedule_union_map().ctx(what)?;
        let partial = band.band_get_partial_schedule_union_map().ctx(what)?;
        let full = self.original(prefix.flat_range_product(partial).ctx(what)?)?;
        let depth = band.get_schedule_depth().ctx(what)? as usize;
        let m = depth + n;
        let mut consecutive = vec![0i64; n];
        let mut pluto = vec![0i64; n];
        for j in 0..n {
            let vars: Vec<String> = (0..m).map(|k| format!("o{k}")).collect();
            let moved: Vec<String> = vars
                .iter()
                .enumerate()
                .map(|(k, v)| if k == depth + j { format!("{v} + 1") } else { v.clone() })
                .collect();
            let shift = UnionMap::read_from_str(
                ctx,
                &format!("{{ [{}] -> [{}] }}", vars.join(", "), moved.join(", ")),
            )
            .ctx(what)?;
            let next = full
                .copy()
                .ctx(what)?
                .apply_range(shift)
                .ctx(what)?
                .apply_range(full.copy().ctx(what)?.reverse().ctx(what)?)
                .ctx(what)?;
            let (mut n_s, mut sum, mut all_local) = (0i64, 0i64, true);
            for st in &self.scop.statements {
                let dom = UnionSet::read_from_str(ctx, &st.domain).ctx(what)?;
                let own = next
                    .copy()
                    .ctx(what)?
                    .intersect_domain(dom.copy().ctx(what)?)
                    .ctx(what)?
                    .intersect_range(dom)
                    .ctx(what)?;
                if own.is_empty().ctx(what)? {
                    continue; // member j is no loop for this statement
                }
                n_s += 1;
                for a in &st.accesses {
                    let acc = UnionMap::read_from_str(ctx, &a.relation).ctx(what)?;
                    let deltas = own
                        .copy()
                        .ctx(what)?
                        .apply_domain(acc.copy().ctx(what)?)
                        .ctx(what)?
                        .apply_range(acc)
                        .ctx(what)?
                        .deltas()
                        .ctx(what)?;
                    let d =
                        self.scop.arrays.iter().find(|x| x.name == a.array).map_or(0, |x| x.extents.len());
                    let set = |last: &str| -> Result<UnionSet, CodegenError> {
                        let mut idx: Vec<String> = (0..d).map(|_| "0".to_string()).collect();
                        let cond = if d == 0 {
                            String::new()
                        } else {
                            idx[d - 1] = "x".into();
                            format!(" : {last}")
                        };
                        let name = isl_name(&a.array);
                        Ok(UnionSet::read_from_str(ctx, &format!("{{ {name}[{}]{cond} }}", idx.join(", ")))
                            .ctx(what)?)
                    };
                    let temporal = deltas.is_subset(&set("x = 0")?).ctx(what)?;
                    let spatial = !temporal && d > 0 && deltas.is_subset(&set("-4 <= x <= 4")?).ctx(what)?;
                    if d > 0 && deltas.is_subset(&set("x = 1")?).ctx(what)? && !deltas.is_empty().ctx(what)? {
                        consecutive[j] += 1;
                    }
                    let other = !temporal && !spatial;
                    all_local &= !other;
                    sum += 2 * spatial as i64 + 4 * temporal as i64 - 16 * other as i64;
                }
            }
            pluto[j] = n_s * sum + 8 * all_local as i64;
        }
        let key = |j: usize| {
            let c = if opts.intra_tile_consecutivity { consecutive[j] } else { 0 };
            let p = if opts.posttile_reorder == PostTileReorder::Pluto { pluto[j] } else { 0 };
            (c, p, j)
        };
        let best = (0..n).max_by_key(|&j| key(j)).unwrap();
        if best == n - 1 {
            return Ok(None);
        }
        let mut order: Vec<usize> = (0..n).filter(|&j| j != best).collect();
        order.push(best);
        Ok(Some(order))
    }
}

/// The band at `node` with its members in `order` (a permutation: legal for
/// a permutable band), permutable and coincidence flags kept.
pub(super) fn permute(node: ScheduleNode, order: &[usize]) -> Result<ScheduleNode, CodegenError> {
    let what = || "permuting point loops".to_string();
    let mupa = node.band_get_partial_schedule().ctx(what)?;
    let permutable = node.band_get_permutable().ctx(what)?;
    let coincident: Vec<bool> =
        order.iter().map(|&j| node.band_member_get_coincident(j as i32).unwrap_or(false)).collect();
    let mut out: Option<MultiUnionPwAff> = None;
    for &j in order {
        let m = MultiUnionPwAff::from_union_pw_aff(mupa.get_at(j as i32).ctx(what)?).ctx(what)?;
        out = Some(match out {
            None => m,
            Some(o) => o.flat_range_product(m).ctx(what)?,
        });
    }
    let mut node = node.delete().ctx(what)?.insert_partial_schedule(out.unwrap()).ctx(what)?;
    node = node.band_set_permutable(permutable as i32).ctx(what)?;
    for (k, c) in coincident.into_iter().enumerate() {
        node = node.band_member_set_coincident(k as i32, c as i32).ctx(what)?;
    }
    Ok(node)
}

/// An error unless `order` orders `band`'s members.
fn check_order(band: &ScheduleNode, order: &[usize], step: &str) -> Result<(), CodegenError> {
    let m = band.band_n_member().ctx(|| "ordering a band's loops".to_string())? as usize;
    let mut sorted = order.to_vec();
    sorted.sort();
    if sorted != (0..m).collect::<Vec<_>>() {
        return Err(CodegenError::Unsupported(format!(
            "{step} {order:?}: not an order of the band's {m} members"
        )));
    }
    Ok(())
}
