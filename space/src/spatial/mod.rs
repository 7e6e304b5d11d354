//! Locality relations of the unified scheduler (RR-9110 §4.1–4.5): spatial
//! proximity between statement instances that touch the same cache line, and
//! temporal proximity, both grouped per array reference.
//!
//! - Line-based access: the last subscript `a` becomes `floor(a / C)` with `C`
//!   elements per line (line bytes / element size); scalars have none.
//! - Access pattern separation: only references with equal subscripts except
//!   for the constant of the last one are related to each other.
//! - Access completion: an access matrix without full column rank gets rows
//!   prepended until it has one, from its Hermite normal form (for B[k][j]
//!   under (i, j, k): B[i][k][j]), so that different iterations of an unused
//!   loop touch different lines.
//! - Spatial proximity: the dataflow analysis on line-based accesses with every
//!   access a must-source, so each instance is related only to the last one
//!   before it (adjacent in time) that touches its line; reads too (RAR).
//!   Integer divisions are then projected out (over-approximation).
//! - Temporal proximity: flow, anti, output and RAR dependences, without the
//!   non-uniform relations of a statement to itself.
//!
//! `consecutive` holds the inter-statement consecutivity pairs (global
//! consecutivity), built on the same tagged accesses.

use std::collections::HashMap;

use isl_rs::{Context, DimType, Map, Schedule, UnionAccessInfo, UnionMap, UnionPwMultiAff, UnionSet};
use serde::{Deserialize, Serialize};

use model::deps::Dependences;
use model::isl::{IslError, IslResultExt};
use model::scop::{AccessKind, Scop};
use vocab::knobs::Spatial;

mod consecutive;

pub use consecutive::{inter_consecutive, InterConsecutive};

/// One subscript: iterator coefficients, parameter coefficients, constant.
pub type Subscript = (Vec<i64>, Vec<i64>, i64);

/// An array reference with affine subscripts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reference {
    pub id: String,
    pub stmt: usize,
    pub array: String,
    pub kind: AccessKind,
    /// `None` when a subscript is not a single affine expression.
    pub subscripts: Option<Vec<Subscript>>,
}

/// An array and its subscripts' iterator and parameter coefficients.
type HullKey = (String, Vec<(Vec<i64>, Vec<i64>)>);

impl Reference {
    /// The linear part of each subscript (iterator coefficients).
    pub fn matrix(&self) -> Vec<Vec<i64>> {
        self.subscripts.iter().flatten().map(|s| s.0.clone()).collect()
    }

    /// Iterator and parameter coefficients without the constant: references
    /// with equal keys on one array add to each other's multiplicity.
    fn hull_key(&self) -> Option<HullKey> {
        let s = self.subscripts.as_ref()?;
        Some((self.array.clone(), s.iter().map(|(c, p, _)| (c.clone(), p.clone())).collect()))
    }
}

/// A group of references whose spatial and temporal proximity the scheduler
/// bounds together (§4.4–4.5).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LocalityGroup {
    pub refs: Vec<String>,
    pub multiplicity: usize,
    /// Spatial-proximity relations as `(source statement, sink statement, isl text)`.
    pub spatial: Vec<(usize, usize, String)>,
    /// Temporal-proximity relations, same shape.
    pub temporal: Vec<(usize, usize, String)>,
}

