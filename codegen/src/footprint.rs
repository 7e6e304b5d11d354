//! Tile footprints and the copy statements that stage them, shared by the
//! GPU's shared and private promotion and the CPU's packing: what a set of
//! references reads under one value of the outer loops (a box of constant
//! size, as isl bounds it), a copy statement over it grafted into the
//! schedule tree, and statement bodies rewritten to read the copy.

use isl_rs::{ASTLoopType, Context, DimType, Map, MultiUnionPwAff, ScheduleNode, UnionMap, UnionSet};
use model::isl::IslResultExt;
use model::scop::{Access, AccessKind, Array, Scop, Statement};

use super::print::{parenthesize, statement_body, word_end, MACRO_PREFIX};
use super::CodegenError;

/// One read with its statement's iterators (to spell it as the statement's
/// macro does).
pub(crate) type Read<'s> = (&'s Access, &'s [String]);

/// The reads of `array` by `stmts`, grouped for buffers: all in one where
/// one box bounds their tile's footprint, else one group per access
/// relation (syrk's `A[i][k]` and `A[j][k]`, whose tiles lie apart). Empty
/// where they do not read it.
pub(crate) fn read_groups<'s>(
    ctx: &Context,
    prefix: &UnionMap,
    domain: &UnionSet,
    stmts: &[&'s Statement],
    array: &str,
) -> Result<Vec<Vec<Read<'s>>>, CodegenError> {
    let reads: Vec<Read<'s>> = stmts
        .iter()
        .flat_map(|s| {
            s.accesses
                .iter()
                .filter(|a| a.kind == AccessKind::Read && a.array == array)
                .map(|a| (a, s.c_iterators.as_slice()))
        })
        .collect();
    if reads.is_empty() || footprint(ctx, prefix, domain, &reads)?.is_some() {
        return Ok(if reads.is_empty() { Vec::new() } else { vec![reads] });
    }
    let mut groups: Vec<Vec<Read<'s>>> = Vec::new();
    for r in reads {
        match groups.iter_mut().find(|g| g[0].0.relation == r.0.relation) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    Ok(groups)
}

/// Every reference to `array` by `stmts`, reads and writes.
pub(crate) fn references<'s>(stmts: &[&'s Statement], array: &str) -> Vec<Read<'s>> {
    stmts
        .iter()
        .flat_map(|s| s.accesses.iter().filter(|a| a.array == array).map(|a| (a, s.c_iterators.as_slice())))
        .collect()
}

/// Whether uses of `array` can be retargeted to a copy: subscripted
/// (`name[...]`, not a struct member's), of an element type we know.
pub(crate) fn copyable(array: &Array) -> bool {
    array.rank() > 0 && !array.is_struct_member() && element_bytes(&array.element_type).is_some()
}

/// Statement macros rewritten to read copies (shared memory, private
/// arrays, packed tiles), by statement name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bodies(Vec<(String, String)>);

impl Bodies {
    /// `s`'s macro body as rewritten so far.
    pub(crate) fn current(&self, s: &Statement) -> String {
        self.0.iter().find(|(n, _)| *n == s.name).map(|(_, b)| b.clone()).unwrap_or_else(|| statement_body(s))
    }

    pub(crate) fn set(&mut self, name: String, body: String) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = body,
            None => self.0.push((name, body)),
        }
    }

    /// Each of `stmts`' bodies with the uses of `array` among `refs` read
    /// from `buffer` ([`retarget`]), set; `false`, nothing set, where one
    /// body cannot be rewritten.
    pub(crate) fn retarget_all(
        &mut self,
        stmts: &[&Statement],
        array: &Array,
        buffer: &str,
        refs: &[Read],
        subscript: impl Fn(usize, &str) -> String,
    ) -> bool {
        let spelled: Vec<String> = refs.iter().map(|(a, its)| squeeze(&parenthesize(&a.text, its))).collect();
        let mut bodies = Vec::new();
        for s in stmts {
            match retarget(&self.current(s), &array.name, buffer, array.rank(), &spelled, &subscript) {
                Some(b) => bodies.push((s.name.clone(), b)),
                None => return false,
            }
        }
        for (s, b) in bodies {
            self.set(s, b);
        }
        true
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    /// The rewritten macros defined (for before the code that needs them)
    /// and the statements' own restored (for after it).
    pub(crate) fn redefine(&self, scop: &Scop) -> (String, String) {
        let (mut prelude, mut postlude) = (String::new(), String::new());
        for (name, body) in &self.0 {
            let s = scop.statements.iter().find(|s| s.name == *name).expect("a statement of the SCoP");
            let args = s.c_iterators.join(", ");
            prelude.push_str(&format!(
                "#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {body}\n"
            ));
            postlude.push_str(&format!(
                "#undef {MACRO_PREFIX}{name}\n#define {MACRO_PREFIX}{name}({args}) {}\n",
                statement_body(s)
            ));
        }
        (prelude, postlude)
    }
}

