//! Shared-memory promotion inside a kernel (ppcg's model, TACO 2013 §4):
//! the kernel's sequential loops are tiled, and at each tile of them the
//! block's threads first copy what the tile reads of an array into a
//! `__shared__` buffer, together and with consecutive threads on
//! consecutive addresses, then compute from the buffer, a barrier between
//! the two phases and one after.
//!
//! The kernel's mapped band (block and thread members) is sunk to the
//! leaves first, so that the loops of one thread run inside the tile loops
//! of the block: legal because every member of that band is coincident
//! (dependences within a launch join instances of equal values there).
//! Copies and barriers are statements of their own, grafted into the tree
//! as extension nodes at the tile loop (`polytune_shared_in_…`,
//! `polytune_barrier_…`); their domains are the block's, not the thread's,
//! so every thread of a block reaches every barrier.
//!
//! A buffer holds the box isl bounds the tile's footprint by
//! (`get_range_simple_fixed_box_hull`), indexed by each subscript modulo
//! the box's extent along it: any run of at most that many consecutive
//! values lands on distinct slots, so no offset needs computing where a
//! statement reads. An array is promoted where it is read and not written
//! in the kernel, where the block reuses what it reads (more than one
//! reference, or one that reads an element for several instances), where
//! every use in the statements' text is subscripted in full, and while the
//! buffers fit the block's budget.

use isl_rs::{
    ASTLoopType, Context, DimType, Id, MultiVal, ScheduleNode, ScheduleNodeType, Set, UnionMap, UnionSet, Val,
};
use model::deps::Dependences;
use model::isl::IslResultExt;
use model::scop::{Access, Scop};

use super::super::footprint::{
    copy_args, copy_graft, element_bytes, footprint, read_groups, retargeted, statements, uses_of,
    written_in, Bodies,
};
use super::super::isolate::{full_tile_option, ISOLATE_OPS};
use super::super::marks::BARRIER;
use super::super::print::MACRO_PREFIX;
use super::super::CodegenError;
use model::isl::within_budget;

/// A block's shared memory, in bytes: what CUDA gives a block's static
/// `__shared__` arrays.
pub(crate) const BUDGET: usize = 48 * 1024;

/// Marks the point band of a tiled inner band until its copies are grafted.
const STAGE_MARK: &str = "polytune_stage";

/// The copy statements' names: `polytune_shared_in_3` copies for buffer 3.
pub(crate) const COPY: &str = "shared_in_";

/// What promotion added to one kernel.
#[derive(Debug, Clone, Default)]
pub(crate) struct Promotion {
    /// Each buffer's declaration without `__shared__`:
    /// `double polytune_shared_0[32][32]`.
    pub buffers: Vec<String>,
    /// Macros defined before the kernel's code (copies, barriers, the
    /// statements that read buffers) and what restores them after.
    pub prelude: String,
    pub postlude: String,
    /// Barriers grafted.
    pub barriers: usize,
    /// Each thread's private arrays (`private`): element type, name and
    /// dimensions (`[4][4]`).
    pub privates: Vec<(String, String, String)>,
    /// The statements whose macros read buffers or private arrays, with
    /// their new bodies.
    pub bodies: Bodies,
    /// The helpers of each contraction summed on tensor cores (`mma`).
    pub mma: Vec<Helpers>,
}

/// Helpers a kernel's code calls that differ between its two forms (the
/// tensor cores' of a contraction, `mma`): the emulation's (macros, defined
/// inside the emulated launch and undefined after it) and the device's
/// (functions of the `.cu` unit).
#[derive(Debug, Clone, Default)]
pub(crate) struct Helpers {
    pub emulated: String,
    pub undef: String,
    pub device: String,
}

/// A buffer a stage's copies fill ([`stage_copies`]): its name, the
/// extents of its box, its bytes and the references it serves.
pub(crate) struct Staged<'s> {
    pub buffer: String,
    pub extents: Vec<i64>,
    pub bytes: usize,
    pub refs: Vec<&'s Access>,
}

