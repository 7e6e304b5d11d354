//! A generated program as C text.

use std::fmt::Write as _;

use super::*;

pub(super) fn var(v: usize) -> &'static str {
    if v >= PARAM {
        PARAMS[v - PARAM]
    } else {
        ITERS[v]
    }
}

/// `2 * i - j + 5`; with negative literals allowed, sometimes `i * -2` or `+ -5`.
///
/// Without negative literals, no `-` is followed by a digit unless it is a
/// subtraction: a positive term goes first, else `-(4 * i)`, `-(3)`.
pub(super) fn print_aff(a: &Aff, neg: bool, rng: &mut Rng) -> String {
    let mut out = String::new();
    let mut terms = a.terms.clone();
    if !neg {
        if let Some(p) = terms.iter().position(|t| t.0 > 0) {
            let t = terms.remove(p);
            terms.insert(0, t);
        }
    }
    for (c, v) in &terms {
        if !neg && out.is_empty() && *c < -1 {
            let _ = write!(out, "-({} * {})", -c, var(*v));
            continue;
        }
        let first = out.is_empty();
        let name = var(*v);
        if neg && *c < 0 && rng.pct(40) {
            let sep = if first { "" } else { " + " };
            let _ = write!(out, "{sep}{name} * {c}");
            continue;
        }
        let (sign, m) = if *c < 0 { ("-", -c) } else { ("+", *c) };
        let sep = match (first, sign) {
            (true, "-") => "-".to_string(),
            (true, _) => String::new(),
            (false, s) => format!(" {s} "),
        };
        if m == 1 {
            let _ = write!(out, "{sep}{name}");
        } else {
            let _ = write!(out, "{sep}{m} * {name}");
        }
    }
    if out.is_empty() {
        return match (neg, a.c < 0) {
            (false, true) => format!("-({})", -a.c),
            (true, true) if rng.pct(50) => format!("({})", a.c),
            _ => a.c.to_string(),
        };
    }
    if a.c != 0 {
        if neg && a.c < 0 && rng.pct(40) {
            let _ = write!(out, " + {}", a.c);
        } else if a.c < 0 {
            let _ = write!(out, " - {}", -a.c);
        } else {
            let _ = write!(out, " + {}", a.c);
        }
    }
    out
}

pub(super) fn print_iexpr(e: &IExpr, neg: bool, rng: &mut Rng) -> String {
    match e {
        IExpr::Aff(a) => print_aff(a, neg, rng),
        IExpr::Mod(a, k) => format!("({}) % {k}", print_aff(a, neg, rng)),
        IExpr::Div(a, k) => format!("({}) / {k}", print_aff(a, neg, rng)),
    }
}

