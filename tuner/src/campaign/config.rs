//! What identifies a campaign (`Config`, its key), its budget, and the
//! trace of its evaluations.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::program::{Dataset, ProgramConfig};
use crate::strategy::{Rungs, StrategyKind};

use super::grid;

/// What identifies a campaign: running the same command again (same files,
/// same sources, same settings, same machine, same polytune) resumes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    /// Another version may schedule the same point differently.
    pub polytune: String,
    pub kernels: Vec<KernelSpec>,
    pub dataset: Dataset,
    pub strategy: StrategyKind,
    pub seed: u64,
    pub threads: usize,
    /// Knobs fixed by `--set`, as given.
    pub settings: Vec<String>,
    /// Tile shapes searched (`None`: untiled).
    pub tiles: Vec<grid::Tiles>,
    pub runs: usize,
    pub tolerance: f64,
    /// Machine fingerprint id.
    pub machine: String,
    /// Peers measured as reference points (absent when none, so that such
    /// campaigns keep their keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<String>,
    /// GPU points measured as their CPU emulation (`--emulate`), not on a
    /// GPU slot: another campaign (absent when false, keeping keys).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulate: bool,
    /// The model strategy learns from this campaign's points alone
    /// (`--cold`), not from the store's other campaigns first (absent when
    /// false, keeping keys).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// Racing (`--race`): a variant whose warm-up and first timed run both
    /// took longer than this factor times the kernel's best time so far
    /// is measured once (`MeasureConfig::race_above_s`); `None`: every
    /// variant gets every run. Absent at its default, keeping keys.
    #[serde(default = "default_race", skip_serializing_if = "is_default_race")]
    pub race: Option<f64>,
    /// Halving's rungs (`--rungs`); absent at its default, keeping keys.
    #[serde(default, skip_serializing_if = "is_default_rungs")]
    pub rungs: Rungs,
    /// The reference points measured (`--references`, by name); absent
    /// when all are, keeping keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<String>>,
}

fn is_default_rungs(rungs: &Rungs) -> bool {
    *rungs == Rungs::default()
}

/// A variant three times slower than the best so far cannot win.
pub const RACE: f64 = 3.0;

fn default_race() -> Option<f64> {
    Some(RACE)
}

fn is_default_race(race: &Option<f64>) -> bool {
    *race == default_race()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelSpec {
    pub name: String,
    pub path: PathBuf,
    /// SHA-256 of the file as read: an edited source is a new campaign.
    pub source_hash: String,
    /// How it is preprocessed and built (absent when there is nothing to
    /// say, so that such campaigns keep their keys).
    #[serde(default, skip_serializing_if = "ProgramConfig::is_empty")]
    pub build: ProgramConfig,
    /// The SHA-256 of the capture its region is replayed from
    /// (`crate::capture`): another input is another campaign. Absent when
    /// the whole program runs, keeping keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// Which SCoP of the file, counted from 0 (absent for the first, keeping keys).
    #[serde(default, skip_serializing_if = "is_first")]
    pub scop: usize,
}

fn is_first(index: &usize) -> bool {
    *index == 0
}

impl KernelSpec {
    /// What the store names this kernel's program by (`programs.source_hash`,
    /// one program per value and dataset): the file's hash for its first
    /// marked SCoP, else a hash of the file's hash and which SCoP it is.
    pub fn program_hash(&self) -> String {
        program_hash(&self.source_hash, self.scop, self.build.autodetect)
    }
}

/// [`KernelSpec::program_hash`] of SCoP `scop` of a file whose SHA-256 is
/// `source_hash`.
pub fn program_hash(source_hash: &str, scop: usize, autodetect: bool) -> String {
    match (scop, autodetect) {
        (0, false) => source_hash.to_string(),
        _ => crate::program::sha256_hex(
            format!("{source_hash} scop {scop} autodetect {autodetect}").as_bytes(),
        ),
    }
}

/// Kernel `name` as the newest campaign of `db` that tuned it holds it: its
/// file, how that is built and which SCoP (none where no campaign's
/// configuration reads back, as for rows made by hand).
pub fn stored_kernel(db: &store::Store, name: &str) -> Option<KernelSpec> {
    let campaigns = db.campaigns().ok()?;
    campaigns.iter().rev().find_map(|c| {
        let config: Config = serde_json::from_str(&c.config).ok()?;
        config.kernels.into_iter().find(|k| k.name == name)
    })
}

impl Config {
    /// The store's campaign key: a hash of the canonical JSON.
    pub fn key(&self) -> String {
        let json = serde_json::to_string(self).expect("config serialises");
        Sha256::digest(json.as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect()
    }
}

pub use vocab::Budget;

/// One finished evaluation, in order: how a search converged.
#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    /// Evaluations of this invocation so far, this one included.
    pub evaluations: usize,
    pub elapsed_s: f64,
    pub dataset: Dataset,
    pub point_id: String,
    /// The median when the status was `ok`.
    pub median_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Campaigns stored before `--race` existed keep their keys at its
    /// default, and another factor (or `off`) is another campaign.
    #[test]
    fn the_default_race_keeps_campaign_keys() {
        let config = Config {
            polytune: "0".into(),
            kernels: Vec::new(),
            dataset: Dataset::Mini,
            strategy: crate::strategy::StrategyKind::Random,
            seed: 0,
            threads: 1,
            settings: Vec::new(),
            tiles: Vec::new(),
            runs: 5,
            tolerance: 1e-6,
            machine: "m".into(),
            peers: Vec::new(),
            emulate: false,
            cold: false,
            race: Some(RACE),
            rungs: Rungs::Auto,
            references: None,
        };
        let json = serde_json::to_string(&config).unwrap();
        assert!(!json.contains("race"), "{json}");
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap().race, Some(RACE));
        let keys = [None, Some(2.0)].map(|race| Config { race, ..config.clone() }.key());
        assert!(keys[0] != config.key() && keys[1] != config.key() && keys[0] != keys[1]);
    }
}
