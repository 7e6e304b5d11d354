//! The C side of SCoP extraction: a walk over tree-sitter-c's syntax tree of
//! the preprocessed file that turns loops, conditions and assignments into
//! isl text, and rejects everything that is not static control.

use std::collections::{HashMap, HashSet};

use isl_rs::{Map, Set};
use tree_sitter::{Node, Parser};

use super::affine::{isl_name, parse_int_literal, PURE_MATH};
use super::{Access, AccessKind, Array, Location, Scop, ScopError, Source, Statement};

type Result<T> = std::result::Result<T, ScopError>;

pub(super) fn extract_scops(src: &Source) -> Result<Vec<Scop>> {
    let pairs = pragma_pairs(src)?;
    if pairs.is_empty() {
        return Err(ScopError::new(&src.path, None, "no `#pragma scop` region in this file"));
    }
    let tree = parse(src, &src.parse_text)?;
    // A region at file scope (a fragment, as Pluto's and clan's users write
    // them) is read as the body of a function: its pragma lines are replaced,
    // byte for byte, by a function head and a closing brace.
    let fragments: Vec<bool> =
        pairs.iter().map(|(open, _)| !inside_function(tree.root_node(), open.0)).collect();
    let (tree, text) = if fragments.iter().any(|&f| f) {
        let mut text = src.parse_text.clone().into_bytes();
        for ((open, close), _) in pairs.iter().zip(&fragments).filter(|(_, &f)| f) {
            for ((start, end), with) in [(open, FRAGMENT_HEAD), (close, "}")] {
                let line = &mut text[*start..*end];
                let width = line.len() - 1; // keep the newline
                line[..width].fill(b' ');
                line[..with.len().min(width)].copy_from_slice(&with.as_bytes()[..with.len().min(width)]);
            }
        }
        let text = String::from_utf8(text).expect("ASCII replaced ASCII");
        (parse(src, &text)?, Some(text))
    } else {
        (tree, None)
    };
    let root = tree.root_node();
    let view;
    let src = match text {
        Some(text) => {
            view = src.with_parse_text(text);
            &view
        }
        None => src,
    };
    check_syntax(src, root)?;
    let globals = collect_decls(src, root, false);
    pairs
        .into_iter()
        .zip(fragments)
        .map(|((open, close), fragment)| match fragment {
            true => extract_fragment(src, root, &globals, open, close),
            false => extract_one(src, root, &globals, open, close),
        })
        .collect()
}

/// What replaces `#pragma scop` at file scope: shorter than the pragma, so
/// that every byte offset (and so every error location) stays.
const FRAGMENT_HEAD: &str = "void f(){";

fn parse(src: &Source, text: &str) -> Result<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .expect("the tree-sitter-c grammar matches the tree-sitter runtime");
    parser.parse(text, None).ok_or_else(|| ScopError::new(&src.path, None, "the C parser gave up"))
}

fn inside_function(root: Node, byte: usize) -> bool {
    root.descendant_for_byte_range(byte, byte)
        .and_then(|n| ancestor_or_self(n, "function_definition"))
        .is_some()
}

fn check_syntax(src: &Source, root: Node) -> Result<()> {
    if root.has_error() {
        let bad = first_error(root).unwrap_or(root);
        let what = if bad.is_missing() {
            format!("syntax error: missing `{}`", bad.kind())
        } else {
            let snippet: String = node_text(src, bad).chars().take(40).collect();
            format!("syntax error near `{}`", snippet.trim())
        };
        return Err(err_at(src, bad, what));
    }
    Ok(())
}

/// Byte ranges of matching `#pragma scop` / `#pragma endscop` lines.
fn pragma_pairs(src: &Source) -> Result<Vec<((usize, usize), (usize, usize))>> {
    let mut pairs = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in src.parse_text.split_inclusive('\n') {
        let range = (offset, offset + line.len());
        offset += line.len();
        let words: Vec<&str> = line.trim().trim_start_matches('#').split_whitespace().collect();
        let is = |w: &str| words.first() == Some(&"pragma") && words.get(1) == Some(&w);
        let here = || src.location(range.0 + line.find('#').unwrap_or(0));
        if is("scop") {
            if open.is_some() {
                return Err(ScopError::new(&src.path, here(), "`#pragma scop` inside another SCoP"));
            }
            open = Some(range);
        } else if is("endscop") {
            match open.take() {
                Some(o) => pairs.push((o, range)),
                None => {
                    return Err(ScopError::new(&src.path, here(), "`#pragma endscop` without `#pragma scop`"))
                }
            }
        }
    }
    if let Some(o) = open {
        return Err(ScopError::new(&src.path, src.location(o.0), "`#pragma scop` without `#pragma endscop`"));
    }
    Ok(pairs)
}

fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    let found = node.children(&mut cursor).filter(|c| c.has_error()).find_map(first_error);
    found
}

fn node_text<'s>(src: &'s Source, node: Node) -> &'s str {
    &src.parse_text[node.byte_range()]
}

fn err_at(src: &Source, node: Node, reason: impl Into<String>) -> ScopError {
    ScopError::new(&src.path, src.location(node.start_byte()), reason)
}

/// What a declaration says about a name.
#[derive(Debug, Clone)]
struct Decl {
    ty: String,
    extents: Vec<Option<String>>,
    integer: bool,
}

/// Declarations directly under `scope` (a translation unit or a function).
/// With `deep`, also those nested in blocks and `for` initialisers.
fn collect_decls(src: &Source, scope: Node, deep: bool) -> HashMap<String, Decl> {
    let mut out = HashMap::new();
    let mut stack = vec![scope];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "declaration" | "parameter_declaration" => add_decl(src, child, &mut out),
                "parameter_list" | "function_declarator" => stack.push(child),
                _ if deep && child.named_child_count() > 0 => stack.push(child),
                _ => {}
            }
        }
    }
    out
}

fn add_decl(src: &Source, decl: Node, out: &mut HashMap<String, Decl>) {
    let Some(ty_node) = decl.child_by_field_name("type") else {
        return;
    };
    let ty = node_text(src, ty_node).split_whitespace().collect::<Vec<_>>().join(" ");
    let integer_type = is_integer_type(&ty);
    let mut cursor = decl.walk();
    for d in decl.children_by_field_name("declarator", &mut cursor) {
        let mut extents = Vec::new();
        let mut node = d;
        let name = loop {
            match node.kind() {
                "identifier" => break Some(node_text(src, node).to_string()),
                "init_declarator" | "attributed_declarator" => {
                    node =
                        node.child_by_field_name("declarator").unwrap_or(node.named_child(0).unwrap_or(node));
                }
                "array_declarator" => {
                    let size = node.child_by_field_name("size").map(|s| node_text(src, s).to_string());
                    extents.push(size);
                    match node.child_by_field_name("declarator") {
                        Some(n) => node = n,
                        None => break None,
                    }
                }
                "pointer_declarator" => {
                    extents.push(None);
                    match node.child_by_field_name("declarator") {
                        Some(n) => node = n,
                        None => break None,
                    }
                }
                "parenthesized_declarator" => match node.named_child(0) {
                    Some(n) => node = n,
                    None => break None,
                },
                _ => break None,
            }
        };
        if let Some(name) = name {
            // Declarators read outside-in give the innermost dimension first.
            extents.reverse();
            let integer = integer_type && extents.is_empty();
            out.insert(name, Decl { ty: ty.clone(), extents, integer });
        }
    }
}

fn is_integer_type(ty: &str) -> bool {
    ty.split_whitespace().all(|w| {
        matches!(
            w,
            "int"
                | "long"
                | "short"
                | "unsigned"
                | "signed"
                | "char"
                | "size_t"
                | "ssize_t"
                | "ptrdiff_t"
                | "int32_t"
                | "int64_t"
                | "uint32_t"
                | "uint64_t"
                | "const"
                | "register"
        )
    })
}

/// A loop or a statement in the original program order.
enum Tree {
    Stmt(usize),
    Loop { iter: String, sign: i64, body: Vec<Tree> },
}

struct Loop {
    c_name: String,
    isl: String,
}

struct Walk<'s> {
    src: &'s Source,
    /// At file scope, names nobody declares are inferred as clan does:
    /// integer parameters in affine expressions, arrays when subscripted,
    /// `double` scalars otherwise.
    fragment: bool,
    decls: HashMap<String, Decl>,
    written: HashSet<String>,
    iterators: HashSet<String>,
    loops: Vec<Loop>,
    conds: Vec<String>,
    params: Vec<String>,
    arrays: Vec<Array>,
    statements: Vec<Statement>,
}

