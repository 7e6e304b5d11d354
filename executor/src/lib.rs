//! Compiles, runs and verifies program variants: the path from a point to
//! its program (`pipeline`, through the `codegen` crate), parallel builds,
//! the measurement protocol.
//!
//! - [`pipeline`]: a point → its model, schedule and program, failures as statuses.
//! - [`explain`]: a schedule and its code-generation options as a replayable script.
//! - [`evaluate`]: the original as reference, then variants against it.
//! - [`peers`]: other compilers' builds of the unmodified program (Polly, Graphite,
//!   and Pluto's `polycc` before gcc).
//! - [`runtime`]: the small C runtime linked into every program (region timer,
//!   output dumps, captures) and the Rust side that reads dumps.
//! - [`verify`]: dumps compared within a tolerance that knows the original's
//!   rounding noise.
//! - [`build`]: parallel, cached compilation of sources into binaries.
//! - [`measure`]: the measurement protocol (warm-up, timed runs, spread,
//!   timeouts, limits, pinning) and output verification against the reference.
//! - [`machine`]: machine profiles (compiler, flags, measurement slots) and the
//!   fingerprint that keys results.
//!
//! The executor never touches the store: everything it returns is plain serde data.

pub mod build;
pub mod cuda;
pub mod evaluate;
pub mod explain;
pub mod machine;
pub mod measure;
pub mod peers;
pub mod pipeline;
pub mod process;
pub mod quiet;
pub mod runtime;
pub mod verify;
