//! A form back to an isl schedule tree: a sequence for every node with several children,
//! a one-member band for every loop ([`to_tree`]); or, for code generation, loops nested
//! one in the other grouped into bands marked permutable and coincident where the
//! dependences allow it ([`to_banded_tree`]), so that they can be tiled and run in parallel.

use isl_rs::{Context, UnionMap};

use super::form::ClayForm;
use model::deps::Dependences;
use model::isl::{IslError, IslResultExt};
use model::legality::{band_violations, parallel_violations};
use model::scop::Scop;

/// isl's YAML text of the tree that runs `form`.
pub fn to_tree(form: &ClayForm, scop: &Scop) -> String {
    let all: Vec<usize> = (0..form.relations.len()).collect();
    let child = node(form, scop, &all, 0).map(|c| format!(", child: {c}")).unwrap_or_default();
    format!("{{ domain: \"{}\"{child} }}", scop.domain())
}

fn tuple(scop: &Scop, s: usize) -> String {
    let st = &scop.statements[s];
    format!("{}[{}]", st.name, st.iterators.join(", "))
}

/// The subtree below a node at `depth` holding the statements `inside` (its children are
/// told apart by β[depth]); `None` for a leaf.
fn node(form: &ClayForm, scop: &Scop, inside: &[usize], depth: usize) -> Option<String> {
    let mut children: Vec<i64> = inside.iter().map(|&s| form.relations[s].beta[depth]).collect();
    children.sort();
    children.dedup();
    let subtree = |c: i64| {
        let members: Vec<usize> =
            inside.iter().copied().filter(|&s| form.relations[s].beta[depth] == c).collect();
        // A loop when its statements have an α at this depth, else one statement.
        if form.relations[members[0]].alpha.len() <= depth {
            return (members, None);
        }
        let params = match scop.params.is_empty() {
            true => String::new(),
            false => format!("[{}] -> ", scop.params.join(", ")),
        };
        let parts: Vec<String> = members
            .iter()
            .map(|&s| {
                let a = form.relations[s].alpha[depth].text(&scop.statements[s].iterators, &scop.params);
                format!("{} -> [({a})]", tuple(scop, s))
            })
            .collect();
        let below =
            node(form, scop, &members, depth + 1).map(|c| format!(", child: {c}")).unwrap_or_default();
        let band = format!("{{ schedule: \"{params}[{{ {} }}]\"{below} }}", parts.join("; "));
        (members, Some(band))
    };
    if children.len() == 1 {
        return subtree(children[0]).1;
    }
    let parts: Vec<String> = children
        .into_iter()
        .map(|c| {
            let (members, child) = subtree(c);
            let filter = members.iter().map(|&s| tuple(scop, s)).collect::<Vec<_>>().join("; ");
            match child {
                Some(c) => format!("{{ filter: \"{{ {filter} }}\", child: {c} }}"),
                None => format!("{{ filter: \"{{ {filter} }}\" }}"),
            }
        })
        .collect();
    Some(format!("{{ sequence: [ {} ] }}", parts.join(", ")))
}

fn params_prefix(scop: &Scop) -> String {
    match scop.params.is_empty() {
        true => String::new(),
        false => format!("[{}] -> ", scop.params.join(", ")),
    }
}

/// `{ S[i] -> [dims] }` over `members`, each dimension given by `dims(statement)`.
fn relation(scop: &Scop, members: &[usize], dims: impl Fn(usize) -> Vec<String>) -> String {
    let parts: Vec<String> =
        members.iter().map(|&s| format!("{} -> [{}]", tuple(scop, s), dims(s).join(", "))).collect();
    format!("{}{{ {} }}", params_prefix(scop), parts.join("; "))
}

/// Like [`to_tree`], with chains of loops that share their statements grouped into bands:
/// a loop joins the band above it while the band stays permutable (every dependence the
/// outer loops do not separate has non-negative distances along it), and each member is
/// marked coincident when no such dependence has a non-zero distance along it.
pub fn to_banded_tree(
    ctx: &Context,
    form: &ClayForm,
    scop: &Scop,
    deps: &Dependences,
) -> Result<String, IslError> {
    let all: Vec<usize> = (0..form.relations.len()).collect();
    let b = Banded { ctx, form, scop, deps };
    let child = b.node(&all, 0)?.map(|c| format!(", child: {c}")).unwrap_or_default();
    Ok(format!("{{ domain: \"{}\"{child} }}", scop.domain()))
}

