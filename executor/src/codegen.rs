//! From a SCoP and a schedule tree to a complete C program: tiling of
//! permutable bands, OpenMP marks on coincident loops, isl's AST generator,
//! our own C printer, and the instrumentation the measurement protocol needs.
//!
//! The generated region replaces the bytes of the SCoP in the preprocessed
//! source, so the rest of the program (initialisation, `main`) is untouched.

use isl_rs::{
    ASTLoopType, ASTNode, ASTNodeType, BasicSet, Context, DimType, Id, IdList, Map, MultiUnionPwAff,
    MultiVal, Schedule, ScheduleNode, ScheduleNodeType, Set, UnionMap, UnionPwAff, UnionPwMultiAff, UnionSet,
    Val,
};
use serde::{Deserialize, Serialize};
use space::deps::Dependences;
use space::isl::{new_context, IslError, IslResultExt};
use space::knobs::{Consecutivity, PostTileReorder, SchedulerOptions, Target, Wavefront};
use space::legality::{self, Violation};
use space::scop::{isl_name, AccessKind, Scop, Source};

/// How to turn a schedule into loops.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodegenOptions {
    /// Rectangular tile sizes for permutable bands of two or more members,
    /// outermost first; the last size repeats for deeper members. `None`: no tiling.
    pub tile_sizes: Option<Vec<u32>>,
    /// Mark the outermost coincident loop of each band (not nested in another
    /// parallel loop) `#pragma omp parallel for`.
    pub openmp: bool,
    /// After tiling, sink the point loop with the best Pluto locality score
    /// (RR-9110 (2)) innermost.
    #[serde(default)]
    pub posttile_reorder: PostTileReorder,
    /// Skew the tile loops of a band whose outer tile loop is not parallel:
    /// the first becomes the sum of itself and the next (`single`) or of all.
    #[serde(default)]
    pub wavefront: Wavefront,
    /// After tiling, the point loop that makes the most references
    /// stride-one (consecutivity report §3.1.1, f = 1) goes innermost.
    #[serde(default)]
    pub intra_tile_consecutivity: bool,
}

impl CodegenOptions {
    /// Code generation for a point: tiles and threads, and the knobs of the
    /// unified scheduler that act after tiling.
    pub fn for_point(tile_sizes: Option<Vec<u32>>, threads: usize, knobs: Option<&SchedulerOptions>) -> Self {
        let mut o = CodegenOptions { tile_sizes, openmp: threads > 1, ..Default::default() };
        if let Some(k) = knobs {
            o.posttile_reorder = k.posttile_reorder;
            o.wavefront = k.wavefront;
            o.intra_tile_consecutivity = k.consecutivity == Consecutivity::IntraTile;
            o.openmp = o.openmp && k.target != Target::Seq;
        }
        o
    }
}

/// A generated program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    /// The whole C program, ready for the compiler.
    pub program: String,
    /// Only the code that replaced the SCoP.
    pub region: String,
    /// The schedule tree after tiling and parallel marks.
    pub schedule: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("the schedule is illegal: it breaks {} dependence(s), first {} {} -> {} (bad distances {})",
        .0.len(), .0[0].kind, .0[0].source, .0[0].sink, .0[0].bad_distances)]
    Illegal(Vec<Violation>),
    #[error("{0}")]
    Unsupported(String),
}

/// The original program with the SCoP instrumented (timer and output dump)
/// but otherwise as written: the reference every variant is compared with.
pub fn original_program(source: &Source, scop: &Scop) -> Result<String, CodegenError> {
    let region = &source.text[scop.span.0..scop.span.1];
    // Drop the two pragma lines; keep what lies between them.
    let inner = region.split_once('\n').map(|(_, r)| r).unwrap_or("");
    let inner = inner.trim_end_matches('\n');
    let inner = inner.rsplit_once('\n').map(|(r, _)| r).unwrap_or("");
    splice(source, scop, inner)
}

/// Code for `schedule` (isl schedule-tree text), after checking it legal
/// against `deps`, and each band it tiles permutable.
pub fn generate(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    schedule: &str,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    generate_inner(source, scop, Some(deps), schedule, opts)
}

/// Test-only: code for a schedule without the legality check, so that tests
/// can show that output verification catches what legality would have.
#[doc(hidden)]
pub fn generate_unchecked(
    source: &Source,
    scop: &Scop,
    schedule: &str,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    generate_inner(source, scop, None, schedule, opts)
}

