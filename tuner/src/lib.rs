//! The campaign engine behind `polytune`: a program as the tuner takes it
//! (`program`), the space of one kernel and the loop that searches it
//! (`campaign`: grid, batches of `polytune variant` children, slots,
//! workers), the search strategies (`strategy`), the shared ILP answers of
//! one campaign (`memo`), the quiet-machine check (`noise`), Slurm
//! submission (`slurm`), and the exit statuses and units the commands
//! print (`exit`, `units`).
//!
//! The `polytune` binary (`main.rs`, `cmd/`) is command glue over this
//! library; nothing here imports it.

pub mod campaign;
pub mod capture;
pub mod exit;
pub mod export;
pub mod memo;
pub mod noise;
pub mod profile;
pub mod program;
pub mod slurm;
pub mod strategy;
pub mod units;
