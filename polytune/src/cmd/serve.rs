//! `polytune serve`: the store over HTTP (the `serve` crate).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;

use super::common::StoreArg;

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on; port 0 picks a free one (printed on start).
    #[arg(long, default_value = "127.0.0.1:8237")]
    addr: SocketAddr,
    /// A file holding the token requests must carry (`Authorization: Bearer TOKEN`);
    /// required when the address is not a loopback one.
    #[arg(long)]
    token_file: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

pub fn run(args: Args) -> Result<()> {
    let options = serve::Options { addr: args.addr, token_file: args.token_file, db: args.store.db };
    // The bound address (with the port chosen for port 0), for scripts and tests.
    Ok(serve::run(&options, |addr| println!("listening on http://{addr}"))?)
}
