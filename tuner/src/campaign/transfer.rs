//! What the store's other campaigns teach a new one (issue 39): each
//! verified measurement as a row of the model strategy's prior, its time
//! over its own campaign's original's (comparable across kernels and
//! machines where seconds are not), with the features of its kernel and its
//! machine, and weighted toward the kernel and the machine of the campaign
//! being run.

use std::collections::HashMap;

use crate::error::Result;
use store::{Store, TransferRow};
use vocab::knobs::Point;

use crate::program::Dataset;
use crate::strategy::features::{self, Context};
use crate::strategy::{Known, Prior};

use super::Kernel;

/// A row of the same kernel on the same dataset counts this many times one
/// of another kernel, and a row of the same machine this many times one of
/// another machine (the two multiply).
const SAME_KERNEL: f64 = 4.0;
const SAME_MACHINE: f64 = 2.0;

/// The campaign being run, as its prior sees it.
pub struct Here<'a> {
    pub kernel: &'a str,
    pub dataset: &'a str,
    pub machine_id: i64,
    pub context: Context,
}

impl<'a> Here<'a> {
    /// `kernel`'s program on `dataset` on the machine of `fingerprint_json`.
    pub fn of(kernel: &'a Kernel, dataset: Dataset, machine_id: i64, fingerprint_json: &str) -> Here<'a> {
        let prog = &kernel.programs[&dataset];
        let mut context = features::kernel(&prog.scop, &prog.deps, dataset);
        context.extend(features::machine(fingerprint_json));
        Here { kernel: &kernel.spec.name, dataset: dataset.name(), machine_id, context }
    }
}

/// The prior of rows `keep` lets through, for `here`; `None` when none is
/// left. Rows whose point does not parse (a newer version's) are skipped.
pub fn prior(rows: &[TransferRow], here: &Here, keep: impl Fn(&TransferRow) -> bool) -> Option<Prior> {
    let mut machines: HashMap<i64, Context> = HashMap::new();
    let mut kernels: HashMap<&str, Context> = HashMap::new();
    let known: Vec<Known> = rows
        .iter()
        .filter(|r| keep(r))
        .filter_map(|r| {
            let point: Point = serde_json::from_str(&r.point_json).ok()?;
            let mut context = kernels
                .entry(r.kernel_features.as_deref().unwrap_or(""))
                .or_insert_with(|| {
                    r.kernel_features
                        .as_deref()
                        .and_then(|j| serde_json::from_str(j).ok())
                        .unwrap_or_default()
                })
                .clone();
            context.extend(
                machines.entry(r.machine_id).or_insert_with(|| features::machine(&r.fingerprint)).clone(),
            );
            let same_kernel = r.kernel == here.kernel && r.dataset == here.dataset;
            let weight = if same_kernel { SAME_KERNEL } else { 1.0 }
                * if r.machine_id == here.machine_id { SAME_MACHINE } else { 1.0 };
            Some(Known { point, context, log_ratio: r.log_ratio, weight })
        })
        .collect();
    (!known.is_empty()).then(|| Prior { known, here: here.context.clone() })
}

/// The prior of `kernel`'s campaign `campaign_id` on `dataset`: every
/// verified measurement of `db` but that campaign's own.
pub fn campaign_prior(db: &Store, campaign_id: i64, here: &Here) -> Result<Option<Prior>> {
    let rows = db.transfer_rows(Some(campaign_id))?;
    Ok(prior(&rows, here, |_| true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, machine_id: i64, point_json: &str, log_ratio: f64) -> TransferRow {
        TransferRow {
            kernel: kernel.into(),
            dataset: "LARGE".into(),
            campaign_id: machine_id,
            kernel_features: Some(format!(r#"{{"kernel.depth":{}}}"#, kernel.len())),
            machine_id,
            fingerprint: r#"{"cpu_model":"x","logical_cores":4,"caches":[],"gpus":[],"compiler":"gcc",
                "compiler_version":"12","flags":[]}"#
                .into(),
            point_json: point_json.into(),
            log_ratio,
        }
    }

    /// Rows of this kernel and of this machine weigh more, each keeps its
    /// own kernel's and machine's features, and a point this version cannot
    /// read is left out.
    #[test]
    fn rows_are_weighted_toward_this_kernel_and_machine() {
        let point = serde_json::to_string(&Point {
            scheduler: vocab::knobs::Scheduler::Isl,
            tiles: Some(vec![32]),
            threads: 2,
            code: Default::default(),
        })
        .unwrap();
        let rows = [
            row("gemm", 1, &point, -1.0),
            row("gemm", 2, &point, -0.5),
            row("2mm", 1, &point, -0.2),
            row("2mm", 2, &point, 0.1),
            row("gemm", 1, r#"{"from":"the future"}"#, -3.0),
        ];
        let here = Here { kernel: "gemm", dataset: "LARGE", machine_id: 1, context: Context::new() };
        let all = prior(&rows, &here, |_| true).unwrap();
        let weights: Vec<f64> = all.known.iter().map(|k| k.weight).collect();
        assert_eq!(weights, [SAME_KERNEL * SAME_MACHINE, SAME_KERNEL, SAME_MACHINE, 1.0]);
        assert_eq!(all.known[2].context["kernel.depth"], 3.0);
        assert_eq!(all.known[0].context["machine.cores"], 2.0);
        assert!(prior(&rows, &here, |r| r.kernel == "syrk").is_none());
    }
}
