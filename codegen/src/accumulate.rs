//! Scalar replacement of a micro tile's written elements (Carr and
//! Kennedy's scalar replacement, BLIS's accumulators): at each `r` loop
//! that `transform::micro` marked, the elements of each array the tile's
//! statements write, a box of rows by columns that stays the same along
//! `r`, are copied into a local array before the loop and back after it,
//! and every reference to the array in between reads and writes the copy.
//! With the register tile unrolled and vectorised, the copy's subscripts
//! are constants and the compiler keeps it in registers: the multiply-adds
//! accumulate there instead of loading and storing the written vectors at
//! every step of `r`.
//!
//! Legal whatever the dependences: the statements below the mark are the
//! only ones that run between the copies, and every one of their
//! references to the array goes to the copy, which holds the elements the
//! array held. Where the references together are no box of registers
//! (trmm's `B[k][j]` beside its written `B[i][j]`), the copy holds the
//! written elements alone and the other reads stay on the array, where
//! the dependences show that none of them reads an element after the
//! tile wrote it ([`unobserved`]). The copy is indexed by each subscript minus the box's offset
//! at this strip (set by the copy in, as packing's offsets are), so unit
//! strides stay unit strides.
//!
//! With `reassociate`, a sum added to the copy is added term by term, and
//! a scalar that multiplies every term of every such sum (gemm's `alpha`)
//! multiplies the block once, at the copy out, as BLAS computes
//! `alpha * (A B)`: the copy then holds the sum since the copy in, and
//! the array the rest, so the copy in reads nothing (an output array the
//! program never touched before, 3mm's `E`, is then first written, not
//! read: a read maps the zero page, and the write after it copies the
//! page and flushes every thread's TLB). A statement under the loop that uses the element
//! otherwise runs on the array, with the sum scaled where it scales the
//! element (gemm's `C[i][j] *= beta` at the first `k`), cleared where it
//! sets it, and else first added to the element and cleared.
//! This changes the rounding, never the mathematics: outputs agree with
//! the original's within the tolerance, not bit for bit.

use isl_rs::{Context, DimType, Id, Map, Schedule, ScheduleNode, ScheduleNodeType, UnionMap, UnionSet};
use model::deps::{DepKind, Dependences};
use model::isl::IslResultExt;
use model::scop::text::{accumulation, assignment, scalars, squeeze, uses, Accumulation};
use model::scop::{Access, AccessKind, Array, Scop, Statement};

use super::footprint::{
    all_instances_below, copy_args, copy_graft_loops, copyable, footprint, references, retarget, statements,
    written_in, Bodies, Read,
};
use super::marks::{find_mark, ACCUMULATE_MARK};
use super::print::{parenthesize, MACRO_PREFIX};
use super::CodegenError;

/// The most elements of one local copy: what registers hold, with room.
const MOST_ELEMENTS: i64 = 256;

/// What scalar replacement added to a region.
#[derive(Debug, Clone, Default)]
pub(crate) struct Accumulators {
    /// Macros of the copies and of the statements that use the local
    /// copies, defined before the region's code, and what restores them.
    pub prelude: String,
    pub postlude: String,
    /// The declarations of the block each `polytune_accumulate_K` mark
    /// opens, by `K`.
    pub locals: Vec<String>,
    copies: usize,
}

/// `tree` with the local copies at every mark `transform::micro` left, and
/// what the region needs for them; a mark where nothing is copied is
/// dropped. The statements that use local copies get their new bodies in
/// `bodies` (on top of packing's).
pub(crate) fn apply(
    ctx: &Context,
    scop: &Scop,
    tree: Schedule,
    deps: Option<&Dependences>,
    bodies: &mut Bodies,
    reassociate: bool,
) -> Result<(Schedule, Accumulators), CodegenError> {
    let what = || "keeping register tiles in registers".to_string();
    let mut acc = Accumulators::default();
    let mut root = tree.get_root().ctx(what)?;
    while let Some(mark) = find_mark(root.copy().ctx(what)?, ACCUMULATE_MARK)? {
        let (mark, locals) = accumulate(ctx, scop, deps, mark, &mut acc, bodies, reassociate)?;
        let mut node = mark.delete().ctx(what)?;
        if !locals.is_empty() {
            let id = Id::read_from_str(ctx, &format!("{ACCUMULATE_MARK}_{}", acc.locals.len())).ctx(what)?;
            acc.locals.push(locals);
            node = node.insert_mark(id).ctx(what)?;
        }
        root = node.root().ctx(what)?;
    }
    Ok((root.get_schedule().ctx(what)?, acc))
}

