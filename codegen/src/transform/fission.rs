//! Loop fission of a tiled band's innermost point loop: one loop per
//! statement there, in an order the dependences allow.

use super::{leaf_band, Walk};
use crate::marks::{is_tile_mark, point_band};
use crate::CodegenError;
use isl_rs::{DimType, ScheduleNode, ScheduleNodeType, UnionMap, UnionSet, UnionSetList};
use model::isl::IslResultExt;
use model::legality;

impl Walk<'_> {
    /// Loop fission of the innermost point loop below the tile band `tile`:
    /// the point band split before its last member, and a sequence with one
    /// filter per statement put above that member. Only where the point
    /// band is the innermost band and runs two statements or more, in an
    /// order under which every dependence the loops around the last member
    /// leave unseparated goes from a statement to a later one or to itself
    /// (`band_violations` on the statements' positions): the order below
    /// the band, else the SCoP's. Where there is none, `required` (a
    /// script's step) makes that an error. Returns the tile band again, and
    /// whether it was split.
    pub(super) fn fission(
        &self,
        tile: ScheduleNode,
        required: bool,
    ) -> Result<(ScheduleNode, bool), CodegenError> {
        let what = || "loop fission".to_string();
        let point = point_band(&tile)?;
        let k = point.band_n_member().ctx(what)? as usize;
        let below = statement_order(&point)?;
        if k < 2 || below.len() < 2 || !leaf_band(&point)? {
            if required {
                return Err(CodegenError::Unsupported(format!(
                    "fission of a band of {k} point loops over {}: it needs an innermost band of two statements or more",
                    below.join(" ")
                )));
            }
            return Ok((tile, false));
        }
        let outer = self.outer_loops(&point, k - 1)?;
        let mut pieces = Vec::new();
        let list = point.get_domain().ctx(what)?.get_set_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            pieces.push(list.get_at(i).ctx(what)?);
        }
        let scop_order: Vec<String> =
            self.scop.statements.iter().map(|s| s.name.clone()).filter(|s| below.contains(s)).collect();
        let orders = if scop_order == below { vec![below] } else { vec![below, scop_order] };
        let mut first_violations = None;
        let mut chosen = None;
        for order in orders {
            let Some((context, deps)) = self.checks else {
                chosen = Some(order);
                break;
            };
            let mut positions = Vec::new();
            for set in &pieces {
                let name = set.get_tuple_name().ctx(what)?;
                let p = order.iter().position(|s| s == name).unwrap_or(0);
                let vars: Vec<String> =
                    (0..set.dim(DimType::Set).ctx(what)?).map(|d| format!("i{d}")).collect();
                positions.push(format!("{name}[{}] -> [{p}]", vars.join(", ")));
            }
            let text = format!("{{ {} }}", positions.join("; "));
            let by_position = self.original(UnionMap::read_from_str(self.ctx, &text).ctx(what)?)?;
            let outer = outer.copy().ctx(what)?;
            let v = legality::band_violations(self.ctx, context, &outer, &by_position, deps)?;
            if v.is_empty() {
                chosen = Some(order);
                break;
            }
            first_violations.get_or_insert(v);
        }
        let Some(order) = chosen else {
            return match required {
                true => Err(CodegenError::Illegal(first_violations.unwrap_or_default())),
                false => Ok((tile, false)),
            };
        };
        let mut filters = Vec::new();
        for name in &order {
            let mut filter = UnionSet::empty_ctx(self.ctx).ctx(what)?;
            for set in pieces.iter().filter(|s| s.get_tuple_name().ok() == Some(name.as_str())) {
                filter = filter.union(UnionSet::from_set(set.copy().ctx(what)?).ctx(what)?).ctx(what)?;
            }
            filters.push(filter);
        }
        let mut list = UnionSetList::alloc(self.ctx, order.len() as i32).ctx(what)?;
        for f in filters {
            list = list.add(f).ctx(what)?;
        }
        let marked = is_tile_mark(&tile.get_child(0).ctx(what)?)?;
        let point = point.band_split(k as i32 - 1).ctx(what)?.child(0).ctx(what)?;
        // The sequence, then the outer point band, the mark, the tile band.
        let mut up = point.insert_sequence(list).ctx(what)?.parent().ctx(what)?.parent().ctx(what)?;
        if marked {
            up = up.parent().ctx(what)?;
        }
        Ok((up, true))
    }
}

/// The statements below `node` in the order they run at its innermost
/// level: as its filters first name them, then those no filter names.
fn statement_order(node: &ScheduleNode) -> Result<Vec<String>, CodegenError> {
    fn names(set: &UnionSet, out: &mut Vec<String>) -> Result<(), CodegenError> {
        let what = || "reading statements".to_string();
        let list = set.get_set_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            let name = list.get_at(i).ctx(what)?.get_tuple_name().ctx(what)?.to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        Ok(())
    }
    fn visit(node: &ScheduleNode, out: &mut Vec<String>) -> Result<(), CodegenError> {
        let what = || "reading statements".to_string();
        if node.get_type().ctx(what)? == ScheduleNodeType::Filter {
            names(&node.filter_get_filter().ctx(what)?, out)?;
        }
        for i in 0..node.n_children().ctx(what)? {
            visit(&node.get_child(i).ctx(what)?, out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    visit(node, &mut out)?;
    names(&node.get_domain().ctx(|| "reading statements".to_string())?, &mut out)?;
    Ok(out)
}
