//! The polyhedral model of a C program: the SCoPs of a file read from its
//! C text (`scop`), their dependences (`deps`), whether a schedule respects
//! them (`legality`), and the rewrite that expands scalars for GPU variants
//! (`expansion`), all through isl (`isl`).
//!
//! Everything that leaves a function is plain serde data or isl text; isl
//! objects live only inside one function's isl context. It never chooses a
//! schedule and never generates code.

pub mod deps;
pub mod expansion;
pub mod isl;
pub mod legality;
pub mod scop;