/// The copies around the loop below `mark`: returns the mark (found again
/// after the grafts) and the declarations of the local copies, empty where
/// none is made.
fn accumulate(
    ctx: &Context,
    scop: &Scop,
    deps: Option<&Dependences>,
    mark: ScheduleNode,
    acc: &mut Accumulators,
    bodies: &mut Bodies,
    reassociate: bool,
) -> Result<(ScheduleNode, String), CodegenError> {
    let what = || "keeping a register tile in registers".to_string();
    let mut node = mark.child(0).ctx(what)?;
    let domain = node.get_domain().ctx(what)?;
    let names = statements(&domain)?;
    let stmts: Vec<_> = scop.statements.iter().filter(|s| names.contains(&s.name)).collect();
    if !all_instances_below(&node)? {
        return Ok((node.parent().ctx(what)?, String::new()));
    }
    let prefix = node.get_prefix_schedule_union_map().ctx(what)?;
    let mut locals = String::new();
    let written = written_in(scop, &domain)?;
    for array in scop.arrays.iter().filter(|a| written.contains(&a.name)) {
        if !copyable(array) {
            continue;
        }
        let mut refs = references(&stmts, &array.name);
        let small =
            |f: Option<(_, Map, Vec<i64>)>| f.filter(|(_, _, e)| e.iter().product::<i64>() <= MOST_ELEMENTS);
        let mut found = small(footprint(ctx, &prefix, &domain, &refs)?);
        if found.is_none() {
            if let Some(own) = unobserved(ctx, deps, &prefix, &domain, &stmts, &refs)? {
                found = small(footprint(ctx, &prefix, &domain, &own)?);
                refs = own;
            }
        }
        let Some((_, tiles, extents)) = found else { continue };
        let n = acc.copies;
        let buffer = format!("{MACRO_PREFIX}acc_{n}");
        let offset = |d: usize| format!("{buffer}_o{d}");
        let slot = |d: usize, e: &str| format!("[({e}) - {}]", offset(d));
        let reading: Vec<String> = stmts.iter().map(|s| bodies.current(s)).collect();
        if !bodies.retarget_all(&stmts, array, &buffer, &refs, slot) {
            continue;
        }
        let scale = match reassociate {
            true => reassociated(scop, array, &written, &stmts, &reading, &buffer, slot, bodies),
            false => None,
        };
        acc.copies += 1;
        // Each copy's instances: the outer values, the element, and the
        // box's offset there.
        let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
        let origin = Map::from_multi_aff(hull.get_offset().ctx(what)?).ctx(what)?;
        let origin = origin.intersect_domain(tiles.copy().ctx(what)?.domain().ctx(what)?).ctx(what)?;
        let instances = tiles.range_product(origin).ctx(what)?;
        let rank = array.rank();
        let depth = instances.dim(DimType::In).ctx(what)? as usize;
        let (args, all) = copy_args(depth, 2 * rank);
        let (elements, origins) = args.split_at(rank);
        let slots: String = elements.iter().zip(origins).map(|(a, o)| format!("[({a}) - ({o})]")).collect();
        let subscripts: Vec<String> = elements.iter().map(|a| format!("({a})")).collect();
        let global = array.element(&subscripts);
        let sets: Vec<String> =
            origins.iter().enumerate().map(|(d, o)| format!("{} = ({o})", offset(d))).collect();
        for (copy, before) in [("acc_in_", true), ("acc_out_", false)] {
            let statement = format!("{copy}{n}");
            let graft = copy_graft_loops(ctx, instances.copy().ctx(what)?, &statement, rank, false)?;
            node = match before {
                true => node.graft_before(graft).ctx(what)?,
                false => node.graft_after(graft).ctx(what)?,
            };
            let text = match (before, &scale) {
                (true, None) => format!("({}, {buffer}{slots} = {global})", sets.join(", ")),
                (false, None) => format!("{global} = {buffer}{slots}"),
                (true, Some(_)) => format!("({}, {buffer}{slots} = 0)", sets.join(", ")),
                (false, Some(f)) => format!("{global} += {f}{buffer}{slots}"),
            };
            acc.prelude.push_str(&format!("#define {MACRO_PREFIX}{statement}({all}) {text}\n"));
            acc.postlude.push_str(&format!("#undef {MACRO_PREFIX}{statement}\n"));
        }
        let dims: String = extents.iter().map(|e| format!("[{e}]")).collect();
        let offsets: Vec<String> = (0..rank).map(offset).collect();
        locals.push_str(&format!(
            "{} {buffer}{dims} __attribute__((aligned(64)));\nlong {};\n",
            array.element_type.trim(),
            offsets.join(", ")
        ));
    }
    while node.get_type().ctx(what)? != ScheduleNodeType::Mark {
        node = node.parent().ctx(what)?;
    }
    Ok((node, locals))
}

