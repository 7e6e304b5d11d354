//! A schedule tree read into Clay's (β0, α1, β1, …, αn, βn) form.
//!
//! The walk records, per statement, the path from the root: a β entry for each sequence
//! or set child it lies in, an α entry for each band member. A band member that is an
//! integer constant for every statement under it runs no loop, it only orders them (our
//! schedulers emit such scalar rows): it becomes a β entry. Runs of β entries between two
//! α are then numbered in Clay's normal form: at each depth, the statements sharing a
//! β-prefix get the dense ranks 0, 1, … of their runs in lexicographic order, so that
//! β-vectors are unique (statements a tree orders only by their loops' values get
//! distinct last β, in statement order).

use std::collections::BTreeMap;

use isl_rs::{Context, DimType, Schedule, ScheduleNode, ScheduleNodeType, UnionSet};
use serde::{Deserialize, Serialize};

use model::isl::{IslError, IslResultExt};
use model::scop::Scop;

/// An affine form of one statement's iterators and the SCoP's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Aff {
    pub iters: Vec<i64>,
    pub params: Vec<i64>,
    pub constant: i64,
}

impl Aff {
    /// The statement's `k`-th iterator.
    pub fn iterator(n_iters: usize, n_params: usize, k: usize) -> Aff {
        let mut iters = vec![0; n_iters];
        iters[k] = 1;
        Aff { iters, params: vec![0; n_params], constant: 0 }
    }

    pub fn is_constant(&self) -> bool {
        self.iters.iter().chain(&self.params).all(|&c| c == 0)
    }

    /// isl's text of the form, over the statement's `iterators` and the `params`.
    pub fn text(&self, iterators: &[String], params: &[String]) -> String {
        let mut terms = Vec::new();
        for (k, name) in self.iters.iter().zip(iterators).chain(self.params.iter().zip(params)) {
            match *k {
                0 => {}
                1 => terms.push(name.clone()),
                -1 => terms.push(format!("-{name}")),
                k => terms.push(format!("{k}*{name}")),
            }
        }
        if self.constant != 0 || terms.is_empty() {
            terms.push(self.constant.to_string());
        }
        terms.join(" + ").replace("+ -", "- ")
    }
}

/// One statement's schedule: `beta.len() == alpha.len() + 1`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// The statement's name (`S1`).
    pub statement: String,
    /// How many iterators the statement has (the length of each α's `iters`).
    pub iterators: usize,
    /// How many parameters the SCoP has (the length of each α's `params`).
    pub params: usize,
    pub beta: Vec<i64>,
    pub alpha: Vec<Aff>,
}

/// Every statement's relation, in the SCoP's statement order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClayForm {
    pub relations: Vec<Relation>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClayError {
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("statement {statement}: {reason}; Clay's form here has one affine loop per band member and no index-set split")]
    NotExpressible { statement: String, reason: String },
    #[error("the schedule tree has a {0} node, which Clay's form does not describe")]
    Node(String),
    #[error("the schedule tree names {0}, which is not a statement of the SCoP")]
    UnknownStatement(String),
}

/// One step of a statement's root-to-leaf path.
#[derive(Clone, Debug)]
enum Entry {
    Beta(i64),
    Alpha(Aff),
}

impl ClayForm {
    /// The form of the schedule tree `tree` (isl's YAML text) of `scop`.
    pub fn from_tree(ctx: &Context, scop: &Scop, tree: &str) -> Result<ClayForm, ClayError> {
        let what = || "reading the schedule tree".to_string();
        let schedule = Schedule::read_from_str(ctx, tree).ctx(what)?;
        let root = schedule.get_root().ctx(what)?;
        let mut paths: Vec<Vec<Entry>> = vec![Vec::new(); scop.statements.len()];
        let all: Vec<usize> = (0..scop.statements.len()).collect();
        walk(scop, root, &all, &mut paths)?;
        Ok(normal_form(scop, paths))
    }

    /// The original program's form (from the SCoP's own schedule tree).
    pub fn original(ctx: &Context, scop: &Scop) -> Result<ClayForm, ClayError> {
        ClayForm::from_tree(ctx, scop, &scop.schedule)
    }

