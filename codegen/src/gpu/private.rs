//! Private promotion (ppcg's register tiles): an array that a kernel
//! writes, each of whose elements only one thread touches (gemm's `C`,
//! each `C[i][j]` on the thread of its `(i, j)`), lives in a small array of
//! that thread for the whole kernel: copied in at the start (where the
//! kernel reads it), copied out at the end, every reference in between
//! reading and writing the private copy. With the thread's points unrolled
//! (`shared::filter_threads`), its subscripts are constants and the compiler
//! keeps it in registers.
//!
//! A thread's points along a mapped member are `B` apart (its residue
//! modulo the block's extent `B`), so the private array is indexed by each
//! subscript divided by isl's stride of the thread's footprint along it,
//! modulo the footprint's extent in strides: distinct for distinct
//! elements of the footprint, whatever the offset.

use isl_rs::{Context, DimType, ScheduleNode};
use model::isl::IslResultExt;
use model::scop::AccessKind;

use super::super::footprint::{copy_args, copy_graft, copyable, footprint, references};
use super::super::print::MACRO_PREFIX;
use super::super::CodegenError;
use super::shared::{slot, Config, Promotion};

/// The most elements of one thread's private array: registers are few.
const MOST_ELEMENTS: i64 = 64;

/// The statements' names: `polytune_private_in_0` copies private array 0
/// in, `polytune_private_out_0` out.
const COPY_IN: &str = "private_in_";
const COPY_OUT: &str = "private_out_";

/// Promotes, around `top` (the kernel's code, its mapped band sunk and its
/// threads filtered), the arrays each thread has to itself, but `public`;
/// returns the node at `top`'s position.
pub(crate) fn promote(
    ctx: &Context,
    mut top: ScheduleNode,
    cfg: &Config,
    public: &[String],
    promotion: &mut Promotion,
) -> Result<ScheduleNode, CodegenError> {
    let what = || "promoting to private memory".to_string();
    let domain = top.get_domain().ctx(what)?;
    let mine = domain.copy().ctx(what)?.intersect(cfg.thread_filter.copy().ctx(what)?).ctx(what)?;
    let prefix = top.get_prefix_schedule_union_map().ctx(what)?;
    let names = super::super::footprint::statements(&domain)?;
    let stmts: Vec<_> = cfg.scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    for array in &cfg.scop.arrays {
        // A struct member's uses are not spelled `name[...]`: never promoted.
        if !copyable(array) || public.contains(&array.name) {
            continue;
        }
        let refs = references(&stmts, &array.name);
        if !refs.iter().any(|(a, _)| a.kind == AccessKind::Write) {
            continue;
        }
        // Each element on one thread.
        let Some((relation, _, _)) = footprint(ctx, &prefix, &domain, &refs)? else { continue };
        let threads_of =
            relation.reverse().ctx(what)?.apply_range(cfg.thread_of.copy().ctx(what)?).ctx(what)?;
        if !threads_of.is_single_valued().ctx(what)? {
            continue;
        }
        let Some((_, tiles, extents)) = footprint(ctx, &prefix, &mine, &refs)? else { continue };
        let mut slots = Vec::new();
        for (d, &e) in extents.iter().enumerate() {
            let stride = tiles.get_range_stride_info(d as i32).ctx(what)?.get_stride().ctx(what)?;
            let stride = stride.get_num_si().ctx(what)?.max(1);
            slots.push((stride, (e + stride - 1) / stride));
        }
        if slots.iter().map(|&(_, n)| n).product::<i64>() > MOST_ELEMENTS {
            continue;
        }
        let number = promotion.privates.len();
        let name = format!("{MACRO_PREFIX}private_{number}");
        if !promotion.bodies.retarget_all(&stmts, array, &name, &refs, |d, e| slot(e, slots[d])) {
            continue;
        }
        let reads = refs.iter().any(|(a, _)| a.kind == AccessKind::Read);
        let rank = array.rank();
        let depth = tiles.dim(DimType::In).ctx(what)? as usize;
        let (as_, all) = copy_args(depth, rank);
        let private: String = as_.iter().zip(&slots).map(|(a, &s)| slot(a, s)).collect();
        let global: String = as_.iter().map(|a| format!("[({a})]")).collect();
        for (copy, before) in [(COPY_IN, true), (COPY_OUT, false)] {
            if before && !reads {
                continue;
            }
            let statement = format!("{copy}{number}");
            let graft = copy_graft(ctx, tiles.copy().ctx(what)?, &statement, true)?;
            top = match before {
                true => top.graft_before(graft).ctx(what)?,
                false => top.graft_after(graft).ctx(what)?,
            };
            let assignment = match before {
                true => format!("{name}{private} = {}{global}", array.name),
                false => format!("{}{global} = {name}{private}", array.name),
            };
            promotion.prelude.push_str(&format!("#define {MACRO_PREFIX}{statement}({all}) {assignment}\n"));
            promotion.postlude.push_str(&format!("#undef {MACRO_PREFIX}{statement}\n"));
        }
        let dims: String = slots.iter().map(|&(_, n)| format!("[{n}]")).collect();
        promotion.privates.push((array.element_type.trim().to_string(), name, dims));
    }
    Ok(top)
}
