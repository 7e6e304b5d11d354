//! Dependence analysis with isl under the original schedule.
//!
//! Memory-based dependences (RAW, WAR, WAW, RAR) are computed per pair of
//! references; value-based flow dependences come from isl's dataflow analysis
//! on accesses tagged with their reference, so every dependence still names the
//! two references that created it (the unified scheduler groups by reference).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use isl_rs::{
    Context, DimType, LibISLError, Map, Schedule, Set, UnionAccessInfo, UnionMap, UnionPwMultiAff, UnionSet,
};
use serde::{Deserialize, Serialize};

use crate::isl::{IslError, IslResultExt};
use crate::scop::{Access, AccessKind, Scop};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DepKind {
    /// Memory-based read after write.
    Raw,
    /// Memory-based write after read (anti).
    War,
    /// Memory-based write after write (output).
    Waw,
    /// Read after read: no constraint on legality, a hint for locality.
    Rar,
    /// Value-based flow: each read paired with the last write of its value.
    Flow,
}

impl DepKind {
    pub const ALL: [DepKind; 5] = [DepKind::Raw, DepKind::War, DepKind::Waw, DepKind::Rar, DepKind::Flow];

    pub fn name(self) -> &'static str {
        match self {
            DepKind::Raw => "raw",
            DepKind::War => "war",
            DepKind::Waw => "waw",
            DepKind::Rar => "rar",
            DepKind::Flow => "flow",
        }
    }
}

impl fmt::Display for DepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The instances of `sink` that depend on instances of `source`, for one pair of
/// references.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dependence {
    pub kind: DepKind,
    /// Access ids (`ref3`) of the source and sink references.
    pub source: String,
    pub sink: String,
    pub array: String,
    /// `[params] -> { S1[i, j] -> S2[i', j'] : ... }`, never empty.
    pub relation: String,
}

/// All dependences of a SCoP.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dependences {
    pub deps: Vec<Dependence>,
    /// Where the analysis gave an approximation, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Dependences {
    pub fn of_kind(&self, kind: DepKind) -> impl Iterator<Item = &Dependence> {
        self.deps.iter().filter(move |d| d.kind == kind)
    }

    /// Number of reference pairs with a non-empty dependence, per kind.
    pub fn counts(&self) -> BTreeMap<DepKind, usize> {
        let mut out: BTreeMap<DepKind, usize> = DepKind::ALL.iter().map(|k| (*k, 0)).collect();
        for d in &self.deps {
            *out.get_mut(&d.kind).unwrap() += 1;
        }
        out
    }

    /// The union of the given kinds' relations, untagged.
    pub fn union(&self, ctx: &Context, kinds: &[DepKind]) -> Result<UnionMap, IslError> {
        let mut acc = UnionMap::empty_ctx(ctx).ctx(|| "empty union map".into())?;
        for d in self.deps.iter().filter(|d| kinds.contains(&d.kind)) {
            let m = UnionMap::read_from_str(ctx, &d.relation).ctx(|| format!("reading {}", d.relation))?;
            acc = acc.union(m).ctx(|| "union of dependences".into())?;
        }
        acc.coalesce().ctx(|| "coalesce".into())
    }

    /// What a legal schedule must respect: value-based flow plus the memory-based
    /// anti and output dependences (all writes in a SCoP are must-writes, so
    /// this is exact and sound).
    pub fn validity(&self, ctx: &Context) -> Result<UnionMap, IslError> {
        self.union(ctx, &VALIDITY)
    }

    /// What the scheduler keeps short: the same relations as validity, as in
    /// isl's and Pluto's defaults (RAR is kept apart for the spatial knobs).
    pub fn proximity(&self, ctx: &Context) -> Result<UnionMap, IslError> {
        self.union(ctx, &VALIDITY)
    }

    /// What must have zero distance along a parallel (coincident) dimension.
    pub fn coincidence(&self, ctx: &Context) -> Result<UnionMap, IslError> {
        self.union(ctx, &VALIDITY)
    }
}

const VALIDITY: [DepKind; 3] = [DepKind::Flow, DepKind::War, DepKind::Waw];

/// An access restricted to its statement's domain, with its statement's
/// original schedule.
struct Located<'a> {
    access: &'a Access,
    /// Index of the statement in the SCoP.
    statement: usize,
    relation: Map,
    schedule: Map,
    tag_domain: String,
    /// Constant bounds on each subscript over every instance and parameter
    /// value (`None`: unbounded that way): two references whose boxes do
    /// not meet never touch one element.
    bounds: Vec<Bounds>,
}

/// The constant lower and upper bounds of one subscript, where it has them.
type Bounds = (Option<i64>, Option<i64>);

/// Memory-based and value-based dependences of `scop` under its original schedule.
pub fn analyze(scop: &Scop) -> Result<Dependences, IslError> {
    let ctx = crate::isl::new_context();
    analyze_in(&ctx, scop)
}

