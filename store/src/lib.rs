//! The measurement store: machines, programs, points, schedules, builds, campaigns and every
//! measurement, in SQLite (a file, the default) or PostgreSQL (a store shared by machines).
//!
//! The tuner is synchronous (rayon, child processes), so [`Store`] is a blocking facade: it
//! owns a small current-thread tokio runtime and `block_on`s each call. A `Store` is `Send +
//! Sync` and may be shared by threads; it must not be used from inside another tokio runtime.
//!
//! **Backends.** `Store` holds an enum over `SqlitePool`/`PgPool`, and each method's body is
//! written once and expanded for both by the `with_pool!` macro: one set of SQL text (`$1`
//! placeholders, which SQLite accepts too; `CAST(.. AS TEXT)` rather than `::text`;
//! `ON CONFLICT .. DO NOTHING`; `RETURNING`). We did not use `sqlx::Any` because it connects
//! from a URL only, so the SQLite settings that make a shared file safe (WAL, busy timeout,
//! `BEGIN IMMEDIATE` for writers, synchronous FULL) would have to be patched in per
//! connection, and because it converts every value through its own small type system at run
//! time. Only the DDL differs (identity columns, float types): two migration directories
//! with the same versions, embedded in the binary.
//!
//! **Schema** (`migrations/`). `machines` (fingerprint JSON, unique by its SHA-256),
//! `programs` (kernel, path, kernel features JSON; unique by source hash and dataset), `points` (the 16-hex-digit
//! point id and its canonical JSON), `schedules` (isl schedule-tree text, unique by SHA-256),
//! `builds` (generated source, unique by its hash), `campaigns` (unique key, configuration
//! JSON, strategy, seed, budget, state), and `measurements`, one row per finished
//! measurement (a reference's with its rounding noise JSON), UNIQUE (campaign, program, point,
//! role) so that a resumed campaign never measures a point twice (a campaign may tune several
//! programs). Times are integer milliseconds since the epoch on both backends.
//! Indexes serve `best` (one seek per campaign for its fastest ok variant), `history` and
//! `machines`.
//!
//! **Schema versions.** Before migrating, `open` reads the highest applied migration; one this
//! build does not know is [`StoreError::NewerSchema`], a database with other tables and no
//! migrations is [`StoreError::NotAStore`], and either is left untouched (on SQLite the check
//! runs on a plain connection, before the switch to WAL mode).
//!
//! **Durability.** SQLite runs in WAL mode with `synchronous = FULL`: a committed measurement
//! survives kill -9 and power loss, which the tuner's resume relies on. Writers take the
//! write lock up front (`BEGIN IMMEDIATE`) and wait up to a minute for it, so several
//! processes can record into one file.

mod error;
#[macro_use]
mod rows;
mod types;

use std::path::PathBuf;
use std::str::FromStr;

use sha2::{Digest, Sha256};
use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

pub use error::StoreError;
pub use types::{
    clearly_faster, faster_beyond_noise, Best, BuildRef, Campaign, CampaignState, Costs, Counts, HistoryRow,
    MachineRow, NewCampaign, Record, Role, Seed, Times, Timestamp, SIGNIFICANCE,
};
pub use vocab::Status;

use rows::{POSTGRES_MIGRATOR, SQLITE_MIGRATOR};

enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A handle on one store. See the crate documentation.
pub struct Store {
    rt: tokio::runtime::Runtime,
    pool: Pool,
    /// What `open` was given, with any password hidden: for messages.
    target: String,
}

