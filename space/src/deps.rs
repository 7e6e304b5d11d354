//! Dependence analysis with isl under the original schedule.
//!
//! Memory-based dependences (RAW, WAR, WAW, RAR) are computed per pair of
//! references; value-based flow dependences come from isl's dataflow analysis
//! on accesses tagged with their reference, so every dependence still names the
//! two references that created it (the unified scheduler groups by reference).

use std::collections::BTreeMap;
use std::fmt;

use isl_rs::{Context, Map, Set, UnionAccessInfo, UnionMap, UnionSet};
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
    relation: Map,
    schedule: Map,
    tag_domain: String,
}

/// Memory-based and value-based dependences of `scop` under its original schedule.
pub fn analyze(scop: &Scop) -> Result<Dependences, IslError> {
    let ctx = crate::isl::new_context();
    analyze_in(&ctx, scop)
}

pub fn analyze_in(ctx: &Context, scop: &Scop) -> Result<Dependences, IslError> {
    let schedule =
        UnionMap::read_from_str(ctx, &scop.schedule_map).ctx(|| "reading the original schedule".into())?;
    let mut located = Vec::new();
    for s in &scop.statements {
        let domain = Set::read_from_str(ctx, &s.domain).ctx(|| format!("domain of {}", s.name))?;
        let sched = schedule
            .copy()
            .ctx(|| "copy".into())?
            .intersect_domain(UnionSet::from_set(domain.copy().ctx(|| "copy".into())?).ctx(|| "set".into())?)
            .ctx(|| format!("schedule of {}", s.name))?
            .as_map()
            .ctx(|| format!("schedule of {}", s.name))?;
        for a in &s.accesses {
            let relation = Map::read_from_str(ctx, &a.relation)
                .ctx(|| format!("access {} of {}", a.text, s.name))?
                .intersect_domain(domain.copy().ctx(|| "copy".into())?)
                .ctx(|| format!("access {} of {}", a.text, s.name))?;
            let tag_domain = format!("{{ [{}[{}] -> {}[]] }}", s.name, s.iterators.join(", "), a.id);
            located.push(Located {
                access: a,
                relation,
                schedule: sched.copy().ctx(|| "copy".into())?,
                tag_domain,
            });
        }
    }

    let mut deps = Vec::new();
    for src in &located {
        for snk in &located {
            if src.access.array != snk.access.array {
                continue;
            }
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
            let before =
                src.schedule.copy().ctx(what)?.lex_lt_map(snk.schedule.copy().ctx(what)?).ctx(what)?;
            let rel = same_element.intersect(before).ctx(what)?.coalesce().ctx(what)?;
            if !rel.is_empty().ctx(what)? {
                deps.push(dependence(kind, src.access, snk.access, rel.to_str().ctx(what)?));
            }
        }
    }
    deps.extend(flow(ctx, &located)?);
    Ok(Dependences { deps })
}

/// `deps` with each value-based flow whose rational relaxation goes
/// backward intersected with the original order: what the scheduler's
/// Farkas constraints are built from. Flow goes forward in the original
/// schedule, but where its relation has local variables (a `%`
/// subscript), isl's dataflow may say so only through them; the rational
/// relaxation that Farkas' lemma sees (`schedule::farkas`) then holds
/// backward pairs, and no schedule fits, not even the original loops
/// (issue 36, random program 28: "no row carries", "no shared outer
/// loop"). Intersected with "before", the order is stated in affine
/// constraints of its own, and the integer pairs stay the same. The
/// dependences themselves keep isl's text: the pieces of "before" cost
/// isl's own scheduler minutes on some relations.
pub fn with_stated_order(ctx: &Context, scop: &Scop, deps: &Dependences) -> Result<Dependences, IslError> {
    let what = || "the original order of flow dependences".to_string();
    let mut out = deps.clone();
    let mut before = None;
    for d in out.deps.iter_mut().filter(|d| d.kind == DepKind::Flow) {
        if !["floor", "mod", "exists"].iter().any(|w| d.relation.contains(w)) {
            continue;
        }
        let before = match &before {
            Some(b) => b,
            None => {
                let s = UnionMap::read_from_str(ctx, &scop.schedule_map).ctx(what)?;
                before.insert(s.copy().ctx(what)?.lex_lt_union_map(s).ctx(what)?)
            }
        };
        let rel = UnionMap::read_from_str(ctx, &d.relation).ctx(what)?;
        let relaxed = rel.copy().ctx(what)?.remove_divs().ctx(what)?;
        if !relaxed.is_subset(before).ctx(what)? {
            let stated = rel.intersect(before.copy().ctx(what)?).ctx(what)?.coalesce().ctx(what)?;
            d.relation = stated.to_str().ctx(what)?.to_string();
        }
    }
    Ok(out)
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

/// isl's dataflow analysis on tagged accesses `[S[i] -> refN[]] -> A[...]`.
fn flow(ctx: &Context, located: &[Located]) -> Result<Vec<Dependence>, IslError> {
    let what = || "value-based flow dependences".to_string();
    let mut reads = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut writes = UnionMap::empty_ctx(ctx).ctx(what)?;
    let mut schedule = UnionMap::empty_ctx(ctx).ctx(what)?;
    for l in located {
        let tag = UnionSet::read_from_str(ctx, &l.tag_domain).ctx(what)?;
        // [S[i] -> refN[]] -> S[i]
        let untag = tag.unwrap().ctx(what)?.domain_map().ctx(what)?;
        let tagged_acc =
            untag.copy().ctx(what)?.apply_range(l.relation.copy().ctx(what)?.to_union_map().ctx(what)?);
        let tagged_acc = tagged_acc.ctx(what)?;
        let tagged_sched =
            untag.apply_range(l.schedule.copy().ctx(what)?.to_union_map().ctx(what)?).ctx(what)?;
        schedule = schedule.union(tagged_sched).ctx(what)?;
        match l.access.kind {
            AccessKind::Read => reads = reads.union(tagged_acc).ctx(what)?,
            AccessKind::Write => writes = writes.union(tagged_acc).ctx(what)?,
        }
    }
    let info = UnionAccessInfo::from_sink(reads)
        .ctx(what)?
        .set_must_source(writes)
        .ctx(what)?
        .set_schedule_map(schedule)
        .ctx(what)?;
    let result = info.compute_flow().ctx(what)?.get_may_dependence().ctx(what)?;
    let mut out = Vec::new();
    for src in located.iter().filter(|l| l.access.kind == AccessKind::Write) {
        for snk in
            located.iter().filter(|l| l.access.kind == AccessKind::Read && l.access.array == src.access.array)
        {
            let s = UnionSet::read_from_str(ctx, &src.tag_domain).ctx(what)?;
            let t = UnionSet::read_from_str(ctx, &snk.tag_domain).ctx(what)?;
            let pair = result
                .copy()
                .ctx(what)?
                .intersect_domain(s)
                .ctx(what)?
                .intersect_range(t)
                .ctx(what)?
                .domain_factor_domain()
                .ctx(what)?
                .range_factor_domain()
                .ctx(what)?
                .coalesce()
                .ctx(what)?;
            if !pair.is_empty().ctx(what)? {
                out.push(dependence(DepKind::Flow, src.access, snk.access, pair.to_str().ctx(what)?));
            }
        }
    }
    Ok(out)
}