fn generate_inner(
    source: &Source,
    scop: &Scop,
    deps: Option<&Dependences>,
    schedule: &str,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    let ctx = new_context();
    let check = |text: &str| -> Result<(), CodegenError> {
        if let Some(deps) = deps {
            let v = legality::violations(&ctx, &scop.context, text, deps)?;
            if !v.is_empty() {
                return Err(CodegenError::Illegal(v));
            }
        }
        Ok(())
    };
    check(schedule)?;
    let tree = Schedule::read_from_str(&ctx, schedule).ctx(|| "reading the schedule tree".into())?;
    check_domain(&ctx, scop, &tree)?;
    // Tiling is checked band by band (permutability) as it is applied.
    let (tree, isolated, lift) = transform(&ctx, scop, tree, opts, deps.map(|d| (scop.context.as_str(), d)))?;
    // The tree as text, on the SCoP's statement instances: a band tiled
    // with tile iterators (`Walk::tile_lifted`) reads `floor(phi / size)`
    // there, as `band_tile` would have it.
    let lift = match lift {
        Some(l) => Some(UnionPwMultiAff::from_union_map(l).ctx(|| "lifted instances".into())?),
        None => None,
    };
    let text = |tree: &Schedule| -> Result<String, CodegenError> {
        let what = || "printing the schedule".to_string();
        let tree = match &lift {
            None => tree.copy().ctx(what)?,
            Some(l) => tree.copy().ctx(what)?.pullback_union_pw_multi_aff(l.copy().ctx(what)?).ctx(what)?,
        };
        Ok(tree.to_str().ctx(what)?.to_string())
    };
    let mut final_text = text(&tree)?;
    if opts.posttile_reorder != PostTileReorder::None
        || opts.wavefront != Wavefront::None
        || opts.intra_tile_consecutivity
    {
        // Reordered point loops and skewed tile loops are legal by
        // construction (permutable bands); checked all the same.
        check(&final_text)?;
    }
    let prefix = iterator_prefix(scop);
    let ast = if !isolated {
        build_ast(&ctx, &scop.context, group_tiles(tree)?, &prefix)?
    } else {
        let plain = tree.copy().ctx(|| "copying the schedule".into())?;
        let tree = group_tiles(tree)?;
        match with_budget(&ctx, ISOLATED_AST_OPS, || build_ast(&ctx, &scop.context, tree, &prefix)) {
            Some(ast) => ast,
            None => {
                let root = plain.get_root().ctx(|| "schedule root".into())?;
                let plain = strip_ast_options(root)?.get_schedule().ctx(|| "schedule".into())?;
                final_text = text(&plain)?;
                build_ast(&ctx, &scop.context, group_tiles(plain)?, &prefix)?
            }
        }
    };
    let mut printer = Printer {
        out: String::new(),
        indent: 1,
        call_prefix: MACRO_PREFIX,
        iterators: iterator_prefix(scop),
        arity: scop.statements.iter().map(|s| (s.name.clone(), s.c_iterators.len())).collect(),
    };
    printer.node(&ast, None)?;
    let region = format!("{}{}{}", statement_macros(scop), printer.out, undef_macros(scop));
    let program = splice(source, scop, &region)?;
    Ok(Variant { program, region, schedule: final_text })
}

/// The schedule must schedule exactly the SCoP's statement instances.
fn check_domain(ctx: &Context, scop: &Scop, tree: &Schedule) -> Result<(), CodegenError> {
    let what = || "comparing the schedule's domain with the SCoP".to_string();
    let mut domain = UnionSet::empty_ctx(ctx).ctx(what)?;
    for s in &scop.statements {
        domain = domain.union(UnionSet::read_from_str(ctx, &s.domain).ctx(what)?).ctx(what)?;
    }
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let domain = domain.intersect_params(context.copy().ctx(what)?).ctx(what)?;
    let theirs = tree.get_domain().ctx(what)?.intersect_params(context).ctx(what)?;
    if !theirs.is_equal(&domain).ctx(what)? {
        return Err(CodegenError::Unsupported(
            "the schedule's domain differs from the SCoP's statement instances".into(),
        ));
    }
    Ok(())
}

/// Tiling and parallel marks, in one walk over the tree; also whether some
/// band got isolated full tiles, and the map from the SCoP's statement
/// instances to the tree's domain when some band lifted it (`Walk::lift`).
fn transform(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    opts: &CodegenOptions,
    checks: Option<(&str, &Dependences)>,
) -> Result<(Schedule, bool, Option<UnionMap>), CodegenError> {
    let root = tree.get_root().ctx(|| "schedule root".into())?;
    let walk = Walk {
        ctx,
        scop,
        opts,
        checks,
        isolated: std::cell::Cell::new(false),
        lift: std::cell::RefCell::new(None),
    };
    let root = walk.visit(root, false, false)?;
    let lift = walk.lift.into_inner();
    Ok((root.get_schedule().ctx(|| "schedule".into())?, walk.isolated.get(), lift))
}

/// The mark above a band whose first member is parallel, followed by that
/// member's schedule depth (`polytune_parallel_3`): only the loop isl
/// generates for that dimension may get `parallel for`. When the member is
/// constant for some statements, isl generates no loop for it there, and the
/// first loop below the mark belongs to a deeper member that may carry
/// dependences (gramschmidt's `nrm` reduction under a wavefront).
const PARALLEL_MARK: &str = "polytune_parallel";

/// The mark between the tile band and the point band of a band tiled with
/// tile iterators (`Walk::tile_lifted`): where `group_tiles` puts the
/// expansion from tiles to statement instances.
const TILE_MARK: &str = "polytune_tile_points";

struct Walk<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    opts: &'a CodegenOptions,
    /// The parameter context and dependences that tiled bands must respect
    /// (`None` only on the test-only unchecked path).
    checks: Option<(&'a str, &'a Dependences)>,
    /// Set when a point band gets an isolate option.
    isolated: std::cell::Cell<bool>,
    /// Set once some band is tiled with tile iterators of its own
    /// (`tile_lifted`): each statement instance of the SCoP to its instance
    /// in the tree's current, lifted domain (`S1[t, i, j]` to
    /// `S1[t, i, j, T0, T1, T2]`). Dependences are on the SCoP's instances,
    /// so every check first maps the tree's relations back through it.
    lift: std::cell::RefCell<Option<UnionMap>>,
}

