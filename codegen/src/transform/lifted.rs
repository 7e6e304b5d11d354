//! Tiles as Pluto makes them for wavefronts: tile loops as iterators of
//! their own (statement domains lifted), and the wavefront skew of a tile
//! band.

use isl_rs::{
    Context, DimType, Id, MultiUnionPwAff, ScheduleNode, UnionMap, UnionPwAff, UnionPwMultiAff, UnionSet,
};
use model::isl::IslResultExt;
use model::legality;
use vocab::knobs::Wavefront;

use super::super::marks::TILE_MARK;
use super::Walk;
use crate::CodegenError;

impl Walk<'_> {
    /// Wavefront (Pluto; RR-9110 §2, §4.7) on a tile band whose first member
    /// is not parallel: the first member becomes the sum of itself and the
    /// next (`single`) or all the others (`all`); each later member that the
    /// parallelism check then accepts is flagged coincident.
    pub(super) fn wavefront(
        &self,
        band: ScheduleNode,
        kind: Wavefront,
    ) -> Result<ScheduleNode, CodegenError> {
        let what = || "wavefront skewing".to_string();
        let n = band.band_n_member().ctx(what)? as usize;
        let last = match kind {
            Wavefront::None => return Ok(band),
            Wavefront::Single => 1,
            Wavefront::All => n - 1,
        };
        let mupa = band.band_get_partial_schedule().ctx(what)?;
        let mut first = mupa.get_at(0).ctx(what)?;
        for k in 1..=last {
            first = first.add(mupa.get_at(k as i32).ctx(what)?).ctx(what)?;
        }
        let mupa = mupa.set_at(0, first).ctx(what)?;
        let mut node = band.delete().ctx(what)?.insert_partial_schedule(mupa).ctx(what)?;
        node = node.band_set_permutable(1).ctx(what)?;
        let Some((context, deps)) = self.checks else { return Ok(node) };
        let prefix = node.get_prefix_schedule_union_map().ctx(what)?;
        let members = node.band_get_partial_schedule().ctx(what)?;
        for j in 1..n {
            let mut outer = prefix.copy().ctx(what)?;
            for k in 0..j {
                let m = UnionMap::from_union_pw_aff(members.get_at(k as i32).ctx(what)?).ctx(what)?;
                outer = outer.flat_range_product(m).ctx(what)?;
            }
            let mut rest = UnionMap::from_union_pw_aff(members.get_at(j as i32).ctx(what)?).ctx(what)?;
            for k in j + 1..n {
                let m = UnionMap::from_union_pw_aff(members.get_at(k as i32).ctx(what)?).ctx(what)?;
                rest = rest.flat_range_product(m).ctx(what)?;
            }
            let (outer, rest) = (self.original(outer)?, self.original(rest)?);
            let parallel = legality::parallel_violations(self.ctx, context, &outer, &rest, deps)?.is_empty();
            node = node.band_member_set_coincident(j as i32, parallel as i32).ctx(what)?;
        }
        Ok(node)
    }

    /// Rectangular tiling of the permutable band `band` with tile loops as
    /// iterators of their own, as Pluto does (and CLooG then sees): every
    /// statement S reaching the band gets one more domain dimension per
    /// member, `S[x] -> S[x, T0, ..., T(n-1)]` with
    /// `sizes[k] * Tk <= phi_k(x) <= sizes[k] * Tk + sizes[k] - 1` (phi_k the
    /// band's member k); the tile band is `[T0, ..., T(n-1)]` and the point
    /// band `phi_k - sizes[k] * Tk` in `order`, flags as `band_tile` and
    /// `permute` would leave them. The same loops as `band_tile`'s
    /// `floor(phi_k / size)`, but without integer divisions: a wavefront
    /// (a sum of tile loops) stays a sum of iterators, where isl's AST
    /// generator otherwise spends minutes detecting strides over sums of
    /// divisions (jacobi-2d, heat-3d with `wavefront=all`). The statement
    /// calls carry the tile iterators as extra arguments, which `Printer`
    /// drops. Every statement reaching `band` must reach it whole
    /// (`whole_statements`). Returns the tile band, in the new tree.
    pub(super) fn tile_lifted(
        &self,
        band: ScheduleNode,
        sizes: &[i64],
        order: &[usize],
    ) -> Result<ScheduleNode, CodegenError> {
        let ctx = self.ctx;
        let what = || "tiling with tile iterators".to_string();
        let n = sizes.len();
        let permutable = band.band_get_permutable().ctx(what)?;
        let coincident: Vec<bool> =
            (0..n).map(|j| band.band_member_get_coincident(j as i32)).collect::<Result<_, _>>().ctx(what)?;
        let domain = band.get_domain().ctx(what)?;
        // [p] -> [T]: the tile of each point of the band.
        let ps: Vec<String> = (0..n).map(|k| format!("p{k}")).collect();
        let ts: Vec<String> = (0..n).map(|k| format!("t{k}")).collect();
        let cons: Vec<String> = (0..n)
            .map(|k| format!("{s} * t{k} <= p{k} <= {s} * t{k} + {}", sizes[k] - 1, s = sizes[k]))
            .collect();
        let tile_of = UnionMap::read_from_str(
            ctx,
            &format!("{{ [{}] -> [{}] : {} }}", ps.join(", "), ts.join(", "), cons.join(" and ")),
        )
        .ctx(what)?;
        let tiles = band
            .band_get_partial_schedule_union_map()
            .ctx(what)?
            .intersect_domain(domain.copy().ctx(what)?)
            .ctx(what)?
            .apply_range(tile_of)
            .ctx(what)?;
        let Lifting { lifted, projection, tile_members, shifts } = lifting(ctx, &band, domain, tiles, sizes)?;
        let path = tree_path(&band)?;
        let schedule = band
            .get_schedule()
            .ctx(what)?
            .pullback_union_pw_multi_aff(projection.copy().ctx(what)?)
            .ctx(what)?
            .intersect_domain(lifted.copy().ctx(what)?)
            .ctx(what)?;
        let mut node = schedule.get_root().ctx(what)?;
        for &p in &path {
            node = node.child(p).ctx(what)?;
        }
        // The same band, on the lifted instances.
        let phi = node.band_get_partial_schedule().ctx(what)?;
        let union_pw_aff = |pieces: &[String]| {
            UnionPwAff::read_from_str(ctx, &format!("{{ {} }}", pieces.join("; "))).ctx(what)
        };
        let mut point: Option<MultiUnionPwAff> = None;
        for &k in order {
            let member = phi.get_at(k as i32).ctx(what)?.sub(union_pw_aff(&shifts[k])?).ctx(what)?;
            let member = MultiUnionPwAff::from_union_pw_aff(member).ctx(what)?;
            point = Some(match point {
                None => member,
                Some(p) => p.flat_range_product(member).ctx(what)?,
            });
        }
        let mut tile: Option<MultiUnionPwAff> = None;
        for members in &tile_members {
            let member = MultiUnionPwAff::from_union_pw_aff(union_pw_aff(members)?).ctx(what)?;
            tile = Some(match tile {
                None => member,
                Some(t) => t.flat_range_product(member).ctx(what)?,
            });
        }
        let (Some(point), Some(tile)) = (point, tile) else {
            return Err(CodegenError::Unsupported("tiling an empty band".into()));
        };
        node = node.delete().ctx(what)?.insert_partial_schedule(point).ctx(what)?;
        node = node.band_set_permutable(permutable as i32).ctx(what)?;
        for (j, &k) in order.iter().enumerate() {
            node = node.band_member_set_coincident(j as i32, coincident[k] as i32).ctx(what)?;
        }
        // Between the tile and the point band, where `group_tiles` expands
        // tiles into their points for the AST generator.
        node = node.insert_mark(Id::read_from_str(ctx, TILE_MARK).ctx(what)?).ctx(what)?;
        node = node.insert_partial_schedule(tile).ctx(what)?;
        node = node.band_set_permutable(permutable as i32).ctx(what)?;
        for (k, &c) in coincident.iter().enumerate() {
            node = node.band_member_set_coincident(k as i32, c as i32).ctx(what)?;
        }
        // SCoP instances -> lifted instances.
        let step = UnionMap::from_union_pw_multi_aff(projection)
            .ctx(what)?
            .intersect_domain(lifted)
            .ctx(what)?
            .reverse()
            .ctx(what)?;
        let mut lift = self.lift.borrow_mut();
        *lift = Some(match lift.take() {
            None => step,
            Some(l) => l.apply_range(step).ctx(what)?,
        });
        Ok(node)
    }
}