/// Runs `$body` (an expression using `$pool`, which is a `SqlitePool` or a `PgPool`) on the
/// store's runtime. `$begin` is the statement that opens a write transaction on that backend.
macro_rules! with_pool {
    ($store:expr, |$pool:ident, $begin:ident| $body:expr) => {{
        let store: &Store = $store;
        match &store.pool {
            Pool::Sqlite($pool) => {
                #[allow(unused_variables)]
                let $begin: &'static str = "BEGIN IMMEDIATE";
                store.rt.block_on(async { $body })
            }
            Pool::Postgres($pool) => {
                #[allow(unused_variables)]
                let $begin: &'static str = "BEGIN";
                // A server restarting (or a connection lost) fails the call; every call is
                // one statement or one transaction, and each is idempotent (upserts,
                // `ON CONFLICT DO NOTHING`), so it is tried again with backoff.
                store.rt.block_on(async {
                    let started = std::time::Instant::now();
                    let mut wait = std::time::Duration::from_millis(200);
                    loop {
                        let result: Result<_, StoreError> = async { $body }.await;
                        match result {
                            Err(e) if e.is_transient() && started.elapsed() < $crate::RETRY_FOR => {
                                eprintln!(
                                    "polytune: the store did not answer ({e}); trying again in {wait:?}"
                                );
                                tokio::time::sleep(wait).await;
                                wait = (wait * 2).min(std::time::Duration::from_secs(5));
                            }
                            result => break result,
                        }
                    }
                })
            }
        }
    }};
}

/// How long a PostgreSQL call is tried again while the server does not answer.
pub(crate) const RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(120);

// After `with_pool!`, which it uses.
mod best;
mod claims;
pub use claims::{Claim, LiveClaim};
mod open;
use open::{open_postgres, open_sqlite, redact};
mod outcomes;
pub use outcomes::Outcome;
mod report;
pub use report::{CampaignProgress, MeasuredSchedule, ReportFilter, ReportRow};
mod warm;
pub use warm::{KnownPoint, TransferRow};

/// A measurement by its key, for a record that duplicates it.
const FIND_MEASUREMENT: &str =
    "SELECT id FROM measurements WHERE campaign_id = $1 AND program_id = $2 AND point_id = $3 AND role = $4";

/// A measurement's `part` (`samples`, `costs`...) as the JSON text its column keeps.
fn measurement_json(value: &impl serde::Serialize, part: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Invalid {
        what: "record a measurement",
        reason: format!("its {part}: not serialisable as JSON: {e}"),
    })
}

