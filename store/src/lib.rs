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
//! `programs` (kernel, path; unique by source hash and dataset), `points` (the 16-hex-digit
//! point id and its canonical JSON), `schedules` (isl schedule-tree text, unique by SHA-256),
//! `builds` (generated source, unique by its hash), `campaigns` (unique key, configuration
//! JSON, strategy, seed, budget, state), and `measurements`, one row per finished
//! measurement, UNIQUE (campaign, program, point, role) so that a resumed campaign never
//! measures a point twice (a campaign may tune several programs). Times are integer milliseconds since the epoch on both backends.
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
mod types;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

pub use error::StoreError;
pub use outcome::Status;
pub use types::{
    Best, BuildRef, Campaign, CampaignState, Counts, HistoryRow, MachineRow, NewCampaign, Record, Role, Seed,
    Timestamp,
};

static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: Migrator = sqlx::migrate!("./migrations/postgres");

/// How long `open` waits for a PostgreSQL server to answer (a blackholed address would
/// otherwise hang for the TCP timeout, minutes).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a writer waits for another process's write lock on a SQLite file.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(60);

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
                store.rt.block_on(async { $body })
            }
        }
    }};
}

// After `with_pool!`, which it uses.
mod outcomes;
pub use outcomes::Outcome;
mod report;
pub use report::{CampaignProgress, MeasuredSchedule, ReportFilter, ReportRow};

