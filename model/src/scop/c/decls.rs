//! What the declarations in scope say about each name: type, extents, integer or not.

use super::*;

/// What a declaration says about a name.
#[derive(Debug, Clone)]
pub(super) struct Decl {
    pub(super) ty: String,
    pub(super) extents: Vec<Option<String>>,
    /// Where each stated extent stands in the parser's text (a byte range),
    /// so that the walk can read it as an affine expression.
    pub(super) sizes: Vec<Option<(usize, usize)>>,
    pub(super) integer: bool,
}

/// Declarations directly under `scope` (a translation unit or a function).
/// With `deep`, also those nested in blocks and `for` initialisers.
pub(super) fn collect_decls(src: &Source, scope: Node, deep: bool) -> HashMap<String, Decl> {
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

pub(super) fn add_decl(src: &Source, decl: Node, out: &mut HashMap<String, Decl>) {
    let Some(ty_node) = decl.child_by_field_name("type") else {
        return;
    };
    let ty = type_key(src, ty_node);
    let integer_type = is_integer_type(&ty);
    let mut cursor = decl.walk();
    for d in decl.children_by_field_name("declarator", &mut cursor) {
        let (mut extents, mut sizes) = (Vec::new(), Vec::new());
        let mut node = d;
        let name = loop {
            match node.kind() {
                "identifier" | "field_identifier" => break Some(node_text(src, node).to_string()),
                "init_declarator" | "attributed_declarator" => {
                    node =
                        node.child_by_field_name("declarator").unwrap_or(node.named_child(0).unwrap_or(node));
                }
                "array_declarator" => {
                    let size = node.child_by_field_name("size");
                    extents.push(size.map(|s| node_text(src, s).to_string()));
                    sizes.push(size.map(|s| (s.start_byte(), s.end_byte())));
                    match node.child_by_field_name("declarator") {
                        Some(n) => node = n,
                        None => break None,
                    }
                }
                "pointer_declarator" => {
                    extents.push(None);
                    sizes.push(None);
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
            sizes.reverse();
            let integer = integer_type && extents.is_empty();
            out.insert(name, Decl { ty: ty.clone(), extents, sizes, integer });
        }
    }
}

pub(super) fn is_integer_type(ty: &str) -> bool {
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

/// Whether values of the integer type `ty` are unsigned after integer
/// promotion: `unsigned char` and `unsigned short` promote to `int`.
pub(super) fn is_unsigned_type(ty: &str) -> bool {
    let words: Vec<&str> = ty.split_whitespace().collect();
    let promoted = words.iter().any(|w| matches!(*w, "char" | "short"));
    let unsigned = words.iter().any(|w| matches!(*w, "unsigned" | "size_t" | "uint32_t" | "uint64_t"));
    unsigned && !promoted
}

/// The names in scope where the region starting at byte `start` of
/// `function` stands: the function's parameters and the declarations that
/// precede the region in the blocks around it.
pub(super) fn names_in_scope(src: &Source, function: Node, start: usize) -> HashSet<String> {
    let mut out = HashSet::new();
    if let Some(list) =
        function.child_by_field_name("declarator").and_then(|d| find_kind(d, "parameter_list"))
    {
        out.extend(collect_decls(src, list, false).into_keys());
    }
    let mut node = function.descendant_for_byte_range(start, start);
    while let Some(n) = node {
        if n.kind() == "compound_statement" {
            let mut cursor = n.walk();
            for d in
                n.named_children(&mut cursor).filter(|d| d.kind() == "declaration" && d.end_byte() <= start)
            {
                let mut one = HashMap::new();
                add_decl(src, d, &mut one);
                out.extend(one.into_keys());
            }
        }
        if n.id() == function.id() {
            break;
        }
        node = n.parent();
    }
    out
}

/// How a type is named for look-ups: `struct tag` for a tagged struct, even
/// where the declaration defines it; the text otherwise.
fn type_key(src: &Source, ty: Node) -> String {
    match ty.child_by_field_name("name").filter(|_| ty.kind() == "struct_specifier") {
        Some(tag) => format!("struct {}", node_text(src, tag)),
        None => node_text(src, ty).split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The fields of every struct type of the file, by [`type_key`] (and by
/// typedef name): each field is what a declaration of it says.
pub(super) fn struct_fields(src: &Source, root: Node) -> HashMap<String, HashMap<String, Decl>> {
    let mut out = HashMap::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "struct_specifier" {
            if let Some(body) = node.child_by_field_name("body") {
                let mut fields = HashMap::new();
                let mut cursor = body.walk();
                for f in body.named_children(&mut cursor).filter(|f| f.kind() == "field_declaration") {
                    add_decl(src, f, &mut fields);
                }
                if node.parent().is_some_and(|p| p.kind() == "type_definition") {
                    let p = node.parent().unwrap();
                    let mut cursor = p.walk();
                    for d in p.children_by_field_name("declarator", &mut cursor) {
                        out.insert(node_text(src, d).to_string(), fields.clone());
                    }
                }
                out.insert(type_key(src, node), fields);
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out
}
