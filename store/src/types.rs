//! The plain data the store takes and returns. Every row derives `Serialize`: the CLI prints
//! them with `--json`.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Serialize, Serializer};
use vocab::Status;

/// Whether a measurement times the original program (the campaign's reference) or a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Reference,
    Variant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reference => "reference",
            Role::Variant => "variant",
        }
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Role, String> {
        match s {
            "reference" => Ok(Role::Reference),
            "variant" => Ok(Role::Variant),
            other => Err(format!("unknown measurement role `{other}` (expected reference or variant)")),
        }
    }
}

impl TryFrom<String> for Role {
    type Error = String;
    fn try_from(s: String) -> Result<Role, String> {
        s.parse()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A campaign runs until its budget is spent or its space exhausted (`finished`), or until it
/// is interrupted (`stopped`); the same command again resumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CampaignState {
    Running,
    Finished,
    Stopped,
}

impl CampaignState {
    pub fn as_str(self) -> &'static str {
        match self {
            CampaignState::Running => "running",
            CampaignState::Finished => "finished",
            CampaignState::Stopped => "stopped",
        }
    }
}

impl FromStr for CampaignState {
    type Err = String;
    fn from_str(s: &str) -> Result<CampaignState, String> {
        match s {
            "running" => Ok(CampaignState::Running),
            "finished" => Ok(CampaignState::Finished),
            "stopped" => Ok(CampaignState::Stopped),
            other => Err(format!("unknown campaign state `{other}` (expected running, finished or stopped)")),
        }
    }
}

impl TryFrom<String> for CampaignState {
    type Error = String;
    fn try_from(s: String) -> Result<CampaignState, String> {
        s.parse()
    }
}

impl fmt::Display for CampaignState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A moment, stored as milliseconds since the Unix epoch (the same integer column on every
/// backend, so the SQL stays one text); shown and serialised as RFC 3339 UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    pub fn now() -> Timestamp {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }

    pub fn from_millis(ms: i64) -> Timestamp {
        Timestamp(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }
}

impl From<i64> for Timestamp {
    fn from(ms: i64) -> Timestamp {
        Timestamp(ms)
    }
}

impl fmt::Display for Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, proleptic Gregorian, UTC.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let tod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(f, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z", tod / 3600, tod % 3600 / 60, tod % 60)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Days since 1970-01-01 → (year, month, day), counting in 400-year eras of 146,097 days
/// whose years start on March 1st (so the leap day is the last day of a year).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, 0..399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st
    let mp = (5 * doy + 2) / 153; // month from March, 0..11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The configuration of a campaign; `key` (a hash of the configuration, chosen by the
/// caller) identifies it, so running the same command again resumes the same campaign.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NewCampaign {
    pub key: String,
    /// The campaign's configuration as JSON text (stored as given).
    pub config_json: String,
    pub strategy: String,
    pub seed: u64,
    /// When the campaign stops (kept as JSON text).
    pub budget: vocab::Budget,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Campaign {
    pub id: i64,
    pub key: String,
    /// JSON text, as given in [`NewCampaign::config_json`].
    pub config: String,
    pub strategy: String,
    /// Stored as a 64-bit signed integer (bit for bit); read back unchanged.
    pub seed: Seed,
    pub budget: vocab::Budget,
    pub state: CampaignState,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// JSON text of the `vocab::RunProfile` kept with it
    /// ([`Store::set_campaign_profile`](crate::Store::set_campaign_profile)), if any.
    pub profile: Option<String>,
}

impl Campaign {
    /// Where the profiled run of its program spent its time, if one was kept.
    pub fn profile(&self) -> Result<Option<vocab::RunProfile>, crate::StoreError> {
        let Some(json) = &self.profile else { return Ok(None) };
        serde_json::from_str(json).map(Some).map_err(|e| crate::StoreError::Invalid {
            what: "read a campaign's profile",
            reason: format!("campaign {}: {e}", self.id),
        })
    }
}

from_row!(Campaign {
    id,
    key,
    config,
    strategy,
    seed: i64,
    budget: String,
    state: String,
    created_at: i64,
    updated_at: i64,
    profile,
});

/// A campaign's random seed: a `u64`, stored in a signed 64-bit column bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Seed(pub u64);

impl From<i64> for Seed {
    fn from(v: i64) -> Seed {
        Seed(v as u64)
    }
}

/// A generated program variant's source, identified by the hash of its text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildRef {
    pub source_hash: String,
    pub source_path: String,
}

/// One finished measurement, as the tuner hands it over. `record` stores it together with
/// its point, schedule and build rows in one transaction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub campaign: i64,
    pub program: i64,
    pub machine: i64,
    pub role: Role,
    /// 16 lowercase hex digits (`vocab::knobs::Point::id`).
    pub point_id: String,
    /// The point's canonical JSON; must be the same text every time the id is recorded.
    pub point_json: String,
    /// The isl schedule tree; `None` when there is none (a failed schedule, the original).
    pub schedule: Option<String>,
    /// The generated source; `None` when no code was generated.
    pub build: Option<BuildRef>,
    /// How the evaluation ended; stored as its text (`ok`, `compile-error`, ...).
    pub status: Status,
    /// Why it failed; empty when it did not.
    pub reason: String,
    /// Seconds; `None` when nothing was timed. Never negative.
    pub median_s: Option<f64>,
    /// (max − min) / median of the samples; `None` when nothing was timed.
    pub spread: Option<f64>,
    /// Every timed run, in seconds.
    pub samples: Vec<f64>,
    /// What the evaluation cost; `None` when not known.
    pub costs: Option<Costs>,
    /// A GPU variant's kernels alone, seconds (the median of the CUDA
    /// events around its launches); `None` for any other measurement.
    pub kernel_s: Option<f64>,
    /// A warm-started point's origin: the machine whose best it was
    /// (`tune --warm-start`); `None` for any other.
    pub origin: Option<String>,
    /// A reference's rounding noise, where it was probed; `None` for any other.
    pub rounding_noise: Option<vocab::RoundingNoise>,
}