fn extract_one(
    src: &Source,
    root: Node,
    globals: &HashMap<String, Decl>,
    open: (usize, usize),
    close: (usize, usize),
) -> Result<Scop> {
    let pragma = root
        .named_descendant_for_byte_range(open.0, open.1.saturating_sub(1))
        .ok_or_else(|| ScopError::new(&src.path, src.location(open.0), "cannot locate `#pragma scop`"))?;
    let pragma = ancestor_or_self(pragma, "preproc_call").unwrap_or(pragma);
    let block = pragma.parent().filter(|p| p.kind() == "compound_statement").ok_or_else(|| {
        err_at(src, pragma, "`#pragma scop` must stand among the statements of a function body")
    })?;
    let function = ancestor_or_self(block, "function_definition")
        .ok_or_else(|| err_at(src, pragma, "`#pragma scop` outside a function body"))?;
    let fname = function
        .child_by_field_name("declarator")
        .and_then(|d| find_kind(d, "identifier"))
        .map(|n| node_text(src, n).to_string())
        .unwrap_or_default();

    let mut body = Vec::new();
    let mut cursor = block.walk();
    let mut closed = false;
    for child in block.named_children(&mut cursor) {
        if child.end_byte() <= open.0 || child.start_byte() < open.1 {
            continue;
        }
        if child.start_byte() >= close.0 {
            closed = true;
            break;
        }
        body.push(child);
    }
    if !closed {
        return Err(ScopError::new(
            &src.path,
            src.location(close.0),
            "`#pragma endscop` must close the SCoP in the same block as its `#pragma scop`",
        ));
    }

    let start = src.location(open.0).unwrap_or(Location { line: 0, column: 0 });
    let region = Region { function, name: fname, body, start, span: (open.0, close.1), fragment: false };
    walk_region(src, globals, region, pragma)
}

/// A SCoP at file scope, read as the body of the function its pragma lines
/// became (see `FRAGMENT_HEAD`).
fn extract_fragment(
    src: &Source,
    root: Node,
    globals: &HashMap<String, Decl>,
    open: (usize, usize),
    close: (usize, usize),
) -> Result<Scop> {
    let function = root
        .descendant_for_byte_range(open.0, open.0)
        .and_then(|n| ancestor_or_self(n, "function_definition"))
        .ok_or_else(|| {
            ScopError::new(&src.path, src.location(open.0), "cannot read the SCoP at file scope")
        })?;
    let block = function.child_by_field_name("body").unwrap_or(function);
    let mut cursor = block.walk();
    let body: Vec<Node> = block.named_children(&mut cursor).collect();
    let start = src.location(open.0).unwrap_or(Location { line: 0, column: 0 });
    let region =
        Region { function, name: String::new(), body, start, span: (open.0, close.1), fragment: true };
    walk_region(src, globals, region, function)
}

/// The statements between a pair of pragmas and where they stand.
struct Region<'t> {
    function: Node<'t>,
    name: String,
    body: Vec<Node<'t>>,
    start: Location,
    span: (usize, usize),
    fragment: bool,
}

fn walk_region(src: &Source, globals: &HashMap<String, Decl>, region: Region, pragma: Node) -> Result<Scop> {
    let Region { function, name: fname, body, start, span, fragment } = region;
    let mut decls = globals.clone();
    decls.extend(collect_decls(src, function, true));
    let mut walk = Walk {
        src,
        fragment,
        decls,
        written: HashSet::new(),
        iterators: HashSet::new(),
        loops: Vec::new(),
        conds: Vec::new(),
        params: Vec::new(),
        arrays: Vec::new(),
        statements: Vec::new(),
    };
    for n in &body {
        walk.prescan(*n);
    }
    let mut tree = Vec::new();
    for n in &body {
        walk.statement(*n, &mut tree)?;
    }
    if walk.statements.is_empty() {
        return Err(err_at(src, pragma, "the SCoP holds no statement"));
    }
    walk.finish(fname, start, span, &tree)
}

fn ancestor_or_self<'t>(mut node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    loop {
        if node.kind() == kind {
            return Some(node);
        }
        node = node.parent()?;
    }
}

fn find_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    if node.kind() == kind {
        return Some(node);
    }
    if node.kind() == "parameter_list" {
        return None;
    }
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find_map(|c| find_kind(c, kind));
    found
}

fn is_assignment_op(op: &str) -> bool {
    matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=")
}

