//! The state of one fusion group while its rows are found, and what the
//! driver's other files share: dependence groups, the variable layout of a
//! row's ILP, and the [`RowStrategy`] through which the core rule or the
//! unified scheduler's strategy chooses rows.

use std::cell::RefCell;
use std::collections::HashMap;

use isl_rs::{Context, Set, UnionMap};

use super::farkas::Farkas;
use super::ilp::Constraint;
use super::solver::Solver;
use super::{Row, RowKind, ScheduleError};
use crate::linalg::rank;
use model::scop::Scop;

pub(super) type Result<T> = std::result::Result<T, ScheduleError>;

/// All validity dependences from one statement to another, as one relation.
#[derive(Clone)]
pub(super) struct DepGroup {
    pub src: usize,
    pub dst: usize,
    /// The part not yet carried by a finished band.
    pub relation: String,
}

impl DepGroup {
    pub(super) fn label(&self) -> String {
        format!("S{}->S{}", self.src + 1, self.dst + 1)
    }
}

/// The variable layout of one row's ILP.
pub(super) struct Layout {
    pub u_minus: Vec<usize>,
    pub u_plus: Vec<usize>,
    pub w: usize,
    /// Per member statement (in `Group::members` order).
    pub d: Vec<Vec<usize>>,
    pub e: Vec<usize>,
    pub c_minus: Vec<Vec<usize>>,
    pub c_plus: Vec<Vec<usize>>,
}

/// A linear expression over ILP variables.
pub(super) type Lin = Vec<(usize, i64)>;

/// How the rows of a band are chosen: by the core rule ([`Core`]) or
/// by the unified scheduler's strategy (`unified::Unified`), which keeps
/// state of its own and is told what happens to the band. The driver owns
/// the group.
pub(super) trait RowStrategy {
    /// The next row of the current band (`need`: members that still need a
    /// linearly independent row).
    fn next_row(&mut self, group: &mut Group, solver: &mut Solver, need: &[usize]) -> Result<Next>;

    /// Further constraints on the coefficients of a band row's ILP (the core
    /// ILP (3) and the unified ILPs, not Feautrier's): consecutivity.
    fn row_constraints(&self, _group: &Group, _l: &Layout) -> Vec<Constraint> {
        Vec::new()
    }

    /// Whether a coincident row must give `dep` zero distance.
    fn enforce_coincidence(&self, _group: &Group, _dep: &DepGroup) -> bool {
        true
    }

    /// `row`, classified (carried groups, coincidence), is about to join the
    /// band; `group` does not hold it yet.
    fn row_pushed(&mut self, _group: &Group, _row: &Row) {}

    /// The band closes; `eq` relates the instances it leaves equal.
    fn band_closing(&mut self, _group: &Group, _eq: &UnionMap) -> Result<()> {
        Ok(())
    }

    /// A Feautrier row this strategy asked for ([`Next::Feautrier`])
    /// carries nothing: whether to drop it.
    fn drop_useless_feautrier(&mut self) -> bool {
        false
    }

    /// Whether a Feautrier row first tries to carry only the dependences of
    /// a statement on itself (isl's `schedule_carry_self_first`), leaving
    /// the others parallel where it can.
    fn carry_self_first(&self) -> bool {
        false
    }

    /// Whether a closing band's time row gives way to the mirror of its
    /// skewed row (diamond tiles, `diamond.rs`).
    fn diamond(&self) -> bool {
        false
    }
}

/// The core scheduler's rule: a coincident row (zero distance on every
/// dependence the band must respect), else the relaxed one, on the core ILP
/// (3) with one proximity bound.
pub(super) struct Core;

impl RowStrategy for Core {
    fn next_row(&mut self, group: &mut Group, solver: &mut Solver, need: &[usize]) -> Result<Next> {
        if let Some(row) = group.pluto_row(solver, self, need, true)? {
            return Ok(Next::Row(row));
        }
        Ok(group.pluto_row(solver, self, need, false)?.map_or(Next::None, Next::Row))
    }
}

/// What the next step of a group is.
pub(super) enum Next {
    Row(Row),
    /// A Feautrier row (GPU without a coincident solution, or hlim exceeded).
    Feautrier,
    /// A [`RowKind::Split`] row putting each member in its phase
    /// ([`Group::phases`]).
    Split(Vec<usize>),
    /// No band row fits.
    None,
}