/// Stores one record inside the open transaction `$tx`, evaluating to its measurement id.
/// A macro rather than a function so that it expands for both backends' transaction types.
macro_rules! record_in {
    ($tx:ident, $rec:expr, $now:expr) => {{
        let rec: &Record = $rec;
        let inserted =
            sqlx::query("INSERT INTO points (id, json) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING")
                .bind(&rec.point_id)
                .bind(&rec.point_json)
                .execute(&mut *$tx)
                .await
                .map_err(query("record a point"))?
                .rows_affected();
        if inserted == 0 {
            let (stored,): (String,) = sqlx::query_as("SELECT json FROM points WHERE id = $1")
                .bind(&rec.point_id)
                .fetch_one(&mut *$tx)
                .await
                .map_err(query("read a point"))?;
            if stored != rec.point_json {
                return Err(StoreError::PointConflict {
                    id: rec.point_id.clone(),
                    stored,
                    given: rec.point_json.clone(),
                });
            }
        }
        let schedule_id: Option<i64> = match &rec.schedule {
            None => None,
            Some(tree) => {
                let hash = sha256_hex(tree);
                sqlx::query(
                    "INSERT INTO schedules (hash, tree) VALUES ($1, $2) \
                     ON CONFLICT (hash) DO NOTHING",
                )
                .bind(&hash)
                .bind(tree)
                .execute(&mut *$tx)
                .await
                .map_err(query("record a schedule"))?;
                let (id,): (i64,) = sqlx::query_as("SELECT id FROM schedules WHERE hash = $1")
                    .bind(&hash)
                    .fetch_one(&mut *$tx)
                    .await
                    .map_err(query("read a schedule"))?;
                Some(id)
            }
        };
        let build_id: Option<i64> = match &rec.build {
            None => None,
            Some(build) => {
                sqlx::query(
                    "INSERT INTO builds (source_hash, path) VALUES ($1, $2) \
                     ON CONFLICT (source_hash) DO NOTHING",
                )
                .bind(&build.source_hash)
                .bind(&build.source_path)
                .execute(&mut *$tx)
                .await
                .map_err(query("record a build"))?;
                let (id,): (i64,) = sqlx::query_as("SELECT id FROM builds WHERE source_hash = $1")
                    .bind(&build.source_hash)
                    .fetch_one(&mut *$tx)
                    .await
                    .map_err(query("read a build"))?;
                Some(id)
            }
        };
        let samples = measurement_json(&rec.samples, "samples")?;
        let rounding_noise = rec.rounding_noise.as_ref().map(|n| measurement_json(n, "rounding noise")).transpose()?;
        let costs = rec.costs.as_ref().map(|c| measurement_json(c, "costs")).transpose()?;
        // A measurement already recorded (a resumed campaign, another process) is kept and
        // its id returned: the row is the first record's; the point, schedule and build rows
        // above were no-ops for it.
        let new_id: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO measurements (campaign_id, program_id, machine_id, point_id, schedule_id, \
             build_id, role, status, reason, median_s, spread, samples, created_at, costs, kernel_s, origin, rounding_noise) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
             ON CONFLICT (campaign_id, program_id, point_id, role) DO NOTHING RETURNING id",
        )
        .bind(rec.campaign)
        .bind(rec.program)
        .bind(rec.machine)
        .bind(&rec.point_id)
        .bind(schedule_id)
        .bind(build_id)
        .bind(rec.role.as_str())
        .bind(rec.status.as_str())
        .bind(&rec.reason)
        .bind(rec.median_s)
        .bind(rec.spread)
        .bind(samples)
        .bind($now)
        .bind(costs)
        .bind(rec.kernel_s)
        .bind(&rec.origin)
        .bind(rounding_noise)
        .fetch_optional(&mut *$tx)
        .await
        .map_err(query("record a measurement"))?;
        // Measured: whoever claimed the point (`claims`) holds it no longer.
        sqlx::query(
            "DELETE FROM claims WHERE campaign_id = $1 AND program_id = $2 AND point_id = $3 AND role = $4",
        )
        .bind(rec.campaign)
        .bind(rec.program)
        .bind(&rec.point_id)
        .bind(rec.role.as_str())
        .execute(&mut *$tx)
        .await
        .map_err(query("release a claim"))?;
        match new_id {
            Some((id,)) => id,
            None => {
                let (id,): (i64,) = sqlx::query_as(FIND_MEASUREMENT)
                    .bind(rec.campaign)
                    .bind(rec.program)
                    .bind(&rec.point_id)
                    .bind(rec.role.as_str())
                    .fetch_one(&mut *$tx)
                    .await
                    .map_err(query("look up a measurement"))?;
                id
            }
        }
    }};
}

