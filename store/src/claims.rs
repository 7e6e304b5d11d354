//! Claims: which worker is measuring which point of a campaign. Several processes, on one
//! machine or many, work on one campaign by claiming each point before they schedule, build
//! and measure it. A claim is a lease: the worker's heartbeat extends it, and once it has
//! expired (the worker was killed, its node lost) another worker may take the point over.
//! Recording the measurement deletes the claim in the same transaction, and the measurement's
//! unique key keeps the first record should a worker presumed dead finish after all: a point
//! is measured to completion once.
//!
//! The claim is one statement, atomic on both backends: an insert that on conflict takes the
//! row over only where the lease has expired (or the row is already this worker's), and that
//! inserts nothing when the point has been measured. Unlike a queue filled ahead of time
//! (`SELECT … FOR UPDATE SKIP LOCKED`), it serves strategies that choose their next points
//! from the outcomes so far (halving, the model): the points are claimed as proposed.

use std::time::Duration;

use crate::{query, Pool, Role, Store, StoreError, Timestamp};

/// One point of a campaign, on one program, as one role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim<'a> {
    pub campaign: i64,
    pub program: i64,
    pub point_id: &'a str,
    pub role: Role,
}

fn expiry(lease: Duration) -> i64 {
    Timestamp::now().millis().saturating_add(lease.as_millis().min(i64::MAX as u128) as i64)
}

impl Store {
    /// Claims `c` for `worker` for `lease`: true when the point is now this worker's (it was
    /// free, its lease had expired, or it was already this worker's); false when another
    /// worker holds it or it has been measured.
    pub fn claim(&self, c: &Claim, worker: &str, lease: Duration) -> Result<bool, StoreError> {
        const WHAT: &str = "claim a point";
        let now = Timestamp::now().millis();
        let expires = expiry(lease);
        let claimed: Option<(String,)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "INSERT INTO claims (campaign_id, program_id, point_id, role, worker, expires_at) \
                 SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM measurements \
                 WHERE campaign_id = $1 AND program_id = $2 AND point_id = $3 AND role = $4) \
                 ON CONFLICT (campaign_id, program_id, point_id, role) DO UPDATE \
                 SET worker = excluded.worker, expires_at = excluded.expires_at \
                 WHERE claims.expires_at < $7 OR claims.worker = excluded.worker \
                 RETURNING worker",
            )
            .bind(c.campaign)
            .bind(c.program)
            .bind(c.point_id)
            .bind(c.role.as_str())
            .bind(worker)
            .bind(expires)
            .bind(now)
            .fetch_optional(pool)
            .await
            .map_err(query(WHAT))
        })?;
        Ok(claimed.is_some())
    }

    /// Extends every claim `worker` holds to `lease` from now; returns how many it holds.
    pub fn heartbeat(&self, worker: &str, lease: Duration) -> Result<u64, StoreError> {
        let expires = expiry(lease);
        with_pool!(self, |pool, _begin| {
            sqlx::query("UPDATE claims SET expires_at = $1 WHERE worker = $2")
                .bind(expires)
                .bind(worker)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
                .map_err(query("extend a worker's claims"))
        })
    }

    /// Gives up every claim `worker` holds (it stops; its points are free at once).
    pub fn release(&self, worker: &str) -> Result<u64, StoreError> {
        with_pool!(self, |pool, _begin| {
            sqlx::query("DELETE FROM claims WHERE worker = $1")
                .bind(worker)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
                .map_err(query("release a worker's claims"))
        })
    }

    /// The claims of `campaign` whose lease has not expired.
    pub fn live_claims(&self, campaign: i64) -> Result<Vec<LiveClaim>, StoreError> {
        const WHAT: &str = "list a campaign's claims";
        let now = Timestamp::now().millis();
        let rows: Vec<(i64, String, String, String)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT program_id, point_id, role, worker FROM claims \
                 WHERE campaign_id = $1 AND expires_at >= $2 ORDER BY program_id, point_id",
            )
            .bind(campaign)
            .bind(now)
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })?;
        rows.into_iter()
            .map(|(program, point_id, role, worker)| {
                Ok(LiveClaim { program, point_id, role: crate::parse_column(WHAT, &role)?, worker })
            })
            .collect()
    }
}

/// A claim someone holds now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveClaim {
    pub program: i64,
    pub point_id: String,
    pub role: Role,
    pub worker: String,
}