/// Wall seconds of each step of one evaluation (issue 20). Steps that did
/// not happen are zero: a point whose code another point already made is
/// neither compiled nor run again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Costs {
    /// The `polytune variant` child as a whole: starting, reading the
    /// program and its dependences, scheduling, generating code.
    pub variant_s: f64,
    /// Of which scheduling (with the legality check)...
    pub schedule_s: f64,
    /// ...and code generation.
    pub codegen_s: f64,
    /// Compiling the program (zero when the build cache had it).
    pub compile_s: f64,
    /// Running it: the warm-up and timed runs, verification included.
    pub run_s: f64,
    /// Of which inside the timer: the region times of the warm-up and
    /// timed runs. The rest of `run_s` is set-up (starting processes, the
    /// program's own initialisation or the capture's loading, dumps,
    /// verification).
    #[serde(default)]
    pub timed_s: f64,
    /// The one run of the user's program that captured the region's inputs
    /// (recorded with the reference of a replayed kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_s: Option<f64>,
}

/// The best-known variant of a kernel: see [`crate::Store::best`] for how it is chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Best {
    pub kernel: String,
    pub dataset: String,
    pub machine: String,
    /// The original program's path, as recorded.
    pub program_path: String,
    /// SHA-256 of that file's bytes when it was tuned.
    pub source_hash: String,
    /// The machine's fingerprint (JSON, as [`crate::Store::machine`] got it).
    pub machine_fingerprint: String,
    pub campaign: i64,
    pub measurement: i64,
    pub point_id: String,
    pub point_json: String,
    pub schedule: Option<String>,
    pub source_path: Option<String>,
    pub median_s: f64,
    pub spread: Option<f64>,
    pub samples: Vec<f64>,
    /// A GPU winner's kernels alone ([`Record::kernel_s`]).
    pub kernel_s: Option<f64>,
    /// Where the winner came from, if another machine's best ([`Record::origin`]).
    pub origin: Option<String>,
    pub reference_median_s: f64,
    pub reference_spread: Option<f64>,
    /// The reference's rounding noise, where it was probed.
    pub reference_rounding_noise: Option<vocab::RoundingNoise>,
    /// reference median / variant median.
    pub speedup: f64,
    pub measured_at: Timestamp,
    /// The next fastest verified variant of the same campaign, program and machine
    /// (slower, not merely another point of the same program sharing its measurement).
    pub runner_up_median_s: Option<f64>,
    pub runner_up_spread: Option<f64>,
    /// Whether the winner is faster than the original beyond noise
    /// ([`faster_beyond_noise`]); `None` where that cannot be said.
    pub clear_of_original: Option<bool>,
    /// The same against the runner-up; `None` without one.
    pub clear_of_runner_up: Option<bool>,
}

/// The times of one measurement, as the significance test reads them.
#[derive(Clone, Copy, Debug)]
pub struct Times<'a> {
    pub median_s: f64,
    /// (max − min) / median of `samples`.
    pub spread: Option<f64>,
    pub samples: &'a [f64],
}