/// The instances of the statements reaching a band lifted by their tiles,
/// and what tiling with tile iterators builds from them.
struct Lifting {
    /// Each statement instance reaching the band with its tile (`tiles`'
    /// range) appended; the others as they are.
    lifted: UnionSet,
    /// Lifted instances back to the SCoP's.
    projection: UnionPwMultiAff,
    /// Per member `k`, per statement: its tile iterator, and `sizes[k]`
    /// times it (the point loop's shift).
    tile_members: Vec<Vec<String>>,
    shifts: Vec<Vec<String>>,
}

/// [`Lifting`] of the statements of `domain` (those reaching `band`) by
/// `tiles`, each instance's tile of `sizes`.
fn lifting(
    ctx: &Context,
    band: &ScheduleNode,
    domain: UnionSet,
    tiles: UnionMap,
    sizes: &[i64],
) -> Result<Lifting, CodegenError> {
    let what = || "tiling with tile iterators".to_string();
    let n = sizes.len();
    let ts: Vec<String> = (0..n).map(|k| format!("t{k}")).collect();
    // Per statement: the lifted instances, the projection back, and
    // the tile band's and the point band's shifts.
    let root_domain = band.copy().ctx(what)?.root().ctx(what)?.domain_get_domain().ctx(what)?;
    let others = root_domain.subtract(domain).ctx(what)?;
    let mut lifted = others.copy().ctx(what)?;
    let mut projection: Vec<String> = Vec::new();
    let mut tile_members: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut shifts: Vec<Vec<String>> = vec![Vec::new(); n];
    let list = tiles.get_map_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let map = list.get_at(i).ctx(what)?;
        let name = map.get_tuple_name(DimType::In).ctx(what)?.to_string();
        let m = map.dim(DimType::In).ctx(what)? as usize;
        let set = map.wrap().ctx(what)?.flatten().ctx(what)?.set_tuple_name(&name).ctx(what)?;
        lifted = lifted.union(UnionSet::from_set(set).ctx(what)?).ctx(what)?;
        let xs: Vec<String> = (0..m).map(|d| format!("x{d}")).collect();
        let tuple = format!("{name}[{}, {}]", xs.join(", "), ts.join(", "));
        projection.push(format!("{tuple} -> {name}[{}]", xs.join(", ")));
        for k in 0..n {
            tile_members[k].push(format!("{tuple} -> [(t{k})]"));
            shifts[k].push(format!("{tuple} -> [({} * t{k})]", sizes[k]));
        }
    }
    // Statements elsewhere in the tree keep their instances.
    let others_list = others.get_set_list().ctx(what)?;
    for i in 0..others_list.size().ctx(what)? {
        let set = others_list.get_at(i).ctx(what)?;
        let name = set.get_tuple_name().ctx(what)?.to_string();
        let xs: Vec<String> = (0..set.dim(DimType::Set).ctx(what)?).map(|d| format!("x{d}")).collect();
        projection.push(format!("{name}[{0}] -> {name}[{0}]", xs.join(", ")));
    }
    let projection =
        UnionPwMultiAff::read_from_str(ctx, &format!("{{ {} }}", projection.join("; "))).ctx(what)?;
    Ok(Lifting { lifted, projection, tile_members, shifts })
}

/// Whether every statement reaching `band` reaches it with all its
/// instances (no other branch of the tree runs some of them), so that
/// `Walk::tile_lifted` may give its instances the band's tile iterators.
pub(super) fn whole_statements(band: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "tiling with tile iterators".to_string();
    let here = band.get_domain().ctx(what)?;
    let all = band.copy().ctx(what)?.root().ctx(what)?.domain_get_domain().ctx(what)?;
    let list = here.get_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let set = list.get_at(i).ctx(what)?;
        let whole = all.extract_set(set.get_space().ctx(what)?).ctx(what)?;
        if !whole.is_subset(&set).ctx(what)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The child positions from the root of `node`'s tree down to `node`.
fn tree_path(node: &ScheduleNode) -> Result<Vec<i32>, CodegenError> {
    let what = || "locating a schedule node".to_string();
    let mut path = Vec::new();
    let mut n = node.copy().ctx(what)?;
    while n.has_parent().ctx(what)? {
        path.push(n.get_child_position().ctx(what)?);
        n = n.parent().ctx(what)?;
    }
    path.reverse();
    Ok(path)
}
