//! `polytune`: the command line over the `tuner` library. Argument parsing and printing only; the work
//! happens in the library crates.

mod choice;
mod cmd;
mod exit;

use tuner::{campaign, noise, program, slurm, strategy, units};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "polytune",
    version,
    about = "Iterative empirical autotuning of C loop nests",
    after_help = "Exit status: 0 done; 1 an error; 2 a usage error (an unknown option, a value out of range); 3 no result (nothing measured for the kernel, no verified variant); 130 interrupted (Ctrl-C)."
)]
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
    /// the variant's outputs against the original's. `apply FILE --script S` runs a
    /// script of Clay transformations (see `explain`).
    #[command(alias = "apply")]
    Run(cmd::run::Args),
    /// Compute our scheduler's schedule: tree, bands, coincident and
    /// permutable flags, legality verdict.
    Schedule(cmd::schedule::Args),
    /// Tune: search the space of FILE's variants, measure and verify each, keep
    /// every result in the store. The same command again resumes.
    Tune(cmd::tune::Args),
    /// Join a campaign that `tune` started (on this machine, or on another one of the same
    /// fingerprint sharing its PostgreSQL store): points are claimed, each measured once.
    Worker(cmd::worker::Args),
    /// The best known variant of a kernel, from the store.
    Best(cmd::query::BestArgs),
    /// The tuned file: FILE with each machine's winner in place of its SCoP (plain
    /// C and OpenMP, chosen per machine at build or run time), verified first.
    Export(cmd::export::Args),
    /// Recent measurements, newest first.
    History(cmd::query::HistoryArgs),
    /// Machines in the store and how many measurements each has.
    Machines(cmd::query::MachinesArgs),
    /// Report tables per machine and across machines (Markdown, CSV, or HTML with plots).
    Report(cmd::report::Args),
    /// A schedule (a kernel's best, a point's, or a file) as Clay loop transformations of
    /// the original program.
    Explain(cmd::explain::Args),
    /// The store over HTTP, read-only JSON: /best/KERNEL, /machines, /campaigns,
    /// /measurements; /export/KERNEL the tuned file (loopback by default; a token elsewhere).
    Serve(cmd::serve::Args),
    /// The fusion space: legal statement preorders per loop level (|O|, |F|),
    /// each checked with our scheduler.
    Space(cmd::space::Args),
    /// One point's schedule and program as JSON (what campaigns run in a child).
    #[command(hide = true)]
    Variant(cmd::variant::Args),
    /// Time the hot paths (model, dependences, isl scheduling, code generation,
    /// compilation) on the PolyBench kernels.
    Bench(cmd::bench::Args),
}

/// Ctrl-C during a campaign stops it cleanly (what was measured is kept, a
/// resumed run goes on); at any other time it ends the program, as by default.
extern "C" fn on_sigint(_: libc::c_int) {
    if campaign::running() {
        campaign::interrupt();
    } else {
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
    }
}

fn main() -> ExitCode {
    // A closed pipe ends the program quietly, as it ends `cat` (`polytune best gemm | head`).
    // SAFETY: restoring a signal's default disposition has no preconditions.
    // SAFETY: `on_sigint` only touches atomics and async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scop(args) => cmd::scop::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Schedule(args) => cmd::schedule::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Space(args) => cmd::space::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Worker(args) => cmd::worker::run(args),
        Command::Variant(args) => cmd::variant::run(args),
        Command::Best(args) => cmd::query::best(args),
        Command::Export(args) => cmd::export::run(args),
        Command::History(args) => cmd::query::history(args),
        Command::Machines(args) => cmd::query::machines(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Serve(args) => cmd::serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("polytune: {e:#}");
            ExitCode::from(exit::code(&e))
        }
    }
}