/// One fusion group while its rows are found: its member statements (with
/// their iterator counts `dims`), the dependences not yet carried by a
/// finished band, the rows so far (`h` per member, the current band, the
/// finished bands) and isl work kept between ILPs.
pub(super) struct Group<'a> {
    pub ctx: &'a Context,
    pub scop: &'a Scop,
    pub index: usize,
    pub members: Vec<usize>,
    pub dims: Vec<usize>,
    pub np: usize,
    pub deps: Vec<DepGroup>,
    /// Iterator-coefficient rows found so far, per member.
    pub h: Vec<Vec<Vec<i64>>>,
    pub band: Vec<Row>,
    pub band_index: usize,
    pub done: Vec<Row>,
    pub farkas_cache: HashMap<String, Option<Farkas>>,
    /// isl relations of the current band, kept between ILPs.
    pub memo: BandMemo,
    /// Per member, the largest iterator coefficient its rows may have, per
    /// dimension (`None`: unbounded); see [`coalescing_bounds`].
    pub max_coefficient: Vec<Vec<Option<i64>>>,
}

/// isl's treatment of loop coalescing: where the other dimensions of a
/// statement's domain have constant sizes, a coefficient of half their
/// smallest size or more makes the row walk whole loops in one (`3·i + j`
/// for `j < 3`). Such rows are legal, and a Pluto band takes them while
/// they are (a nest of depth d over loops of 3 iterations became a band of
/// rows `i0`, `2·i0 + i1`, `6·i0 + 2·i1 + i2`, ..., with coefficients
/// growing as 3^d and the ILPs with them: depth 9 did not schedule in
/// 300 s), but they are useless for locality and parallelism. Bounding each
/// coefficient by `ceil(min size of the others / 2)` ends the band instead.
/// Sizes are measured on the domain's simple hull; dimensions of one value
/// (fixed by an equality) and unbounded ones (parametric) give no bound.
pub(super) fn coalescing_bounds(ctx: &Context, domain: &str, dims: usize) -> Vec<Option<i64>> {
    let size = |k: usize| -> Option<i64> {
        let set = Set::read_from_str(ctx, domain).ok()?.simple_hull().ok()?;
        let set = Set::from_basic_set(set).ok()?;
        let (lo, hi) = (set.copy().ok()?.dim_min_val(k as i32).ok()?, set.dim_max_val(k as i32).ok()?);
        if !lo.is_int().ok()? || !hi.is_int().ok()? {
            return None;
        }
        let n = hi.get_num_si().ok()? - lo.get_num_si().ok()? + 1;
        (n > 1).then_some(n)
    };
    let sizes: Vec<Option<i64>> = (0..dims).map(size).collect();
    (0..dims)
        .map(|j| {
            let min = (0..dims).filter(|&i| i != j).filter_map(|i| sizes[i]).min()?;
            Some((min + 1) / 2)
        })
        .collect()
}

/// isl work kept between the ILPs of one group, behind `RefCell`s because
/// the queries that fill it (`live`, `parse` in `band`) only read the
/// group.
#[derive(Default)]
pub(super) struct BandMemo {
    /// `live` of each relation under the current band (cleared when the
    /// band changes): the locality ILP (4) asks again on every iterative
    /// removal.
    pub live: RefCell<HashMap<String, String>>,
    /// `equal_on(band)` for the current band (cleared with `live`).
    pub eq: RefCell<Option<UnionMap>>,
    /// Relation texts parsed once: isl's parser is slow, and each row's
    /// classification and each band's end read every dependence again.
    pub parsed: RefCell<HashMap<String, UnionMap>>,
}

impl<'a> Group<'a> {
    pub(super) fn new(
        ctx: &'a Context,
        scop: &'a Scop,
        index: usize,
        members: Vec<usize>,
        deps: Vec<DepGroup>,
    ) -> Self {
        let dims: Vec<usize> = members.iter().map(|&s| scop.statements[s].iterators.len()).collect();
        let n = members.len();
        let max_coefficient = members
            .iter()
            .zip(&dims)
            .map(|(&s, &d)| coalescing_bounds(ctx, &scop.statements[s].domain, d))
            .collect();
        Group {
            ctx,
            scop,
            index,
            members,
            dims,
            np: scop.params.len(),
            deps,
            h: vec![Vec::new(); n],
            band: Vec::new(),
            band_index: 0,
            done: Vec::new(),
            farkas_cache: HashMap::new(),
            memo: BandMemo::default(),
            max_coefficient,
        }
    }

    pub(super) fn pos(&self, stmt: usize) -> usize {
        self.members.iter().position(|&m| m == stmt).unwrap()
    }

