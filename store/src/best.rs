//! `best`: the best-known variant of a kernel, compared within each campaign.

use std::collections::BTreeMap;

use crate::{faster_beyond_noise, parse_samples, query, Best, Pool, Store, StoreError, Times, Timestamp};

/// What `best`'s errors say it was doing.
const WHAT: &str = "find the best variant";

/// A campaign's reference and its fastest ok variant, for `best`.
struct Candidate {
    campaign_id: i64,
    program_id: i64,
    machine_id: i64,
    ref_median: f64,
    ref_spread: Option<f64>,
    ref_samples: String,
    ref_rounding_noise: Option<String>,
    variant: i64,
    median: f64,
}

from_row!(Candidate {
    campaign_id,
    program_id,
    machine_id,
    ref_median,
    ref_spread,
    ref_samples,
    ref_rounding_noise,
    variant,
    median
});

struct BestRow {
    kernel: String,
    dataset: String,
    program_path: String,
    source_hash: String,
    machine: String,
    machine_fingerprint: String,
    campaign: i64,
    measurement: i64,
    point_id: String,
    point_json: String,
    schedule: Option<String>,
    source_path: Option<String>,
    median_s: f64,
    spread: Option<f64>,
    samples: String,
    kernel_s: Option<f64>,
    origin: Option<String>,
    created_at: i64,
}

from_row!(BestRow {
    kernel,
    dataset,
    program_path,
    source_hash,
    machine,
    machine_fingerprint,
    campaign,
    measurement,
    point_id,
    point_json,
    schedule,
    source_path,
    median_s,
    spread,
    samples,
    kernel_s,
    origin,
    created_at,
});

impl Store {
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
        with_pool!(self, |pool, _begin| {
            // One read transaction: a consistent snapshot while writers go on.
            let mut tx = pool.begin().await.map_err(query(WHAT))?;
            // Each ok reference of the kernel with its campaign's fastest ok variant (one index
            // seek each, in one round trip), oldest reference first.
            let candidates: Vec<Candidate> = sqlx::query_as(
                "SELECT r.campaign_id, r.program_id, r.machine_id, r.median_s AS ref_median, \
                        r.spread AS ref_spread, r.samples AS ref_samples, r.rounding_noise AS ref_rounding_noise, \
                        v.id AS variant, v.median_s AS median \
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
            let Some(winner) = winner(candidates) else { return Ok(None) };
            let row: BestRow = sqlx::query_as(
                "SELECT p.kernel, p.dataset, p.path AS program_path, p.source_hash, mc.name AS machine, \
                        mc.fingerprint AS machine_fingerprint, \
                        m.campaign_id AS campaign, m.id AS measurement, m.point_id, pt.json AS point_json, \
                        s.tree AS schedule, b.path AS source_path, m.median_s, m.spread, m.samples, \
                        m.kernel_s, m.origin, m.created_at \
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
            // The runner-up: the next slower verified time (points that generate the winner's
            // program share its measurement, and its time).
            let runner_up: Option<(f64, Option<f64>, String)> = sqlx::query_as(
                "SELECT median_s, spread, samples FROM measurements \
                 WHERE campaign_id = $1 AND program_id = $2 AND machine_id = $3 AND role = 'variant' \
                   AND status = 'ok' AND median_s > $4 \
                 ORDER BY median_s, id LIMIT 1",
            )
            .bind(winner.campaign_id)
            .bind(winner.program_id)
            .bind(winner.machine_id)
            .bind(winner.median)
            .fetch_optional(&mut *tx)
            .await
            .map_err(query(WHAT))?;
            tx.commit().await.map_err(query(WHAT))?;
            best_of(row, &winner, runner_up).map(Some)
        })
    }
}

/// The winning campaign: one candidate per (campaign, program, machine), from its newest reference
/// (`candidates` come oldest first); of those, the highest speedup, then the lower median, then the
/// older measurement.
fn winner(candidates: Vec<Candidate>) -> Option<Candidate> {
    let mut groups: BTreeMap<(i64, i64, i64), Candidate> = BTreeMap::new();
    for c in candidates {
        groups.insert((c.campaign_id, c.program_id, c.machine_id), c);
    }
    groups.into_values().reduce(|a, b| {
        let (sa, sb) = (speedup(&a), speedup(&b));
        let b_better =
            sb > sa || (sb == sa && (b.median < a.median || (b.median == a.median && b.variant < a.variant)));
        if b_better {
            b
        } else {
            a
        }
    })
}

/// A candidate's speedup over its own campaign's reference.
fn speedup(c: &Candidate) -> f64 {
    c.ref_median / c.median
}

/// The best variant as `best` reports it: the winner's measurement `row`, and whether it is faster
/// beyond noise than its reference and than the `runner_up` (median, spread, samples).
fn best_of(
    row: BestRow,
    winner: &Candidate,
    runner_up: Option<(f64, Option<f64>, String)>,
) -> Result<Best, StoreError> {
    let samples = parse_samples(WHAT, &row.samples)?;
    let ref_samples = parse_samples(WHAT, &winner.ref_samples)?;
    let reference_rounding_noise = match &winner.ref_rounding_noise {
        None => None,
        Some(text) => Some(serde_json::from_str(text).map_err(|e| StoreError::Invalid {
            what: WHAT,
            reason: format!("the reference's rounding noise is not readable JSON: {e}"),
        })?),
    };
    let runner_up = match runner_up {
        Some((m, s, samples)) => Some((m, s, parse_samples(WHAT, &samples)?)),
        None => None,
    };
    let times = |median_s, spread, samples| Times { median_s, spread, samples };
    let winner_times = times(row.median_s, row.spread, &samples[..]);
    let clear_of_original =
        faster_beyond_noise(winner_times, times(winner.ref_median, winner.ref_spread, &ref_samples));
    let clear_of_runner_up =
        runner_up.as_ref().and_then(|(m, s, r)| faster_beyond_noise(winner_times, times(*m, *s, r)));
    Ok(Best {
        kernel: row.kernel,
        dataset: row.dataset,
        machine: row.machine,
        program_path: row.program_path,
        source_hash: row.source_hash,
        machine_fingerprint: row.machine_fingerprint,
        campaign: row.campaign,
        measurement: row.measurement,
        point_id: row.point_id,
        point_json: row.point_json,
        schedule: row.schedule,
        source_path: row.source_path,
        median_s: row.median_s,
        spread: row.spread,
        samples,
        kernel_s: row.kernel_s,
        origin: row.origin,
        reference_median_s: winner.ref_median,
        reference_spread: winner.ref_spread,
        reference_rounding_noise,
        speedup: speedup(winner),
        measured_at: Timestamp::from_millis(row.created_at),
        runner_up_median_s: runner_up.as_ref().map(|r| r.0),
        runner_up_spread: runner_up.as_ref().and_then(|r| r.1),
        clear_of_original,
        clear_of_runner_up,
    })
}