    /// The form as an isl union map `S[i] -> [β0, α1, β1, …]`, every range padded with zeros
    /// to the longest, restricted to the statements' domains.
    pub fn map_text(&self, scop: &Scop) -> String {
        let depth = self.relations.iter().map(|r| r.beta.len() + r.alpha.len()).max().unwrap_or(1);
        let parts: Vec<String> = self
            .relations
            .iter()
            .zip(&scop.statements)
            .map(|(r, st)| {
                let mut dims = Vec::new();
                for (k, b) in r.beta.iter().enumerate() {
                    dims.push(b.to_string());
                    if let Some(a) = r.alpha.get(k) {
                        dims.push(a.text(&st.iterators, &scop.params));
                    }
                }
                dims.resize(depth, "0".to_string());
                let domain = st.domain.find('{').map_or("", |i| &st.domain[i + 1..]);
                let (tuple, constraints) = domain
                    .trim_end()
                    .trim_end_matches('}')
                    .split_once(':')
                    .map_or((domain.trim_end().trim_end_matches('}').trim(), ""), |(t, c)| {
                        (t.trim(), c.trim())
                    });
                match constraints {
                    "" => format!("{tuple} -> [{}]", dims.join(", ")),
                    c => format!("{tuple} -> [{}] : {c}", dims.join(", ")),
                }
            })
            .collect();
        let params = match scop.params.is_empty() {
            true => String::new(),
            false => format!("[{}] -> ", scop.params.join(", ")),
        };
        format!("{params}{{ {} }}", parts.join("; "))
    }
}

fn statement_index(scop: &Scop, name: &str) -> Result<usize, ClayError> {
    scop.statements
        .iter()
        .position(|s| s.name == name)
        .ok_or_else(|| ClayError::UnknownStatement(name.into()))
}

/// The statements a filter's union set names.
fn filter_statements(scop: &Scop, filter: &UnionSet) -> Result<Vec<usize>, ClayError> {
    let what = || "reading a filter".to_string();
    let list = filter.get_set_list().ctx(what)?;
    let mut out = Vec::new();
    for i in 0..list.size().ctx(what)? {
        let set = list.get_at(i).ctx(what)?;
        let name = set.get_tuple_name().ctx(what)?;
        out.push(statement_index(scop, name)?);
    }
    Ok(out)
}

fn walk(
    scop: &Scop,
    node: ScheduleNode,
    active: &[usize],
    paths: &mut [Vec<Entry>],
) -> Result<(), ClayError> {
    let what = || "walking the schedule tree".to_string();
    match node.get_type().ctx(what)? {
        ScheduleNodeType::Leaf => Ok(()),
        ScheduleNodeType::Domain | ScheduleNodeType::Mark => {
            walk(scop, node.child(0).ctx(what)?, active, paths)
        }
        ScheduleNodeType::Filter => {
            let inside = filter_statements(scop, &node.filter_get_filter().ctx(what)?)?;
            let active: Vec<usize> = active.iter().copied().filter(|s| inside.contains(s)).collect();
            walk(scop, node.child(0).ctx(what)?, &active, paths)
        }
        ScheduleNodeType::Sequence | ScheduleNodeType::Set => {
            let mut seen: Vec<usize> = Vec::new();
            for i in 0..node.n_children().ctx(what)? {
                let child = node.copy().ctx(what)?.child(i).ctx(what)?;
                let inside = filter_statements(scop, &child.filter_get_filter().ctx(what)?)?;
                let here: Vec<usize> = active.iter().copied().filter(|s| inside.contains(s)).collect();
                for &s in &here {
                    if seen.contains(&s) {
                        return Err(ClayError::NotExpressible {
                            statement: scop.statements[s].name.clone(),
                            reason: "its instances are split over several children of a sequence".into(),
                        });
                    }
                    seen.push(s);
                    paths[s].push(Entry::Beta(i64::from(i)));
                }
                walk(scop, child.child(0).ctx(what)?, &here, paths)?;
            }
            Ok(())
        }
        ScheduleNodeType::Band => {
            let partial = node.band_get_partial_schedule().ctx(what)?;
            for k in 0..node.band_n_member().ctx(what)? {
                let upa = partial.get_at(k).ctx(what)?;
                let mut affs: BTreeMap<usize, Aff> = BTreeMap::new();
                let list = upa.get_pw_aff_list().ctx(what)?;
                for j in 0..list.size().ctx(what)? {
                    let pa = list.get_at(j).ctx(what)?;
                    let name =
                        pa.get_domain_space().ctx(what)?.get_tuple_name(DimType::Set).ctx(what)?.to_string();
                    let s = statement_index(scop, &name)?;
                    if active.contains(&s) {
                        affs.insert(s, aff_of(scop, s, pa)?);
                    }
                }
                let scalar = affs.values().all(|a| a.is_constant());
                for &s in active {
                    let aff = affs.remove(&s).ok_or_else(|| ClayError::NotExpressible {
                        statement: scop.statements[s].name.clone(),
                        reason: format!("band member {k} has no function for it"),
                    })?;
                    paths[s].push(if scalar { Entry::Beta(aff.constant) } else { Entry::Alpha(aff) });
                }
            }
            walk(scop, node.child(0).ctx(what)?, active, paths)
        }
        other => Err(ClayError::Node(format!("{other:?}").to_lowercase())),
    }
}

