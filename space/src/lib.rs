//! The space of a program's legal schedules, on the model the `model` crate
//! builds: the fusion preorders (`fusion`), the core and unified
//! schedulers (`schedule`) with their locality relations (`spatial`) and
//! the ILP layer, transposed copies (`layout`), Clay transformations
//! (`clay`) and isl's own scheduler as a reference (`reference`).
//!
//! Everything that crosses a module or thread boundary is plain text or serde
//! data; isl objects live only inside one function's isl context. It never
//! generates code.

pub mod blas;
pub mod clay;
pub mod cone;
pub mod fusion;
pub mod layout;
pub mod linalg;
pub mod reference;
pub mod schedule;
pub mod spatial;
