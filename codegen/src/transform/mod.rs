//! The schedule tree made ready for code generation, in one walk: permutable
//! bands tiled, parallel marks, wavefronts, the point loops reordered,
//! register tiles, fission and simd marks, each decided by the options or
//! by a plan (a script's code steps) and recorded band by band. `order`
//! scores and permutes point loops; `lifted` tiles with tile iterators of
//! their own and skews tile loops into wavefronts; `micro` makes the point
//! band a micro-kernel's register tile; `fission` splits the innermost
//! point loop per statement.

mod fission;
mod lifted;
mod micro;
mod order;

use super::isolate::{full_strips, full_tiles, isolate_full_tiles};
use super::marks::{is_tile_mark, point_band, PARALLEL_MARK, SIMD_MARK, UNROLL_MARK};
use super::pack::PACK_MARK;
use super::CodegenError;
use super::CodegenOptions;
use lifted::whole_statements;
use order::permute;
use std::cell::{Cell, RefCell};

use isl_rs::{
    ASTLoopType, Context, DimType, Id, MultiVal, Schedule, ScheduleNode, ScheduleNodeType, UnionMap,
    UnionSet, Val,
};
use model::deps::Dependences;
use model::isl::{IslError, IslResultExt};
use model::legality::{self, Violation};
use model::scop::Scop;
use space::clay::{Action, Planned};
use vocab::knobs::Simd;
use vocab::knobs::Wavefront;

/// Tiling and parallel marks, in one walk over the tree; also whether some
/// band got isolated full tiles, the map from the SCoP's statement
/// instances to the tree's domain when some band lifted it (`Walk::lift`),
/// and what the walk did at each band, as code steps (`Walk::trace`).
pub(super) fn transform(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    opts: &CodegenOptions,
    checks: Option<(&str, &Dependences)>,
) -> Result<Transformed, CodegenError> {
    let root = tree.get_root().ctx(|| "schedule root".into())?;
    let walk = Walk {
        ctx,
        scop,
        opts,
        checks,
        isolated: Cell::new(false),
        lift: RefCell::new(None),
        used: RefCell::new(vec![false; opts.plan.as_ref().map_or(0, Vec::len)]),
        trace: RefCell::new(Vec::new()),
    };
    let root = walk.visit(root, false, 0, 0)?;
    if let Some(plan) = &opts.plan {
        let unused: Vec<String> = plan
            .iter()
            .zip(walk.used.borrow().iter())
            .filter(|(_, &u)| !u)
            .map(|(p, _)| p.to_string())
            .collect();
        if !unused.is_empty() {
            return Err(CodegenError::Unsupported(format!(
                "not carried out: {}; tiles, point orders, wavefronts and unroll-and-jam name the first loop of a band (the loops that stay permutable together), parallelize a loop of a band, vectorize its innermost loop",
                unused.join("; ")
            )));
        }
    }
    Ok(Transformed {
        tree: root.get_schedule().ctx(|| "schedule".into())?,
        isolated: walk.isolated.get(),
        lift: walk.lift.into_inner(),
        trace: walk.trace.into_inner(),
    })
}

pub(super) struct Transformed {
    pub tree: Schedule,
    pub isolated: bool,
    pub lift: Option<UnionMap>,
    pub trace: Vec<Planned>,
}

struct Walk<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    opts: &'a CodegenOptions,
    /// The parameter context and dependences that tiled bands must respect
    /// (`None` only on the test-only unchecked path).
    checks: Option<(&'a str, &'a Dependences)>,
    /// Set when a point band gets an isolate option.
    isolated: Cell<bool>,
    /// Set once some band is tiled with tile iterators of its own
    /// (`tile_lifted`): each statement instance of the SCoP to its instance
    /// in the tree's current, lifted domain (`S1[t, i, j]` to
    /// `S1[t, i, j, T0, T1, T2]`). Dependences are on the SCoP's instances,
    /// so every check first maps the tree's relations back through it.
    lift: RefCell<Option<UnionMap>>,
    /// Which actions of `opts.plan` some band has taken.
    used: RefCell<Vec<bool>>,
    /// What was done at each band, in walk order.
    trace: RefCell<Vec<Planned>>,
}

