//! The store a command reads, where it names one (a SQLite path or a
//! `postgres://` URL) or by default in the user's data directory: a query
//! never creates one.

use store::Store;

use crate::error::{Error, Result};

/// Opens the existing store at `db` (default: the user's data directory).
pub fn open_existing(db: Option<&str>) -> Result<Store> {
    let location = match db {
        Some(db) => db.to_string(),
        None => Store::default_location()?.display().to_string(),
    };
    let is_url = location.contains("://");
    if !is_url && !std::path::Path::new(&location).exists() {
        return Err(Error::input(format!(
            "{location}: no store here yet (run `polytune tune` first, or pass --db)"
        )));
    }
    Ok(Store::open(&location)?)
}