impl<'s> Walk<'s> {
    fn text(&self, node: Node) -> &'s str {
        node_text(self.src, node)
    }

    fn err(&self, node: Node, reason: impl Into<String>) -> ScopError {
        err_at(self.src, node, reason)
    }

    /// Finds loop iterators and the scalars the SCoP writes, so that an affine
    /// expression can tell a parameter from a data-dependent value.
    fn prescan(&mut self, node: Node) {
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
    fn init_target(&self, init: Node) -> Option<String> {
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

    fn statement(&mut self, node: Node, out: &mut Vec<Tree>) -> Result<()> {
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
                    out.push(Tree::Stmt(self.assignment(node, e)?));
                }
                Ok(())
            }
            "declaration" => {
                Err(self
                    .err(node, "declarations inside a SCoP are not supported; declare before `#pragma scop`"))
            }
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

    fn for_loop(&mut self, node: Node, out: &mut Vec<Tree>) -> Result<()> {
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

        let (iter, lb) = match init.kind() {
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
        let lb = self.affine(lb)?;
        self.loops.push(Loop { c_name: iter.clone(), isl: isl.clone() });
        let cond_text = self.condition(cond, true);
        let cond_text = match cond_text {
            Ok(c) => c,
            Err(e) => {
                self.loops.pop();
                return Err(e);
            }
        };
        let mut pushed =
            vec![if step > 0 { format!("{isl} >= {lb}") } else { format!("{isl} <= {lb}") }, cond_text];
        if step.abs() > 1 {
            pushed.push(format!("({isl} - ({lb})) mod {} = 0", step.abs()));
        }
        let n = pushed.len();
        self.conds.extend(pushed);
        let mut inner = Vec::new();
        let result = self.statement(body, &mut inner);
        self.conds.truncate(self.conds.len() - n);
        self.loops.pop();
        result?;
        if !inner.is_empty() {
            out.push(Tree::Loop { iter: isl, sign: step.signum(), body: inner });
        }
        Ok(())
    }

    /// The constant step of `i++`, `--i`, `i += 2`, `i = i - 1`, ...
    fn step(&self, update: Node, iter: &str) -> Result<i64> {
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

    fn if_statement(&mut self, node: Node, out: &mut Vec<Tree>) -> Result<()> {
        let cond = node.child_by_field_name("condition").unwrap();
        let cond = self.condition(cond, false)?;
        self.conds.push(cond.clone());
        let r = self.statement(node.child_by_field_name("consequence").unwrap(), out);
        self.conds.pop();
        r?;
        if let Some(alt) = node.child_by_field_name("alternative") {
            let alt = if alt.kind() == "else_clause" { alt.named_child(0).unwrap_or(alt) } else { alt };
            self.conds.push(format!("not ({cond})"));
            let r = self.statement(alt, out);
            self.conds.pop();
            r?;
        }
        Ok(())
    }

    /// An integer constant expression, folded.
    fn constant(&self, node: Node) -> Option<i64> {
        match node.kind() {
            "number_literal" => parse_int_literal(self.text(node)),
            "parenthesized_expression" => self.constant(node.named_child(0)?),
            "unary_expression" => {
                let v = self.constant(node.child_by_field_name("argument")?)?;
                match self.text(node.child_by_field_name("operator")?) {
                    "-" => v.checked_neg(),
                    "+" => Some(v),
                    _ => None,
                }
            }
            "binary_expression" => {
                let l = self.constant(node.child_by_field_name("left")?)?;
                let r = self.constant(node.child_by_field_name("right")?)?;
                match self.text(node.child_by_field_name("operator")?) {
                    "+" => l.checked_add(r),
                    "-" => l.checked_sub(r),
                    "*" => l.checked_mul(r),
                    "/" if r != 0 => Some(l / r),
                    _ => None,
                }
            }
            "cast_expression" => self.constant(node.child_by_field_name("value")?),
            _ => None,
        }
    }

    /// An affine expression of the enclosing iterators and the parameters, in isl syntax.
    fn affine(&mut self, node: Node) -> Result<String> {
        if let Some(c) = self.constant(node) {
            return Ok(c.to_string());
        }
        let not_affine =
            |w: &Walk, why: &str| w.err(node, format!("`{}` is not affine: {why}", w.text(node)));
        match node.kind() {
            "identifier" => self.affine_name(node),
            "parenthesized_expression" => Ok(format!("({})", self.affine(node.named_child(0).unwrap())?)),
            "unary_expression" => {
                let arg = self.affine(node.child_by_field_name("argument").unwrap())?;
                match self.text(node.child_by_field_name("operator").unwrap()) {
                    "-" => Ok(format!("-({arg})")),
                    "+" => Ok(arg),
                    _ => Err(not_affine(self, "only `+` and `-` apply to affine values")),
                }
            }
            "binary_expression" => {
                let (l, r) =
                    (node.child_by_field_name("left").unwrap(), node.child_by_field_name("right").unwrap());
                let op = self.text(node.child_by_field_name("operator").unwrap());
                match op {
                    "+" | "-" => Ok(format!("{} {op} {}", self.affine(l)?, self.affine(r)?)),
                    "*" => match (self.constant(l), self.constant(r)) {
                        (Some(c), _) => Ok(format!("{c} * ({})", self.affine(r)?)),
                        (_, Some(c)) => Ok(format!("{c} * ({})", self.affine(l)?)),
                        _ => Err(not_affine(self, "a product of two variables")),
                    },
                    "/" | "%" => match self.constant(r) {
                        Some(c) if c > 0 => {
                            let l = self.affine(l)?;
                            Ok(if op == "/" {
                                format!("floor(({l}) / {c})")
                            } else {
                                format!("(({l}) mod {c})")
                            })
                        }
                        _ => Err(not_affine(self, "division by a non-constant or non-positive value")),
                    },
                    _ => Err(not_affine(self, &format!("operator `{op}`"))),
                }
            }
            "conditional_expression" => match self.min_max(node) {
                Some((f, a, b)) => Ok(format!("{f}({}, {})", self.affine(a)?, self.affine(b)?)),
                None => Err(not_affine(
                    self,
                    "a conditional value other than a min or max (it may bound a loop or guard an `if`)",
                )),
            },
            "call_expression" => {
                let f = self.text(node.child_by_field_name("function").unwrap());
                let args = node.child_by_field_name("arguments").unwrap();
                let mut cursor = args.walk();
                let list: Vec<Node> = args.named_children(&mut cursor).collect();
                match (f, list.len()) {
                    ("min" | "max", 2) => {
                        Ok(format!("{f}({}, {})", self.affine(list[0])?, self.affine(list[1])?))
                    }
                    ("floord" | "ceild", 2) => match self.constant(list[1]) {
                        Some(c) if c > 0 => {
                            let a = self.affine(list[0])?;
                            Ok(format!("{}(({a}) / {c})", if f == "floord" { "floor" } else { "ceil" }))
                        }
                        _ => Err(not_affine(self, "the divisor must be a positive constant")),
                    },
                    _ => Err(not_affine(self, &format!("call to `{f}`"))),
                }
            }
            "cast_expression" => {
                let ty = self.text(node.child_by_field_name("type").unwrap());
                if !is_integer_type(ty) {
                    return Err(not_affine(self, &format!("cast to `{ty}`")));
                }
                self.affine(node.child_by_field_name("value").unwrap())
            }
            "subscript_expression" => Err(not_affine(self, "it reads an array, so it is data-dependent")),
            "pointer_expression" => Err(not_affine(self, "pointer dereference")),
            "number_literal" => Err(not_affine(self, "a non-integer constant")),
            _ => Err(not_affine(self, &format!("unsupported expression ({})", node.kind()))),
        }
    }

    fn affine_name(&mut self, node: Node) -> Result<String> {
        let name = self.text(node);
        if let Some(l) = self.loops.iter().find(|l| l.c_name == name) {
            return Ok(l.isl.clone());
        }
        if self.iterators.contains(name) {
            return Err(self.err(node, format!("loop iterator `{name}` is used outside its loop")));
        }
        if self.written.contains(name) {
            return Err(self.err(
                node,
                format!("`{name}` is assigned inside the SCoP, so an expression using it as a bound, condition or subscript is data-dependent"),
            ));
        }
        match self.decls.get(name) {
            Some(d) if d.integer => {
                let isl = isl_name(name);
                if !self.params.contains(&isl) {
                    self.params.push(isl.clone());
                }
                Ok(isl)
            }
            Some(d) => Err(self
                .err(node, format!("`{name}` has type `{}`; affine expressions need integer scalars", d.ty))),
            None if self.fragment => {
                self.decls
                    .insert(name.to_string(), Decl { ty: "int".into(), extents: vec![], integer: true });
                self.affine_name(node)
            }
            None => Err(self.err(node, format!("`{name}` is not declared"))),
        }
    }

    /// An affine condition in isl syntax. In a loop condition (`in_loop`) `!=` is
    /// refused: it does not bound the iterator.
    fn condition(&mut self, node: Node, in_loop: bool) -> Result<String> {
        match node.kind() {
            "parenthesized_expression" => {
                Ok(format!("({})", self.condition(node.named_child(0).unwrap(), in_loop)?))
            }
            "unary_expression" if self.text(node.child_by_field_name("operator").unwrap()) == "!" => Ok(
                format!("not ({})", self.condition(node.child_by_field_name("argument").unwrap(), in_loop)?),
            ),
            "binary_expression" => {
                let (l, r) =
                    (node.child_by_field_name("left").unwrap(), node.child_by_field_name("right").unwrap());
                let op = self.text(node.child_by_field_name("operator").unwrap());
                match op {
                    "&&" => {
                        Ok(format!("({}) and ({})", self.condition(l, in_loop)?, self.condition(r, in_loop)?))
                    }
                    "||" => {
                        Ok(format!("({}) or ({})", self.condition(l, in_loop)?, self.condition(r, in_loop)?))
                    }
                    "<" | "<=" | ">" | ">=" | "==" => self.compare(l, if op == "==" { "=" } else { op }, r),
                    "!=" if !in_loop => Ok(format!("not ({})", self.compare(l, "=", r)?)),
                    "!=" => Err(self
                        .err(node, "a loop condition with `!=` does not bound the iterator; use `<` or `>`")),
                    _ => Err(self.err(node, format!("`{}` is not an affine condition", self.text(node)))),
                }
            }
            _ => Err(self.err(
                node,
                format!(
                    "`{}` is not an affine condition (a comparison of affine expressions)",
                    self.text(node)
                ),
            )),
        }
    }

    /// `l op r` in isl syntax. A conditional operand that is not a min or max,
    /// `c ? x : y`, splits the comparison into `(c and l op x) or (not c and l op y)`.
    fn compare(&mut self, l: Node, op: &str, r: Node) -> Result<String> {
        for (side, is_left) in [(strip_parens(l), true), (strip_parens(r), false)] {
            if side.kind() == "conditional_expression" && self.min_max(side).is_none() {
                let c = self.condition(side.child_by_field_name("condition").unwrap(), false)?;
                let x = side.child_by_field_name("consequence").unwrap();
                let y = side.child_by_field_name("alternative").unwrap();
                let (cx, cy) = if is_left {
                    (self.compare(x, op, r)?, self.compare(y, op, r)?)
                } else {
                    (self.compare(l, op, x)?, self.compare(l, op, y)?)
                };
                return Ok(format!("(({c}) and ({cx})) or (not ({c}) and ({cy}))"));
            }
        }
        Ok(format!("{} {op} {}", self.affine(l)?, self.affine(r)?))
    }

    /// `a < b ? a : b` and its variants: `Some(("min" | "max", a, b))`.
    fn min_max<'t>(&self, node: Node<'t>) -> Option<(&'static str, Node<'t>, Node<'t>)> {
        let cond = strip_parens(node.child_by_field_name("condition")?);
        if cond.kind() != "binary_expression" {
            return None;
        }
        let op = self.text(cond.child_by_field_name("operator")?);
        let (a, b) = (cond.child_by_field_name("left")?, cond.child_by_field_name("right")?);
        let (x, y) = (node.child_by_field_name("consequence")?, node.child_by_field_name("alternative")?);
        let same =
            |p: Node, q: Node| squash(self.text(strip_parens(p))) == squash(self.text(strip_parens(q)));
        let picks_first = if same(x, a) && same(y, b) {
            true
        } else if same(x, b) && same(y, a) {
            false
        } else {
            return None;
        };
        let less = match op {
            "<" | "<=" => true,
            ">" | ">=" => false,
            _ => return None,
        };
        Some((if less == picks_first { "min" } else { "max" }, a, b))
    }

    /// An expression statement `lhs op= rhs;` or `x++;`: a polyhedral statement.
    fn assignment(&mut self, stmt: Node, expr: Node) -> Result<usize> {
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
            "call_expression" => {
                return Err(self.err(
                    expr,
                    "a call statement may have side effects; a SCoP statement must be an assignment",
                ))
            }
            _ => {
                return Err(self.err(
                    expr,
                    "a SCoP statement must be an assignment such as `A[i] = ...;` or `s += ...;`",
                ))
            }
        }
        let iterators: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let c_iterators = self.loops.iter().map(|l| l.c_name.clone()).collect();
        let tuple = format!("{name}[{}]", iterators.join(", "));
        let mut domain = format!("{}{{ {tuple}", self.param_prefix());
        if !self.conds.is_empty() {
            domain.push_str(" : ");
            domain.push_str(&self.conds.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" and "));
        }
        domain.push_str(" }");
        let location = self.src.location(stmt.start_byte()).unwrap_or(Location { line: 0, column: 0 });
        self.statements.push(Statement {
            name,
            iterators,
            c_iterators,
            domain,
            accesses,
            text: self.text(stmt).to_string(),
            location,
        });
        Ok(index)
    }

    /// `lhs op= rhs`, where `rhs` may itself be an assignment (`a = b = c`,
    /// one statement with a write per link, as pet models it): the reads of
    /// the innermost value first, then each link's write from the inside out.
    fn assign_chain(&mut self, expr: Node, stmt: &str, accesses: &mut Vec<Access>) -> Result<()> {
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

    fn param_prefix(&self) -> String {
        format!("[{}] -> ", self.params.join(", "))
    }

    /// All reads in a right-hand side, in evaluation order.
    fn reads(&mut self, node: Node, stmt: &str, out: &mut Vec<Access>) -> Result<()> {
        match node.kind() {
            "subscript_expression" => self.reference(node, AccessKind::Read, stmt, out),
            "identifier" => {
                let name = self.text(node);
                if self.loops.iter().any(|l| l.c_name == name) {
                    return Ok(());
                }
                if self.iterators.contains(name) {
                    return Err(self.err(node, format!("loop iterator `{name}` is used outside its loop")));
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
            "call_expression" => {
                let f = node.child_by_field_name("function").unwrap();
                let fname = self.text(f);
                if f.kind() != "identifier" || !PURE_MATH.contains(&fname) {
                    return Err(self.err(node, format!("call to `{fname}`, which may have side effects (only pure math functions are allowed in a SCoP)")));
                }
                let args = node.child_by_field_name("arguments").unwrap();
                let mut cursor = args.walk();
                let list: Vec<Node> = args.named_children(&mut cursor).collect();
                for a in list {
                    self.reads(a, stmt, out)?;
                }
                Ok(())
            }
            "assignment_expression" | "update_expression" => {
                Err(self.err(node, "an assignment inside an expression is not supported in a SCoP"))
            }
            "comma_expression" => Err(self.err(node, "the comma operator is not supported in a SCoP")),
            "pointer_expression" => {
                Err(self.err(node, "pointer dereference or address-of is not supported in a SCoP"))
            }
            "field_expression" => Err(self.err(node, "struct member access is not supported in a SCoP")),
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
    fn reference(&mut self, node: Node, kind: AccessKind, stmt: &str, out: &mut Vec<Access>) -> Result<()> {
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
            let decl = Decl { ty: "double".into(), extents: vec![None; indices.len()], integer: false };
            self.decls.insert(name.clone(), decl);
        }
        let decl = self
            .decls
            .get(&name)
            .cloned()
            .ok_or_else(|| self.err(base, format!("`{name}` is not declared")))?;
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
        for i in &indices {
            let pieces = self.pieces(*i)?;
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
            }),
        }
        out.push(Access {
            id: String::new(),
            kind,
            array: name,
            relation,
            text: self.text(node).to_string(),
        });
        Ok(())
    }

    /// A subscript that is affine by pieces, `c ? x : y` with an affine
    /// condition (not a min or max, which stay one piece): `(condition, value)`
    /// pairs whose conditions partition the iteration domain.
    fn pieces(&mut self, node: Node) -> Result<Vec<(Option<String>, String)>> {
        let bare = strip_parens(node);
        if bare.kind() != "conditional_expression" || self.min_max(bare).is_some() {
            return Ok(vec![(None, self.affine(node)?)]);
        }
        let c = self.condition(bare.child_by_field_name("condition").unwrap(), false)?;
        let mut out = Vec::new();
        for (field, guard) in [("consequence", c.clone()), ("alternative", format!("not ({c})"))] {
            for (inner, e) in self.pieces(bare.child_by_field_name(field).unwrap())? {
                let g = match inner {
                    Some(i) => format!("({guard}) and ({i})"),
                    None => guard.clone(),
                };
                out.push((Some(g), e));
            }
        }
        Ok(out)
    }

    /// Checks every domain and access with isl and keeps isl's simplified text
    /// (an empty domain keeps ours: isl would drop its tuple name).
    fn normalize(&mut self) -> Result<()> {
        let ctx = crate::isl::new_context();
        for s in &mut self.statements {
            let bad = |what: &str, e: isl_rs::LibISLError| {
                ScopError::new(
                    &self.src.path,
                    Some(s.location),
                    format!("internal error: isl rejects the {what} we built: {e:?}"),
                )
            };
            let set = Set::read_from_str(&ctx, &s.domain)
                .and_then(|d| d.coalesce())
                .map_err(|e| bad("domain", e))?;
            if !set.is_empty().map_err(|e| bad("domain", e))? {
                s.domain = set.to_str().map_err(|e| bad("domain", e))?.to_string();
            }
            for a in &mut s.accesses {
                let m = Map::read_from_str(&ctx, &a.relation).map_err(|e| bad("access relation", e))?;
                a.relation = m.to_str().map_err(|e| bad("access relation", e))?.to_string();
            }
        }
        Ok(())
    }

    fn finish(
        mut self,
        function: String,
        start: Location,
        span: (usize, usize),
        tree: &[Tree],
    ) -> Result<Scop> {
        let prefix = self.param_prefix();
        let mut n = 0;
        for s in &mut self.statements {
            // Parameters are known only once the whole SCoP is read.
            let body = s.domain.split_once("-> ").map(|(_, b)| b.to_string()).unwrap_or_default();
            s.domain = format!("{prefix}{body}");
            for a in &mut s.accesses {
                a.id = format!("ref{n}");
                a.relation = format!("{prefix}{}", a.relation);
                n += 1;
            }
        }
        self.normalize()?;
        let root = schedule_yaml(tree, &self.statements).map(|c| format!(", child: {c}")).unwrap_or_default();
        let mut rows = vec![Vec::new(); self.statements.len()];
        flat_rows(tree, &mut Vec::new(), &mut rows);
        let depth = rows.iter().map(Vec::len).max().unwrap_or(0);
        let schedule_map = self
            .statements
            .iter()
            .zip(&rows)
            .map(|(s, r)| {
                let mut r = r.clone();
                r.resize(depth, "0".into());
                format!("{}[{}] -> [{}]", s.name, s.iterators.join(", "), r.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        let mut scop = Scop {
            file: self.src.path.clone(),
            function,
            start,
            span,
            context: context(&self.params),
            params: self.params,
            arrays: self.arrays,
            statements: self.statements,
            schedule: String::new(),
            schedule_map: format!("{{ {schedule_map} }}"),
        };
        scop.schedule = format!("{{ domain: \"{}\"{root} }}", scop.domain());
        Ok(scop)
    }
}

/// Parameters are sizes: the model assumes them non-negative, as pet and Pluto do.
fn context(params: &[String]) -> String {
    let cond: Vec<String> = params.iter().map(|p| format!("{p} >= 0")).collect();
    let cond = if cond.is_empty() { String::new() } else { format!(" {}", cond.join(" and ")) };
    format!("[{}] -> {{ :{cond} }}", params.join(", "))
}

fn strip_parens(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        match node.named_child(0) {
            Some(n) => node = n,
            None => break,
        }
    }
    node
}

fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn tree_statements(tree: &[Tree], out: &mut Vec<usize>) {
    for t in tree {
        match t {
            Tree::Stmt(i) => out.push(*i),
            Tree::Loop { body, .. } => tree_statements(body, out),
        }
    }
}

fn tuple(s: &Statement) -> String {
    format!("{}[{}]", s.name, s.iterators.join(", "))
}

/// The isl YAML of a list of siblings, `None` for a lone statement (a leaf).
fn schedule_yaml(tree: &[Tree], stmts: &[Statement]) -> Option<String> {
    if tree.len() == 1 {
        return node_yaml(&tree[0], stmts);
    }
    let parts: Vec<String> = tree
        .iter()
        .map(|t| {
            let mut ids = Vec::new();
            tree_statements(std::slice::from_ref(t), &mut ids);
            let filter = ids.iter().map(|&i| tuple(&stmts[i])).collect::<Vec<_>>().join("; ");
            match node_yaml(t, stmts) {
                Some(c) => format!("{{ filter: \"{{ {filter} }}\", child: {c} }}"),
                None => format!("{{ filter: \"{{ {filter} }}\" }}"),
            }
        })
        .collect();
    Some(format!("{{ sequence: [ {} ] }}", parts.join(", ")))
}

fn node_yaml(t: &Tree, stmts: &[Statement]) -> Option<String> {
    match t {
        Tree::Stmt(_) => None,
        Tree::Loop { iter, sign, body } => {
            let mut ids = Vec::new();
            tree_statements(body, &mut ids);
            let value = if *sign < 0 { format!("-{iter}") } else { iter.clone() };
            let parts: Vec<String> =
                ids.iter().map(|&i| format!("{} -> [({value})]", tuple(&stmts[i]))).collect();
            let band = format!("schedule: \"[{{ {} }}]\"", parts.join("; "));
            Some(match schedule_yaml(body, stmts) {
                Some(c) => format!("{{ {band}, child: {c} }}"),
                None => format!("{{ {band} }}"),
            })
        }
    }
}

/// `2d+1` rows: sibling position, then loop value, at each depth.
fn flat_rows(tree: &[Tree], prefix: &mut Vec<String>, rows: &mut [Vec<String>]) {
    for (pos, t) in tree.iter().enumerate() {
        prefix.push(pos.to_string());
        match t {
            Tree::Stmt(i) => rows[*i] = prefix.clone(),
            Tree::Loop { iter, sign, body } => {
                prefix.push(if *sign < 0 { format!("-{iter}") } else { iter.clone() });
                flat_rows(body, prefix, rows);
                prefix.pop();
            }
        }
        prefix.pop();
    }
}
