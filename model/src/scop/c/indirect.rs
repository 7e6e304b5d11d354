//! Subscripts that are not affine (`h[k[i]]`, `B[idx[i]]`, `A[i * i]`, a
//! scalar the SCoP assigns): as pet models them, the access may touch any
//! element of the array's declared extent in that dimension. The
//! subscript's own reads are reads of the statement; a write through such
//! a subscript is a may-write, read first like a write under a branch on
//! data, so that no dependence through the array is lost.

use super::*;
use crate::scop::{Access, AccessKind};

/// A subscript's pieces: each a condition (`None`: always) and its value.
type Pieces = Vec<(Option<String>, String)>;

impl Walk<'_> {
    /// Whether a subscript is outside the affine model by what it is, not
    /// by a mistake: it reads data (an element, a scalar the SCoP assigns,
    /// a call) or multiplies or divides two variables. Anything else that
    /// is not affine (an unsigned value that wraps, an overflow) stays an
    /// error of the program.
    pub(super) fn reads_or_multiplies(&self, node: Node) -> bool {
        holds(node, &["subscript_expression", "call_expression"])
            || self.reads_data(node)
            || self.multiplies_variables(node)
    }

    /// Whether `node` multiplies two values that are not constants, or
    /// divides by one.
    pub(super) fn multiplies_variables(&self, node: Node) -> bool {
        if node.kind() == "binary_expression" {
            let op = self.text(node.child_by_field_name("operator").unwrap());
            let (l, r) =
                (node.child_by_field_name("left").unwrap(), node.child_by_field_name("right").unwrap());
            let variable = |n: Node| self.constant(n).is_none();
            if (op == "*" && variable(l) && variable(r)) || (matches!(op, "/" | "%") && variable(r)) {
                return true;
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children.into_iter().any(|c| self.multiplies_variables(c))
    }

    /// Dimension `d` of a reference to `name` whose subscript `index` is not
    /// affine (`refused` says why): its one piece, any element of the
    /// declared extent, and why the access is a may-access. The subscript's
    /// reads go to `out` first. Refused where the declaration states no
    /// extent for that dimension: the access could touch any address.
    pub(super) fn indirect(
        &mut self,
        name: &str,
        d: usize,
        index: Node,
        refused: ScopError,
        stmt: &str,
        out: &mut Vec<Access>,
    ) -> Result<(Pieces, String)> {
        let extent = self.extents.get(name).and_then(|e| e.get(d).cloned().flatten());
        let Some(extent) = extent else {
            return Err(self.err(
                index,
                format!(
                    "`{}` is not an affine subscript ({}), and the declaration of `{name}` states no extent for \
                     that dimension, so the access could touch any element; declare `{name}` with its size",
                    self.text(index),
                    refused.reason
                ),
            ));
        };
        self.reads(index, stmt, out)?;
        let var = format!("polytune_o{d}");
        // The extent as the declaration spells it, where it does.
        let shown = self
            .decls
            .get(name)
            .and_then(|decl| decl.extents.get(d).cloned().flatten())
            .unwrap_or(extent.clone());
        let why = format!(
            "the subscript `{}` is not affine: any element of `{name}` below {}",
            self.text(index),
            shown.trim()
        );
        Ok((vec![(Some(format!("0 <= {var} < {extent}")), var)], why))
    }
}

/// The access just recorded (the last of `out`) as a may-access; a write
/// is read first, since it may leave any element as it was.
pub(super) fn may_access(out: &mut Vec<Access>, why: String) {
    let Some(a) = out.pop() else { return };
    if a.kind == AccessKind::Write {
        let kept = "the elements the may-write leaves as they were".to_string();
        out.push(Access { kind: AccessKind::Read, may: Some(kept), ..a.clone() });
    }
    out.push(Access { may: Some(why), ..a });
}