/// The one-sided level at which a lead counts: a lead this likely or less
/// under noise alone is significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// Whether `a` is faster than `b` beyond noise: Welch's t-test, one-sided,
/// on the logarithms of the timed runs (a speedup is a ratio of times, and
/// a log time's noise is closer to normal than a time's), at
/// [`SIGNIFICANCE`]; with fewer than two runs on either side, the medians
/// and spreads decide ([`clearly_faster`]). A tie is no lead. `None` when
/// neither can decide.
pub fn faster_beyond_noise(a: Times, b: Times) -> Option<bool> {
    let logs = |t: &Times| t.samples.iter().filter(|&&x| x > 0.0).map(|x| x.ln()).collect::<Vec<f64>>();
    let (la, lb) = (logs(&a), logs(&b));
    if la.len() < 2 || lb.len() < 2 {
        return clearly_faster(a.median_s, a.spread, b.median_s, b.spread);
    }
    let moments = |l: &[f64]| {
        let n = l.len() as f64;
        let mean = l.iter().sum::<f64>() / n;
        let var = l.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var / n)
    };
    let ((ma, va), (mb, vb)) = (moments(&la), moments(&lb));
    let lead = mb - ma;
    if va + vb == 0.0 {
        return Some(lead > 0.0);
    }
    let t = lead / (va + vb).sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = (va + vb).powi(2) / (va.powi(2) / (la.len() - 1) as f64 + vb.powi(2) / (lb.len() - 1) as f64);
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let p = 1.0 - StudentsT::new(0.0, 1.0, df).ok()?.cdf(t);
    Some(p < SIGNIFICANCE)
}

/// Whether a time of median `a` and relative spread `sa` is faster than one of `b`, `sb`
/// beyond noise: their sample ranges (spread × median wide), centred on the medians, do not
/// overlap. `None` when a spread is unknown. A lead within the spreads is not significant:
/// the reports and `best` say so rather than present noise as a win.
pub fn clearly_faster(a: f64, sa: Option<f64>, b: f64, sb: Option<f64>) -> Option<bool> {
    Some(a * (1.0 + sa? / 2.0) < b * (1.0 - sb? / 2.0))
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryRow {
    pub id: i64,
    pub created_at: Timestamp,
    pub kernel: String,
    pub dataset: String,
    pub machine: String,
    pub campaign: i64,
    pub role: Role,
    pub point_id: String,
    pub status: Status,
    pub reason: String,
    pub median_s: Option<f64>,
    pub spread: Option<f64>,
    /// A GPU variant's kernels alone ([`Record::kernel_s`]).
    pub kernel_s: Option<f64>,
    /// A warm-started point's machine of origin ([`Record::origin`]).
    pub origin: Option<String>,
    /// [`Costs`] as JSON; `None` when not recorded. Serialised as `costs`,
    /// an object.
    #[serde(rename = "costs", serialize_with = "costs_object")]
    pub costs_json: Option<String>,
}

from_row!(HistoryRow {
    id,
    created_at: i64,
    kernel,
    dataset,
    machine,
    campaign,
    role: String,
    point_id,
    status: String,
    reason,
    median_s,
    spread,
    kernel_s,
    origin,
    costs_json,
});

fn costs_object<S: serde::Serializer>(json: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    let costs: Option<Costs> = json.as_deref().and_then(|j| serde_json::from_str(j).ok());
    serde::Serialize::serialize(&costs, s)
}

impl HistoryRow {
    /// What the evaluation cost, when recorded.
    pub fn costs(&self) -> Option<Costs> {
        serde_json::from_str(self.costs_json.as_deref()?).ok()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineRow {
    pub id: i64,
    pub name: String,
    /// JSON text, as given to [`crate::Store::machine`].
    pub fingerprint: String,
    pub measurements: i64,
    /// When its newest measurement was recorded, if it has any.
    pub last_measured_at: Option<Timestamp>,
}

/// Rows per table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub machines: i64,
    pub programs: i64,
    pub points: i64,
    pub schedules: i64,
    pub builds: i64,
    pub campaigns: i64,
    pub measurements: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_as_utc() {
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.789
        assert_eq!(Timestamp(951_827_696_789).to_string(), "2000-02-29T12:34:56.789Z");
        assert_eq!(Timestamp(1_795_838_400_000).to_string(), "2026-11-28T04:00:00.000Z");
        assert_eq!(Timestamp(-1).to_string(), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn roles_and_states_parse_back() {
        for r in [Role::Reference, Role::Variant] {
            assert_eq!(r.as_str().parse::<Role>(), Ok(r));
        }
        for s in [CampaignState::Running, CampaignState::Finished, CampaignState::Stopped] {
            assert_eq!(s.as_str().parse::<CampaignState>(), Ok(s));
        }
        assert!("done".parse::<CampaignState>().unwrap_err().contains("running, finished or stopped"));
    }
}
