//! Delinearisation: a subscript of a one-dimensional array that multiplies
//! iterators by size parameters, `A[i * n + j]`, read as the element
//! `A[i][j]` of rows of `n` (Grosser et al., "Optimistic delinearization of
//! parametrically sized arrays", ICS 2015, as Polly does). The reading is
//! exact where every inner subscript stays within its row (`0 <= j < n`);
//! that is proven by isl on the statement's domain, or the access is refused
//! with the condition that failed. The statements' text keeps the user's
//! linear subscripts; the model sees the rows, and so do the element text
//! of dumps and captures ([`crate::scop::Array::element`]) and a CPU
//! variant's region, which reads the array through a pointer to its rows
//! (`codegen`'s row views).

use std::collections::BTreeMap;

use super::*;

/// A term's coefficient: an affine expression of the iterators (isl text),
/// and its value where it is an integer constant.
#[derive(Clone)]
struct Coefficient {
    isl: String,
    value: Option<i64>,
}

impl Coefficient {
    fn constant(c: i64) -> Coefficient {
        Coefficient { isl: if c < 0 { format!("({c})") } else { c.to_string() }, value: Some(c) }
    }

    fn add(&self, other: &Coefficient, sign: &str) -> Coefficient {
        let value = match (self.value, other.value, sign) {
            (Some(a), Some(b), "+") => a.checked_add(b),
            (Some(a), Some(b), _) => a.checked_sub(b),
            _ => None,
        };
        match value {
            Some(v) => Coefficient::constant(v),
            None => Coefficient { isl: format!("({}) {sign} ({})", self.isl, other.isl), value: None },
        }
    }

    /// `self * other`, affine where one of them is a constant.
    fn times(&self, other: &Coefficient) -> Option<Coefficient> {
        match (self.value, other.value) {
            (Some(a), Some(b)) => a.checked_mul(b).map(Coefficient::constant),
            (Some(a), None) => Some(Coefficient { isl: format!("{a} * ({})", other.isl), value: None }),
            (None, Some(b)) => Some(Coefficient { isl: format!("{b} * ({})", self.isl), value: None }),
            (None, None) => None,
        }
    }
}

/// A subscript as a sum of monomials of size parameters (C names, sorted;
/// the empty monomial is the affine rest), each with its coefficient.
#[derive(Clone, Default)]
struct Polynomial(BTreeMap<Vec<String>, Coefficient>);

impl Polynomial {
    fn term(monomial: Vec<String>, c: Coefficient) -> Polynomial {
        Polynomial(BTreeMap::from([(monomial, c)]))
    }

    fn combine(mut self, other: Polynomial, sign: &str) -> Polynomial {
        for (m, c) in other.0 {
            let sum = match self.0.get(&m) {
                Some(a) => a.add(&c, sign),
                None => Coefficient::constant(0).add(&c, sign),
            };
            self.0.insert(m, sum);
        }
        self
    }

    fn times(&self, other: &Polynomial) -> Option<Polynomial> {
        let mut out = Polynomial::default();
        for (ma, ca) in &self.0 {
            for (mb, cb) in &other.0 {
                let mut m: Vec<String> = ma.iter().chain(mb).cloned().collect();
                m.sort();
                out = out.combine(Polynomial::term(m, ca.times(cb)?), "+");
            }
        }
        Some(out)
    }
}

/// The rows a linearised subscript reads: its subscripts outermost first
/// (isl text) and the extents of every dimension but the first (C names of
/// size parameters).
pub(super) struct Rows {
    pub(super) subscripts: Vec<String>,
    pub(super) extents: Vec<String>,
}

