//! Band bookkeeping: a row joins the current band with what it carries and
//! whether it is coincident; a band closes with the dependences it carried
//! dropped and the others cut down to the instance pairs it left equal.
//! The isl relations this needs are parsed and intersected once per band
//! (`group::BandMemo`).

use isl_rs::{Set, UnionMap};

use super::group::{DepGroup, Group, Result};
use super::{tree, Row};
use model::isl::IslResultExt;

impl Group<'_> {
    /// The part of each remaining dependence not yet carried by the rows of the
    /// current band: what a coincident row must give zero distance.
    pub(super) fn live(&self, dep: &DepGroup) -> Result<String> {
        if self.band.is_empty() {
            return Ok(dep.relation.clone());
        }
        if let Some(live) = self.memo.live.borrow().get(&dep.relation) {
            return Ok(live.clone());
        }
        let live = self.live_uncached(dep)?;
        self.memo.live.borrow_mut().insert(dep.relation.clone(), live.clone());
        Ok(live)
    }

    fn live_uncached(&self, dep: &DepGroup) -> Result<String> {
        let what = || "restricting a dependence to the current band".to_string();
        let eq = self.band_eq()?;
        let rel = self.parse(&dep.relation)?.intersect(eq).ctx(what)?;
        Ok(rel.coalesce().ctx(what)?.to_str().ctx(what)?.to_string())
    }

    /// Forgets what depends on the current band's rows.
    pub(super) fn band_changed(&self) {
        self.memo.live.borrow_mut().clear();
        *self.memo.eq.borrow_mut() = None;
    }

    /// [`Self::equal_on`] the current band, computed once per band.
    pub(super) fn band_eq(&self) -> Result<UnionMap> {
        let what = || "instances equal on a band".to_string();
        if let Some(eq) = self.memo.eq.borrow().as_ref() {
            return eq.copy().ctx(what).map_err(Into::into);
        }
        let eq = self.equal_on(&self.band)?;
        *self.memo.eq.borrow_mut() = Some(eq.copy().ctx(what)?);
        Ok(eq)
    }

    /// The relation `text`, parsed once.
    pub(super) fn parse(&self, text: &str) -> Result<UnionMap> {
        let what = || format!("reading {text}");
        if let Some(m) = self.memo.parsed.borrow().get(text) {
            return m.copy().ctx(what).map_err(Into::into);
        }
        let m = UnionMap::read_from_str(self.ctx, text).ctx(what)?;
        self.memo.parsed.borrow_mut().insert(text.to_string(), m.copy().ctx(what)?);
        Ok(m)
    }

    /// `{ x -> y : rows(x) = rows(y) }` over the group's statements.
    fn equal_on(&self, rows: &[Row]) -> Result<UnionMap> {
        let what = || "instances equal on a band".to_string();
        let map = UnionMap::read_from_str(self.ctx, &self.rows_map(rows)).ctx(what)?;
        map.copy().ctx(what)?.apply_range(map.reverse().ctx(what)?).ctx(what).map_err(Into::into)
    }

    /// `[params] -> { S1[i, j] -> [row0, row1, ...]; ... }`
    fn rows_map(&self, rows: &[Row]) -> String {
        let parts: Vec<String> = self
            .members
            .iter()
            .map(|&s| {
                let st = &self.scop.statements[s];
                let vals: Vec<String> = rows.iter().map(|r| tree::row_expr(self.scop, r, s)).collect();
                format!("{}[{}] -> [{}]", st.name, st.iterators.join(", "), vals.join(", "))
            })
            .collect();
        format!("[{}] -> {{ {} }}", self.scop.params.join(", "), parts.join("; "))
    }

    /// `row` with what it carries and whether it is coincident (zero distance
    /// on every dependence the band has not carried), against the current band.
    pub(super) fn classify(&self, mut row: Row) -> Result<Row> {
        let what = || "classifying a schedule row".to_string();
        let before = self.band.clone();
        let mut coincident = true;
        let deps = self.deps.clone();
        let this = UnionMap::read_from_str(self.ctx, &self.rows_map(std::slice::from_ref(&row))).ctx(what)?;
        let same = this.copy().ctx(what)?.apply_range(this.reverse().ctx(what)?).ctx(what)?;
        let params = Set::read_from_str(self.ctx, &self.scop.context).ctx(what)?;
        for dep in &deps {
            // Coincident: zero distance on every dependence the band must
            // respect (so the flag holds for tile loops too).
            let all = self.parse(&dep.relation)?.intersect_params(params.copy().ctx(what)?).ctx(what)?;
            if !all.copy().ctx(what)?.is_subset(&same).ctx(what)? {
                coincident = false;
            }
            // Carried: every pair the earlier rows of the band left is separated.
            let live = if before.is_empty() {
                all
            } else {
                self.parse(&self.live(dep)?)?.intersect_params(params.copy().ctx(what)?).ctx(what)?
            };
            let zero = live.copy().ctx(what)?.intersect(same.copy().ctx(what)?).ctx(what)?;
            if !live.is_empty().ctx(what)? && zero.is_empty().ctx(what)? {
                row.carries.push(dep.label());
            }
        }
        row.coincident = coincident;
        Ok(row)
    }

    /// Adds a classified row to the current band.
    pub(super) fn add_to_band(&mut self, row: Row) {
        for (k, (_, c, _, _)) in row.affine.iter().enumerate() {
            self.h[k].push(c.clone());
        }
        self.band.push(row);
        self.band_changed();
    }

    /// The dependences without the instance pairs the band separates (`eq`:
    /// instances it leaves equal); those it carries entirely are dropped.
    pub(super) fn keep_uncarried(&mut self, eq: &UnionMap) -> Result<()> {
        let what = || "closing a band".to_string();
        let mut kept = Vec::new();
        let params = Set::read_from_str(self.ctx, &self.scop.context).ctx(what)?;
        for dep in std::mem::take(&mut self.deps) {
            let rel = self.parse(&dep.relation)?.intersect(eq.copy().ctx(what)?).ctx(what)?;
            let rel = rel.intersect_params(params.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
            if !rel.is_empty().ctx(what)? {
                kept.push(DepGroup { relation: rel.to_str().ctx(what)?.to_string(), ..dep });
            }
        }
        self.deps = kept;
        Ok(())
    }

    /// The current band joins the finished ones; the next band starts empty.
    pub(super) fn end_band(&mut self) {
        self.done.append(&mut self.band);
        self.band_changed();
        self.band_index += 1;
    }
}
