//! The fusion structure a schedule honours: a total preorder of the
//! statements at the outer level (POPL'11). A fusion concept, kept in a leaf
//! module of its own because three layers use it: `fusion` enumerates legal
//! preorders (and schedules the outer level to build the space below it,
//! so it sits above `schedule`), `knobs` puts one in every `Point`, and `schedule`
//! honours the one it is given.

use serde::{Deserialize, Serialize};

use crate::scop::Scop;

/// A total preorder of the statements at the outer level: groups in execution
/// order, the statements of a group sharing the outer loop. Statement indices
/// refer to `Scop::statements`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Preorder(pub Vec<Vec<usize>>);

impl Preorder {
    /// The grouping of the original program: one group per top-level loop
    /// nest or statement of the SCoP.
    pub fn original(scop: &Scop) -> Preorder {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut last: Option<String> = None;
        for i in 0..scop.statements.len() {
            let key = top_level_key(scop, i);
            match (&last, &key) {
                (Some(l), Some(k)) if l == k => groups.last_mut().unwrap().push(i),
                _ => groups.push(vec![i]),
            }
            last = key;
        }
        Preorder(groups)
    }

    /// `(S1 S2)(S3)`, 1-based as statements are named.
    pub fn display(&self) -> String {
        self.0
            .iter()
            .map(|g| format!("({})", g.iter().map(|i| format!("S{}", i + 1)).collect::<Vec<_>>().join(" ")))
            .collect()
    }

    /// The group that holds `stmt`.
    pub(crate) fn group_of(&self, stmt: usize) -> Option<usize> {
        self.0.iter().position(|g| g.contains(&stmt))
    }
}

/// The top-level position of a statement under a loop (the first component of
/// its `2d+1` original schedule, as extraction writes it); `None` for a
/// statement outside any loop, which is a group of its own.
fn top_level_key(scop: &Scop, stmt: usize) -> Option<String> {
    let s = &scop.statements[stmt];
    if s.iterators.is_empty() {
        return None;
    }
    let map = &scop.schedule_map;
    let needle = format!(" {}[", s.name);
    let at = map.find(&needle)?;
    let start = at + map[at..].find("-> [")? + 4;
    map[start..].split([',', ']']).next().map(|v| v.trim().to_string())
}