    /// Members that still need a linearly independent row.
    pub(super) fn need(&self) -> Vec<usize> {
        (0..self.members.len()).filter(|&k| rank(&self.h[k], self.dims[k]) < self.dims[k]).collect()
    }

    /// The phase of each member when the remaining dependences fall into
    /// several, else `None`. The strongly connected components of the
    /// dependence graph each start at the length of the longest chain of
    /// components leading to it (components no path joins share a phase);
    /// then each phase joins the one before it when the two together still
    /// have a coincident row, so that one kernel can run both.
    pub(super) fn phases(&mut self, solver: &mut Solver) -> Result<Option<Vec<usize>>> {
        let n = self.members.len();
        let mut reach = vec![vec![false; n]; n];
        for d in &self.deps {
            reach[self.pos(d.src)][self.pos(d.dst)] = true;
        }
        // Transitive closure (Warshall).
        for k in 0..n {
            let via = reach[k].clone();
            for row in reach.iter_mut().filter(|row| row[k]) {
                row.iter_mut().zip(&via).for_each(|(r, &v)| *r |= v);
            }
        }
        let same = |i: usize, j: usize| i == j || (reach[i][j] && reach[j][i]);
        // Components in topological order (a member that no unplaced member
        // of another component reaches) settle their chain length.
        let mut chain = vec![usize::MAX; n];
        while let Some(i) = (0..n).find(|&i| {
            chain[i] == usize::MAX && (0..n).all(|j| chain[j] != usize::MAX || same(i, j) || !reach[j][i])
        }) {
            let at = (0..n).filter(|&j| !same(i, j) && reach[j][i]).map(|j| chain[j] + 1).max().unwrap_or(0);
            for j in (0..n).filter(|&j| same(i, j)) {
                chain[j] = at;
            }
        }
        let last = chain.iter().copied().max().unwrap_or(0);
        if last == 0 {
            return Ok(None);
        }
        let mut phase = chain.clone();
        let mut current = 0;
        for c in 1..=last {
            let joined: Vec<usize> = (0..n).filter(|&k| phase[k] == current || chain[k] == c).collect();
            if self.part(&joined).has_coincident_row(solver)? {
                (0..n).filter(|&k| chain[k] == c).for_each(|k| phase[k] = current);
            } else {
                current += 1;
                (0..n).filter(|&k| chain[k] == c).for_each(|k| phase[k] = current);
            }
        }
        Ok((current > 0).then_some(phase))
    }

    /// The group of the members at positions `keep`, with their rows so far
    /// and the remaining dependences among them.
    fn part(&self, keep: &[usize]) -> Group<'a> {
        let members: Vec<usize> = keep.iter().map(|&k| self.members[k]).collect();
        let deps = self
            .deps
            .iter()
            .filter(|d| members.contains(&d.src) && members.contains(&d.dst))
            .cloned()
            .collect();
        let mut part = Group::new(self.ctx, self.scop, self.index, members, deps);
        part.h = keep.iter().map(|&k| self.h[k].clone()).collect();
        part
    }

    /// Whether a coincident row exists, non-trivial for the members that
    /// need one at every remaining step.
    fn has_coincident_row(&mut self, solver: &mut Solver) -> Result<bool> {
        let tight = self.tight(&self.need());
        Ok(self.pluto_row(solver, &Core, &tight, true)?.is_some())
    }

    /// The [`RowKind::Split`] row of `phases`: each member's constant is
    /// its phase.
    pub(super) fn split_row(&self, phases: &[usize]) -> Row {
        let affine = (self.members.iter().enumerate())
            .map(|(k, &s)| (s, vec![0; self.dims[k]], vec![0; self.np], phases[k] as i64))
            .collect();
        Row {
            group: self.index,
            band: self.band_index,
            kind: RowKind::Split,
            coincident: false,
            affine,
            carries: Vec::new(),
            spatial: Vec::new(),
        }
    }

    /// Rows the group still needs at least: the most any member still needs.
    pub(super) fn rows_left(&self) -> usize {
        (0..self.members.len()).map(|k| self.dims[k] - rank(&self.h[k], self.dims[k])).max().unwrap_or(0)
    }

    /// Dimension slack: the members of `need` that need a row at every
    /// remaining step, which alone must get a non-trivial one now.
    pub(super) fn tight(&self, need: &[usize]) -> Vec<usize> {
        let left = self.rows_left();
        need.iter().copied().filter(|&k| self.dims[k] - rank(&self.h[k], self.dims[k]) == left).collect()
    }
}
