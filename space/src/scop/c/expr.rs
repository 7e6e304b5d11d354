//! Affine expressions and conditions of the enclosing iterators and the parameters, in isl syntax.

use super::*;
use crate::scop::affine::{isl_name, parse_int_literal};
use decls::is_integer_type;

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
        if let Some(c) = self.constant(node) {
            if !self.holds_lifted(node) {
                return Ok(c.to_string());
            }
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
            "number_literal" => match self.lifted_literal(node) {
                Some(lifted) => Ok(lifted),
                None => Err(not_affine(self, "a non-integer constant")),
            },
            _ => Err(not_affine(self, &format!("unsupported expression ({})", node.kind()))),
        }
    }

    pub(super) fn affine_name(&mut self, node: Node) -> Result<String> {
        let name = self.text(node);
        if let Some(l) = self.loops.iter().find(|l| l.c_name == name) {
            return Ok(l.isl.clone());
        }
        if self.iterators.contains(name) {
            return Err(self.err(node, after_loop(name)));
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
        Ok(format!("{} {op} {}", self.affine(l)?, self.affine(r)?))
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
}
