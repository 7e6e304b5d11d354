//! The text of statements, where the model's rewrites and the code
//! generator meet it: the uses of an array in a statement's C expression,
//! the scalar that multiplies a use first, which a copy of the array
//! can hold its elements multiplied by (a transposed copy, a packed tile,
//! a GPU tile in shared memory), and a statement's assignment and the
//! sum of products it adds, which a micro tile may reassociate.

use super::{Array, Scop};

/// `text` without white space: how references are compared.
pub fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// One use of an array in a statement's text, subscripted in full: where
/// it starts and ends, and where each subscript's text lies (inside its
/// brackets).
pub struct Use {
    pub start: usize,
    pub end: usize,
    pub subscripts: Vec<std::ops::Range<usize>>,
}

/// The uses of `array` in `body` (not a struct's member of that name);
/// `None` where one is not subscripted in full (`rank` subscripts, no
/// more).
pub fn uses(body: &str, array: &str, rank: usize) -> Option<Vec<Use>> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !(c.is_ascii_alphanumeric() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        i = word_end(bytes, i);
        let before = body[..start].trim_end();
        if c.is_ascii_digit() || &body[start..i] != array || before.ends_with('.') || before.ends_with("->") {
            continue;
        }
        let mut subscripts = Vec::new();
        for _ in 0..rank {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes.get(j) != Some(&b'[') {
                return None;
            }
            let mut level = 0usize;
            let mut k = j;
            loop {
                match bytes.get(k)? {
                    b'[' => level += 1,
                    b']' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            subscripts.push(j + 1..k);
            i = k + 1;
        }
        // A further subscript would index past the array's rank.
        if body[i..].trim_start().starts_with('[') {
            return None;
        }
        out.push(Use { start, end: i, subscripts });
    }
    Some(out)
}

/// Where the word (an identifier or a number) starting at `i` of a C
/// text ends. Numbers (1e5, 0x1f, 2.0f) are consumed whole so that their
/// letters never look like identifiers.
pub fn word_end(bytes: &[u8], mut i: usize) -> usize {
    let number = bytes[i].is_ascii_digit();
    while i < bytes.len()
        && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || (number && bytes[i] == b'.'))
    {
        i += 1;
    }
    i
}

/// Where every use in `uses` (a statement, its body and its references
/// of one group of `array`) is multiplied first by the same scalar that
/// the code around does not write (`written`, see [`factor_out`]): each
/// body without it, in order, and the scalar. A copy that holds the
/// products serves the statements with the values they computed.
pub fn fold<T>(
    scop: &Scop,
    array: &Array,
    written: &[String],
    uses: &[(T, String, Vec<String>)],
) -> Option<(Vec<String>, String)> {
    let scalars = scalars(scop, array, written);
    let folded: Vec<(String, String)> = uses
        .iter()
        .map(|(_, body, refs)| factor_out(body, &array.name, array.rank(), refs, &scalars))
        .collect::<Option<_>>()?;
    let factor = folded.first()?.1.clone();
    folded.iter().all(|(_, f)| *f == factor).then(|| (folded.into_iter().map(|(b, _)| b).collect(), factor))
}

/// The scalars a copy of `array` can hold its elements multiplied by: not
/// written by the band's statements (`written`), so the same at the copy
/// and at every use, and of `array`'s element type, so that the product
/// is computed and rounded in that type either way.
pub fn scalars<'s>(scop: &'s Scop, array: &Array, written: &[String]) -> Vec<&'s str> {
    scop.arrays
        .iter()
        .filter(|a| a.rank() == 0 && !a.is_struct_member() && !written.contains(&a.name))
        .filter(|a| a.element_type.trim() == array.element_type.trim())
        .map(|a| a.name.as_str())
        .collect()
}