/// The references to one array that access the elements its writes do
/// (each statement's writes, and its reads of the same elements), where
/// the others read none of those elements after the tile's statements
/// wrote them under the same outer values: trmm's `B[i][j] += A[k][i] *
/// B[k][j]`, whose `B[k][j]` (`k > i`) reads rows of the register tile
/// before they are updated. Then the copy may hold the written elements
/// alone: the other reads find, in the array, the values the elements had
/// before the copy in, which is what they read in the original order too
/// (a read after a write of its element is a memory-based flow
/// dependence, and the schedule keeps every dependence). `None` where
/// every reference is of the written elements, where one of the others is
/// spelled like one of them (the bodies are rewritten by spelling), or
/// without the dependences.
fn unobserved<'s>(
    ctx: &Context,
    deps: Option<&Dependences>,
    prefix: &UnionMap,
    domain: &UnionSet,
    stmts: &[&'s Statement],
    refs: &[Read<'s>],
) -> Result<Option<Vec<Read<'s>>>, CodegenError> {
    let what = || "keeping the written elements of a register tile in registers".to_string();
    let Some(deps) = deps else { return Ok(None) };
    let relation = |a: &Access| Map::read_from_str(ctx, &a.relation).ctx(what);
    let mut own = Vec::new();
    let mut others = Vec::new();
    for &(a, its) in refs {
        let s = stmts
            .iter()
            .find(|s| s.accesses.iter().any(|b| std::ptr::eq(a, b)))
            .expect("a reference of stmts");
        // A write, or a read of the element one of its statement's writes writes.
        let mut same = a.kind == AccessKind::Write;
        if !same {
            let read = relation(a)?;
            for w in s.accesses.iter().filter(|w| w.kind == AccessKind::Write && w.array == a.array) {
                if read.is_equal(&relation(w)?).ctx(what)? {
                    same = true;
                    break;
                }
            }
        }
        match same {
            true => own.push((a, its)),
            false => others.push((a, its)),
        }
    }
    let spelled = |r: &Read| squeeze(&parenthesize(&r.0.text, r.1));
    if others.is_empty() || others.iter().any(|o| own.iter().any(|w| spelled(w) == spelled(o))) {
        return Ok(None);
    }
    // Instances under the same outer values: the same copy.
    let together =
        prefix.copy().ctx(what)?.apply_range(prefix.copy().ctx(what)?.reverse().ctx(what)?).ctx(what)?;
    for d in deps.of_kind(DepKind::Raw) {
        let from_own = own.iter().any(|(a, _)| a.id == d.source);
        if !from_own || !others.iter().any(|(a, _)| a.id == d.sink) {
            continue;
        }
        let seen = UnionMap::read_from_str(ctx, &d.relation)
            .ctx(what)?
            .intersect_domain(domain.copy().ctx(what)?)
            .ctx(what)?
            .intersect_range(domain.copy().ctx(what)?)
            .ctx(what)?
            .intersect(together.copy().ctx(what)?)
            .ctx(what)?;
        if !seen.is_empty().ctx(what)? {
            return Ok(None);
        }
    }
    Ok(Some(own))
}

