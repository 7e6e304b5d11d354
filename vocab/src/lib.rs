//! The vocabulary every layer speaks: a point of the search space (its
//! scheduler, fusion preorder, knobs, tiles and threads), how an
//! evaluation of it ends and the rounding noise of an original's outputs.
//! Plain serde data, no isl, no solver, no parser, so that the store and
//! the reports read points without linking the polyhedral compiler.
//!
//! It must never depend on another crate of the workspace: everything else
//! depends on it.

pub mod knobs;
pub mod outcome;
pub mod preorder;
pub mod rounding;

pub use outcome::Status;
pub use rounding::RoundingNoise;
