//! What other machines learned about a kernel: the points a campaign on a
//! new machine measures first (a warm start).

use std::collections::{BTreeMap, HashSet};

use crate::{query, Pool, Store, StoreError};

/// One verified measurement of the store, for a search model that learns
/// across campaigns (`Store::transfer_rows`).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRow {
    pub kernel: String,
    pub dataset: String,
    pub campaign_id: i64,
    /// The program's kernel features as JSON, where recorded.
    pub kernel_features: Option<String>,
    pub machine_id: i64,
    pub fingerprint: String,
    pub point_json: String,
    /// ln(its time / its campaign's original's time on the program).
    pub log_ratio: f64,
}

/// A point that ran well on another machine.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownPoint {
    /// The point's canonical JSON, as measured there.
    pub point_json: String,
    /// The machine's id in the store, and its profile name.
    pub machine_id: i64,
    pub machine: String,
    /// Its speedup over its own campaign's original.
    pub speedup: f64,
}

impl Store {
    /// Records `program`'s kernel features (JSON), replacing what was there.
    pub fn set_program_features(&self, program: i64, features_json: &str) -> Result<(), StoreError> {
        const WHAT: &str = "record a program's features";
        crate::json_text(WHAT, "kernel features", features_json)?;
        with_pool!(self, |pool, _begin| {
            sqlx::query("UPDATE programs SET features = $1 WHERE id = $2")
                .bind(features_json)
                .bind(program)
                .execute(pool)
                .await
                .map_err(query(WHAT))?;
            Ok(())
        })
    }

    /// Every verified variant of the store against its campaign's original
    /// on the same program and machine, but those of campaign `except`:
    /// what a search model learns from before its own campaign has measured
    /// anything. Each point once per campaign and program, in id order.
    pub fn transfer_rows(&self, except: Option<i64>) -> Result<Vec<TransferRow>, StoreError> {
        type Row = (String, String, i64, Option<String>, i64, String, String, f64, f64);
        let rows: Vec<Row> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT p.kernel, p.dataset, v.campaign_id, p.features, mc.id, mc.fingerprint, pt.json, \
                 v.median_s, r.median_s \
                 FROM measurements v \
                 JOIN programs p ON p.id = v.program_id \
                 JOIN machines mc ON mc.id = v.machine_id \
                 JOIN points pt ON pt.id = v.point_id \
                 JOIN measurements r ON r.campaign_id = v.campaign_id AND r.program_id = v.program_id \
                   AND r.machine_id = v.machine_id \
                   AND r.role = 'reference' AND r.status = 'ok' AND r.median_s > 0 \
                 WHERE v.campaign_id <> $1 AND v.role = 'variant' AND v.status = 'ok' AND v.median_s > 0 \
                 ORDER BY v.id",
            )
            .bind(except.unwrap_or(-1))
            .fetch_all(pool)
            .await
            .map_err(query("read the store's measurements for a search model"))
        })?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    kernel,
                    dataset,
                    campaign_id,
                    kernel_features,
                    machine_id,
                    fingerprint,
                    point_json,
                    v,
                    r,
                )| {
                    TransferRow {
                        kernel,
                        dataset,
                        campaign_id,
                        kernel_features,
                        machine_id,
                        fingerprint,
                        point_json,
                        log_ratio: (v / r).ln(),
                    }
                },
            )
            .collect())
    }

    /// Whether `machine` has any variant of `kernel` measured on `dataset`.
    pub fn has_history(&self, kernel: &str, dataset: &str, machine: i64) -> Result<bool, StoreError> {
        let row: Option<(i64,)> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT m.id FROM measurements m JOIN programs p ON p.id = m.program_id \
                 WHERE p.kernel = $1 AND p.dataset = $2 AND m.machine_id = $3 AND m.role = 'variant' \
                 LIMIT 1",
            )
            .bind(kernel)
            .bind(dataset)
            .bind(machine)
            .fetch_optional(pool)
            .await
            .map_err(query("look for a machine's history of a kernel"))
        })?;
        Ok(row.is_some())
    }

    /// The verified points of `kernel` on `dataset` on each machine but
    /// `except`, each machine's ranked by speedup over their campaign's
    /// original (times from different machines are never compared, only
    /// ranks), each point once per machine and of the points that made one
    /// program (one build) the first: every machine's best first, then every
    /// machine's second, and so on.
    pub fn known_elsewhere(
        &self,
        kernel: &str,
        dataset: &str,
        except: i64,
    ) -> Result<Vec<KnownPoint>, StoreError> {
        type Row = (String, Option<i64>, String, i64, String, f64);
        let rows: Vec<Row> = with_pool!(self, |pool, _begin| {
            sqlx::query_as(
                "SELECT v.point_id, v.build_id, pt.json, mc.id, mc.name, r.median_s / v.median_s AS speedup \
                 FROM measurements v \
                 JOIN programs p ON p.id = v.program_id \
                 JOIN machines mc ON mc.id = v.machine_id \
                 JOIN points pt ON pt.id = v.point_id \
                 JOIN measurements r ON r.campaign_id = v.campaign_id AND r.program_id = v.program_id \
                   AND r.role = 'reference' AND r.status = 'ok' AND r.median_s > 0 \
                 WHERE p.kernel = $1 AND p.dataset = $2 AND v.machine_id <> $3 \
                   AND v.role = 'variant' AND v.status = 'ok' AND v.median_s > 0 \
                 ORDER BY speedup DESC, v.id",
            )
            .bind(kernel)
            .bind(dataset)
            .bind(except)
            .fetch_all(pool)
            .await
            .map_err(query("read what other machines measured of a kernel"))
        })?;
        // Each machine's ranking, best first, each point once, and of the
        // points that made one program (one build, one time) the first.
        let mut ranked: BTreeMap<i64, Vec<KnownPoint>> = BTreeMap::new();
        let (mut seen, mut built) = (HashSet::new(), HashSet::new());
        for (id, build, point_json, machine_id, machine, speedup) in rows {
            let new_build = build.is_none_or(|b| built.insert((machine_id, b)));
            if seen.insert((machine_id, id)) && new_build {
                let known = KnownPoint { point_json, machine_id, machine, speedup };
                ranked.entry(machine_id).or_default().push(known);
            }
        }
        let longest = ranked.values().map(Vec::len).max().unwrap_or(0);
        Ok((0..longest)
            .flat_map(|rank| ranked.values().filter_map(move |list| list.get(rank).cloned()))
            .collect())
    }
}
