//! Which SCoPs of each file a campaign tunes: those the caller names, else
//! every one; with `--autodetect` and the user's program to run (not a driver
//! of ours), the regions that take at least [`HOT_SHARE`] of one profiled
//! run, hottest first, and the profile the campaign keeps.

use std::path::{Path, PathBuf};

use vocab::RunProfile;

use crate::campaign::{kernel_name, request::CAPTURE_TIMEOUT, Setup};
use crate::capture::Invocation;
use crate::error::{Error, Result};
use crate::profile::HOT_SHARE;
use crate::program::{BuildOptions, Dataset, ProgramConfig};

/// A SCoP tuned: its file, how that is built, which SCoP of the file (as
/// [`crate::campaign::request::Request::files`] holds them).
pub type Tuned = (PathBuf, ProgramConfig, usize);

/// What decides the SCoPs (`tune`'s files and options).
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub files: &'a [PathBuf],
    pub build: &'a BuildOptions,
    /// `--scop`: these SCoPs of every file (empty: all, or the hot ones).
    pub scops: &'a [usize],
    pub dataset: Dataset,
    /// The machine profile and threads the profiled run is built for.
    pub machine: &'a str,
    pub threads: Option<usize>,
    pub tolerance: f64,
    pub capture: Option<&'a Invocation>,
}

/// Each SCoP tuned and, where a
/// profile chose them, the profile of every program's run (each region's
/// share of its own program's run); the profiled regions are said to `say`.
pub fn tuned(s: &Selection, say: &mut dyn FnMut(&str)) -> Result<(Vec<Tuned>, Option<RunProfile>)> {
    let mut files = Vec::new();
    let mut profile: Option<RunProfile> = None;
    for f in s.files {
        let build = s.build.resolve(f)?;
        let (scops, profiled) = of_file(f, &build, s, say)?;
        for scop in scops {
            files.push((f.clone(), build.clone(), scop));
        }
        if let Some(p) = profiled {
            match &mut profile {
                Some(all) => {
                    all.run_s += p.run_s;
                    all.regions.extend(p.regions);
                }
                None => profile = Some(p),
            }
        }
    }
    Ok((files, profile))
}

/// The SCoPs of `file` to tune, and the profile that chose them.
fn of_file(
    file: &Path,
    build: &ProgramConfig,
    s: &Selection,
    say: &mut dyn FnMut(&str),
) -> Result<(Vec<usize>, Option<RunProfile>)> {
    let (source, scops) = crate::program::scops(file, s.dataset, build)?;
    if let Some(&n) = s.scops.iter().find(|&&n| n >= scops.len()) {
        return Err(Error::input(format!(
            "{}: has {} SCoP(s); --scop {n} does not exist",
            file.display(),
            scops.len()
        )));
    }
    if !s.scops.is_empty() {
        let mut chosen = s.scops.to_vec();
        chosen.sort_unstable();
        chosen.dedup();
        return Ok((chosen, None));
    }
    let driven = s.capture.is_some_and(|c| !c.params.is_empty());
    if !build.autodetect || driven {
        return Ok(((0..scops.len()).collect(), None));
    }
    let setup = Setup::new(s.machine, s.threads)?;
    let (evaluator, _) = setup.evaluator(1, s.tolerance)?;
    let builder = evaluator.builder.with_extras(&build.extras(s.dataset))?;
    let how = s.capture.cloned().unwrap_or_default();
    say(&format!("{}: timing the {} region(s) found in one run of the program", file.display(), scops.len()));
    let profile = crate::profile::profile(&builder, &source, &scops, &how, CAPTURE_TIMEOUT)?;
    let hot = profile.hot();
    for (k, scop) in scops.iter().enumerate() {
        let last = scop.last_line(&source);
        say(&format!(
            "  {:<16} {}(), lines {}-{last}: {:5.1}% of {:.3} s{}",
            kernel_name(file, k),
            scop.function,
            scop.start.line,
            100.0 * profile.share(k),
            profile.wall_s,
            if hot.contains(&k) { ", tuned" } else { ", not tuned" }
        ));
    }
    if hot.is_empty() {
        return Err(Error::input(format!(
            "{}: no region found takes {:.0}% of the program's run; name one with --scop N",
            file.display(),
            100.0 * HOT_SHARE
        )));
    }
    let kept = profile.kept(file, &source, &scops, &hot);
    Ok((hot, Some(kept)))
}
