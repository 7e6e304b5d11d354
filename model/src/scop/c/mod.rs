//! The C side of SCoP extraction: a walk over tree-sitter-c's syntax tree of
//! the preprocessed file that turns loops, conditions and assignments into
//! isl text, and rejects everything that is not static control.

use std::collections::{BTreeSet, HashMap, HashSet};

use isl_rs::{Map, Set};
use tree_sitter::{Node, Parser};

use super::{Array, ExitValue, Location, Scop, ScopError, Source, Statement};

mod access;
mod bounds;
mod calls;
mod control;
mod decls;
mod delinearise;
pub(super) mod detect;
mod exits;
mod expr;
mod guards;
mod indirect;
mod inputs;
mod lift;
mod model;
mod purity;

use decls::{collect_decls, Decl};
pub(super) use inputs::check as check_inputs;

type Result<T> = std::result::Result<T, ScopError>;

/// The SCoPs of `src`; its syntax tree may nest `max_depth` levels (see
/// [`MAX_DEPTH`]).
pub(super) fn extract_scops(src: &Source, max_depth: usize) -> Result<Vec<Scop>> {
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
    check_depth(src, root, max_depth)?;
    check_syntax(src, root)?;
    let unit = Unit::of(src, root);
    pairs
        .into_iter()
        .zip(fragments)
        .map(|((open, close), fragment)| match fragment {
            true => extract_fragment(src, root, &unit, open, close),
            false => extract_one(src, root, &unit, open, close),
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

/// How deep the syntax tree may nest (expressions, parentheses, blocks):
/// the walks over it recurse, on a stack sized for this depth
/// ([`crate::scop::on_large_stack`]). A 20,000-term sum nests 20,000 deep.
pub(super) const MAX_DEPTH: usize = 50_000;

/// Refuses a syntax tree deeper than `max` (at most [`MAX_DEPTH`]), at its
/// first node that deep, before any recursive walk.
pub(super) fn check_depth(src: &Source, root: Node, max: usize) -> Result<()> {
    let mut cursor = root.walk();
    let mut depth = 0;
    loop {
        if depth > max {
            return Err(err_at(
                src,
                cursor.node(),
                format!("nesting deeper than {max} levels (expressions, parentheses or blocks): split the expression or the block"),
            ));
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            depth -= 1;
        }
    }
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

/// A byte range of the preprocessed text.
type Span = (usize, usize);

/// Byte ranges of matching `#pragma scop` / `#pragma endscop` lines.
fn pragma_pairs(src: &Source) -> Result<Vec<(Span, Span)>> {
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
    /// The syntax tree's root (a node's parent costs a walk down from it in
    /// tree-sitter, so nothing climbs up to it).
    root: Node<'s>,
    /// At file scope, names nobody declares are inferred as clan does:
    /// integer parameters in affine expressions, arrays when subscripted,
    /// `double` scalars otherwise.
    fragment: bool,
    purity: &'s purity::Verdicts,
    structs: &'s HashMap<String, HashMap<String, Decl>>,
    /// Names in scope at the region (file scope, parameters, enclosing
    /// blocks), which a declaration inside it must not shadow.
    outer_names: HashSet<String>,
    /// Block-scope declarations inside the region.
    locals: HashMap<String, Decl>,
    decls: HashMap<String, Decl>,
    written: HashSet<String>,
    iterators: HashSet<String>,
    loops: Vec<Loop>,
    conds: Vec<String>,
    params: Vec<String>,
    /// Literals modelled as parameters, and those parameters' values.
    lifted: lift::Lifted,
    constants: Vec<(String, i64)>,
    arrays: Vec<Array>,
    statements: Vec<Statement>,
    /// What the model leaves out and why (statements that never run).
    notes: Vec<String>,
    /// Conditions on the parameters the model assumes (isl sets) and why
    /// (`Scop::assumed`).
    assumptions: Vec<(String, String)>,
    /// The functions of this file the statements call (pure or inlined).
    file_calls: BTreeSet<String>,
    /// The declared extents of each array the statements reference, as
    /// isl expressions (`None` where unknown).
    extents: HashMap<String, Vec<Option<String>>>,
    /// What each loop iterator holds where no loop binds it (pet's exit
    /// values); a name absent has not been assigned by a loop yet.
    exits: HashMap<String, exits::Exit>,
    /// Spellings that replace byte ranges of the source in the statements'
    /// and references' text: an iterator read after its loop becomes its
    /// exit value, `&A[i][j]` passed to a function `A[i] + (j)`.
    rewrites: HashMap<Span, String>,
    /// Numbers the exit values, so that two states of `exits` compare.
    exit_count: usize,
    /// The enclosing branches on data (`if (m[i] > 0)`), outermost first,
    /// each with whether the statement is in its `else`.
    guards: Vec<(Node<'s>, bool)>,
}

fn extract_one<'s>(
    src: &'s Source,
    root: Node<'s>,
    unit: &'s Unit,
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
    walk_region(src, unit, root, region, pragma)
}

/// A SCoP at file scope, read as the body of the function its pragma lines
/// became (see `FRAGMENT_HEAD`).
fn extract_fragment<'s>(
    src: &'s Source,
    root: Node<'s>,
    unit: &'s Unit,
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
    walk_region(src, unit, root, region, function)
}

/// What the whole translation unit says: its file-scope declarations and
/// which of its functions are pure.
struct Unit {
    globals: HashMap<String, Decl>,
    purity: purity::Verdicts,
    /// The fields of each struct type, by the name declarations use.
    structs: HashMap<String, HashMap<String, Decl>>,
}

impl Unit {
    fn of(src: &Source, root: Node) -> Unit {
        let globals = collect_decls(src, root, false);
        let purity = purity::verdicts(src, root, &globals);
        let structs = decls::struct_fields(src, root);
        Unit { globals, purity, structs }
    }
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

fn walk_region<'s>(
    src: &'s Source,
    unit: &'s Unit,
    root: Node<'s>,
    region: Region,
    pragma: Node,
) -> Result<Scop> {
    let Region { function, name: fname, body, start, span, fragment } = region;
    let mut decls = unit.globals.clone();
    let locals = collect_decls(src, function, true);
    decls.extend(locals.clone());
    let mut outer_names: HashSet<String> = unit.globals.keys().cloned().collect();
    outer_names.extend(decls::names_in_scope(src, function, span.0));
    let mut walk = Walk {
        src,
        root,
        purity: &unit.purity,
        structs: &unit.structs,
        outer_names,
        locals: HashMap::new(),
        fragment,
        decls,
        written: HashSet::new(),
        iterators: HashSet::new(),
        loops: Vec::new(),
        conds: Vec::new(),
        params: Vec::new(),
        lifted: lift::lifted_literals(&src.parse_text, &body),
        constants: Vec::new(),
        arrays: Vec::new(),
        statements: Vec::new(),
        notes: Vec::new(),
        assumptions: Vec::new(),
        file_calls: BTreeSet::new(),
        extents: HashMap::new(),
        exits: HashMap::new(),
        rewrites: HashMap::new(),
        exit_count: 0,
        guards: Vec::new(),
    };
    for n in &body {
        walk.prescan(*n);
    }
    let mut tree = Vec::new();
    for n in &body {
        walk.statement(*n, &mut tree)?;
    }
    if walk.statements.is_empty() && !walk.notes.is_empty() {
        return Err(err_at(
            src,
            pragma,
            format!("no statement of the SCoP ever runs:\n  {}", walk.notes.join("\n  ")),
        ));
    }
    if walk.statements.is_empty() {
        return Err(err_at(src, pragma, "the SCoP holds no statement"));
    }
    let exit_values = match fragment {
        true => Vec::new(),
        false => walk.exit_values(pragma, function, span)?,
    };
    let calls = std::mem::take(&mut walk.file_calls).into_iter().collect();
    let mut scop = walk.finish(fname, start, span, &tree)?;
    scop.exit_values = exit_values;
    scop.calls = calls;
    if !fragment {
        scop.function_span = (function.start_byte(), function.end_byte());
        scop.unmodelled = unmodelled(&src.parse_text[span.0..span.1], &locals, &scop);
    }
    Ok(scop)
}

/// The declarations, without initialisers, of the function's variables
/// (`locals`) that `text` (the SCoP's) names and `scop` does not model.
fn unmodelled(text: &str, locals: &HashMap<String, decls::Decl>, scop: &Scop) -> Vec<String> {
    let known = |w: &str| {
        scop.params.iter().any(|p| p == w)
            || scop.arrays.iter().any(|a| a.name.split('.').next() == Some(w))
            || scop.statements.iter().any(|s| s.c_iterators.iter().any(|i| i == w))
            || scop.exit_values.iter().any(|e| e.variable == w)
    };
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let Some(d) = locals.get(w).filter(|_| !known(w) && seen.insert(w)) else { continue };
        // A pointer first (`double *p`, `double (*a)[m]`), then rows of stated extents.
        let mut declarator = match d.extents.first() {
            Some(None) if d.extents.len() > 1 => format!("(*{w})"),
            Some(None) => format!("*{w}"),
            Some(Some(e)) => format!("{w}[{e}]"),
            None => w.to_string(),
        };
        for e in d.extents.iter().skip(1) {
            declarator.push_str(&format!("[{}]", e.as_deref().unwrap_or("1")));
        }
        out.push(format!("{} {declarator}", d.ty));
    }
    out
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

/// Whether a node of one of `kinds` stands anywhere in `node`.
fn holds(node: Node, kinds: &[&str]) -> bool {
    if kinds.contains(&node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).any(|c| holds(c, kinds));
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
