//! A form back to an isl schedule tree: a sequence for every node with several children,
//! a one-member band for every loop.

use super::form::ClayForm;
use crate::scop::Scop;

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