/// One of `model::legality`'s tests of a band's schedule.
type LegalityTest =
    fn(&Context, &str, &UnionMap, &UnionMap, &Dependences) -> Result<Vec<Violation>, IslError>;

impl Walk<'_> {
    /// Rewrites the subtree at `node` and returns a node at the same position.
    /// `depth` counts the loops above `node` in the tree as given, without the
    /// tile loops this walk adds: where plans and traces name a loop.
    /// `tiling` counts the bands from `node` down that a tiling above made
    /// (the point band; with two levels also the inner tile band), which
    /// are not tiled again; marks in between do not count.
    fn visit(
        &self,
        mut node: ScheduleNode,
        mut in_parallel: bool,
        tiling: usize,
        depth: usize,
    ) -> Result<ScheduleNode, CodegenError> {
        let ctx = self.ctx;
        let what = || "transforming the schedule tree".to_string();
        // Levels we descend below the starting position; climbed back at the end.
        let mut down = 0;
        let mut tiled_here = false;
        // The bands tiling made below `node` that are not tiled again.
        let mut levels = 0;
        let mut child_depth = depth;
        if node.get_type().ctx(what)? == ScheduleNodeType::Band && !unrolled(&node)? {
            let n = node.band_n_member().ctx(what)?;
            let m = n as usize;
            child_depth = depth + m;
            let statements = self.statements(&node)?;
            // A band of the given tree (not the point band of one tiled here).
            let given = tiling == 0;
            if let (Some(sizes), outer) = self.tile_choice(&node, given, &statements, depth)? {
                let tiled = self.tile_band(node, &sizes, outer.as_deref(), &statements, depth)?;
                (node, tiled_here, levels) = (tiled.node, true, tiled.levels);
                down += tiled.down;
            }
            if !tiled_here
                && given
                && self.vectorise(&[(node.copy().ctx(what)?, m - 1)], depth + m - 1, &statements)?
            {
                let at = node.get_schedule_depth().ctx(what)? + n - 1;
                node = self.insert_simd_mark(node, at)?;
                down += 1;
            }
            if let Some(j) = self.parallel_member(&node, given, in_parallel, &statements, depth)? {
                self.record(depth + j, &statements, Action::Parallelize);
                if j > 0 {
                    node = node.band_split(j as i32).ctx(what)?.child(0).ctx(what)?;
                    down += 1;
                }
                self.check_parallel(&node)?;
                let at = node.get_schedule_depth().ctx(what)?;
                let id = Id::read_from_str(ctx, &format!("{PARALLEL_MARK}_{at}")).ctx(what)?;
                node = node.insert_mark(id).ctx(what)?.child(0).ctx(what)?;
                down += 1;
                in_parallel = true;
            }
            if tiled_here || tiling >= 2 {
                // The point band below counts the band's loops.
                child_depth = depth;
            }
        }
        let below = match node.get_type().ctx(what)? {
            _ if tiled_here => levels,
            // Fission's sequence sits between point bands.
            ScheduleNodeType::Mark | ScheduleNodeType::Sequence | ScheduleNodeType::Filter => tiling,
            _ => tiling.saturating_sub(1),
        };
        let children = node.n_children().ctx(what)?;
        for i in 0..children {
            node = node.child(i).ctx(what)?;
            node = self.visit(node, in_parallel, below, child_depth)?;
            node = node.parent().ctx(what)?;
        }
        for _ in 0..down {
            node = node.parent().ctx(what)?;
        }
        Ok(node)
    }

    /// The tile sizes of `band` (at schedule depth `depth`, running
    /// `statements`), `None` where it is not tiled, and the factors of an
    /// outer level of tiles over them, `None` for one level. Only a band of
    /// the given tree (`given`) is tiled.
    #[allow(clippy::type_complexity)]
    fn tile_choice(
        &self,
        band: &ScheduleNode,
        given: bool,
        statements: &[String],
        depth: usize,
    ) -> Result<(Option<Vec<i64>>, Option<Vec<i64>>), CodegenError> {
        let opts = self.opts;
        let what = || "transforming the schedule tree".to_string();
        let n = band.band_n_member().ctx(what)?;
        let m = n as usize;
        let take_tile = || {
            self.take(statements, depth..depth + 1, |a, _| match a {
                Action::Tile { sizes } => Some((0..m).map(|j| tile_size(sizes, j)).collect::<Vec<_>>()),
                _ => None,
            })
        };
        let tile = match (&opts.plan, given) {
            (_, false) => None,
            (Some(_), true) => take_tile(),
            (None, true) => match &opts.tile_sizes {
                Some(sizes) if n >= 2 && !sizes.is_empty() && band.band_get_permutable().ctx(what)? => {
                    Some((0..m).map(|j| tile_size(sizes, j)).collect())
                }
                _ => None,
            },
        };
        // Two-level tiling: the plan's second tile step on the band is
        // the inner level (the first, a multiple of it, the outer); the
        // `l2_tile` knob multiplies the sizes into the outer level.
        Ok(match (tile, &opts.plan) {
            (Some(first), Some(_)) => match take_tile() {
                Some(inner) => {
                    if first.iter().zip(&inner).any(|(o, i)| o % i != 0 || o / i < 1) {
                        return Err(CodegenError::Unsupported(format!(
                            "tile {first:?} then {inner:?}: the outer tile sizes must be multiples of the inner ones"
                        )));
                    }
                    let factors = first.iter().zip(&inner).map(|(o, i)| o / i).collect::<Vec<_>>();
                    (Some(inner), Some(factors))
                }
                None => (Some(first), None),
            },
            // Not under a wavefront (its tile loops are skewed).
            (Some(sizes), None)
                if opts.code.l2_tile > 1
                    && (opts.wavefront == Wavefront::None
                        || band.band_member_get_coincident(0).ctx(what)?) =>
            {
                (Some(sizes), Some(vec![opts.code.l2_tile as i64; m]))
            }
            (tile, _) => (tile, None),
        })
    }

    /// `band` tiled by `sizes` (and by `outer` factors of them as a second
    /// level): its point loops reordered, its tile loops skewed into a
    /// wavefront, register tiles, full tiles isolated and the innermost
    /// point loop vectorised, as the options or the plan say.
    fn tile_band(
        &self,
        mut node: ScheduleNode,
        sizes: &[i64],
        outer: Option<&[i64]>,
        statements: &[String],
        depth: usize,
    ) -> Result<Tiled, CodegenError> {
        let (ctx, opts) = (self.ctx, self.opts);
        let what = || "transforming the schedule tree".to_string();
        let n = node.band_n_member().ctx(what)?;
        let m = n as usize;
        let start = depth..depth + 1;
        if let Some(factors) = outer {
            let outer_sizes = sizes.iter().zip(factors).map(|(s, f)| (s * f) as u32).collect();
            self.record(depth, statements, Action::Tile { sizes: outer_sizes });
        }
        self.record(depth, statements, Action::Tile { sizes: sizes.iter().map(|&s| s as u32).collect() });
        self.check_permutable(&node)?;
        let order = self.point_order_of(&node, statements, depth)?;
        let point_order: Vec<usize> = order.clone().unwrap_or_else(|| (0..m).collect());
        let wave = match &opts.plan {
            Some(_) => self.take(statements, start.clone(), |a, _| match a {
                Action::Wavefront { kind } => Some(*kind),
                _ => None,
            }),
            None => (opts.wavefront != Wavefront::None && !node.band_member_get_coincident(0).ctx(what)?)
                .then_some(opts.wavefront),
        };
        if wave.is_some() && whole_statements(&node)? && members_are_loops(&node)? {
            // Tile loops as iterators of their own (Pluto), so that the
            // wavefront is a sum of loop iterators, not of integer divisions.
            node = self.tile_lifted(node, sizes, &point_order)?;
        } else {
            let mv = sizes_of(ctx, &node, sizes)?;
            node = node.band_tile(mv).ctx(what)?;
            if let Some(order) = &order {
                let point = node.child(0).ctx(what)?;
                node = permute(point, order)?.parent().ctx(what)?;
            }
            if let Some(tiles) =
                self.tile_order_of(&node, statements, depth, outer.is_none() && wave.is_none())?
            {
                node = permute(node, &tiles)?;
            }
        }
        if let Some(kind) = wave {
            self.record(depth, statements, Action::Wavefront { kind });
            node = self.wavefront(node, kind)?;
        }
        // The outer level tiles the tile loops (before any isolation
        // below, which isl's tiling would refuse), and is the band the
        // parallel loop is chosen in; the rest works on the inner one.
        let two_levels = match outer {
            Some(_) if wave.is_some() || is_tile_mark(&node.get_child(0).ctx(what)?)? => {
                return Err(CodegenError::Unsupported(
                    "two-level tiling of a wavefront's skewed tile loops".into(),
                ))
            }
            Some(factors) => {
                node = outer_tiles(ctx, node, factors, sizes)?;
                true
            }
            None => false,
        };
        if !two_levels && wave.is_none() {
            if let Some(micro) = self.micro_choice(&node, statements, depth)? {
                let mut node = self.micro_tile(node, micro, statements, depth)?;
                // Packing's copies go above the strips.
                if opts.code.pack {
                    let id = Id::read_from_str(ctx, PACK_MARK).ctx(what)?;
                    node = node.child(0).ctx(what)?.insert_mark(id).ctx(what)?.parent().ctx(what)?;
                }
                // The strips' band and `r`'s.
                return Ok(Tiled { node, levels: 2, down: 0 });
            }
        }
        let point_sizes: Vec<i64> = point_order.iter().map(|&j| sizes[j]).collect();
        self.point_steps(node, &point_sizes, two_levels, statements, depth)
    }

    /// The steps on a tiled band's point loops (of `point_sizes`, after
    /// their reordering): unroll-and-jam, full tiles isolated, fission, the
    /// innermost loop vectorised, packing's mark; `node` is the tile band
    /// (the outer one of `two_levels`).
    fn point_steps(
        &self,
        mut node: ScheduleNode,
        point_sizes: &[i64],
        two_levels: bool,
        statements: &[String],
        depth: usize,
    ) -> Result<Tiled, CodegenError> {
        let (ctx, opts) = (self.ctx, self.opts);
        let what = || "transforming the schedule tree".to_string();
        let n = point_sizes.len() as i32;
        let m = point_sizes.len();
        let start = depth..depth + 1;
        // Full tiles are those of the point band before register tiling
        // (whose strips are then whole), and isl tiles no band with
        // options below it.
        let isolate = full_tiles(&node, point_sizes)?;
        let factor = match &opts.plan {
            Some(_) => self.take(statements, start, |a, _| match a {
                Action::UnrollJam { factor } => Some(*factor),
                _ => None,
            }),
            None => Some(opts.code.unroll_jam),
        };
        let factor = factor.unwrap_or(1).max(1);
        if factor > 1 && m >= 2 {
            self.record(depth, statements, Action::UnrollJam { factor });
        }
        node = self.register_tile(node, factor)?;
        let isolate = match factor > 1 {
            true => full_strips(&node, factor as i64)?.or(isolate),
            false => isolate,
        };
        if let Some(isolate) = isolate {
            node = isolate_full_tiles(node, isolate)?;
            self.isolated.set(true);
        }
        let fission = match &opts.plan {
            Some(_) => self.take(statements, depth..depth + 1, |a, _| (*a == Action::Fission).then_some(())),
            None => opts.code.fission.then_some(()),
        };
        let mut fissioned = false;
        if fission.is_some() {
            (node, fissioned) = self.fission(node, opts.plan.is_some())?;
            if fissioned {
                self.record(depth, statements, Action::Fission);
            }
        }
        // The innermost point loop: depth of the tile band, its n tile
        // loops, then the point band's last member (after fission, the
        // one member of each statement's band).
        let point = point_band(&node)?;
        let at = node.get_schedule_depth().ctx(what)? + 2 * n - 1;
        let innermost = match fissioned {
            false => vec![(point, m - 1)],
            true => {
                let sequence = point.child(0).ctx(what)?;
                let mut bands = Vec::new();
                for i in 0..sequence.n_children().ctx(what)? {
                    bands.push((sequence.get_child(i).ctx(what)?.child(0).ctx(what)?, 0));
                }
                bands
            }
        };
        let simd = self.vectorise(&innermost, depth + m - 1, statements)?;
        if simd {
            node = self.insert_simd_mark(node, at)?;
        }
        // Packing's copies go above the point band, once the tree is checked.
        if opts.code.pack && !two_levels && !is_tile_mark(&node.get_child(0).ctx(what)?)? {
            let id = Id::read_from_str(ctx, PACK_MARK).ctx(what)?;
            node = node.child(0).ctx(what)?.insert_mark(id).ctx(what)?.parent().ctx(what)?;
        }
        let mut down = 0;
        match (two_levels, simd) {
            // Back up to the outer tile band, past the mark.
            (true, true) => node = node.parent().ctx(what)?.parent().ctx(what)?,
            (true, false) => node = node.parent().ctx(what)?,
            (false, true) => down += 1,
            (false, false) => {}
        }
        let levels = 1 + two_levels as usize + fissioned as usize;
        Ok(Tiled { node, levels, down })
    }

    /// The member of `band` whose loop runs in parallel, if any: the
    /// plan's, or the first coincident one outside a parallel loop.
    fn parallel_member(
        &self,
        band: &ScheduleNode,
        given: bool,
        in_parallel: bool,
        statements: &[String],
        depth: usize,
    ) -> Result<Option<usize>, CodegenError> {
        let what = || "transforming the schedule tree".to_string();
        let m = band.band_n_member().ctx(what)? as usize;
        Ok(match &self.opts.plan {
            Some(_) if given => {
                let j = self.take(statements, depth..depth + m, |a, at| {
                    (*a == Action::Parallelize).then_some(at - depth)
                });
                if j.is_some() && in_parallel {
                    return Err(CodegenError::Unsupported(format!(
                        "parallelize at the loop of depth {} around {}: inside a parallel loop",
                        depth + j.unwrap_or(0),
                        statements.join(" ")
                    )));
                }
                j
            }
            Some(_) => None,
            None if self.opts.openmp && !in_parallel => {
                (0..m).find(|&j| band.band_member_get_coincident(j as i32).unwrap_or(false))
            }
            None => None,
        })
    }

    /// The statements `band` runs, in SCoP order.
    fn statements(&self, band: &ScheduleNode) -> Result<Vec<String>, CodegenError> {
        let what = || "reading a band's statements".to_string();
        let list = band.get_domain().ctx(what)?.get_set_list().ctx(what)?;
        let mut names = Vec::new();
        for i in 0..list.size().ctx(what)? {
            names.push(list.get_at(i).ctx(what)?.get_tuple_name().ctx(what)?.to_string());
        }
        Ok(self.scop.statements.iter().filter(|s| names.contains(&s.name)).map(|s| s.name.clone()).collect())
    }

    /// The first action of the plan not yet taken, at a loop of `depths`
    /// around exactly `statements`, that `pick` accepts (given the action
    /// and its loop's depth); marks it taken.
    fn take<T>(
        &self,
        statements: &[String],
        depths: std::ops::Range<usize>,
        pick: impl Fn(&Action, usize) -> Option<T>,
    ) -> Option<T> {
        let plan = self.opts.plan.as_ref()?;
        let mut used = self.used.borrow_mut();
        for (k, p) in plan.iter().enumerate() {
            if used[k] || !depths.contains(&p.depth) || p.statements != statements {
                continue;
            }
            if let Some(t) = pick(&p.action, p.depth) {
                used[k] = true;
                return Some(t);
            }
        }
        None
    }

    fn record(&self, depth: usize, statements: &[String], action: Action) {
        self.trace.borrow_mut().push(Planned { depth, statements: statements.to_vec(), action });
    }

    /// Whether the innermost loop at `depth`, member `j` of each of
    /// `bands` (one band, or after fission one per statement), gets `omp
    /// simd`: the plan says so (and then it must be the innermost loop and
    /// parallel, or code generation fails), or, without a plan, the `simd`
    /// knob is on, it is the innermost loop and parallel.
    fn vectorise(
        &self,
        bands: &[(ScheduleNode, usize)],
        depth: usize,
        statements: &[String],
    ) -> Result<bool, CodegenError> {
        let innermost = || -> Result<bool, CodegenError> {
            for (band, _) in bands {
                if !leaf_band(band)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let violations = || -> Result<Vec<Violation>, CodegenError> {
            let mut all = Vec::new();
            for (band, j) in bands {
                all.extend(self.simd_violations(band, *j)?);
            }
            Ok(all)
        };
        let yes = match &self.opts.plan {
            Some(_) => {
                if self
                    .take(statements, depth..depth + 1, |a, _| (*a == Action::Vectorize).then_some(()))
                    .is_none()
                {
                    return Ok(false);
                }
                if !innermost()? {
                    return Err(CodegenError::Unsupported(format!(
                        "vectorize at the loop of depth {depth} around {}: not the innermost loop",
                        statements.join(" ")
                    )));
                }
                let v = violations()?;
                if !v.is_empty() {
                    return Err(CodegenError::Illegal(v));
                }
                true
            }
            None => self.opts.code.simd == Simd::Innermost && innermost()? && violations()?.is_empty(),
        };
        if yes {
            self.record(depth, statements, Action::Vectorize);
        }
        Ok(yes)
    }

    /// `rel`, a relation on the tree's (possibly lifted) statement
    /// instances, as a relation on the SCoP's instances.
    fn original(&self, rel: UnionMap) -> Result<UnionMap, CodegenError> {
        match self.lift.borrow().as_ref() {
            None => Ok(rel),
            Some(lift) => {
                Ok(lift.copy().and_then(|l| l.apply_range(rel)).ctx(|| "lifted instances".into())?)
            }
        }
    }

    /// Register tiling (unroll-and-jam) of the point band below the tile
    /// band `tile`, with the factor of the `unroll_jam` knob: the point
    /// band `[p0, ..., pn-1]` becomes `[f⌊p0/f⌋, f⌊p1/f⌋, p2, ...]` over an
    /// unrolled band `[p0 mod f, p1 mod f]` (only `p0` when n = 2; the
    /// innermost loop is never strip-mined, so that it stays the loop the
    /// compiler vectorises, now with f or f² statements in its body). Any
    /// rectangular tiling of a permutable band is legal; the band is checked
    /// all the same. The outer band keeps the point band's full-tile
    /// isolation (in full tiles every strip is whole, so the unrolled copies
    /// need no guard). Returns the tile band again.
    fn register_tile(&self, tile: ScheduleNode, factor: u32) -> Result<ScheduleNode, CodegenError> {
        let what = || "register tiling".to_string();
        let n = tile.band_n_member().ctx(what)? as usize;
        let f = factor.max(1) as i64;
        let strided = n.saturating_sub(1).min(2);
        if f == 1 || strided == 0 {
            return Ok(tile);
        }
        let strides: Vec<i64> = (0..n).map(|k| if k < strided { f } else { 1 }).collect();
        let mut point = tile.child(0).ctx(what)?;
        let marked = is_tile_mark(&point)?;
        if marked {
            point = point.child(0).ctx(what)?;
        }
        self.check_permutable(&point)?;
        let space = point.band_get_space().ctx(what)?;
        let mut mv = MultiVal::zero(space).ctx(what)?;
        for (k, &s) in strides.iter().enumerate() {
            mv = mv.set_val(k as i32, Val::int_from_si(self.ctx, s).ctx(what)?).ctx(what)?;
        }
        // The outer band keeps the point band's flags; the inner one holds
        // `p mod f` for the strided members and 0 for the others, dropped.
        let mut inner = point.band_tile(mv).ctx(what)?.child(0).ctx(what)?;
        // isl copies the build options to both bands; the inner one's
        // isolation would name the outer one's depths.
        inner = inner.band_set_ast_build_options(UnionSet::empty_ctx(self.ctx).ctx(what)?).ctx(what)?;
        inner = inner.band_split(strided as i32).ctx(what)?;
        inner = inner.child(0).ctx(what)?.delete().ctx(what)?.parent().ctx(what)?;
        let depth = inner.get_schedule_depth().ctx(what)?;
        let id = Id::read_from_str(self.ctx, &format!("{UNROLL_MARK}_{depth}_{strided}_{f}")).ctx(what)?;
        let mark = inner.insert_mark(id).ctx(what)?;
        let mut up = mark.parent().ctx(what)?.parent().ctx(what)?;
        if marked {
            up = up.parent().ctx(what)?;
        }
        Ok(up)
    }

    /// The dependences member `j` of `band` carries once every outer loop
    /// (including the band's members before it) is fixed: none, and it may
    /// get `omp simd`.
    fn simd_violations(&self, band: &ScheduleNode, j: usize) -> Result<Vec<Violation>, CodegenError> {
        let what = || "checking a loop before vectorising it".to_string();
        let members = band.band_get_partial_schedule().ctx(what)?;
        let member = UnionMap::from_union_pw_aff(members.get_at(j as i32).ctx(what)?).ctx(what)?;
        let Some((context, deps)) = self.checks else { return Ok(Vec::new()) };
        let (outer, member) = (self.outer_loops(band, j)?, self.original(member)?);
        Ok(legality::parallel_violations(self.ctx, context, &outer, &member, deps)?)
    }

    /// The loops around member `j` of `band` (its prefix schedule, then its
    /// members before `j`), on the SCoP's instances.
    fn outer_loops(&self, band: &ScheduleNode, j: usize) -> Result<UnionMap, CodegenError> {
        let what = || "the loops around a member".to_string();
        let mut outer = band.get_prefix_schedule_union_map().ctx(what)?;
        let members = band.band_get_partial_schedule().ctx(what)?;
        for k in 0..j {
            let m = UnionMap::from_union_pw_aff(members.get_at(k as i32).ctx(what)?).ctx(what)?;
            outer = outer.flat_range_product(m).ctx(what)?;
        }
        self.original(outer)
    }

    /// A `SIMD_MARK` naming schedule depth `depth` above `node`; returns
    /// the node below the mark.
    fn insert_simd_mark(&self, node: ScheduleNode, depth: i32) -> Result<ScheduleNode, CodegenError> {
        let what = || "marking a loop for vectorisation".to_string();
        let id = Id::read_from_str(self.ctx, &format!("{SIMD_MARK}_{depth}")).ctx(what)?;
        Ok(node.insert_mark(id).ctx(what)?.child(0).ctx(what)?)
    }

    /// A member flagged coincident must really carry nothing that reaches it
    /// unseparated by the (possibly tiled) outer loops, or OpenMP races.
    fn check_parallel(&self, band: &ScheduleNode) -> Result<(), CodegenError> {
        self.check(band, "checking a loop before marking it parallel", legality::parallel_violations)
    }

    /// A band marked permutable must really be, or tiling breaks dependences.
    fn check_permutable(&self, band: &ScheduleNode) -> Result<(), CodegenError> {
        self.check(band, "checking a band before tiling", legality::band_violations)
    }

    /// `band`'s partial schedule under its prefix, on the SCoP's instances,
    /// passed through the legality `test`; its violations are an error.
    fn check(&self, band: &ScheduleNode, what: &str, test: LegalityTest) -> Result<(), CodegenError> {
        let Some((context, deps)) = self.checks else { return Ok(()) };
        let what = || what.to_string();
        let prefix = self.original(band.get_prefix_schedule_union_map().ctx(what)?)?;
        let partial = self.original(band.band_get_partial_schedule_union_map().ctx(what)?)?;
        let v = test(self.ctx, context, &prefix, &partial, deps)?;
        if v.is_empty() {
            Ok(())
        } else {
            Err(CodegenError::Illegal(v))
        }
    }
}

/// Whether `band` is register tiling's band of strips (below an
/// `UNROLL_MARK`), whose loops the compiler unrolls.
fn unrolled(band: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "looking for bands".to_string();
    if !band.has_parent().ctx(what)? || band.get_parent_type().ctx(what)? != ScheduleNodeType::Mark {
        return Ok(false);
    }
    let parent = band.copy().ctx(what)?.parent().ctx(what)?;
    Ok(parent.mark_get_id().ctx(what)?.to_str().ctx(what)?.starts_with(UNROLL_MARK))
}

/// For each member of `band` and each statement piece of it, whether it
/// depends on the instance (is a loop there, not a constant).
fn member_pieces_are_loops(band: &ScheduleNode) -> Result<Vec<bool>, CodegenError> {
    let what = || "looking for loops".to_string();
    let members = band.band_get_partial_schedule().ctx(what)?;
    let mut out = Vec::new();
    for k in 0..band.band_n_member().ctx(what)? {
        let list = members.get_at(k).ctx(what)?.get_pw_aff_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            let member = list.get_at(i).ctx(what)?;
            let dims = member.dim(DimType::In).ctx(what)? as u32;
            out.push(member.involves_dims(DimType::In, 0, dims).ctx(what)?);
        }
    }
    Ok(out)
}

