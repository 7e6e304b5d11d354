//! Scalar expansion for GPU variants (Feautrier, "Array expansion", ICS
//! 1988; RR-9110 §5's "symm ex"). A scalar that every iteration of the
//! loops around its uses writes before it reads (symm's `temp2`, zeroed
//! for each `(i, j)`) only carries values within an iteration, yet its one
//! storage location orders every iteration after the one before. Giving
//! each iteration of those loops a copy of its own (`temp2` →
//! `polytune_expanded_temp2[i][j]`) leaves the values flowing within an
//! iteration as they were and removes the rest, so that the loops can be
//! spread over threads, or reordered: symm's updates of `C` then leave the
//! kernel in which `i` and `j` both run in parallel, as ppcg's live-range
//! reordering lets isl do. The loops are those around every use along
//! which each value stays in its iteration, the innermost two at most (the
//! array's size is the product of their extents). After the region the
//! scalar takes the value of the write that came last in the original
//! order: its final value is the original's. A scalar that each of several
//! loop nests sets before it reads (deriche's `ym1`) has a web of uses per
//! nest, linked by no value; each web is expanded on its own.
//!
//! An array is expanded alike where every value of each element stays in
//! one iteration of those loops (doitgen's `sum[p]`, set for every
//! `(r, q)` before it is read): the copies are indexed by the loops and
//! then by the array's own subscripts (`sum[p]` →
//! `polytune_expanded_sum[r][q][p]`). After the region each element takes
//! the value of its own last write in the original order (`Expansion::last`,
//! a lexmax per element), whichever iteration that ran in. An array's uses
//! are one web, and an array with a may-access stays as it is.

use isl_rs::{Context, DimType, Map, Set, UnionFlow, UnionMap, UnionSet};

use crate::isl::{IslError, IslResultExt};
use crate::scop::{isl_name, AccessKind, Array, Expansion, Scop};

/// Loops an expansion indexes, at most: the innermost ones along which
/// values stay in their iteration.
const MAX_LOOPS: usize = 2;

/// The name of `scalar`'s expansion.
pub fn expanded_name(scalar: &str) -> String {
    format!("polytune_expanded_{scalar}")
}

/// `scop` with every scalar and array that can be expanded expanded
/// (none: the SCoP as it is, `expansions` empty).
pub fn expand(ctx: &Context, scop: &Scop) -> Result<Scop, IslError> {
    let mut out = scop.clone();
    let may = |name: &str| {
        scop.statements.iter().flat_map(|s| &s.accesses).any(|a| a.array == name && a.may.is_some())
    };
    let read = |name: &str| {
        scop.statements
            .iter()
            .flat_map(|s| &s.accesses)
            .any(|a| a.array == name && a.kind == AccessKind::Read)
    };
    let candidates: Vec<(String, usize)> = scop
        .arrays
        .iter()
        .filter(|a| a.written && !a.local && !a.is_struct_member() && !a.linearised)
        // A may-write's element may keep a value from another iteration;
        // an array no statement reads passes no value on: copies of it
        // would only cost memory and the write-back.
        .filter(|a| a.rank() == 0 || (!may(&a.name) && read(&a.name)))
        .map(|a| (a.name.clone(), a.rank()))
        .collect();
    for (name, rank) in candidates {
        // One dataflow for all webs: each is closed under it, so expanding
        // one leaves the others' flow as it was.
        let flow = crate::deps::untagged_flow(ctx, &out, |a| a.array == name)?;
        let webs = match rank {
            0 => webs(ctx, &out, &name, &flow)?,
            // Each element's last write may lie in another web: one web.
            _ => vec![Web { users: users(&out, &name), last: true }],
        };
        for (n, web) in webs.into_iter().enumerate() {
            let array = match n {
                0 => expanded_name(&name),
                n => format!("{}_{n}", expanded_name(&name)),
            };
            if let Some(next) = expand_one(ctx, &out, &name, &web, &array, &flow)? {
                out = next;
            }
        }
    }
    Ok(out)
}

/// The statements that access `name`.
fn users(scop: &Scop, name: &str) -> Vec<usize> {
    (0..scop.statements.len())
        .filter(|&k| scop.statements[k].accesses.iter().any(|a| a.array == name))
        .collect()
}