impl Store {
    /// Opens (creating if needed, and migrating to the current schema) the store at `target`:
    /// a path (a SQLite file, created with its parent directories), a `sqlite:` URL, or a
    /// `postgres://` / `postgresql://` URL.
    pub fn open(target: &str) -> Result<Store, StoreError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(StoreError::Runtime)?;
        let shown = redact(target);
        let pool = if target.starts_with("postgres://") || target.starts_with("postgresql://") {
            Pool::Postgres(rt.block_on(open_postgres(target, &shown))?)
        } else {
            Pool::Sqlite(rt.block_on(open_sqlite(target, &shown))?)
        };
        Ok(Store { rt, pool, target: shown })
    }

    /// Where the store lives unless told otherwise: `$POLYTUNE_DB` if set (a path or a
    /// `postgres://` URL, returned as given), else `$XDG_DATA_HOME/polytune/polytune.db`, else
    /// `~/.local/share/polytune/polytune.db`.
    pub fn default_location() -> Result<PathBuf, StoreError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(db) = var("POLYTUNE_DB") {
            return Ok(PathBuf::from(db));
        }
        // The XDG spec says to ignore a relative XDG_DATA_HOME.
        if let Some(data) = var("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
            return Ok(data.join("polytune").join("polytune.db"));
        }
        match var("HOME") {
            Some(home) => Ok(PathBuf::from(home).join(".local/share/polytune/polytune.db")),
            None => Err(StoreError::NoLocation),
        }
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// What the store was opened with, any password replaced by `***`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The id of the machine with this fingerprint (JSON text), inserted if new. Machines are
    /// keyed by the SHA-256 of the fingerprint text and named after the profile they were last
    /// recorded under (so that `best` by the current profile's name finds them).
    pub fn machine(&self, name: &str, fingerprint_json: &str) -> Result<i64, StoreError> {
        const WHAT: &str = "record a machine";
        non_empty(WHAT, "machine name", name)?;
        json_text(WHAT, "fingerprint", fingerprint_json)?;
        let hash = sha256_hex(fingerprint_json);
        let now = Timestamp::now().millis();
        with_pool!(self, |pool, _begin| {
            sqlx::query(
                "INSERT INTO machines (name, fingerprint, fingerprint_hash, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (fingerprint_hash) DO UPDATE SET name = excluded.name \
                 WHERE machines.name <> excluded.name",
            )
            .bind(name)
            .bind(fingerprint_json)
            .bind(&hash)
            .bind(now)
            .execute(pool)
            .await
            .map_err(query(WHAT))?;
            let (id,): (i64,) = sqlx::query_as("SELECT id FROM machines WHERE fingerprint_hash = $1")
                .bind(&hash)
                .fetch_one(pool)
                .await
                .map_err(query(WHAT))?;
            Ok(id)
        })
    }

    /// The id of the program with this source hash under this dataset, inserted if new.
    pub fn program(
        &self,
        kernel: &str,
        path: &str,
        source_hash: &str,
        dataset: &str,
    ) -> Result<i64, StoreError> {
        const WHAT: &str = "record a program";
        non_empty(WHAT, "kernel name", kernel)?;
        non_empty(WHAT, "source hash", source_hash)?;
        non_empty(WHAT, "dataset", dataset)?;
        let now = Timestamp::now().millis();
        with_pool!(self, |pool, _begin| {
            sqlx::query(
                "INSERT INTO programs (kernel, path, source_hash, dataset, created_at) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (source_hash, dataset) DO NOTHING",
            )
            .bind(kernel)
            .bind(path)
            .bind(source_hash)
            .bind(dataset)
            .bind(now)
            .execute(pool)
            .await
            .map_err(query(WHAT))?;
            let (id,): (i64,) =
                sqlx::query_as("SELECT id FROM programs WHERE source_hash = $1 AND dataset = $2")
                    .bind(source_hash)
                    .bind(dataset)
                    .fetch_one(pool)
                    .await
                    .map_err(query(WHAT))?;
            Ok(id)
        })
    }

    /// The campaign with `new.key`, created in state `running` if there is none. An existing
    /// campaign is returned as stored (its state and configuration untouched): the same
    /// command again resumes it, and the caller sets the state.
    pub fn campaign(&self, new: &NewCampaign) -> Result<Campaign, StoreError> {
        const WHAT: &str = "create a campaign";
        non_empty(WHAT, "campaign key", &new.key)?;
        json_text(WHAT, "campaign configuration", &new.config_json)?;
        let now = Timestamp::now().millis();
        with_pool!(self, |pool, _begin| {
            sqlx::query(
                "INSERT INTO campaigns (key, config, strategy, seed, budget, state, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 'running', $6, $6) ON CONFLICT (key) DO NOTHING",
            )
            .bind(&new.key)
            .bind(&new.config_json)
            .bind(&new.strategy)
            .bind(new.seed as i64) // bit for bit; read back as u64 by `Seed`
            .bind(serde_json::to_string(&new.budget).expect("a budget serialises"))
            .bind(now)
            .execute(pool)
            .await
            .map_err(query(WHAT))?;
            sqlx::query_as::<_, Campaign>(&format!("{CAMPAIGN_SELECT} WHERE key = $1"))
                .bind(&new.key)
                .fetch_one(pool)
                .await
                .map_err(query(WHAT))
        })
    }

    pub fn set_campaign_state(&self, id: i64, state: CampaignState) -> Result<(), StoreError> {
        const WHAT: &str = "set a campaign's state";
        let now = Timestamp::now().millis();
        let changed = with_pool!(self, |pool, _begin| {
            sqlx::query("UPDATE campaigns SET state = $1, updated_at = $2 WHERE id = $3")
                .bind(state.as_str())
                .bind(now)
                .bind(id)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
                .map_err(query(WHAT))
        })?;
        one_campaign(WHAT, id, changed)
    }

    /// Keeps `profile` with campaign `id`: where the profiled run of its
    /// program spent its time. A later profile (the campaign resumed with
    /// another run) replaces it.
    pub fn set_campaign_profile(&self, id: i64, profile: &vocab::RunProfile) -> Result<(), StoreError> {
        const WHAT: &str = "keep a campaign's profile";
        let json = serde_json::to_string(profile).map_err(|e| StoreError::Invalid {
            what: WHAT,
            reason: format!("not serialisable as JSON: {e}"),
        })?;
        let changed = with_pool!(self, |pool, _begin| {
            sqlx::query("UPDATE campaigns SET profile = $1 WHERE id = $2")
                .bind(&json)
                .bind(id)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
                .map_err(query(WHAT))
        })?;
        one_campaign(WHAT, id, changed)
    }

    /// Stores one finished measurement with its point, schedule and build rows, all in one
    /// transaction, and returns its id. Recording the same (campaign, program, point, role)
    /// again is a no-op that returns the existing id (the first record wins).
    pub fn record(&self, rec: &Record) -> Result<i64, StoreError> {
        Ok(self.record_all(std::slice::from_ref(rec))?[0])
    }

    /// [`Store::record`] for many records in one transaction (an import, a bulk load): all are
    /// stored or none. Returns their ids in order.
    pub fn record_all(&self, recs: &[Record]) -> Result<Vec<i64>, StoreError> {
        recs.iter().try_for_each(validate)?;
        let now = Timestamp::now().millis();
        with_pool!(self, |pool, begin| {
            let mut tx = pool.begin_with(begin).await.map_err(query("start a transaction"))?;
            let stored: Result<Vec<i64>, StoreError> = async {
                let mut ids = Vec::with_capacity(recs.len());
                for rec in recs {
                    ids.push(record_in!(tx, rec, now));
                }
                Ok(ids)
            }
            .await;
            match stored {
                Ok(ids) => {
                    tx.commit().await.map_err(query("commit measurements"))?;
                    Ok(ids)
                }
                Err(e) => {
                    // Roll back and wait for it here rather than leave it to the drop, so the
                    // write lock is surely released on return. The first error is the one to report.
                    let _ = tx.rollback().await;
                    Err(e)
                }
            }
        })
    }

    /// The newest `limit` measurements, of one kernel or of all, newest first.
    pub fn history(&self, kernel: Option<&str>, limit: usize) -> Result<Vec<HistoryRow>, StoreError> {
        const WHAT: &str = "read the history";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        with_pool!(self, |pool, _begin| {
            sqlx::query_as::<_, HistoryRow>(
                "SELECT m.id, m.created_at, p.kernel, p.dataset, mc.name AS machine, m.campaign_id AS campaign, \
                        m.role, m.point_id, m.status, m.reason, m.median_s, m.spread, m.kernel_s, \
                        m.origin, m.costs AS costs_json \
                 FROM measurements m \
                 JOIN programs p ON p.id = m.program_id \
                 JOIN machines mc ON mc.id = m.machine_id \
                 WHERE CAST($1 AS TEXT) IS NULL OR p.kernel = $1 \
                 ORDER BY m.id DESC LIMIT $2",
            )
            .bind(kernel)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })
    }

    /// The fingerprint JSON of machine `id`, if there is one (one row, no
    /// count over the measurements as [`Store::machines`] makes).
    pub fn fingerprint(&self, id: i64) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as("SELECT fingerprint FROM machines WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
                .map_err(query("read a machine's fingerprint"))
        })?;
        Ok(row.map(|(f,)| f))
    }

    /// Every machine, by name, with how many measurements it has and when the newest was made.
    pub fn machines(&self) -> Result<Vec<MachineRow>, StoreError> {
        const WHAT: &str = "list the machines";
        let rows: Vec<(i64, String, String, i64, Option<i64>)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT mc.id, mc.name, mc.fingerprint, COUNT(m.id), MAX(m.created_at) \
                 FROM machines mc LEFT JOIN measurements m ON m.machine_id = mc.id \
                 GROUP BY mc.id, mc.name, mc.fingerprint \
                 ORDER BY mc.name, mc.id",
            )
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, name, fingerprint, measurements, last)| MachineRow {
                id,
                name,
                fingerprint,
                measurements,
                last_measured_at: last.map(Timestamp::from_millis),
            })
            .collect())
    }

    /// Every campaign, oldest first.
    pub fn campaigns(&self) -> Result<Vec<Campaign>, StoreError> {
        with_pool!(self, |pool, _begin| {
            sqlx::query_as::<_, Campaign>(&format!("{CAMPAIGN_SELECT} ORDER BY id"))
                .fetch_all(pool)
                .await
                .map_err(query("list the campaigns"))
        })
    }

    /// How many rows each table holds.
    pub fn counts(&self) -> Result<Counts, StoreError> {
        let (machines, programs, points, schedules, builds, campaigns, measurements): (
            i64,
            i64,
            i64,
            i64,
            i64,
            i64,
            i64,
        ) = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT (SELECT COUNT(*) FROM machines), (SELECT COUNT(*) FROM programs), \
                        (SELECT COUNT(*) FROM points), (SELECT COUNT(*) FROM schedules), \
                        (SELECT COUNT(*) FROM builds), (SELECT COUNT(*) FROM campaigns), \
                        (SELECT COUNT(*) FROM measurements)",
            )
            .fetch_one(pool)
            .await
            .map_err(query("count rows"))
        })?;
        Ok(Counts { machines, programs, points, schedules, builds, campaigns, measurements })
    }

    /// Problems found in the store, empty when there are none: on SQLite, what
    /// `PRAGMA integrity_check` and `PRAGMA foreign_key_check` report; on both backends,
    /// measurements whose campaign, program, machine, point, schedule or build is missing.
    pub fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        const WHAT: &str = "check the store's integrity";
        let mut problems = Vec::new();
        if let Pool::Sqlite(pool) = &self.pool {
            self.rt.block_on(async {
                let rows: Vec<(String,)> =
                    sqlx::query_as("PRAGMA integrity_check").fetch_all(pool).await.map_err(query(WHAT))?;
                problems.extend(rows.into_iter().map(|(r,)| r).filter(|r| r != "ok"));
                let rows: Vec<(String, i64)> =
                    sqlx::query_as("SELECT \"table\", rowid FROM pragma_foreign_key_check")
                        .fetch_all(pool)
                        .await
                        .map_err(query(WHAT))?;
                problems.extend(rows.into_iter().map(|(t, r)| format!("{t} row {r}: foreign key violated")));
                Ok::<(), StoreError>(())
            })?;
        }
        let orphans: Vec<(i64,)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT m.id FROM measurements m \
                 LEFT JOIN campaigns c ON c.id = m.campaign_id \
                 LEFT JOIN programs p ON p.id = m.program_id \
                 LEFT JOIN machines mc ON mc.id = m.machine_id \
                 LEFT JOIN points pt ON pt.id = m.point_id \
                 LEFT JOIN schedules s ON s.id = m.schedule_id \
                 LEFT JOIN builds b ON b.id = m.build_id \
                 WHERE c.id IS NULL OR p.id IS NULL OR mc.id IS NULL OR pt.id IS NULL \
                    OR (m.schedule_id IS NOT NULL AND s.id IS NULL) OR (m.build_id IS NOT NULL AND b.id IS NULL) \
                 ORDER BY m.id",
            )
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })?;
        problems.extend(orphans.into_iter().map(|(id,)| format!("measurement {id} refers to a missing row")));
        Ok(problems)
    }
}

