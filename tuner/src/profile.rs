//! Where a program spends its time: one run with every region timed
//! (`codegen::profiling_program`), and the regions worth tuning, hottest
//! first (CERE picks its codelets from such a profile).

use std::path::Path;
use std::time::Duration;

use vocab::profile::{RegionShare, RunProfile};

use crate::error::{Context, Error, Result};
use executor::build::{BuildOutcome, Builder};
use executor::process::{run_limited, End, Limits};
use executor::runtime::{parse_profile, RegionTime, PROFILED_REGIONS};
use model::scop::{Scop, Source};

use crate::capture::{command, Invocation};

/// The least share of a run a region must take to be tuned by default.
pub const HOT_SHARE: f64 = 0.05;

/// Where one run of a program spent its time: each region's share.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The whole run, in seconds.
    pub wall_s: f64,
    /// Each SCoP's time, in the order they were given.
    pub regions: Vec<RegionTime>,
}

impl Profile {
    /// Region `k`'s share of the run, from 0 to 1.
    pub fn share(&self, k: usize) -> f64 {
        self.regions[k].seconds / self.wall_s.max(1e-9)
    }

    /// The regions that take at least [`HOT_SHARE`] of the run, hottest
    /// first.
    pub fn hot(&self) -> Vec<usize> {
        let mut hot: Vec<usize> = (0..self.regions.len()).filter(|&k| self.share(k) >= HOT_SHARE).collect();
        hot.sort_by(|&a, &b| self.regions[b].seconds.total_cmp(&self.regions[a].seconds));
        hot
    }

    /// The profile as a campaign keeps it: each region of `file` (the
    /// `scops` it was run with) named as its kernel is stored, with its
    /// function, lines and share, and whether `tuned` holds it.
    pub fn kept(&self, file: &Path, source: &Source, scops: &[Scop], tuned: &[usize]) -> RunProfile {
        let regions = scops
            .iter()
            .enumerate()
            .map(|(k, scop)| RegionShare {
                kernel: crate::campaign::kernel_name(file, k),
                function: scop.function.clone(),
                lines: (scop.start.line, scop.last_line(source)),
                share: self.share(k),
                tuned: tuned.contains(&k),
            })
            .collect();
        RunProfile { run_s: self.wall_s, regions }
    }
}

/// Runs the program of `source` once as `how` says, every region of `scops`
/// (all of the file's, in file order) timed (`codegen::profiling_program`).
pub fn profile(
    builder: &Builder,
    source: &Source,
    scops: &[Scop],
    how: &Invocation,
    timeout: Duration,
) -> Result<Profile> {
    let at = source.path.display().to_string();
    if scops.len() > PROFILED_REGIONS {
        return Err(Error::input_at(
            &at,
            format!("{} regions, and a profile times at most {}", scops.len(), PROFILED_REGIONS),
        ));
    }
    let binary = match builder.build(&codegen::profiling_program(source, scops)) {
        BuildOutcome::Built { binary, .. } => binary,
        BuildOutcome::Failed { message } => {
            return Err(Error::failed(format!("{at}: the profiling build of the program failed:\n{message}")))
        }
    };
    let file = std::env::temp_dir().join(format!("polytune-profile-{}", executor::process::unique_suffix()));
    let mut cmd = command(&binary, how)?;
    cmd.env("POLYTUNE_PROFILE_FILE", &file);
    let out = run_limited(cmd, &Limits::default(), timeout, 4096);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let _ = std::fs::remove_file(&file);
    let out = out.with_context(|| format!("cannot start {}", binary.display()))?;
    match out.end {
        End::TimedOut => {
            return Err(Error::failed(format!(
                "{at}: the program's profiling run took longer than {} s",
                timeout.as_secs()
            )))
        }
        End::Exited(status) if !status.success() => {
            return Err(Error::failed(format!(
                "{at}: the program's profiling run failed ({status}): {}",
                out.output.text().trim()
            )))
        }
        End::Exited(_) => {}
    }
    let regions = parse_profile(&text, scops.len()).map_err(|e| Error::failed(format!("{at}: {e}")))?;
    Ok(Profile { wall_s: out.wall.as_secs_f64(), regions })
}
