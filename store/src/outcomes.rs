//! What a resuming campaign needs to know about its own past, and the
//! kernel names a query can name.

use serde::Serialize;

use crate::{parse_column, query, Pool, Role, Store, StoreError};

/// One measurement of a campaign, reduced to what a search strategy reads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub program: i64,
    pub point_id: String,
    pub role: Role,
    pub status: crate::Status,
    pub median_s: Option<f64>,
    /// What the evaluation cost, where it was recorded (and reads back).
    pub costs: Option<crate::Costs>,
}

impl Store {
    /// Every measurement of `campaign`, oldest first.
    pub fn outcomes(&self, campaign: i64) -> Result<Vec<Outcome>, StoreError> {
        const WHAT: &str = "list a campaign's outcomes";
        type Row = (i64, String, String, String, Option<f64>, Option<String>);
        let rows: Vec<Row> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT program_id, point_id, role, status, median_s, costs FROM measurements \
                 WHERE campaign_id = $1 ORDER BY id",
            )
            .bind(campaign)
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })?;
        rows.into_iter()
            .map(|(program, point_id, role, status, median_s, costs)| {
                Ok(Outcome {
                    program,
                    point_id,
                    role: parse_column(WHAT, &role)?,
                    status: parse_column(WHAT, &status)?,
                    median_s,
                    costs: costs.and_then(|c| serde_json::from_str(&c).ok()),
                })
            })
            .collect()
    }

    /// Kernel names with at least one program in the store, sorted.
    pub fn kernels(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as("SELECT DISTINCT kernel FROM programs ORDER BY kernel")
                .fetch_all(pool)
                .await
                .map_err(query("list kernels"))
        })?;
        Ok(rows.into_iter().map(|(k,)| k).collect())
    }
}