pub fn analyze_in(ctx: &Context, scop: &Scop) -> Result<Dependences, IslError> {
    analyze_within(ctx, scop, FLOW_OPS)
}

/// [`analyze_in`] with `flow_ops` isl operations for the value-based
/// dataflow (past them the memory-based RAW dependences stand in).
pub fn analyze_within(ctx: &Context, scop: &Scop, flow_ops: u64) -> Result<Dependences, IslError> {
    let schedule =
        UnionMap::read_from_str(ctx, &scop.schedule_map).ctx(|| "reading the original schedule".into())?;
    let context = Set::read_from_str(ctx, &scop.context).ctx(|| "reading the context".into())?;
    // The subscripts' boxes with the lifted literals at their values
    // (`a[150]` is `a[polytune_c100 + 50]`): otherwise they have no
    // constant bounds and every pair of references meets.
    let context = pinned(context, scop).ctx(|| "pinning the literals in the context".into())?;
    let mut located = Vec::new();
    for (k, s) in scop.statements.iter().enumerate() {
        let domain = Set::read_from_str(ctx, &s.domain).ctx(|| format!("domain of {}", s.name))?;
        let sched = schedule
            .copy()
            .ctx(|| "copy".into())?
            .intersect_domain(UnionSet::from_set(domain.copy().ctx(|| "copy".into())?).ctx(|| "set".into())?)
            .ctx(|| format!("schedule of {}", s.name))?;
        if sched.is_empty().ctx(|| format!("schedule of {}", s.name))? {
            // A statement that never runs (extraction leaves those out) has no dependence.
            continue;
        }
        let sched = sched.as_map().ctx(|| format!("schedule of {}", s.name))?;
        for a in &s.accesses {
            let relation = Map::read_from_str(ctx, &a.relation)
                .ctx(|| format!("access {} of {}", a.text, s.name))?
                .intersect_domain(domain.copy().ctx(|| "copy".into())?)
                .ctx(|| format!("access {} of {}", a.text, s.name))?;
            let tag_domain = format!("{{ [{}[{}] -> {}[]] }}", s.name, s.iterators.join(", "), a.id);
            let bounds = subscript_bounds(&relation, &context)
                .ctx(|| format!("bounds of the access {} of {}", a.text, s.name))?;
            located.push(Located {
                access: a,
                statement: k,
                relation,
                schedule: sched.copy().ctx(|| "copy".into())?,
                tag_domain,
                bounds,
            });
        }
    }

    // "Runs before", per pair of statements: shared by all their references.
    let mut before: HashMap<(usize, usize), Map> = HashMap::new();
    let mut deps = Vec::new();
    let pairs = candidate_pairs(&located);
    // Only a read that some write may reach, and that write, take part in
    // the dataflow analysis (isl's is quadratic in the tagged references).
    let mut in_flow = vec![false; located.len()];
    for &(i, j) in &pairs {
        if located[i].access.kind == AccessKind::Write && located[j].access.kind == AccessKind::Read {
            (in_flow[i], in_flow[j]) = (true, true);
        }
    }
    for (i, j) in pairs {
        let (src, snk) = (&located[i], &located[j]);
        let kind = match (src.access.kind, snk.access.kind) {
            (AccessKind::Write, AccessKind::Read) => DepKind::Raw,
            (AccessKind::Read, AccessKind::Write) => DepKind::War,
            (AccessKind::Write, AccessKind::Write) => DepKind::Waw,
            (AccessKind::Read, AccessKind::Read) => DepKind::Rar,
        };
        let what = || format!("{kind} dependence {} -> {}", src.access.id, snk.access.id);
        let same_element = src
            .relation
            .copy()
            .ctx(what)?
            .apply_range(snk.relation.copy().ctx(what)?.reverse().ctx(what)?)
            .ctx(what)?;
        if same_element.is_empty().ctx(what)? {
            continue;
        }
        let order = match before.entry((src.statement, snk.statement)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                e.insert(src.schedule.copy().ctx(what)?.lex_lt_map(snk.schedule.copy().ctx(what)?).ctx(what)?)
            }
        };
        let rel = same_element.intersect(order.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
        if !rel.is_empty().ctx(what)? {
            deps.push(dependence(kind, src.access, snk.access, rel.to_str().ctx(what)?));
        }
    }
    let mut notes = Vec::new();
    // isl's dataflow can also fail on a program (random program 919: "affine
    // expression involves some of the domain dimensions", on the tree and on
    // the flat map alike).
    let why = match flow(ctx, scop, &located, &in_flow, flow_ops) {
        Ok(Some(flow)) => {
            deps.extend(flow);
            None
        }
        Ok(None) => Some(format!("outgrew its budget of {flow_ops} operations")),
        Err(e) => {
            ctx.reset_error();
            Some(format!("failed ({})", e.message))
        }
    };
    if let Some(why) = why {
        // Every value-based flow pair is a memory-based one: legality
        // holds, some schedules are lost.
        let raw: Vec<Dependence> = deps.iter().filter(|d| d.kind == DepKind::Raw).cloned().collect();
        deps.extend(raw.into_iter().map(|d| Dependence { kind: DepKind::Flow, ..d }));
        notes.push(format!(
            "value-based flow: isl's dataflow analysis {why}; the memory-based RAW dependences stand in \
             for it (every schedule found stays legal, fewer may be found)"
        ));
    }
    Ok(Dependences { deps, notes })
}

