//! FP64 tensor cores for contractions (`gpu_mma=on`). Where a kernel's
//! stage runs a statement that the model shows to be a contraction,
//! `W[r][c] += X[r][k] * Y[k][c]` (either operand possibly transposed, scalar
//! factors allowed), and shared promotion left its body reading both
//! operands from the stage's buffers with the factors folded into them, the
//! block's tile of `W` is summed by its warps in `nvcuda::wmma` fragments of
//! 8 × 8 × 4 doubles (sm_80 and later) instead of by each thread:
//!
//! - each warp owns a warp tile of `WM × WN` elements of the block's
//!   `Ti × Tj` tile, its accumulators zeroed before the stage loop;
//! - in each stage, after the copies' barrier, every warp loads its operands'
//!   fragments from the buffers (whose layout is what `load_matrix_sync`
//!   reads: row-major where `k` is the last subscript, column-major where it
//!   is the first) and multiplies, one call per step of 4 along `k`;
//! - after the stage loop, each warp stores its accumulators into a staging
//!   tile (a union with the stage's buffers, dead by then), and after a
//!   barrier each thread adds the elements it owns to `W` where the
//!   statement wrote them (its private copy, where private promotion made
//!   one), which the existing write-back then copies out.
//!
//! A step (warp tile × 4 values of `k`) runs where, for every element of
//! the tile that the statement writes at all, the statement runs at all
//! four values of `k`; the other instances (the last partial step, a
//! triangle's ragged edge) stay the threads' own, as without the knob.
//! Rows and columns of a step outside the statement's elements (a partial
//! block, a triangle's diagonal tiles) are computed from stale buffer slots
//! and never added. Deferring the sums to the end of the stage loop is legal
//! where no other statement of that loop depends on the contraction
//! (memory-based, `Dependences`): its other instances, the reduction itself,
//! only change the order of the additions.
//!
//! The kernels' code calls the same helpers in both forms; only the
//! helpers differ. On the GPU they are `wmma` calls; in the emulation (C for
//! the CPU, [`Helpers::emulated`]) a fragment of accumulators holds the two
//! elements its lane owns (row `lane / 4`, columns `2 (lane % 4)` and
//! `2 (lane % 4) + 1`, as PTX lays out `mma.m8n8k4.f64`), and each lane adds,
//! to each of its elements, the four products of a step in the order of `k`,
//! reading the operands from the buffers. So the emulation computes each
//! element of gemm's `C` as `beta * C` (the statement before), plus the
//! products no step covers (the threads' own, in the order of `k`), plus
//! the fragment's sum `(((0 + p0) + p1) + p2) ...` of the others, added one
//! by one in the order of `k`; the GPU's tensor cores round their steps
//! otherwise, and verification allows for it (the sums are reassociated).

use isl_rs::{Context, DimType, Map, ScheduleNode, ScheduleNodeType, Set, UnionMap, UnionSet};
use model::deps::DepKind;
use model::isl::IslResultExt;
use model::scop::text::{accumulation, squeeze};
use model::scop::{Access, AccessKind, Scop, Statement};

mod text;

use super::super::footprint::{copy_graft, copy_graft_loops, footprint, statements};
use super::super::marks::BARRIER;
use super::super::print::{parenthesize, statement_body, MACRO_PREFIX};
use super::super::CodegenError;
use super::shared::{Config, Promotion, Staged, BUDGET};
use text::{helpers, macros, Names};

/// The most fragments of accumulators one warp holds (two doubles of each
/// per thread): 16 are 64 registers.
const MOST_FRAGMENTS: i64 = 16;

/// The C type of a fragment of accumulators in both forms.
pub(crate) const ACC_TYPE: &str = "polytune_mma_acc";

/// The emulation's fragment of accumulators: the two elements a lane owns.
pub(crate) const EMULATED_ACC: &str = "typedef struct { double x[2]; } polytune_mma_acc;\n";

/// The device's: a `wmma` accumulator of 8 × 8 doubles (`<mma.h>`).
pub(crate) const DEVICE_ACC: &str =
    "typedef nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 8, 8, 4, double> polytune_mma_acc;\n";