/// Whether no band that makes a loop lies below `band`: its last member is
/// the innermost loop.
fn leaf_band(band: &ScheduleNode) -> Result<bool, CodegenError> {
    fn has_band(node: &ScheduleNode) -> Result<bool, CodegenError> {
        let what = || "looking for bands".to_string();
        for i in 0..node.n_children().ctx(what)? {
            let child = node.get_child(i).ctx(what)?;
            let band = child.get_type().ctx(what)? == ScheduleNodeType::Band;
            let makes_loop =
                |b: &ScheduleNode| Ok::<_, CodegenError>(member_pieces_are_loops(b)?.contains(&true));
            if band && !unrolled(&child)? && makes_loop(&child)? || has_band(&child)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
    Ok(!has_band(band)?)
}

/// Whether every member of `band` depends on the instance for every
/// statement (is a loop for it, not a constant). Grouping by tiles
/// (`group_tiles`) would put a statement for which some member is constant
/// inside that member's tile loop (one iteration of it, guarded), where
/// tiling with `band_tile` leaves it outside: gramschmidt's scalar `nrm`
/// statements would then run inside the parallel loop of a wavefront.
fn members_are_loops(band: &ScheduleNode) -> Result<bool, CodegenError> {
    Ok(!member_pieces_are_loops(band)?.contains(&false))
}

/// The size of member `j` of a band tiled with `sizes` (the last size
/// repeats for deeper members).
fn tile_size(sizes: &[u32], j: usize) -> i64 {
    sizes.get(j).or(sizes.last()).copied().unwrap_or(32).max(1) as i64
}

/// A band [`Walk::tile_band`] tiled: the node to go on from, the bands it
/// made, and the levels it left the walk below it.
struct Tiled {
    node: ScheduleNode,
    /// The bands it made below `node` (point bands, an inner tile band).
    levels: usize,
    down: usize,
}

/// `sizes` as the multi-value `band_tile` takes for `band`.
fn sizes_of(ctx: &Context, band: &ScheduleNode, sizes: &[i64]) -> Result<MultiVal, CodegenError> {
    let what = || "transforming the schedule tree".to_string();
    let mut mv = MultiVal::zero(band.band_get_space().ctx(what)?).ctx(what)?;
    for (i, &size) in sizes.iter().enumerate() {
        mv = mv.set_val(i as i32, Val::int_from_si(ctx, size).ctx(what)?).ctx(what)?;
    }
    Ok(mv)
}

/// The tile band `node` (tiles of `sizes`) tiled again by `factors`: the
/// outer level of two-level tiling. Returns the inner tile band.
fn outer_tiles(
    ctx: &Context,
    mut node: ScheduleNode,
    factors: &[i64],
    sizes: &[i64],
) -> Result<ScheduleNode, CodegenError> {
    let what = || "transforming the schedule tree".to_string();
    // Tile loops step by their size (isl scales them).
    let steps: Vec<i64> = factors.iter().zip(sizes).map(|(f, s)| f * s).collect();
    let mv = sizes_of(ctx, &node, &steps)?;
    node = node.band_tile(mv).ctx(what)?;
    // isl 0.27's default (splitting) generation of these loops skips
    // instances where statements sit at different offsets of the strides
    // (fdtd-2d: 413 of S4's at 8/32); as atomic loops every one runs.
    for j in 0..factors.len() {
        node = node.band_member_set_ast_loop_type(j as i32, ASTLoopType::Atomic).ctx(what)?;
    }
    Ok(node.child(0).ctx(what)?)
}