/// Constant lower and upper bounds of each subscript of `relation` (an
/// access restricted to its domain) over all instances and all parameter
/// values of `context`.
fn subscript_bounds(relation: &Map, context: &Set) -> Result<Vec<Bounds>, LibISLError> {
    let range = relation.copy()?.range()?.intersect_params(context.copy()?)?.project_out_all_params()?;
    let as_int = |v: isl_rs::Val| -> Result<Option<i64>, LibISLError> {
        // A bound beyond 64 bits is no bound here.
        Ok(if v.is_int()? { v.get_num_si().ok() } else { None })
    };
    let rank = range.dim(DimType::Set)?;
    let mut out = Vec::new();
    for d in 0..rank {
        out.push((as_int(range.copy()?.dim_min_val(d)?)?, as_int(range.copy()?.dim_max_val(d)?)?));
    }
    Ok(out)
}

/// `context` with the literals modelled as parameters ([`Scop::constants`])
/// fixed at their values: what holds wherever the program runs.
pub fn pinned(mut context: Set, scop: &Scop) -> Result<Set, LibISLError> {
    for (p, v) in &scop.constants {
        let pos = context.find_dim_by_name(DimType::Param, p)?;
        if let (Ok(pos), Ok(v)) = (u32::try_from(pos), i32::try_from(*v)) {
            context = context.fix_si(DimType::Param, pos, v)?;
        }
    }
    Ok(context)
}