/// A statement that the model shows to be a contraction: three loops, one
/// write `W[r][c]`, a single product of `X` (subscripted by `r` and `k`)
/// and `Y` (by `k` and `c`) and scalars added to it; all of them doubles.
pub(crate) struct Contraction<'s> {
    pub stmt: &'s Statement,
    pub write: &'s Access,
    pub x: &'s Access,
    pub y: &'s Access,
    /// Positions in the statement's tuple of the row, column and summed
    /// iterators.
    pub r: usize,
    pub c: usize,
    pub k: usize,
    /// `X[k][r]` (column-major for the fragment load) rather than `X[r][k]`;
    /// `Y[k][c]` (row-major) rather than `Y[c][k]`.
    pub x_k_first: bool,
    pub y_k_first: bool,
}

/// Whether some statement of `scop` is a contraction ([`contraction`]):
/// where none is, `gpu_mma=on` makes the programs `off` makes.
pub fn has_contraction(ctx: &Context, scop: &Scop) -> Result<bool, CodegenError> {
    for s in &scop.statements {
        if contraction(ctx, scop, s)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The arrays the contractions among the statements of `domain` write.
pub(crate) fn targets(ctx: &Context, scop: &Scop, domain: &UnionSet) -> Result<Vec<String>, CodegenError> {
    let names = statements(domain)?;
    let mut out = Vec::new();
    for s in scop.statements.iter().filter(|s| names.contains(&s.name)) {
        if let Some(con) = contraction(ctx, scop, s)? {
            out.push(con.write.array.clone());
        }
    }
    Ok(out)
}

/// `s` as a contraction, from its accesses and its text; `None` where it
/// is not one.
pub(crate) fn contraction<'s>(
    ctx: &Context,
    scop: &Scop,
    s: &'s Statement,
) -> Result<Option<Contraction<'s>>, CodegenError> {
    let double = |name: &str, rank: usize| {
        scop.arrays.iter().any(|a| {
            a.name == name
                && a.rank() == rank
                && a.element_type.trim() == "double"
                && !a.linearised
                && !a.is_struct_member()
        })
    };
    if s.iterators.len() != 3 || s.accesses.iter().any(|a| a.may.is_some()) {
        return Ok(None);
    }
    let writes: Vec<&Access> = s.accesses.iter().filter(|a| a.kind == AccessKind::Write).collect();
    let [write] = writes[..] else { return Ok(None) };
    let Some([r, c]) = subscripts(ctx, s, write)?.and_then(|v| <[usize; 2]>::try_from(v).ok()) else {
        return Ok(None);
    };
    if r == c || !double(&write.array, 2) {
        return Ok(None);
    }
    let k = 3 - r - c;
    let (mut x, mut y) = (None, None);
    for a in s.accesses.iter().filter(|a| a.kind == AccessKind::Read) {
        if double(&a.array, 0) {
            continue;
        }
        if !double(&a.array, 2) {
            return Ok(None);
        }
        let subs = subscripts(ctx, s, a)?.unwrap_or_default();
        match subs[..] {
            [p, q] if a.array == write.array && (p, q) == (r, c) => {}
            _ if a.array == write.array => return Ok(None),
            [p, q] if (p, q) == (r, k) || (p, q) == (k, r) => x = x.or(Some((a, p == k))),
            [p, q] if (p, q) == (k, c) || (p, q) == (c, k) => y = y.or(Some((a, p == k))),
            _ => return Ok(None),
        }
    }
    let (Some((x, x_k_first)), Some((y, y_k_first))) = (x, y) else { return Ok(None) };
    // The text: `W += s * X * Y` (in any order), nothing else.
    let body = statement_body(s);
    let Some(sum) = accumulation(&body) else { return Ok(None) };
    let spelled = |a: &Access| squeeze(&parenthesize(&a.text, &s.c_iterators));
    let [(false, factors)] = &sum.terms[..] else { return Ok(None) };
    let mut found: Vec<String> = factors.iter().map(|f| squeeze(f)).filter(|f| !double(f, 0)).collect();
    let mut wanted = vec![spelled(x), spelled(y)];
    wanted.sort();
    found.sort();
    if found != wanted || squeeze(sum.target) != spelled(write) {
        return Ok(None);
    }
    Ok(Some(Contraction { stmt: s, write, x, y, r, c, k, x_k_first, y_k_first }))
}

