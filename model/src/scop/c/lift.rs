//! Large integer literals as size parameters (`Scop::constants`).
//!
//! A program that fixes its sizes with `#define N 6000` has the same
//! dependences, up to the numbers, as one that takes `n`, but the numbers
//! reach the scheduler's ILPs as coefficients in the thousands: the
//! proximity bound of a distance up to 5999 needs a constant of 5999, the
//! lexmin trades it against the schedule's shape (trisolv's `j + 1499`), and
//! past the coefficient box it has no solution at all. Modelling each such
//! literal as a parameter, as isl does for `n`, gives the schedule a
//! parametric bound `u·N + w` whatever the value.

use std::collections::{BTreeSet, HashMap};

use tree_sitter::Node;

use super::Walk;
use crate::scop::affine::parse_int_literal;
use crate::scop::LIFTED_LITERAL;

/// For each absolute value of a literal to model as a parameter: the
/// parameter's name and the literal's offset from it.
pub(super) type Lifted = HashMap<i64, (String, i64)>;

/// The literals of the region's `body` at or above [`LIFTED_LITERAL`], in
/// clusters: a value within `LIFTED_LITERAL` of the smallest of its
/// cluster is that parameter plus an offset, so that `N - 1`, `N` and
/// `N + 1` keep their differences exact.
pub(super) fn lifted_literals(text: &str, body: &[Node]) -> Lifted {
    let mut values = BTreeSet::new();
    for &root in body {
        // Iteratively: regions may nest deeper than the stack allows.
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind() == "number_literal" {
                if let Some(v) = parse_int_literal(&text[node.byte_range()]) {
                    if v.unsigned_abs() >= LIFTED_LITERAL as u64 && v != i64::MIN {
                        values.insert(v.abs());
                    }
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() || cursor.node() == root {
                    break 'walk;
                }
            }
        }
    }
    let mut lifted = Lifted::new();
    let mut base: Option<i64> = None;
    for v in values {
        let b = match base {
            Some(b) if v - b < LIFTED_LITERAL => b,
            _ => {
                base = Some(v);
                v
            }
        };
        lifted.insert(v, (format!("polytune_c{b}"), v - b));
    }
    lifted
}

impl Walk<'_> {
    /// The literal at `node` as its parameter plus its offset, in isl
    /// syntax; `None` for a literal not modelled as a parameter.
    pub(super) fn lifted_literal(&mut self, node: Node) -> Option<String> {
        let v = parse_int_literal(self.text(node))?;
        let (param, offset) = self.lifted.get(&v.abs())?.clone();
        if !self.params.contains(&param) {
            self.params.push(param.clone());
        }
        if !self.constants.iter().any(|(p, _)| *p == param) {
            self.constants.push((param.clone(), v.abs() - offset));
        }
        let sum = if offset == 0 { param } else { format!("{param} + {offset}") };
        Some(if v < 0 { format!("-({sum})") } else { format!("({sum})") })
    }
}
