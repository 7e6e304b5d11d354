//! Rows read into structs and the migrations embedded, without sqlx's
//! macros: `#[derive(sqlx::FromRow)]` and `migrate!` need the `sqlx-macros`
//! crate, which builds both database drivers a second time for the
//! compiler, on the build's critical path.

use std::borrow::Cow;
use std::sync::LazyLock;

use sqlx::migrate::{Migration, MigrationType, Migrator};

/// `sqlx::FromRow` by column name for both backends' rows, as the derive
/// writes it: `field` reads the column of its name; `field: S` reads an `S`
/// and converts it with `TryFrom`.
macro_rules! from_row {
    ($ty:ident { $($field:ident $(: $via:ty)?),* $(,)? }) => {
        from_row!(@for sqlx::sqlite::SqliteRow, $ty { $($field $(: $via)?),* });
        from_row!(@for sqlx::postgres::PgRow, $ty { $($field $(: $via)?),* });
    };
    (@for $row:ty, $ty:ident { $($field:ident $(: $via:ty)?),* }) => {
        impl<'r> sqlx::FromRow<'r, $row> for $ty {
            fn from_row(row: &'r $row) -> Result<Self, sqlx::Error> {
                use sqlx::Row;
                Ok($ty { $($field: from_row!(@get row, $field $(, $via)?)),* })
            }
        }
    };
    (@get $row:ident, $field:ident) => {
        $row.try_get(stringify!($field))?
    };
    (@get $row:ident, $field:ident, $via:ty) => {{
        let raw: $via = $row.try_get(stringify!($field))?;
        $crate::rows::convert(raw, stringify!($field))?
    }};
}

/// A column's value as the field's type, a failure as sqlx's decoding error.
pub(crate) fn convert<S, T>(raw: S, column: &str) -> Result<T, sqlx::Error>
where
    T: TryFrom<S>,
    T::Error: std::fmt::Display,
{
    T::try_from(raw)
        .map_err(|e| sqlx::Error::ColumnDecode { index: column.to_string(), source: e.to_string().into() })
}

/// One backend's migrations, file name and text, in order.
type Files = &'static [(&'static str, &'static str)];

macro_rules! files {
    ($dir:literal: $($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../migrations/", $dir, "/", $name)))),*]
    };
}

const SQLITE: Files = files!("sqlite":
    "20261122000001_init.sql",
    "20261125000001_costs.sql",
    "20261125000002_claims.sql",
    "20261127000001_kernels.sql",
    "20261127000002_origin.sql",
    "20261128000001_features.sql",
    "20261202000001_rounding_noise.sql",
    "20261203000001_profile.sql",
);

const POSTGRES: Files = files!("postgres":
    "20261122000001_init.sql",
    "20261125000001_costs.sql",
    "20261125000002_claims.sql",
    "20261127000001_kernels.sql",
    "20261127000002_origin.sql",
    "20261128000001_features.sql",
    "20261202000001_rounding_noise.sql",
    "20261203000001_profile.sql",
);

pub(crate) static SQLITE_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE));
pub(crate) static POSTGRES_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES));

/// What `migrate!` makes of a directory: `VERSION_DESCRIPTION.sql`, the
/// description with spaces for underscores, a checksum of the text (the
/// one stores already hold), no transaction when the text starts with
/// `-- no-transaction`.
fn migrator(files: Files) -> Migrator {
    let migrations = files
        .iter()
        .map(|(name, sql)| {
            let (version, description) =
                name.trim_end_matches(".sql").split_once('_').expect("VERSION_NAME.sql");
            Migration::new(
                version.parse().expect("a numeric version"),
                Cow::Owned(description.replace('_', " ")),
                MigrationType::Simple,
                Cow::Borrowed(sql),
                sql.starts_with("-- no-transaction"),
            )
        })
        .collect::<Vec<_>>();
    Migrator { migrations: Cow::Owned(migrations), ..Migrator::DEFAULT }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of each migrations directory is embedded, in order.
    #[test]
    fn every_migration_file_is_embedded() {
        for (dir, files) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(dir);
            let mut on_disk: Vec<String> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            on_disk.sort();
            let embedded: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
            assert_eq!(on_disk, embedded, "{}", path.display());
        }
    }
}
