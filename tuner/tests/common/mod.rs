//! What the tests of the `polytune` executable share: how to run it, under
//! a limit, from the repository's root, and fresh temporary directories.
#![allow(dead_code)] // each test binary uses a part

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

/// Every command of these tests ends within this, or fails the test naming
/// it (`POLYTUNE_ITEM_LIMIT_S` overrides).
pub const LIMIT: Duration = Duration::from_secs(600);

/// The repository's root, where the commands run (they name `polybench/…`).
pub fn root() -> PathBuf {
    testkit::root()
}

/// `polytune`, run from the root, its OpenMP threads sleeping when idle.
pub fn polytune() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_polytune"));
    c.current_dir(root()).env("OMP_WAIT_POLICY", "PASSIVE");
    c
}

/// `cmd`'s output, under [`LIMIT`].
pub fn output(cmd: &mut Command) -> Output {
    testkit::output_within(cmd, LIMIT)
}

/// `polytune ARGS`'s output, under [`LIMIT`].
pub fn run(args: &[&str]) -> Output {
    output(polytune().args(args))
}

/// A fresh, empty directory `polytune-{name}-{pid}` in the temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("polytune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