/// Each subscript of `a` as the position of the iterator it equals, where
/// every subscript is a plain iterator of `s`.
fn subscripts(ctx: &Context, s: &Statement, a: &Access) -> Result<Option<Vec<usize>>, CodegenError> {
    let what = || format!("the subscripts of {}", a.text);
    let domain = Set::read_from_str(ctx, &s.domain).ctx(what)?;
    let map = Map::read_from_str(ctx, &a.relation).ctx(what)?.intersect_domain(domain).ctx(what)?;
    let (n_in, n_out) = (map.dim(DimType::In).ctx(what)?, map.dim(DimType::Out).ctx(what)?);
    let mut out = Vec::new();
    for p in 0..n_out {
        let mut found = None;
        for q in 0..n_in {
            let equal = map.copy().ctx(what)?.equate(DimType::In, q, DimType::Out, p).ctx(what)?;
            if equal.is_equal(&map).ctx(what)? {
                found = Some(q as usize);
                break;
            }
        }
        match found {
            Some(q) => out.push(q),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The stage at its point band `point` (copies and barriers grafted) with
/// its contraction, if one applies, summed on tensor cores; `staged`: the
/// stage's buffers, declared from `promotion.buffers[first..]`. Returns a
/// node at or above `point`; where nothing applies, `point` as it was.
pub(crate) fn contract(
    ctx: &Context,
    point: ScheduleNode,
    cfg: &Config,
    promotion: &mut Promotion,
    (staged, first): (&[Staged], usize),
    buffer_bytes: &mut usize,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "summing a contraction on tensor cores".to_string();
    let Some((deps, _)) = cfg.mma else { return Ok(point) };
    let names = statements(&point.get_domain().ctx(what)?)?;
    for s in cfg.scop.statements.iter().filter(|s| names.contains(&s.name)) {
        let Some(con) = contraction(ctx, cfg.scop, s)? else { continue };
        let Some(plan) = plan(ctx, &point, cfg, promotion, staged, &con)? else { continue };
        // The staging tile shares the stage's buffers' memory (a union).
        let stage_bytes: usize = staged.iter().map(|b| b.bytes).sum();
        let extra = ((plan.ti * plan.tj) as usize * 8).saturating_sub(stage_bytes);
        if *buffer_bytes + extra > BUDGET || !deferrable(ctx, &point, &con, deps)? {
            continue;
        }
        *buffer_bytes += extra;
        return apply(ctx, point, cfg, promotion, (staged, first), &con, plan);
    }
    Ok(point)
}

/// How a contraction runs on a stage: the block's tile, the warps' tiles,
/// the operands' buffers and layouts, and the instances the warps sum.
struct Plan {
    ti: i64,
    tj: i64,
    tk: i64,
    /// Warp tiles of `wm × wn`, `wc` of them along a row of the block's tile
    /// and `warps` in all (the block's warps beyond them idle).
    wm: i64,
    wn: i64,
    wc: i64,
    warps: i64,
    /// The operands' buffers.
    x_buffer: String,
    y_buffer: String,
    /// The element the statement adds to, as its body (rewritten) spells it.
    target: String,
    /// The statement's instances the warps sum.
    covered: UnionSet,
    /// From the point band's outer schedule values to the warps' steps
    /// `[k0, m0, n0]`, each thread's own (its warp's).
    steps: Map,
    /// From the stage loop's outer schedule values to the elements of `W`
    /// each thread adds the warps' sums to.
    adds: Map,
}

/// The plan for `con` at the stage `point`, or `None` where its body does
/// not read both operands from the stage's buffers, their boxes or the
/// block's threads do not fit fragments, or the steps do not fall one per
/// stage and one warp tile per warp.
fn plan(
    ctx: &Context,
    point: &ScheduleNode,
    cfg: &Config,
    promotion: &Promotion,
    staged: &[Staged],
    con: &Contraction,
) -> Result<Option<Plan>, CodegenError> {
    let what = || "planning a contraction on tensor cores".to_string();
    let body = promotion.bodies.current(con.stmt);
    let Some(sum) = accumulation(&body) else { return Ok(None) };
    let [(false, factors)] = &sum.terms[..] else { return Ok(None) };
    let buffer_of = |a: &Access| {
        staged.iter().find(|b| b.refs.iter().any(|r| std::ptr::eq(*r, a)) && b.extents.len() == 2)
    };
    let (Some(xb), Some(yb)) = (buffer_of(con.x), buffer_of(con.y)) else { return Ok(None) };
    let reads = |b: &Staged| factors.iter().filter(|f| f.starts_with(&format!("{}[", b.buffer))).count();
    if factors.len() != 2 || xb.buffer == yb.buffer || reads(xb) != 1 || reads(yb) != 1 {
        return Ok(None);
    }
    let k_name = &con.stmt.c_iterators[con.k];
    if parenthesize(sum.target, std::slice::from_ref(k_name)) != sum.target {
        return Ok(None);
    }
    // The block's tile of `W`: the box of its elements over the stage loop.
    let tile = enclosing_band(point)?;
    let tile_prefix = tile.get_prefix_schedule_union_map().ctx(what)?;
    let domain = UnionSet::read_from_str(ctx, &con.stmt.domain).ctx(what)?;
    let context = Set::read_from_str(ctx, &cfg.scop.context).ctx(what)?;
    let domain = domain.intersect_params(context).ctx(what)?;
    let in_tile = tile.get_domain().ctx(what)?.intersect(domain.copy().ctx(what)?).ctx(what)?;
    let write = [(con.write, con.stmt.c_iterators.as_slice())];
    let Some((_, _, block)) = footprint(ctx, &tile_prefix, &in_tile, &write)? else { return Ok(None) };
    let (ti, tj) = (block[0], block[1]);
    let along = |b: &Staged, k_first: bool| {
        if k_first {
            (b.extents[0], b.extents[1])
        } else {
            (b.extents[1], b.extents[0])
        }
    };
    let (xk, xr) = along(xb, con.x_k_first);
    let (yk, yc) = along(yb, con.y_k_first);
    if xr != ti || yc != tj || xk != yk || xk % 4 != 0 || ti % 8 != 0 || tj % 8 != 0 {
        return Ok(None);
    }
    let Some((wm, wn, wc, warps)) = warp_tiles(ti, tj, cfg.threads.iter().product()) else { return Ok(None) };
    let Some((covered, steps)) = steps(ctx, point, cfg, con, &domain, (ti, tj, wm, wn, wc))? else {
        return Ok(None);
    };
    // What each thread adds: the elements it owns of those the warps summed.
    let mine = tile.get_domain().ctx(what)?.intersect(covered.copy().ctx(what)?).ctx(what)?;
    let mine = mine.intersect(cfg.thread_filter.copy().ctx(what)?).ctx(what)?;
    let Some((_, adds, _)) = footprint(ctx, &tile_prefix, &mine, &write)? else { return Ok(None) };
    Ok(Some(Plan {
        ti,
        tj,
        tk: xk,
        wm,
        wn,
        wc,
        warps,
        x_buffer: xb.buffer.clone(),
        y_buffer: yb.buffer.clone(),
        target: sum.target.to_string(),
        covered,
        steps,
        adds,
    }))
}

/// The band above `node` (a stage's tile band above its point band).
fn enclosing_band(node: &ScheduleNode) -> Result<ScheduleNode, CodegenError> {
    let what = || "finding a stage's tile loop".to_string();
    let mut n = node.copy().ctx(what)?.parent().ctx(what)?;
    while n.get_type().ctx(what)? != ScheduleNodeType::Band {
        n = n.parent().ctx(what)?;
    }
    Ok(n)
}

/// Whether a band of the kernel encloses `node` (none does above the
/// kernel's mark: host loops launch the kernel anew).
fn in_loop(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "finding the loops around a stage loop".to_string();
    let mut n = node.copy().ctx(what)?;
    while n.has_parent().ctx(what)? {
        n = n.parent().ctx(what)?;
        match n.get_type().ctx(what)? {
            ScheduleNodeType::Band => return Ok(true),
            ScheduleNodeType::Mark => return Ok(false),
            _ => {}
        }
    }
    Ok(false)
}

/// Warp tiles for a block's tile of `ti × tj` and `threads` threads: as
/// many warps busy as the tile's fragments allow (each warp's tile whole
/// fragments, its rows and columns as close as they come), at most
/// [`MOST_FRAGMENTS`] a warp. `(wm, wn, wc, warps)`: a warp tile's rows and
/// columns, warp tiles along a row of the block's tile, busy warps.
fn warp_tiles(ti: i64, tj: i64, threads: i64) -> Option<(i64, i64, i64, i64)> {
    if threads % 32 != 0 || threads == 0 {
        return None;
    }
    let (fm, fn_) = (ti / 8, tj / 8);
    type Tiles = (i64, i64, i64, i64);
    let mut best: Option<((i64, i64, i64), Tiles)> = None;
    for wr in (1..=fm).filter(|w| fm % w == 0) {
        for wc in (1..=fn_).filter(|w| fn_ % w == 0 && wr * w <= threads / 32) {
            let (m, n) = (fm / wr, fn_ / wc);
            // Busy warps first, then square warp tiles, then wide ones.
            let key = (wr * wc, -(m - n).abs(), n);
            if m * n <= MOST_FRAGMENTS && best.as_ref().is_none_or(|(k, _)| key > *k) {
                best = Some((key, (8 * m, 8 * n, wc, wr * wc)));
            }
        }
    }
    best.map(|(_, tiles)| tiles)
}

/// The instances of `con` the warps sum at the stage `point`, and the map
/// from the point band's outer schedule values to each thread's steps
/// `mma[k0, m0, n0]` (its warp's tile, 4 values of `k` from `k0`); `None`
/// where no step applies, a step spans two stages, or two warp tiles of a
/// block would fall to one warp. `domain`: the statement's instances.
fn steps(
    ctx: &Context,
    point: &ScheduleNode,
    cfg: &Config,
    con: &Contraction,
    domain: &UnionSet,
    (ti, tj, wm, wn, wc): (i64, i64, i64, i64, i64),
) -> Result<Option<(UnionSet, Map)>, CodegenError> {
    let what = || "the steps of a contraction on tensor cores".to_string();
    let (name, r, c, k) = (&con.stmt.name, con.r, con.c, con.k);
    let tuple = format!("{name}[x0, x1, x2]");
    let umap = |text: String| UnionMap::read_from_str(ctx, &text).ctx(what);
    // The step of 4 × wm × wn instances at [k0, m0, n0].
    let of_step = umap(format!(
        "{{ mma[k0, m0, n0] -> {tuple} : k0 mod 4 = 0 and m0 mod {wm} = 0 and n0 mod {wn} = 0 and \
         m0 <= x{r} < m0 + {wm} and n0 <= x{c} < n0 + {wn} and k0 <= x{k} < k0 + 4 }}"
    ))?;
    let same_element = umap(format!("{{ {tuple} -> {name}[y0, y1, y2] : y{r} = x{r} and y{c} = x{c} }}"))?;
    let to_step = of_step.copy().ctx(what)?.reverse().ctx(what)?;
    // Instances missing at some `k` of an element the statement writes.
    let missing = domain.copy().ctx(what)?.apply(same_element).ctx(what)?.subtract(domain.copy().ctx(what)?);
    let bad = missing.ctx(what)?.apply(to_step.copy().ctx(what)?).ctx(what)?;
    let valid =
        domain.copy().ctx(what)?.apply(to_step.copy().ctx(what)?).ctx(what)?.subtract(bad).ctx(what)?;
    let covered = valid.copy().ctx(what)?.apply(of_step).ctx(what)?.intersect(domain.copy().ctx(what)?);
    let covered = covered.ctx(what)?;
    let here = point.get_domain().ctx(what)?.intersect(covered.copy().ctx(what)?).ctx(what)?;
    if here.is_empty().ctx(what)? {
        return Ok(None);
    }
    let step_of =
        to_step.intersect_domain(here.copy().ctx(what)?).ctx(what)?.intersect_range(valid).ctx(what)?;
    let prefix = point.get_prefix_schedule_union_map().ctx(what)?.intersect_domain(here).ctx(what)?;
    let steps = prefix.reverse().ctx(what)?.apply_range(step_of).ctx(what)?;
    // One stage a step; one warp tile of a block a warp.
    let one_stage = steps.copy().ctx(what)?.reverse().ctx(what)?.is_single_valued().ctx(what)?;
    let place = umap(format!("{{ mma[k0, m0, n0] -> [k0, a, b] : a = m0 mod {ti} and b = n0 mod {tj} }}"))?;
    let in_block = place.intersect_domain(steps.copy().ctx(what)?.range().ctx(what)?).ctx(what)?;
    if !one_stage || !in_block.is_injective().ctx(what)? {
        return Ok(None);
    }
    let n = cfg.threads.len();
    let ts: Vec<String> = (0..n).map(|i| format!("polytune_t{i}")).collect();
    let warp = format!(
        "[{}] -> {{ mma[k0, m0, n0] : exists (qm, qn : {wm} * qm = m0 mod {ti} and {wn} * qn = n0 mod {tj} and \
         32 * ({wc} * qm + qn) <= {lin} <= 32 * ({wc} * qm + qn) + 31) }}",
        ts.join(", "),
        lin = linear_thread(cfg.threads)
    );
    let warp = UnionSet::read_from_str(ctx, &warp).ctx(what)?;
    let steps = Map::from_union_map(steps.intersect_range(warp).ctx(what)?).ctx(what)?;
    Ok(Some((covered, steps)))
}

/// A thread's index in its block as CUDA numbers warps: `t0 + Bx (t1 + By t2)`.
fn linear_thread(threads: &[i64]) -> String {
    let n = threads.len();
    let mut out = String::new();
    let mut stride = 1;
    for i in 0..n {
        let term = if stride == 1 { format!("polytune_t{i}") } else { format!("{stride} * polytune_t{i}") };
        out = if out.is_empty() { term } else { format!("{out} + {term}") };
        stride *= threads[n - 1 - i];
    }
    if out.is_empty() {
        "0".to_string()
    } else {
        out
    }
}

/// Whether the statement's sums may wait in fragments until its stage loop
/// ends: no other statement's instance in that loop depends on one of its
/// instances (its own instances only accumulate, in another order).
fn deferrable(
    ctx: &Context,
    point: &ScheduleNode,
    con: &Contraction,
    deps: &model::deps::Dependences,
) -> Result<bool, CodegenError> {
    let what = || "whether a contraction's sums may wait".to_string();
    let tile = enclosing_band(point)?.get_domain().ctx(what)?;
    let mine = UnionSet::read_from_str(ctx, &con.stmt.domain).ctx(what)?;
    let mine = tile.copy().ctx(what)?.intersect(mine.universe().ctx(what)?).ctx(what)?;
    let others = tile.subtract(mine.copy().ctx(what)?).ctx(what)?;
    for d in deps.deps.iter().filter(|d| matches!(d.kind, DepKind::Raw | DepKind::War | DepKind::Waw)) {
        let rel = UnionMap::read_from_str(ctx, &d.relation).ctx(what)?;
        let rel = rel.intersect_domain(mine.copy().ctx(what)?).ctx(what)?;
        if !rel.intersect_range(others.copy().ctx(what)?).ctx(what)?.is_empty().ctx(what)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The plan applied at the stage `point`: the steps grafted after the
/// copies' barrier and the instances they sum filtered out of the point
/// band; around the stage loop, the accumulators zeroed before it and,
/// after it, stored, a barrier, added to `W`, a barrier (before another
/// stage overwrites the staging tile); the macros, the buffers' union and
/// the accumulators recorded in `promotion`. Returns the stage loop.
fn apply(
    ctx: &Context,
    point: ScheduleNode,
    cfg: &Config,
    promotion: &mut Promotion,
    (staged, first): (&[Staged], usize),
    con: &Contraction,
    plan: Plan,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "summing a contraction on tensor cores".to_string();
    let kernel = cfg.mma.map_or(0, |(_, k)| k);
    let names = Names::new(format!("{kernel}_{}", promotion.mma.len()));
    let unroll = plan.tk / 4 <= 16;
    let graft = copy_graft_loops(ctx, plan.steps.copy().ctx(what)?, &names.step, 3, unroll)?;
    let point = point.graft_before(graft).ctx(what)?;
    let rest = point.get_domain().ctx(what)?.subtract(plan.covered.copy().ctx(what)?).ctx(what)?;
    let point = point.insert_filter(rest).ctx(what)?;
    let mut tile = enclosing_band(&point)?;
    let prefix = tile.get_prefix_schedule_union_map().ctx(what)?.range().ctx(what)?;
    let prefix = Set::from_union_set(prefix).ctx(what)?;
    let depth = prefix.dim(DimType::Set).ctx(what)? as usize;
    let lin = linear_thread(cfg.threads);
    // Statements every thread of a busy warp runs once per stage loop.
    let busy = |name: &str| -> Result<ScheduleNode, CodegenError> {
        let ts: Vec<String> = (0..cfg.threads.len()).map(|i| format!("polytune_t{i}")).collect();
        let ds: Vec<String> = (0..depth).map(|d| format!("d{d}")).collect();
        let warps = Set::read_from_str(
            ctx,
            &format!("[{}] -> {{ {name}[{}] : {lin} < {} }}", ts.join(", "), ds.join(", "), 32 * plan.warps),
        )
        .ctx(what)?;
        let ext =
            prefix.copy().ctx(what)?.identity().ctx(what)?.set_tuple_name(DimType::Out, name).ctx(what)?;
        let ext = ext.intersect_range(warps).ctx(what)?;
        Ok(ScheduleNode::from_extension(UnionMap::from_map(ext).ctx(what)?).ctx(what)?)
    };
    tile = tile.graft_before(busy(&names.zero)?).ctx(what)?;
    let (mut barriers, mut defined) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let number = promotion.barriers;
        promotion.barriers += 1;
        let name = format!("{BARRIER}{number}");
        defined.push((format!("{name}(...)"), "__syncthreads()".to_string()));
        if cfg.drop_barrier != Some(number) {
            let ext = prefix.copy().ctx(what)?.identity().ctx(what)?;
            let ext = ext.set_tuple_name(DimType::Out, &name).ctx(what)?;
            barriers.push(Some(ScheduleNode::from_extension(UnionMap::from_map(ext).ctx(what)?).ctx(what)?));
        } else {
            barriers.push(None);
        }
    }
    // Grafted after the loop in reverse: each goes right after it. The
    // last barrier only where a loop of the kernel runs the stage loop
    // again (its copies would overwrite the staging tile).
    let again = barriers.pop().flatten().filter(|_| in_loop(&tile).unwrap_or(true));
    let add = copy_graft(ctx, plan.adds.copy().ctx(what)?, &names.add, true)?;
    let after = [again, Some(add), barriers.pop().flatten(), Some(busy(&names.store)?)];
    for graft in after.into_iter().flatten() {
        tile = tile.graft_after(graft).ctx(what)?;
    }
    let step_depth = plan.steps.dim(DimType::In).ctx(what)? as usize;
    defined.extend(macros(&names, con, &plan, (step_depth, depth), staged, &lin));
    for (name, body) in defined {
        promotion.prelude.push_str(&format!("#define {MACRO_PREFIX}{name} {body}\n"));
        let bare = name.split('(').next().unwrap_or(&name);
        promotion.postlude.push_str(&format!("#undef {MACRO_PREFIX}{bare}\n"));
    }
    let members: Vec<String> = promotion.buffers.drain(first..).map(|b| format!("{b}; ")).collect();
    promotion.buffers.push(format!(
        "union {{ struct {{ {}}} polytune_in; double polytune_out[{}][{}]; }} {} __attribute__((aligned(32)))",
        members.concat(),
        plan.ti,
        plan.tj,
        names.smem
    ));
    let fragments = plan.wm / 8 * (plan.wn / 8);
    promotion.privates.push((ACC_TYPE.to_string(), names.acc.clone(), format!("[{fragments}]")));
    promotion.mma.push(helpers(&names, con, &plan));
    Ok(tile)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel's contractions, as `W+=X*Y` with each operand's
    /// subscripts in order (`r`, `c`, `k`).
    fn contractions(path: &str) -> Vec<String> {
        let k = testkit::load(path, "MINI");
        let ctx = model::isl::new_context();
        let mut out = Vec::new();
        for s in &k.scop.statements {
            if let Some(c) = contraction(&ctx, &k.scop, s).unwrap() {
                let order = |k_first: bool, other: &str| {
                    if k_first {
                        format!("k{other}")
                    } else {
                        format!("{other}k")
                    }
                };
                out.push(format!(
                    "{} {}+={}[{}]*{}[{}]",
                    s.name,
                    c.write.array,
                    c.x.array,
                    order(c.x_k_first, "r"),
                    c.y.array,
                    order(c.y_k_first, "c")
                ));
            }
        }
        out
    }

    #[test]
    fn contractions_are_read_from_the_statements_accesses_and_text() {
        assert_eq!(contractions("linear-algebra/gemm.c"), ["S2 C+=A[rk]*B[kc]"]);
        assert_eq!(contractions("linear-algebra/2mm.c"), ["S2 tmp+=A[rk]*B[kc]", "S4 D+=tmp[rk]*C[kc]"]);
        assert_eq!(contractions("linear-algebra/3mm.c").len(), 3);
        // syrk's `A[i][k] * A[j][k]`: one array, read as both operands.
        assert_eq!(contractions("linear-algebra/syrk.c"), ["S2 C+=A[rk]*A[ck]"]);
        // symm's `C[k][j] += alpha * B[i][j] * A[i][k]`, summed along `i`.
        assert_eq!(contractions("linear-algebra/symm.c"), ["S2 C+=A[kr]*B[kc]"]);
        // covariance's upper triangle, `cov[i][j] += data[k][i] * data[k][j]`.
        assert_eq!(contractions("datamining/covariance.c"), ["S6 cov+=data[kr]*data[kc]"]);
        // Two products (syr2k), the written array read as an operand
        // (trmm, lu), a difference (cholesky), vectors (atax), stencils: none.
        for path in [
            "linear-algebra/syr2k.c",
            "linear-algebra/trmm.c",
            "linear-algebra/lu.c",
            "linear-algebra/cholesky.c",
            "linear-algebra/atax.c",
            "stencils/jacobi-2d.c",
        ] {
            assert!(contractions(path).is_empty(), "{path}: {:?}", contractions(path));
        }
    }

    #[test]
    fn warp_tiles_take_whole_fragments_and_as_many_warps_as_they_can() {
        // 64 × 64 over 8 warps: tiles of 16 × 32 (8 fragments each).
        assert_eq!(warp_tiles(64, 64, 256), Some((16, 32, 2, 8)));
        // 16 × 16 has 4 fragments: 4 of 8 warps busy.
        assert_eq!(warp_tiles(16, 16, 256), Some((8, 8, 2, 4)));
        // 32 × 32 over 32 warps: 16 busy.
        assert_eq!(warp_tiles(32, 32, 1024), Some((8, 8, 4, 16)));
        // Too many fragments a warp, or threads that are not whole warps.
        assert_eq!(warp_tiles(64, 64, 32), None);
        assert_eq!(warp_tiles(16, 16, 48), None);
        assert_eq!(linear_thread(&[4, 16]), "polytune_t0 + 16 * polytune_t1");
        assert_eq!(linear_thread(&[2, 4, 8]), "polytune_t0 + 8 * polytune_t1 + 32 * polytune_t2");
    }
}