impl Drop for Store {
    /// Closes the connections cleanly (on SQLite the last one checkpoints the WAL into the file).
    fn drop(&mut self) {
        match &self.pool {
            Pool::Sqlite(pool) => self.rt.block_on(pool.close()),
            Pool::Postgres(pool) => self.rt.block_on(pool.close()),
        }
    }
}

/// An update of campaign `id` that changed `changed` rows: none means there is no such campaign.
fn one_campaign(what: &'static str, id: i64, changed: u64) -> Result<(), StoreError> {
    if changed == 0 {
        return Err(StoreError::Invalid { what, reason: format!("no campaign has id {id}") });
    }
    Ok(())
}

const CAMPAIGN_SELECT: &str =
    "SELECT id, key, config, strategy, seed, budget, state, created_at, updated_at, profile FROM campaigns";

fn query(what: &'static str) -> impl Fn(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { what, source }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn non_empty(what: &'static str, field: &str, value: &str) -> Result<(), StoreError> {
    if value.trim().is_empty() {
        return Err(StoreError::Invalid { what, reason: format!("the {field} is empty") });
    }
    Ok(())
}

fn json_text(what: &'static str, field: &str, text: &str) -> Result<(), StoreError> {
    serde_json::from_str::<serde_json::Value>(text)
        .map(drop)
        .map_err(|e| StoreError::Invalid { what, reason: format!("the {field} is not JSON: {e}") })
}