pub(super) fn print_ref(g: &Gen, r: &Ref, rng: &mut Rng) -> String {
    match r {
        Ref::Scalar(s) => s.clone(),
        Ref::Elem(a, subs) => {
            let mut out = g.arrays[*a].name.clone();
            for (d, s) in subs.iter().enumerate() {
                let sub = print_iexpr(s, g.opts.negative_literals, rng);
                // Read through `I`, chosen from the reference's own text so
                // that the generator's stream (and every other choice) stays.
                let own = format!("{out}[{sub}]")
                    .bytes()
                    .fold(d as u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                match g.opts.indirect_subscripts && own % 7 == 0 {
                    true => write!(out, "[I[{sub}] % {}]", g.extents[*a][d]),
                    false => write!(out, "[{sub}]"),
                }
                .expect("writing to a String");
            }
            out
        }
    }
}

pub(super) fn print_nodes(g: &Gen, nodes: &[Node], indent: usize, out: &mut String, rng: &mut Rng) {
    let pad = "  ".repeat(indent);
    let neg = g.opts.negative_literals;
    for node in nodes {
        match node {
            Node::Loop { depth, lower, uppers, down, step, body } => {
                let v = ITERS[*depth];
                let lo = print_iexpr(lower, neg, rng);
                if *down {
                    let hi = print_iexpr(&uppers[0].0, neg, rng);
                    let _ = write!(out, "{pad}for (int {v} = {hi}; {v} >= {lo}; {v}--)");
                } else {
                    let conds: Vec<String> = uppers
                        .iter()
                        .map(|(u, strict)| {
                            format!("{v} {} {}", if *strict { "<" } else { "<=" }, print_iexpr(u, neg, rng))
                        })
                        .collect();
                    let step = match (*step, rng.pct(50)) {
                        (1, true) => format!("{v}++"),
                        (1, false) => format!("++{v}"),
                        (s, _) => format!("{v} += {s}"),
                    };
                    let _ = write!(out, "{pad}for (int {v} = {lo}; {}; {step})", conds.join(" && "));
                }
                print_body(g, body, indent, out, rng, false);
            }
            Node::If { atoms, or, body, other } => {
                let parts: Vec<String> = atoms
                    .iter()
                    .map(|a| match a {
                        Atom::Cmp(l, op, r) => {
                            format!("{} {op} {}", print_iexpr(l, neg, rng), print_iexpr(r, neg, rng))
                        }
                        Atom::ModEq(a, k, r) => format!("({}) % {k} == {r}", print_aff(a, neg, rng)),
                    })
                    .collect();
                let joined = parts.join(if *or { " || " } else { " && " });
                let _ = write!(out, "{pad}if ({joined})");
                // Braces before an `else`, which would bind to an inner `if`.
                print_body(g, body, indent, out, rng, !other.is_empty());
                if !other.is_empty() {
                    let _ = write!(out, "{pad}else");
                    print_body(g, other, indent, out, rng, false);
                }
            }
            Node::Stmt(s) => {
                let mut rhs = s.rhs.clone();
                let mut reads = Vec::new();
                for (n, r) in s.reads.iter().enumerate() {
                    reads.push(print_ref(g, r, rng));
                    rhs = rhs.replace(&format!("@{n}@"), &reads[n]);
                }
                // A branch on data, chosen from the statement's own text so
                // that the generator's stream (and every other choice) stays.
                let own =
                    rhs.bytes().fold(s.reads.len() as u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                let guard = match reads.first() {
                    Some(r) if g.opts.data_branches && own % 4 == 0 => format!("if ({r} > 0.5) "),
                    _ => String::new(),
                };
                let _ = writeln!(out, "{pad}{guard}{} {} {rhs};", print_ref(g, &s.lhs, rng), s.op);
            }
        }
    }
}

pub(super) fn print_body(
    g: &Gen,
    body: &[Node],
    indent: usize,
    out: &mut String,
    rng: &mut Rng,
    braces: bool,
) {
    if body.len() == 1 && !braces && rng.pct(50) {
        out.push('\n');
        print_nodes(g, body, indent + 1, out, rng);
    } else {
        out.push_str(" {\n");
        print_nodes(g, body, indent + 1, out, rng);
        let _ = writeln!(out, "{}}}", "  ".repeat(indent));
    }
}

pub(super) fn print_program(g: &Gen, seed: u64, top: &[Node], used: &[bool]) -> String {
    let extents = &g.extents;
    // Printing choices (spellings) come from a stream of their own, so that
    // they do not change what the program is.
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 1);
    let mut out = String::from("#include <stdio.h>\n\n");
    let _ = writeln!(out, "#define N {}\n#define M {}\n", g.params[0], g.params[1]);
    for (a, array) in g.arrays.iter().enumerate() {
        if !used[a] {
            continue;
        }
        let ty = if array.ty == Ty::Double { "double" } else { "int" };
        let dims: String = extents[a].iter().map(|e| format!("[{e}]")).collect();
        let _ = writeln!(out, "{ty} {}{dims};", array.name);
    }
    // The index array of indirect subscripts: as long as any extent, so
    // that `I[e]` is in bounds wherever `e` is a subscript.
    let index = extents.iter().flatten().copied().max().unwrap_or(1);
    if g.opts.indirect_subscripts {
        let _ = writeln!(out, "int I[{index}];");
    }
    out.push_str("double scalars[2];\n\nstatic void kernel(int n, int m, double alpha)\n{\n");
    for (i, s) in g.scalars.iter().enumerate() {
        let _ = writeln!(out, "  double {s} = {}.25;", i + 1);
    }
    out.push_str("#pragma scop\n");
    print_nodes(g, top, 1, &mut out, &mut rng);
    out.push_str("#pragma endscop\n");
    for (i, s) in g.scalars.iter().enumerate() {
        let _ = writeln!(out, "  scalars[{i}] = {s};");
    }
    out.push_str("}\n\nint main(void)\n{\n");
    for (a, array) in g.arrays.iter().enumerate() {
        if !used[a] {
            continue;
        }
        let idx: Vec<&str> = ["x", "y", "z"][..array.rank].to_vec();
        let mut line = String::from("  ");
        for (d, v) in idx.iter().enumerate() {
            let _ = write!(line, "for (int {v} = 0; {v} < {}; {v}++) ", extents[a][d]);
        }
        let mix: Vec<String> =
            idx.iter().enumerate().map(|(d, v)| format!("{} * {v}", [7, 13, 5][d])).collect();
        let sel: String = idx.iter().map(|v| format!("[{v}]")).collect();
        let value = match array.ty {
            Ty::Double => format!("(double)(({} + {a}) % 17) / 17.0 + 0.1", mix.join(" + ")),
            Ty::Int => format!("({} + {a}) % 1009", mix.join(" + ")),
        };
        let _ = writeln!(out, "{line}{}{sel} = {value};", array.name);
    }
    if g.opts.indirect_subscripts {
        let _ = writeln!(out, "  for (int x = 0; x < {index}; x++) I[x] = (7 * x + 3) % 1009;");
    }
    out.push_str("  kernel(N, M, 0.75);\n  double sum = scalars[0] + scalars[1];\n");
    for (a, array) in g.arrays.iter().enumerate() {
        if !used[a] || !array.written {
            continue;
        }
        let idx: Vec<&str> = ["x", "y", "z"][..array.rank].to_vec();
        let mut line = String::from("  ");
        for (d, v) in idx.iter().enumerate() {
            let _ = write!(line, "for (int {v} = 0; {v} < {}; {v}++) ", extents[a][d]);
        }
        let sel: String = idx.iter().map(|v| format!("[{v}]")).collect();
        let _ = writeln!(out, "{line}sum += {}{sel};", array.name);
    }
    out.push_str("  printf(\"%.17g\\n\", sum);\n  return 0;\n}\n");
    out
}
