//! The benches behind `polytune bench`: the numbers docs/performance.md
//! keeps. Each writes its table line by line to a sink as rows are measured
//! (a bench runs for minutes to hours) and returns what it measured.
//!
//! - `steps`: extraction, dependences, isl's and our scheduler, code
//!   generation per kernel, compile throughput.
//! - `search`: search efficiency of the strategies against an exhaustive campaign.
//! - `ratios`: the unified scheduler's default against isl's and the original.
//! - `transfer`: how well a store's measurements predict other kernels.
//! - `peers`: Polly, Graphite, Pluto and ours, with OpenBLAS's dgemm as yardstick (`dgemm`).

mod dgemm;
pub mod peers;
pub mod ratios;
pub mod search;
pub mod steps;
pub mod transfer;

use std::path::PathBuf;

use crate::error::{Error, Result};
use executor::machine::{MachineProfile, Slot};

/// Where a bench writes its table's lines, each as it is ready.
pub type Out<'a> = &'a mut dyn FnMut(&str);

/// `files`, or where none are given every `.c` file under `polybench/`'s
/// four groups (relative to the working directory), sorted.
pub fn files_or_polybench(files: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    if !files.is_empty() {
        return Ok(files);
    }
    let mut out = Vec::new();
    for group in ["datamining", "linear-algebra", "medley", "stencils"] {
        for e in std::fs::read_dir(PathBuf::from("polybench").join(group))? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == "c") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The default machine profile and its first slot, where the benches measure.
fn default_slot() -> Result<(MachineProfile, Slot)> {
    let profile = crate::program::machine_profile("default")?;
    let slot = profile
        .slots
        .first()
        .cloned()
        .ok_or_else(|| Error::input("the default machine profile has no slot"))?;
    Ok((profile, slot))
}
