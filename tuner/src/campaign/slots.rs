//! Measuring a batch: each built program on the next free slot of its
//! kind, racing against the best time so far as it falls.

use std::sync::atomic::Ordering;
use std::time::Instant;

use executor::build::BuildOutcome;
use executor::evaluate::Evaluator;
use executor::measure::{MeasureConfig, Measurement, Status};

use super::{interrupted, Campaign, On};

/// A variant within this factor of the best so far is a contender: a high
/// spread gets it more runs (`MeasureConfig::remeasure_below_s`).
const CONTENDER: f64 = 1.25;

impl Campaign<'_> {
    /// Measures each built program on the next free slot of its kind (a
    /// CUDA form on a GPU slot), as many at once as there are slots; the
    /// programs in their order, less those a Ctrl-C cut short (a child
    /// killed by the user's signal is not a crash of the variant) and those
    /// the time budget left unstarted. Each
    /// program comes with its key, threads, whether it is a CUDA form and
    /// the environment it runs with.
    #[allow(clippy::type_complexity)]
    pub(super) fn measure_on_slots<'c>(
        &mut self,
        on: &On,
        built: Vec<(&'c String, Option<usize>, bool, Vec<(String, String)>, BuildOutcome)>,
    ) -> Vec<(&'c String, Measurement, f64)> {
        let (busy, peak) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0));
        let results: Vec<std::sync::Mutex<Option<(Measurement, f64)>>> =
            built.iter().map(|_| std::sync::Mutex::new(None)).collect();
        // One queue per kind of slot.
        let queues: [(Vec<usize>, std::sync::atomic::AtomicUsize); 2] = [false, true]
            .map(|gpu| ((0..built.len()).filter(|&i| built[i].2 == gpu).collect(), Default::default()));
        // The best time so far, lowered by each measurement of the batch as
        // it ends: racing and re-measurement are relative to it.
        let best = std::sync::Mutex::new(self.best_so_far(on));
        // Past the time budget no measurement starts, once this invocation
        // has one (a point being measured then runs to its end).
        let deadline = self.deadline();
        let finished = std::sync::atomic::AtomicUsize::new(self.trace.len());
        let spent = || super::time_spent(deadline, finished.load(Ordering::SeqCst));
        let race = self.config.race;
        let config = &self.evaluator.config;
        let cpu = self.slots.iter().map(|slot| (slot.clone(), config.clone(), &queues[0]));
        let gpus = self.gpus.iter().flat_map(|g| &g.slots);
        let gpu = gpus.map(|g| (g.host(), config.on_gpu(g), &queues[1]));
        let workers: Vec<_> = cpu.chain(gpu).collect();
        std::thread::scope(|scope| {
            for (slot, config, (queue, next)) in workers {
                let mut evaluator = Evaluator {
                    builder: self.evaluator.builder.clone(),
                    slot,
                    config: config.clone(),
                    jobs: self.evaluator.jobs,
                };
                let (busy, peak, results, built, best) = (&busy, &peak, &results, &built, &best);
                let (finished, spent) = (&finished, &spent);
                scope.spawn(move || {
                    while let Some(&i) = queue.get(next.fetch_add(1, Ordering::SeqCst)) {
                        if interrupted() || spent() {
                            break;
                        }
                        let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        let (_, threads, _, env, outcome) = &built[i];
                        let best_s = *best.lock().expect("no panics while holding it");
                        evaluator.config = MeasureConfig {
                            race_above_s: best_s.zip(race).map(|(b, f)| f * b),
                            remeasure_below_s: best_s.map(|b| CONTENDER * b),
                            ..config.clone()
                        };
                        let started = Instant::now();
                        let m = evaluator.measure_in(on.reference, outcome, *threads, env);
                        let run_s = started.elapsed().as_secs_f64();
                        if let (Status::Ok, Some(t)) = (m.status, m.median_s.filter(|&t| t > 0.0)) {
                            let mut best = best.lock().expect("no panics while holding it");
                            *best = Some(best.map_or(t, |b| b.min(t)));
                        }
                        busy.fetch_sub(1, Ordering::SeqCst);
                        if interrupted() {
                            break;
                        }
                        *results[i].lock().expect("no panics while holding it") = Some((m, run_s));
                        finished.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        self.peak_busy_slots = self.peak_busy_slots.max(peak.into_inner());
        built
            .into_iter()
            .zip(results)
            .filter_map(|((code, ..), m)| {
                m.into_inner().expect("no panics while holding it").map(|(m, run_s)| (code, m, run_s))
            })
            .collect()
    }

    /// The best time so far of `on`'s kernel and dataset, the original's
    /// included (the best of every process, read with the outcomes before
    /// the batch): racing and re-measurement are relative to it.
    pub(super) fn best_so_far(&self, on: &On) -> Option<f64> {
        let measured = self.outcomes.measured.iter().filter(|((d, _), _)| *d == on.dataset);
        measured
            .filter_map(|(_, m)| *m)
            .chain(on.reference.measurement.median_s)
            .filter(|t| *t > 0.0)
            .reduce(f64::min)
    }
}