struct Banded<'a> {
    ctx: &'a Context,
    form: &'a ClayForm,
    scop: &'a Scop,
    deps: &'a Dependences,
}

impl Banded<'_> {
    fn alpha(&self, s: usize, d: usize) -> String {
        self.form.relations[s].alpha[d].text(&self.scop.statements[s].iterators, &self.scop.params)
    }

    /// The Clay dimensions of `members` before α at depth `d`, and the α from `d` to `end`.
    fn maps(&self, members: &[usize], d: usize, end: usize) -> Result<(UnionMap, UnionMap), IslError> {
        let what = || "the maps of a band".to_string();
        let prefix = relation(self.scop, members, |s| {
            let r = &self.form.relations[s];
            let mut dims = Vec::new();
            for k in 0..d {
                dims.push(r.beta[k].to_string());
                dims.push(self.alpha(s, k));
            }
            dims.push(r.beta[d].to_string());
            dims
        });
        let band = relation(self.scop, members, |s| (d..end).map(|k| self.alpha(s, k)).collect());
        Ok((
            UnionMap::read_from_str(self.ctx, &prefix).ctx(what)?,
            UnionMap::read_from_str(self.ctx, &band).ctx(what)?,
        ))
    }

    fn node(&self, inside: &[usize], depth: usize) -> Result<Option<String>, IslError> {
        let form = self.form;
        let mut children: Vec<i64> = inside.iter().map(|&s| form.relations[s].beta[depth]).collect();
        children.sort();
        children.dedup();
        let mut parts = Vec::new();
        for &c in &children {
            let members: Vec<usize> =
                inside.iter().copied().filter(|&s| form.relations[s].beta[depth] == c).collect();
            let child = if form.relations[members[0]].alpha.len() <= depth {
                None
            } else {
                Some(self.band(&members, depth)?)
            };
            parts.push((members, child));
        }
        if parts.len() == 1 {
            return Ok(parts.pop().and_then(|(_, c)| c));
        }
        let parts: Vec<String> = parts
            .into_iter()
            .map(|(members, child)| {
                let filter = members.iter().map(|&s| tuple(self.scop, s)).collect::<Vec<_>>().join("; ");
                match child {
                    Some(c) => format!("{{ filter: \"{{ {filter} }}\", child: {c} }}"),
                    None => format!("{{ filter: \"{{ {filter} }}\" }}"),
                }
            })
            .collect();
        Ok(Some(format!("{{ sequence: [ {} ] }}", parts.join(", "))))
    }

    /// The band of `members` starting with their loop at depth `d`.
    fn band(&self, members: &[usize], d: usize) -> Result<String, IslError> {
        let rels = &self.form.relations;
        // The chain: deeper loops that every member has, with nothing beside them.
        let mut end = d + 1;
        while members.iter().all(|&s| rels[s].alpha.len() > end)
            && members.iter().all(|&s| rels[s].beta[end] == rels[members[0]].beta[end])
        {
            let (prefix, band) = self.maps(members, d, end + 1)?;
            if !band_violations(self.ctx, &self.scop.context, &prefix, &band, self.deps)?.is_empty() {
                break;
            }
            end += 1;
        }
        // As isl's scheduler flags them: a member is coincident when no dependence the
        // loops outside the band leave has a non-zero distance along it, whatever the
        // band's members before it do, so that the flag still holds for its tile loop.
        let mut coincident = Vec::new();
        for k in d..end {
            let (prefix, _) = self.maps(members, d, end)?;
            let (_, rest) = self.maps(members, k, end)?;
            let parallel =
                parallel_violations(self.ctx, &self.scop.context, &prefix, &rest, self.deps)?.is_empty();
            coincident.push(if parallel { "1" } else { "0" });
        }
        let schedule: Vec<String> = (d..end)
            .map(|k| {
                let parts: Vec<String> = members
                    .iter()
                    .map(|&s| format!("{} -> [({})]", tuple(self.scop, s), self.alpha(s, k)))
                    .collect();
                format!("{{ {} }}", parts.join("; "))
            })
            .collect();
        let below = self.node(members, end)?.map(|c| format!(", child: {c}")).unwrap_or_default();
        Ok(format!(
            "{{ schedule: \"{}[{}]\", permutable: {}, coincident: [ {} ]{below} }}",
            params_prefix(self.scop),
            schedule.join(", "),
            u8::from(end - d > 1),
            coincident.join(", ")
        ))
    }
}