/// The ordered pairs of references (source, sink) of one array whose
/// subscript boxes meet, in the order of a loop over sources then sinks: a
/// sweep along the first subscript, so that references to far apart
/// elements (`a[0] + a[1] + ... + a[1999]`) cost no isl work.
fn candidate_pairs(located: &[Located]) -> Vec<(usize, usize)> {
    let mut by_array: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, l) in located.iter().enumerate() {
        by_array.entry(l.access.array.as_str()).or_default().push(k);
    }
    let lo = |k: usize, d: usize| located[k].bounds.get(d).and_then(|b| b.0).unwrap_or(i64::MIN);
    let hi = |k: usize, d: usize| located[k].bounds.get(d).and_then(|b| b.1).unwrap_or(i64::MAX);
    let meet = |a: usize, b: usize| {
        let rank = located[a].bounds.len().max(located[b].bounds.len());
        (0..rank).all(|d| lo(a, d) <= hi(b, d) && lo(b, d) <= hi(a, d))
    };
    let mut pairs = Vec::new();
    for mut refs in by_array.into_values() {
        refs.sort_by_key(|&k| (lo(k, 0), k));
        for (n, &a) in refs.iter().enumerate() {
            pairs.push((a, a));
            for &b in refs[n + 1..].iter().take_while(|&&b| lo(b, 0) <= hi(a, 0)) {
                if meet(a, b) {
                    pairs.extend([(a, b), (b, a)]);
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

fn dependence(kind: DepKind, src: &Access, snk: &Access, relation: &str) -> Dependence {
    Dependence {
        kind,
        source: src.id.clone(),
        sink: snk.id.clone(),
        array: src.array.clone(),
        relation: relation.to_string(),
    }
}

/// isl's dataflow on the accesses of `scop` that `keep` selects, untagged,
/// in the original order: the flow (its may-dependences, and the reads no
/// selected write feeds: values from before the SCoP), and the writes
/// (statement instances to elements).
pub fn untagged_flow(
    ctx: &Context,
    scop: &Scop,
    keep: impl Fn(&Access) -> bool,
) -> Result<(isl_rs::UnionFlow, UnionMap), IslError> {
    let what = || "dataflow on the accesses".to_string();
    let mut reads = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut writes = UnionMap::empty_ctx(ctx).ctx(what)?;
    for s in &scop.statements {
        let domain = UnionSet::read_from_str(ctx, &s.domain).ctx(what)?;
        for a in s.accesses.iter().filter(|a| keep(a)) {
            let m = UnionMap::read_from_str(ctx, &a.relation).ctx(what)?;
            let m = m.intersect_domain(domain.copy().ctx(what)?).ctx(what)?;
            match a.kind {
                AccessKind::Read => reads = reads.union(m).ctx(what)?,
                AccessKind::Write => writes = writes.union(m).ctx(what)?,
            }
        }
    }
    let flow = UnionAccessInfo::from_sink(reads)
        .ctx(what)?
        .set_must_source(writes.copy().ctx(what)?)
        .ctx(what)?
        .set_schedule_map(UnionMap::read_from_str(ctx, &scop.schedule_map).ctx(what)?)
        .ctx(what)?
        .compute_flow()
        .ctx(what)?;
    Ok((flow, writes))
}

/// isl operations (allocations and simplex pivots: a count, the same on
/// every machine) allowed for the value-based dataflow of one SCoP. The 30
/// PolyBench kernels need at most 250,000 (deriche); random program 809 of
/// the oracle ran for more than five minutes (over 80 million) in it.
const FLOW_OPS: u64 = 20_000_000;

/// isl's dataflow analysis on tagged accesses `[S[i] -> refN[]] -> A[...]`.
/// `in_flow` says which references take part. `None` where it outgrows
/// `budget` isl operations.
fn flow(
    ctx: &Context,
    scop: &Scop,
    located: &[Located],
    in_flow: &[bool],
    budget: u64,
) -> Result<Option<Vec<Dependence>>, IslError> {
    let what = || "value-based flow dependences".to_string();
    let mut reads = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut writes = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut untag_all = UnionMap::empty_ctx(ctx).ctx(what)?;
    for l in located.iter().zip(in_flow).filter(|(_, &f)| f).map(|(l, _)| l) {
        let tag = UnionSet::read_from_str(ctx, &l.tag_domain).ctx(what)?;
        // [S[i] -> refN[]] -> S[i]
        let untag = tag.unwrap().ctx(what)?.domain_map().ctx(what)?;
        untag_all = untag_all.union(untag.copy().ctx(what)?).ctx(what)?;
        let tagged_acc =
            untag.copy().ctx(what)?.apply_range(l.relation.copy().ctx(what)?.to_union_map().ctx(what)?);
        let tagged_acc = tagged_acc.ctx(what)?;
        match l.access.kind {
            AccessKind::Read => reads = reads.union(tagged_acc).ctx(what)?,
            AccessKind::Write => writes = writes.union(tagged_acc).ctx(what)?,
        }
    }
    // On the schedule tree pulled back to the tagged instances: the same
    // dependences as on the flat `2d+1` map, in less time (random program
    // 293: 79 s → 56 s; 331: 12 s → 8 s).
    let tree = Schedule::read_from_str(ctx, &scop.schedule).ctx(what)?;
    let untag = UnionPwMultiAff::from_union_map(untag_all).ctx(what)?;
    let info = UnionAccessInfo::from_sink(reads)
        .ctx(what)?
        .set_must_source(writes)
        .ctx(what)?
        .set_schedule(tree.pullback_union_pw_multi_aff(untag).ctx(what)?)
        .ctx(what)?;
    let Some(computed) = crate::isl::within_budget(ctx, budget, || info.compute_flow()).ctx(what)? else {
        return Ok(None);
    };
    let result = computed.get_may_dependence().ctx(what)?;
    // One map per pair of tagged references: their tags name them.
    let index: HashMap<&str, usize> =
        located.iter().enumerate().map(|(k, l)| (l.access.id.as_str(), k)).collect();
    let tag = |s: Set| -> Result<usize, IslError> {
        let m = s.unwrap().ctx(what)?;
        let name = m.get_tuple_name(DimType::Out).ctx(what)?;
        index.get(name).copied().ok_or_else(|| IslError {
            what: what(),
            message: format!("a flow dependence names the unknown reference {name}"),
        })
    };
    let maps = result.get_map_list().ctx(what)?;
    let mut found = Vec::new();
    for k in 0..maps.size().ctx(what)? {
        let m = maps.get_at(k).ctx(what)?;
        let source = tag(m.copy().ctx(what)?.domain().ctx(what)?)?;
        let sink = tag(m.copy().ctx(what)?.range().ctx(what)?)?;
        let pair = m.domain_factor_domain().ctx(what)?.range_factor_domain().ctx(what)?;
        // Coalescing only simplifies; isl's own may fail on a relation
        // ("total dimensionality changed unexpectedly", random program 125
        // of the oracle), which then keeps its pieces.
        let pair = pair.copy().ctx(what)?.coalesce().or_else(|_| Ok::<_, IslError>(pair))?;
        if !pair.is_empty().ctx(what)? {
            found.push((source, sink, pair.to_str().ctx(what)?.to_string()));
        }
    }
    found.sort_by_key(|f| (f.0, f.1));
    let mut out = Vec::new();
    for (i, j, relation) in found {
        out.push(dependence(DepKind::Flow, located[i].access, located[j].access, &relation));
    }
    Ok(Some(out))
}