/// A one-piece, division-free affine function of statement `s`, as coefficients.
fn aff_of(scop: &Scop, s: usize, pa: isl_rs::PwAff) -> Result<Aff, ClayError> {
    let st = &scop.statements[s];
    let what = || format!("the schedule of {}", st.name);
    let not = |reason: &str| ClayError::NotExpressible { statement: st.name.clone(), reason: reason.into() };
    let pa = pa.coalesce().ctx(what)?;
    if pa.n_piece().ctx(what)? != 1 {
        return Err(not("a band member is piecewise affine"));
    }
    let aff = pa.as_aff().ctx(what)?;
    if aff.dim(DimType::Div).ctx(what)? != 0 {
        return Err(not("a band member has an integer division"));
    }
    let int = |v: isl_rs::Val| -> Result<i64, ClayError> {
        if !v.is_int().ctx(what)? {
            return Err(not("a band member has a rational coefficient"));
        }
        Ok(v.get_num_si().ctx(what)?)
    };
    let mut iters = Vec::new();
    for i in 0..st.iterators.len() {
        iters.push(int(aff.get_coefficient_val(DimType::In, i as i32).ctx(what)?)?);
    }
    let mut params = vec![0; scop.params.len()];
    for i in 0..aff.dim(DimType::Param).ctx(what)? {
        let c = int(aff.get_coefficient_val(DimType::Param, i).ctx(what)?)?;
        if c == 0 {
            continue;
        }
        let name = aff.get_dim_name(DimType::Param, i as u32).ctx(what)?;
        let Some(p) = scop.params.iter().position(|p| *p == name) else {
            return Err(not(&format!("a band member uses {name}, not a parameter of the SCoP")));
        };
        params[p] = c;
    }
    let constant = int(aff.get_constant_val().ctx(what)?)?;
    Ok(Aff { iters, params, constant })
}

/// Paths → relations with β in normal form (dense ranks per β-prefix).
fn normal_form(scop: &Scop, paths: Vec<Vec<Entry>>) -> ClayForm {
    // Each path as (β runs, α): runs[k] precedes alpha[k]; runs has one more.
    let split: Vec<(Vec<Vec<i64>>, Vec<Aff>)> = paths
        .into_iter()
        .map(|p| {
            let (mut runs, mut alpha) = (vec![Vec::new()], Vec::new());
            for e in p {
                match e {
                    Entry::Beta(b) => runs.last_mut().expect("one run at least").push(b),
                    Entry::Alpha(a) => {
                        alpha.push(a);
                        runs.push(Vec::new());
                    }
                }
            }
            (runs, alpha)
        })
        .collect();
    let mut beta: Vec<Vec<i64>> = vec![Vec::new(); split.len()];
    rank(&split, &(0..split.len()).collect::<Vec<_>>(), 0, &mut beta);
    let relations = split
        .into_iter()
        .zip(beta)
        .zip(&scop.statements)
        .map(|(((_, alpha), beta), st)| Relation {
            statement: st.name.clone(),
            iterators: st.iterators.len(),
            params: scop.params.len(),
            beta,
            alpha,
        })
        .collect();
    ClayForm { relations }
}

/// Numbers depth `depth` of the statements `group` (which share a β-prefix): dense ranks
/// of their runs, then the same inside each rank.
fn rank(split: &[(Vec<Vec<i64>>, Vec<Aff>)], group: &[usize], depth: usize, beta: &mut [Vec<i64>]) {
    let mut runs: Vec<&Vec<i64>> = group.iter().filter_map(|&s| split[s].0.get(depth)).collect();
    runs.sort();
    runs.dedup();
    let mut next = 0;
    for run in runs {
        let inside: Vec<usize> =
            group.iter().copied().filter(|&s| split[s].0.get(depth) == Some(run)).collect();
        let deeper: Vec<usize> = inside.iter().copied().filter(|&s| split[s].0.len() > depth + 1).collect();
        if !deeper.is_empty() {
            for &s in &deeper {
                beta[s].push(next);
            }
            next += 1;
            rank(split, &deeper, depth + 1, beta);
        }
        // Statements at one place of one loop body, told apart only by their loops' values
        // (S1 at i = 0 and S2 at i + 1 in one band): distinct β-vectors, in statement order,
        // which changes no order since their dates never coincide.
        for &s in inside.iter().filter(|s| !deeper.contains(s)) {
            beta[s].push(next);
            next += 1;
        }
    }
}
