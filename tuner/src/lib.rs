//! The campaign engine behind `polytune`: a program as the tuner takes it
//! (`program`), the space of one kernel and the loop that searches it
//! (`campaign`: grid, batches of `polytune variant` children, slots,
//! workers), the search strategies (`strategy`), the shared ILP answers of
//! one campaign (`memo`), the quiet-machine check (`noise`), Slurm
//! submission (`slurm`), the units times print in (`units`), the typed
//! errors every fallible function returns (`error`), and the names its
//! enums are spelled with in text (`choice`).
//!
//! The `polytune` binary is a crate of its own over this library
//! (`polytune/`: argument parsing, printing, exit statuses); no crate
//! depends on it, and nothing here parses a command line or draws progress.

pub mod bench;
pub mod campaign;
pub mod capture;
pub mod choice;
pub mod deadline;
pub mod error;
pub mod explain;
pub mod export;
pub mod inspect;
pub mod memo;
pub mod noise;
pub mod profile;
pub mod program;
pub mod query;
pub mod selection;
pub mod single;
pub mod slurm;
pub mod stored;
pub mod strategy;
pub mod units;

pub use error::{Error, Result};