fn parse_column<T: FromStr<Err = String>>(what: &'static str, text: &str) -> Result<T, StoreError> {
    text.parse()
        .map_err(|reason: String| StoreError::Query { what, source: sqlx::Error::Decode(reason.into()) })
}

fn parse_samples(what: &'static str, text: &str) -> Result<Vec<f64>, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Query { what, source: sqlx::Error::Decode(Box::new(e)) })
}

fn validate(rec: &Record) -> Result<(), StoreError> {
    const WHAT: &str = "record a measurement";
    let invalid = |reason: String| Err(StoreError::Invalid { what: WHAT, reason });
    let id = &rec.point_id;
    if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return invalid(format!("point id `{id}` is not 16 lowercase hex digits"));
    }
    json_text(WHAT, "point", &rec.point_json)?;
    for (name, value) in [("median", rec.median_s), ("spread", rec.spread), ("kernels' time", rec.kernel_s)] {
        if let Some(v) = value {
            if !v.is_finite() || v < 0.0 {
                return invalid(format!("its {name} is {v}; it must be a finite number ≥ 0"));
            }
        }
    }
    if let Some(v) = rec.samples.iter().find(|v| !v.is_finite() || **v < 0.0) {
        return invalid(format!("a sample is {v}; samples must be finite numbers ≥ 0"));
    }
    if rec.status == Status::Ok && rec.median_s.is_none() {
        return invalid(format!("point {id} has status ok but no median"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two backends' migrations must describe the same schema: equal once the spelling
    /// of identity columns and of 64-bit floats is made the same.
    #[test]
    fn migrations_agree() {
        let sqlite = SQLITE_MIGRATOR.iter().collect::<Vec<_>>();
        let postgres = POSTGRES_MIGRATOR.iter().collect::<Vec<_>>();
        assert_eq!(sqlite.len(), postgres.len());
        let normal = |sql: &str| -> String {
            sql.lines()
                .filter(|l| !l.starts_with("--"))
                .collect::<Vec<_>>()
                .join(" ")
                .replace("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "INTEGER PRIMARY KEY")
                .replace("DOUBLE PRECISION", "REAL")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        for (s, p) in sqlite.iter().zip(&postgres) {
            assert_eq!((s.version, &s.description), (p.version, &p.description));
            assert_eq!(normal(&s.sql), normal(&p.sql), "migration {} differs", s.version);
        }
    }

    #[test]
    fn a_lead_is_significant_by_welchs_test_on_log_times() {
        let times = |samples: &'static [f64]| {
            let m = samples[samples.len() / 2];
            Times { median_s: m, spread: Some(0.1), samples }
        };
        let fast = times(&[1.00, 1.01, 0.99, 1.00, 1.02]);
        let slow = times(&[2.00, 2.02, 1.98, 2.01, 2.00]);
        assert_eq!(faster_beyond_noise(fast, slow), Some(true));
        assert_eq!(faster_beyond_noise(slow, fast), Some(false));
        // Overlapping noise: a 3% lead among runs spread 30% is no lead.
        let a = times(&[1.0, 1.3, 0.8, 1.1, 0.9]);
        let b = times(&[1.05, 1.2, 0.9, 1.0, 1.1]);
        assert_eq!(faster_beyond_noise(a, b), Some(false));
        // Steady runs make a small lead significant, where ranges of 10%
        // around the medians would overlap.
        let a = times(&[0.950, 0.951, 0.949, 0.950, 0.950]);
        let b = times(&[1.000, 1.001, 0.999, 1.000, 1.000]);
        assert_eq!(
            (faster_beyond_noise(a, b), clearly_faster(0.95, Some(0.1), 1.0, Some(0.1))),
            (Some(true), Some(false))
        );
        // Identical runs: a tie is no lead; one run a side: the ranges decide.
        assert_eq!(faster_beyond_noise(times(&[1.0, 1.0]), times(&[1.0, 1.0])), Some(false));
        assert_eq!(faster_beyond_noise(times(&[1.0, 1.0]), times(&[2.0, 2.0])), Some(true));
        let one = |m: f64, spread| Times { median_s: m, spread, samples: &[] };
        assert_eq!(faster_beyond_noise(one(1.0, Some(0.1)), one(2.0, Some(0.1))), Some(true));
        assert_eq!(faster_beyond_noise(one(1.0, None), one(2.0, Some(0.1))), None);
    }

    #[test]
    fn a_clear_lead_needs_the_sample_ranges_apart() {
        assert_eq!(clearly_faster(1.0, Some(0.1), 2.0, Some(0.1)), Some(true));
        assert_eq!(clearly_faster(0.9, Some(0.1), 1.0, Some(0.1)), Some(true), "0.945 < 0.95");
        assert_eq!(clearly_faster(0.95, Some(0.1), 1.0, Some(0.1)), Some(false), "0.9975 > 0.95");
        assert_eq!(clearly_faster(1.0, Some(0.0), 1.0, Some(0.0)), Some(false), "a tie is no lead");
        assert_eq!(clearly_faster(0.5, None, 1.0, Some(0.1)), None);
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://h/db?user=u&password=x"), "postgres://h/db?user=u&password=***");
        assert_eq!(redact("/tmp/a:b@c.db"), "/tmp/a:b@c.db");
    }
}
