//! The polyhedral model of a C program and the space of its legal schedules.
//!
//! `scop` reads SCoPs from C; `deps` computes their dependences with isl.
//! Everything that crosses a module or thread boundary is plain text or serde
//! data; isl objects live only inside one function's isl context.

pub mod blas;
pub mod clay;
pub mod deps;
pub mod expansion;
pub mod fusion;
pub mod isl;
pub mod layout;
pub mod legality;
pub mod linalg;
pub mod reference;
pub mod schedule;
pub mod scop;
pub mod spatial;
