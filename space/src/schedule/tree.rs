//! Rows and bands → isl schedule tree text: a sequence over the fusion
//! groups, each group a chain of bands marked permutable and coincident.

use super::{Row, RowKind};
use model::scop::Scop;
use vocab::preorder::Preorder;

/// `2*i - j + n + 1` for statement `stmt` in `row`.
pub(super) fn row_expr(scop: &Scop, row: &Row, stmt: usize) -> String {
    match row.affine.iter().find(|(s, ..)| *s == stmt) {
        Some((_, c, d, e)) => affine_text(scop, stmt, c, d, *e),
        None => "0".into(),
    }
}

/// An affine function of a statement's iterators and the parameters as text.
pub fn affine_text(scop: &Scop, stmt: usize, c: &[i64], d: &[i64], e: i64) -> String {
    let st = &scop.statements[stmt];
    let mut terms = Vec::new();
    for (k, name) in c.iter().zip(&st.iterators).chain(d.iter().zip(&scop.params)) {
        match *k {
            0 => {}
            1 => terms.push(name.clone()),
            -1 => terms.push(format!("-{name}")),
            k => terms.push(format!("{k}*{name}")),
        }
    }
    if e != 0 || terms.is_empty() {
        terms.push(e.to_string());
    }
    terms.join(" + ").replace("+ -", "- ")
}

fn tuple(scop: &Scop, stmt: usize) -> String {
    let st = &scop.statements[stmt];
    format!("{}[{}]", st.name, st.iterators.join(", "))
}

/// The band chain of one group, innermost last; `None` when it has no rows.
fn group_yaml(scop: &Scop, members: &[usize], rows: &[&Row]) -> Option<String> {
    let mut bands: Vec<Vec<&Row>> = Vec::new();
    for r in rows {
        match bands.last_mut() {
            Some(b) if b[0].band == r.band => b.push(r),
            _ => bands.push(vec![r]),
        }
    }
    // isl reads `[] -> [...]` as a map, not a parameter-free multi-aff.
    let params = match scop.params.is_empty() {
        true => String::new(),
        false => format!("[{}] -> ", scop.params.join(", ")),
    };
    let mut out: Option<String> = None;
    for band in bands.iter().rev() {
        let members_text: Vec<String> = band
            .iter()
            .map(|r| {
                let parts: Vec<String> = members
                    .iter()
                    .map(|&s| format!("{} -> [({})]", tuple(scop, s), row_expr(scop, r, s)))
                    .collect();
                format!("{{ {} }}", parts.join("; "))
            })
            .collect();
        let permutable = band.len() > 1 && band.iter().all(|r| r.kind != RowKind::Feautrier);
        let coincident: Vec<&str> = band.iter().map(|r| if r.coincident { "1" } else { "0" }).collect();
        let child = out.map(|c| format!(", child: {c}")).unwrap_or_default();
        out = Some(format!(
            "{{ schedule: \"{params}[{}]\", permutable: {}, coincident: [ {} ]{child} }}",
            members_text.join(", "),
            permutable as u8,
            coincident.join(", ")
        ));
    }
    out
}

/// The whole tree.
pub(super) fn build(scop: &Scop, preorder: &Preorder, rows: &[Row]) -> String {
    let groups: Vec<Option<String>> = preorder
        .0
        .iter()
        .enumerate()
        .map(|(g, members)| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.group == g).collect();
            group_yaml(scop, members, &mine)
        })
        .collect();
    let root = if groups.len() == 1 {
        groups[0].clone()
    } else {
        let parts: Vec<String> = preorder
            .0
            .iter()
            .zip(&groups)
            .map(|(members, child)| {
                let filter = members.iter().map(|&s| tuple(scop, s)).collect::<Vec<_>>().join("; ");
                match child {
                    Some(c) => format!("{{ filter: \"{{ {filter} }}\", child: {c} }}"),
                    None => format!("{{ filter: \"{{ {filter} }}\" }}"),
                }
            })
            .collect();
        Some(format!("{{ sequence: [ {} ] }}", parts.join(", ")))
    };
    let child = root.map(|c| format!(", child: {c}")).unwrap_or_default();
    format!("{{ domain: \"{}\"{child} }}", scop.domain())
}
