//! `polytune bench [search | ratios | transfer | peers]`: the arguments of the
//! benches in `tuner::bench`, whose tables go to standard output line by line.

use std::path::PathBuf;

use anyhow::Result;

use super::common::{self, Dataset};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    mode: Option<Mode>,
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    /// Skip the compile-throughput part.
    #[arg(long)]
    no_compile: bool,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

#[derive(clap::Subcommand)]
enum Mode {
    /// Search efficiency: random sampling, halving and the model-based strategy against an
    /// exhaustive campaign on each file.
    Search(SearchArgs),
    /// The unified scheduler's default against isl's default and the original program,
    /// sequential and on two threads, on each file.
    Ratios(RatiosArgs),
    /// Transfer: from a store's measurements alone, how well the model's prior grown on the
    /// other kernels ranks each kernel's points, and how soon the model strategy replayed on
    /// them reaches a point within 5% of the best, cold and from the store.
    Transfer(TransferArgs),
    /// Peers: the original program built by clang with Polly, by gcc with Graphite and
    /// through Pluto's polycc in each of its settings (when installed), isl's and the
    /// Pluto-like points, and our points with the code-generation knobs, back to back and
    /// output-verified, with OpenBLAS's dgemm rate.
    Peers(PeersArgs),
}

#[derive(clap::Args)]
struct PeersArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// OpenMP threads of every variant, the parallel peers and dgemm.
    #[arg(long, default_value_t = 2, value_parser = common::at_least_one)]
    threads: usize,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
    /// Each kernel also gets a campaign as `tune --strategy model --evals
    /// N` runs it (a fresh store, no warm start), and its best is measured
    /// in the row beside the fixed points; 0: no campaign.
    #[arg(long, default_value_t = 30)]
    evals: usize,
    /// How each file builds (PolyBench/C's official sources: `--cc-arg -I.../utilities
    /// --source .../utilities/polybench.c`), for the original, the peers and ours.
    #[command(flatten)]
    build: common::BuildArgs,
}

#[derive(clap::Args)]
struct SearchArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Fix a knob (`KNOB=VALUE`) to shrink the space; repeatable.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    settings: Vec<String>,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
}

#[derive(clap::Args)]
struct TransferArgs {
    #[command(flatten)]
    store: common::StoreArg,
    /// Campaigns' programs with fewer verified points are left out.
    #[arg(long, default_value_t = 8, value_parser = common::at_least_one)]
    min_points: usize,
}

#[derive(clap::Args)]
struct RatiosArgs {
    /// Kernel files (default: every .c file under polybench/).
    files: Vec<PathBuf>,
    #[arg(long, value_parser = crate::choice::choice::<Dataset>(), default_value_t = Dataset::Large)]
    dataset: Dataset,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 5, value_parser = common::at_least_one)]
    runs: usize,
    /// Per kernel.
    #[command(flatten)]
    timeout: common::TimeoutArg,
}

pub fn run(args: Args) -> Result<()> {
    use tuner::bench::{self, files_or_polybench};
    let out = &mut |line: &str| println!("{line}");
    match args.mode {
        Some(Mode::Search(a)) => {
            let request = bench::search::Request {
                files: files_or_polybench(a.files)?,
                dataset: a.dataset,
                settings: a.settings,
                runs: a.runs,
            };
            bench::search::run(&request, &super::progress::observer, out)?;
        }
        Some(Mode::Transfer(a)) => bench::transfer::run(&a.store.open()?, a.min_points, out)?,
        Some(Mode::Ratios(a)) => {
            let files = files_or_polybench(a.files)?;
            let request = bench::ratios::Request {
                files,
                dataset: a.dataset,
                runs: a.runs,
                timeout_s: a.timeout.seconds,
            };
            bench::ratios::run(&request, out)?;
        }
        Some(Mode::Peers(a)) => {
            let request = bench::peers::Request {
                files: files_or_polybench(a.files)?,
                build: a.build.options(),
                dataset: a.dataset,
                threads: a.threads,
                runs: a.runs,
                timeout_s: a.timeout.seconds,
                evals: a.evals,
            };
            bench::peers::run(&request, out)?;
        }
        None => {
            let files = files_or_polybench(args.files)?;
            let request =
                bench::steps::Request { files, no_compile: args.no_compile, timeout_s: args.timeout.seconds };
            bench::steps::run(&request, out)?;
        }
    }
    Ok(())
}
