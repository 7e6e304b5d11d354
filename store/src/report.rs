//! What a report reads: every measurement with the names it is reported under.

use serde::Serialize;

use crate::{parse_column, query, Pool, Role, Store, StoreError, Timestamp};

/// One measurement, joined with its machine, program, campaign and point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportRow {
    pub measurement: i64,
    pub machine: String,
    pub kernel: String,
    pub dataset: String,
    pub campaign: i64,
    /// When the campaign was created: the origin of a report's time axis.
    pub campaign_started: Timestamp,
    pub role: Role,
    pub point_id: String,
    pub point_json: String,
    pub status: crate::Status,
    pub median_s: Option<f64>,
    pub spread: Option<f64>,
    /// The timed runs (seconds).
    pub samples: Vec<f64>,
    pub measured_at: Timestamp,
    /// A warm-started point's machine of origin (`Record::origin`).
    pub origin: Option<String>,
}

/// Which measurements a report covers; an empty list selects all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportFilter {
    pub machines: Vec<String>,
    pub kernels: Vec<String>,
}

type Raw = (
    i64,
    String,
    String,
    String,
    i64,
    i64,
    String,
    String,
    String,
    String,
    Option<f64>,
    Option<f64>,
    String,
    i64,
    Option<String>,
);

impl Store {
    /// Every measurement the filter selects, in the order it was recorded (one read
    /// transaction: a consistent snapshot while campaigns go on writing).
    pub fn report_rows(&self, filter: &ReportFilter) -> Result<Vec<ReportRow>, StoreError> {
        const WHAT: &str = "read the measurements for a report";
        let rows: Vec<Raw> = with_pool!(self, |pool, _begin| {
            let mut tx = pool.begin().await.map_err(query(WHAT))?;
            let rows = sqlx::query_as(
                "SELECT m.id, mc.name, p.kernel, p.dataset, c.id, c.created_at, m.role, m.point_id, \
                        pt.json, m.status, m.median_s, m.spread, m.samples, m.created_at, m.origin \
                 FROM measurements m \
                 JOIN machines mc ON mc.id = m.machine_id \
                 JOIN programs p ON p.id = m.program_id \
                 JOIN campaigns c ON c.id = m.campaign_id \
                 JOIN points pt ON pt.id = m.point_id \
                 ORDER BY m.id",
            )
            .fetch_all(&mut *tx)
            .await
            .map_err(query(WHAT))?;
            tx.commit().await.map_err(query(WHAT))?;
            Ok(rows)
        })?;
        let wanted = |list: &[String], name: &str| list.is_empty() || list.iter().any(|x| x == name);
        rows.into_iter()
            .filter(|r| wanted(&filter.machines, &r.1) && wanted(&filter.kernels, &r.2))
            .map(|r| {
                Ok(ReportRow {
                    measurement: r.0,
                    machine: r.1,
                    kernel: r.2,
                    dataset: r.3,
                    campaign: r.4,
                    campaign_started: Timestamp::from_millis(r.5),
                    role: parse_column(WHAT, &r.6)?,
                    point_id: r.7,
                    point_json: r.8,
                    status: parse_column(WHAT, &r.9)?,
                    median_s: r.10,
                    spread: r.11,
                    samples: crate::parse_samples(WHAT, &r.12)?,
                    measured_at: Timestamp::from_millis(r.13),
                    origin: r.14,
                })
            })
            .collect()
    }
}

/// A measured point's schedule, as `explain --point` reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasuredSchedule {
    pub kernel: String,
    pub dataset: String,
    /// The original program's path, as recorded.
    pub program_path: String,
    pub point_json: String,
    pub tree: String,
}

impl Store {
    /// The schedule tree recorded for point `point_id` of `kernel` (the newest measurement
    /// that has one); `None` when there is none.
    pub fn measured_schedule(
        &self,
        kernel: &str,
        point_id: &str,
    ) -> Result<Option<MeasuredSchedule>, StoreError> {
        const WHAT: &str = "find a point's schedule";
        let row: Option<(String, String, String, String, String)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT p.kernel, p.dataset, p.path, pt.json, s.tree FROM measurements m \
                 JOIN programs p ON p.id = m.program_id \
                 JOIN points pt ON pt.id = m.point_id \
                 JOIN schedules s ON s.id = m.schedule_id \
                 WHERE p.kernel = $1 AND m.point_id = $2 ORDER BY m.id DESC LIMIT 1",
            )
            .bind(kernel)
            .bind(point_id)
            .fetch_optional(pool)
            .await
            .map_err(query(WHAT))
        })?;
        Ok(row.map(|(kernel, dataset, program_path, point_json, tree)| MeasuredSchedule {
            kernel,
            dataset,
            program_path,
            point_json,
            tree,
        }))
    }
}

/// A campaign and how far it got.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CampaignProgress {
    pub campaign: crate::Campaign,
    pub measurements: i64,
    /// Of which verified `ok`.
    pub verified: i64,
    /// When its newest measurement was recorded, if it has any.
    pub last_measured_at: Option<Timestamp>,
}

impl Store {
    /// Every campaign with its measurement counts, oldest first.
    pub fn campaign_progress(&self) -> Result<Vec<CampaignProgress>, StoreError> {
        const WHAT: &str = "read the campaigns' progress";
        let campaigns = self.campaigns()?;
        let counts: Vec<(i64, i64, i64, Option<i64>)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT campaign_id, COUNT(*), SUM(CASE WHEN status = 'ok' THEN 1 ELSE 0 END), MAX(created_at) \
                 FROM measurements GROUP BY campaign_id",
            )
            .fetch_all(pool)
            .await
            .map_err(query(WHAT))
        })?;
        Ok(campaigns
            .into_iter()
            .map(|c| {
                let row = counts.iter().find(|r| r.0 == c.id);
                CampaignProgress {
                    measurements: row.map_or(0, |r| r.1),
                    verified: row.map_or(0, |r| r.2),
                    last_measured_at: row.and_then(|r| r.3).map(Timestamp::from_millis),
                    campaign: c,
                }
            })
            .collect())
    }
}
