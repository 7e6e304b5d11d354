//! Schedules in Clay's form (Bagnères et al., "Opening polyhedral compiler's black box"):
//! each statement's schedule as a vector (β0, α1, β1, …, αn, βn) where the α are the
//! loops that run the statement (affine functions of its iterators and the parameters)
//! and the β its lexical position among its siblings at each depth. A β-prefix names a
//! loop: the statements whose β-vectors start with it are the ones inside.
//!
//! This is what `explain` and `apply` speak: the original program and any schedule tree
//! (ours or isl's) are read into this form ([`form`]), and two schedules are compared by
//! the execution order they give to every pair of instances ([`order`]); a tree may leave
//! instances of different statements at one date, which the form then orders by statement.
//! After the Clay steps, a script may say what code generation does with the final loops
//! (tiles, threads, vectors: [`code`]); `apply` locates those for the code generator.

pub mod apply;
pub mod code;
pub mod explain;
pub mod form;
pub mod order;
pub mod script;
pub mod transform;
pub mod tree;

pub use apply::{apply_script, Applied, ApplyError};
pub use code::{Action, CodeStep, Planned};
pub use explain::{explain, ExplainError};
pub use form::{Aff, ClayError, ClayForm, Relation};
pub use order::{refines, same_order, tree_map};
pub use transform::{Step, StepError};
pub use tree::{to_banded_tree, to_tree};
