use std::path::PathBuf;

/// Everything the store can fail with. Messages say what happened and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the directory {path} for the store: {source}; choose another location with --db or POLYTUNE_DB")]
    CreateDir { path: PathBuf, source: std::io::Error },

    #[error("cannot open the store {target}: {source}; check the path or URL and its permissions, or choose another location with --db or POLYTUNE_DB")]
    Open { target: String, source: sqlx::Error },

    #[error("the store {target} was written by a newer polytune (schema version {found}, this build knows up to {known}); it was left unchanged: use a newer polytune or another store")]
    NewerSchema { target: String, found: i64, known: i64 },

    #[error("{target} is not a polytune store: it holds other tables ({tables}) and no polytune schema; it was left unchanged: give a new file or an empty database")]
    NotAStore { target: String, tables: String },

    #[error("cannot bring the store {target} to the current schema: {source}")]
    Migrate { target: String, source: sqlx::migrate::MigrateError },

    #[error("no location for the store: neither POLYTUNE_DB, XDG_DATA_HOME nor HOME is set; set POLYTUNE_DB to a file path or a postgres:// URL")]
    NoLocation,

    #[error("the store was asked to {what} with invalid input: {reason}")]
    Invalid { what: &'static str, reason: String },

    #[error("point {id} is already stored with a different canonical JSON (stored {stored}, given {given}); a point id must identify one point")]
    PointConflict { id: String, stored: String, given: String },

    #[error("cannot {what} in the store: {source}")]
    Query { what: &'static str, source: sqlx::Error },

    #[error("cannot start the store's I/O runtime: {0}")]
    Runtime(std::io::Error),
}

impl StoreError {
    /// Whether the same call may succeed if tried again: the connection was lost or the
    /// server is restarting (SQLSTATE class 08, connection exceptions; 57P01–57P03, shutdown
    /// and start-up), as opposed to a refused query.
    pub fn is_transient(&self) -> bool {
        let StoreError::Query { source, .. } = self else { return false };
        match source {
            sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
            sqlx::Error::Database(e) => e
                .code()
                .is_some_and(|c| c.starts_with("08") || matches!(c.as_ref(), "57P01" | "57P02" | "57P03")),
            _ => false,
        }
    }
}
