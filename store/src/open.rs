//! Opening a store: SQLite (retried while another process holds the lock)
//! or PostgreSQL, the schema checked before anything changes.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

use crate::{StoreError, POSTGRES_MIGRATOR, SQLITE_MIGRATOR};

/// How long `open` waits for a PostgreSQL server to answer (a blackholed address would
/// otherwise hang for the TCP timeout, minutes).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a writer waits for another process's write lock on a SQLite file.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens a SQLite store, starting over while another process holds the file's lock.
///
/// SQLite's busy handler does not cover every step of opening: a connection that switches a
/// new file to WAL mode, or reads the schema while another process switches it, gets "database
/// is locked" at once (seen with two writers creating one file). Those steps change nothing
/// when they fail, so the whole open is tried again until the busy timeout has passed.
pub(crate) async fn open_sqlite(target: &str, shown: &str) -> Result<SqlitePool, StoreError> {
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

pub(crate) async fn open_postgres(target: &str, shown: &str) -> Result<PgPool, StoreError> {
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
pub(crate) fn redact(target: &str) -> String {
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
