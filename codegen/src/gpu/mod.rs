//! The GPU mapping of a schedule tree (RR-9110 §4.8, as ppcg maps): the
//! outermost band whose leading members are coincident becomes a kernel;
//! up to two of those members are spread over thread blocks (one block per
//! tile of `T` iterations) and up to three over a block's threads
//! (iterations congruent modulo the block size), through a filter on the
//! statement instances. The loops above a kernel stay in host code, which
//! launches it once per iteration (a stencil's time loop); a subtree with
//! no coincident member at all runs as a kernel of one thread.
//!
//! Each kernel is generated on its own, for one launch: the tree restricted
//! to the instances under the host loops' current values, which are
//! parameters (`polytune_h0`, ...), as are the block and thread indices
//! (`polytune_b0`, `polytune_t0`) and the first tile of each block
//! dimension (`polytune_o0`). The host computes that offset and the grid's
//! extent from isl's bounds on the tile index.
//!
//! A mapping is checked apart from the coincidence flags that chose it:
//! every dependence between instances of one launch must join instances of
//! the same block and thread (`legality::mapping_violations`). A kernel
//! whose check fails drops its threads, then its blocks.

pub mod cuda;
pub(super) mod mma;
mod private;
pub(super) mod shared;
pub(super) mod variant;

use super::ast::{c_condition, c_expr};
use super::isolate::ISOLATE_OPS;
use super::marks::{find_mark, KERNEL_MARK};
use super::CodegenError;
use isl_rs::{
    Context, Id, MultiUnionPwAff, PwAff, Schedule, ScheduleNode, ScheduleNodeType, Set, UnionMap, UnionPwAff,
    UnionSet, Val,
};
use model::deps::Dependences;
use model::isl::within_budget;
use model::isl::IslResultExt;
use model::legality;
use model::scop::Scop;

/// CUDA's limits on a block: threads in all, and along z.
const MAX_THREADS: i64 = 1024;
const MAX_Z: i64 = 64;

/// One kernel: what its launches need and its code for one launch.
pub(super) struct Kernel {
    pub shape: Shape,
    /// The map from the statement instances below the kernel's mark to
    /// the outer (host) schedule dimensions, as isl text.
    pub prefix: String,
    /// The tree of one launch, and the parameter context to generate it in.
    pub tree: Schedule,
    pub context: String,
    /// Shared-memory buffers, copies and barriers, where any.
    pub promotion: Option<shared::Promotion>,
    /// Where blocks are full, the context to generate their code in and its
    /// C condition: the kernel's code is versioned on it (`full_blocks`).
    pub full: Option<(String, String)>,
}

/// A kernel's grid and blocks.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    /// Schedule depth of the kernel: its host dimensions are the outer `depth`.
    pub depth: usize,
    /// Tile size of each block dimension, outermost member first.
    pub tiles: Vec<i64>,
    /// Block size of each thread dimension, outermost member first; the
    /// innermost is `polytune_t0` (CUDA's x, the stride-one loop of
    /// row-major code).
    pub threads: Vec<i64>,
    /// For each block dimension, its first and last tile index: C
    /// expressions in the parameters and the `polytune_h` host values.
    pub range: Vec<(String, String)>,
    /// The block's shared buffers (`double polytune_shared_0[32][32]`).
    pub buffers: Vec<String>,
    /// Each thread's private arrays: type, name, dimensions.
    pub privates: Vec<(String, String, String)>,
    /// The kernel has barriers: its emulated body holds its own loops over
    /// the block's threads, one per phase (`Printer::phased`).
    pub phased: bool,
    /// The helpers of its contractions on tensor cores (`mma`).
    pub mma: Vec<shared::Helpers>,
}

/// The tree with a `KERNEL_MARK` above every kernel (host code prints a
/// launch there), and the kernels in mark order. `sizes` are the tile sizes
/// of block dimensions, outermost first, the last repeating; a block has at
/// most `block` threads (0: CUDA's limit). With `checks`, each mapping is
/// checked against the dependences. With `promote`, what blocks reuse is
/// staged in shared memory (`shared`).
pub(super) struct Mapping<'a> {
    pub sizes: &'a [u32],
    pub block: u32,
    pub checks: Option<&'a Dependences>,
    pub promote: Option<&'a Scop>,
    /// Points of its tile each thread runs along each member (0: one).
    pub points: i64,
    /// Leave out this barrier (fault injection for the emulation's tests).
    pub drop_barrier: Option<usize>,
    /// Kernels (by mark number) left without promotion: host code launches
    /// them more than once for one host iteration ([`split_launches`]).
    pub unpromoted: Vec<usize>,
    /// Contractions on FP64 tensor cores where they apply (`gpu_mma`; with
    /// `checks` only: the dependences decide where).
    pub mma: bool,
}

