//! Statements and their accesses: assignments, the reads of a value, array references.

use super::*;
use crate::scop::affine::isl_name;
use crate::scop::{Access, AccessKind};
use decls::add_decl;
use indirect::may_access;

impl Walk<'_> {
    /// An expression statement `lhs op= rhs;` or `x++;`: a polyhedral statement.
    pub(super) fn assignment(&mut self, stmt: Node, expr: Node) -> Result<Option<usize>> {
        let index = self.statements.len();
        let name = format!("S{}", index + 1);
        let mut accesses = Vec::new();
        match expr.kind() {
            "assignment_expression" => {
                self.assign_chain(expr, &name, &mut accesses)?;
            }
            "update_expression" => {
                let arg = expr.child_by_field_name("argument").unwrap();
                self.reference(arg, AccessKind::Read, &name, &mut accesses)?;
                self.reference(arg, AccessKind::Write, &name, &mut accesses)?;
            }
            "call_expression" => self.call(expr, &name, &mut accesses)?,
            _ => {
                return Err(self.err(
                    expr,
                    "a SCoP statement must be an assignment such as `A[i] = ...;` or `s += ...;`",
                ))
            }
        }
        let text = self.c_text(stmt);
        let (accesses, text) = self.guarded(&name, accesses, text)?;
        self.push_statement(name, accesses, text, stmt)
    }

    /// A block-scope declaration inside the SCoP, `double c = A[i] * 2;`.
    /// Each variable is modelled as pet does, one variable for the SCoP
    /// declared before it (code generation hoists it; it is not an output),
    /// and each initialiser as an assignment statement `c = A[i] * 2;`. The
    /// dependences this adds between iterations are exact for the hoisted
    /// variable; privatising it per instance would remove them.
    pub(super) fn local_declaration(&mut self, node: Node, out: &mut Vec<Tree>) -> Result<()> {
        let mut cursor = node.walk();
        let specifiers: Vec<Node> = node.named_children(&mut cursor).collect();
        if let Some(s) = specifiers.iter().find(|c| c.kind() == "storage_class_specifier") {
            return Err(
                self.err(*s, format!("a `{}` declaration inside a SCoP is not supported", self.text(*s)))
            );
        }
        let mut cursor = node.walk();
        let declarators: Vec<Node> = node.children_by_field_name("declarator", &mut cursor).collect();
        for d in declarators {
            let ident =
                find_kind(d, "identifier").ok_or_else(|| self.err(d, "a declaration without a name"))?;
            let name = self.text(ident).to_string();
            if self.outer_names.contains(&name) {
                return Err(self.err(
                    ident,
                    format!("`{name}` declared inside the SCoP shadows another `{name}`; rename one of them"),
                ));
            }
            let mut one = HashMap::new();
            add_decl(self.src, node, &mut one);
            let decl = one.remove(&name).ok_or_else(|| self.err(ident, "cannot read this declaration"))?;
            self.decls.insert(name.clone(), decl.clone());
            if let Some(other) = self.locals.get(&name) {
                if other.ty != decl.ty || other.extents != decl.extents {
                    return Err(self
                        .err(ident, format!("`{name}` is declared twice in the SCoP with different types")));
                }
            }
            for extent in decl.extents.iter() {
                let Some(e) = extent else {
                    return Err(self.err(d, format!("`{name}` is declared inside the SCoP without a size")));
                };
                let words = e.split(|c: char| !c.is_alphanumeric() && c != '_');
                if let Some(w) = words.into_iter().find(|w| self.iterators.contains(*w)) {
                    return Err(self.err(
                        d,
                        format!("the size of `{name}` depends on the loop iterator `{w}`; only sizes fixed for the whole SCoP are supported"),
                    ));
                }
            }
            self.locals.insert(name.clone(), decl);
            let Some(value) = d.child_by_field_name("value").filter(|_| d.kind() == "init_declarator") else {
                continue;
            };
            if value.kind() == "initializer_list" {
                return Err(self.err(
                    value,
                    format!(
                        "`{name}` is initialised with a list inside the SCoP; assign its elements instead"
                    ),
                ));
            }
            let index = self.statements.len();
            let stmt = format!("S{}", index + 1);
            let mut accesses = Vec::new();
            self.reads(value, &stmt, &mut accesses)?;
            self.reference(ident, AccessKind::Write, &stmt, &mut accesses)?;
            let text = format!("{name} = {};", self.c_text(value));
            let (accesses, text) = self.guarded(&stmt, accesses, text)?;
            out.extend(self.push_statement(stmt, accesses, text, d)?.map(Tree::Stmt));
        }
        Ok(())
    }

    /// Adds statement `name` at `at`, under the enclosing loops and
    /// conditions; `None` where it never runs (its domain is empty, for
    /// every value of the parameters): it is left out with a note, and the
    /// next statement takes its name.
    pub(super) fn push_statement(
        &mut self,
        name: String,
        accesses: Vec<Access>,
        text: String,
        at: Node,
    ) -> Result<Option<usize>> {
        let index = self.statements.len();
        let iterators: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let c_iterators = self.loops.iter().map(|l| l.c_name.clone()).collect();
        let tuple = format!("{name}[{}]", iterators.join(", "));
        let mut domain = format!("{}{{ {tuple}", self.param_prefix());
        if !self.conds.is_empty() {
            domain.push_str(" : ");
            domain.push_str(&self.conds.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" and "));
        }
        domain.push_str(" }");
        let location = self.src.location(at.start_byte()).unwrap_or(Location { line: 0, column: 0 });
        if self.never_runs(&domain, at)? {
            let body = domain.split_once("-> ").map(|(_, b)| b).unwrap_or(&domain);
            self.notes.push(format!(
                "{}:{}:{}: `{}` never runs (its domain {} is empty): left out of the model",
                self.src.path.display(),
                location.line,
                location.column,
                text.trim(),
                body.replacen(&tuple, &format!("[{}]", iterators.join(", ")), 1),
            ));
            return Ok(None);
        }
        self.statements.push(Statement { name, iterators, c_iterators, domain, accesses, text, location });
        Ok(Some(index))
    }

    /// Whether the domain `domain` (isl text) is empty where the parameters
    /// are non-negative and the literals have their values.
    fn never_runs(&self, domain: &str, at: Node) -> Result<bool> {
        let ctx = crate::isl::new_context();
        let internal = |e: isl_rs::LibISLError| {
            self.err(at, format!("internal error: isl rejects the domain we built `{domain}`: {e:?}"))
        };
        let context = Set::read_from_str(&ctx, &self.pinned_context()).map_err(internal)?;
        let set = Set::read_from_str(&ctx, domain).map_err(internal)?;
        set.intersect_params(context).map_err(internal)?.is_empty().map_err(internal)
    }

    /// `lhs op= rhs`, where `rhs` may itself be an assignment (`a = b = c`,
    /// one statement with a write per link, as pet models it): the reads of
    /// the innermost value first, then each link's write from the inside out.
    pub(super) fn assign_chain(&mut self, expr: Node, stmt: &str, accesses: &mut Vec<Access>) -> Result<()> {
        let op = self.text(expr.child_by_field_name("operator").unwrap());
        if !is_assignment_op(op) {
            return Err(self.err(expr, format!("unsupported assignment `{op}`")));
        }
        let left = expr.child_by_field_name("left").unwrap();
        if op != "=" {
            self.reference(left, AccessKind::Read, stmt, accesses)?;
        }
        let right = strip_parens(expr.child_by_field_name("right").unwrap());
        if right.kind() == "assignment_expression" {
            self.assign_chain(right, stmt, accesses)?;
        } else {
            self.reads(right, stmt, accesses)?;
        }
        self.reference(left, AccessKind::Write, stmt, accesses)
    }

    pub(super) fn param_prefix(&self) -> String {
        format!("[{}] -> ", self.params.join(", "))
    }

    /// All reads in a right-hand side, in evaluation order.
    pub(super) fn reads(&mut self, node: Node, stmt: &str, out: &mut Vec<Access>) -> Result<()> {
        match node.kind() {
            "subscript_expression" => self.reference(node, AccessKind::Read, stmt, out),
            "identifier" => {
                let name = self.text(node);
                if self.loops.iter().any(|l| l.c_name == name) {
                    return Ok(());
                }
                if self.iterators.contains(name) {
                    return self.exit_value(node).map(|_| ());
                }
                match self.decls.get(name) {
                    Some(d) if d.integer && !self.written.contains(name) => {
                        self.affine_name(node)?;
                        Ok(())
                    }
                    Some(d) if !d.extents.is_empty() => {
                        Err(self
                            .err(node, format!("array `{name}` used as a pointer; index every dimension")))
                    }
                    Some(_) => self.reference(node, AccessKind::Read, stmt, out),
                    None if self.fragment => self.reference(node, AccessKind::Read, stmt, out),
                    None => Err(self.err(node, format!("`{name}` is not declared"))),
                }
            }
            "call_expression" => self.call(node, stmt, out),
            "assignment_expression" | "update_expression" => {
                Err(self.err(node, "an assignment inside an expression is not supported in a SCoP"))
            }
            "comma_expression" => Err(self.err(node, "the comma operator is not supported in a SCoP")),
            "pointer_expression" => {
                Err(self.err(node, "pointer dereference or address-of is not supported in a SCoP"))
            }
            "field_expression" => self.reference(node, AccessKind::Read, stmt, out),
            "string_literal" => Err(self.err(node, "string literals are not supported in a SCoP")),
            "cast_expression" => self.reads(node.child_by_field_name("value").unwrap(), stmt, out),
            "sizeof_expression" | "number_literal" | "char_literal" | "true" | "false" => Ok(()),
            "binary_expression"
            | "unary_expression"
            | "parenthesized_expression"
            | "conditional_expression" => {
                let mut cursor = node.walk();
                let list: Vec<Node> = node.named_children(&mut cursor).collect();
                for c in list {
                    self.reads(c, stmt, out)?;
                }
                Ok(())
            }
            other => Err(self.err(node, format!("unsupported expression in a SCoP statement ({other})"))),
        }
    }

    /// One array element or scalar reference.
    pub(super) fn reference(
        &mut self,
        node: Node,
        kind: AccessKind,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Result<()> {
        let mut indices = Vec::new();
        let mut base = node;
        while base.kind() == "subscript_expression" {
            indices.push(base.child_by_field_name("index").unwrap());
            base = base.child_by_field_name("argument").unwrap();
        }
        while base.kind() == "parenthesized_expression" {
            base = base.named_child(0).unwrap();
        }
        indices.reverse();
        let (name, decl) = if base.kind() == "field_expression" {
            // The struct elements' subscripts come first (`P[i].y[k]`).
            let (name, decl, mut outer) = self.member(base)?;
            outer.append(&mut indices);
            indices = outer;
            (name, decl)
        } else {
            self.variable(node, base, indices.len())?
        };
        if let Some((rows, decl)) = self.linearised(node, &name, &decl, &indices)? {
            let combos = vec![(Vec::new(), rows.subscripts)];
            let text = self.c_text(node);
            self.record_access(name.clone(), &decl, combos, kind, stmt, text, out);
            self.arrays.iter_mut().filter(|a| a.name == name).for_each(|a| a.linearised = true);
            return Ok(());
        }
        if self.arrays.iter().any(|a| a.name == name && a.linearised) {
            return Err(self.err(node, format!("`{name}` is indexed as rows elsewhere in the SCoP and with `{}` here; give every subscript of it the same rows (`i * n + j`)", self.text(node))));
        }
        if !indices.is_empty() {
            self.note_extents(&name, &decl);
        }
        if decl.extents.len() != indices.len() {
            return Err(self.err(
                node,
                format!(
                    "`{name}` has {} dimension(s) but is indexed with {} subscript(s)",
                    decl.extents.len(),
                    indices.len()
                ),
            ));
        }
        // Every combination of the subscripts' pieces is one disjunct.
        let mut combos: Vec<(Vec<String>, Vec<String>)> = vec![(Vec::new(), Vec::new())];
        let mut indirect = None;
        for (d, i) in indices.iter().enumerate() {
            let params = self.params.len();
            let pieces = match self.pieces(*i) {
                Ok(pieces) => pieces,
                Err(e) if self.reads_or_multiplies(*i) => {
                    self.params.truncate(params);
                    let (piece, why) = self.indirect(&name, d, *i, e, stmt, out)?;
                    indirect = Some(why);
                    piece
                }
                Err(e) => return Err(e),
            };
            combos = combos
                .iter()
                .flat_map(|(conds, subs)| {
                    pieces.iter().map(move |(c, e)| {
                        let mut conds = conds.clone();
                        conds.extend(c.clone());
                        let mut subs = subs.clone();
                        subs.push(e.clone());
                        (conds, subs)
                    })
                })
                .collect();
        }
        let text = self.c_text(node);
        self.record_access(name, &decl, combos, kind, stmt, text, out);
        if let Some(why) = indirect {
            may_access(out, why);
        }
        Ok(())
    }

    /// The rows (and the array's model, a dimension per row size) of a
    /// one-dimensional array's subscript that is not affine but linearised
    /// (`A[i * n + j]`, [`Self::delinearised`]), checked to stay within them;
    /// `None` for any other reference.
    fn linearised(
        &mut self,
        node: Node,
        name: &str,
        decl: &Decl,
        indices: &[Node],
    ) -> Result<Option<(delinearise::Rows, Decl)>> {
        let [index] = indices else { return Ok(None) };
        if decl.extents.len() != 1 || self.locals.contains_key(name) || name.contains('.') {
            return Ok(None);
        }
        // Only a product of variables needs rows (`A[j + n]` is affine as it is).
        if !self.multiplies_variables(*index) {
            return Ok(None);
        }
        let params = self.params.len();
        let Some(rows) = self.delinearised(*index)? else {
            self.params.truncate(params);
            return Ok(None);
        };
        self.check_rows(*index, &rows)?;
        let extents: Vec<Option<String>> =
            std::iter::once(None).chain(rows.extents.iter().cloned().map(Some)).collect();
        if let Some(a) = self.arrays.iter().find(|a| a.name == name) {
            if a.extents != extents {
                return Err(self.err(
                    node,
                    format!(
                        "`{name}` is indexed with other rows (or none) elsewhere in the SCoP than `{}` here; give every subscript of it the same rows",
                        self.text(*index)
                    ),
                ));
            }
        }
        let sizes = vec![None; extents.len()];
        Ok(Some((rows, Decl { extents, sizes, ..decl.clone() })))
    }

    /// Records the access of `stmt` to elements of `name`, one disjunct per
    /// `(conditions, subscripts)` pair, as `text` spells it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_access(
        &mut self,
        name: String,
        decl: &Decl,
        combos: Vec<(Vec<String>, Vec<String>)>,
        kind: AccessKind,
        stmt: &str,
        text: String,
        out: &mut Vec<Access>,
    ) {
        let its: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let array_isl = isl_name(&name);
        let disjuncts: Vec<String> = combos
            .iter()
            .map(|(conds, subs)| {
                let guard = match conds.is_empty() {
                    true => String::new(),
                    false => format!(
                        " : {}",
                        conds.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" and ")
                    ),
                };
                format!("{stmt}[{}] -> {array_isl}[{}]{guard}", its.join(", "), subs.join(", "))
            })
            .collect();
        let relation = format!("{{ {} }}", disjuncts.join("; "));
        match self.arrays.iter_mut().find(|a| a.name == name) {
            Some(a) => a.written |= kind == AccessKind::Write,
            None => self.arrays.push(Array {
                name: name.clone(),
                element_type: decl.ty.clone(),
                extents: decl.extents.clone(),
                written: kind == AccessKind::Write,
                local: false,
                linearised: false,
            }),
        }
        out.push(Access { id: String::new(), kind, array: name, relation, text, may: None });
    }

    fn struct_member(&self, node: Node, why: &str) -> ScopError {
        self.err(
            node,
            format!(
                "`{}` is a struct member polytune cannot model: {why} (copy it to an array or scalar before `#pragma scop`)",
                self.text(node)
            ),
        )
    }

    /// The variable a reference names, `A` in `A[i][j]` (`rank` subscripts).
    fn variable(&mut self, node: Node, base: Node, rank: usize) -> Result<(String, Decl)> {
        if base.kind() != "identifier" {
            return Err(self.err(
                node,
                format!(
                    "`{}` computes an address (pointer arithmetic); index a named array instead",
                    self.text(node)
                ),
            ));
        }
        let name = self.text(base).to_string();
        if self.loops.iter().any(|l| l.c_name == name) || self.iterators.contains(&name) {
            return Err(self.err(node, format!("loop iterator `{name}` is assigned inside the loop body")));
        }
        if self.fragment && !self.decls.contains_key(&name) {
            let decl = Decl {
                ty: "double".into(),
                extents: vec![None; rank],
                sizes: vec![None; rank],
                integer: false,
            };
            self.decls.insert(name.clone(), decl);
        }
        let decl = self
            .decls
            .get(&name)
            .cloned()
            .ok_or_else(|| self.err(base, format!("`{name}` is not declared")))?;
        Ok((name, decl))
    }

    /// A struct member, `s.f`, `s.g.f` or `P[i].y`: an array (or scalar)
    /// of its own, named by its path, as pet models fields. A member of
    /// an array of structs is an array over the struct array's subscripts
    /// then its own (`P[i].y[k]` is element `[i, k]` of `P[].y`; the
    /// subscripts of the struct elements on its way are returned, in
    /// order). Members reached through a pointer are refused.
    fn member<'n>(&mut self, node: Node<'n>) -> Result<(String, Decl, Vec<Node<'n>>)> {
        let operator = node.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
        if operator != "." {
            return Err(self.struct_member(node, "it is reached through a pointer"));
        }
        let field = node.child_by_field_name("field").map(|f| self.text(f).to_string()).unwrap_or_default();
        let mut inner = strip_parens(node.child_by_field_name("argument").unwrap());
        let mut element = Vec::new();
        while inner.kind() == "subscript_expression" {
            element.push(inner.child_by_field_name("index").unwrap());
            inner = strip_parens(inner.child_by_field_name("argument").unwrap());
        }
        element.reverse();
        let (path, outer, mut subscripts) = match inner.kind() {
            "identifier" => {
                let name = self.text(inner).to_string();
                let decl = self.decls.get(&name).cloned();
                let decl = decl.ok_or_else(|| self.err(inner, format!("`{name}` is not declared")))?;
                (name, decl, Vec::new())
            }
            "field_expression" => self.member(inner)?,
            _ => return Err(self.struct_member(node, "it is a member of a computed struct")),
        };
        // The struct's own dimensions, all subscripted: one element.
        if outer.extents.len() != subscripts.len() + element.len() {
            return Err(
                self.struct_member(node, "its struct is reached through a pointer or a partly indexed array")
            );
        }
        let fields = self.structs.get(&outer.ty).and_then(|fields| fields.get(&field)).cloned();
        let own = fields.ok_or_else(|| {
            self.struct_member(node, &format!("the fields of `{}` are not in this file", outer.ty))
        })?;
        let name = format!("{path}{}.{field}", "[]".repeat(element.len()));
        if self.decls.contains_key(&isl_name(&name)) {
            return Err(self.struct_member(
                node,
                &format!("its model name `{}` is taken by a variable", isl_name(&name)),
            ));
        }
        subscripts.extend(element);
        let decl = Decl {
            extents: outer.extents.iter().chain(&own.extents).cloned().collect(),
            sizes: outer.sizes.iter().chain(&own.sizes).cloned().collect(),
            integer: false,
            ..own
        };
        Ok((name, decl, subscripts))
    }
}