/// `body` with each use of `array` among `refs` freed of the scalar that
/// multiplies it first (gemm's `alpha * A[i][k] * B[k][j]`, which C reads
/// `(alpha * A[i][k]) * B[k][j]`; syr2k's `A[j][k] * alpha * B[i][k]`),
/// and that scalar, one of `scalars`; `None` where a use has none, or not
/// the same. A copy that holds the products then serves the uses with the
/// same values, rounded once as the statements rounded them
/// (multiplication commutes exactly), and a micro tile broadcasts them
/// from memory instead of multiplying every row's operand at every step.
fn factor_out(
    body: &str,
    array: &str,
    rank: usize,
    refs: &[String],
    scalars: &[&str],
) -> Option<(String, String)> {
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    let mut factor: Option<&str> = None;
    for u in uses(body, array, rank)? {
        if !refs.contains(&squeeze(&body[u.start..u.end])) {
            continue;
        }
        let (span, f) = scaled(body, u.start, u.end)?;
        if !scalars.contains(&f) || factor.is_some_and(|g| g != f) {
            return None;
        }
        factor = Some(f);
        out.push_str(&body[at..span.start]);
        out.push_str(&body[u.start..u.end]);
        at = span.end;
    }
    out.push_str(&body[at..]);
    Some((out, factor?.to_string()))
}

/// The product `f * REF` or `REF * f` around the operand `body[start..end]`
/// where it is a subexpression of its own (nothing multiplies or divides
/// it from the left; `f` a plain name): its span and `f`.
fn scaled(body: &str, start: usize, end: usize) -> Option<(std::ops::Range<usize>, &str)> {
    let before = body[..start].trim_end();
    if let Some(rest) = before.strip_suffix('*') {
        let rest = rest.trim_end();
        let f_start =
            rest.len() - rest.bytes().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
        let f = &rest[f_start..];
        let plain = f.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
        return (plain && operand_starts(&rest[..f_start])).then_some((f_start..end, f));
    }
    if !operand_starts(before) {
        return None;
    }
    let after = &body[end..];
    let rest = after.trim_start().strip_prefix('*')?;
    if rest.starts_with('=') {
        return None;
    }
    let f_start = body.len() - rest.trim_start().len();
    let f_end =
        f_start + body[f_start..].bytes().take_while(|c| c.is_ascii_alphanumeric() || *c == b'_').count();
    let f = &body[f_start..f_end];
    let next = body[f_end..].trim_start();
    let whole = !["[", "(", ".", "->", "++", "--"].iter().any(|t| next.starts_with(t));
    let plain = f.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
    (plain && whole).then_some((start..f_end, f))
}

/// Whether an operand that follows `before` begins a
/// subexpression: after an opening bracket, an assignment, a comparison,
/// a comma, a conditional's `?` or `:`, or an addition's sign, not after
/// an operator that binds tighter than a product (`*`, `/`, `%`, a cast).
fn operand_starts(before: &str) -> bool {
    let before = before.trim_end();
    let b = before.as_bytes();
    match b.last() {
        None => true,
        Some(b'+') | Some(b'-') => b.len() < 2 || b[b.len() - 2] != b[b.len() - 1],
        Some(c) => b"([=,?:<>".contains(c) && !before.ends_with("->"),
    }
}
/// An accumulation `TARGET += t1 + t2 - t3 ...` whose terms are products
/// (nothing but `*` between the factors of a term at its top level): what
/// reassociation rewrites (`reassociate`, a micro tile's accumulators).
#[derive(Debug, PartialEq)]
pub struct Accumulation<'b> {
    /// The element added to, trimmed.
    pub target: &'b str,
    /// Each term: whether it is subtracted, and its factors, trimmed.
    pub terms: Vec<(bool, Vec<&'b str>)>,
}

