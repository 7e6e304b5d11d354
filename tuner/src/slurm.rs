//! `tune --submit slurm --workers N`: the campaign's processes started as
//! Slurm jobs, nothing of ours scheduling anything. Each job runs the same
//! `polytune tune` command (without `--submit`), in the same directory: on
//! its node it makes or resumes the campaign of that node's machine
//! fingerprint (the campaign key holds it) and claims points in the store
//! like any worker, so nodes of one kind share one campaign and each point is
//! measured once. The store must be one that every node reaches: a
//! PostgreSQL URL, or a SQLite file on a shared file system.

use std::path::Path;
use std::process::Command;

use crate::choice::Choice;
use crate::error::{Context, Error, Result};

/// How the campaign's processes are started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submit {
    Slurm,
}

impl Choice for Submit {
    const WHAT: &'static str = "way to submit";
    const ALL: &'static [Submit] = &[Submit::Slurm];
    fn name(self) -> &'static str {
        match self {
            Submit::Slurm => "slurm",
        }
    }
}
crate::choice::named!(Submit);

/// `args` (this process's arguments after the program name) without the
/// options that submit: what each job runs.
pub fn job_arguments(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        match a.as_str() {
            "--submit" | "--workers" => skip = true,
            _ if a.starts_with("--submit=") || a.starts_with("--workers=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// `s` quoted for a POSIX shell (`sbatch --wrap` runs its command with `sh -c`).
fn quoted(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Submits `workers` jobs of `cpus` cores each, each running `polytune`
/// (this executable) with `args` in `dir`; returns their job ids.
pub fn submit(args: &[String], workers: usize, cpus: usize, dir: &Path) -> Result<Vec<String>> {
    let exe = std::env::current_exe().context("finding this polytune executable")?;
    let command: Vec<String> =
        std::iter::once(exe.display().to_string()).chain(args.iter().cloned()).map(|a| quoted(&a)).collect();
    let mut ids = Vec::new();
    for _ in 0..workers {
        let out = Command::new("sbatch")
            .args(["--parsable", "--job-name", "polytune", "--cpus-per-task", &cpus.to_string()])
            .arg("--chdir")
            .arg(dir)
            .args(["--output", "polytune-%j.out", "--error", "polytune-%j.err", "--wrap", &command.join(" ")])
            .output()
            .context("running sbatch (is Slurm installed here? `--submit slurm` needs its sbatch)")?;
        if !out.status.success() {
            return Err(Error::failed(format!(
                "sbatch refused the job: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        // `--parsable` prints `id` or `id;cluster`.
        ids.push(text.trim().split(';').next().unwrap_or_default().to_string());
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_the_command_without_its_submit_options() {
        let args: Vec<String> = [
            "tune",
            "a.c",
            "--submit",
            "slurm",
            "--workers=3",
            "--set",
            "hlim=4",
            "--workers",
            "2",
            "--json",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(job_arguments(&args), ["tune", "a.c", "--set", "hlim=4", "--json"]);
        assert_eq!(quoted("--set"), "--set");
        assert_eq!(quoted("it's a b"), r"'it'\''s a b'");
        assert_eq!(quoted(""), "''");
    }
}