/// A web of a scalar's uses: statements that values of the scalar flow
/// between, and whether its writes hold the value the scalar has after
/// the SCoP.
struct Web {
    users: Vec<usize>,
    last: bool,
}

/// The uses of scalar `name` split into webs: statements linked by the
/// values that flow between them (deriche's `ym1`, set to 0 before each of
/// two passes, is two webs). Each web can have storage of its own, so one
/// pass's loops no longer order the other's. The web that writes last
/// where every statement runs (where the region runs the variant's code)
/// holds the scalar's final value; where the last write is not in one web
/// there, all uses are one web.
fn webs(ctx: &Context, scop: &Scop, name: &str, flow: &(UnionFlow, UnionMap)) -> Result<Vec<Web>, IslError> {
    let what = || format!("the webs of {name}");
    let users = users(scop, name);
    let one = |users: Vec<usize>| if users.is_empty() { Vec::new() } else { vec![Web { users, last: true }] };
    if users.len() < 2 {
        return Ok(one(users));
    }
    let index = |stmt: &str| users.iter().position(|&k| scop.statements[k].name == stmt);
    // Union-find over the users, joined along each flow dependence.
    let mut parent: Vec<usize> = (0..users.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let (flow, writes) = flow;
    let list = flow.get_may_dependence().ctx(what)?.get_map_list().ctx(what)?;
    for i in 0..list.size().ctx(what)? {
        let m = list.get_at(i).ctx(what)?;
        let (Some(a), Some(b)) = (
            index(m.get_tuple_name(DimType::In).ctx(what)?),
            index(m.get_tuple_name(DimType::Out).ctx(what)?),
        ) else {
            return Ok(one(users));
        };
        let (a, b) = (root(&mut parent, a), root(&mut parent, b));
        parent[a] = b;
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of = vec![usize::MAX; users.len()];
    for (n, &user) in users.iter().enumerate() {
        let r = root(&mut parent, n);
        if group_of[r] == usize::MAX {
            group_of[r] = groups.len();
            groups.push(Vec::new());
        }
        groups[group_of[r]].push(user);
    }
    if groups.len() == 1 {
        return Ok(one(users));
    }
    // The last write where every statement runs.
    let mut runs = Set::read_from_str(ctx, &scop.context).ctx(what)?;
    for s in &scop.statements {
        runs = runs.intersect(Set::read_from_str(ctx, &s.domain).ctx(what)?.params().ctx(what)?).ctx(what)?;
    }
    let last = last_write(ctx, scop, writes.copy().ctx(what)?.domain().ctx(what)?)?
        .intersect_params(runs)
        .ctx(what)?;
    let list = last.get_set_list().ctx(what)?;
    let mut last_groups = Vec::new();
    for i in 0..list.size().ctx(what)? {
        let Some(n) = index(list.get_at(i).ctx(what)?.get_tuple_name().ctx(what)?) else {
            return Ok(one(users));
        };
        last_groups.push(group_of[root(&mut parent, n)]);
    }
    last_groups.sort_unstable();
    last_groups.dedup();
    if last_groups.len() != 1 {
        return Ok(one(users));
    }
    Ok(groups.into_iter().enumerate().map(|(g, users)| Web { users, last: g == last_groups[0] }).collect())
}

/// The instances among `written` that write last in the original order.
fn last_write(ctx: &Context, scop: &Scop, written: UnionSet) -> Result<UnionSet, IslError> {
    let what = || "the last write".to_string();
    let schedule = UnionMap::read_from_str(ctx, &scop.schedule_map).ctx(what)?;
    let times = written.copy().ctx(what)?.apply(schedule.copy().ctx(what)?).ctx(what)?;
    let last_time = Set::from_union_set(times).ctx(what)?.lexmax().ctx(what)?;
    let last = UnionSet::from_set(last_time).ctx(what)?.apply(schedule.reverse().ctx(what)?).ctx(what)?;
    last.intersect(written).ctx(what)
}

/// `scop` with the uses of scalar `name` in `web` rewritten to `array`,
/// an element per iteration of the loops around them; `None` where they
/// cannot be.
fn expand_one(
    ctx: &Context,
    scop: &Scop,
    name: &str,
    web: &Web,
    array: &str,
    (flow, writes): &(UnionFlow, UnionMap),
) -> Result<Option<Scop>, IslError> {
    let what = || format!("expanding {name}");
    let Some(original) = scop.arrays.iter().find(|a| a.name == name) else { return Ok(None) };
    let uses = Uses { ctx, scop, name, rank: original.rank(), users: &web.users };
    let betas = uses.common_loops()?;
    if betas.is_empty() {
        return Ok(None);
    }
    let instances = uses.instances()?;
    // Each read's value written in the same iteration of the loops, and no
    // read of a value from before the SCoP.
    let no_source =
        flow.get_may_no_source().ctx(what)?.intersect_domain(instances.copy().ctx(what)?).ctx(what)?;
    if !no_source.is_empty().ctx(what)? {
        return Ok(None);
    }
    let deps = flow.get_may_dependence().ctx(what)?;
    let loops = uses.private_loops(&deps, &instances, &betas)?;
    if loops.is_empty() {
        return Ok(None);
    }
    let mut values: Vec<Set> = loops.iter().map(|(_, v)| v.copy().ctx(what)).collect::<Result<_, _>>()?;
    let last = match uses.rank {
        0 => uses.last_values(writes, instances, &loops)?,
        _ => {
            let Some(own) = uses.subscript_values(&instances)? else { return Ok(None) };
            values.extend(own);
            uses.last_elements(writes, instances, &loops)?
        }
    };
    let mut out = scop.clone();
    if uses.rewrite(&mut out, array, &loops)?.is_none() {
        return Ok(None);
    }
    // Its extents are for code generation to state in C (`Expansion::values`).
    out.arrays.push(Array {
        name: array.to_string(),
        element_type: original.element_type.clone(),
        extents: vec![None; values.len()],
        written: true,
        local: true,
        linearised: false,
    });
    out.expansions.push(Expansion {
        scalar: name.to_string(),
        array: array.to_string(),
        last: if web.last { Some(last.to_str().ctx(what)?.to_string()) } else { None },
        values: values
            .iter()
            .map(|v| Ok(v.to_str().ctx(what)?.to_string()))
            .collect::<Result<_, IslError>>()?,
        rank: uses.rank,
    });
    Ok(Some(out))
}

/// The uses of scalar or array `name` (of `rank`) in one web (the
/// statements `users`) that an expansion gives storage of their own.
struct Uses<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    name: &'a str,
    rank: usize,
    users: &'a [usize],
}

impl Uses<'_> {
    fn what(&self) -> String {
        format!("expanding {}", self.name)
    }

    /// The loops around every use: the same sequence positions before each
    /// (the flat schedule's constant dimensions) and an iterator each; the
    /// position before each loop.
    fn common_loops(&self) -> Result<Vec<i64>, IslError> {
        let what = || self.what();
        let maps = self.users.iter().map(|&k| self.flat(k)).collect::<Result<Vec<_>, _>>()?;
        let depth = self.users.iter().map(|&k| self.scop.statements[k].iterators.len()).min().unwrap_or(0);
        let mut betas = Vec::new();
        'loops: for d in 0..depth {
            let mut beta: Option<i64> = None;
            for m in &maps {
                let v = m.plain_get_val_if_fixed(DimType::Out, (2 * d) as u32).ctx(what)?;
                if !v.is_int().ctx(what)? {
                    break 'loops;
                }
                let v = v.get_num_si().ctx(what)?;
                if beta.is_some_and(|b| b != v) {
                    break 'loops;
                }
                beta = Some(v);
            }
            betas.extend(beta);
        }
        Ok(betas)
    }

    /// Statement `k`'s flat schedule.
    fn flat(&self, k: usize) -> Result<Map, IslError> {
        let what = || self.what();
        let schedule = UnionMap::read_from_str(self.ctx, &self.scop.schedule_map).ctx(what)?;
        let domain = UnionSet::read_from_str(self.ctx, &self.scop.statements[k].domain).ctx(what)?;
        Map::from_union_map(schedule.intersect_domain(domain).ctx(what)?).ctx(what)
    }

    /// The statements inside the loops at positions `betas`, uses or not.
    fn inside(&self, betas: &[i64]) -> Result<Vec<usize>, IslError> {
        let what = || self.what();
        let mut out = Vec::new();
        'statements: for (k, s) in self.scop.statements.iter().enumerate() {
            if s.iterators.len() < betas.len() {
                continue;
            }
            let m = self.flat(k)?;
            for (d, &beta) in betas.iter().enumerate() {
                let v = m.plain_get_val_if_fixed(DimType::Out, (2 * d) as u32).ctx(what)?;
                if !v.is_int().ctx(what)? || v.get_num_si().ctx(what)? != beta {
                    continue 'statements;
                }
            }
            out.push(k);
        }
        Ok(out)
    }

    /// Of an array: the pairs of instances of the statements `inside` that
    /// touch one element of another array, one of them writing: the
    /// dependences its copies would leave.
    fn other_conflicts(&self, inside: &[usize]) -> Result<UnionMap, IslError> {
        let what = || self.what();
        let (mut reads, mut writes) =
            (UnionMap::empty_ctx(self.ctx).ctx(what)?, UnionMap::empty_ctx(self.ctx).ctx(what)?);
        for &k in inside {
            let s = &self.scop.statements[k];
            let domain = UnionSet::read_from_str(self.ctx, &s.domain).ctx(what)?;
            for a in s.accesses.iter().filter(|a| a.array != self.name) {
                let m = UnionMap::read_from_str(self.ctx, &a.relation).ctx(what)?;
                let m = m.intersect_domain(domain.copy().ctx(what)?).ctx(what)?;
                match a.kind {
                    AccessKind::Read => reads = reads.union(m).ctx(what)?,
                    AccessKind::Write => writes = writes.union(m).ctx(what)?,
                }
            }
        }
        let written = writes.copy().ctx(what)?.reverse().ctx(what)?;
        let pairs = writes.copy().ctx(what)?.apply_range(written.copy().ctx(what)?).ctx(what)?;
        let pairs = pairs.union(reads.copy().ctx(what)?.apply_range(written).ctx(what)?).ctx(what)?;
        pairs.union(writes.apply_range(reads.reverse().ctx(what)?).ctx(what)?).ctx(what)
    }

    /// Whether some pair of `pairs` (of the statements `inside`) runs in
    /// one iteration of the loops outside loop `d` and in two of `d`.
    fn carried_at(&self, pairs: &UnionMap, inside: &[usize], d: usize) -> Result<bool, IslError> {
        let what = || self.what();
        let mut prefix = UnionMap::empty_ctx(self.ctx).ctx(what)?;
        for &k in inside {
            let s = &self.scop.statements[k];
            let text =
                format!("{{ {}[{}] -> [{}] }}", s.name, s.iterators.join(", "), s.iterators[..=d].join(", "));
            prefix = prefix.union(UnionMap::read_from_str(self.ctx, &text).ctx(what)?).ctx(what)?;
        }
        let outer: Vec<String> = (0..d).map(|e| format!("x{e}")).collect();
        let outer: String = outer.iter().map(|x| format!("{x}, ")).collect();
        let carried = UnionMap::read_from_str(self.ctx, &format!("{{ [{outer}a] -> [{outer}b] : a != b }}"))
            .ctx(what)?;
        let pairs = pairs.copy().ctx(what)?.apply_domain(prefix.copy().ctx(what)?).ctx(what)?;
        let pairs = pairs.apply_range(prefix).ctx(what)?;
        Ok(!pairs.intersect(carried).ctx(what)?.is_empty().ctx(what)?)
    }

    /// The instances of every use.
    fn instances(&self) -> Result<UnionSet, IslError> {
        let what = || self.what();
        let mut instances = UnionSet::empty_ctx(self.ctx).ctx(what)?;
        for &k in self.users {
            let domain = UnionSet::read_from_str(self.ctx, &self.scop.statements[k].domain).ctx(what)?;
            instances = instances.union(domain).ctx(what)?;
        }
        Ok(instances)
    }

    /// The loops (of the common ones, at positions `betas`) along which
    /// every dependence of `deps` stays on the diagonal, whose values start
    /// at 0, and, of an array, whose iterations share some element of it
    /// (else its copies would hold what its subscripts keep apart already:
    /// an output written once per element) and no element of another
    /// array (adi's `p` over the time loop, which `u` keeps sequential):
    /// the innermost `MAX_LOOPS` of them, each with its values at
    /// `instances`.
    fn private_loops(
        &self,
        deps: &UnionMap,
        instances: &UnionSet,
        betas: &[i64],
    ) -> Result<Vec<(usize, Set)>, IslError> {
        let ctx = self.ctx;
        let what = || self.what();
        // The values of loop `d` at each use's instances.
        let along = |d: usize| -> Result<UnionMap, IslError> {
            let mut out = UnionMap::empty_ctx(ctx).ctx(what)?;
            for &k in self.users {
                let s = &self.scop.statements[k];
                let its = s.iterators.join(", ");
                let text = format!("{{ {}[{its}] -> [{}] }}", s.name, s.iterators[d]);
                out = out.union(UnionMap::read_from_str(ctx, &text).ctx(what)?).ctx(what)?;
            }
            Ok(out)
        };
        let off = UnionMap::read_from_str(ctx, "{ [x] -> [y] : y != x }").ctx(what)?;
        let crosses = |pairs: &UnionMap, along: &UnionMap| -> Result<bool, IslError> {
            let pairs = pairs.copy().ctx(what)?.apply_domain(along.copy().ctx(what)?).ctx(what)?;
            let pairs = pairs.apply_range(along.copy().ctx(what)?).ctx(what)?;
            Ok(!pairs.intersect(off.copy().ctx(what)?).ctx(what)?.is_empty().ctx(what)?)
        };
        // Of an array, the loops that other arrays' dependences keep
        // sequential gain nothing from copies, which multiply its size.
        let common = betas.len();
        let (shared, others) = match self.rank {
            0 => (None, None),
            _ => {
                let inside = self.inside(betas)?;
                (Some(self.shared_elements(instances)?), Some((self.other_conflicts(&inside)?, inside)))
            }
        };
        let negative = Set::read_from_str(ctx, "{ [x] : x < 0 }").ctx(what)?;
        let mut loops = Vec::new();
        for d in (0..common).rev() {
            let along = along(d)?;
            if crosses(deps, &along)? {
                continue;
            }
            if let Some(shared) = &shared {
                if !crosses(shared, &along)? {
                    continue;
                }
            }
            if let Some((pairs, inside)) = &others {
                if self.carried_at(pairs, inside, d)? {
                    continue;
                }
            }
            let values = instances.copy().ctx(what)?.apply(along).ctx(what)?;
            let values = Set::from_union_set(values).ctx(what)?;
            if !values
                .copy()
                .ctx(what)?
                .intersect(negative.copy().ctx(what)?)
                .ctx(what)?
                .is_empty()
                .ctx(what)?
            {
                continue;
            }
            loops.insert(0, (d, values));
            if loops.len() == MAX_LOOPS {
                break;
            }
        }
        Ok(loops)
    }

    /// Of an array: the pairs of `instances` that access one element.
    fn shared_elements(&self, instances: &UnionSet) -> Result<UnionMap, IslError> {
        let what = || self.what();
        let mut accesses = UnionMap::empty_ctx(self.ctx).ctx(what)?;
        for &k in self.users {
            for a in self.scop.statements[k].accesses.iter().filter(|a| a.array == self.name) {
                let m = UnionMap::read_from_str(self.ctx, &a.relation).ctx(what)?;
                accesses = accesses.union(m).ctx(what)?;
            }
        }
        let accesses = accesses.intersect_domain(instances.copy().ctx(what)?).ctx(what)?;
        let back = accesses.copy().ctx(what)?.reverse().ctx(what)?;
        accesses.apply_range(back).ctx(what)
    }

    /// The last write among `instances` in the original order, and its
    /// values of the `loops`: the iterators' values, not the schedule's (a
    /// loop that counts down has `-i` there).
    fn last_values(
        &self,
        writes: &UnionMap,
        instances: UnionSet,
        loops: &[(usize, Set)],
    ) -> Result<Set, IslError> {
        let what = || self.what();
        let written = writes.copy().ctx(what)?.domain().ctx(what)?.intersect(instances).ctx(what)?;
        let last_write = last_write(self.ctx, self.scop, written)?;
        Set::from_union_set(last_write.apply(self.iterators(loops)?).ctx(what)?).ctx(what)
    }

    /// Each use's instances to their values of the `loops`.
    fn iterators(&self, loops: &[(usize, Set)]) -> Result<UnionMap, IslError> {
        let what = || self.what();
        let mut iterators = UnionMap::empty_ctx(self.ctx).ctx(what)?;
        for &k in self.users {
            let s = &self.scop.statements[k];
            let kept: Vec<&str> = loops.iter().map(|(d, _)| s.iterators[*d].as_str()).collect();
            let text = format!("{{ {}[{}] -> [{}] }}", s.name, s.iterators.join(", "), kept.join(", "));
            iterators = iterators.union(UnionMap::read_from_str(self.ctx, &text).ctx(what)?).ctx(what)?;
        }
        Ok(iterators)
    }

    /// Of an array: `{ [e..., x...] }`, each element `x` written among
    /// `instances` with the values `e` of the `loops` at its own last write
    /// in the original order (a lexmax of the write times per element).
    fn last_elements(
        &self,
        writes: &UnionMap,
        instances: UnionSet,
        loops: &[(usize, Set)],
    ) -> Result<Set, IslError> {
        let what = || self.what();
        let schedule = UnionMap::read_from_str(self.ctx, &self.scop.schedule_map).ctx(what)?;
        // x -> the times of its writes, then the latest.
        let writes = writes.copy().ctx(what)?.intersect_domain(instances).ctx(what)?;
        let times = writes.reverse().ctx(what)?.apply_range(schedule.copy().ctx(what)?).ctx(what)?;
        let latest = Map::from_union_map(times).ctx(what)?.lexmax().ctx(what)?;
        // The schedule is one-to-one: each time is one instance.
        let writer =
            UnionMap::from_map(latest).ctx(what)?.apply_range(schedule.reverse().ctx(what)?).ctx(what)?;
        let at = Map::from_union_map(writer.apply_range(self.iterators(loops)?).ctx(what)?).ctx(what)?;
        at.reverse().ctx(what)?.wrap().ctx(what)?.flatten().ctx(what)
    }

    /// Of an array: for each of its dimensions, the subscripts its uses at
    /// `instances` take there, from 0 (`None` where one is negative).
    fn subscript_values(&self, instances: &UnionSet) -> Result<Option<Vec<Set>>, IslError> {
        let what = || self.what();
        let mut touched = UnionSet::empty_ctx(self.ctx).ctx(what)?;
        for &k in self.users {
            for a in self.scop.statements[k].accesses.iter().filter(|a| a.array == self.name) {
                let m = UnionMap::read_from_str(self.ctx, &a.relation).ctx(what)?;
                let m = m.intersect_domain(instances.copy().ctx(what)?).ctx(what)?;
                touched = touched.union(m.range().ctx(what)?).ctx(what)?;
            }
        }
        if touched.is_empty().ctx(what)? {
            return Ok(None);
        }
        let touched = Set::from_union_set(touched).ctx(what)?;
        let negative = Set::read_from_str(self.ctx, "{ [x] : x < 0 }").ctx(what)?;
        let mut out = Vec::new();
        for d in 0..self.rank as u32 {
            let n = self.rank as u32;
            let one = touched.copy().ctx(what)?.project_out(DimType::Set, d + 1, n - d - 1).ctx(what)?;
            let one = one.project_out(DimType::Set, 0, d).ctx(what)?.reset_tuple_id().ctx(what)?;
            if !one.copy().ctx(what)?.intersect(negative.copy().ctx(what)?).ctx(what)?.is_empty().ctx(what)? {
                return Ok(None);
            }
            out.push(one);
        }
        Ok(Some(out))
    }

    /// The rewrite in `out`: every use reads and writes the iteration's
    /// element (a scalar) or row (an array) of `array`; `None` where a
    /// statement's text cannot be rewritten.
    fn rewrite(&self, out: &mut Scop, array: &str, loops: &[(usize, Set)]) -> Result<Option<()>, IslError> {
        let (ctx, name) = (self.ctx, self.name);
        let what = || self.what();
        let isl_array = isl_name(array);
        for &k in self.users {
            let s = &mut out.statements[k];
            let it: Vec<&str> = loops.iter().map(|(d, _)| s.iterators[*d].as_str()).collect();
            let it = it.join(", ");
            let c_it: String = loops.iter().map(|(d, _)| format!("[{}]", s.c_iterators[*d])).collect();
            let its = s.iterators.join(", ");
            let element = format!("{array}{c_it}");
            let subscripted = self.rank > 0;
            let Some(text) = replace_identifier(&s.text, name, &element, subscripted) else {
                return Ok(None);
            };
            s.text = text;
            let copy = Map::read_from_str(ctx, &format!("{{ {}[{its}] -> [{it}] }}", s.name)).ctx(what)?;
            for a in s.accesses.iter_mut().filter(|a| a.array == name) {
                let Some(text) = replace_identifier(&a.text, name, &element, subscripted) else {
                    return Ok(None);
                };
                a.array = array.to_string();
                a.text = text;
                // The loops' values, then the subscripts as they were.
                let own = Map::read_from_str(ctx, &a.relation).ctx(what)?;
                let relation = copy.copy().ctx(what)?.flat_range_product(own).ctx(what)?;
                let relation = relation.set_tuple_name(DimType::Out, &isl_array).ctx(what)?;
                a.relation = relation.to_str().ctx(what)?.to_string();
            }
        }
        Ok(Some(()))
    }
}