pub(super) fn map(
    ctx: &Context,
    context: &str,
    tree: Schedule,
    mapping: &Mapping,
) -> Result<(Schedule, Vec<Kernel>), CodegenError> {
    let (sizes, checks) = (mapping.sizes, mapping.checks);
    let what = || "mapping to the GPU".to_string();
    let block = match mapping.block {
        0 => MAX_THREADS,
        n => i64::from(n).min(MAX_THREADS),
    };
    let mut coincident = Vec::new();
    let root = mark(tree.get_root().ctx(what)?, &mut coincident)?;
    let host = root.get_schedule().ctx(what)?;
    let mut kernels = Vec::new();
    for (k, &j) in coincident.iter().enumerate() {
        let at = find_mark(host.get_root().ctx(what)?, &format!("{KERNEL_MARK}_{k}"))?
            .ok_or_else(|| CodegenError::Unsupported(format!("kernel {k}: its mark went missing")))?;
        kernels.push(kernel(ctx, context, &at, j, sizes, block, checks, mapping, k)?);
    }
    Ok((host, kernels))
}

/// The promoted kernels that host code launches more than once for one
/// host iteration, each launch with part of its instances: isl may
/// generate one iteration apart (random program 748: the first, where only
/// some statements run; `atomic` host loops keep each statement in one
/// piece, not each iteration). A launch stages and copies out what its
/// block's whole tile needs, so a thread's private copy of `B` went out
/// from a launch that never computed it. `occurrences`: each launch site's
/// kernel and instances (`build_annotated_ast`).
pub(super) fn split_launches(
    ctx: &Context,
    kernels: &[Kernel],
    occurrences: &[(usize, String)],
) -> Result<Vec<usize>, CodegenError> {
    let what = || "finding kernels launched twice for one host iteration".to_string();
    let mut seen: Vec<Option<UnionSet>> = (0..kernels.len()).map(|_| None).collect();
    let mut split = Vec::new();
    for (k, instances) in occurrences {
        let Some(kernel) = kernels.get(*k) else { continue };
        if kernel.promotion.is_none() || split.contains(k) {
            continue;
        }
        let prefix = UnionMap::read_from_str(ctx, &kernel.prefix).ctx(what)?;
        let host = UnionSet::read_from_str(ctx, instances).ctx(what)?.apply(prefix).ctx(what)?;
        match seen[*k].take() {
            None => seen[*k] = Some(host),
            Some(earlier) => {
                let overlap = earlier.copy().ctx(what)?.intersect(host.copy().ctx(what)?).ctx(what)?;
                match overlap.is_empty().ctx(what)? {
                    true => seen[*k] = Some(earlier.union(host).ctx(what)?),
                    false => split.push(*k),
                }
            }
        }
    }
    Ok(split)
}

/// Marks the kernels below `node`, recording each one's number of leading
/// coincident members; returns a node at the same position.
fn mark(mut node: ScheduleNode, coincident: &mut Vec<usize>) -> Result<ScheduleNode, CodegenError> {
    let what = || "choosing kernels".to_string();
    let kind = node.get_type().ctx(what)?;
    if kind == ScheduleNodeType::Band {
        let n = node.band_n_member().ctx(what)? as usize;
        let flags = (0..n).map(|k| node.band_member_get_coincident(k as i32)).collect::<Result<Vec<_>, _>>();
        let flags = flags.ctx(what)?;
        match flags.iter().position(|&c| c) {
            // Leading coincident members: the kernel's; the rest run inside it.
            Some(0) => {
                let j = flags.iter().take_while(|&&c| c).count();
                if j < n {
                    node = node.band_split(j as i32).ctx(what)?;
                }
                return insert_mark(node, coincident, j);
            }
            // Sequential members first: they stay on the host.
            Some(first) => {
                node = node.band_split(first as i32).ctx(what)?;
                let inner = mark(node.child(0).ctx(what)?, coincident)?;
                return Ok(inner.parent().ctx(what)?);
            }
            None => {}
        }
    }
    let structural = matches!(
        kind,
        ScheduleNodeType::Domain
            | ScheduleNodeType::Filter
            | ScheduleNodeType::Sequence
            | ScheduleNodeType::Set
    );
    if !structural && !has_coincident(&node)? {
        return insert_mark(node, coincident, 0);
    }
    for i in 0..node.n_children().ctx(what)? {
        node = mark(node.child(i).ctx(what)?, coincident)?.parent().ctx(what)?;
    }
    Ok(node)
}