/// A measurement by its key, for a record that duplicates it.
const FIND_MEASUREMENT: &str =
    "SELECT id FROM measurements WHERE campaign_id = $1 AND program_id = $2 AND point_id = $3 AND role = $4";

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
        let samples = serde_json::to_string(&rec.samples).map_err(|e| StoreError::Invalid {
            what: "record a measurement",
            reason: format!("its samples do not serialise: {e}"),
        })?;
        // A measurement already recorded (a resumed campaign, another process) is kept and
        // its id returned: the row is the first record's; the point, schedule and build rows
        // above were no-ops for it.
        let new_id: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO measurements (campaign_id, program_id, machine_id, point_id, schedule_id, \
             build_id, role, status, reason, median_s, spread, samples, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
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
        .fetch_optional(&mut *$tx)
        .await
        .map_err(query("record a measurement"))?;
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
            .bind(&new.budget)
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
        if changed == 0 {
            return Err(StoreError::Invalid { what: WHAT, reason: format!("no campaign has id {id}") });
        }
        Ok(())
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

    /// The best-known variant of `kernel`, optionally on one machine (by name) and one dataset.
    ///
    /// Medians are compared only within a campaign (the same binary's time moves 10–20%
    /// between sessions, and across datasets or machines raw times mean nothing), so: in each
    /// campaign that has an `ok` reference, the fastest `ok` variant; of those, the one with
    /// the highest speedup over its own campaign's reference (newest reference if several).
    /// Ties go to the lower median, then the older measurement. `None` when no campaign has
    /// both an `ok` reference and an `ok` variant.
    pub fn best(
        &self,
        kernel: &str,
        machine: Option<&str>,
        dataset: Option<&str>,
    ) -> Result<Option<Best>, StoreError> {
        const WHAT: &str = "find the best variant";
        with_pool!(self, |pool, _begin| {
            // One read transaction: a consistent snapshot while writers go on.
            let mut tx = pool.begin().await.map_err(query(WHAT))?;
            // Each ok reference of the kernel with its campaign's fastest ok variant (one index
            // seek each, in one round trip), oldest reference first.
            let candidates: Vec<Candidate> = sqlx::query_as(
                "SELECT r.campaign_id, r.program_id, r.machine_id, r.median_s AS ref_median, \
                        r.spread AS ref_spread, v.id AS variant, v.median_s AS median \
                 FROM programs p \
                 JOIN measurements r ON r.program_id = p.id \
                 JOIN machines mc ON mc.id = r.machine_id \
                 JOIN measurements v ON v.id = ( \
                     SELECT x.id FROM measurements x \
                     WHERE x.campaign_id = r.campaign_id AND x.program_id = r.program_id \
                       AND x.machine_id = r.machine_id AND x.role = 'variant' AND x.status = 'ok' \
                       AND x.median_s > 0 \
                     ORDER BY x.median_s, x.id LIMIT 1) \
                 WHERE p.kernel = $1 AND (CAST($2 AS TEXT) IS NULL OR mc.name = $2) \
                   AND (CAST($3 AS TEXT) IS NULL OR p.dataset = $3) \
                   AND r.role = 'reference' AND r.status = 'ok' AND r.median_s > 0 \
                 ORDER BY r.id",
            )
            .bind(kernel)
            .bind(machine)
            .bind(dataset)
            .fetch_all(&mut *tx)
            .await
            .map_err(query(WHAT))?;
            // One candidate per (campaign, program, machine), from its newest reference (rows
            // come oldest first).
            let mut groups: BTreeMap<(i64, i64, i64), Candidate> = BTreeMap::new();
            for c in candidates {
                groups.insert((c.campaign_id, c.program_id, c.machine_id), c);
            }
            let speedup = |c: &Candidate| c.ref_median / c.median;
            let winner = groups.into_values().reduce(|a, b| {
                let (sa, sb) = (speedup(&a), speedup(&b));
                let b_better = sb > sa
                    || (sb == sa && (b.median < a.median || (b.median == a.median && b.variant < a.variant)));
                if b_better {
                    b
                } else {
                    a
                }
            });
            let Some(winner) = winner else { return Ok(None) };
            let row: BestRow = sqlx::query_as(
                "SELECT p.kernel, p.dataset, p.path AS program_path, mc.name AS machine, \
                        m.campaign_id AS campaign, m.id AS measurement, m.point_id, pt.json AS point_json, \
                        s.tree AS schedule, b.path AS source_path, m.median_s, m.spread, m.samples, \
                        m.created_at \
                 FROM measurements m \
                 JOIN programs p ON p.id = m.program_id \
                 JOIN machines mc ON mc.id = m.machine_id \
                 JOIN points pt ON pt.id = m.point_id \
                 LEFT JOIN schedules s ON s.id = m.schedule_id \
                 LEFT JOIN builds b ON b.id = m.build_id \
                 WHERE m.id = $1",
            )
            .bind(winner.variant)
            .fetch_one(&mut *tx)
            .await
            .map_err(query(WHAT))?;
            tx.commit().await.map_err(query(WHAT))?;
            let samples = parse_samples(WHAT, &row.samples)?;
            Ok(Some(Best {
                kernel: row.kernel,
                dataset: row.dataset,
                machine: row.machine,
                program_path: row.program_path,
                campaign: row.campaign,
                measurement: row.measurement,
                point_id: row.point_id,
                point_json: row.point_json,
                schedule: row.schedule,
                source_path: row.source_path,
                median_s: row.median_s,
                spread: row.spread,
                samples,
                reference_median_s: winner.ref_median,
                reference_spread: winner.ref_spread,
                speedup: speedup(&winner),
                measured_at: Timestamp::from_millis(row.created_at),
            }))
        })
    }

    /// The newest `limit` measurements, of one kernel or of all, newest first.
    pub fn history(&self, kernel: Option<&str>, limit: usize) -> Result<Vec<HistoryRow>, StoreError> {
        const WHAT: &str = "read the history";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        with_pool!(self, |pool, _begin| {
            sqlx::query_as::<_, HistoryRow>(
                "SELECT m.id, m.created_at, p.kernel, p.dataset, mc.name AS machine, m.campaign_id AS campaign, \
                        m.role, m.point_id, m.status, m.reason, m.median_s, m.spread \
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

const CAMPAIGN_SELECT: &str =
    "SELECT id, key, config, strategy, seed, budget, state, created_at, updated_at FROM campaigns";

/// A campaign's reference and its fastest ok variant, for `best`.
#[derive(sqlx::FromRow)]
struct Candidate {
    campaign_id: i64,
    program_id: i64,
    machine_id: i64,
    ref_median: f64,
    ref_spread: Option<f64>,
    variant: i64,
    median: f64,
}

#[derive(sqlx::FromRow)]
struct BestRow {
    kernel: String,
    dataset: String,
    program_path: String,
    machine: String,
    campaign: i64,
    measurement: i64,
    point_id: String,
    point_json: String,
    schedule: Option<String>,
    source_path: Option<String>,
    median_s: f64,
    spread: Option<f64>,
    samples: String,
    created_at: i64,
}

/// Opens a SQLite store, starting over while another process holds the file's lock.
///
/// SQLite's busy handler does not cover every step of opening: a connection that switches a
/// new file to WAL mode, or reads the schema while another process switches it, gets "database
/// is locked" at once (seen with two writers creating one file). Those steps change nothing
/// when they fail, so the whole open is tried again until the busy timeout has passed.
async fn open_sqlite(target: &str, shown: &str) -> Result<SqlitePool, StoreError> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(10);
    loop {
        match open_sqlite_once(target, shown).await {
            Err(StoreError::Open { source, .. })
                if is_busy(&source) && start.elapsed() + pause < SQLITE_BUSY_TIMEOUT =>
            {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            result => return result,
        }
    }
}

/// SQLITE_BUSY or SQLITE_LOCKED, with any extended code.
fn is_busy(e: &sqlx::Error) -> bool {
    let sqlx::Error::Database(e) = e else { return false };
    e.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| matches!(c & 0xff, 5 | 6))
}

async fn open_sqlite_once(target: &str, shown: &str) -> Result<SqlitePool, StoreError> {
    let open_err = |source| StoreError::Open { target: shown.to_string(), source };
    let options = if target.starts_with("sqlite:") {
        SqliteConnectOptions::from_str(target).map_err(open_err)?
    } else {
        SqliteConnectOptions::new().filename(target)
    };
    let file = options.get_filename().to_path_buf();
    // sqlx names in-memory databases (`sqlite::memory:`) `file:...`: no directory to create.
    let in_memory = file.as_os_str().to_string_lossy().starts_with("file:");
    if !in_memory {
        create_parent(&file)?;
    }
    let options = options.create_if_missing(true).foreign_keys(true).busy_timeout(SQLITE_BUSY_TIMEOUT);

    // The version check runs before anything that writes (WAL mode, migrations).
    let mut conn = options.connect().await.map_err(open_err)?;
    let schema = sqlite_schema(&mut conn).await.map_err(open_err)?;
    conn.close().await.map_err(open_err)?;
    schema.check(shown, &SQLITE_MIGRATOR)?;

    let options = options.journal_mode(SqliteJournalMode::Wal).synchronous(SqliteSynchronous::Full);
    // An in-memory database lives as long as a connection to it: keep exactly one, forever.
    let pool = if in_memory {
        SqlitePoolOptions::new().min_connections(1).max_connections(1).idle_timeout(None).max_lifetime(None)
    } else {
        SqlitePoolOptions::new().max_connections(4)
    };
    let pool = pool.acquire_timeout(SQLITE_BUSY_TIMEOUT).connect_with(options).await.map_err(open_err)?;
    // Two processes opening a new file at once both try to apply the migrations; the loser
    // fails ("table already exists") and finds them applied when it tries again.
    let mut attempt = 0;
    loop {
        match SQLITE_MIGRATOR.run(&pool).await {
            Ok(()) => return Ok(pool),
            Err(_) if attempt < 5 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
            }
            Err(source) => return Err(StoreError::Migrate { target: shown.to_string(), source }),
        }
    }
}

/// The tables of the database (outside SQLite's own) and the highest applied migration.
async fn sqlite_schema(conn: &mut sqlx::SqliteConnection) -> Result<Schema, sqlx::Error> {
    let tables: Vec<(String,)> = sqlx::query_as(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut schema = Schema::new(tables);
    if schema.applied.is_some() {
        let (max,): (Option<i64>,) = sqlx::query_as(MAX_APPLIED).fetch_one(conn).await?;
        schema.applied = Some(max);
    }
    Ok(schema)
}

async fn open_postgres(target: &str, shown: &str) -> Result<PgPool, StoreError> {
    let open_err = |source| StoreError::Open { target: shown.to_string(), source };
    let options = PgConnectOptions::from_str(target).map_err(open_err)?.application_name("polytune");
    // One plain connection first: it fails at once with the server's own reason, where a
    // pool would retry until its timeout.
    let mut conn = match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
        Ok(conn) => conn.map_err(open_err)?,
        Err(_) => {
            let late = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer from the server within {} s", CONNECT_TIMEOUT.as_secs()),
            );
            return Err(open_err(sqlx::Error::Io(late)));
        }
    };
    let schema = postgres_schema(&mut conn).await.map_err(open_err)?;
    conn.close().await.map_err(open_err)?;
    schema.check(shown, &POSTGRES_MIGRATOR)?;
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(open_err)?;
    // The migrator holds an advisory lock while it runs: concurrent opens are safe here.
    POSTGRES_MIGRATOR
        .run(&pool)
        .await
        .map_err(|source| StoreError::Migrate { target: shown.to_string(), source })?;
    Ok(pool)
}

async fn postgres_schema(conn: &mut sqlx::PgConnection) -> Result<Schema, sqlx::Error> {
    let tables: Vec<(String,)> = sqlx::query_as(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() ORDER BY table_name",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut schema = Schema::new(tables);
    if schema.applied.is_some() {
        let (max,): (Option<i64>,) = sqlx::query_as(MAX_APPLIED).fetch_one(conn).await?;
        schema.applied = Some(max);
    }
    Ok(schema)
}

const MAX_APPLIED: &str = "SELECT MAX(version) FROM _sqlx_migrations";

/// What `open` finds before it changes anything.
struct Schema {
    /// Tables other than sqlx's migration table.
    tables: Vec<String>,
    /// `None`: no migration table. `Some(None)`: one without rows.
    applied: Option<Option<i64>>,
}

impl Schema {
    fn new(tables: Vec<(String,)>) -> Schema {
        let (ours, tables): (Vec<String>, Vec<String>) =
            tables.into_iter().map(|(t,)| t).partition(|t| t == "_sqlx_migrations");
        Schema { tables, applied: if ours.is_empty() { None } else { Some(None) } }
    }

    /// Refuses a database this build must not touch: one written by a newer schema, or one
    /// that holds other tables but no polytune schema (someone else's database).
    fn check(&self, shown: &str, migrator: &Migrator) -> Result<(), StoreError> {
        let known = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        match self.applied {
            Some(Some(found)) if found > known => {
                Err(StoreError::NewerSchema { target: shown.to_string(), found, known })
            }
            None if !self.tables.is_empty() => {
                Err(StoreError::NotAStore { target: shown.to_string(), tables: self.tables.join(", ") })
            }
            _ => Ok(()),
        }
    }
}

fn create_parent(file: &Path) -> Result<(), StoreError> {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source }),
        _ => Ok(()),
    }
}

/// `target` with the password of a URL (in its user info or a `password=` parameter)
/// replaced by `***`.
fn redact(target: &str) -> String {
    let mut shown = target.to_string();
    if let Some(scheme_end) = shown.find("://") {
        let start = scheme_end + 3;
        let authority_end = shown[start..].find(['/', '?']).map_or(shown.len(), |i| start + i);
        if let Some(at) = shown[start..authority_end].rfind('@').map(|i| start + i) {
            if let Some(colon) = shown[start..at].find(':').map(|i| start + i) {
                shown.replace_range(colon + 1..at, "***");
            }
        }
    }
    if let Some(query) = shown.find('?') {
        let mut out = shown[..=query].to_string();
        let params: Vec<String> = shown[query + 1..]
            .split('&')
            .map(|p| if p.starts_with("password=") { "password=***".to_string() } else { p.to_string() })
            .collect();
        out.push_str(&params.join("&"));
        shown = out;
    }
    shown
}

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
    for (name, value) in [("median", rec.median_s), ("spread", rec.spread)] {
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
    fn passwords_are_hidden() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://h/db?user=u&password=x"), "postgres://h/db?user=u&password=***");
        assert_eq!(redact("/tmp/a:b@c.db"), "/tmp/a:b@c.db");
    }
}
