//! The vocabulary every layer speaks: a point of the search space (its
//! scheduler, fusion preorder, knobs, tiles and threads), how an
//! evaluation of it ends, when a campaign stops, the rounding noise of an original's outputs and
//! where a profiled run of a program spent its time.
//! Plain serde data, no isl, no solver, no parser, so that the store and
//! the reports read points without linking the polyhedral compiler.
//!
//! It must never depend on another crate of the workspace: everything else
//! depends on it.

pub mod budget;
pub mod knobs;
pub mod outcome;
pub mod preorder;
pub mod profile;
pub mod rounding;

pub use budget::Budget;
pub use outcome::Status;
pub use profile::RunProfile;
pub use rounding::RoundingNoise;