/// What runs at each stage once its copies are grafted (`mma`'s tensor
/// cores): given the stage's point band, its buffers, where their
/// declarations start in `promotion.buffers`, the promotion and the
/// block's shared bytes so far, it returns a node at or above the band.
pub(crate) type AfterCopies<'f, 's> = &'f dyn Fn(
    ScheduleNode,
    (&[Staged<'s>], usize),
    &mut Promotion,
    &mut usize,
) -> Result<ScheduleNode, CodegenError>;

/// How to promote.
pub(crate) struct Config<'a> {
    pub scop: &'a Scop,
    /// Tile sizes of the kernel's members, outermost first, the last
    /// repeating; the sequential members inside take those after the
    /// `mapped` ones.
    pub sizes: &'a [u32],
    pub mapped: usize,
    /// Threads along each mapped member, outermost first (the innermost is
    /// `polytune_t0`, CUDA's x).
    pub threads: &'a [i64],
    /// One thread's instances (`polytune_t…` as parameters).
    pub thread_filter: &'a UnionSet,
    /// Each instance's thread indices.
    pub thread_of: &'a UnionMap,
    /// How many points of its tile each thread runs along each mapped
    /// member with threads (tile size over block extent); the sunk loops
    /// over them are unrolled where few.
    pub points: &'a [i64],
    /// Leave out barrier number `n` (a test that the emulation notices).
    pub drop_barrier: Option<usize>,
    /// With `gpu_mma=on` (and the dependences to check with): contractions
    /// summed on tensor cores (`mma`), with the dependences that
    /// decide where their sums may wait and the kernel's number.
    pub mma: Option<(&'a Dependences, usize)>,
}

/// The kernel whose mapped band is `band` (in a tree filtered to one
/// block, not yet to one thread) prepared for promotion: its inner bands
/// tiled into stages, the mapped band sunk below them and each sunk copy
/// filtered to one thread. Returns the mapped band's position.
pub(crate) fn prepare(ctx: &Context, band: ScheduleNode, cfg: &Config) -> Result<ScheduleNode, CodegenError> {
    let what = || "promoting to shared memory".to_string();
    let inner = band.child(0).ctx(what)?;
    let inner =
        if has_band(&inner)? { stage_inner_bands(ctx, inner, cfg)? } else { insert_stage(ctx, inner)? };
    let band = inner.parent().ctx(what)?.band_sink().ctx(what)?;
    filter_threads(band, cfg)
}

/// Copies into shared buffers, and barriers, at every stage [`prepare`]
/// marked below `band`, then what `after` adds there; returns the root of
/// the new tree.
pub(crate) fn stage<'s>(
    ctx: &Context,
    band: ScheduleNode,
    cfg: &Config<'s>,
    promotion: &mut Promotion,
    after: AfterCopies<'_, 's>,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "promoting to shared memory".to_string();
    let written = written_in(cfg.scop, &band.get_domain().ctx(what)?)?;
    let mut root = band.root().ctx(what)?;
    let mut buffer_bytes = 0usize;
    while let Some(mark) = super::super::marks::find_mark(root.copy().ctx(what)?, STAGE_MARK)? {
        let point = isolate_full_stage(mark.delete().ctx(what)?, cfg)?;
        let first = promotion.buffers.len();
        let (point, staged) = stage_copies(ctx, point, cfg, &written, promotion, &mut buffer_bytes)?;
        let point = match staged.is_empty() {
            true => point,
            false => after(point, (&staged, first), promotion, &mut buffer_bytes)?,
        };
        root = point.root().ctx(what)?;
    }
    Ok(root)
}

impl Promotion {
    /// The statement macros redefined, before the kernel, for the bodies
    /// promotion rewrote, and restored after it.
    pub(crate) fn close(&mut self, scop: &Scop) {
        let (prelude, postlude) = self.bodies.redefine(scop);
        self.prelude.push_str(&prelude);
        self.postlude.push_str(&postlude);
    }
}

/// The thread filter above each sunk copy of the mapped band (a band over
/// a leaf): the loops around it stay the block's, so that every thread
/// runs them, its barriers and its share of the copies, and each thread's
/// own instances are picked only where they run. Returns a node at
/// `node`'s position.
fn filter_threads(node: ScheduleNode, cfg: &Config) -> Result<ScheduleNode, CodegenError> {
    let what = || "filtering a kernel's threads".to_string();
    let kind = node.get_type().ctx(what)?;
    if kind == ScheduleNodeType::Band
        && node.n_children().ctx(what)? == 1
        && node.get_child(0).ctx(what)?.get_type().ctx(what)? == ScheduleNodeType::Leaf
    {
        let mut node = node;
        for (m, &p) in cfg.points.iter().enumerate() {
            if (2..=MOST_UNROLLED).contains(&p) {
                node = node.band_member_set_ast_loop_type(m as i32, ASTLoopType::Unroll).ctx(what)?;
            }
        }
        return Ok(node.insert_filter(cfg.thread_filter.copy().ctx(what)?).ctx(what)?);
    }
    let mut node = node;
    for i in 0..node.n_children().ctx(what)? {
        node = filter_threads(node.child(i).ctx(what)?, cfg)?.parent().ctx(what)?;
    }
    Ok(node)
}

