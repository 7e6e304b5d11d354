//! `polytune best | history | machines`: answers from the store, nothing runs.

use anyhow::Result;

use super::common::StoreArg;

#[derive(clap::Args)]
pub struct BestArgs {
    /// Kernel name (the C file's stem, e.g. `gemm`).
    kernel: String,
    /// Only measurements on this machine profile.
    #[arg(long)]
    machine: Option<String>,
    /// Only this dataset.
    #[arg(long, value_parser = crate::choice::choice::<super::common::Dataset>())]
    dataset: Option<super::common::Dataset>,
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn best(args: BestArgs) -> Result<()> {
    let store = args.store.open()?;
    let b = tuner::query::best(&store, &args.kernel, args.machine.as_deref(), args.dataset)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&b)?);
        return Ok(());
    }
    Ok(tuner::query::describe_best(&store, &b, &mut |line| println!("{line}"))?)
}

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// Only this kernel.
    kernel: Option<String>,
    /// How many measurements, newest first.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// What each evaluation cost (the `polytune variant` child with its
    /// scheduling and code generation, the compile, the runs), and the
    /// totals over the rows shown.
    #[arg(long)]
    costs: bool,
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn history(args: HistoryArgs) -> Result<()> {
    let rows = args.store.open()?.history(args.kernel.as_deref(), args.limit)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    print!("{}", tuner::query::history_text(&rows, args.costs));
    Ok(())
}

#[derive(clap::Args)]
pub struct MachinesArgs {
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn machines(args: MachinesArgs) -> Result<()> {
    let rows = args.store.open()?.machines()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    print!("{}", tuner::query::machines_text(&rows));
    Ok(())
}
