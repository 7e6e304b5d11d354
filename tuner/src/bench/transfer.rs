//! `polytune bench transfer`: how well what the store learned on some
//! kernels and machines predicts another, from the measurements a store
//! already holds (no building, no running).
//!
//! Each campaign's measurements of one program (a kernel on one dataset, on
//! one machine) are a *group*. For every kernel, leave-one-kernel-out: the
//! model's prior is grown on the other kernels' rows alone, and its
//! predictions for each group of the held-out kernel are compared with the
//! measured times by Spearman's rank correlation. Then the model strategy
//! is replayed on each group's own points, its outcome for a point the time
//! the group measured: cold (this campaign's points alone), from the
//! leave-one-kernel-out prior, from the other machines' rows alone (a new
//! machine's campaign: what the two-machine table asks), and from
//! every other campaign's rows, each until it first evaluates a point within
//! 5% of the group's best: the median over `SEEDS` seeds of the evaluations
//! and of their share of the group's running time (the sum of its measured
//! times; an exhaustive campaign's group makes that the exhaustive time,
//! builds left out).

use std::collections::BTreeMap;

use store::TransferRow;
use vocab::knobs::Point;

use super::Out;
use crate::campaign::{jobs, transfer};
use crate::error::{Error, Result};
use crate::program::Dataset;
use crate::strategy::features::{self, Context};
use crate::strategy::{self, Model, Prior, StrategyKind};

/// "Within 5% of the best".
const CLOSE: f64 = 1.05;
const SEEDS: u64 = 20;

/// The table of `db`'s groups of `min_points` or more points, written to `out` row by row.
pub fn run(db: &store::Store, min_points: usize, out: Out) -> Result<()> {
    let location = db.target();
    let rows = db.transfer_rows(None)?;
    let mut groups: BTreeMap<(String, String, i64, i64), Vec<&TransferRow>> = BTreeMap::new();
    for r in &rows {
        groups.entry((r.kernel.clone(), r.dataset.clone(), r.machine_id, r.campaign_id)).or_default().push(r);
    }
    groups.retain(|_, g| g.len() >= min_points);
    if groups.is_empty() {
        return Err(Error::input(format!(
            "{location}: no campaign measured {min_points} or more verified points of a program"
        )));
    }
    out(&format!(
        "store {location}: {} verified measurements, {} groups of {min_points}+ points",
        rows.len(),
        groups.len()
    ));
    out(&format!(
        "evaluations until a point within {CLOSE}x of the group's best (replayed on its times, median over {SEEDS} \
         seeds)"
    ));
    out("(each cell: median evaluations, min-max; the median share of the group's running time they took)");
    out("| kernel | dataset | machine | points | rank correlation (other kernels) | cold | other kernels | other \
         machines | all other campaigns |");
    out("|---|---|---|---|---|---|---|---|---|");
    let mut per_kernel: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for ((kernel, dataset, machine_id, campaign_id), group) in &groups {
        let mut context: Context = group[0]
            .kernel_features
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        context.extend(features::machine(&group[0].fingerprint));
        let here = transfer::Here { kernel, dataset, machine_id: *machine_id, context };
        let other_kernels = transfer::prior(&rows, &here, |r| r.kernel != *kernel);
        let other_machines = transfer::prior(&rows, &here, |r| r.machine_id != *machine_id);
        let elsewhere = transfer::prior(&rows, &here, |r| r.campaign_id != *campaign_id);
        // The group's points once each, with their measured time over the original's.
        let mut times: BTreeMap<String, (Point, f64)> = BTreeMap::new();
        for r in group {
            if let Ok(p) = serde_json::from_str::<Point>(&r.point_json) {
                times.entry(p.id()).or_insert((p, r.log_ratio.exp()));
            }
        }
        let space: Vec<Point> = times.values().map(|(p, _)| p.clone()).collect();
        let best = times.values().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
        let total: f64 = times.values().map(|(_, t)| *t).sum();
        let set = dataset.parse().unwrap_or(Dataset::Large);
        let correlation = other_kernels.as_ref().and_then(|prior| {
            let model = Model::with_prior(space.clone(), set, 0, Some(prior));
            let pairs: Vec<(f64, f64)> =
                model.prior_means().into_iter().map(|(p, m)| (m, times[&p.id()].1.ln())).collect();
            (pairs.len() >= 3).then(|| strategy::rank_correlation(&pairs))
        });
        if let Some(c) = correlation {
            per_kernel.entry(kernel).or_default().push(c);
        }
        let replayed = |prior: Option<&Prior>| -> String {
            let mut runs: Vec<(usize, f64)> = (0..SEEDS)
                .map(|seed| {
                    let mut s = Model::with_prior(space.clone(), set, seed, prior);
                    let batch = StrategyKind::Model.batch(jobs());
                    let time = |p: &Point, _| times.get(&p.id()).map(|(_, t)| *t);
                    let close = |p: &strategy::Proposal| times[&p.point.id()].1 <= CLOSE * best;
                    let run = strategy::replay_until(&mut s, batch, time, close);
                    let n = run.iter().position(close).map_or(run.len(), |i| i + 1);
                    let spent: f64 = run[..n].iter().map(|p| times[&p.point.id()].1).sum();
                    (n, spent / total)
                })
                .collect();
            runs.sort_by_key(|r| r.0);
            let (lo, hi) = (runs[0].0, runs[runs.len() - 1].0);
            let mid = runs[runs.len() / 2].0;
            let mut shares: Vec<f64> = runs.iter().map(|r| r.1).collect();
            shares.sort_by(f64::total_cmp);
            format!("{mid}, {lo}-{hi}; {:.0}%", 100.0 * shares[shares.len() / 2])
        };
        let or_none =
            |p: &Option<Prior>| p.as_ref().map_or_else(|| "no rows".to_string(), |p| replayed(Some(p)));
        out(&format!(
            "| {kernel} | {dataset} | {machine_id} | {} | {} | {} | {} | {} | {} |",
            space.len(),
            correlation.map_or_else(|| "-".to_string(), |c| format!("{c:.2}")),
            replayed(None),
            or_none(&other_kernels),
            or_none(&other_machines),
            or_none(&elsewhere)
        ));
    }
    let means: Vec<f64> = per_kernel.values().map(|c| c.iter().sum::<f64>() / c.len() as f64).collect();
    if !means.is_empty() {
        out(&format!(
            "mean rank correlation over {} held-out kernels: {:.2}",
            means.len(),
            means.iter().sum::<f64>() / means.len() as f64
        ));
    }
    Ok(())
}