/// `text` with every use of the identifier `name` (not a member, not part
/// of a longer name) replaced by `by`; `None` where the use is not the one
/// the rewrite keeps: a scalar followed by `[` or `(` (an array or function
/// use), an array not `subscripted` (`name[`; passed whole, as a pointer).
fn replace_identifier(text: &str, name: &str, by: &str, subscripted: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = String::with_capacity(text.len() + 32);
    let mut i = 0;
    while i < bytes.len() {
        if ident(bytes[i]) {
            let start = i;
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            let word = &text[start..i];
            let member = text[..start].trim_end().ends_with('.') || text[..start].trim_end().ends_with("->");
            if word == name && !member && !bytes[start].is_ascii_digit() {
                let next = text[i..].trim_start();
                let kept = match subscripted {
                    false => !next.starts_with(['[', '(']),
                    true => next.starts_with('['),
                };
                if !kept {
                    return None;
                }
                out.push_str(by);
            } else {
                out.push_str(word);
            }
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(body: &str) -> Vec<(String, String)> {
        let text = format!(
            "void f(int n, double A[n][n], double B[n]) {{ double s; int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}"
        );
        let scops = crate::scop::extract_preprocessed(std::path::Path::new("t.c"), &text).unwrap();
        let ctx = crate::isl::new_context();
        let out = expand(&ctx, &scops[0]).unwrap();
        let uses: Vec<String> = out.statements.iter().map(|s| s.text.clone()).collect();
        out.expansions.iter().map(|e| (e.scalar.clone(), uses.join(" | "))).collect()
    }

    #[test]
    fn a_scalar_is_expanded_along_the_loops_its_values_stay_in() {
        // Written and read within each (i, j): both loops, as symm's temp2.
        let both =
            expanded("for (i = 0; i < n; i++) for (j = 0; j < n; j++) { s = A[i][j]; A[j][i] = s * 2; }");
        let uses = "polytune_expanded_s[i][j] = A[i][j]; | A[j][i] = polytune_expanded_s[i][j] * 2;";
        assert_eq!(both, [("s".into(), uses.into())]);
        // A sum over `j` kept in `s` for each `i`: its values cross `j`'s
        // iterations, so only `i` indexes it.
        let outer =
            expanded("for (i = 0; i < n; i++) { s = 0; for (j = 0; j < n; j++) s += A[i][j]; B[i] = s; }");
        assert_eq!(outer.len(), 1, "{outer:?}");
        assert!(outer[0].1.contains("polytune_expanded_s[i]") && !outer[0].1.contains("_s[i]["), "{outer:?}");
        // Three loops around each use: the innermost two.
        let inner = expanded(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) { s = A[j][k]; A[j][k] = s + i; }",
        );
        assert!(inner[0].1.contains("polytune_expanded_s[j][k]"), "{inner:?}");
    }

    /// A scalar set afresh before each of two nests (deriche's `ym1`) is a
    /// web per nest, each expanded along its own loop; the second web's
    /// writes hold the value after the SCoP. Where a value flows from one
    /// nest into the next, the uses are one web, and a sum along `j`
    /// carried over every `i` is not expanded.
    #[test]
    fn a_scalar_set_afresh_in_each_nest_is_a_web_per_nest() {
        let body = "for (i = 0; i < n; i++) { s = 0; for (j = 0; j < n; j++) s += A[i][j]; B[i] = s; }\n\
                    for (j = 0; j < n; j++) { s = 1; for (i = 0; i < n; i++) s *= A[i][j]; B[j] += s; }";
        let text = format!(
            "void f(int n, double A[n][n], double B[n]) {{ double s; int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}"
        );
        let scops = crate::scop::extract_preprocessed(std::path::Path::new("t.c"), &text).unwrap();
        let ctx = crate::isl::new_context();
        let out = expand(&ctx, &scops[0]).unwrap();
        let webs: Vec<(&str, bool)> =
            out.expansions.iter().map(|e| (e.array.as_str(), e.last.is_some())).collect();
        assert_eq!(webs, [("polytune_expanded_s", false), ("polytune_expanded_s_1", true)]);
        let uses: Vec<&str> = out.statements.iter().map(|s| s.text.as_str()).collect();
        assert!(uses.contains(&"polytune_expanded_s[i] = 0;"), "{uses:?}");
        assert!(uses.contains(&"polytune_expanded_s_1[j] = 1;"), "{uses:?}");
        let carried = expanded(
            "s = 0; for (i = 0; i < n; i++) for (j = 0; j < n; j++) s += A[i][j];\n\
             for (i = 0; i < n; i++) B[i] = s;",
        );
        assert!(carried.is_empty(), "{carried:?}");
    }

    /// The element that holds the scalar's value after the SCoP: the last
    /// write's, named by its iterators even where a loop counts down (its
    /// schedule dimension is then `-i`).
    #[test]
    fn the_last_write_is_named_by_its_iterators() {
        let last = |body: &str| {
            let text = format!(
                "void f(int n, double A[n]) {{ double s; int i;\n#pragma scop\n{body}\n#pragma endscop\n}}"
            );
            let scops = crate::scop::extract_preprocessed(std::path::Path::new("t.c"), &text).unwrap();
            let ctx = crate::isl::new_context();
            let out = expand(&ctx, &scops[0]).unwrap();
            let last = Set::read_from_str(&ctx, out.expansions[0].last.as_ref().unwrap()).unwrap();
            let want = Set::read_from_str(&ctx, "[n] -> { [3] : n >= 4 }").unwrap();
            last.intersect_params(want.copy().unwrap().params().unwrap()).unwrap().is_equal(&want).unwrap()
        };
        assert!(last("for (i = n - 1; i >= 3; i--) { s = A[i]; A[i] = s * 2; }"));
        // Counting up to 3 ends at 3 too.
        assert!(last("for (i = 0; i <= 3; i++) { s = A[i]; A[i] = s * 2; }"));
    }

    #[test]
    fn only_whole_uses_of_the_scalar_are_replaced() {
        let t = replace_identifier("temp2 += B[k][j] * temp23 + s.temp2", "temp2", "x[j]", false);
        assert_eq!(t.as_deref(), Some("x[j] += B[k][j] * temp23 + s.temp2"));
        assert_eq!(replace_identifier("f(temp2[0])", "temp2", "x[j]", false), None);
        let t = replace_identifier("sum[p] += A[r][q][s] * sum2[p]", "sum", "x[r][q]", true);
        assert_eq!(t.as_deref(), Some("x[r][q][p] += A[r][q][s] * sum2[p]"));
        assert_eq!(replace_identifier("f(sum)", "sum", "x[r]", true), None);
    }
}