/// Whether every instance of the statements below `node` runs below it:
/// where a rewritten statement macro, which serves the whole region, may
/// read a copy made around `node`.
pub(crate) fn all_instances_below(node: &ScheduleNode) -> Result<bool, CodegenError> {
    let what = || "finding where statements run".to_string();
    let here = node.get_domain().ctx(what)?;
    // isl gives the root (the domain node) an empty domain: the schedule's.
    let all = node.get_schedule().ctx(what)?.get_domain().ctx(what)?;
    let all = all.intersect(here.copy().ctx(what)?.universe().ctx(what)?).ctx(what)?;
    Ok(all.is_subset(&here).ctx(what)?)
}

/// The statements of `domain`, by name.
pub(crate) fn statements(domain: &UnionSet) -> Result<Vec<String>, CodegenError> {
    let what = || "listing a kernel's statements".to_string();
    let list = domain.get_set_list().ctx(what)?;
    let mut out = Vec::new();
    for i in 0..list.size().ctx(what)? {
        out.push(list.get_at(i).ctx(what)?.get_tuple_name().ctx(what)?.to_string());
    }
    Ok(out)
}

/// Bytes of one element of a C type; `None` for one we do not know.
pub(crate) fn element_bytes(ty: &str) -> Option<usize> {
    match ty.trim() {
        "double" | "long" | "long int" | "unsigned long" | "long long" | "unsigned long long" | "int64_t"
        | "uint64_t" | "size_t" => Some(8),
        "float" | "int" | "unsigned" | "unsigned int" | "int32_t" | "uint32_t" => Some(4),
        "short" | "unsigned short" | "int16_t" | "uint16_t" => Some(2),
        "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" => Some(1),
        _ => None,
    }
}

/// A tree to graft: the copy statement `name`, one instance per pair of
/// `footprint` (outer schedule values to array elements), its loops over
/// the elements (unrolled with `unroll`).
pub(crate) fn copy_graft(
    ctx: &Context,
    footprint: Map,
    name: &str,
    unroll: bool,
) -> Result<ScheduleNode, CodegenError> {
    let rank = footprint.dim(DimType::Out).ctx(|| format!("the copy statement {name}"))? as usize;
    copy_graft_loops(ctx, footprint, name, rank, unroll)
}

/// [`copy_graft`] whose statement's instances carry more than the
/// element (packing's offsets): only the first `loops` of the range's
/// dimensions get loops, the others are functions of them and of the outer
/// values.
pub(crate) fn copy_graft_loops(
    ctx: &Context,
    footprint: Map,
    name: &str,
    loops: usize,
    unroll: bool,
) -> Result<ScheduleNode, CodegenError> {
    let what = || format!("the copy statement {name}");
    let depth = footprint.dim(DimType::In).ctx(what)? as usize;
    let ext = footprint
        .domain_map()
        .ctx(what)?
        .reverse()
        .ctx(what)?
        .flatten_range()
        .ctx(what)?
        .set_tuple_name(DimType::Out, name)
        .ctx(what)?;
    let rank = ext.dim(DimType::Out).ctx(what)? as usize - depth;
    let (as_, all) = copy_args(depth, rank);
    let members: Vec<String> =
        as_[..loops].iter().map(|a| format!("{{ {name}[{all}] -> [({a})] }}")).collect();
    let schedule = MultiUnionPwAff::read_from_str(ctx, &format!("[{}]", members.join(", "))).ctx(what)?;
    let graft = ScheduleNode::from_extension(UnionMap::from_map(ext).ctx(what)?).ctx(what)?;
    let mut band = graft.child(0).ctx(what)?.insert_partial_schedule(schedule).ctx(what)?;
    if unroll {
        for m in 0..loops {
            band = band.band_member_set_ast_loop_type(m as i32, ASTLoopType::Unroll).ctx(what)?;
        }
    }
    Ok(band.root().ctx(what)?)
}

