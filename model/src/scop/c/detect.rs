//! Regions found without pragmas (pet's `--autodetect`): in each function
//! body, the longest runs of consecutive statements that the model accepts
//! and that hold a loop. A statement the model refuses splits a run, and
//! the blocks inside it are searched in turn (a `while` around loop nests,
//! a loop whose body calls `printf`).

use tree_sitter::Node;

use super::{check_depth, check_syntax, holds, parse, pragma_pairs, walk_region, Region, Result, Span, Unit};
use crate::scop::{Location, ScopError, Source};

/// What [`regions`] found: the byte spans of the regions (whole lines of
/// the preprocessed text, in file order) and, for each outermost loop the
/// model refused and no region covers, why.
pub(in crate::scop) struct Detected {
    pub spans: Vec<Span>,
    pub refused: Vec<ScopError>,
}

/// Statements a region may begin, end or hold at its top level. Any other
/// (a declaration, `while`, `return`, a label) ends a run: a declaration's
/// name must stay in scope after the region, which generated code replaces.
const RUN_KINDS: &[&str] = &["for_statement", "expression_statement", "if_statement", "compound_statement"];

/// How many candidate runs one file may try (each is a walk of the model):
/// a bound on the time a huge function takes, not a limit real code meets.
const MAX_TRIES: usize = 4096;

pub(in crate::scop) fn regions(src: &Source, max_depth: usize) -> Result<Detected> {
    if let Some((open, _)) = pragma_pairs(src)?.first() {
        return Err(ScopError::new(
            &src.path,
            src.location(open.0),
            "the file marks its regions with `#pragma scop`: read them without --autodetect, or remove the pragmas",
        ));
    }
    let tree = parse(src, &src.parse_text)?;
    let root = tree.root_node();
    check_depth(src, root, max_depth)?;
    check_syntax(src, root)?;
    let unit = Unit::of(src, root);
    let mut search = Search {
        src,
        unit: &unit,
        root,
        found: Detected { spans: Vec::new(), refused: Vec::new() },
        tries: 0,
    };
    let mut cursor = root.walk();
    for function in root.named_children(&mut cursor).filter(|n| n.kind() == "function_definition") {
        if let Some(body) = function.child_by_field_name("body") {
            search.block(function, body);
        }
    }
    Ok(search.found)
}

struct Search<'s> {
    src: &'s Source,
    unit: &'s Unit,
    root: Node<'s>,
    found: Detected,
    tries: usize,
}

impl<'s> Search<'s> {
    /// The regions among `block`'s statements, and inside those no region
    /// covers.
    fn block(&mut self, function: Node<'s>, block: Node<'s>) {
        let mut cursor = block.walk();
        let children: Vec<Node> =
            block.named_children(&mut cursor).filter(|n| n.kind() != "comment").collect();
        let mut i = 0;
        while i < children.len() {
            if !RUN_KINDS.contains(&children[i].kind()) {
                self.inside(function, children[i]);
                i += 1;
                continue;
            }
            let end = (i..children.len())
                .find(|&k| !RUN_KINDS.contains(&children[k].kind()))
                .unwrap_or(children.len());
            i = self.run(function, &children[i..end]) + i;
        }
    }

    /// Covers `run` from its start with the longest accepted region, or
    /// searches inside its first statement; returns how many statements
    /// were dealt with.
    fn run(&mut self, function: Node<'s>, run: &[Node<'s>]) -> usize {
        let mut first_refusal = None;
        for len in (1..=run.len()).rev() {
            let body = &run[..len];
            if !body.iter().any(|n| holds(*n, &["for_statement"])) {
                continue;
            }
            let Some(span) = self.whole_lines(body) else { continue };
            if self.tries >= MAX_TRIES {
                break;
            }
            self.tries += 1;
            match self.accepts(function, body, span) {
                Ok(()) => {
                    self.found.spans.push(span);
                    return len;
                }
                Err(e) if len == 1 => first_refusal = Some(e),
                Err(_) => {}
            }
        }
        let before = self.found.spans.len();
        self.inside(function, run[0]);
        // An outermost loop refused whole, with nothing inside it found: say why.
        if let (Some(e), true) = (first_refusal, self.found.spans.len() == before) {
            if run[0].kind() == "for_statement" {
                self.found.refused.push(e);
            }
        }
        1
    }

    /// The blocks nested in `node` (loop bodies, branches), searched.
    fn inside(&mut self, function: Node<'s>, node: Node<'s>) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "compound_statement" => self.block(function, child),
                k if k.ends_with("_statement") || k == "else_clause" || k == "labeled_statement" => {
                    self.inside(function, child)
                }
                _ => {}
            }
        }
    }

    /// The byte span from the start of `body`'s first line to the end of
    /// its last, where nothing else stands on those lines.
    fn whole_lines(&self, body: &[Node]) -> Option<Span> {
        let text = self.src.parse_text.as_bytes();
        let (start, end) = (body[0].start_byte(), body[body.len() - 1].end_byte());
        let line_start = text[..start].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let line_end = text[end..].iter().position(|&b| b == b'\n').map_or(text.len(), |p| end + p + 1);
        let blank = |s: &[u8]| s.iter().all(u8::is_ascii_whitespace);
        (blank(&text[line_start..start]) && blank(&text[end..line_end])).then_some((line_start, line_end))
    }

    fn accepts(&self, function: Node<'s>, body: &[Node<'s>], span: Span) -> Result<()> {
        let name = function
            .child_by_field_name("declarator")
            .and_then(|d| super::find_kind(d, "identifier"))
            .map(|n| super::node_text(self.src, n).to_string())
            .unwrap_or_default();
        let start = self.src.location(span.0).unwrap_or(Location { line: 0, column: 0 });
        let region = Region { function, name, body: body.to_vec(), start, span, fragment: false };
        walk_region(self.src, self.unit, self.root, region, body[0]).map(|_| ())
    }
}
