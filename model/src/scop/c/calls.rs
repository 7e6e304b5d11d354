//! Calls in a SCoP statement. A pure function (of the math library, or of
//! this file with no pointer and no effect) is an expression of its
//! arguments. A function of this file that takes arrays or pointers is
//! inlined as pet inlines it: its reads and writes through its parameters
//! are accesses of the calling statement. A pointer parameter is bound to
//! an array of the SCoP with the argument's subscripts as an offset (`A`,
//! the row `A[i]`, the address `&A[i][j]`), an integer parameter to its
//! argument's affine value. Only straight-line bodies are inlined, whose
//! subscripts through parameters are affine in the parameters: the writes
//! run under no condition, so they are must-writes.

use super::*;
use crate::scop::affine::{parse_int_literal, PURE_MATH};
use crate::scop::{Access, AccessKind};
use decls::{add_decl, is_integer_type, is_unsigned_type};

/// What a parameter of an inlined function stands for.
#[derive(Clone)]
enum Param {
    /// A pointer or array parameter of `rank` dimensions bound to `array`
    /// of the SCoP: `p[s0][s1]...` is `array[b0, ..., b(m-1) + s0, s1, ...]`
    /// for the `base` `[b0, ..., b(m-1)]` (isl, in the caller's iterators).
    Pointer { array: String, decl: Decl, base: Vec<String>, rank: usize },
    /// A value; for a signed integer, its argument's affine value (or why
    /// it has none).
    Scalar(std::result::Result<String, String>),
}

/// An inlined call: the callee's bindings and own variables.
struct Frame<'t> {
    name: String,
    /// The call's text, which the accesses' text names.
    call: String,
    params: HashMap<String, Param>,
    locals: HashMap<String, Decl>,
    /// Parameters the body assigns: their argument's value no longer holds.
    assigned: HashSet<String>,
    body: Node<'t>,
}

/// Why an inlined body is not modelled, naming the callee and the line.
type Why<T = ()> = std::result::Result<T, String>;

/// `base` offset by the subscripts `subs` of the pointer bound to it.
fn offset(base: &[String], subs: &[String]) -> Vec<String> {
    let mut out = base.to_vec();
    if let (Some(last), Some(first)) = (out.last_mut(), subs.first()) {
        *last = format!("({last}) + ({first})");
    }
    out.extend(subs.iter().skip(1).cloned());
    out
}

fn same_extent(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            squash(a) == squash(b)
                || parse_int_literal(a.trim()).is_some_and(|x| parse_int_literal(b.trim()) == Some(x))
        }
        _ => false,
    }
}

/// The element type without its qualifiers.
fn element_type(ty: &str) -> String {
    let words =
        ty.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "register"));
    words.collect::<Vec<_>>().join(" ")
}

fn arguments(call: Node) -> Vec<Node> {
    let Some(args) = call.child_by_field_name("arguments") else { return Vec::new() };
    let mut cursor = args.walk();
    let list: Vec<Node> = args.named_children(&mut cursor).filter(|a| a.kind() != "comment").collect();
    list
}

impl<'s> Walk<'s> {
    /// A call in a statement of the SCoP: its reads (and, inlined, its writes).
    pub(super) fn call(&mut self, node: Node, stmt: &str, out: &mut Vec<Access>) -> Result<()> {
        let f = node.child_by_field_name("function").unwrap();
        if f.kind() != "identifier" {
            return Err(self.err(
                node,
                format!("call through a pointer, `{}`, which may have side effects", self.text(f)),
            ));
        }
        let fname = self.text(f).to_string();
        if !PURE_MATH.contains(&fname.as_str()) && self.purity.contains_key(&fname) {
            self.file_calls.insert(fname.clone());
        }
        if PURE_MATH.contains(&fname.as_str()) || matches!(self.purity.get(&fname), Some(None)) {
            for a in arguments(node) {
                self.reads(a, stmt, out)?;
            }
            return Ok(());
        }
        let def = self.definition(&fname).filter(|d| self.takes_pointers(*d));
        let Some(def) = def else {
            let why = match self.purity.get(&fname) {
                Some(Some(why)) => why.clone(),
                _ => "its body is not in this file".to_string(),
            };
            return Err(self.err(
                node,
                format!("call to `{fname}`, which may have side effects: {why} (a SCoP may call pure math functions, functions of this file that only compute a value from their arguments, and functions of this file whose straight-line bodies read and write their array arguments)"),
            ));
        };
        let mut frame = self.bind_call(node, def, &fname, stmt, out)?;
        let mut stack = vec![fname.clone()];
        self.inline(&mut frame, &mut stack, stmt, out).map_err(|why| {
            self.err(
                node,
                format!("call to `{fname}`, whose accesses polytune cannot model: {why} (polytune inlines functions of this file whose bodies are straight-line code reading and writing their array arguments at subscripts affine in their parameters)"),
            )
        })
    }

