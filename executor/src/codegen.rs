//! From a SCoP and a schedule tree to a complete C program: tiling of
//! permutable bands, OpenMP marks on coincident loops, isl's AST generator,
//! our own C printer, and the instrumentation the measurement protocol needs.
//!
//! The generated region replaces the bytes of the SCoP in the preprocessed
//! source, so the rest of the program (initialisation, `main`) is untouched.

use isl_rs::{
    ASTLoopType, ASTNode, ASTNodeType, Context, DimType, Id, IdList, Map, MultiUnionPwAff, MultiVal,
    Schedule, ScheduleNode, ScheduleNodeType, Set, UnionMap, UnionSet, Val,
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
    let (tree, isolated) = transform(&ctx, scop, tree, opts, deps.map(|d| (scop.context.as_str(), d)))?;
    let mut final_text = tree.to_str().ctx(|| "printing the schedule".into())?.to_string();
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
        build_ast(&ctx, &scop.context, tree, &prefix)?
    } else {
        let plain = tree.copy().ctx(|| "copying the schedule".into())?;
        match with_budget(&ctx, ISOLATED_AST_OPS, || build_ast(&ctx, &scop.context, tree, &prefix)) {
            Some(ast) => ast,
            None => {
                let root = plain.get_root().ctx(|| "schedule root".into())?;
                let plain = strip_ast_options(root)?.get_schedule().ctx(|| "schedule".into())?;
                final_text = plain.to_str().ctx(|| "printing the schedule".into())?.to_string();
                build_ast(&ctx, &scop.context, plain, &prefix)?
            }
        }
    };
    let mut printer = Printer {
        out: String::new(),
        indent: 1,
        call_prefix: MACRO_PREFIX,
        iterators: iterator_prefix(scop),
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
/// band got isolated full tiles.
fn transform(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    opts: &CodegenOptions,
    checks: Option<(&str, &Dependences)>,
) -> Result<(Schedule, bool), CodegenError> {
    let root = tree.get_root().ctx(|| "schedule root".into())?;
    let walk = Walk { ctx, scop, opts, checks, isolated: std::cell::Cell::new(false) };
    let root = walk.visit(root, false, false)?;
    Ok((root.get_schedule().ctx(|| "schedule".into())?, walk.isolated.get()))
}

/// The mark above a band whose first member is parallel, followed by that
/// member's schedule depth (`polytune_parallel_3`): only the loop isl
/// generates for that dimension may get `parallel for`. When the member is
/// constant for some statements, isl generates no loop for it there, and the
/// first loop below the mark belongs to a deeper member that may carry
/// dependences (gramschmidt's `nrm` reduction under a wavefront).
const PARALLEL_MARK: &str = "polytune_parallel";

struct Walk<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    opts: &'a CodegenOptions,
    /// The parameter context and dependences that tiled bands must respect
    /// (`None` only on the test-only unchecked path).
    checks: Option<(&'a str, &'a Dependences)>,
    /// Set when a point band gets an isolate option.
    isolated: std::cell::Cell<bool>,
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
                    node = node.band_tile(mv).ctx(what)?;
                    tiled_here = true;
                    if let Some(order) = &order {
                        let point = node.child(0).ctx(what)?;
                        node = permute(point, order)?.parent().ctx(what)?;
                    }
                    if opts.wavefront != Wavefront::None && !node.band_member_get_coincident(0).ctx(what)? {
                        node = self.wavefront(node)?;
                    }
                    let point_sizes: Vec<i64> = match &order {
                        Some(order) => order.iter().map(|&j| tile_size(sizes, j)).collect(),
                        None => (0..n as usize).map(|j| tile_size(sizes, j)).collect(),
                    };
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
        let children = node.n_children().ctx(what)?;
        for i in 0..children {
            // The point band right below a tile band must not be tiled again.
            node = node.child(i).ctx(what)?;
            node = self.visit(node, in_parallel, tiled_here)?;
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
        let full = prefix.flat_range_product(partial).ctx(what)?;
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
            let parallel = legality::parallel_violations(self.ctx, context, &outer, &rest, deps)?.is_empty();
            node = node.band_member_set_coincident(j as i32, parallel as i32).ctx(what)?;
        }
        Ok(node)
    }

    /// A member flagged coincident must really carry nothing that reaches it
    /// unseparated by the (possibly tiled) outer loops, or OpenMP races.
    fn check_parallel(&self, band: &ScheduleNode) -> Result<(), CodegenError> {
        let Some((context, deps)) = self.checks else { return Ok(()) };
        let what = || "checking a loop before marking it parallel".to_string();
        let prefix = band.get_prefix_schedule_union_map().ctx(what)?;
        let partial = band.band_get_partial_schedule_union_map().ctx(what)?;
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
        let prefix = band.get_prefix_schedule_union_map().ctx(what)?;
        let partial = band.band_get_partial_schedule_union_map().ctx(what)?;
        let v = legality::band_violations(self.ctx, context, &prefix, &partial, deps)?;
        if v.is_empty() {
            Ok(())
        } else {
            Err(CodegenError::Illegal(v))
        }
    }
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
    let point = tile.child(0).ctx(what)?;
    if point.get_type().ctx(what)? != ScheduleNodeType::Band || point.band_n_member().ctx(what)? as u32 != n {
        return Ok((point.parent().ctx(what)?, false));
    }
    let isolate = with_budget(&ctx, ISOLATE_OPS, || full_tile_option(&point, d, n, point_sizes));
    let Some(Some(isolate)) = isolate else { return Ok((point.parent().ctx(what)?, false)) };
    let mut point = point.band_set_ast_build_options(UnionSet::from_set(isolate).ctx(what)?).ctx(what)?;
    for k in 0..n as i32 {
        point = point.band_member_set_isolate_ast_loop_type(k, ASTLoopType::Separate).ctx(what)?;
    }
    Ok((point.parent().ctx(what)?, true))
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
                let call = node.user_get_expr().ctx(what)?.to_C_str().ctx(what)?.to_string();
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
        "{{ /* polytune: SCoP of {} */\n  void polytune_rt_start(void);\n  void polytune_rt_stop(void);\n  \
         void polytune_rt_dump(const char *, const char *, const void *, unsigned long);\n  \
         polytune_rt_start();\n  {{\n{code}\n  }}\n  polytune_rt_stop();\n{dumps}}}\n",
        scop.function
    );
    let (a, b) = scop.span;
    Ok(format!("{}{}{}", &source.text[..a], region, &source.text[b..]))
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
    for a in scop.arrays.iter().filter(|a| a.written) {
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
        let mut loops =
            Printer { out: String::new(), indent: 2, call_prefix: DUMP_PREFIX, iterators: prefix.clone() };
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
