//! `polytune worker --campaign ID`: one more process on a campaign that
//! `polytune tune` started, on this machine or another one sharing its store
//! (PostgreSQL). The worker reads the campaign's configuration from the
//! store, loads the same files, checks that it would make the very same
//! campaign (machine fingerprint, sources, settings, polytune), and then
//! runs it like `tune`: it claims each point before it measures it, so the
//! processes share the work and each point is measured once.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::tune::{execute, Job};
use crate::campaign::{Budget, Config};

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
    #[arg(long, value_parser = super::tune::parse_duration)]
    budget: Option<Duration>,
    /// How long a claim lasts without this worker's heartbeat.
    #[arg(long, value_parser = super::tune::parse_duration, default_value = "60s")]
    lease: Duration,
    /// How long scheduling and generating one point may take.
    #[arg(long, value_parser = super::tune::parse_duration, default_value = "300s")]
    variant_timeout: Duration,
    /// What to do when the measurement slots are busy with other processes.
    #[arg(long, value_enum, default_value = "warn")]
    on_noise: crate::noise::OnNoise,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let location = match &args.db {
        Some(db) => db.clone(),
        None => store::Store::default_location()?.display().to_string(),
    };
    let db = store::Store::open(&location)?;
    let Some(stored) = db.campaigns()?.into_iter().find(|c| c.id == args.campaign) else {
        bail!("{}: no campaign has id {}", db.target(), args.campaign);
    };
    let config: Config = serde_json::from_str(&stored.config).with_context(|| {
        format!("campaign {}: its configuration is not one this polytune reads", stored.id)
    })?;
    let ours = env!("CARGO_PKG_VERSION");
    if config.polytune != ours {
        bail!(
            "campaign {} was started by polytune {}, this is {ours}: another version may schedule the same \
             point differently, so it does not join",
            stored.id,
            config.polytune
        );
    }
    let own = Budget::from_description(&stored.budget);
    let budget = Budget { evals: args.evals.or(own.evals), time: args.budget.or(own.time) };
    let job = Job {
        files: config.kernels.iter().map(|k| (k.path.clone(), k.build.clone(), k.scop)).collect(),
        dataset: config.dataset,
        strategy: config.strategy,
        seed: config.seed,
        threads: Some(config.threads),
        settings: config.settings.clone(),
        tiles: config.tiles.clone(),
        race: config.race,
        rungs: config.rungs,
        runs: config.runs,
        tolerance: config.tolerance,
        machine: args.machine,
        peers: if config.peers.is_empty() { "none".into() } else { config.peers.join(",") },
        references: config.references.clone(),
        // The campaign's first process made the warm start.
        warm_start: 0,
        emulate: config.emulate,
        cold: config.cold,
        variant_timeout: args.variant_timeout,
        on_noise: args.on_noise,
        lease: args.lease,
        json: args.json,
        submit: None,
        capture: None,
        captured: config.kernels.iter().map(|k| k.capture.clone()).collect(),
    };
    drop(db);
    execute(job, Some(location), budget, Some(&stored))
}