/// A thread's points along one member are unrolled up to this many.
const MOST_UNROLLED: i64 = 8;

/// A thread's copies into one buffer are unrolled up to this many.
const MOST_COPIES: i64 = 16;

fn has_band(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "looking for bands".to_string();
    if node.get_type().ctx(what)? == ScheduleNodeType::Band {
        return Ok(true);
    }
    for i in 0..node.n_children().ctx(what)? {
        if has_band(&node.get_child(i).ctx(what)?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn insert_stage(ctx: &Context, node: ScheduleNode) -> Result<ScheduleNode, CodegenError> {
    let what = || "marking a stage".to_string();
    let id = Id::read_from_str(ctx, STAGE_MARK).ctx(what)?;
    Ok(node.insert_mark(id).ctx(what)?)
}

/// Tiles the first band on each path below `node` (its first member only
/// where the band is not permutable) and marks its point band as a stage;
/// returns a node at `node`'s position.
fn stage_inner_bands(
    ctx: &Context,
    mut node: ScheduleNode,
    cfg: &Config,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "tiling a kernel's inner loops".to_string();
    if node.get_type().ctx(what)? == ScheduleNodeType::Band {
        let mut n = node.band_n_member().ctx(what)? as usize;
        if n == 0 {
            return Ok(node);
        }
        if n > 1 && !node.band_get_permutable().ctx(what)? {
            node = node.band_split(1).ctx(what)?;
            n = 1;
        }
        let mut sizes = MultiVal::zero(node.band_get_space().ctx(what)?).ctx(what)?;
        for m in 0..n {
            sizes =
                sizes.set_val(m as i32, Val::int_from_si(ctx, stage_size(cfg, m)).ctx(what)?).ctx(what)?;
        }
        let tile = node.band_tile(sizes).ctx(what)?;
        let staged = insert_stage(ctx, tile.child(0).ctx(what)?)?;
        return Ok(staged.parent().ctx(what)?);
    }
    for i in 0..node.n_children().ctx(what)? {
        node = stage_inner_bands(ctx, node.child(i).ctx(what)?, cfg)?.parent().ctx(what)?;
    }
    Ok(node)
}

/// The tile size of member `m` of a kernel's inner band (after the
/// mapped members' sizes).
fn stage_size(cfg: &Config, m: usize) -> i64 {
    i64::from(cfg.sizes.get(cfg.mapped + m).or(cfg.sizes.last()).copied().unwrap_or(32).max(1))
}

/// Full tiles of a stage's point band `point` (tiled by `stage_inner_bands`,
/// the mapped band sunk below it) isolated: in them the point loops run
/// from 0 to the tile size (gemm's `k` loop without `min(15, nk - c0 - 1)`),
/// which the compiler unrolls. Returns the node at `point`.
fn isolate_full_stage(point: ScheduleNode, cfg: &Config) -> Result<ScheduleNode, CodegenError> {
    let what = || "isolating a stage's full tiles".to_string();
    if point.get_type().ctx(what)? != ScheduleNodeType::Band {
        return Ok(point);
    }
    let n = point.band_n_member().ctx(what)? as usize;
    let d = point.get_schedule_depth().ctx(what)? as usize - n;
    let sizes: Vec<i64> = (0..n).map(|m| stage_size(cfg, m)).collect();
    let option = within_budget(&point.get_ctx(), ISOLATE_OPS, || {
        full_tile_option(&point, d as u32, n as u32, &sizes)
    })?;
    Ok(match option.flatten() {
        Some(isolate) => {
            point.band_set_ast_build_options(UnionSet::from_set(isolate).ctx(what)?).ctx(what)?
        }
        None => point,
    })
}

/// Copies into buffers, and barriers, around the point band `point` (a
/// stage) for the arrays its statements read with reuse; returns the node
/// at `point`'s position and the buffers, in the order of their
/// declarations (appended to `promotion.buffers`).
fn stage_copies<'s>(
    ctx: &Context,
    mut point: ScheduleNode,
    cfg: &Config<'s>,
    written: &[String],
    promotion: &mut Promotion,
    buffer_bytes: &mut usize,
) -> Result<(ScheduleNode, Vec<Staged<'s>>), CodegenError> {
    let what = || "staging a tile in shared memory".to_string();
    let domain = point.get_domain().ctx(what)?;
    let names = statements(&domain)?;
    let prefix = point.get_prefix_schedule_union_map().ctx(what)?;
    let stmts: Vec<_> = cfg.scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    let (mut copies, mut staged) = (Vec::new(), Vec::new());
    for array in &cfg.scop.arrays {
        // A struct member's uses are not spelled `name[...]`: never promoted.
        if array.rank() == 0 || array.is_struct_member() || written.contains(&array.name) {
            continue;
        }
        let Some(bytes) = element_bytes(&array.element_type) else { continue };
        let groups = read_groups(ctx, &prefix, &domain, &stmts, &array.name)?;
        for group in groups {
            let Some((relation, footprint, extents)) = footprint(ctx, &prefix, &domain, &group)? else {
                continue;
            };
            // Reuse within the block: several references, or one that
            // reads an element for several instances.
            if group.len() == 1 && relation.is_injective().ctx(what)? {
                continue;
            }
            let need = extents.iter().product::<i64>() as usize * bytes;
            if *buffer_bytes + need > BUDGET {
                continue;
            }
            let buffer = format!("{MACRO_PREFIX}shared_{}", promotion.buffers.len() + copies.len());
            let uses = uses_of(&stmts, &group, &promotion.bodies);
            let slots: Vec<(i64, i64)> = extents.iter().map(|&e| (1, e)).collect();
            let subscript = |d: usize, e: &str| slot(e, slots[d]);
            let Some((texts, factor)) =
                retargeted(cfg.scop, array, written, &uses, &buffer, slots.len(), subscript)
            else {
                continue;
            };
            for (name, body) in texts {
                promotion.bodies.set(name, body);
            }
            *buffer_bytes += need;
            let dims: Vec<String> = extents.iter().map(|e| format!("[{e}]")).collect();
            let refs = group.iter().map(|(a, _)| *a).collect();
            staged.push(Staged { buffer: buffer.clone(), extents: extents.clone(), bytes: need, refs });
            copies.push((array, factor, buffer, extents, footprint, dims.concat()));
        }
    }
    if copies.is_empty() {
        return Ok((point, staged));
    }
    let n_prefix = prefix.copy().ctx(what)?.range().ctx(what)?;
    let n_prefix = Set::from_union_set(n_prefix).ctx(what)?;
    let depth = n_prefix.dim(DimType::Set).ctx(what)? as usize;
    let threads = cfg.threads.iter().product::<i64>().max(1);
    for (array, factor, buffer, extents, footprint, dims) in copies {
        let number = promotion.buffers.len();
        let name = format!("{COPY}{number}");
        let rank = array.rank();
        let tuple = footprint.get_tuple_name(DimType::Out).ctx(what)?.to_string();
        let mine = footprint.intersect_range(distribution(ctx, &tuple, rank, cfg.threads)?).ctx(what)?;
        // A thread's few copies unrolled: its loads are then issued
        // together, not each after the last one's store (the copy loop's
        // trip count depends on the thread's index).
        let each = (extents.iter().product::<i64>() + threads - 1) / threads;
        point = point.graft_before(copy_graft(ctx, mine, &name, each <= MOST_COPIES)?).ctx(what)?;
        let (as_, all) = copy_args(depth, rank);
        let slots: String = as_.iter().zip(&extents).map(|(a, &e)| slot(a, (1, e))).collect();
        let subscripts: String = as_.iter().map(|a| format!("[({a})]")).collect();
        let factor = factor.map_or(String::new(), |f| format!("{f} * "));
        promotion.prelude.push_str(&format!(
            "#define {MACRO_PREFIX}{name}({all}) {buffer}{slots} = {factor}{}{subscripts}\n",
            array.name
        ));
        promotion.postlude.push_str(&format!("#undef {MACRO_PREFIX}{name}\n"));
        promotion.buffers.push(format!("{} {buffer}{dims}", array.element_type.trim()));
    }
    // Barriers: after the copies, and after the computation (before the
    // next tile's copies overwrite what a slower thread still reads).
    let values = n_prefix.identity().ctx(what)?;
    for after in [false, true] {
        let number = promotion.barriers;
        promotion.barriers += 1;
        let name = format!("{BARRIER}{number}");
        promotion.prelude.push_str(&format!("#define {MACRO_PREFIX}{name}(...) __syncthreads()\n"));
        promotion.postlude.push_str(&format!("#undef {MACRO_PREFIX}{name}\n"));
        if cfg.drop_barrier == Some(number) {
            continue;
        }
        let ext = values.copy().ctx(what)?.set_tuple_name(DimType::Out, &name).ctx(what)?;
        let graft = ScheduleNode::from_extension(UnionMap::from_map(ext).ctx(what)?).ctx(what)?;
        point = match after {
            false => point.graft_before(graft).ctx(what)?,
            true => point.graft_after(graft).ctx(what)?,
        };
    }
    Ok((point, staged))
}

/// The subscript of a buffer's slot for the array's subscript `e`:
/// `(unsigned long) (e) / divisor % extent`. Any `extent` consecutive
/// multiples of `divisor` (plus one offset) land on distinct slots.
pub(crate) fn slot(e: &str, (divisor, extent): (i64, i64)) -> String {
    match divisor {
        1 => format!("[(unsigned long) ({e}) % {extent}]"),
        d => format!("[(unsigned long) ({e}) / {d} % {extent}]"),
    }
}

/// The elements of array `tuple` (isl's name, rank `rank`) that thread
/// `(polytune_t…)` copies: the last subscript modulo the block's x extent
/// is its x index (consecutive threads, consecutive addresses), the one
/// before modulo y its y index, and so on; a thread dimension beyond the
/// array's rank copies only at index 0.
fn distribution(ctx: &Context, tuple: &str, rank: usize, threads: &[i64]) -> Result<Set, CodegenError> {
    let what = || "distributing a copy over threads".to_string();
    let n = threads.len();
    let ts: Vec<String> = (0..n).map(|i| format!("polytune_t{i}")).collect();
    let as_: Vec<String> = (0..rank).map(|d| format!("a{d}")).collect();
    let mut conds = Vec::new();
    for i in 0..n {
        // Thread index i is member n - 1 - i; its block extent.
        let b = threads[n - 1 - i];
        match rank.checked_sub(1 + i) {
            Some(d) => conds.push(format!("a{d} mod {b} = polytune_t{i}")),
            None => conds.push(format!("polytune_t{i} = 0")),
        }
    }
    let cond = if conds.is_empty() { "true".to_string() } else { conds.join(" and ") };
    let text = format!("[{}] -> {{ {tuple}[{}] : {cond} }}", ts.join(", "), as_.join(", "));
    Ok(Set::read_from_str(ctx, &text).ctx(what)?)
}

#[cfg(test)]
mod tests {
    use super::super::super::footprint;
    use super::*;
    use model::scop::text::squeeze;

    fn retarget(
        body: &str,
        array: &str,
        buffer: &str,
        slots: &[(i64, i64)],
        refs: &[String],
    ) -> Option<String> {
        footprint::retarget(body, array, buffer, slots.len(), refs, |d, e| slot(e, slots[d]))
    }

    #[test]
    fn uses_of_the_array_read_the_buffer_modulo_its_extents() {
        let b = "C[(i)][(j)] += alpha * A[(i)][(k)] * B[(k)][(j)]";
        let a = [squeeze("A[(i)][ (k)]")];
        assert_eq!(
            retarget(b, "A", "sh", &[(1, 32), (1, 8)], &a).as_deref(),
            Some("C[(i)][(j)] += alpha * sh[(unsigned long) ((i)) % 32][(unsigned long) ((k)) % 8] * B[(k)][(j)]")
        );
        // Only the references of the group: syrk's two tiles of A.
        let syrk = "C[(i)][(j)] += A[(i)][(k)] * A[(j)][(k)]";
        assert_eq!(
            retarget(syrk, "A", "s", &[(1, 4), (1, 4)], &[squeeze("A[(j)][(k)]")]).as_deref(),
            Some("C[(i)][(j)] += A[(i)][(k)] * s[(unsigned long) ((j)) % 4][(unsigned long) ((k)) % 4]")
        );
        // Not subscripted in full, or a member named like the array.
        let x = [squeeze("A[(i)]")];
        assert_eq!(retarget("f(A)", "A", "s", &[(1, 4)], &x), None);
        assert_eq!(retarget("x = A[(i)]", "A", "s", &[(1, 4), (1, 4)], &x), None);
        assert_eq!(retarget("x = A[(i)][1][2]", "A", "s", &[(1, 4), (1, 4)], &x), None);
        assert_eq!(retarget("x = p.A + AB[1]", "A", "s", &[(1, 4)], &x).as_deref(), Some("x = p.A + AB[1]"));
    }

    #[test]
    fn consecutive_threads_copy_consecutive_elements() {
        let ctx = model::isl::new_context();
        let s = distribution(&ctx, "A", 2, &[8, 32]).unwrap();
        let t = s.to_str().unwrap().to_string();
        assert!(t.contains("polytune_t0") && t.contains("polytune_t1"), "{t}");
        let one = distribution(&ctx, "x", 1, &[8, 32]).unwrap().to_str().unwrap().to_string();
        assert!(one.contains("polytune_t1 = 0"), "{one}");
    }
}
