//! The evaluator the tests build and measure with: one warm-up-free run per
//! program, a generous timeout (a debug build on a busy CI machine), OpenMP
//! threads that sleep when idle, and a compile cache per test binary under
//! `target/tmp`.

use executor::build::{Builder, Compiler};
use executor::evaluate::Evaluator;
use executor::machine::Slot;
use executor::measure::{MeasureConfig, TimeoutPolicy};
use executor::verify::Tolerance;

/// An evaluator compiling with `gcc flags`, its cache `target/tmp/polytune-{cache}-test-cache`;
/// `threads`: `OMP_NUM_THREADS` (`None`: the slot's cores).
pub fn evaluator(cache: &str, flags: &[&str], threads: Option<usize>, tolerance: Tolerance) -> Evaluator {
    let cache = super::root().join(format!("target/tmp/polytune-{cache}-test-cache"));
    let builder = Builder::new(Compiler::new("gcc", flags.iter().copied()), cache)
        .unwrap_or_else(|e| panic!("the test's compile cache: {e}"));
    let config = MeasureConfig {
        warmups: 0,
        runs: 1,
        threads,
        tolerance,
        timeout: TimeoutPolicy { min_s: 60.0, ..TimeoutPolicy::default() },
        env: vec![("OMP_WAIT_POLICY".into(), "PASSIVE".into())],
        ..MeasureConfig::default()
    };
    Evaluator { builder, slot: Slot::all_available(), config, jobs: 2 }
}