/// `reassociate` at one copy (see the module): each statement of `stmts`
/// that adds a sum of products to the copy (its body, read into `buffer`,
/// already set in `bodies`) adds them one by one, and where one scalar
/// multiplies every term of every such sum, without it. Every other
/// statement that uses `array` (`reading`: the bodies that read the
/// array) then runs on the array, the copy's sum scaled, cleared or first
/// added to the element as the module says. Returns what the copy out
/// multiplies the copy by before adding it to the array (`"alpha * "`, or
/// `""`); `None`, the copy holding the array's elements as without
/// `reassociate`, where no statement adds a sum or one of the others
/// uses more than one element.
#[allow(clippy::too_many_arguments)]
fn reassociated(
    scop: &Scop,
    array: &Array,
    written: &[String],
    stmts: &[&Statement],
    reading: &[String],
    buffer: &str,
    slot: impl Fn(usize, &str) -> String,
    bodies: &mut Bodies,
) -> Option<String> {
    if !matches!(array.element_type.trim(), "double" | "float") {
        return None;
    }
    let rank = array.rank();
    let copies = |text: &str| uses(text, buffer, rank).map_or(0, |u| u.len());
    // The sums added to the copy, by statement.
    let current: Vec<String> = stmts.iter().map(|s| bodies.current(s)).collect();
    let sums: Vec<Option<Accumulation>> = current
        .iter()
        .map(|body| {
            let a = accumulation(body)?;
            let element = a.target.starts_with(buffer) && copies(a.target) == 1 && copies(body) == 1;
            element.then_some(a)
        })
        .collect();
    if sums.iter().all(Option::is_none) {
        return None;
    }
    let mut factor = scalars(scop, array, written).into_iter().find(|f| {
        let product = |fs: &Vec<&str>| fs.len() > 1 && fs.contains(f);
        sums.iter().flatten().all(|a| a.terms.iter().all(|(_, fs)| product(fs)))
    });
    // The other statements that use the array: each with its element.
    let scale = |f: Option<&str>| f.map_or(String::new(), |f| format!("{f} * "));
    let mut flushes = Vec::new();
    let mut apart = true;
    for ((s, sum), body) in stmts.iter().zip(&sums).zip(reading) {
        if sum.is_some() {
            continue;
        }
        let used = uses(body, &array.name, rank)?;
        let mut elements: Vec<String> = used.iter().map(|u| squeeze(&body[u.start..u.end])).collect();
        elements.dedup();
        match &elements[..] {
            [] => {}
            [element] => {
                let copy = retarget(element, &array.name, buffer, rank, &elements, &slot)?;
                // Scaling the element (gemm's `*= beta`) scales the sum
                // too, and setting it (3mm's `= 0` at the first `k`, the
                // first touch of a page) clears the sum, both in registers.
                let own = |t: &str| squeeze(t) == *element;
                let free = |v: &str| uses(v, &array.name, rank).is_some_and(|u| u.is_empty());
                let f = scale(factor);
                let body = match assignment(body) {
                    Some((t, "*", v)) if own(t) && free(v) => format!("({copy} *= {v}, {body})"),
                    Some((t, "", v)) if own(t) && free(v) => format!("({body}, {copy} = 0)"),
                    _ => format!("({element} += {f}{copy}, {copy} = 0, {body})"),
                };
                flushes.push((s.name.clone(), body));
            }
            _ => {
                (factor, apart) = (None, false);
                flushes.clear();
                break;
            }
        }
    }
    for (s, sum) in stmts.iter().zip(&sums) {
        let Some(Accumulation { target, terms }) = sum else { continue };
        let adds: Vec<String> = terms
            .iter()
            .map(|(negative, fs)| {
                let mut kept = fs.clone();
                if let Some(at) = factor.and_then(|f| fs.iter().position(|x| *x == f)) {
                    kept.remove(at);
                }
                format!("{target} {}= {}", if *negative { '-' } else { '+' }, kept.join(" * "))
            })
            .collect();
        let body = match &adds[..] {
            [one] => one.clone(),
            _ => format!("({})", adds.join(", ")),
        };
        bodies.set(s.name.clone(), body);
    }
    for (name, body) in flushes {
        bodies.set(name, body);
    }
    apart.then(|| scale(factor))
}

/// Whether a statement three loops deep or more writes one element all
/// along one of its loops (gemm's `C[i][j]` along `k`): what a micro tile
/// keeps in registers (`micro_tile` acts nowhere else).
pub fn reduces_in_three_loops(ctx: &Context, scop: &Scop) -> Result<bool, CodegenError> {
    let what = || "looking for reductions".to_string();
    for s in scop.statements.iter().filter(|s| s.iterators.len() >= 3) {
        for a in s.accesses.iter().filter(|a| a.kind == model::scop::AccessKind::Write) {
            let map = Map::read_from_str(ctx, &a.relation).ctx(what)?;
            for k in 0..s.iterators.len() as u32 {
                if map
                    .copy()
                    .ctx(what)?
                    .project_out(DimType::In, k, 1)
                    .ctx(what)?
                    .is_single_valued()
                    .ctx(what)?
                {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}
