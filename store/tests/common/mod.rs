//! Test fixtures: a fresh store on each backend, and raw access for what the API does not show.
#![allow(dead_code)] // each test file uses a different part

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use store::{BuildRef, NewCampaign, Record, Role};

/// A directory under the system's temp dir, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "polytune-store-{tag}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh store to test against: a SQLite file in a temp dir, or a new PostgreSQL database
/// (dropped afterwards) on the server named by `POLYTUNE_TEST_POSTGRES`.
pub enum Fresh {
    Sqlite { dir: TempDir, target: String },
    Postgres { admin: String, db: String, target: String },
}

impl Fresh {
    pub fn sqlite() -> Fresh {
        let dir = TempDir::new("sqlite");
        // A directory that does not exist yet: `open` creates it.
        let target = dir.path().join("sub/dir/polytune.db").to_str().unwrap().to_string();
        Fresh::Sqlite { dir, target }
    }

    /// `None` (after saying why) when no server is configured; where `CI` or
    /// `POLYTUNE_EXPECT_POSTGRES` is set a missing server fails the test, so CI
    /// cannot skip these tests without anyone noticing. (The store's tests do
    /// not use `testkit`, which links isl: the same rule as `testkit::postgres_url`.)
    pub fn postgres() -> Option<Fresh> {
        let admin = match std::env::var("POLYTUNE_TEST_POSTGRES") {
            Ok(url) if !url.is_empty() => url,
            _ if ["CI", "POLYTUNE_EXPECT_POSTGRES"].iter().any(|v| std::env::var_os(v).is_some()) => panic!(
                "CI or POLYTUNE_EXPECT_POSTGRES is set but POLYTUNE_TEST_POSTGRES is not: the PostgreSQL \
                 store tests must run (.ci/run starts a server and exports it)"
            ),
            _ => {
                eprintln!(
                    "POLYTUNE_TEST_POSTGRES is not set: PostgreSQL test skipped \
                     (set it to postgres://user:password@host:port/db of a role that may CREATE DATABASE)"
                );
                return None;
            }
        };
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        let db =
            format!("polytune_test_{}_{nanos}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        pg_admin(&admin, &format!("CREATE DATABASE {db}"));
        let target = with_database(&admin, &db);
        Some(Fresh::Postgres { admin, db, target })
    }

    pub fn target(&self) -> &str {
        match self {
            Fresh::Sqlite { target, .. } | Fresh::Postgres { target, .. } => target,
        }
    }

    pub fn is_sqlite(&self) -> bool {
        matches!(self, Fresh::Sqlite { .. })
    }

    /// Runs one statement on the store's database, outside the store.
    pub fn execute(&self, sql: &str) {
        let rt = runtime();
        match self {
            Fresh::Sqlite { target, .. } => rt.block_on(async {
                use sqlx::Connection;
                std::fs::create_dir_all(Path::new(target).parent().unwrap()).unwrap();
                let mut c =
                    sqlx::SqliteConnection::connect(&format!("sqlite://{target}?mode=rwc")).await.unwrap();
                sqlx::query(sql).execute(&mut c).await.unwrap();
                c.close().await.unwrap();
            }),
            Fresh::Postgres { target, .. } => pg_admin(target, sql),
        }
    }

    /// A snapshot of the store's contents and shape that any write would change: the SQLite
    /// file's bytes; on PostgreSQL, the tables and columns and the migrations table.
    pub fn snapshot(&self) -> Vec<u8> {
        match self {
            Fresh::Sqlite { target, .. } => {
                let wal = PathBuf::from(format!("{target}-wal"));
                assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0, "WAL not checkpointed");
                std::fs::read(target).unwrap()
            }
            Fresh::Postgres { target, .. } => runtime().block_on(async {
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(target).await.unwrap();
                let cols: Vec<(String, String, String)> = sqlx::query_as(
                    "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns \
                     WHERE table_schema = current_schema() ORDER BY 1, 2",
                )
                .fetch_all(&mut c)
                .await
                .unwrap();
                let migrations: Vec<(i64, bool)> = if cols.iter().any(|(t, _, _)| t == "_sqlx_migrations") {
                    sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
                        .fetch_all(&mut c)
                        .await
                        .unwrap()
                } else {
                    vec![]
                };
                format!("{cols:?}{migrations:?}").into_bytes()
            }),
        }
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        if let Fresh::Postgres { admin, db, .. } = self {
            // Leave no test database behind; a failure here must not hide the test's own.
            let rt = runtime();
            let _ = rt.block_on(async {
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(admin).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).execute(&mut c).await
            });
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn pg_admin(url: &str, sql: &str) {
    runtime().block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to POLYTUNE_TEST_POSTGRES: {e}"));
        sqlx::query(sql).execute(&mut c).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        c.close().await.unwrap();
    })
}

/// `url` with its database name replaced by `db`.
fn with_database(url: &str, db: &str) -> String {
    let start = url.find("://").expect("a postgres:// URL") + 3;
    let query = url[start..].find('?').map_or(url.len(), |i| start + i);
    let path = url[start..query].find('/').map_or(query, |i| start + i);
    format!("{}/{db}{}", &url[..path], &url[query..])
}

pub fn new_campaign(key: &str) -> NewCampaign {
    NewCampaign {
        key: key.to_string(),
        config_json: format!(r#"{{"kernel":"gemm","key":"{key}"}}"#),
        strategy: "random".to_string(),
        seed: u64::MAX - 1, // above i64::MAX: must survive the signed column
        budget: vocab::Budget { evals: None, time: Some(std::time::Duration::from_secs(8 * 3600)) },
    }
}

/// A point id from a number, 16 lowercase hex digits like `vocab::knobs::Point::id`.
pub fn point_id(n: u64) -> String {
    format!("{:016x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// An ok measurement of point `n`, with its own schedule and build.
pub fn ok_record(campaign: i64, program: i64, machine: i64, role: Role, n: u64, median: f64) -> Record {
    Record {
        campaign,
        program,
        machine,
        role,
        point_id: point_id(n),
        point_json: format!(r#"{{"n":{n}}}"#),
        schedule: Some(format!("domain: \"{{ S1[i] : 0 <= i < {n} }}\"")),
        build: Some(BuildRef { source_hash: format!("src{n}"), source_path: format!("/cache/{n}.c") }),
        status: "ok".parse().unwrap(),
        reason: String::new(),
        median_s: Some(median),
        spread: Some(0.01),
        samples: vec![median, median * 1.01, median * 0.99],
        costs: None,
        kernel_s: None,
        origin: None,
        rounding_noise: None,
    }
}