/// A copy statement's macro parameters: the element's (`a0`, ...), and
/// all of them after the outer schedule values' (`d0, ..., a0, ...`).
pub(crate) fn copy_args(depth: usize, rank: usize) -> (Vec<String>, String) {
    let ds = (0..depth).map(|d| format!("d{d}"));
    let as_: Vec<String> = (0..rank).map(|d| format!("a{d}")).collect();
    let all = ds.chain(as_.iter().cloned()).collect::<Vec<_>>().join(", ");
    (as_, all)
}

/// What the references `group` read under the stage whose instances are
/// `domain` and whose outer schedule is `prefix`: the access relation,
/// the footprint of each tile (a map from the outer schedule values to
/// the elements) and the extents of its box; `None` where isl finds no
/// box of constant size.
#[allow(clippy::type_complexity)]
pub(crate) fn footprint(
    ctx: &Context,
    prefix: &UnionMap,
    domain: &UnionSet,
    group: &[(&Access, &[String])],
) -> Result<Option<(UnionMap, Map, Vec<i64>)>, CodegenError> {
    let what = || "a tile's footprint".to_string();
    let mut relation: Option<UnionMap> = None;
    for (r, _) in group {
        let m = UnionMap::read_from_str(ctx, &r.relation).ctx(what)?;
        relation = Some(match relation {
            None => m,
            Some(acc) => acc.union(m).ctx(what)?,
        });
    }
    let Some(relation) = relation else { return Ok(None) };
    let relation = relation.intersect_domain(domain.copy().ctx(what)?).ctx(what)?;
    if relation.is_empty().ctx(what)? {
        return Ok(None);
    }
    let tiles =
        prefix.copy().ctx(what)?.reverse().ctx(what)?.apply_range(relation.copy().ctx(what)?).ctx(what)?;
    let tiles = Map::from_union_map(tiles).ctx(what)?;
    let hull = tiles.get_range_simple_fixed_box_hull().ctx(what)?;
    if !hull.is_valid().ctx(what)? {
        return Ok(None);
    }
    let size = hull.get_size().ctx(what)?;
    let mut extents = Vec::new();
    for d in 0..tiles.dim(DimType::Out).ctx(what)? {
        extents.push(size.get_val(d).ctx(what)?.get_num_si().ctx(what)?.max(1));
    }
    Ok(Some((relation, tiles, extents)))
}

/// `text` without white space: how references are compared.
pub(crate) fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// One use of an array in a statement's text, subscripted in full: where
/// it starts and ends, and where each subscript's text lies (inside its
/// brackets).
pub(crate) struct Use {
    pub start: usize,
    pub end: usize,
    pub subscripts: Vec<std::ops::Range<usize>>,
}