fn insert_mark(
    node: ScheduleNode,
    coincident: &mut Vec<usize>,
    j: usize,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "marking a kernel".to_string();
    let id = Id::read_from_str(&node.get_ctx(), &format!("{KERNEL_MARK}_{}", coincident.len())).ctx(what)?;
    coincident.push(j);
    Ok(node.insert_mark(id).ctx(what)?)
}

/// Whether some band in the subtree at `node` has a coincident member.
fn has_coincident(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "looking for parallelism".to_string();
    if node.get_type().ctx(what)? == ScheduleNodeType::Band {
        for k in 0..node.band_n_member().ctx(what)? {
            if node.band_member_get_coincident(k).ctx(what)? {
                return Ok(true);
            }
        }
    }
    for i in 0..node.n_children().ctx(what)? {
        if has_coincident(&node.get_child(i).ctx(what)?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Promotes in the kernel whose mapped band is `band` (in a tree filtered
/// to one block, not yet to one thread): private arrays first, then shared
/// buffers at each stage. Returns the root of the new tree and what was
/// added, or `None` where nothing was promoted (the caller keeps its tree).
/// With `gpu_mma=on`, first without private copies of the arrays that
/// contractions write (their sums wait in the warps' fragments, which
/// take those registers), kept where a contraction runs on tensor cores;
/// else as without the knob.
fn promote(
    ctx: &Context,
    band: ScheduleNode,
    cfg: &shared::Config,
) -> Result<Option<(ScheduleNode, shared::Promotion)>, CodegenError> {
    let what = || "promoting a kernel's arrays".to_string();
    if cfg.mma.is_some() {
        let sums = mma::targets(ctx, cfg.scop, &band.get_domain().ctx(what)?)?;
        if !sums.is_empty() {
            if let Some((root, p)) = promote_keeping(ctx, band.copy().ctx(what)?, cfg, &sums)? {
                if !p.mma.is_empty() {
                    return Ok(Some((root, p)));
                }
            }
        }
    }
    promote_keeping(ctx, band, &shared::Config { mma: None, ..*cfg }, &[])
}

/// [`promote`], the arrays `public` left without private copies.
fn promote_keeping(
    ctx: &Context,
    band: ScheduleNode,
    cfg: &shared::Config,
    public: &[String],
) -> Result<Option<(ScheduleNode, shared::Promotion)>, CodegenError> {
    let band = shared::prepare(ctx, band, cfg)?;
    let mut promotion = shared::Promotion::default();
    let band = private::promote(ctx, band, cfg, public, &mut promotion)?;
    let tensor_cores =
        |point, staged: (&[shared::Staged], usize), promotion: &mut shared::Promotion, bytes: &mut usize| {
            mma::contract(ctx, point, cfg, promotion, staged, bytes)
        };
    let root = shared::stage(ctx, band, cfg, &mut promotion, &tensor_cores)?;
    if promotion.buffers.is_empty() && promotion.privates.is_empty() {
        return Ok(None);
    }
    promotion.close(cfg.scop);
    Ok(Some((root, promotion)))
}

fn param(ctx: &Context, domain: &UnionSet, name: &str) -> Result<UnionPwAff, CodegenError> {
    let what = || format!("the parameter {name}");
    let id = Id::read_from_str(ctx, name).ctx(what)?;
    Ok(UnionPwAff::param_on_domain_id(domain.copy().ctx(what)?, id).ctx(what)?)
}

fn val(ctx: &Context, v: i64) -> Result<Val, CodegenError> {
    Ok(Val::int_from_si(ctx, v).ctx(|| "a constant".to_string())?)
}

/// Block sizes for the thread dimensions of tiles `tiles` (outermost
/// first): each a divisor of its tile size (so that a tile's iterations
/// split evenly), the innermost as large as possible (with `points`, at
/// most its tile over `points`: each thread runs that many points along
/// it), at most `block` threads in all and within CUDA's limit along z.
fn block_sizes(tiles: &[i64], block: i64, points: i64) -> Vec<i64> {
    let mut left = block;
    let mut out = vec![1; tiles.len()];
    for (pos, k) in (0..tiles.len()).rev().enumerate() {
        let cap = if pos == 2 { left.min(MAX_Z) } else { left };
        // `points` per thread along each member: a register tile.
        let want = if points > 0 { (tiles[k] / points).max(1) } else { tiles[k] };
        let b = (1..=want.min(cap)).rev().find(|b| tiles[k] % b == 0).unwrap_or(1);
        out[k] = b;
        left /= b;
    }
    out
}

/// The first and last value of `tile` (one launch's tile index along a
/// block dimension) as C expressions under `host` (the SCoP's context with
/// the host values). Where the launch has no instance (its statements'
/// conditions on the parameters fail) the bounds are undefined: the grid
/// is empty there, and everywhere when no parameter values run every
/// statement (the region then runs the original code).
fn tile_range(ctx: &Context, host: Set, tile: UnionPwAff) -> Result<(String, String), CodegenError> {
    let what = || "the grid of a kernel".to_string();
    if host.is_empty().ctx(what)? {
        return Ok(("0".into(), "-1".into()));
    }
    let host_context = host.to_str().ctx(what)?.to_string();
    let values = UnionMap::from_union_pw_aff(tile).ctx(what)?.range().ctx(what)?;
    let values = Set::from_union_set(values).ctx(what)?;
    let everywhere = |pa: PwAff, default: i64| -> Result<String, CodegenError> {
        let rest = host.copy().ctx(what)?.subtract(pa.copy().ctx(what)?.domain().ctx(what)?).ctx(what)?;
        let pa = match rest.is_empty().ctx(what)? {
            true => pa,
            false => pa.union_add(PwAff::val_on_domain(rest, val(ctx, default)?).ctx(what)?).ctx(what)?,
        };
        c_expr(ctx, &host_context, pa)
    };
    let lo = everywhere(values.copy().ctx(what)?.dim_min(0).ctx(what)?, 0)?;
    let hi = everywhere(values.dim_max(0).ctx(what)?, -1)?;
    Ok((lo, hi))
}

/// The kernel `number` under the mark `at`, whose band has `j` leading
/// coincident members, with blocks of at most `block` threads.
#[allow(clippy::too_many_arguments)]
fn kernel(
    ctx: &Context,
    context: &str,
    at: &ScheduleNode,
    j: usize,
    sizes: &[u32],
    block: i64,
    checks: Option<&Dependences>,
    mapping: &Mapping,
    number: usize,
) -> Result<Kernel, CodegenError> {
    let promoted = !mapping.unpromoted.contains(&number);
    let what = || "building a kernel".to_string();
    let depth = at.get_schedule_depth().ctx(what)? as usize;
    let domain = at.get_domain().ctx(what)?;
    // One launch: the host loops' values as parameters.
    let mut launch = domain.copy().ctx(what)?;
    let prefix = at.get_prefix_schedule_multi_union_pw_aff().ctx(what)?;
    for d in 0..depth {
        let h = param(ctx, &domain, &format!("polytune_h{d}"))?;
        let eq = prefix.get_at(d as i32).ctx(what)?.sub(h).ctx(what)?.zero_union_set().ctx(what)?;
        launch = launch.intersect(eq).ctx(what)?;
    }
    let band = at.get_child(0).ctx(what)?;
    let phi = match j {
        0 => None,
        _ => Some(band.band_get_partial_schedule().ctx(what)?),
    };
    let members = Members { ctx, phi, domain: domain.copy().ctx(what)? };
    let all_tiles: Vec<i64> =
        (0..j.min(3)).map(|k| sizes.get(k).or(sizes.last()).copied().unwrap_or(32).max(1) as i64).collect();
    let (mut nb, mut nt) = (j.min(2), j.min(3));
    if let Some(deps) = checks {
        (nb, nt) = members.legal_dimensions(context, at, &all_tiles, (block, mapping.points), deps)?;
    }
    let tiles = all_tiles[..nb].to_vec();
    let threads = block_sizes(&all_tiles[..nt], block, mapping.points);
    // The filters: this block's tile, then this thread's residue.
    let mut block_filter = launch.copy().ctx(what)?;
    let mut thread_filter = launch.copy().ctx(what)?;
    let mut names = Vec::new();
    for (k, &t) in tiles.iter().enumerate() {
        let (o, b) = (format!("polytune_o{k}"), format!("polytune_b{k}"));
        let start = param(ctx, &domain, &o)?.add(param(ctx, &domain, &b)?).ctx(what)?;
        let eq = members.tile_of(k, t)?.sub(start).ctx(what)?.zero_union_set().ctx(what)?;
        block_filter = block_filter.intersect(eq).ctx(what)?;
        names.push(format!("0 <= {b}"));
    }
    for (k, &b) in threads.iter().enumerate() {
        let t = format!("polytune_t{}", threads.len() - 1 - k);
        let eq =
            members.residue_of(k, b)?.sub(param(ctx, &domain, &t)?).ctx(what)?.zero_union_set().ctx(what)?;
        thread_filter = thread_filter.intersect(eq).ctx(what)?;
        names.push(format!("0 <= {t} < {b}"));
    }
    // The first and last tile of each block dimension, for one launch.
    // The SCoP's context, with the host values as parameters too.
    let with_host = || -> Result<Set, CodegenError> {
        let hs: Vec<String> = (0..depth).map(|d| format!("polytune_h{d}")).collect();
        let params = Set::read_from_str(ctx, &format!("[{}] -> {{ : true }}", hs.join(", "))).ctx(what)?;
        Ok(Set::read_from_str(ctx, context).ctx(what)?.intersect_params(params).ctx(what)?)
    };
    let host = with_host()?;
    let mut range = Vec::new();
    for (k, &t) in tiles.iter().enumerate() {
        let q = members.tile_of(k, t)?.intersect_domain(launch.copy().ctx(what)?).ctx(what)?;
        range.push(tile_range(ctx, host.copy().ctx(what)?, q)?);
    }
    let blocked = at.get_child(0).ctx(what)?.insert_filter(block_filter).ctx(what)?;
    let mut promotion = None;
    let mut tree = None;
    if let (Some(scop), true) = (mapping.promote, promoted && !tiles.is_empty() && !threads.is_empty()) {
        let residues =
            threads.iter().enumerate().map(|(k, &b)| members.residue_of(k, b)).collect::<Result<_, _>>()?;
        let thread_of = flat_product(residues)?;
        let points: Vec<i64> = threads.iter().zip(&all_tiles).map(|(b, t)| t / b).collect();
        let cfg = shared::Config {
            scop,
            sizes,
            mapped: j,
            threads: &threads,
            thread_filter: &thread_filter,
            thread_of: &thread_of,
            points: &points,
            drop_barrier: mapping.drop_barrier,
            mma: checks.filter(|_| mapping.mma).map(|deps| (deps, number)),
        };
        if let Some((root, p)) = promote(ctx, blocked.get_child(0).ctx(what)?, &cfg)? {
            tree = Some(root.get_schedule().ctx(what)?);
            promotion = Some(p);
        }
    }
    let tree = match tree {
        Some(t) => t,
        None => {
            blocked.child(0).ctx(what)?.insert_filter(thread_filter).ctx(what)?.get_schedule().ctx(what)?
        }
    };
    let tree = tree.intersect_domain(launch).ctx(what)?;
    let context = with_host()?.intersect_params(mapped_ids(ctx, tiles.len(), threads.len(), &names)?);
    let context = context.ctx(what)?.to_str().ctx(what)?.to_string();
    let prefix = at.get_prefix_schedule_union_map().ctx(what)?.to_str().ctx(what)?.to_string();
    let (buffers, privates, phased, mma) = match &promotion {
        Some(p) => (p.buffers.clone(), p.privates.clone(), p.barriers > 0, p.mma.clone()),
        None => (Vec::new(), Vec::new(), false, Vec::new()),
    };
    let full = match tiles.is_empty() {
        true => None,
        false => {
            let members = (0..tiles.len()).map(|k| members.member(k)).collect::<Result<Vec<_>, _>>()?;
            let launch = tree.get_domain().ctx(what)?;
            within_budget(ctx, ISOLATE_OPS, || full_blocks(ctx, &context, &launch, &members, &tiles))?
                .flatten()
        }
    };
    let shape = Shape { depth, tiles, threads, range, buffers, privates, phased, mma };
    Ok(Kernel { shape, prefix, tree, context, promotion, full })
}

/// A kernel band's members on the kernel's instances (none for a kernel
/// of one thread), and the block (tile) and thread (residue) an instance
/// falls in along each.
struct Members<'a> {
    ctx: &'a Context,
    phi: Option<MultiUnionPwAff>,
    domain: UnionSet,
}

impl Members<'_> {
    fn member(&self, k: usize) -> Result<UnionPwAff, CodegenError> {
        let what = || "building a kernel".to_string();
        let phi = self.phi.as_ref().expect("a mapped kernel has a band");
        Ok(phi.get_at(k as i32).ctx(what)?.intersect_domain(self.domain.copy().ctx(what)?).ctx(what)?)
    }

    /// The block index along member `k`, of tiles of `t`.
    fn tile_of(&self, k: usize, t: i64) -> Result<UnionPwAff, CodegenError> {
        let what = || "building a kernel".to_string();
        Ok(self.member(k)?.scale_down_val(val(self.ctx, t)?).ctx(what)?.floor().ctx(what)?)
    }

    /// The thread index along member `k`, of blocks of `b` threads.
    fn residue_of(&self, k: usize, b: i64) -> Result<UnionPwAff, CodegenError> {
        Ok(self.member(k)?.mod_val(val(self.ctx, b)?).ctx(|| "building a kernel".into())?)
    }

    /// How many members go to blocks and to threads, at most `tiles`'
    /// (two and three): as many as keep every dependence of one launch
    /// inside a block and a thread, dropping the threads first (blocks
    /// alone may still be independent), then the blocks.
    fn legal_dimensions(
        &self,
        context: &str,
        at: &ScheduleNode,
        tiles: &[i64],
        (block, points): (i64, i64),
        deps: &Dependences,
    ) -> Result<(usize, usize), CodegenError> {
        let what = || "building a kernel".to_string();
        let (mut nb, mut nt) = (tiles.len().min(2), tiles.len());
        let host = at.get_prefix_schedule_union_map().ctx(what)?;
        while nb + nt > 0 {
            let threads = block_sizes(&tiles[..nt], block, points);
            let parts = (0..nb)
                .map(|k| self.tile_of(k, tiles[k]))
                .chain((0..nt).map(|k| self.residue_of(k, threads[k])))
                .collect::<Result<Vec<_>, _>>()?;
            let mapped = flat_product(parts)?;
            if legality::mapping_violations(self.ctx, context, &host, &mapped, deps)?.is_empty() {
                break;
            }
            if nt > 0 {
                nt = 0;
            } else {
                nb = 0;
            }
        }
        Ok((nb, nt))
    }
}

/// The map from instances to the tuple of `parts`' values, in order.
fn flat_product(parts: Vec<UnionPwAff>) -> Result<UnionMap, CodegenError> {
    let what = || "building a kernel".to_string();
    let mut out: Option<UnionMap> = None;
    for p in parts {
        let m = UnionMap::from_union_pw_aff(p).ctx(what)?;
        out = Some(match out {
            None => m,
            Some(acc) => acc.flat_range_product(m).ctx(what)?,
        });
    }
    Ok(out.expect("at least one mapped member"))
}

/// The block and thread identifiers of a kernel as parameters, under
/// their bounds `names`.
fn mapped_ids(ctx: &Context, tiles: usize, threads: usize, names: &[String]) -> Result<Set, CodegenError> {
    let ids: Vec<String> = (0..tiles)
        .flat_map(|k| [format!("polytune_o{k}"), format!("polytune_b{k}")])
        .chain((0..threads).map(|k| format!("polytune_t{k}")))
        .collect();
    let bounds = if names.is_empty() { "true".into() } else { names.join(" and ") };
    Ok(Set::read_from_str(ctx, &format!("[{}] -> {{ : {bounds} }}", ids.join(", ")))
        .ctx(|| "building a kernel".to_string())?)
}

/// Full/partial separation at the level of blocks (ppcg's
/// `--isolate-full-tiles` does it per tile loop; a kernel's block is one
/// tile): the blocks whose tile (the box of `tiles` iterations along each
/// block member, `members` on the instances of one launch, `launch`) lies
/// within every statement's iterations. In them, the bounds of the
/// statements' domains say nothing inside the block, and code generated
/// under that assumption has no guards around each point of a thread's
/// register tile (which otherwise keep the compiler from holding the tile's
/// operands in registers across the points). `None` where no block or every
/// block is full; else the context `context` with full blocks, and its C
/// condition.
fn full_blocks(
    ctx: &Context,
    context: &str,
    launch: &UnionSet,
    members: &[UnionPwAff],
    tiles: &[i64],
) -> Result<Option<(String, String)>, CodegenError> {
    let what = || "finding the full blocks".to_string();
    let mut to_members: Option<UnionMap> = None;
    for m in members {
        let m = UnionMap::from_union_pw_aff(m.copy().ctx(what)?).ctx(what)?;
        to_members = Some(match to_members {
            None => m,
            Some(acc) => acc.flat_range_product(m).ctx(what)?,
        });
    }
    let Some(to_members) = to_members else { return Ok(None) };
    let mut params = Vec::new();
    let mut bounds = Vec::new();
    for (k, t) in tiles.iter().enumerate() {
        let start = format!("{t} * (polytune_o{k} + polytune_b{k})");
        params.extend([format!("polytune_o{k}"), format!("polytune_b{k}")]);
        bounds.push(format!("{start} <= x{k} < {start} + {t}"));
    }
    let xs: Vec<String> = (0..tiles.len()).map(|k| format!("x{k}")).collect();
    let text = format!("[{}] -> {{ [{}] : {} }}", params.join(", "), xs.join(", "), bounds.join(" and "));
    let block = Set::read_from_str(ctx, &text).ctx(what)?;
    let context = Set::read_from_str(ctx, context).ctx(what)?;
    // Parameter values where some point of the block lies outside a
    // statement's iterations.
    let mut partial = Set::empty(context.get_space().ctx(what)?).ctx(what)?;
    let sets = launch.get_set_list().ctx(what)?;
    for i in 0..sets.size().ctx(what)? {
        let s = UnionSet::from_set(sets.get_at(i).ctx(what)?).ctx(what)?;
        let iterations = to_members.copy().ctx(what)?.intersect_domain(s).ctx(what)?.range().ctx(what)?;
        let iterations = Set::from_union_set(iterations).ctx(what)?;
        let outside = block.copy().ctx(what)?.subtract(iterations).ctx(what)?.params().ctx(what)?;
        partial = partial.union(outside).ctx(what)?;
    }
    let full = context.copy().ctx(what)?.subtract(partial).ctx(what)?.coalesce().ctx(what)?;
    if full.is_empty().ctx(what)? || context.is_subset(&full).ctx(what)? {
        return Ok(None);
    }
    let text = full.to_str().ctx(what)?.to_string();
    Ok(Some((text, c_condition(ctx, context, full)?)))
}

impl Shape {
    /// `const int polytune_h0 = ...;` for each host dimension, from the
    /// values isl gives at the kernel's mark.
    pub(super) fn host_values(&self, values: &[String]) -> Result<String, CodegenError> {
        if values.len() < self.depth {
            return Err(CodegenError::Unsupported(format!(
                "a kernel at schedule depth {} where isl knows {} outer dimensions",
                self.depth,
                values.len()
            )));
        }
        Ok((0..self.depth).map(|d| format!("  const int polytune_h{d} = {};\n", values[d])).collect())
    }

    /// The launch as plain C, run on the CPU: the grid's blocks and each
    /// block's threads as loops around the kernel's `body`, in reverse
    /// order (so that code relying on an order the GPU does not keep is
    /// more likely to show it). `values`: the outer schedule dimensions'.
    pub(super) fn emulated(&self, body: &str, values: &[String]) -> Result<String, CodegenError> {
        let mut out = String::from("{\n");
        out.push_str(&self.host_values(values)?);
        for (k, (lo, hi)) in self.range.iter().enumerate() {
            out.push_str(&format!("  const long polytune_o{k} = {lo};\n"));
            out.push_str(&format!("  const long polytune_g{k} = ({hi}) - polytune_o{k} + 1;\n"));
        }
        for k in 0..self.tiles.len() {
            out.push_str(&format!(
                "  for (long polytune_b{k} = polytune_g{k} - 1; polytune_b{k} >= 0; polytune_b{k}--)\n"
            ));
        }
        out.push_str("  {\n");
        // Tensor cores' helpers, as the CPU runs them (`mma`).
        if !self.mma.is_empty() {
            out.push_str(mma::EMULATED_ACC);
        }
        for h in &self.mma {
            out.push_str(&h.emulated);
        }
        for b in &self.buffers {
            out.push_str(&format!("  {b};\n"));
        }
        // A thread's private arrays live across the block's phases: one
        // per thread, picked by the thread indices.
        let n = self.threads.len();
        let by_thread: String = self.threads.iter().map(|b| format!("[{b}]")).collect();
        let index: String = (0..n).rev().map(|i| format!("[polytune_t{i}]")).collect();
        for (ty, name, dims) in &self.privates {
            out.push_str(&format!("  {ty} {name}_all{by_thread}{dims};\n"));
            out.push_str(&format!("#define {name} {name}_all{index}\n"));
        }
        if !self.phased {
            for l in self.thread_loops() {
                out.push_str(&format!("  {l}\n"));
            }
        }
        out.push_str("  {\n");
        out.push_str(body);
        out.push_str("  }\n");
        if !self.phased {
            out.push_str(&"  }\n".repeat(self.threads.len()));
        }
        for (_, name, _) in &self.privates {
            out.push_str(&format!("#undef {name}\n"));
        }
        for h in &self.mma {
            out.push_str(&h.undef);
        }
        out.push_str("  }\n}\n");
        Ok(out)
    }

    /// The loops over a block's threads, outermost first, each opening a
    /// brace: member k of n has thread index n - 1 - k.
    pub(super) fn thread_loops(&self) -> Vec<String> {
        let n = self.threads.len();
        (0..n)
            .rev()
            .map(|i| {
                let last = self.threads[n - 1 - i] - 1;
                format!("for (int polytune_t{i} = {last}; polytune_t{i} >= 0; polytune_t{i}--) {{")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_divide_their_tiles_and_stay_within_their_limits() {
        let most = |t: &[i64]| block_sizes(t, MAX_THREADS, 0);
        assert_eq!(most(&[32]), vec![32]);
        assert_eq!(most(&[32, 32]), vec![32, 32]);
        assert_eq!(most(&[32, 32, 32]), vec![1, 32, 32]);
        assert_eq!(most(&[16, 16, 16]), vec![4, 16, 16]);
        assert_eq!(most(&[2048]), vec![1024]);
        assert_eq!(most(&[48, 48]), vec![16, 48]);
        // The gpu_block knob: the innermost dimension first.
        assert_eq!(block_sizes(&[32, 32], 128, 0), vec![4, 32]);
        assert_eq!(block_sizes(&[64], 128, 0), vec![64]);
        assert_eq!(block_sizes(&[256], 64, 0), vec![64]);
        assert_eq!(block_sizes(&[16, 16, 16], 256, 0), vec![1, 16, 16]);
        // The gpu_thread_tile knob: 4 × 4 points per thread.
        assert_eq!(block_sizes(&[64, 64], MAX_THREADS, 4), vec![16, 16]);
        assert_eq!(block_sizes(&[32, 128], 256, 4), vec![8, 32]);
        assert_eq!(block_sizes(&[2, 64], MAX_THREADS, 4), vec![1, 16]);
        for block in [64, 128, 256, 512, MAX_THREADS] {
            for tiles in [vec![8, 64, 128], vec![100, 3], vec![7, 7, 7], vec![32, 32, 32]] {
                let b = block_sizes(&tiles, block, 0);
                assert!(b.iter().product::<i64>() <= block, "{tiles:?} {b:?}");
                assert!(b.iter().zip(&tiles).all(|(b, t)| t % b == 0), "{tiles:?} {b:?}");
            }
        }
    }
}
