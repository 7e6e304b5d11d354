//! What other machines learned about a kernel: the points a campaign on a
//! new machine measures first (a warm start).

use std::collections::{BTreeMap, HashSet};

use crate::{query, Pool, Store, StoreError};

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