/// The uses of `array` in `body` (not a struct's member of that name);
/// `None` where one is not subscripted in full (`rank` subscripts, no
/// more).
pub(crate) fn uses(body: &str, array: &str, rank: usize) -> Option<Vec<Use>> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !(c.is_ascii_alphanumeric() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        i = word_end(bytes, i);
        let before = body[..start].trim_end();
        if c.is_ascii_digit() || &body[start..i] != array || before.ends_with('.') || before.ends_with("->") {
            continue;
        }
        let mut subscripts = Vec::new();
        for _ in 0..rank {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes.get(j) != Some(&b'[') {
                return None;
            }
            let mut level = 0usize;
            let mut k = j;
            loop {
                match bytes.get(k)? {
                    b'[' => level += 1,
                    b']' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            subscripts.push(j + 1..k);
            i = k + 1;
        }
        // A further subscript would index past the array's rank.
        if body[i..].trim_start().starts_with('[') {
            return None;
        }
        out.push(Use { start, end: i, subscripts });
    }
    Some(out)
}

/// `body` with each use of `array` that is one of `refs` (spelled as
/// [`squeeze`] gives them) reading `buffer` instead, its `d`-th subscript
/// `e` written `subscript(d, e)` (`[...]` included); `None` where a use of
/// `array` is not subscripted in full (`rank` subscripts).
pub(crate) fn retarget(
    body: &str,
    array: &str,
    buffer: &str,
    rank: usize,
    refs: &[String],
    subscript: impl Fn(usize, &str) -> String,
) -> Option<String> {
    let mut out = String::with_capacity(body.len() + 32);
    let mut at = 0;
    for u in uses(body, array, rank)? {
        if !refs.contains(&squeeze(&body[u.start..u.end])) {
            continue;
        }
        out.push_str(&body[at..u.start]);
        out.push_str(buffer);
        for (d, e) in u.subscripts.iter().enumerate() {
            out.push_str(&subscript(d, &body[e.clone()]));
        }
        at = u.end;
    }
    out.push_str(&body[at..]);
    Some(out)
}

/// The arrays (C names) the statements of `domain` write.
pub(crate) fn written_in(scop: &Scop, domain: &UnionSet) -> Result<Vec<String>, CodegenError> {
    let names = statements(domain)?;
    Ok(scop
        .statements
        .iter()
        .filter(|s| names.contains(&s.name))
        .flat_map(|s| s.accesses.iter().filter(|a| a.kind == AccessKind::Write).map(|a| a.array.clone()))
        .collect())
}

/// Where every use in `uses` (a statement, its body and its references
/// of one group of `array`) is multiplied first by the same scalar that
/// the code around does not write (`written`, see [`factor_out`]): each
/// body without it, in order, and the scalar. A copy that holds the
/// products serves the statements with the values they computed.
pub(crate) fn fold<T>(
    scop: &Scop,
    array: &Array,
    written: &[String],
    uses: &[(T, String, Vec<String>)],
) -> Option<(Vec<String>, String)> {
    let scalars = scalars(scop, array, written);
    let folded: Vec<(String, String)> = uses
        .iter()
        .map(|(_, body, refs)| factor_out(body, &array.name, array.rank(), refs, &scalars))
        .collect::<Option<_>>()?;
    let factor = folded.first()?.1.clone();
    folded.iter().all(|(_, f)| *f == factor).then(|| (folded.into_iter().map(|(b, _)| b).collect(), factor))
}

/// The scalars a copy of `array` can hold its elements multiplied by: not
/// written by the band's statements (`written`), so the same at the copy
/// and at every use, and of `array`'s element type, so that the product
/// is computed and rounded in that type either way.
fn scalars<'s>(scop: &'s Scop, array: &Array, written: &[String]) -> Vec<&'s str> {
    scop.arrays
        .iter()
        .filter(|a| a.rank() == 0 && !a.is_struct_member() && !written.contains(&a.name))
        .filter(|a| a.element_type.trim() == array.element_type.trim())
        .map(|a| a.name.as_str())
        .collect()
}

/// `body` with each use of `array` among `refs` freed of the scalar that
/// multiplies it first (gemm's `alpha * A[i][k] * B[k][j]`, which C reads
/// `(alpha * A[i][k]) * B[k][j]`; syr2k's `A[j][k] * alpha * B[i][k]`),
/// and that scalar, one of `scalars`; `None` where a use has none, or not
/// the same. A copy that holds the products then serves the uses with the
/// same values, rounded once as the statements rounded them
/// (multiplication commutes exactly), and a micro tile broadcasts them
/// from memory instead of multiplying every row's operand at every step.
fn factor_out(
    body: &str,
    array: &str,
    rank: usize,
    refs: &[String],
    scalars: &[&str],
) -> Option<(String, String)> {
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    let mut factor: Option<&str> = None;
    for u in uses(body, array, rank)? {
        if !refs.contains(&squeeze(&body[u.start..u.end])) {
            continue;
        }
        let (span, f) = scaled(body, u.start, u.end)?;
        if !scalars.contains(&f) || factor.is_some_and(|g| g != f) {
            return None;
        }
        factor = Some(f);
        out.push_str(&body[at..span.start]);
        out.push_str(&body[u.start..u.end]);
        at = span.end;
    }
    out.push_str(&body[at..]);
    Some((out, factor?.to_string()))
}

