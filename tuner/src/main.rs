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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scop(args) => cmd::scop::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("polytune: {e:#}");
            ExitCode::FAILURE
        }
    }
}