impl Walk<'_> {
    /// Rewrites the subtree at `node` and returns a node at the same position.
    fn visit(
        &self,
        mut node: ScheduleNode,
        mut in_parallel: bool,
        just_tiled: bool,
    ) -> Result<ScheduleNode, CodegenError> {
        let (ctx, opts) = (self.ctx, self.opts);
        let what = || "transforming the schedule tree".to_string();
        // Levels we descend below the starting position; climbed back at the end.
        let mut down = 0;
        let mut tiled_here = false;
        if node.get_type().ctx(what)? == ScheduleNodeType::Band {
            let n = node.band_n_member().ctx(what)?;
            if let Some(sizes) = &opts.tile_sizes {
                if !just_tiled && n >= 2 && node.band_get_permutable().ctx(what)? && !sizes.is_empty() {
                    let space = node.band_get_space().ctx(what)?;
                    let mut mv = MultiVal::zero(space).ctx(what)?;
                    for i in 0..n {
                        mv = mv
                            .set_val(i, Val::int_from_si(ctx, tile_size(sizes, i as usize)).ctx(what)?)
                            .ctx(what)?;
                    }
                    self.check_permutable(&node)?;
                    let order = self.point_order(&node)?;
                    let point_order: Vec<usize> = order.clone().unwrap_or_else(|| (0..n as usize).collect());
                    let wave =
                        opts.wavefront != Wavefront::None && !node.band_member_get_coincident(0).ctx(what)?;
                    if wave && whole_statements(&node)? && members_are_loops(&node)? {
                        // Tile loops as iterators of their own (Pluto), so
                        // that the wavefront is a sum of loop iterators, not
                        // of integer divisions.
                        let sizes: Vec<i64> = (0..n as usize).map(|j| tile_size(sizes, j)).collect();
                        node = self.tile_lifted(node, &sizes, &point_order)?;
                    } else {
                        node = node.band_tile(mv).ctx(what)?;
                        if let Some(order) = &order {
                            let point = node.child(0).ctx(what)?;
                            node = permute(point, order)?.parent().ctx(what)?;
                        }
                    }
                    tiled_here = true;
                    if wave {
                        node = self.wavefront(node)?;
                    }
                    let point_sizes: Vec<i64> = point_order.iter().map(|&j| tile_size(sizes, j)).collect();
                    let (tile, isolated) = isolate_full_tiles(node, &point_sizes)?;
                    node = tile;
                    if isolated {
                        self.isolated.set(true);
                    }
                }
            }
            if opts.openmp && !in_parallel {
                let coincident = (0..n).find(|&j| node.band_member_get_coincident(j).unwrap_or(false));
                if let Some(j) = coincident {
                    if j > 0 {
                        node = node.band_split(j).ctx(what)?.child(0).ctx(what)?;
                        down += 1;
                    }
                    self.check_parallel(&node)?;
                    let depth = node.get_schedule_depth().ctx(what)?;
                    let id = Id::read_from_str(ctx, &format!("{PARALLEL_MARK}_{depth}")).ctx(what)?;
                    node = node.insert_mark(id).ctx(what)?.child(0).ctx(what)?;
                    down += 1;
                    in_parallel = true;
                }
            }
        }
        // The point band right below a tile band (and its `TILE_MARK`) must
        // not be tiled again.
        let below_tiles = tiled_here || (just_tiled && is_tile_mark(&node)?);
        let children = node.n_children().ctx(what)?;
        for i in 0..children {
            node = node.child(i).ctx(what)?;
            node = self.visit(node, in_parallel, below_tiles)?;
            node = node.parent().ctx(what)?;
        }
        for _ in 0..down {
            node = node.parent().ctx(what)?;
        }
        Ok(node)
    }

    /// The order of the point loops after tiling (`None`: as they are): the
    /// member with the most stride-one references (intra-tile consecutivity),
    /// then the best Pluto score (2), is sunk innermost. Scores come from
    /// the scheduled accesses: for member j, the subscript differences between
    /// instances whose schedules (outer loops, this band) differ by one in j.
    fn point_order(&self, band: &ScheduleNode) -> Result<Option<Vec<usize>>, CodegenError> {
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

    /// Wavefront (Pluto; RR-9110 §2, §4.7) on a tile band whose first member
    /// is not parallel: the first member becomes the sum of itself and the
    /// next (`single`) or all the others (`all`); each later member that the
    /// parallelism check then accepts is flagged coincident.
    fn wavefront(&self, band: ScheduleNode) -> Result<ScheduleNode, CodegenError> {
        let what = || "wavefront skewing".to_string();
        let n = band.band_n_member().ctx(what)? as usize;
        let last = match self.opts.wavefront {
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
    fn tile_lifted(
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

    /// A member flagged coincident must really carry nothing that reaches it
    /// unseparated by the (possibly tiled) outer loops, or OpenMP races.
    fn check_parallel(&self, band: &ScheduleNode) -> Result<(), CodegenError> {
        let Some((context, deps)) = self.checks else { return Ok(()) };
        let what = || "checking a loop before marking it parallel".to_string();
        let prefix = self.original(band.get_prefix_schedule_union_map().ctx(what)?)?;
        let partial = self.original(band.band_get_partial_schedule_union_map().ctx(what)?)?;
        let v = legality::parallel_violations(self.ctx, context, &prefix, &partial, deps)?;
        if v.is_empty() {
            Ok(())
        } else {
            Err(CodegenError::Illegal(v))
        }
    }

    /// A band marked permutable must really be, or tiling breaks dependences.
    fn check_permutable(&self, band: &ScheduleNode) -> Result<(), CodegenError> {
        let Some((context, deps)) = self.checks else { return Ok(()) };
        let what = || "checking a band before tiling".to_string();
        let prefix = self.original(band.get_prefix_schedule_union_map().ctx(what)?)?;
        let partial = self.original(band.band_get_partial_schedule_union_map().ctx(what)?)?;
        let v = legality::band_violations(self.ctx, context, &prefix, &partial, deps)?;
        if v.is_empty() {
            Ok(())
        } else {
            Err(CodegenError::Illegal(v))
        }
    }
}

/// The tree as the AST generator gets it when some band was tiled with tile
/// iterators: at each `TILE_MARK`, the instances are grouped by their
/// prefix schedule (the outer loops and the tile loops, isl's
/// `isl_schedule_node_group`, an expansion node), and the groups' domain,
/// the tiles, is replaced by a simple superset without integer divisions
/// (`relax_tiles`). isl then generates the tile loops from that
/// polyhedron, as CLooG does for Pluto, and the point loops below the
/// expansion exactly, for the given tile; a tile of the superset that
/// holds no instance runs an empty body. Otherwise isl generates the tile
/// loops from the exact integer projection of the instances: for a
/// wavefront over a 4-d time-skewed band (heat-3d) a union of dozens of
/// parametric cases whose strides cost minutes to detect.
fn group_tiles(tree: Schedule) -> Result<Schedule, CodegenError> {
    let what = || "grouping tiles".to_string();
    fn visit(mut node: ScheduleNode, groups: &mut usize) -> Result<ScheduleNode, CodegenError> {
        let what = || "grouping tiles".to_string();
        if is_tile_mark(&node)? {
            let id = Id::read_from_str(&node.get_ctx(), &format!("{TILE_MARK}_{groups}")).ctx(what)?;
            *groups += 1;
            // The point band, now below an expansion node, below the mark.
            node = node.child(0).ctx(what)?.group(id).ctx(what)?.parent().ctx(what)?.parent().ctx(what)?;
        }
        for i in 0..node.n_children().ctx(what)? {
            node = visit(node.child(i).ctx(what)?, groups)?.parent().ctx(what)?;
        }
        Ok(node)
    }
    let mut groups = 0;
    let root = visit(tree.get_root().ctx(what)?, &mut groups)?;
    let tree = root.get_schedule().ctx(what)?;
    if groups == 0 {
        return Ok(tree);
    }
    let domain = tree.get_domain().ctx(what)?;
    let mut relaxed = UnionSet::empty_ctx(&tree.get_ctx()).ctx(what)?;
    let list = domain.get_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let mut set = list.get_at(i).ctx(what)?;
        if set.get_tuple_name().ctx(what)?.starts_with(TILE_MARK) {
            set = relax_tiles(set)?;
        }
        relaxed = relaxed.union(UnionSet::from_set(set).ctx(what)?).ctx(what)?;
    }
    // isl has no way to widen a domain: the tree is read back with the
    // relaxed one (its text is printed first).
    let text = tree.to_str().ctx(what)?.to_string();
    let rest = text
        .strip_prefix("{ domain: \"")
        .and_then(|r| r.split_once('"'))
        .map(|(_, rest)| rest)
        .ok_or_else(|| CodegenError::Unsupported(format!("unexpected schedule text: {text}")))?;
    let text = format!("{{ domain: \"{}\"{rest}", relaxed.to_str().ctx(what)?);
    Ok(Schedule::read_from_str(&tree.get_ctx(), &text).ctx(what)?)
}

/// A superset of the tiles `tiles` (outer loops, then the tile loops) on
/// which isl's exact integer projections, as the AST generator computes
/// them loop by loop, are cheap: the rational projection of the tiles
/// (Fourier-Motzkin, `isl_set_remove_divs`), of whose constraints only
/// those with coefficients 0 or ±1 on the inner dimensions (up to a common
/// factor) are kept, within the rational bounds of each dimension alone.
/// The dropped constraints (`2 T3 >= 2 w - 3 T1 - 2 T2` for heat-3d's
/// wavefront) would leave integer divisions in every projection.
fn relax_tiles(tiles: Set) -> Result<Set, CodegenError> {
    let what = || "relaxing the tile domain".to_string();
    let name = tiles.get_tuple_name().ctx(what)?.to_string();
    let rational = tiles.remove_divs().ctx(what)?.coalesce().ctx(what)?;
    let n = rational.dim(DimType::Set).ctx(what)? as u32;
    let mut out = Set::empty(rational.get_space().ctx(what)?).ctx(what)?;
    let list = rational.get_basic_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let bset = list.get_at(i).ctx(what)?;
        let mut kept = BasicSet::universe(bset.get_space().ctx(what)?).ctx(what)?;
        let constraints = bset.get_constraint_list().ctx(what)?;
        for j in 0..constraints.size().ctx(what)? {
            let c = constraints.get_at(j).ctx(what)?;
            let mut coefficients = Vec::new();
            for d in 1..n as i32 {
                let v = c.get_coefficient_val(DimType::Set, d).ctx(what)?;
                coefficients.push(v.get_num_si().ctx(what)?.abs());
            }
            let g = coefficients.iter().fold(0, |g, &c| gcd(g, c));
            if g == 0 || coefficients.iter().all(|&c| c == 0 || c == g) {
                kept = kept.add_constraint(c).ctx(what)?;
            }
        }
        out = out.union(kept.to_set().ctx(what)?).ctx(what)?;
    }
    // Each dimension within its own rational bounds, so that dropping
    // constraints leaves the set bounded.
    for d in 0..n {
        let alone = rational
            .copy()
            .ctx(what)?
            .project_out(DimType::Set, d + 1, n - d - 1)
            .ctx(what)?
            .project_out(DimType::Set, 0, d)
            .ctx(what)?
            .remove_divs()
            .ctx(what)?
            .insert_dims(DimType::Set, 0, d)
            .ctx(what)?
            .insert_dims(DimType::Set, d + 1, n - d - 1)
            .ctx(what)?
            .set_tuple_name(&name)
            .ctx(what)?;
        out = out.intersect(alone).ctx(what)?;
    }
    Ok(out.coalesce().ctx(what)?)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn is_tile_mark(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "reading a mark".to_string();
    Ok(node.get_type().ctx(what)? == ScheduleNodeType::Mark
        && node.mark_get_id().ctx(what)?.to_str().ctx(what)? == TILE_MARK)
}

/// Whether every statement reaching `band` reaches it with all its
/// instances (no other branch of the tree runs some of them), so that
/// `Walk::tile_lifted` may give its instances the band's tile iterators.
fn whole_statements(band: &ScheduleNode) -> Result<bool, CodegenError> {
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

/// Whether every member of `band` depends on the instance for every
/// statement (is a loop for it, not a constant). Grouping by tiles
/// (`group_tiles`) would put a statement for which some member is constant
/// inside that member's tile loop (one iteration of it, guarded), where
/// tiling with `band_tile` leaves it outside: gramschmidt's scalar `nrm`
/// statements would then run inside the parallel loop of a wavefront.
fn members_are_loops(band: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "tiling with tile iterators".to_string();
    let members = band.band_get_partial_schedule().ctx(what)?;
    for k in 0..band.band_n_member().ctx(what)? {
        let list = members.get_at(k).ctx(what)?.get_pw_aff_list().ctx(what)?;
        for i in 0..list.size().ctx(what)? {
            let member = list.get_at(i).ctx(what)?;
            let dims = member.dim(DimType::In).ctx(what)? as u32;
            if !member.involves_dims(DimType::In, 0, dims).ctx(what)? {
                return Ok(false);
            }
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

/// The size of member `j` of a band tiled with `sizes` (the last size
/// repeats for deeper members).
fn tile_size(sizes: &[u32], j: usize) -> i64 {
    sizes.get(j).or(sizes.last()).copied().unwrap_or(32).max(1) as i64
}

/// isl operations (allocations and simplex pivots; a deterministic measure,
/// unlike time) allowed for computing one band's full tiles. Rectangular
/// bands need a few ten thousand, jacobi-2d's skewed band about 300 000;
/// heat-3d's 4-d skewed band (isl's schedule) about 11 million, 10 s, and its
/// full tiles are 12 polyhedra: past the budget the band is not isolated.
const ISOLATE_OPS: u64 = 500_000;

/// isl operations allowed for generating the AST of a tree with isolated
/// full tiles (2mm needs 1-2 million, about 1.5 s); past it, the AST is
/// generated without isolation.
const ISOLATED_AST_OPS: u64 = 3_000_000;

/// Runs `f` with isl's operation counter limited to `ops` (`None` when the
/// budget ran out or `f` failed), then lifts the limit.
fn with_budget<T>(ctx: &Context, ops: u64, f: impl FnOnce() -> Result<T, CodegenError>) -> Option<T> {
    ctx.reset_operations();
    ctx.set_max_operations(ops);
    let out = f();
    ctx.set_max_operations(0);
    ctx.reset_operations();
    ctx.reset_error();
    out.ok()
}

/// Full/partial tile separation (ppcg's `--isolate-full-tiles`, here on the
/// point band as Polly does): the point band below the tile band `tile`
/// (member k ranging over `0..point_sizes[k]`) gets the AST build option
/// `isolate[[outer, tile] -> [point]]` for the tiles whose every point
/// executes some statement instance, and its members the isolated loop
/// type `separate`. isl then generates, inside each tile, `if (full tile)`
/// loops whose bounds are the tile sizes (no `min`/`max`), separated where
/// the statements that run change (gemm's fused `C[i][j] *= beta` gets its
/// own copy of the loop at `k == 0` instead of a guard in the innermost
/// loop), and the partial tiles as before. Left as it is when the full
/// tiles cost more than the budget.
fn isolate_full_tiles(tile: ScheduleNode, point_sizes: &[i64]) -> Result<(ScheduleNode, bool), CodegenError> {
    let what = || "isolating full tiles".to_string();
    let ctx = tile.get_ctx();
    let d = tile.get_schedule_depth().ctx(what)? as u32;
    let n = tile.band_n_member().ctx(what)? as u32;
    let mut point = tile.child(0).ctx(what)?;
    // A band tiled with tile iterators has its `TILE_MARK` in between.
    let marked = is_tile_mark(&point)?;
    if marked {
        point = point.child(0).ctx(what)?;
    }
    let back = |point: ScheduleNode| -> Result<ScheduleNode, CodegenError> {
        let up = point.parent().ctx(what)?;
        Ok(if marked { up.parent().ctx(what)? } else { up })
    };
    if point.get_type().ctx(what)? != ScheduleNodeType::Band || point.band_n_member().ctx(what)? as u32 != n {
        return Ok((back(point)?, false));
    }
    let isolate = with_budget(&ctx, ISOLATE_OPS, || full_tile_option(&point, d, n, point_sizes));
    let Some(Some(isolate)) = isolate else { return Ok((back(point)?, false)) };
    let mut point = point.band_set_ast_build_options(UnionSet::from_set(isolate).ctx(what)?).ctx(what)?;
    for k in 0..n as i32 {
        point = point.band_member_set_isolate_ast_loop_type(k, ASTLoopType::Separate).ctx(what)?;
    }
    Ok((back(point)?, true))
}

/// The isolate option of the point band `point` (schedule depth `d + n`)
/// for the full tiles, `None` when no tile is full: a tile (outer and tile
/// loop values) is full when every point of the box `point_sizes` runs
/// some instance, that is, when the box minus the executed points is empty.
fn full_tile_option(
    point: &ScheduleNode,
    d: u32,
    n: u32,
    point_sizes: &[i64],
) -> Result<Option<Set>, CodegenError> {
    let what = || "isolating full tiles".to_string();
    let ctx = point.get_ctx();
    let schedule = point
        .get_prefix_schedule_union_map()
        .ctx(what)?
        .flat_range_product(point.band_get_partial_schedule_union_map().ctx(what)?)
        .ctx(what)?;
    let instances = point.get_domain().ctx(what)?.apply(schedule).ctx(what)?;
    // [outer, tile, point]: every schedule point some instance runs at.
    let all = Set::from_union_set(instances).ctx(what)?;
    let vars: Vec<String> = (0..n).map(|k| format!("p{k}")).collect();
    let bounds: Vec<String> = point_sizes.iter().zip(&vars).map(|(s, v)| format!("0 <= {v} < {s}")).collect();
    let points = Set::read_from_str(&ctx, &format!("{{ [{}] : {} }}", vars.join(", "), bounds.join(" and ")))
        .ctx(what)?;
    let tiles = all.copy().ctx(what)?.project_out(DimType::Set, d + n, n).ctx(what)?;
    let partial = tiles
        .copy()
        .ctx(what)?
        .flat_product(points.copy().ctx(what)?)
        .ctx(what)?
        .subtract(all)
        .ctx(what)?
        .project_out(DimType::Set, d + n, n)
        .ctx(what)?;
    let full = tiles.subtract(partial).ctx(what)?.coalesce().ctx(what)?;
    if full.is_empty().ctx(what)? {
        return Ok(None);
    }
    let isolate = Map::from_range(full.flat_product(points).ctx(what)?)
        .ctx(what)?
        .move_dims(DimType::In, 0, DimType::Out, 0, d + n)
        .ctx(what)?
        .wrap()
        .ctx(what)?
        .set_tuple_name("isolate")
        .ctx(what)?;
    Ok(Some(isolate))
}

/// The tree without AST build options (isolated full tiles): the fallback
/// when generating the isolated code costs more than the budget.
fn strip_ast_options(mut node: ScheduleNode) -> Result<ScheduleNode, CodegenError> {
    let what = || "dropping AST build options".to_string();
    if node.get_type().ctx(what)? == ScheduleNodeType::Band
        && !node.band_get_ast_build_options().ctx(what)?.is_empty().ctx(what)?
    {
        let empty = UnionSet::empty_ctx(&node.get_ctx()).ctx(what)?;
        node = node.band_set_ast_build_options(empty).ctx(what)?;
    }
    for i in 0..node.n_children().ctx(what)? {
        node = strip_ast_options(node.child(i).ctx(what)?)?.parent().ctx(what)?;
    }
    Ok(node)
}

/// The band at `node` with its members in `order` (a permutation: legal for
/// a permutable band), permutable and coincidence flags kept.
fn permute(node: ScheduleNode, order: &[usize]) -> Result<ScheduleNode, CodegenError> {
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

unsafe extern "C" {
    fn isl_ast_build_from_context(set: libc::uintptr_t) -> libc::uintptr_t;
    fn isl_ast_build_node_from_schedule(build: libc::uintptr_t, schedule: libc::uintptr_t)
        -> libc::uintptr_t;
    fn isl_ast_build_free(build: libc::uintptr_t) -> libc::uintptr_t;
    fn isl_ast_build_set_iterators(build: libc::uintptr_t, iterators: libc::uintptr_t) -> libc::uintptr_t;
    fn isl_ast_node_get_type(node: libc::uintptr_t) -> libc::c_int;
}

/// isl-rs 0.3.1 maps `isl_ast_node_type` off by one (isl numbers `for` as 1),
/// so the type is read here directly.
fn node_type(node: &ASTNode) -> ASTNodeType {
    match unsafe { isl_ast_node_get_type(node.ptr) } {
        1 => ASTNodeType::For,
        2 => ASTNodeType::If,
        3 => ASTNodeType::Block,
        4 => ASTNodeType::Mark,
        5 => ASTNodeType::User,
        _ => ASTNodeType::Error,
    }
}

/// isl's AST generator (not bound by isl-rs, so declared here against the same
/// library).
fn build_ast(
    ctx: &Context,
    context: &str,
    schedule: Schedule,
    prefix: &str,
) -> Result<ASTNode, CodegenError> {
    let what = || "generating the AST".to_string();
    let mut names = IdList::alloc(ctx, MAX_LOOP_DEPTH as i32).ctx(what)?;
    for d in 0..MAX_LOOP_DEPTH {
        names = names.add(Id::read_from_str(ctx, &format!("{prefix}{d}")).ctx(what)?).ctx(what)?;
    }
    names.do_not_free_on_drop();
    let mut set = Set::read_from_str(ctx, context).ctx(what)?;
    let mut schedule = schedule;
    set.do_not_free_on_drop();
    schedule.do_not_free_on_drop();
    // Both calls take ownership of their isl argument (`__isl_take`); the build
    // is kept by the second and freed here.
    let node = unsafe {
        let build = isl_ast_build_set_iterators(isl_ast_build_from_context(set.ptr), names.ptr);
        if build == 0 {
            drop(Schedule { ptr: schedule.ptr, should_free_on_drop: true });
            return Err(CodegenError::Unsupported(format!(
                "isl: cannot create an AST build: {}",
                ctx.last_error_msg()
            )));
        }
        let node = isl_ast_build_node_from_schedule(build, schedule.ptr);
        isl_ast_build_free(build);
        node
    };
    if node == 0 {
        return Err(CodegenError::Unsupported(format!(
            "isl: AST generation failed: {}",
            ctx.last_error_msg()
        )));
    }
    Ok(ASTNode { ptr: node, should_free_on_drop: true })
}

/// Loops deeper than this get isl's own iterator names (it never happens in
/// practice: tiling doubles a depth of at most a handful).
const MAX_LOOP_DEPTH: usize = 64;

/// A prefix `p` such that no name `p0`, `p1`, ... appears in the SCoP's
/// statements: generated iterators must not shadow the program's variables
/// (deriche has a scalar `c1`).
fn iterator_prefix(scop: &Scop) -> String {
    let mut taken = std::collections::HashSet::new();
    for s in &scop.statements {
        taken.extend(identifiers(&s.text));
    }
    taken.extend(scop.params.iter().cloned());
    let clashes = |p: &str| {
        taken.iter().any(|t| {
            t.strip_prefix(p).is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut prefix = String::from("c");
    while clashes(&prefix) {
        prefix.push('_');
    }
    prefix
}

/// C identifiers in `text` (numbers skipped).
fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for ch in text.chars().chain(std::iter::once(' ')) {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                out.push(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    out
}

/// Prints isl's AST as C: `for` loops with block-scoped iterators (so OpenMP
/// makes them private), `#pragma omp parallel for` on the loops of the marked
/// dimension under our mark, and calls of the statement macros.
struct Printer {
    out: String,
    indent: usize,
    /// Put before the statement name of each call (`polytune_S1(...)`).
    call_prefix: &'static str,
    /// The iterator prefix given to isl: schedule dimension d is `{prefix}{d}`.
    iterators: String,
    /// The arguments of each statement's macro: a call's further arguments
    /// are the tile iterators of a lifted domain (`Walk::tile_lifted`),
    /// dropped.
    arity: std::collections::HashMap<String, usize>,
}

impl Printer {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// `parallel`: under a parallel mark, the iterator of the marked
    /// dimension; its loops (not nested in another loop below the mark) get
    /// `parallel for`, every other loop stays sequential.
    fn node(&mut self, node: &ASTNode, parallel: Option<&str>) -> Result<(), CodegenError> {
        let what = || "printing the AST".to_string();
        match node_type(node) {
            ASTNodeType::For => {
                let it = node.for_get_iterator().ctx(what)?.to_C_str().ctx(what)?.to_string();
                let init = node.for_get_init().ctx(what)?.to_C_str().ctx(what)?.to_string();
                if node.for_is_degenerate().ctx(what)? {
                    self.line("{");
                    self.indent += 1;
                    self.line(&format!("const int {it} = {init};"));
                    self.node(&node.for_get_body().ctx(what)?, None)?;
                    self.indent -= 1;
                    self.line("}");
                    return Ok(());
                }
                let cond = node.for_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
                let inc = node.for_get_inc().ctx(what)?.to_C_str().ctx(what)?.to_string();
                if parallel == Some(it.as_str()) {
                    self.line("#pragma omp parallel for");
                }
                let step = if inc == "1" { format!("{it}++") } else { format!("{it} += {inc}") };
                self.line(&format!("for (int {it} = {init}; {cond}; {step}) {{"));
                self.indent += 1;
                self.node(&node.for_get_body().ctx(what)?, None)?;
                self.indent -= 1;
                self.line("}");
            }
            ASTNodeType::If => {
                let cond = node.if_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
                self.line(&format!("if ({cond}) {{"));
                self.indent += 1;
                self.node(&node.if_get_then_node().ctx(what)?, parallel)?;
                self.indent -= 1;
                if node.if_has_else_node().ctx(what)? {
                    self.line("} else {");
                    self.indent += 1;
                    self.node(&node.if_get_else_node().ctx(what)?, parallel)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            ASTNodeType::Block => {
                let list = node.block_get_children().ctx(what)?;
                // Sequential pieces: each loop of the marked dimension in
                // them is parallel on its own.
                for i in 0..list.size().ctx(what)? {
                    self.node(&list.get_at(i).ctx(what)?, parallel)?;
                }
            }
            ASTNodeType::Mark => {
                let id = node.mark_get_id().ctx(what)?.to_str().ctx(what)?.to_string();
                let marked = id
                    .strip_prefix(PARALLEL_MARK)
                    .and_then(|d| d.strip_prefix('_'))
                    .and_then(|d| d.parse::<usize>().ok())
                    .filter(|&d| d < MAX_LOOP_DEPTH)
                    .map(|d| format!("{}{d}", self.iterators));
                match marked {
                    Some(it) if parallel.is_none() => {
                        self.node(&node.mark_get_node().ctx(what)?, Some(&it))?
                    }
                    _ => self.node(&node.mark_get_node().ctx(what)?, parallel)?,
                }
            }
            ASTNodeType::User => {
                let expr = node.user_get_expr().ctx(what)?;
                let n = expr.get_op_n_arg().ctx(what)?;
                let name = if n > 0 {
                    Some(expr.get_op_arg(0).ctx(what)?.to_C_str().ctx(what)?.to_string())
                } else {
                    None
                };
                let call = match name.as_ref().and_then(|name| self.arity.get(name).map(|&a| (name, a))) {
                    Some((name, arity)) if (n as usize) > arity + 1 => {
                        let args = (1..=arity as i32)
                            .map(|i| Ok(expr.get_op_arg(i).ctx(what)?.to_C_str().ctx(what)?.to_string()))
                            .collect::<Result<Vec<_>, CodegenError>>()?;
                        format!("{name}({})", args.join(", "))
                    }
                    _ => expr.to_C_str().ctx(what)?.to_string(),
                };
                self.line(&format!("{}{call};", self.call_prefix));
            }
            ASTNodeType::Error => {
                return Err(CodegenError::Unsupported("isl returned an error AST node".into()))
            }
        }
        Ok(())
    }
}

/// Statement macros are `polytune_S1(...)`, so they cannot collide with a
/// user's identifier `S1`.
const MACRO_PREFIX: &str = "polytune_";

/// Dump loops call `polytune_W_A(...)` for each written element of `A`.
const DUMP_PREFIX: &str = "polytune_W_";

/// isl's C printer uses these; they exist only inside the generated region.
const AST_MACROS: &str = "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define ceild(n, d) (((n) < 0) ? -((-(n)) / (d)) : ((n) + (d) - 1) / (d))
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
";

/// `#define polytune_S1(i, j) C[(i)][(j)] *= beta` for every statement.
fn statement_macros(scop: &Scop) -> String {
    let mut out = String::from(AST_MACROS);
    for s in &scop.statements {
        let body = s.text.trim().trim_end_matches(';').replace(['\n', '\r'], " ");
        let body = parenthesize(&body, &s.c_iterators);
        out.push_str(&format!("#define {MACRO_PREFIX}{}({}) {body}\n", s.name, s.c_iterators.join(", ")));
    }
    out
}

const UNDEF_AST_MACROS: &str = "#undef floord\n#undef ceild\n#undef min\n#undef max\n";

fn undef_macros(scop: &Scop) -> String {
    let mut out = String::from(UNDEF_AST_MACROS);
    for s in &scop.statements {
        out.push_str(&format!("#undef {MACRO_PREFIX}{}\n", s.name));
    }
    out
}

/// Wraps every use of an iterator in parentheses, so that a macro argument
/// such as `c0 + 1` keeps its meaning inside `A[2 * i]`.
fn parenthesize(body: &str, iterators: &[String]) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' || c.is_ascii_digit() {
            let start = i;
            // Numbers (1e5, 0x1f, 2.0f) are consumed whole so that their
            // letters never look like identifiers.
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'_'
                    || (c.is_ascii_digit() && bytes[i] == b'.'))
            {
                i += 1;
            }
            let word = &body[start..i];
            if !c.is_ascii_digit() && iterators.iter().any(|it| it == word) {
                out.push('(');
                out.push_str(word);
                out.push(')');
            } else {
                out.push_str(word);
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// Replaces the SCoP's bytes with `code`, between the timer calls and
/// followed by the dump of everything the SCoP writes.
fn splice(source: &Source, scop: &Scop, code: &str) -> Result<String, CodegenError> {
    let ctx = new_context();
    let dumps = dump_code(&ctx, scop)?;
    let region = format!(
        "{{ /* polytune: SCoP of {} */\n{}  void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         polytune_rt_start();\n  {{\n{code}\n  }}\n  polytune_rt_stop();\n{dumps}}}\n",
        scop.function,
        local_declarations(scop)
    );
    let (a, b) = scop.span;
    Ok(format!("{}{}{}", &source.text[..a], region, &source.text[b..]))
}

/// The SCoP's block-scope variables, declared once for the whole region
/// (the statements of a schedule may leave the blocks that declared them).
fn local_declarations(scop: &Scop) -> String {
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| a.local) {
        let extents: String = a.extents.iter().map(|e| format!("[{}]", e.as_deref().unwrap_or(""))).collect();
        out.push_str(&format!("  {} {}{extents};\n", a.element_type, a.name));
    }
    out
}

/// Code that dumps, for every array and scalar the SCoP writes, exactly the
/// elements it writes (its write footprint), in lexicographic order. Elements
/// never written are not outputs: they may even be uninitialised (durbin's
/// local `z`), and no declared extent is needed.
fn dump_code(ctx: &Context, scop: &Scop) -> Result<String, CodegenError> {
    let what = || "building the output dump".to_string();
    let context = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    let prefix = iterator_prefix(scop);
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| a.written && !a.local) {
        let ty = &a.element_type;
        if a.extents.is_empty() {
            out.push_str(&format!(
                "  polytune_rt_dump(\"{0}\", \"{ty}\", (const void *)&{0}, (unsigned long)sizeof({ty}));\n",
                a.name
            ));
            continue;
        }
        let mut footprint = UnionSet::empty_ctx(ctx).ctx(what)?;
        for st in &scop.statements {
            let domain = Set::read_from_str(ctx, &st.domain).ctx(what)?;
            for acc in st.accesses.iter().filter(|x| x.kind == AccessKind::Write && x.array == a.name) {
                let written = isl_rs::Map::read_from_str(ctx, &acc.relation)
                    .ctx(what)?
                    .intersect_domain(domain.copy().ctx(what)?)
                    .ctx(what)?
                    .range()
                    .ctx(what)?;
                footprint = footprint.union(UnionSet::from_set(written).ctx(what)?).ctx(what)?;
            }
        }
        let footprint =
            footprint.intersect_params(context.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
        let isl = isl_name(&a.name);
        let vars: Vec<String> = (0..a.rank()).map(|d| format!("x{d}")).collect();
        let members: Vec<String> =
            vars.iter().map(|v| format!("{{ {isl}[{}] -> [({v})] }}", vars.join(", "))).collect();
        let tree = format!(
            "{{ domain: \"{}\", child: {{ schedule: \"[{}]\" }} }}",
            footprint.to_str().ctx(what)?,
            members.join(", ")
        );
        let tree = Schedule::read_from_str(ctx, &tree).ctx(what)?;
        let ast = build_ast(ctx, &scop.context, tree, &prefix)?;
        let mut loops = Printer {
            out: String::new(),
            indent: 2,
            call_prefix: DUMP_PREFIX,
            iterators: prefix.clone(),
            arity: Default::default(),
        };
        loops.node(&ast, None)?;
        let params = vars.join(", ");
        let element: String = vars.iter().map(|v| format!("[({v})]")).collect();
        let macro_name = format!("{DUMP_PREFIX}{isl}");
        out.push_str(&format!(
            "  {{\n    unsigned long polytune_n = 0;\n{AST_MACROS}#define {macro_name}({params}) polytune_n++\n{loops}\
             #undef {macro_name}\n    {ty} *polytune_buf = ({ty} *)__builtin_malloc(polytune_n * sizeof({ty}) + 1);\n    \
             polytune_n = 0;\n#define {macro_name}({params}) polytune_buf[polytune_n++] = {name}{element}\n{loops}\
             #undef {macro_name}\n{UNDEF_AST_MACROS}    polytune_rt_dump(\"{name}\", \"{ty}\", (const void *)polytune_buf, \
             polytune_n * sizeof({ty}));\n    __builtin_free(polytune_buf);\n  }}\n",
            loops = loops.out,
            name = a.name,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterators_are_parenthesized_but_numbers_and_other_names_are_not() {
        let its = vec!["i".to_string(), "j".to_string()];
        assert_eq!(
            parenthesize("A[2*i][j+1] = xi * 1e5 + i2 + j", &its),
            "A[2*(i)][(j)+1] = xi * 1e5 + i2 + (j)"
        );
        assert_eq!(parenthesize("B[i] = 0x1f + 2.0f", &its), "B[(i)] = 0x1f + 2.0f");
    }
}
