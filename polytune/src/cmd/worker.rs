//! `polytune worker --campaign ID`: one more process on a campaign that
//! `polytune tune` started, on this machine or another one sharing its store
//! (PostgreSQL). The worker reads the campaign's configuration from the
//! store, loads the same files, checks that it would make the very same
//! campaign (machine fingerprint, sources, settings, polytune), and then
//! runs it like `tune`: it claims each point before it measures it, so the
//! processes share the work and each point is measured once.

use std::time::Duration;

use anyhow::Result;

use crate::campaign::request::{self, Request};
use crate::campaign::Budget;

#[derive(clap::Args)]
pub struct Args {
    /// The campaign to join (its id, as `tune` and `polytune report` print it).
    #[arg(long)]
    campaign: i64,
    /// Store: a SQLite path or a `postgres://` URL (default: the user's data directory).
    #[arg(long)]
    db: Option<String>,
    /// Machine profile of this machine; its fingerprint must be the campaign's.
    #[arg(long, default_value = "default")]
    machine: String,
    /// Variant evaluations for the whole campaign (default: the campaign's own budget).
    #[arg(long)]
    evals: Option<usize>,
    /// Wall-time budget of this worker: `90s`, `30m`, `8h` (default: the campaign's).
    #[arg(long, value_parser = crate::units::parse_duration)]
    budget: Option<Duration>,
    /// How long a claim lasts without this worker's heartbeat.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = "60s")]
    lease: Duration,
    /// How long scheduling and generating one point may take.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = "300s")]
    variant_timeout: Duration,
    /// What to do when the measurement slots are busy with other processes.
    #[arg(long, value_parser = crate::choice::choice::<crate::noise::OnNoise>(), default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let (mut request, stored) = Request::join(args.db.as_deref(), args.campaign, &args.machine)?;
    let own = request.budget;
    request.budget = Budget { evals: args.evals.or(own.evals), time: args.budget.or(own.time) };
    request.variant_timeout = args.variant_timeout;
    request.on_noise = args.on_noise;
    request.lease = args.lease;
    let outcome = request::run(&request, Some(&stored), super::progress::observer())?;
    super::tune::report(outcome, args.json)
}
