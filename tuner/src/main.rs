//! `polytune`: the command line. Argument parsing and printing only; the work
//! happens in the library crates.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "polytune", version, about = "Iterative empirical autotuning of C loop nests")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the polyhedral model of each SCoP in FILE: statements, domains,
    /// accesses, the original schedule and dependence counts.
    Scop(cmd::scop::Args),
    /// Generate one variant, build it and the original, time both and verify
    /// the variant's outputs against the original's.
    Run(cmd::run::Args),
    /// Compute our scheduler's schedule: tree, bands, coincident and
    /// permutable flags, legality verdict.
    Schedule(cmd::schedule::Args),
    /// Time the hot paths (model, dependences, isl scheduling, code generation,
    /// compilation) on the PolyBench kernels.
    Bench(cmd::bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scop(args) => cmd::scop::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Schedule(args) => cmd::schedule::run(args),
        Command::Bench(args) => cmd::bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("polytune: {e:#}");
            ExitCode::FAILURE
        }
    }
}
