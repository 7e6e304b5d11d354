//! Whether a program takes input from outside: polytune runs the original
//! and every variant with no arguments, an empty stdin and a scratch working
//! directory, so a program must compute from data it makes itself. Only the
//! user's file is read (headers are blanked in the parser's view).

use tree_sitter::Node;

use super::{check_depth, node_text, parse};
use crate::scop::{ScopError, Source};

/// Library calls that read a stream or a file.
const READERS: &[&str] = &[
    "scanf", "fscanf", "vscanf", "vfscanf", "fread", "fgets", "gets", "getc", "fgetc", "getchar", "getline",
    "getdelim", "read", "pread", "mmap", "freopen",
];

/// The first place where the program reads an argument past `argv[0]` or an
/// input stream or file; `Ok(())` when there is none.
pub(in crate::scop) fn check(src: &Source, max_depth: usize) -> Result<(), ScopError> {
    let tree = parse(src, &src.parse_text)?;
    check_depth(src, tree.root_node(), max_depth)?;
    match first_input(src, tree.root_node()) {
        Some((node, what)) => Err(ScopError::new(
            &src.path,
            src.location(node.start_byte()),
            format!(
                "the program {what}; polytune runs it with no arguments, an empty standard input and a scratch working directory, so it must make its own data (sizes as `-D` defines, arrays initialised in the program)"
            ),
        )),
        None => Ok(()),
    }
}

fn first_input<'t>(src: &Source, node: Node<'t>) -> Option<(Node<'t>, String)> {
    match node.kind() {
        // `argv[0]` (PolyBench's guard against dead-code elimination) names
        // the program and `(void)argv` discards it; any other use of `argv`
        // reads an argument.
        "identifier" if node_text(src, node) == "argv" => {
            let parent = node.parent()?;
            let declared =
                matches!(parent.kind(), "pointer_declarator" | "array_declarator" | "parameter_declaration");
            let program_name = parent.kind() == "subscript_expression"
                && parent.child_by_field_name("index").is_some_and(|i| node_text(src, i).trim() == "0");
            let discarded = parent.kind() == "cast_expression"
                && parent.child_by_field_name("type").is_some_and(|t| node_text(src, t).trim() == "void");
            if !declared && !program_name && !discarded {
                return Some((parent, format!("reads its arguments (`{}`)", node_text(src, parent).trim())));
            }
        }
        "call_expression" => {
            let f = node.child_by_field_name("function").map(|f| node_text(src, f)).unwrap_or("");
            if READERS.contains(&f) {
                return Some((node, format!("reads input with `{f}`")));
            }
            if f == "fopen" || f == "open" {
                let mode = node.child_by_field_name("arguments").and_then(|a| a.named_child(1));
                let mode = mode.map(|m| node_text(src, m)).unwrap_or("");
                let writes_only = mode.contains('w') || mode.contains('a') || mode.contains("O_WRONLY");
                if !writes_only {
                    return Some((
                        node,
                        format!("opens a file to read it (`{}`)", node_text(src, node).trim()),
                    ));
                }
            }
        }
        _ => {}
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
    children.into_iter().find_map(|c| first_input(src, c))
}
