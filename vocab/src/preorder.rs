//! The fusion structure a schedule honours: a total preorder of the
//! statements at the outer level (POPL'11). The fusion space enumerates
//! legal preorders, `knobs` puts one in every `Point`, and the scheduler
//! honours the one it is given; the original program's preorder is read
//! from its SCoP (`model::scop::Scop::original_preorder`).

use serde::{Deserialize, Serialize};

/// A total preorder of the statements at the outer level: groups in execution
/// order, the statements of a group sharing the outer loop. Statement indices
/// refer to `Scop::statements`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Preorder(pub Vec<Vec<usize>>);

impl Preorder {
    /// `(S1 S2)(S3)`, 1-based as statements are named.
    pub fn display(&self) -> String {
        self.0
            .iter()
            .map(|g| format!("({})", g.iter().map(|i| format!("S{}", i + 1)).collect::<Vec<_>>().join(" ")))
            .collect()
    }

    /// The group that holds `stmt`.
    pub fn group_of(&self, stmt: usize) -> Option<usize> {
        self.0.iter().position(|g| g.contains(&stmt))
    }
}