impl LocalityGroup {
    pub fn label(&self) -> String {
        self.refs.join("+")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Locality {
    pub references: Vec<Reference>,
    pub groups: Vec<LocalityGroup>,
}

/// Bytes of one element of a C type (8 when unknown).
pub fn element_bytes(c_type: &str) -> u32 {
    let t = c_type.replace("unsigned", "").replace("signed", "").replace("const", "");
    match t.split_whitespace().collect::<Vec<_>>().join(" ").as_str() {
        "char" | "_Bool" | "bool" | "int8_t" | "uint8_t" => 1,
        "short" | "short int" | "int16_t" | "uint16_t" => 2,
        "int" | "float" | "int32_t" | "uint32_t" | "" => 4,
        _ => 8,
    }
}

/// The affine subscripts of an access relation `{ S[i] -> A[f(i)] }`.
fn subscripts(ctx: &Context, relation: &str, n_params: usize) -> Result<Option<Vec<Subscript>>, IslError> {
    let what = || format!("subscripts of {relation}");
    let map = Map::read_from_str(ctx, relation).ctx(what)?;
    let n_in = map.dim(DimType::In).ctx(what)? as usize;
    // The subscripts as one function on the whole space: the affine hull,
    // where it is single-valued (a relation whose domain is a union, such
    // as `i <= 2 or i >= 3`, is one function isl cannot read as an `Aff`).
    let hull = Map::from_basic_map(map.affine_hull().ctx(what)?).ctx(what)?;
    if !hull.is_single_valued().ctx(what)? {
        return Ok(None);
    }
    let pma = hull.as_pw_multi_aff().ctx(what)?;
    let n_out = pma.dim(DimType::Out).ctx(what)?;
    let mut out = Vec::new();
    for k in 0..n_out {
        let pa = pma.get_at(k).ctx(what)?;
        if pa.n_piece().ctx(what)? != 1 {
            return Ok(None);
        }
        let aff = pa.as_aff().ctx(what)?;
        if aff.dim(DimType::Div).ctx(what)? != 0 {
            return Ok(None);
        }
        let int = |v: isl_rs::Val| -> Result<Option<i64>, IslError> {
            Ok(if v.is_int().ctx(what)? { Some(v.get_num_si().ctx(what)?) } else { None })
        };
        let mut c = Vec::new();
        for i in 0..n_in {
            let Some(v) = int(aff.get_coefficient_val(DimType::In, i as i32).ctx(what)?)? else {
                return Ok(None);
            };
            c.push(v);
        }
        let mut p = Vec::new();
        for i in 0..n_params.min(aff.dim(DimType::Param).ctx(what)? as usize) {
            let Some(v) = int(aff.get_coefficient_val(DimType::Param, i as i32).ctx(what)?)? else {
                return Ok(None);
            };
            p.push(v);
        }
        p.resize(n_params, 0);
        let Some(e) = int(aff.get_constant_val().ctx(what)?)? else { return Ok(None) };
        out.push((c, p, e));
    }
    Ok(Some(out))
}

/// Every reference of the SCoP with its subscripts. Parameters are aligned
/// with the SCoP's order by reading each relation under the SCoP's parameter tuple.
pub fn references(ctx: &Context, scop: &Scop) -> Result<Vec<Reference>, IslError> {
    let mut out = Vec::new();
    for (i, s) in scop.statements.iter().enumerate() {
        for a in &s.accesses {
            let aligned = align(ctx, &a.relation, &scop.context)?;
            out.push(Reference {
                id: a.id.clone(),
                stmt: i,
                array: a.array.clone(),
                kind: a.kind,
                subscripts: subscripts(ctx, &aligned, scop.params.len())?,
            });
        }
    }
    Ok(out)
}

fn align(ctx: &Context, relation: &str, context: &str) -> Result<String, IslError> {
    let what = || format!("aligning {relation}");
    let model = isl_rs::Set::read_from_str(ctx, context).ctx(what)?.get_space().ctx(what)?;
    let m = Map::read_from_str(ctx, relation).ctx(what)?.align_params(model).ctx(what)?;
    Ok(m.to_str().ctx(what)?.to_string())
}

/// Rank of a matrix with `n` columns.
fn rank(m: &[Vec<i64>], n: usize) -> usize {
    crate::linalg::rank(m, n)
}

/// Rows that complete `f` (rows over `n` iterators) to full column rank
/// (§4.2): with the column Hermite normal form `H = f·Q` (`Q` unimodular,
/// `H` lower triangular with `r` = rank pivot columns), the rows `r..n` of
/// `Q⁻¹` span what `f` leaves free, and `f`'s rows with them span `Zⁿ`.
/// The rows are unit rows when `f`'s pivots are unit columns
/// (`B[k][j]` under `(i, j, k)` gets `i`); unlike unit rows picked greedily,
/// they also complete `A[i + 2j]` to a unimodular basis.
pub fn completion(f: &[Vec<i64>], n: usize) -> Vec<Vec<i64>> {
    let mut a: Vec<Vec<i64>> = f.to_vec();
    // Q⁻¹, kept in step with the column operations on `a` (an operation
    // `a ← a·E` is `Q⁻¹ ← E⁻¹·Q⁻¹`, a row operation).
    let mut q_inv: Vec<Vec<i64>> = (0..n).map(|k| (0..n).map(|j| (j == k) as i64).collect()).collect();
    let swap = |a: &mut Vec<Vec<i64>>, q_inv: &mut Vec<Vec<i64>>, x: usize, y: usize| {
        a.iter_mut().for_each(|row| row.swap(x, y));
        q_inv.swap(x, y);
    };
    let mut pivot = 0;
    for i in 0..a.len() {
        if pivot == n {
            break;
        }
        // The smallest nonzero entry of row i right of the pivots goes to
        // the pivot column; the others are reduced modulo it (Euclid).
        while let Some(m) = (pivot..n).filter(|&j| a[i][j] != 0).min_by_key(|&j| (a[i][j].abs(), j)) {
            swap(&mut a, &mut q_inv, pivot, m);
            let mut done = true;
            for j in pivot + 1..n {
                let k = a[i][j] / a[i][pivot];
                if k != 0 {
                    // column j -= k·column pivot; Q⁻¹ row pivot += k·row j.
                    for row in a.iter_mut() {
                        row[j] -= k * row[pivot];
                    }
                    let (head, tail) = q_inv.split_at_mut(j);
                    for (x, &y) in head[pivot].iter_mut().zip(&tail[0]).take(n) {
                        *x += k * y;
                    }
                }
                done &= a[i][j] == 0;
            }
            if done {
                pivot += 1;
                break;
            }
        }
    }
    // Order and sign do not change which instances share a completed line:
    // first nonzero positive, outermost first, for stable relations.
    let mut rows = q_inv.split_off(pivot);
    for row in rows.iter_mut() {
        if row.iter().find(|&&v| v != 0).is_some_and(|&v| v < 0) {
            row.iter_mut().for_each(|v| *v = -*v);
        }
    }
    rows.sort_by(|a, b| b.cmp(a));
    rows
}

fn affine(names: &[String], params: &[String], s: &Subscript) -> String {
    let mut terms = Vec::new();
    for (k, name) in s.0.iter().zip(names).chain(s.1.iter().zip(params)) {
        if *k != 0 {
            terms.push(format!("{k}*{name}"));
        }
    }
    terms.push(s.2.to_string());
    terms.join(" + ").replace("+ -", "- ")
}

/// The locality groups of `scop` (`spatial` must not be `Off`).
pub fn locality(
    ctx: &Context,
    scop: &Scop,
    deps: &Dependences,
    line_bytes: u32,
    grouping: Spatial,
) -> Result<Locality, IslError> {
    let refs = references(ctx, scop)?;
    let what = || "spatial proximity".to_string();
    let elem: HashMap<&str, u32> =
        scop.arrays.iter().map(|a| (a.name.as_str(), element_bytes(&a.element_type))).collect();

    // Access pattern separation: (array, completion, all subscripts but the
    // last, the last without its constant).
    type PatternKey = (String, Vec<Vec<i64>>, Vec<Subscript>, (Vec<i64>, Vec<i64>), usize);
    let mut patterns: Vec<(PatternKey, Vec<usize>)> = Vec::new();
    for (r, reference) in refs.iter().enumerate() {
        let Some(subs) = &reference.subscripts else { continue };
        if subs.is_empty() {
            continue; // scalars: no line-based access
        }
        let n = scop.statements[reference.stmt].iterators.len();
        let done = completion(&reference.matrix(), n);
        let (last, outer) = subs.split_last().unwrap();
        let key = (reference.array.clone(), done, outer.to_vec(), (last.0.clone(), last.1.clone()), n);
        match patterns.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(r),
            None => patterns.push((key, vec![r])),
        }
    }

    let schedule = Schedule::read_from_str(ctx, &scop.schedule).ctx(what)?;
    // Spatial relations per (source ref, sink ref).
    let mut spatial: HashMap<(usize, usize), String> = HashMap::new();
    for ((array, done, _, _, _), members) in &patterns {
        let c = (line_bytes / elem.get(array.as_str()).copied().unwrap_or(8)).max(1);
        spatial.extend(adjacent(ctx, scop, &refs, &schedule, members, Some((done, c)))?);
    }

    // Temporal proximity (§4.3): the same adjacency on array elements, for
    // every kind of dependence and RAR; non-uniform self relations dropped.
    let _ = deps;
    let mut temporal: Vec<(usize, usize, String)> = Vec::new();
    let mut arrays: Vec<&str> = refs.iter().map(|r| r.array.as_str()).collect();
    arrays.sort();
    arrays.dedup();
    for array in arrays {
        let members: Vec<usize> = (0..refs.len()).filter(|&r| refs[r].array == array).collect();
        let mut pairs: Vec<((usize, usize), String)> =
            adjacent(ctx, scop, &refs, &schedule, &members, None)?.into_iter().collect();
        pairs.sort();
        for ((a, b), rel) in pairs {
            if refs[a].stmt == refs[b].stmt && !uniform(ctx, &rel)? {
                continue;
            }
            temporal.push((a, b, rel));
        }
    }

    // One group per reference, then combined by multiplicity if asked.
    let mut group_of: Vec<usize> = (0..refs.len()).collect();
    let multiplicity: Vec<usize> = refs
        .iter()
        .map(|r| match r.hull_key() {
            Some(k) => refs.iter().filter(|o| o.hull_key().as_ref() == Some(&k)).count(),
            None => 1,
        })
        .collect();
    if grouping == Spatial::Grouped {
        for i in 0..refs.len() {
            if let Some(k) = refs[i].hull_key() {
                if let Some(j) = (0..i).find(|&j| refs[j].hull_key().as_ref() == Some(&k)) {
                    group_of[i] = group_of[j];
                }
            }
        }
    }
    let mut groups: Vec<LocalityGroup> = Vec::new();
    let mut slot: HashMap<usize, usize> = HashMap::new();
    for (i, r) in refs.iter().enumerate() {
        let g = *slot.entry(group_of[i]).or_insert_with(|| {
            groups.push(LocalityGroup {
                refs: Vec::new(),
                multiplicity: 0,
                spatial: Vec::new(),
                temporal: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].refs.push(r.id.clone());
        // Grouped: the sum of the members' multiplicities is the member count
        // squared over the class; per reference: its own multiplicity.
        groups[g].multiplicity = if grouping == Spatial::Grouped {
            groups[g].multiplicity + multiplicity[i]
        } else {
            multiplicity[i]
        };
    }
    // Relations belong to the group of their sink reference.
    let mut keys: Vec<&(usize, usize)> = spatial.keys().collect();
    keys.sort();
    for &(a, b) in keys {
        let g = slot[&group_of[b]];
        groups[g].spatial.push((refs[a].stmt, refs[b].stmt, spatial[&(a, b)].clone()));
    }
    for (a, b, rel) in temporal {
        let g = slot[&group_of[b]];
        groups[g].temporal.push((refs[a].stmt, refs[b].stmt, rel));
    }
    groups.retain(|g| !g.spatial.is_empty() || !g.temporal.is_empty());
    Ok(Locality { references: refs, groups })
}

/// isl operations (allocations and simplex pivots: a measure that does not
/// depend on the machine) allowed for one [`adjacent`] dataflow.
const ADJACENT_OPS: u64 = 2_000_000;

/// Pairs of instances of the references `members` that touch the same
/// element (`line: None`) or the same completed line-based element
/// (`Some((completion rows, C))`) with no other of these accesses to it in
/// between (isl's dataflow analysis with every access a must-source), per
/// (source ref, sink ref), integer divisions projected out.
fn adjacent(
    ctx: &Context,
    scop: &Scop,
    refs: &[Reference],
    schedule: &Schedule,
    members: &[usize],
    line: Option<(&Vec<Vec<i64>>, u32)>,
) -> Result<HashMap<(usize, usize), String>, IslError> {
    let what = || "adjacent accesses".to_string();
    let params = scop.params.join(", ");
    let mut sink = UnionMap::empty_ctx(ctx).ctx(what)?;
    // Tagged instance -> instance, to pull the original schedule tree back
    // onto the tagged domain.
    let mut untag_all = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for &r in members {
        let reference = &refs[r];
        let st = &scop.statements[reference.stmt];
        // The access (line-based or on elements), restricted to the domain
        // (as a set: equalities in the domain's tuple, `S4[i, j = 1 + i]`,
        // count too), then tagged.
        let acc = match (line, &reference.subscripts) {
            (Some((done, c)), Some(subs)) => {
                let mut out: Vec<String> = done
                    .iter()
                    .map(|row| {
                        affine(&st.iterators, &scop.params, &(row.clone(), vec![0; scop.params.len()], 0))
                    })
                    .collect();
                let (last, outer) = subs.split_last().unwrap();
                out.extend(outer.iter().map(|s| affine(&st.iterators, &scop.params, s)));
                out.push(format!("floor(({})/{c})", affine(&st.iterators, &scop.params, last)));
                format!(
                    "[{params}] -> {{ {}[{}] -> L_{}[{}] }}",
                    st.name,
                    st.iterators.join(", "),
                    model::scop::isl_name(&reference.array),
                    out.join(", ")
                )
            }
            (Some(_), None) => continue,
            (None, _) => st
                .accesses
                .iter()
                .find(|a| a.id == reference.id)
                .map(|a| a.relation.clone())
                .unwrap_or_default(),
        };
        let (access, untag) = tagged(ctx, scop, reference, &acc)?;
        sink = sink.union(access).ctx(what)?;
        untag_all = untag_all.union(untag).ctx(what)?;
        by_id.insert(reference.id.as_str(), r);
    }
    // isl's dataflow on the schedule tree: much faster than on the flat
    // `2d+1` map (heat-3d's temporal relations: 5.3 s → 1.7 s), the same order.
    let info = UnionAccessInfo::from_sink(sink.copy().ctx(what)?)
        .ctx(what)?
        .set_must_source(sink)
        .ctx(what)?
        .set_schedule(pulled_back(schedule, untag_all)?)
        .ctx(what)?;
    // Locality is a preference, not a constraint: where isl's dataflow on
    // these accesses outgrows its budget, the class has no relations.
    let Some(flow) = model::isl::within_budget(ctx, ADJACENT_OPS, || info.compute_flow()).ctx(what)? else {
        return Ok(HashMap::new());
    };
    let adjacent = flow.get_may_dependence().ctx(what)?;
    // One map per (source reference, sink reference) space.
    let mut out = HashMap::new();
    let list = adjacent.get_map_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let map = list.get_at(i).ctx(what)?;
        let (Some(a), Some(b)) = tags(&map, &by_id)? else { continue };
        let pair = untagged(map)?.remove_divs().ctx(what)?.coalesce().ctx(what)?;
        if !pair.is_empty().ctx(what)? {
            out.insert((a, b), pair.to_str().ctx(what)?.to_string());
        }
    }
    Ok(out)
}

/// The access `acc` (isl text) of `reference`, restricted to its statement's
/// domain (as a set: equalities in the domain's tuple, `S4[i, j = 1 + i]`,
/// count too) and tagged `[S[i] -> refN[]] -> A[...]`, with the map from
/// the tagged instance back to the instance.
pub(super) fn tagged(
    ctx: &Context,
    scop: &Scop,
    reference: &Reference,
    acc: &str,
) -> Result<(UnionMap, UnionMap), IslError> {
    let what = || format!("tagging {acc}");
    let st = &scop.statements[reference.stmt];
    let tag = format!("{{ [{}[{}] -> {}[]] }}", st.name, st.iterators.join(", "), reference.id);
    let dom = UnionSet::read_from_str(ctx, &st.domain).ctx(what)?;
    let untag = UnionSet::read_from_str(ctx, &tag).ctx(what)?.unwrap().ctx(what)?.domain_map().ctx(what)?;
    let acc = UnionMap::read_from_str(ctx, acc).ctx(what)?.intersect_domain(dom).ctx(what)?;
    Ok((untag.copy().ctx(what)?.apply_range(acc).ctx(what)?, untag))
}

/// The original schedule tree pulled back onto tagged instances.
pub(super) fn pulled_back(schedule: &Schedule, untag: UnionMap) -> Result<Schedule, IslError> {
    let what = || "tagging the original schedule".to_string();
    schedule
        .copy()
        .ctx(what)?
        .pullback_union_pw_multi_aff(UnionPwMultiAff::from_union_map(untag).ctx(what)?)
        .ctx(what)
}

/// The references (by index in `by_id`) tagging the two sides of a map
/// between tagged instances.
pub(super) fn tags(
    map: &Map,
    by_id: &HashMap<&str, usize>,
) -> Result<(Option<usize>, Option<usize>), IslError> {
    let what = || "reference tags".to_string();
    let space = map.get_space().ctx(what)?;
    let ref_of = |s: isl_rs::Space| -> Result<Option<usize>, IslError> {
        let s = s.unwrap().ctx(what)?;
        Ok(by_id.get(s.get_tuple_name(DimType::Out).ctx(what)?).copied())
    };
    Ok((ref_of(space.copy().ctx(what)?.domain().ctx(what)?)?, ref_of(space.range().ctx(what)?)?))
}

/// A map between tagged instances as a map between instances.
pub(super) fn untagged(map: Map) -> Result<Map, IslError> {
    let what = || "untagging".to_string();
    map.domain_factor_domain().ctx(what)?.range_factor_domain().ctx(what)
}

/// A relation of a statement to itself is uniform when its distance is the
/// same for every pair.
fn uniform(ctx: &Context, relation: &str) -> Result<bool, IslError> {
    let what = || format!("uniformity of {relation}");
    let deltas = UnionMap::read_from_str(ctx, relation).ctx(what)?.deltas().ctx(what)?;
    let list = deltas.get_set_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        if !list.get_at(i).ctx(what)?.is_singleton().ctx(what)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Access rank (§4.5): subscripts of `r` that rows still to be found can
/// affect, given the rows `h` of its statement so far.
pub fn access_rank(r: &Reference, h: &[Vec<i64>], n: usize) -> usize {
    let f = r.matrix();
    let mut both = f.clone();
    both.extend(h.iter().cloned());
    let fixed = rank(&f, n) + rank(h, n) - rank(&both, n);
    f.len().saturating_sub(fixed)
}

/// The register-pressure heuristic h of §4.7 over the given statements: the
/// sum, over references with distinct affine hulls, of their statement depth.
pub fn register_pressure(scop: &Scop, refs: &[Reference], stmts: &[usize]) -> u32 {
    let mut seen: Vec<(usize, String, Option<Vec<Subscript>>)> = Vec::new();
    let mut h = 0;
    for r in refs.iter().filter(|r| stmts.contains(&r.stmt)) {
        let key = (r.stmt, r.array.clone(), r.subscripts.clone());
        if !seen.contains(&key) {
            h += scop.statements[r.stmt].iterators.len() as u32;
            seen.push(key);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Determinant by cofactor expansion (small matrices only).
    fn det(m: &[Vec<i64>]) -> i64 {
        if m.len() == 1 {
            return m[0][0];
        }
        (0..m.len())
            .map(|c| {
                let minor: Vec<Vec<i64>> = m[1..]
                    .iter()
                    .map(|r| r.iter().enumerate().filter(|(j, _)| *j != c).map(|(_, v)| *v).collect())
                    .collect();
                let sign = if c % 2 == 0 { 1 } else { -1 };
                sign * m[0][c] * det(&minor)
            })
            .sum()
    }

    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a.abs()
        } else {
            gcd(b, a % b)
        }
    }

    /// gcd of the maximal minors of `c` (k rows over n columns): 1 exactly
    /// when `c` extends to a unimodular matrix.
    fn minors_gcd(c: &[Vec<i64>], n: usize) -> i64 {
        let k = c.len();
        let mut g = 0;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            let cols: Vec<usize> = (0..n).filter(|j| mask & (1 << j) != 0).collect();
            let sub: Vec<Vec<i64>> = c.iter().map(|r| cols.iter().map(|&j| r[j]).collect()).collect();
            g = gcd(g, det(&sub));
        }
        g
    }

    fn scop_of(text: &str) -> Scop {
        model::scop::extract_preprocessed(std::path::Path::new("inline.c"), text).unwrap().remove(0)
    }

    /// Two loops writing the even and the odd elements of A: each write is
    /// next to the other loop's (S1[i] -> S2[i], S2[i] -> S1[i + 1]); reads
    /// of B and C pair only within a statement, and those are left out.
    #[test]
    fn inter_statement_consecutivity_pairs_even_and_odd_writes() {
        let scop = scop_of(
            "void k(int n, double A[2 * n + 2], double B[n], double C[n]) {\n#pragma scop\n\
             for (int i = 0; i < n; i++)\n  A[2 * i] = B[i];\n\
             for (int i = 0; i < n; i++)\n  A[2 * i + 1] = C[i];\n#pragma endscop\n}\n",
        );
        let ctx = model::isl::new_context();
        let pairs = inter_consecutive(&ctx, &scop).unwrap();
        let shape: Vec<(usize, usize)> = pairs.iter().map(|p| (p.first, p.next)).collect();
        assert_eq!(shape, vec![(0, 1), (1, 0)], "{pairs:?}");
        let expect = |text: &str| Map::read_from_str(&ctx, text).unwrap();
        let got = |k: usize| Map::read_from_str(&ctx, &pairs[k].relation).unwrap();
        assert!(got(0).is_equal(&expect("[n] -> { S1[i] -> S2[i] : 0 <= i < n }")).unwrap(), "{pairs:?}");
        assert!(
            got(1).is_equal(&expect("[n] -> { S2[i] -> S1[i + 1] : 0 <= i < n - 1 }")).unwrap(),
            "{pairs:?}"
        );
        // Affine hull of S1[i] -> S2[i']: i' - i = 0, over (i, i', n, 1).
        assert_eq!(pairs[0].hull.len(), 1);
        let h = &pairs[0].hull[0];
        assert!(h == &vec![1, -1, 0, 0] || h == &vec![-1, 1, 0, 0], "{h:?}");
    }

    /// A write between two consecutive writes cuts the pair.
    #[test]
    fn an_intermediate_write_cuts_a_consecutive_pair() {
        let scop = scop_of(
            "void k(int n, double A[2 * n + 2], double B[n], double C[n]) {\n#pragma scop\n\
             for (int i = 0; i < n; i++)\n  A[2 * i] = B[i];\n\
             for (int i = 0; i < 2 * n; i++)\n  A[i] = 0;\n\
             for (int i = 0; i < n; i++)\n  A[2 * i + 1] = C[i];\n#pragma endscop\n}\n",
        );
        let ctx = model::isl::new_context();
        let pairs = inter_consecutive(&ctx, &scop).unwrap();
        // S2 writes every element of A between S1's and S3's writes, so S1
        // and S3 never pair; S2 pairs with both where no write intervenes:
        // S2[2i - 1] -> S1[i] and S3[i] -> S2[2i + 2].
        let shape: Vec<(usize, usize)> = pairs.iter().map(|p| (p.first, p.next)).collect();
        assert_eq!(shape, vec![(1, 0), (2, 1)], "{pairs:?}");
    }

    /// A relation whose domain is a union of two pieces is still one
    /// function of the iterators (found by the random-program oracle: isl
    /// refused to read it as an `Aff`); a subscript that is not one is none.
    #[test]
    fn subscripts_of_a_relation_on_a_union_are_its_function() {
        let ctx = model::isl::new_context();
        let s = subscripts(&ctx, "[n] -> { S4[i] -> A[3 - i] : i <= 2 or i >= 3 }", 1).unwrap();
        assert_eq!(s, Some(vec![(vec![-1], vec![0], 3)]));
        let piecewise = subscripts(&ctx, "[n] -> { S4[i] -> A[3 - i] : i <= 2; S4[i] -> A[i] : i >= 3 }", 1);
        assert_eq!(piecewise.unwrap(), None);
        let modulo = subscripts(&ctx, "[n] -> { S4[i] -> A[i mod 4] }", 1).unwrap();
        assert_eq!(modulo, None);
    }

    #[test]
    fn completion_of_the_papers_example_and_unit_cases() {
        // B[k][j] under (i, j, k): B[i][k][j].
        assert_eq!(completion(&[vec![0, 0, 1], vec![0, 1, 0]], 3), vec![vec![1, 0, 0]]);
        assert_eq!(completion(&[vec![1, 0, 0]], 3), vec![vec![0, 1, 0], vec![0, 0, 1]]);
        assert!(completion(&[vec![1, 0], vec![0, 1]], 2).is_empty());
        // A scalar-like access (no subscripts) needs every iterator.
        assert_eq!(completion(&[], 2), vec![vec![1, 0], vec![0, 1]]);
        // Dependent rows count once.
        assert_eq!(completion(&[vec![1, 1], vec![2, 2]], 2).len(), 1);
    }

    /// On random integer matrices: `f` with its completion has full column
    /// rank, the completion has `n - rank(f)` rows and is primitive (its
    /// maximal minors have gcd 1); and when `f` itself is primitive with
    /// full row rank, `f` and its completion form a unimodular matrix, which
    /// unit rows miss for `A[i + 2j]` under `(i, j)` (`(1 2; 1 0)`, det -2).
    #[test]
    fn completion_reaches_full_rank_with_a_primitive_set_of_rows() {
        assert_eq!(completion(&[vec![1, 2]], 2), vec![vec![0, 1]]);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (2 * m as u64 + 1)) as i64 - m
        };
        for _ in 0..2000 {
            let n = 1 + (next(2) + 2) as usize % 4;
            let m = (next(2) + 2) as usize % 4;
            let f: Vec<Vec<i64>> = (0..m).map(|_| (0..n).map(|_| next(3)).collect()).collect();
            let c = completion(&f, n);
            let r = rank(&f, n);
            assert_eq!(c.len(), n - r, "{f:?} -> {c:?}");
            let mut all = f.clone();
            all.extend(c.iter().cloned());
            assert_eq!(rank(&all, n), n, "{f:?} -> {c:?}");
            if !c.is_empty() {
                assert_eq!(minors_gcd(&c, n), 1, "{f:?} -> {c:?}");
            }
            if r == m && m > 0 && minors_gcd(&f, n) == 1 {
                assert_eq!(det(&all).abs(), 1, "{f:?} -> {c:?}");
            }
        }
    }
}