    /// The definition of the function `name` in this file.
    fn definition(&self, name: &str) -> Option<Node<'s>> {
        let mut cursor = self.root.walk();
        let found = self.root.named_children(&mut cursor).find(|f| {
            f.kind() == "function_definition"
                && f.child_by_field_name("declarator")
                    .and_then(|d| find_kind(d, "identifier"))
                    .is_some_and(|n| self.text(n) == name)
        });
        found
    }

    fn takes_pointers(&self, def: Node) -> bool {
        self.parameters(def).is_ok_and(|ps| ps.iter().any(|(_, d)| !d.extents.is_empty()))
    }

    /// The parameters of the function `def`, in order.
    fn parameters(&self, def: Node) -> Why<Vec<(String, Decl)>> {
        let list = def.child_by_field_name("declarator").and_then(|d| find_kind(d, "parameter_list"));
        let Some(list) = list else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        let mut cursor = list.walk();
        for p in list.named_children(&mut cursor) {
            if p.kind() == "variadic_parameter" {
                return Err(format!("it takes a variable number of arguments (line {})", self.line_of(p)));
            }
            let Some(name) = p.child_by_field_name("declarator").and_then(|d| find_kind(d, "identifier"))
            else {
                continue; // `void`
            };
            let name = self.text(name).to_string();
            let mut one = HashMap::new();
            add_decl(self.src, p, &mut one);
            if let Some(d) = one.remove(&name) {
                out.push((name, d));
            }
        }
        Ok(out)
    }

    fn line_of(&self, node: Node) -> u32 {
        self.src.location(node.start_byte()).map(|l| l.line).unwrap_or(0)
    }

    /// The frame of a call in the SCoP: each argument bound in the caller's
    /// terms, the reads of the value arguments recorded.
    fn bind_call(
        &mut self,
        call: Node,
        def: Node<'s>,
        f: &str,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Result<Frame<'s>> {
        let params = self.parameters(def).map_err(|why| {
            self.err(call, format!("call to `{f}`, whose accesses polytune cannot model: {why}"))
        })?;
        let mut frame = self.frame(call, def, f);
        let args = arguments(call);
        if args.len() != params.len() {
            return Err(self.err(
                call,
                format!("call to `{f}` with {} argument(s), where it takes {}", args.len(), params.len()),
            ));
        }
        for (arg, (p, decl)) in args.into_iter().zip(params) {
            let value = match decl.extents.is_empty() {
                false => self.bind_pointer(arg, f, &p, &decl)?,
                true => {
                    self.reads(arg, stmt, out)?;
                    Param::Scalar(self.int_argument(arg, &decl))
                }
            };
            frame.params.insert(p, value);
        }
        Ok(frame)
    }

    fn frame(&self, call: Node, def: Node<'s>, f: &str) -> Frame<'s> {
        let body = def.child_by_field_name("body").unwrap_or(def);
        let mut assigned = HashSet::new();
        self.assigned_names(body, &mut assigned);
        Frame {
            name: f.to_string(),
            call: squash(self.text(call)),
            params: HashMap::new(),
            locals: HashMap::new(),
            assigned,
            body,
        }
    }

    fn assigned_names(&self, node: Node, out: &mut HashSet<String>) {
        let target = match node.kind() {
            "assignment_expression" => node.child_by_field_name("left"),
            "update_expression" => node.child_by_field_name("argument"),
            _ => None,
        };
        if let Some(t) = target.map(strip_parens).filter(|t| t.kind() == "identifier") {
            out.insert(self.text(t).to_string());
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for c in children {
            self.assigned_names(c, out);
        }
    }

    /// The affine value of an integer argument in the caller, if it has one.
    fn int_argument(&mut self, arg: Node, decl: &Decl) -> Why<String> {
        if !decl.integer {
            return Err("it is not an integer".into());
        }
        if is_unsigned_type(&decl.ty) {
            return Err(format!("its type `{}` is unsigned", decl.ty));
        }
        let (params, constants) = (self.params.clone(), self.constants.clone());
        self.affine_value(arg).map_err(|e| {
            (self.params, self.constants) = (params, constants);
            e.reason
        })
    }

    /// `arg` (in the caller) bound to the pointer parameter `p` of `f`.
    fn bind_pointer(&mut self, arg: Node, f: &str, p: &str, pdecl: &Decl) -> Result<Param> {
        let refuse = |w: &Walk, why: String| {
            w.err(
                arg,
                format!("call to `{f}` passes `{}` to its pointer parameter `{p}`: {why}", w.text(arg)),
            )
        };
        let forms = "polytune models an array `A`, a row `A[i]` or an address `&A[i][j]` there".to_string();
        let (address, target, indices) = self.address(arg);
        if target.kind() != "identifier" {
            return Err(refuse(self, forms));
        }
        let name = self.text(target).to_string();
        let decl = match self.decls.get(&name) {
            Some(d) if !d.extents.is_empty() && !self.iterators.contains(&name) => d.clone(),
            Some(_) => return Err(refuse(self, format!("`{name}` is not an array; {forms}"))),
            None => return Err(refuse(self, format!("`{name}` is not declared"))),
        };
        let (r, j) = (decl.extents.len(), indices.len());
        if j > r || (address && j == 0) || (!address && j == r) {
            return Err(refuse(self, forms));
        }
        let mut base = Vec::new();
        for i in &indices {
            base.push(self.affine_value(*i)?);
        }
        if !address {
            base.push("0".into());
        }
        self.check_binding(p, pdecl, &decl, base.len()).map_err(|why| refuse(self, why))?;
        if address && j == r {
            // `&A[i][j]` is spelled `(A[i] + (j))`: no rewrite of `A`'s
            // elements (a transposition, a GPU buffer) takes it for one.
            let rows: String = indices[..j - 1].iter().map(|i| format!("[{}]", self.c_text(*i))).collect();
            let bare = strip_parens(arg);
            let with = format!("({name}{rows} + ({}))", self.c_text(indices[j - 1]));
            self.rewrites.insert((bare.start_byte(), bare.end_byte()), with);
        }
        self.note_extents(&name, &decl);
        Ok(Param::Pointer { array: name, decl, base, rank: pdecl.extents.len() })
    }

    /// `&X[a][b]` → `(true, X, [a, b])`; `X[a]` → `(false, X, [a])`.
    fn address<'t>(&self, arg: Node<'t>) -> (bool, Node<'t>, Vec<Node<'t>>) {
        let bare = strip_parens(arg);
        let amp = bare.kind() == "pointer_expression"
            && bare.child_by_field_name("operator").is_some_and(|o| self.text(o) == "&");
        let mut target = match amp {
            true => strip_parens(bare.child_by_field_name("argument").unwrap_or(bare)),
            false => bare,
        };
        let mut indices = Vec::new();
        while target.kind() == "subscript_expression" {
            indices.extend(target.child_by_field_name("index"));
            target = strip_parens(target.child_by_field_name("argument").unwrap_or(target));
        }
        indices.reverse();
        (amp, target, indices)
    }

    /// Whether the parameter `p` (`pdecl`) can stand for the elements of an
    /// array (`adecl`) from its dimension `m - 1` on: as many dimensions,
    /// the same inner extents, the same element type.
    fn check_binding(&self, p: &str, pdecl: &Decl, adecl: &Decl, m: usize) -> Why {
        let (k, r) = (pdecl.extents.len(), adecl.extents.len());
        if m + k != r + 1 {
            return Err(format!("`{p}` has {k} dimension(s) where the argument has {}", r + 1 - m));
        }
        for d in 1..k {
            let (a, b) = (&pdecl.extents[d], &adecl.extents[m - 1 + d]);
            if !same_extent(a, b) {
                let show = |e: &Option<String>| e.clone().unwrap_or_else(|| "a pointer".into());
                return Err(format!(
                    "dimension {d} of `{p}` has extent `{}` where the array's has `{}`",
                    show(a),
                    show(b)
                ));
            }
        }
        if element_type(&pdecl.ty) != element_type(&adecl.ty) {
            return Err(format!("`{p}` points to `{}` where the array holds `{}`", pdecl.ty, adecl.ty));
        }
        Ok(())
    }

    /// The accesses of an inlined body, in the order it runs.
    fn inline(
        &mut self,
        frame: &mut Frame,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let body = frame.body;
        self.callee_statement(frame, body, true, stack, stmt, out)
    }

    fn callee_statement(
        &mut self,
        frame: &mut Frame,
        node: Node,
        last: bool,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let (f, line) = (frame.name.clone(), self.line_of(node));
        match node.kind() {
            "compound_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> =
                    node.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
                let n = children.len();
                for (k, c) in children.into_iter().enumerate() {
                    self.callee_statement(frame, c, last && k + 1 == n, stack, stmt, out)?;
                }
                Ok(())
            }
            "comment" => Ok(()),
            "expression_statement" => match node.named_child(0) {
                Some(e) => self.callee_effect(frame, e, stack, stmt, out),
                None => Ok(()),
            },
            "declaration" => self.callee_declaration(frame, node, stack, stmt, out),
            "return_statement" if !last => {
                Err(format!("`{f}` returns before the end of its body (line {line})"))
            }
            "return_statement" => match node.named_child(0) {
                Some(e) => self.callee_reads(frame, e, stack, stmt, out),
                None => Ok(()),
            },
            "for_statement" | "while_statement" | "do_statement" | "if_statement" | "switch_statement"
            | "goto_statement" | "labeled_statement" => {
                let what = match node.kind() {
                    "for_statement" => "a `for` loop",
                    "while_statement" => "a `while` loop",
                    "do_statement" => "a `do` loop",
                    "if_statement" => "an `if`",
                    "switch_statement" => "a `switch`",
                    _ => "a `goto` or a label",
                };
                Err(format!("`{f}` holds {what} (line {line}), and polytune inlines only straight-line code"))
            }
            other => Err(format!("`{f}` holds a statement polytune does not inline ({other}, line {line})")),
        }
    }

    /// An expression statement of an inlined body.
    fn callee_effect(
        &mut self,
        frame: &mut Frame,
        e: Node,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let target = e.child_by_field_name("left").or_else(|| e.child_by_field_name("argument"));
        if let Some(t) = target.map(strip_parens).filter(|t| t.kind() == "identifier") {
            if let Some(Param::Pointer { .. }) = frame.params.get(self.text(t)) {
                return Err(format!(
                    "`{}` assigns the pointer `{}` itself (line {})",
                    frame.name,
                    self.text(t),
                    self.line_of(e)
                ));
            }
        }
        match e.kind() {
            "assignment_expression" => {
                let op = e.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                if !is_assignment_op(op) {
                    return Err(format!("`{}` assigns with `{op}` (line {})", frame.name, self.line_of(e)));
                }
                let left = e.child_by_field_name("left").unwrap();
                if op != "=" {
                    self.callee_ref(frame, left, AccessKind::Read, stack, stmt, out)?;
                }
                let right = strip_parens(e.child_by_field_name("right").unwrap());
                match right.kind() {
                    "assignment_expression" => self.callee_effect(frame, right, stack, stmt, out)?,
                    _ => self.callee_reads(frame, right, stack, stmt, out)?,
                }
                self.callee_ref(frame, left, AccessKind::Write, stack, stmt, out)
            }
            "update_expression" => {
                let arg = e.child_by_field_name("argument").unwrap();
                self.callee_ref(frame, arg, AccessKind::Read, stack, stmt, out)?;
                self.callee_ref(frame, arg, AccessKind::Write, stack, stmt, out)
            }
            _ => self.callee_reads(frame, e, stack, stmt, out),
        }
    }

    /// A declaration of the callee's own variables, with the reads of their values.
    fn callee_declaration(
        &mut self,
        frame: &mut Frame,
        node: Node,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let (f, line) = (frame.name.clone(), self.line_of(node));
        let mut cursor = node.walk();
        if let Some(s) = node.named_children(&mut cursor).find(|c| c.kind() == "storage_class_specifier") {
            return Err(format!("`{f}` declares a `{}` variable (line {line})", self.text(s)));
        }
        let mut declared = HashMap::new();
        add_decl(self.src, node, &mut declared);
        let mut cursor = node.walk();
        let declarators: Vec<Node> = node.children_by_field_name("declarator", &mut cursor).collect();
        for d in declarators {
            let Some(name) = find_kind(d, "identifier").map(|i| self.text(i).to_string()) else { continue };
            if frame.params.contains_key(&name) {
                return Err(format!("`{f}` declares `{name}` (line {line}) over its parameter `{name}`"));
            }
            let Some(decl) = declared.get(&name).cloned() else { continue };
            if decl.extents.iter().any(Option::is_none) {
                return Err(format!(
                    "`{f}` declares the pointer `{name}` (line {line}), which polytune does not follow"
                ));
            }
            frame.locals.insert(name, decl);
            let Some(value) = d.child_by_field_name("value").filter(|_| d.kind() == "init_declarator") else {
                continue;
            };
            self.callee_reads(frame, value, stack, stmt, out)?;
        }
        Ok(())
    }

    /// The reads in an expression of an inlined body, in evaluation order.
    fn callee_reads(
        &mut self,
        frame: &Frame,
        node: Node,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let (f, line) = (&frame.name, self.line_of(node));
        let text = self.text(node);
        match node.kind() {
            "identifier" => match frame.params.get(text) {
                _ if frame.locals.contains_key(text) => Ok(()),
                Some(Param::Scalar(_)) => Ok(()),
                Some(Param::Pointer { .. }) => {
                    Err(format!("`{f}` uses the pointer `{text}` as a value (line {line})"))
                }
                None => Err(self.not_its_own(frame, text, line)),
            },
            "subscript_expression" => self.callee_ref(frame, node, AccessKind::Read, stack, stmt, out),
            "pointer_expression"
                if node.child_by_field_name("operator").is_some_and(|o| self.text(o) == "*") =>
            {
                self.callee_ref(frame, node, AccessKind::Read, stack, stmt, out)
            }
            "pointer_expression" => Err(format!("`{f}` takes an address, `{text}` (line {line})")),
            "call_expression" => self.callee_call(frame, node, stack, stmt, out),
            "assignment_expression" | "update_expression" | "comma_expression" => {
                Err(format!("`{f}` assigns inside an expression, `{text}` (line {line})"))
            }
            "field_expression" => Err(format!("`{f}` reads a struct member, `{text}` (line {line})")),
            "cast_expression" => match node.child_by_field_name("value") {
                Some(v) => self.callee_reads(frame, v, stack, stmt, out),
                None => Ok(()),
            },
            "sizeof_expression" | "number_literal" | "char_literal" | "true" | "false" | "null" => Ok(()),
            "binary_expression"
            | "unary_expression"
            | "parenthesized_expression"
            | "conditional_expression" => {
                let mut cursor = node.walk();
                let list: Vec<Node> = node.named_children(&mut cursor).collect();
                for c in list {
                    self.callee_reads(frame, c, stack, stmt, out)?;
                }
                Ok(())
            }
            other => {
                Err(format!("`{f}` holds an expression polytune does not inline ({other}, line {line})"))
            }
        }
    }

    fn not_its_own(&self, frame: &Frame, name: &str, line: u32) -> String {
        format!(
            "`{}` uses `{name}` (line {line}), which is neither its parameter nor its own variable (a global, an input its accesses would not show)",
            frame.name
        )
    }

    /// A reference of an inlined body: an element through a pointer
    /// parameter is an access of the statement; the callee's own variables
    /// are not (each call has its own).
    fn callee_ref(
        &mut self,
        frame: &Frame,
        node: Node,
        kind: AccessKind,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let (f, line) = (&frame.name, self.line_of(node));
        let mut indices: Vec<Option<Node>> = Vec::new();
        let mut base = strip_parens(node);
        while base.kind() == "subscript_expression" {
            indices.push(base.child_by_field_name("index"));
            base = strip_parens(base.child_by_field_name("argument").unwrap_or(base));
        }
        indices.reverse();
        if base.kind() == "pointer_expression"
            && base.child_by_field_name("operator").is_some_and(|o| self.text(o) == "*")
        {
            // `*p` is `p[0]`.
            indices.insert(0, None);
            base = strip_parens(base.child_by_field_name("argument").unwrap_or(base));
        }
        if base.kind() != "identifier" {
            return Err(format!("`{f}` computes an address, `{}` (line {line})", self.text(node)));
        }
        let name = self.text(base);
        if frame.locals.contains_key(name) {
            // The subscripts of its own arrays may read the caller's.
            for i in indices.into_iter().flatten() {
                self.callee_reads(frame, i, stack, stmt, out)?;
            }
            return Ok(());
        }
        match frame.params.get(name) {
            Some(Param::Scalar(_)) if indices.is_empty() => Ok(()),
            Some(Param::Scalar(_)) => Err(format!("`{f}` subscripts its scalar `{name}` (line {line})")),
            Some(Param::Pointer { .. }) if indices.is_empty() => Err(format!(
                "`{f}` {} the pointer `{name}` itself (line {line})",
                if kind == AccessKind::Write { "assigns" } else { "uses" }
            )),
            Some(Param::Pointer { rank, .. }) if indices.len() != *rank => Err(format!(
                "`{f}` uses `{}` (line {line}), which is not one element of `{name}`",
                self.text(node)
            )),
            Some(Param::Pointer { array, decl, base, .. }) => {
                let mut subs = Vec::new();
                for i in &indices {
                    subs.push(match i {
                        None => "0".to_string(),
                        Some(i) => self.callee_affine(frame, *i).map_err(|why| {
                            format!(
                                "the subscript `{}` of `{name}` in `{f}` (line {line}) is not affine in its parameters: {why}",
                                self.text(*i)
                            )
                        })?,
                    });
                }
                let elements = offset(base, &subs);
                let text = format!("{} in {}", squash(self.text(node)), frame.call);
                self.record_access(array.clone(), decl, vec![(Vec::new(), elements)], kind, stmt, text, out);
                Ok(())
            }
            None => Err(self.not_its_own(frame, name, line)),
        }
    }

    /// A call in an inlined body: pure, or inlined in turn.
    fn callee_call(
        &mut self,
        frame: &Frame,
        node: Node,
        stack: &mut Vec<String>,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Why {
        let (f, line) = (frame.name.clone(), self.line_of(node));
        let callee = node.child_by_field_name("function").unwrap();
        if callee.kind() != "identifier" {
            return Err(format!("`{f}` calls through a pointer, `{}` (line {line})", self.text(callee)));
        }
        let g = self.text(callee).to_string();
        let args = arguments(node);
        if PURE_MATH.contains(&g.as_str()) || matches!(self.purity.get(&g), Some(None)) {
            for a in args {
                self.callee_reads(frame, a, stack, stmt, out)?;
            }
            return Ok(());
        }
        if stack.contains(&g) {
            return Err(format!("`{f}` calls `{g}` (line {line}), which is already running: recursion"));
        }
        let Some(def) = self.definition(&g) else {
            return Err(format!("`{f}` calls `{g}` (line {line}), whose body is not in this file"));
        };
        if !self.takes_pointers(def) {
            let why = self.purity.get(&g).cloned().flatten().unwrap_or_default();
            return Err(format!("`{f}` calls `{g}` (line {line}), which may have side effects: {why}"));
        }
        let params = self.parameters(def).map_err(|why| format!("`{g}` (called on line {line}): {why}"))?;
        if args.len() != params.len() {
            return Err(format!("`{f}` calls `{g}` with {} argument(s) (line {line})", args.len()));
        }
        let mut inner = self.frame(node, def, &g);
        for (arg, (q, qdecl)) in args.into_iter().zip(params) {
            let value = match qdecl.extents.is_empty() {
                false => self.bind_inner(frame, arg, &g, &q, &qdecl)?,
                true => {
                    self.callee_reads(frame, arg, stack, stmt, out)?;
                    Param::Scalar(match (qdecl.integer, is_unsigned_type(&qdecl.ty)) {
                        (true, false) => self.callee_affine(frame, arg),
                        _ => Err(format!("`{q}` is not a signed integer")),
                    })
                }
            };
            inner.params.insert(q, value);
        }
        stack.push(g);
        let r = self.inline(&mut inner, stack, stmt, out);
        stack.pop();
        r
    }

    /// `arg` (in the body of `frame`) bound to the pointer parameter `q` of `g`.
    fn bind_inner(&mut self, frame: &Frame, arg: Node, g: &str, q: &str, qdecl: &Decl) -> Why<Param> {
        let (f, line) = (&frame.name, self.line_of(arg));
        let refuse = |w: &Walk, why: &str| {
            format!("`{f}` passes `{}` to the pointer `{q}` of `{g}` (line {line}): {why}", w.text(arg))
        };
        let (address, target, indices) = self.address(arg);
        let name = self.text(target);
        let Some(Param::Pointer { array, decl, base, rank }) =
            frame.params.get(name).filter(|_| target.kind() == "identifier")
        else {
            return Err(refuse(self, "polytune follows only its own pointer parameters there"));
        };
        let j = indices.len();
        if j > *rank || (address && j == 0) || (!address && j == *rank) {
            return Err(refuse(
                self,
                "polytune follows a pointer `p`, a row `p[i]` or an address `&p[i]` there",
            ));
        }
        let mut subs = Vec::new();
        for i in &indices {
            subs.push(self.callee_affine(frame, *i).map_err(|why| refuse(self, &why))?);
        }
        if subs.is_empty() {
            subs.push("0".into());
        }
        let mut new_base = offset(base, &subs);
        if !address && j > 0 {
            new_base.push("0".into());
        }
        self.check_binding(q, qdecl, decl, new_base.len()).map_err(|why| refuse(self, &why))?;
        Ok(Param::Pointer {
            array: array.clone(),
            decl: decl.clone(),
            base: new_base,
            rank: qdecl.extents.len(),
        })
    }

    /// An affine expression of the callee's integer parameters, in the
    /// caller's iterators and parameters (isl syntax).
    fn callee_affine(&self, frame: &Frame, node: Node) -> Why<String> {
        let text = self.text(node);
        let not_affine = || format!("`{text}` is not affine");
        match node.kind() {
            "number_literal" => match parse_int_literal(text) {
                Some(v) if v < 0 => Ok(format!("({v})")),
                Some(v) => Ok(v.to_string()),
                None => Err(not_affine()),
            },
            "identifier" => match frame.params.get(text) {
                _ if frame.assigned.contains(text) => {
                    Err(format!("`{text}` is assigned in `{}`", frame.name))
                }
                Some(Param::Scalar(Ok(v))) => Ok(format!("({v})")),
                Some(Param::Scalar(Err(why))) => Err(format!("`{text}` has no affine value here: {why}")),
                Some(Param::Pointer { .. }) => Err(format!("`{text}` is a pointer")),
                None if frame.locals.contains_key(text) => {
                    Err(format!("`{text}` is a variable of `{}`, not a parameter", frame.name))
                }
                None => Err(format!("`{text}` is not a parameter of `{}`", frame.name)),
            },
            "parenthesized_expression" => match node.named_child(0) {
                Some(n) => self.callee_affine(frame, n).map(|a| format!("({a})")),
                None => Err(not_affine()),
            },
            "unary_expression" => {
                let arg = node.child_by_field_name("argument").ok_or_else(not_affine)?;
                match node.child_by_field_name("operator").map(|o| self.text(o)) {
                    Some("-") => Ok(format!("-({})", self.callee_affine(frame, arg)?)),
                    Some("+") => self.callee_affine(frame, arg),
                    _ => Err(not_affine()),
                }
            }
            "binary_expression" => {
                let (l, r) = (node.child_by_field_name("left"), node.child_by_field_name("right"));
                let (Some(l), Some(r)) = (l, r) else { return Err(not_affine()) };
                match node.child_by_field_name("operator").map(|o| self.text(o)) {
                    Some(op @ ("+" | "-")) => Ok(format!(
                        "({}) {op} ({})",
                        self.callee_affine(frame, l)?,
                        self.callee_affine(frame, r)?
                    )),
                    Some("*") => match (self.constant(l), self.constant(r)) {
                        (Some(c), _) => Ok(format!("{c} * ({})", self.callee_affine(frame, r)?)),
                        (_, Some(c)) => Ok(format!("{c} * ({})", self.callee_affine(frame, l)?)),
                        _ => Err(format!("`{text}` is a product of two variables")),
                    },
                    Some(op) => Err(format!("`{text}` uses `{op}`")),
                    None => Err(not_affine()),
                }
            }
            "cast_expression" => {
                let ty = node.child_by_field_name("type").map(|t| self.text(t)).unwrap_or("");
                match (is_integer_type(ty), node.child_by_field_name("value")) {
                    (true, Some(v)) => self.callee_affine(frame, v),
                    _ => Err(format!("`{text}` casts to `{ty}`")),
                }
            }
            _ => Err(not_affine()),
        }
    }
}
