//! Control flow inside a SCoP: blocks, `for` loops with affine bounds and constant steps, affine `if`s.

use super::*;
use crate::scop::affine::isl_name;
use decls::is_integer_type;

impl<'s> Walk<'s> {
    /// Finds loop iterators and the scalars the SCoP writes, so that an affine
    /// expression can tell a parameter from a data-dependent value.
    pub(super) fn prescan(&mut self, node: Node) {
        if node.kind() == "for_statement" {
            if let Some(name) = node.child_by_field_name("initializer").and_then(|i| self.init_target(i)) {
                self.iterators.insert(name);
            }
            if let Some(b) = node.child_by_field_name("body") {
                self.prescan(b);
            }
            return;
        }
        let target = match node.kind() {
            "assignment_expression" => node.child_by_field_name("left"),
            "update_expression" => node.child_by_field_name("argument"),
            "init_declarator" => node.child_by_field_name("declarator"),
            _ => None,
        };
        if let Some(t) = target.filter(|t| t.kind() == "identifier") {
            self.written.insert(self.text(t).to_string());
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for c in children {
            self.prescan(c);
        }
    }

    /// `i = 0` or `int i = 0` → `i`.
    pub(super) fn init_target(&self, init: Node) -> Option<String> {
        match init.kind() {
            "assignment_expression" => init
                .child_by_field_name("left")
                .filter(|l| l.kind() == "identifier")
                .map(|l| self.text(l).to_string()),
            "declaration" => find_kind(init.child_by_field_name("declarator")?, "identifier")
                .map(|n| self.text(n).to_string()),
            _ => None,
        }
    }

    pub(super) fn statement(&mut self, node: Node<'s>, out: &mut Vec<Tree>) -> Result<()> {
        match node.kind() {
            "compound_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for c in children {
                    self.statement(c, out)?;
                }
                Ok(())
            }
            "comment" => Ok(()),
            "preproc_call" => {
                let t = self.text(node);
                if t.contains("scop") {
                    Err(self.err(node, "nested `#pragma scop`"))
                } else {
                    Ok(())
                }
            }
            "for_statement" => self.for_loop(node, out),
            "if_statement" => self.if_statement(node, out),
            "expression_statement" => {
                if let Some(e) = node.named_child(0) {
                    out.extend(self.assignment(node, e)?.map(Tree::Stmt));
                }
                Ok(())
            }
            "declaration" => self.local_declaration(node, out),
            "while_statement" | "do_statement" => {
                Err(self
                    .err(node, "`while` loops have no affine bounds; only `for` loops are static control"))
            }
            "goto_statement" | "labeled_statement" => {
                Err(self.err(node, "`goto` and labels break static control flow"))
            }
            "break_statement" | "continue_statement" | "return_statement" => Err(self.err(
                node,
                format!("`{}` breaks static control flow", node.kind().trim_end_matches("_statement")),
            )),
            "switch_statement" => Err(self.err(node, "`switch` is not static control; use affine `if`s")),
            other => Err(self.err(node, format!("unsupported construct in a SCoP ({other})"))),
        }
    }

    pub(super) fn for_loop(&mut self, node: Node<'s>, out: &mut Vec<Tree>) -> Result<()> {
        let init = node
            .child_by_field_name("initializer")
            .ok_or_else(|| self.err(node, "a `for` loop in a SCoP needs an initialiser `i = lower bound`"))?;
        let cond = node.child_by_field_name("condition").ok_or_else(|| {
            self.err(node, "a `for` loop in a SCoP needs a condition bounding its iterator")
        })?;
        let update = node
            .child_by_field_name("update")
            .ok_or_else(|| self.err(node, "a `for` loop in a SCoP needs an update such as `i++`"))?;
        let body = node.child_by_field_name("body").ok_or_else(|| self.err(node, "`for` without a body"))?;

        let declared = init.kind() == "declaration";
        let (iter, lb_node) = match init.kind() {
            "assignment_expression"
                if init.child_by_field_name("operator").map(|o| self.text(o)) == Some("=") =>
            {
                let left = init.child_by_field_name("left").unwrap();
                if left.kind() != "identifier" {
                    return Err(self.err(left, "the loop iterator must be a plain variable"));
                }
                (self.text(left).to_string(), init.child_by_field_name("right").unwrap())
            }
            "declaration" => {
                let d = init.child_by_field_name("declarator").filter(|d| d.kind() == "init_declarator");
                let d = d.ok_or_else(|| self.err(init, "the loop iterator needs an initial value"))?;
                let ty = init.child_by_field_name("type").map(|t| self.text(t)).unwrap_or("");
                if !is_integer_type(ty) {
                    return Err(
                        self.err(init, format!("the loop iterator has type `{ty}`; it must be an integer"))
                    );
                }
                let name = d.child_by_field_name("declarator").unwrap();
                (self.text(name).to_string(), d.child_by_field_name("value").unwrap())
            }
            _ => return Err(self.err(init, "the loop initialiser must be `i = expr` or `int i = expr`")),
        };
        if self.loops.iter().any(|l| l.c_name == iter) {
            return Err(
                self.err(init, format!("loop iterator `{iter}` reuses the iterator of an enclosing loop"))
            );
        }
        if let Some(d) = self.decls.get(&iter) {
            if !d.integer {
                return Err(self.err(init, format!("the loop iterator `{iter}` must be an integer scalar")));
            }
        }
        if self.written.contains(&iter) {
            return Err(
                self.err(init, format!("the loop iterator `{iter}` is also assigned inside the SCoP"))
            );
        }
        let step = self.step(update, &iter)?;
        let isl = isl_name(&iter);
        // Bounds are read with the enclosing loops only: `i` itself may appear in
        // the condition but not in its lower bound.
        let lb = self.affine_value(lb_node)?;
        let lower = if step > 0 { format!("{isl} >= {lb}") } else { format!("{isl} <= {lb}") };
        self.loops.push(Loop { c_name: iter.clone(), isl: isl.clone() });
        // The condition is read where the loop has started: its operands'
        // wrap-around test knows the lower bound.
        self.conds.push(lower.clone());
        let cond_text = self.condition(cond, true);
        self.conds.pop();
        let mut pushed = match cond_text {
            Ok(c) => vec![lower, c],
            Err(e) => {
                self.loops.pop();
                return Err(e);
            }
        };
        if step.abs() > 1 {
            pushed.push(format!("({isl} - ({lb})) mod {} = 0", step.abs()));
        }
        let n = pushed.len();
        let cond_isl = pushed[1].clone();
        self.conds.extend(pushed);
        if let Err(e) = self.bounded_loop(cond, &iter) {
            self.conds.truncate(self.conds.len() - n);
            self.loops.pop();
            return Err(e);
        }
        let before = self.enter_loop_body(body, &iter, node.start_byte());
        let mut inner = Vec::new();
        let result = self.statement(body, &mut inner);
        self.conds.truncate(self.conds.len() - n);
        self.loops.pop();
        result?;
        self.leave_loop_body(before, &iter, node.start_byte());
        let head = exits::LoopHead {
            node,
            iter: iter.clone(),
            isl: isl.clone(),
            lb: lb_node,
            lb_isl: lb,
            cond,
            cond_isl,
            step,
            declared,
        };
        self.record_exit(&head);
        if !inner.is_empty() {
            out.push(Tree::Loop { iter: isl, sign: step.signum(), body: inner });
        }
        Ok(())
    }

    /// The enclosing loops' iterations under the current conditions (and
    /// `extra`) and the pinned sizes ([`Walk::size_conditions`]: a sign or
    /// a bound decided for other values of the literals would refuse a
    /// correct program), as an isl set.
    pub(super) fn enclosing_set(&self, extra: Option<&str>) -> String {
        let its: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let mut conds = self.size_conditions();
        conds.extend(self.conds.iter().map(|c| format!("({c})")));
        conds.extend(extra.map(|e| format!("({e})")));
        format!("[{}] -> {{ [{}] : {} }}", self.params.join(", "), its.join(", "), conds.join(" and "))
    }

    /// Refuses a loop whose iterations, under the enclosing loops and
    /// conditions, are unbounded for some parameter values: C runs it
    /// forever (or until its iterator overflows), and no schedule of an
    /// unbounded domain is code. `self.conds` ends with the loop's own
    /// bounds.
    fn bounded_loop(&mut self, cond: Node, iter: &str) -> Result<()> {
        let text = self.enclosing_set(None);
        let ctx = crate::isl::new_context();
        let internal = |e: isl_rs::LibISLError| {
            self.err(cond, format!("internal error: isl rejects the loop's domain `{text}`: {e:?}"))
        };
        let set = Set::read_from_str(&ctx, &text).map_err(internal)?;
        // Bounded for each value of the parameters: isl's recession cone
        // keeps them fixed.
        if set.is_bounded().map_err(internal)? {
            return Ok(());
        }
        Err(self.err(
            cond,
            format!(
                "the loop condition `{}` does not bound `{iter}`: the iteration domain `{text}` is unbounded, so the loop never ends (or ends only when `{iter}` overflows)",
                self.text(cond)
            ),
        ))
    }

    /// The constant step of `i++`, `--i`, `i += 2`, `i = i - 1`, ...
    pub(super) fn step(&self, update: Node, iter: &str) -> Result<i64> {
        let bad = || {
            self.err(
                update,
                format!(
                    "the loop update must change `{iter}` by a constant (`{iter}++`, `{iter} += 2`, ...)"
                ),
            )
        };
        let is_iter =
            |n: Option<Node>| n.map(|n| n.kind() == "identifier" && self.text(n) == iter).unwrap_or(false);
        match update.kind() {
            "update_expression" => {
                if !is_iter(update.child_by_field_name("argument")) {
                    return Err(bad());
                }
                Ok(if self.text(update).contains("++") { 1 } else { -1 })
            }
            "assignment_expression" => {
                if !is_iter(update.child_by_field_name("left")) {
                    return Err(bad());
                }
                let op = update.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let right = update.child_by_field_name("right").ok_or_else(bad)?;
                let step = match op {
                    "+=" => self.constant(right),
                    "-=" => self.constant(right).map(|c| -c),
                    "=" if right.kind() == "binary_expression" => {
                        let l = right.child_by_field_name("left");
                        let r = right.child_by_field_name("right").ok_or_else(bad)?;
                        let o = right.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                        match (is_iter(l), o) {
                            (true, "+") => self.constant(r),
                            (true, "-") => self.constant(r).map(|c| -c),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match step {
                    Some(s) if s != 0 => Ok(s),
                    _ => Err(bad()),
                }
            }
            _ => Err(bad()),
        }
    }

    pub(super) fn if_statement(&mut self, node: Node<'s>, out: &mut Vec<Tree>) -> Result<()> {
        let cond_node = node.child_by_field_name("condition").unwrap();
        // A branch on data (`if (A[i] > 0)`): its writes are may-writes.
        if holds(cond_node, &["subscript_expression"]) || self.reads_data(cond_node) {
            return self.data_branch(node, cond_node, out);
        }
        let cond = self.condition(cond_node, false)?;
        let enter = |w: &mut Self, in_else: bool| {
            w.conds.push(if in_else { format!("not ({cond})") } else { cond.clone() })
        };
        self.branches(node, out, enter, |w| {
            w.conds.pop();
        })
    }

    /// The `then` and `else` branches of the `if` `node`, each walked
    /// between `enter(self, in_else)` and `leave(self)`; afterwards a loop
    /// iterator holds what either branch may leave in it.
    pub(super) fn branches(
        &mut self,
        node: Node<'s>,
        out: &mut Vec<Tree>,
        enter: impl Fn(&mut Self, bool),
        leave: impl Fn(&mut Self),
    ) -> Result<()> {
        let before = self.exits.clone();
        enter(self, false);
        let r = self.statement(node.child_by_field_name("consequence").unwrap(), out);
        leave(self);
        r?;
        let then = std::mem::replace(&mut self.exits, before.clone());
        if let Some(alt) = node.child_by_field_name("alternative") {
            let alt = if alt.kind() == "else_clause" { alt.named_child(0).unwrap_or(alt) } else { alt };
            enter(self, true);
            let r = self.statement(alt, out);
            leave(self);
            r?;
        }
        self.merge_branches(&before, then, node.start_byte());
        Ok(())
    }
}
