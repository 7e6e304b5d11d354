//! Which functions of the translation unit a SCoP statement may call: those
//! whose value depends on their arguments alone and which change nothing
//! outside themselves. Such a call is an ordinary expression of its
//! arguments for the model; any other call could read or write memory the
//! access relations do not show.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::decls::{collect_decls, Decl};
use super::{find_kind, node_text};
use crate::scop::affine::PURE_MATH;
use crate::scop::Source;

/// Why a function may not be called in a SCoP, for each function defined in
/// the file (`None`: pure).
pub(super) type Verdicts = HashMap<String, Option<String>>;

pub(super) fn verdicts(src: &Source, root: Node, globals: &HashMap<String, Decl>) -> Verdicts {
    let mut bodies = HashMap::new();
    let mut cursor = root.walk();
    for f in root.named_children(&mut cursor).filter(|n| n.kind() == "function_definition") {
        if let Some(name) = f.child_by_field_name("declarator").and_then(|d| find_kind(d, "identifier")) {
            bodies.insert(node_text(src, name).to_string(), f);
        }
    }
    let mut judge = Judge { src, globals, bodies: &bodies, out: HashMap::new(), open: HashSet::new() };
    for name in bodies.keys() {
        judge.verdict(name);
    }
    judge.out
}

struct Judge<'a, 't> {
    src: &'a Source,
    globals: &'a HashMap<String, Decl>,
    bodies: &'a HashMap<String, Node<'t>>,
    out: Verdicts,
    /// Functions being judged (a recursive call is judged by the rest).
    open: HashSet<String>,
}

impl Judge<'_, '_> {
    fn verdict(&mut self, name: &str) -> Option<String> {
        if let Some(v) = self.out.get(name) {
            return v.clone();
        }
        if self.open.contains(name) {
            return None;
        }
        let Some(&f) = self.bodies.get(name) else {
            return Some("its body is not in this file".into());
        };
        self.open.insert(name.to_string());
        let v = self.judge(f);
        self.open.remove(name);
        self.out.insert(name.to_string(), v.clone());
        v
    }

    fn judge(&mut self, f: Node) -> Option<String> {
        let list = f.child_by_field_name("declarator").and_then(|d| find_kind(d, "parameter_list"));
        let params = list.map(|l| collect_decls(self.src, l, false)).unwrap_or_default();
        if let Some((p, _)) = params.iter().find(|(_, d)| !d.extents.is_empty()) {
            return Some(format!(
                "it takes `{p}` as a pointer or array, through which it may read or write memory"
            ));
        }
        let own = collect_decls(self.src, f, true);
        self.node(f.child_by_field_name("body")?, &own)
    }

    /// The first reason in `node` why the function is not pure.
    fn node(&mut self, node: Node, own: &HashMap<String, Decl>) -> Option<String> {
        let line = self.src.location(node.start_byte()).map(|l| l.line).unwrap_or(0);
        let text = || node_text(self.src, node).to_string();
        match node.kind() {
            "storage_class_specifier" if text() == "static" => {
                return Some(format!("it keeps a `static` variable (line {line})"))
            }
            "gnu_asm_expression" | "asm_statement" => {
                return Some(format!("it holds inline assembly (line {line})"))
            }
            "pointer_expression" => {
                return Some(format!("it dereferences or takes an address, `{}` (line {line})", text()))
            }
            "field_expression"
                if node.child_by_field_name("operator").is_some_and(|o| node_text(self.src, o) == "->") =>
            {
                return Some(format!("it reads through a pointer, `{}` (line {line})", text()))
            }
            "assignment_expression" | "update_expression" => {
                let target =
                    node.child_by_field_name("left").or_else(|| node.child_by_field_name("argument"));
                let base = target.map(|t| base_name(self.src, t)).unwrap_or_default();
                if !own.contains_key(&base) {
                    return Some(format!("it writes `{base}`, which is not its own (line {line})"));
                }
            }
            "call_expression" => {
                let callee = node.child_by_field_name("function");
                let name =
                    callee.filter(|c| c.kind() == "identifier").map(|c| node_text(self.src, c).to_string());
                match name {
                    Some(n) if PURE_MATH.contains(&n.as_str()) => {}
                    Some(n) => {
                        if let Some(why) = self.verdict(&n) {
                            return Some(format!("it calls `{n}`, which is not pure: {why}"));
                        }
                    }
                    None => return Some(format!("it calls through a pointer (line {line})")),
                }
                return node.child_by_field_name("arguments").and_then(|a| self.node(a, own));
            }
            "identifier" => {
                let name = text();
                if !own.contains_key(&name) && self.globals.contains_key(&name) {
                    return Some(format!(
                        "it reads the global `{name}` (line {line}), an input the SCoP's accesses would not show"
                    ));
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children.into_iter().find_map(|c| self.node(c, own))
    }
}

/// `a[i][j]` → `a`; `x` → `x`.
fn base_name(src: &Source, mut node: Node) -> String {
    while matches!(node.kind(), "subscript_expression" | "parenthesized_expression" | "field_expression") {
        node = match node.kind() {
            "subscript_expression" | "field_expression" => {
                node.child_by_field_name("argument").unwrap_or(node)
            }
            _ => node.named_child(0).unwrap_or(node),
        };
        if node.kind() == "identifier" {
            break;
        }
    }
    node_text(src, node).to_string()
}