/// The product `f * REF` or `REF * f` around the operand `body[start..end]`
/// where it is a subexpression of its own (nothing multiplies or divides
/// it from the left; `f` a plain name): its span and `f`.
fn scaled(body: &str, start: usize, end: usize) -> Option<(std::ops::Range<usize>, &str)> {
    let before = body[..start].trim_end();
    if let Some(rest) = before.strip_suffix('*') {
        let rest = rest.trim_end();
        let f_start =
            rest.len() - rest.bytes().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
        let f = &rest[f_start..];
        let plain = f.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
        return (plain && operand_starts(&rest[..f_start])).then_some((f_start..end, f));
    }
    if !operand_starts(before) {
        return None;
    }
    let after = &body[end..];
    let rest = after.trim_start().strip_prefix('*')?;
    if rest.starts_with('=') {
        return None;
    }
    let f_start = body.len() - rest.trim_start().len();
    let f_end =
        f_start + body[f_start..].bytes().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
    let f = &body[f_start..f_end];
    let next = body[f_end..].trim_start();
    let whole = !["[", "(", ".", "->", "++", "--"].iter().any(|t| next.starts_with(t));
    let plain = f.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
    (plain && whole).then_some((start..f_end, f))
}

/// Whether an operand that follows `before` begins a
/// subexpression: after an opening bracket, an assignment, a comparison,
/// a comma, a conditional's `?` or `:`, or an addition's sign, not after
/// an operator that binds tighter than a product (`*`, `/`, `%`, a cast).
fn operand_starts(before: &str) -> bool {
    let before = before.trim_end();
    let b = before.as_bytes();
    match b.last() {
        None => true,
        Some(b'+') | Some(b'-') => b.len() < 2 || b[b.len() - 2] != b[b.len() - 1],
        Some(c) => b"([=,?:<>".contains(c) && !before.ends_with("->"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor(body: &str, array: &str, refs: &[&str]) -> Option<(String, String)> {
        let refs: Vec<String> = refs.iter().map(|r| squeeze(r)).collect();
        factor_out(body, array, 2, &refs, &["alpha", "beta"])
    }

    #[test]
    fn a_scalar_that_multiplies_a_use_first_is_factored_out() {
        let gemm = "C[(i)][(j)] += alpha * A[(i)][(k)] * B[(k)][(j)]";
        let out = Some(("C[(i)][(j)] += A[(i)][(k)] * B[(k)][(j)]".to_string(), "alpha".to_string()));
        assert_eq!(factor(gemm, "A", &["A[(i)][(k)]"]), out);
        // `(C * alpha) * A`: `alpha` multiplies `C`, not `A`.
        assert_eq!(factor("x = C[(i)][(k)] * alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        // syr2k: `(A[j][k] * alpha) * B[i][k] + (B[j][k] * alpha) * A[i][k]`.
        let syr2k = "C[(i)][(j)] += A[(j)][(k)]*alpha*B[(i)][(k)] + B[(j)][(k)]*alpha*A[(i)][(k)]";
        let out = "C[(i)][(j)] += A[(j)][(k)]*B[(i)][(k)] + B[(j)][(k)]*alpha*A[(i)][(k)]";
        assert_eq!(factor(syr2k, "A", &["A[(j)][(k)]"]).map(|f| f.0), Some(out.to_string()));
        assert_eq!(factor(syr2k, "A", &["A[(i)][(k)]"]), None);
        assert_eq!(
            factor("x = y - alpha*A[(i)][(k)]", "A", &["A[(i)][(k)]"]).map(|f| f.0),
            Some("x = y - A[(i)][(k)]".into())
        );
        // A cast, a quotient, a scalar that is not one, uses that differ.
        assert_eq!(factor("x = (double) alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = y / alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = gamma * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = A[(i)][(k)] * alpha[(i)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = alpha * A[(i)][(k)] + A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = alpha * A[(i)][(k)] + beta * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x *= A[(i)][(k)] *= alpha", "A", &["A[(i)][(k)]"]), None);
        // Only the uses among `refs` count.
        let two = "x = alpha * A[(i)][(k)] + A[(k)][(i)]";
        assert_eq!(
            factor(two, "A", &["A[(i)][(k)]"]).map(|f| f.0),
            Some("x = A[(i)][(k)] + A[(k)][(i)]".into())
        );
    }
}
