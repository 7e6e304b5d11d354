//! Branches on data (`if (m[i] > 0) y[i] = …;`, a clamp `if (x[i] > hi)
//! x[i] = hi;`), modelled as pet models them: the statements under the
//! branch keep their domains, the condition's reads become reads of each
//! of them, and each write a may-write. A may-write is modelled as a read
//! of the element it may leave as it was followed by a write of it, so
//! that every dependence through the element stays in order whichever way
//! the branch goes; the statement's text carries its condition, evaluated
//! where the statement runs.

use super::*;
use crate::scop::{Access, AccessKind};

impl<'s> Walk<'s> {
    /// Whether an affine-looking condition reads data: a scalar that is not
    /// an integer, or one the SCoP assigns.
    pub(super) fn reads_data(&self, node: Node) -> bool {
        if node.kind() == "identifier" {
            let name = self.text(node);
            let iterator = self.loops.iter().any(|l| l.c_name == name) || self.iterators.contains(name);
            return !iterator
                && self.decls.get(name).is_some_and(|d| !d.integer || self.written.contains(name));
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children.into_iter().any(|c| self.reads_data(c))
    }

    /// `if (cond) … else …` where `cond` reads data. Without loops under
    /// it, the whole `if` is one statement (Polly's non-affine subregion):
    /// its text as written, its accesses those of its condition and its
    /// branches, every write a may-write. With loops, each statement under
    /// it is guarded by the condition ([`Self::guarded`]); such a branch
    /// must not write what its condition reads unless it is one statement,
    /// since each statement evaluates the condition again where it runs.
    pub(super) fn data_branch(&mut self, node: Node<'s>, cond: Node<'s>, out: &mut Vec<Tree>) -> Result<()> {
        if !holds(node, &["for_statement", "while_statement", "do_statement"]) {
            let name = format!("S{}", self.statements.len() + 1);
            let mut accesses = Vec::new();
            self.branch_accesses(node, &name, &mut accesses)?;
            let why = format!("under `if {}`, which reads data", self.c_text(cond));
            let text = format!("do {{ {} }} while (0);", self.c_text(node).trim());
            let (accesses, text) = self.guarded(&name, may_writes(accesses, &why), text)?;
            out.extend(self.push_statement(name, accesses, text, node)?.map(Tree::Stmt));
            return Ok(());
        }
        let first = self.statements.len();
        self.branches(
            node,
            out,
            |w, in_else| w.guards.push((cond, in_else)),
            |w| {
                w.guards.pop();
            },
        )?;
        // The arrays the condition reads (the statement name only labels
        // relations, which are dropped).
        let mut reads = Vec::new();
        self.reads(cond, "S0", &mut reads)?;
        let under = &self.statements[first..];
        let writes_read = under.iter().find_map(|s| {
            s.accesses
                .iter()
                .find(|a| a.kind == AccessKind::Write && reads.iter().any(|r| r.array == a.array))
                .map(|a| a.array.clone())
        });
        if let (Some(array), true) = (writes_read, under.len() > 1) {
            return Err(self.err(
                cond,
                format!(
                    "the branch on `{}` writes `{array}`, which its condition reads, and holds {} statements \
                     and a loop: each statement would evaluate the condition again after the first changed it; \
                     compute the condition into a variable before the branch",
                    self.text(strip_parens(cond)),
                    under.len()
                ),
            ));
        }
        Ok(())
    }

    /// The accesses of straight-line code under a branch on data, in
    /// evaluation order: conditions, then each assignment's reads and writes.
    fn branch_accesses(&mut self, node: Node, stmt: &str, out: &mut Vec<Access>) -> Result<()> {
        match node.kind() {
            "if_statement" => {
                self.reads(node.child_by_field_name("condition").unwrap(), stmt, out)?;
                self.branch_accesses(node.child_by_field_name("consequence").unwrap(), stmt, out)?;
                if let Some(alt) = node.child_by_field_name("alternative") {
                    self.branch_accesses(alt, stmt, out)?;
                }
                Ok(())
            }
            "compound_statement" | "else_clause" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                children.into_iter().try_for_each(|c| self.branch_accesses(c, stmt, out))
            }
            "comment" => Ok(()),
            "expression_statement" => match node.named_child(0) {
                Some(e) if e.kind() == "assignment_expression" => self.assign_chain(e, stmt, out),
                Some(e) if e.kind() == "update_expression" => {
                    let arg = e.child_by_field_name("argument").unwrap();
                    self.reference(arg, AccessKind::Read, stmt, out)?;
                    self.reference(arg, AccessKind::Write, stmt, out)
                }
                Some(e) if e.kind() == "call_expression" => self.call(e, stmt, out),
                Some(e) => Err(self.err(e, "a SCoP statement must be an assignment such as `A[i] = ...;` or `s += ...;`")),
                None => Ok(()),
            },
            _ => Err(self.err(
                node,
                "under a branch on data, only assignments, calls and other branches (a declaration belongs before the branch)",
            )),
        }
    }

    /// A statement under the enclosing branches on data: the conditions'
    /// reads first, each write a may-write after a read of its element,
    /// and the text `do { if (conditions) statement } while (0);`.
    pub(super) fn guarded(
        &mut self,
        stmt: &str,
        accesses: Vec<Access>,
        text: String,
    ) -> Result<(Vec<Access>, String)> {
        if self.guards.is_empty() {
            return Ok((accesses, text));
        }
        let mut out = Vec::new();
        let mut conds = Vec::new();
        for (cond, negated) in self.guards.clone() {
            self.reads(cond, stmt, &mut out)?;
            let c = self.c_text(cond);
            conds.push(if negated { format!("!{c}") } else { c });
        }
        let why = format!("under `if {}`, which reads data", conds.join(" && "));
        out.extend(may_writes(accesses, &why));
        Ok((out, format!("do {{ if ({}) {} }} while (0);", conds.join(" && "), text.trim())))
    }
}

/// `accesses` with each write a may-write (`why`), after a read of the
/// element it may leave as it was. A write that is one already keeps its
/// reason (the innermost branch's).
fn may_writes(accesses: Vec<Access>, why: &str) -> Vec<Access> {
    let mut out = Vec::new();
    for a in accesses {
        if a.kind == AccessKind::Write && a.may.is_none() {
            let kept = "the element the may-write leaves as it was".to_string();
            out.push(Access { kind: AccessKind::Read, may: Some(kept), ..a.clone() });
            out.push(Access { may: Some(why.to_string()), ..a });
        } else {
            out.push(a);
        }
    }
    out
}
