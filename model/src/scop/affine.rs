//! Names and small helpers shared by the C walker: isl spelling of C
//! identifiers and integer constant folding.

/// isl reads these words as keywords, case-insensitively; a C identifier equal
/// to one of them gets a trailing `_` in isl text.
const ISL_KEYWORDS: &[&str] = &[
    "exists", "and", "or", "implies", "not", "infty", "infinity", "nan", "min", "max", "rat", "true",
    "false", "ceild", "floord", "mod", "ceil", "floor",
];

/// The isl spelling of a C identifier.
pub fn isl_name(c_name: &str) -> String {
    if c_name.contains('.') {
        // A struct member `s.f` or `P[].f` (an array of its own).
        return c_name.replace("[]", "_").replace('.', "__");
    }
    if ISL_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(c_name)) {
        format!("{c_name}_")
    } else {
        c_name.to_string()
    }
}

/// A C integer literal (decimal, hex, octal, with u/l suffixes) or `None` if it is
/// not an integer. tree-sitter-c reads a sign before digits as part of the
/// literal (`i * -1`, `A[-1]`), so a leading `-` or `+` is taken too.
pub fn parse_int_literal(text: &str) -> Option<i64> {
    if let Some(rest) = text.strip_prefix('-') {
        return parse_int_literal(rest.trim_start()).and_then(i64::checked_neg);
    }
    if let Some(rest) = text.strip_prefix('+') {
        return parse_int_literal(rest.trim_start());
    }
    let t = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    if t.len() > 1 && t.starts_with('0') && t.chars().all(|c| c.is_ascii_digit()) {
        return i64::from_str_radix(&t[1..], 8).ok();
    }
    if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
        return t.parse().ok();
    }
    None
}

/// Names of the pure math functions a statement may call: they have no side
/// effects and read only their arguments.
pub const PURE_MATH: &[&str] = &[
    "sqrt", "sqrtf", "exp", "expf", "exp2", "log", "logf", "log2", "log10", "pow", "powf", "fabs", "fabsf",
    "abs", "labs", "floor", "floorf", "ceil", "ceilf", "sin", "sinf", "cos", "cosf", "tan", "tanh", "atan",
    "atan2", "fmin", "fmax", "fminf", "fmaxf", "round", "trunc", "cbrt", "hypot", "erf", "fma",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(parse_int_literal("42"), Some(42));
        assert_eq!(parse_int_literal("0x10"), Some(16));
        assert_eq!(parse_int_literal("010"), Some(8));
        assert_eq!(parse_int_literal("7UL"), Some(7));
        assert_eq!(parse_int_literal("-5"), Some(-5));
        assert_eq!(parse_int_literal("+0x10"), Some(16));
        assert_eq!(parse_int_literal("1.0"), None);
        assert_eq!(parse_int_literal("1e3"), None);
    }

    #[test]
    fn keywords_are_renamed() {
        assert_eq!(isl_name("max"), "max_");
        assert_eq!(isl_name("MOD"), "MOD_");
        assert_eq!(isl_name("n"), "n");
        assert_eq!(isl_name("g.u"), "g__u");
    }
}
