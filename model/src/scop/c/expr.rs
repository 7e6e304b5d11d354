//! Affine expressions and conditions of the enclosing iterators and the parameters, in isl syntax.

use super::*;
use crate::scop::affine::{isl_name, parse_int_literal};
use decls::{is_integer_type, is_unsigned_type};

/// An affine expression in isl syntax: its value where it is a constant
/// (folded as C folds it, bottom-up, so that deep expressions cost their
/// size), and whether C computes it unsigned.
struct Affine {
    text: String,
    value: Option<i64>,
    unsigned: bool,
    /// A literal modelled as a size parameter (`lift`): `text` names the
    /// parameter, `value` is the literal's, and it folds with no other
    /// constant (`N - 1` stays `polytune_c6000 - 1`).
    lifted: bool,
}

impl Affine {
    fn constant(c: i64, unsigned: bool) -> Affine {
        let text = if c < 0 { format!("({c})") } else { c.to_string() };
        Affine { text, value: Some(c), unsigned, lifted: false }
    }

    /// The value to fold with: none for a parameter, lifted or not.
    fn folds(&self) -> Option<i64> {
        self.value.filter(|_| !self.lifted)
    }
}

impl Walk<'_> {
    /// An integer constant expression, folded.
    pub(super) fn constant(&self, node: Node) -> Option<i64> {
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
    pub(super) fn affine(&mut self, node: Node) -> Result<String> {
        self.typed(node).map(|a| a.text)
    }

    /// An affine expression used where its value counts (a subscript, a
    /// loop's lower bound): an unsigned one must not have wrapped around.
    pub(super) fn affine_value(&mut self, node: Node) -> Result<String> {
        let a = self.typed(node)?;
        if a.unsigned {
            self.no_wrap(node, &a.text)?;
        }
        Ok(a.text)
    }

    /// An affine expression in isl syntax with whether C computes it in an
    /// unsigned type (modulo 2^w). Sums, differences, negations and
    /// products of an unsigned value are exact modulo 2^w, so they are
    /// checked where their value is used (a subscript, a comparison, a
    /// division, a cast): there it must be non-negative ([`Self::no_wrap`]).
    fn typed(&mut self, node: Node) -> Result<Affine> {
        match node.kind() {
            "number_literal" => self.typed_literal(node),
            "identifier" => {
                let text = self.affine_name(node)?;
                let unsigned =
                    self.decls.get(self.text(node)).is_some_and(|d| d.integer && is_unsigned_type(&d.ty));
                Ok(Affine { text, value: None, unsigned, lifted: false })
            }
            "parenthesized_expression" => {
                let a = self.typed(node.named_child(0).unwrap())?;
                match a.value {
                    Some(_) => Ok(a),
                    None => Ok(Affine { text: format!("({})", a.text), ..a }),
                }
            }
            "unary_expression" => self.typed_unary(node),
            "binary_expression" => self.typed_binary(node),
            "conditional_expression" => match self.min_max(node) {
                Some((f, a, b)) => self.min_max_of(f, a, b),
                None => Err(self.not_affine(
                    node,
                    "a conditional value other than a min or max (it may bound a loop or guard an `if`)",
                )),
            },
            "call_expression" => self.typed_call(node),
            "cast_expression" => self.typed_cast(node),
            "subscript_expression" => {
                Err(self.not_affine(node, "it reads an array, so it is data-dependent"))
            }
            "pointer_expression" => Err(self.not_affine(node, "pointer dereference")),
            _ => Err(self.not_affine(node, &format!("unsupported expression ({})", node.kind()))),
        }
    }

    /// The error for `node`, which is not affine because of `why`.
    fn not_affine(&self, node: Node, why: &str) -> ScopError {
        self.err(node, format!("`{}` is not affine: {why}", self.text(node)))
    }

    /// The constant `c` that `node` folds to, or the error that it overflows
    /// where folding it (as C would) leaves 64 bits.
    fn folded(&self, node: Node, c: Option<i64>, unsigned: bool) -> Result<Affine> {
        match c {
            Some(c) => Ok(Affine::constant(c, unsigned)),
            None => Err(self.err(node, format!("`{}` overflows a 64-bit integer", self.text(node)))),
        }
    }

    /// An integer literal: unsigned by its suffix, and a size parameter
    /// where it is lifted.
    fn typed_literal(&mut self, node: Node) -> Result<Affine> {
        let t = self.text(node);
        match parse_int_literal(t) {
            Some(c) => {
                let suffix = &t[t.trim_end_matches(['u', 'U', 'l', 'L']).len()..];
                let unsigned = suffix.contains(['u', 'U']);
                Ok(match self.lifted_literal(node) {
                    Some(text) => Affine { text, value: Some(c), unsigned, lifted: true },
                    None => Affine::constant(c, unsigned),
                })
            }
            None => Err(self.not_affine(node, "a non-integer constant")),
        }
    }

    /// `-a` or `+a`: the only unary operators that keep a value affine.
    fn typed_unary(&mut self, node: Node) -> Result<Affine> {
        let a = self.typed(node.child_by_field_name("argument").unwrap())?;
        match (self.text(node.child_by_field_name("operator").unwrap()), a.folds()) {
            ("-", Some(c)) => self.folded(node, c.checked_neg(), a.unsigned),
            ("-", None) => {
                Ok(Affine { text: format!("-({})", a.text), value: a.value.and_then(i64::checked_neg), ..a })
            }
            ("+", _) => Ok(a),
            _ => Err(self.not_affine(node, "only `+` and `-` apply to affine values")),
        }
    }

    /// A binary operator: a sum, a difference, a product by a constant, or a
    /// quotient or remainder by a constant.
    fn typed_binary(&mut self, node: Node) -> Result<Affine> {
        let (l, r) = (node.child_by_field_name("left").unwrap(), node.child_by_field_name("right").unwrap());
        let op = self.text(node.child_by_field_name("operator").unwrap());
        match op {
            "+" | "-" | "*" => self.typed_sum_product(node, op, l, r),
            "/" | "%" => self.typed_quotient(node, op, l, r),
            _ => Err(self.not_affine(node, &format!("operator `{op}`"))),
        }
    }

    /// `l + r`, `l - r` or `l * r` (`node`), folded where both are constants;
    /// a product needs one constant factor.
    fn typed_sum_product(&mut self, node: Node, op: &str, l: Node, r: Node) -> Result<Affine> {
        let (a, b) = (self.typed(l)?, self.typed(r)?);
        let unsigned = a.unsigned || b.unsigned;
        let text = match (op, a.folds(), b.folds()) {
            ("+", Some(x), Some(y)) => return self.folded(node, x.checked_add(y), unsigned),
            ("-", Some(x), Some(y)) => return self.folded(node, x.checked_sub(y), unsigned),
            ("*", Some(x), Some(y)) => return self.folded(node, x.checked_mul(y), unsigned),
            ("*", Some(c), None) => format!("{c} * ({})", b.text),
            ("*", None, Some(c)) => format!("{c} * ({})", a.text),
            // A lifted literal as a coefficient (`1000 * i`) is its value.
            ("*", None, None) => match (a.value, b.value) {
                (Some(c), _) => format!("{c} * ({})", b.text),
                (_, Some(c)) => format!("{c} * ({})", a.text),
                _ => return Err(self.not_affine(node, "a product of two variables")),
            },
            _ => format!("{} {op} {}", a.text, b.text),
        };
        Ok(Affine { text, value: None, unsigned, lifted: false })
    }

    /// `l / r` or `l % r` (`node`) by a constant divisor: C rounds toward
    /// zero, the model's floor and mod round down, so the dividend's sign
    /// decides which form models it.
    fn typed_quotient(&mut self, node: Node, op: &str, l: Node, r: Node) -> Result<Affine> {
        let divisor = self.typed(r).ok().filter(|b| b.value.is_some_and(|c| c != 0));
        let Some(b) = divisor else {
            return Err(self.not_affine(node, "division by a non-constant or non-positive value"));
        };
        let c = b.value.unwrap_or(1);
        let a = self.typed(l)?;
        let unsigned = a.unsigned || b.unsigned;
        if let Some(x) = a.value {
            // C's own rounding, toward zero.
            return self.folded(node, if op == "/" { x.checked_div(c) } else { x.checked_rem(c) }, unsigned);
        }
        if c < 0 {
            return Err(self.not_affine(node, "division by a non-constant or non-positive value"));
        }
        // C's `/` and `%` round toward zero, the model's floor
        // and mod round down: the two agree on non-negative
        // dividends, elsewhere the quotient is the ceiling.
        let rounds_down = if unsigned {
            self.no_wrap(l, &a.text)?;
            true
        } else {
            self.never_negative(l, &a.text)?
        };
        let l = a.text;
        let quotient = if rounds_down {
            format!("floor(({l}) / {c})")
        } else {
            format!("(max(floor(({l}) / {c}), 0) + min(ceil(({l}) / {c}), 0))")
        };
        let text = match (op, rounds_down) {
            ("/", _) => quotient,
            (_, true) => format!("(({l}) mod {c})"),
            (_, false) => format!("(({l}) - {c} * {quotient})"),
        };
        Ok(Affine { text, value: None, unsigned, lifted: false })
    }

    /// A call to `min`, `max`, `floord` or `ceild`, the functions of isl's
    /// own generated code.
    fn typed_call(&mut self, node: Node) -> Result<Affine> {
        let f = self.text(node.child_by_field_name("function").unwrap());
        let args = node.child_by_field_name("arguments").unwrap();
        let mut cursor = args.walk();
        let list: Vec<Node> = args.named_children(&mut cursor).collect();
        match (f, list.len()) {
            ("min" | "max", 2) => self.min_max_of(if f == "min" { "min" } else { "max" }, list[0], list[1]),
            ("floord" | "ceild", 2) => match self.constant(list[1]) {
                Some(c) if c > 0 => {
                    let a = self.affine(list[0])?;
                    let text = format!("{}(({a}) / {c})", if f == "floord" { "floor" } else { "ceil" });
                    Ok(Affine { text, value: None, unsigned: false, lifted: false })
                }
                _ => Err(self.not_affine(node, "the divisor must be a positive constant")),
            },
            _ => Err(self.not_affine(node, &format!("call to `{f}`"))),
        }
    }

    /// A cast to an integer type: the value must not have wrapped if it was
    /// unsigned, and the result takes the cast's signedness.
    fn typed_cast(&mut self, node: Node) -> Result<Affine> {
        let ty = self.text(node.child_by_field_name("type").unwrap());
        if !is_integer_type(ty) {
            return Err(self.not_affine(node, &format!("cast to `{ty}`")));
        }
        let value = node.child_by_field_name("value").unwrap();
        let a = self.typed(value)?;
        if a.unsigned {
            self.no_wrap(value, &a.text)?;
        }
        Ok(Affine { unsigned: is_unsigned_type(ty), ..a })
    }

    /// `min(a, b)` or `max(a, b)`: a comparison, so unsigned operands are
    /// checked as [`Self::compare`] checks them.
    fn min_max_of(&mut self, f: &str, a: Node, b: Node) -> Result<Affine> {
        let (x, y) = (self.typed(a)?, self.typed(b)?);
        let unsigned = x.unsigned || y.unsigned;
        if unsigned {
            self.no_wrap(a, &x.text)?;
            self.no_wrap(b, &y.text)?;
        }
        Ok(Affine { text: format!("{f}({}, {})", x.text, y.text), value: None, unsigned, lifted: false })
    }

    /// Refuses the unsigned affine value `value` of `node` unless it is
    /// non-negative at every point of the current domain (the enclosing
    /// loops and conditions, parameters non-negative): C computes it modulo
    /// 2^w, the model exactly, and the two agree only there.
    pub(super) fn no_wrap(&mut self, node: Node, value: &str) -> Result<()> {
        self.non_negative(
            node,
            value,
            "is unsigned and wraps around below zero",
            "C computes it modulo 2^w, polytune's model exactly; use a signed type or keep the value non-negative",
        )
    }

    /// Whether `value` is non-negative wherever the enclosing loops and
    /// conditions let `node` run.
    fn never_negative(&mut self, node: Node, value: &str) -> Result<bool> {
        let text = self.enclosing_set(Some(&format!("({value}) < 0")));
        let ctx = crate::isl::new_context();
        let internal = |e: isl_rs::LibISLError| {
            self.err(node, format!("internal error: isl rejects the sign test `{text}`: {e:?}"))
        };
        Set::read_from_str(&ctx, &text).map_err(internal)?.is_empty().map_err(internal)
    }

    /// Refuses `node`, whose affine value is `value`, unless it is
    /// non-negative at every point of the current domain; the error says
    /// `what` of it, the first point where it is negative, and `why` (the
    /// set is read again only on that path, for its first point).
    fn non_negative(&mut self, node: Node, value: &str, what: &str, why: &str) -> Result<()> {
        if self.never_negative(node, value)? {
            return Ok(());
        }
        let its: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let text = self.enclosing_set(Some(&format!("({value}) < 0")));
        let ctx = crate::isl::new_context();
        let internal = |e: isl_rs::LibISLError| {
            self.err(node, format!("internal error: isl rejects the sign test `{text}`: {e:?}"))
        };
        let negative = Set::read_from_str(&ctx, &text).map_err(internal)?;
        // The literals modelled as parameters are left out: they have their values.
        let lifted = |p: &str| self.constants.iter().any(|(c, _)| c == p);
        let n = self.params.len();
        let negative = (0..n)
            .rev()
            .filter(|&k| lifted(&self.params[k]))
            .try_fold(negative, |s, k| s.project_out(isl_rs::DimType::Param, k as u32, 1))
            .map_err(internal)?;
        let names: Vec<String> = self.params.iter().filter(|p| !lifted(p)).chain(&its).cloned().collect();
        let at = model::first_point(negative, &names);
        Err(self.err(node, format!("`{}` {what}{at}: {why}", self.text(node))))
    }

    pub(super) fn affine_name(&mut self, node: Node) -> Result<String> {
        let name = self.text(node);
        if let Some(l) = self.loops.iter().find(|l| l.c_name == name) {
            return Ok(l.isl.clone());
        }
        if self.iterators.contains(name) {
            return self.exit_value(node);
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
                self.decls.insert(
                    name.to_string(),
                    Decl { ty: "int".into(), extents: vec![], sizes: vec![], integer: true },
                );
                self.affine_name(node)
            }
            None => Err(self.err(node, format!("`{name}` is not declared"))),
        }
    }

    /// An affine condition in isl syntax. In a loop condition (`in_loop`) `!=` is
    /// refused: it does not bound the iterator.
    pub(super) fn condition(&mut self, node: Node, in_loop: bool) -> Result<String> {
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
    pub(super) fn compare(&mut self, l: Node, op: &str, r: Node) -> Result<String> {
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
        let (a, b) = (self.typed(l)?, self.typed(r)?);
        if a.unsigned || b.unsigned {
            // The usual arithmetic conversions make both sides unsigned.
            self.no_wrap(l, &a.text)?;
            self.no_wrap(r, &b.text)?;
        }
        Ok(format!("{} {op} {}", a.text, b.text))
    }

    /// `a < b ? a : b` and its variants: `Some(("min" | "max", a, b))`.
    pub(super) fn min_max<'t>(&self, node: Node<'t>) -> Option<(&'static str, Node<'t>, Node<'t>)> {
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

    /// A subscript that is affine by pieces, `c ? x : y` with an affine
    /// condition (not a min or max, which stay one piece): `(condition, value)`
    /// pairs whose conditions partition the iteration domain.
    pub(super) fn pieces(&mut self, node: Node) -> Result<Vec<(Option<String>, String)>> {
        let bare = strip_parens(node);
        if bare.kind() != "conditional_expression" || self.min_max(bare).is_some() {
            return Ok(vec![(None, self.affine_value(node)?)]);
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
}