/// `body` read as an assignment at its top level: the assigned text, the
/// operator before `=` (`""` for a plain one, `"+"` for `+=`, ...) and the
/// value, each trimmed; `None` where there is no assignment or the value
/// assigns or increments something itself.
pub fn assignment(body: &str) -> Option<(&str, &str, &str)> {
    let bytes = body.as_bytes();
    let mut depth = 0usize;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b'=' if depth == 0 => {
                let op = body[..i].bytes().rev().take_while(|b| b"+-*/%&|^<>!=".contains(b)).count();
                let (target, op) = body[..i].split_at(i - op);
                let value = &body[i + 1..];
                let nested = value.contains('=') || value.contains("++") || value.contains("--");
                let plain = ["", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"].contains(&op);
                return (plain && !nested && !value.starts_with('='))
                    .then(|| (target.trim(), op, value.trim()));
            }
            _ => {}
        }
    }
    None
}

/// `body` read as an [`Accumulation`]; `None` where it is not one: another
/// assignment, an increment, a quotient, a comparison, a conditional or a
/// comma at the top level of the sum, or an assignment anywhere in it.
pub fn accumulation(body: &str) -> Option<Accumulation<'_>> {
    let (target, op, sum) = assignment(body)?;
    if target.is_empty() || op != "+" {
        return None;
    }
    let bytes = sum.as_bytes();
    let mut terms: Vec<(bool, Vec<&str>)> = Vec::new();
    let (mut negative, mut factors, mut start) = (false, Vec::new(), 0);
    // Whether the text so far ends an operand (so that `+` or `-` adds).
    let mut operand = false;
    // Where the open top-level bracket began, and whether it calls.
    let (mut depth, mut open, mut call) = (0usize, 0, false);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let end = word_end(bytes, i);
            // `1e-5`: the exponent's sign is not an addition.
            if c.is_ascii_digit() && matches!(bytes[end - 1], b'e' | b'E') {
                return None;
            }
            if depth == 0 {
                operand = true;
            }
            i = end;
            continue;
        }
        match c {
            b'(' | b'[' => {
                if depth == 0 {
                    (open, call) = (i, operand);
                }
                depth += 1;
            }
            b')' | b']' => {
                depth = depth.checked_sub(1)?;
                // `(double)`: a cast, whose operand's sign would read as
                // an addition.
                let inner = &sum[open + 1..i];
                let cast = inner.bytes().all(|b| b.is_ascii_alphanumeric() || b" _*".contains(&b));
                if depth == 0 && c == b')' && !call && cast {
                    return None;
                }
                operand = true;
            }
            _ if depth > 0 => {}
            b' ' | b'\t' | b'\n' => {}
            b'-' if bytes.get(i + 1) == Some(&b'>') => (i, operand) = (i + 1, false),
            b'+' | b'-' if operand => {
                factors.push(sum[start..i].trim());
                terms.push((negative, std::mem::take(&mut factors)));
                (negative, start, operand) = (c == b'-', i + 1, false);
            }
            // A sign: `a * -b` subtracts `a * b`.
            b'-' if sum[start..i].trim().is_empty() => (negative, start) = (!negative, i + 1),
            b'+' if sum[start..i].trim().is_empty() => start = i + 1,
            b'*' => {
                factors.push(sum[start..i].trim());
                (start, operand) = (i + 1, false);
            }
            b'.' => operand = false,
            _ => return None,
        }
        i += 1;
    }
    if depth != 0 {
        return None;
    }
    factors.push(sum[start..].trim());
    terms.push((negative, factors));
    let whole = terms.iter().all(|(_, f)| f.iter().all(|f| !f.is_empty()));
    whole.then_some(Accumulation { target, terms })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor(body: &str, array: &str, refs: &[&str]) -> Option<(String, String)> {
        let refs: Vec<String> = refs.iter().map(|r| squeeze(r)).collect();
        factor_out(body, array, 2, &refs, &["alpha", "beta"])
    }

    #[test]
    fn a_scalar_that_multiplies_a_use_first_is_factored_out() {
        let gemm = "C[(i)][(j)] += alpha * A[(i)][(k)] * B[(k)][(j)]";
        let out = Some(("C[(i)][(j)] += A[(i)][(k)] * B[(k)][(j)]".to_string(), "alpha".to_string()));
        assert_eq!(factor(gemm, "A", &["A[(i)][(k)]"]), out);
        // `(C * alpha) * A`: `alpha` multiplies `C`, not `A`.
        assert_eq!(factor("x = C[(i)][(k)] * alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        // syr2k: `(A[j][k] * alpha) * B[i][k] + (B[j][k] * alpha) * A[i][k]`.
        let syr2k = "C[(i)][(j)] += A[(j)][(k)]*alpha*B[(i)][(k)] + B[(j)][(k)]*alpha*A[(i)][(k)]";
        let out = "C[(i)][(j)] += A[(j)][(k)]*B[(i)][(k)] + B[(j)][(k)]*alpha*A[(i)][(k)]";
        assert_eq!(factor(syr2k, "A", &["A[(j)][(k)]"]).map(|f| f.0), Some(out.to_string()));
        assert_eq!(factor(syr2k, "A", &["A[(i)][(k)]"]), None);
        assert_eq!(
            factor("x = y - alpha*A[(i)][(k)]", "A", &["A[(i)][(k)]"]).map(|f| f.0),
            Some("x = y - A[(i)][(k)]".into())
        );
        // A cast, a quotient, a scalar that is not one, uses that differ.
        assert_eq!(factor("x = (double) alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = y / alpha * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = gamma * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = A[(i)][(k)] * alpha[(i)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = alpha * A[(i)][(k)] + A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x = alpha * A[(i)][(k)] + beta * A[(i)][(k)]", "A", &["A[(i)][(k)]"]), None);
        assert_eq!(factor("x *= A[(i)][(k)] *= alpha", "A", &["A[(i)][(k)]"]), None);
        // Only the uses among `refs` count.
        let two = "x = alpha * A[(i)][(k)] + A[(k)][(i)]";
        assert_eq!(
            factor(two, "A", &["A[(i)][(k)]"]).map(|f| f.0),
            Some("x = A[(i)][(k)] + A[(k)][(i)]".into())
        );
    }

    #[test]
    fn accumulations_are_read_as_sums_of_products() {
        let sum = |b| accumulation(b).map(|a| (a.target, a.terms));
        let gemm = sum("C[(i)][(j)] += alpha * A[(i)][(k)] * B[(k)][(j)]");
        assert_eq!(gemm, Some(("C[(i)][(j)]", vec![(false, vec!["alpha", "A[(i)][(k)]", "B[(k)][(j)]"])])));
        let syr2k = sum("C[i][j] += A[j][k]*alpha*B[i][k] - B[j][k] * alpha*A[i][k]");
        let terms =
            vec![(false, vec!["A[j][k]", "alpha", "B[i][k]"]), (true, vec!["B[j][k]", "alpha", "A[i][k]"])];
        assert_eq!(syr2k, Some(("C[i][j]", terms)));
        // Signs, calls, subscripts with sums, members, numbers.
        let signs = sum("x[i] += -a * -b[i + 1] + f(y - 1, z) * s.m - 2.5 * p->q");
        let terms = vec![
            (false, vec!["a", "b[i + 1]"]),
            (false, vec!["f(y - 1, z)", "s.m"]),
            (true, vec!["2.5", "p->q"]),
        ];
        assert_eq!(signs, Some(("x[i]", terms)));
        assert_eq!(sum("x += (a + b) * c").map(|s| s.1.len()), Some(1));
        // Not accumulations, or not sums of products.
        for body in [
            "C[i][j] = C[i][j] + a * b",
            "C[i][j] -= a * b",
            "C[i][j] *= beta",
            "x += a / b",
            "x += a * b % c",
            "x += a < b",
            "x += a ? b : c",
            "x += y = b",
            "x += y++",
            "x += 1e-5 * a",
            "x += (double) -a",
            "x += (a + b",
            "x += a *",
            "y = x += a",
        ] {
            assert_eq!(sum(body), None, "{body}");
        }
    }
}