impl Walk<'_> {
    /// `node` (a subscript that is not affine) as rows of size parameters,
    /// or `None` where it is not a sum of products of the iterators and
    /// those parameters in the shape `(e1 * n + e2) * m + e3`.
    pub(super) fn delinearised(&mut self, node: Node) -> Result<Option<Rows>> {
        let Some(p) = self.polynomial(node)? else { return Ok(None) };
        // The strides, smallest first: each the one before times one parameter.
        let strides: Vec<&Vec<String>> = p.0.keys().filter(|m| !m.is_empty()).collect();
        let mut extents = Vec::new();
        for (k, m) in strides.iter().enumerate() {
            let before: &[String] = if k == 0 { &[] } else { strides[k - 1] };
            if m.len() != before.len() + 1 {
                return Ok(None);
            }
            let mut rest = (*m).clone();
            for x in before {
                match rest.iter().position(|y| y == x) {
                    Some(at) => rest.remove(at),
                    None => return Ok(None),
                };
            }
            extents.push(rest.remove(0));
        }
        if extents.is_empty() {
            return Ok(None);
        }
        let rest = p.0.get(&Vec::new()).cloned().unwrap_or(Coefficient::constant(0));
        let mut subscripts: Vec<String> = strides.iter().rev().map(|m| p.0[*m].isl.clone()).collect();
        subscripts.push(rest.isl);
        extents.reverse();
        Ok(Some(Rows { subscripts, extents }))
    }

    /// `node` as a polynomial of the size parameters; `None` where some
    /// product is not affine in the iterators.
    fn polynomial(&mut self, node: Node) -> Result<Option<Polynomial>> {
        match node.kind() {
            "parenthesized_expression" => self.polynomial(node.named_child(0).unwrap()),
            "binary_expression" => {
                let op = self.text(node.child_by_field_name("operator").unwrap()).to_string();
                let (l, r) =
                    (node.child_by_field_name("left").unwrap(), node.child_by_field_name("right").unwrap());
                if !matches!(op.as_str(), "+" | "-" | "*") {
                    return self.affine_leaf(node);
                }
                let (Some(a), Some(b)) = (self.polynomial(l)?, self.polynomial(r)?) else { return Ok(None) };
                Ok(match op.as_str() {
                    "*" => a.times(&b),
                    sign => Some(a.combine(b, sign)),
                })
            }
            "unary_expression" if self.text(node.child_by_field_name("operator").unwrap()) == "-" => {
                let Some(a) = self.polynomial(node.child_by_field_name("argument").unwrap())? else {
                    return Ok(None);
                };
                Ok(Some(Polynomial::default().combine(a, "-")))
            }
            "identifier" if self.is_size_parameter(node) => {
                self.affine_name(node)?;
                Ok(Some(Polynomial::term(vec![self.text(node).to_string()], Coefficient::constant(1))))
            }
            _ => self.affine_leaf(node),
        }
    }

    /// An affine piece of a linearised subscript, or `None` where it is not affine.
    fn affine_leaf(&mut self, node: Node) -> Result<Option<Polynomial>> {
        let value = self.constant(node);
        let params = self.params.len();
        match self.affine(node) {
            Ok(isl) => Ok(Some(Polynomial::term(Vec::new(), Coefficient { isl, value }))),
            Err(_) => {
                self.params.truncate(params);
                Ok(None)
            }
        }
    }

    /// An integer scalar the SCoP never assigns, outside the loop
    /// iterators: a size of the program's rows.
    fn is_size_parameter(&self, node: Node) -> bool {
        let name = self.text(node);
        !self.loops.iter().any(|l| l.c_name == name)
            && !self.iterators.contains(name)
            && !self.written.contains(name)
            && self.decls.get(name).is_some_and(|d| d.integer && d.extents.is_empty())
    }

    /// Rows that the subscripts may leave on the statement's domain (under
    /// the parameters' context), where two rows' elements would be one
    /// element of the model and its dependences wrong: where the parameters
    /// can keep them within (`n <= lda`), that is assumed, checked at run
    /// time ([`crate::scop::Scop::assumed`]), as Polly's optimistic
    /// delinearisation checks it; where they cannot, refused.
    pub(super) fn check_rows(&mut self, node: Node, rows: &Rows) -> Result<()> {
        let its: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let mut outside = Vec::new();
        for (s, e) in rows.subscripts[1..].iter().zip(&rows.extents) {
            outside.push(format!("({s}) < 0 or ({s}) >= {}", crate::scop::isl_name(e)));
        }
        let mut conds: Vec<String> = self.conds.iter().map(|c| format!("({c})")).collect();
        conds.push(format!("({})", outside.join(" or ")));
        let set = format!("{}{{ [{}] : {} }}", self.param_prefix(), its.join(", "), conds.join(" and "));
        let ctx = crate::isl::new_context();
        let internal = |e: isl_rs::LibISLError| {
            self.err(node, format!("internal error: isl rejects the row check `{set}`: {e:?}"))
        };
        let context = Set::read_from_str(&ctx, &self.pinned_context()).map_err(internal)?;
        let leaves = Set::read_from_str(&ctx, &set).map_err(internal)?;
        let within_context =
            leaves.copy().map_err(internal)?.intersect_params(context.copy().map_err(internal)?);
        if within_context.map_err(internal)?.is_empty().map_err(internal)? {
            return Ok(());
        }
        // The sizes where no instance leaves its row, under the plain
        // context (the literals modelled as parameters left free).
        let plain = Set::read_from_str(&ctx, &super::model::context(&self.params)).map_err(internal)?;
        let left = leaves
            .intersect_params(plain.copy().map_err(internal)?)
            .map_err(internal)?
            .params()
            .map_err(internal)?;
        let holds = plain.subtract(left).map_err(internal)?.coalesce().map_err(internal)?;
        let possible = !holds
            .copy()
            .map_err(internal)?
            .intersect(context)
            .map_err(internal)?
            .is_empty()
            .map_err(internal)?;
        // Each subscript as isl simplifies it (`j`, not `(0) + (j)`).
        let shown = |s: &str| {
            let map = format!("{}{{ [{}] -> [({s})] }}", self.param_prefix(), its.join(", "));
            let text = Map::read_from_str(&ctx, &map).ok().and_then(|m| m.to_str().ok().map(str::to_string));
            let inner =
                text.as_deref().and_then(|t| t.rsplit_once("-> [")).map(|(_, r)| r.trim_end_matches(" }"));
            inner
                .map(|r| r.trim_end_matches(']').trim_matches(['(', ')']).to_string())
                .unwrap_or(s.to_string())
        };
        let within: Vec<String> = rows.subscripts[1..]
            .iter()
            .zip(&rows.extents)
            .map(|(s, e)| format!("0 <= {} < {e}", shown(s)))
            .collect();
        if possible {
            let at = self.src.location(node.start_byte()).map(|l| format!("{}:{}: ", l.line, l.column));
            let why = format!(
                "{}`{}` reads as rows of {} where {}",
                at.unwrap_or_default(),
                self.text(node),
                rows.extents.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(" by "),
                within.join(" and ")
            );
            let text = holds.to_str().map_err(internal)?.to_string();
            if !self.assumptions.iter().any(|(_, w)| *w == why) {
                self.assumptions.push((text, why));
            }
            return Ok(());
        }
        Err(self.err(
            node,
            format!(
                "`{}` reads as rows of {} only where {}, and the loops around it do not imply that; \
                 index the array with one subscript per dimension (a pointer to rows, `double (*A)[n]`)",
                self.text(node),
                rows.extents.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(" by "),
                within.join(" and ")
            ),
        ))
    }
}
