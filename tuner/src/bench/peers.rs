//! `polytune bench peers FILE...`: per kernel, the original program built
//! by the machine profile's compiler, the same unmodified program built by
//! each installed peer (clang with Polly, gcc with Graphite, and Pluto's
//! `polycc` in each of its fusion heuristics with and without diamond
//! tiling, its output built by gcc), isl's and the Pluto-like reference
//! points, and a small set of our points with the code-generation knobs
//! (issue 17), all measured back to back on one slot and every output
//! verified against the original's: a peer is checked like any variant.
//! No one Pluto setting wins everywhere, so the best of them has a column of
//! its own, read against ours in the row and in a geometric mean under the
//! table. A peer that cannot make a kernel's program (a SCoP clan cannot
//! parse) fails that cell, with its reason under the table, and the bench
//! goes on. The machine's dgemm rate (OpenBLAS, when installed) is measured
//! in the same run, as the yardstick for GFLOP/s: before the table, and
//! again after each row, as a shared machine's rate drifts. With
//! `evals`, each row also has the best of a campaign as `tune` runs one by
//! default (the model strategy, that many evaluations, a store of its own),
//! measured again in the row: what a user gets, beside the fixed points.

use std::path::{Path, PathBuf};

use executor::build::{Builder, Compiler, Extras};
use executor::evaluate::{Evaluator, Reference};
use executor::measure::{MeasureConfig, Measurement};
use executor::pipeline;
use vocab::knobs::{Point, Scheduler};
use vocab::outcome::Status;

use super::dgemm::{dgemm_rate, dgemm_run, kernel_name};
use super::Out;
use crate::campaign::grid;
use crate::deadline::in_time;
use crate::error::Result;
use crate::program::{BuildOptions, Dataset, Program};

pub struct Request {
    pub files: Vec<PathBuf>,
    /// How each file builds, for the original, the peers and ours.
    pub build: BuildOptions,
    pub dataset: Dataset,
    /// OpenMP threads of every variant, the parallel peers and dgemm.
    pub threads: usize,
    /// Timed runs per measurement.
    pub runs: usize,
    /// The limit per kernel, in seconds.
    pub timeout_s: f64,
    /// Evaluations of each kernel's campaign; 0: no campaign column.
    pub evals: usize,
}

/// The table, written to `out` row by row, then what goes under it.
pub fn run(request: &Request, out: Out) -> Result<()> {
    let Request { files, build, dataset, threads, runs, timeout_s, evals } = request;
    let (dataset, threads, runs, timeout_s) = (*dataset, *threads, *runs, *timeout_s);
    let (profile, slot) = super::default_slot()?;
    let cache = crate::program::cache_dir()?.join("builds");
    let config = MeasureConfig { runs, threads: Some(threads), ..MeasureConfig::default() };
    let evaluator = |compiler: Compiler| -> Result<Evaluator> {
        let builder = Builder::new(compiler, &cache)?;
        Ok(Evaluator { builder, slot: slot.clone(), config: config.clone(), jobs: 2 })
    };
    let ours = evaluator(profile.compiler())?;
    let (peers, missing) = executor::peers::installed(threads);
    for line in &missing {
        out(line);
    }
    // A peer whose compiler cannot build the measurement runtime is skipped
    // like one that is not installed.
    let mut peer_evaluators: Vec<(&executor::peers::Peer, Evaluator)> = Vec::new();
    for p in &peers {
        match evaluator(p.compiler.clone()) {
            Ok(ev) => peer_evaluators.push((p, ev)),
            Err(e) => out(&format!("{}: {e:#}: skipped", p.name)),
        }
    }
    let dgemm = dgemm_yardstick(&slot.cores, threads, &cache, out);
    out(&format!(
        "median of {runs} runs, {} dataset, {threads} thread(s); speedup = original ({}) / variant",
        dataset.name(),
        profile.compiler().cc
    ));
    let names: Vec<&str> = peer_evaluators.iter().map(|(p, _)| p.name).collect();
    // Pluto's columns only where polycc is installed.
    let pluto = peer_evaluators.iter().any(|(p, _)| p.polycc.is_some());
    let head = header(&names, pluto, *evals);
    out(&row(&head));
    out(&format!("|{}", "---|".repeat(head.len())));
    let table = Table {
        build,
        dataset,
        threads,
        timeout_s,
        ours: &ours,
        peers: &peer_evaluators,
        pluto,
        dgemm,
        dgemm_cores: &slot.cores,
        cache: &cache,
        evals: *evals,
    };
    let mut tally = Tally::default();
    for file in files {
        table.kernel_row(file, &mut tally, out)?;
    }
    tally.print(out);
    Ok(())
}

/// The machine's dgemm rate, said before the table, and the OpenBLAS kernel
/// that gave it (`None` when it could not be measured).
fn dgemm_yardstick(cores: &[usize], threads: usize, cache: &Path, out: Out) -> Option<Option<&'static str>> {
    // The kernel OpenBLAS ran fastest with, measured again after each row:
    // on a shared or virtual machine the rate drifts within one run.
    match dgemm_rate(cores, threads, cache) {
        Ok((r, kernel)) => {
            out(&format!(
                "OpenBLAS dgemm (n = 2000, {threads} thread(s)): {r:.1} GFLOP/s ({})",
                kernel_name(kernel)
            ));
            Some(kernel)
        }
        Err(e) => {
            out(&format!("OpenBLAS dgemm: not measured ({e:#})"));
            None
        }
    }
}

/// What every row of the table is built and measured with.
struct Table<'a> {
    build: &'a BuildOptions,
    dataset: Dataset,
    threads: usize,
    timeout_s: f64,
    ours: &'a Evaluator,
    peers: &'a [(&'a executor::peers::Peer, Evaluator)],
    /// Whether the table has Pluto's column.
    pluto: bool,
    /// The OpenBLAS kernel of the dgemm yardstick, measured again after each row.
    dgemm: Option<Option<&'static str>>,
    dgemm_cores: &'a [usize],
    cache: &'a Path,
    /// Evaluations of each kernel's campaign (0: none).
    evals: usize,
}

/// What the rows leave for under the table.
#[derive(Default)]
struct Tally {
    /// Our best time against the fastest peer's, one per kernel.
    ratios: Vec<f64>,
    /// Our best time against Pluto's best, one per kernel.
    pluto_ratios: Vec<f64>,
    /// The campaign's best time against the fastest peer's.
    campaign_ratios: Vec<f64>,
    /// Why a peer's cell is not a speedup, printed after the table.
    notes: Vec<String>,
    /// The dgemm rate after each row.
    dgemm_after: Vec<String>,
}

impl Tally {
    /// The lines under the table: the dgemm rates, the geometric means, then the notes.
    fn print(&self, out: Out) {
        if !self.dgemm_after.is_empty() {
            out(&format!("OpenBLAS dgemm again after each row (GFLOP/s): {}", self.dgemm_after.join(", ")));
        }
        let mut geomean = |what: &str, ratios: &[f64]| {
            if !ratios.is_empty() {
                let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
                out(&format!("geometric mean of best / {what}: {geo:.2} over {} kernels", ratios.len()));
            }
        };
        geomean("fastest peer", &self.ratios);
        geomean("best of Pluto", &self.pluto_ratios);
        if !self.campaign_ratios.is_empty() {
            geomean("fastest peer, the campaign's best", &self.campaign_ratios);
        }
        for note in &self.notes {
            out(&note.replace('\n', "\n    "));
        }
    }
}

/// One kernel of the table: what its programs are built with, and the
/// original's measurement every cell is read against.
struct Kernel<'a> {
    file: &'a Path,
    name: String,
    cc_args: &'a [String],
    extras: &'a Extras,
    reference: Reference,
    /// The original's median time.
    base: f64,
}

/// The peers' cells of one row, and what our cells are read against.
struct PeerCells {
    cells: Vec<String>,
    /// The fastest peer's verified time (infinite when none verified).
    fastest: f64,
    /// Pluto's fastest verified setting: its time and name.
    best_pluto: Option<(f64, &'static str)>,
}

impl Table<'_> {
    /// One kernel measured and its row printed; then the dgemm rate again.
    fn kernel_row(&self, file: &Path, tally: &mut Tally, out: Out) -> Result<()> {
        let config = self.build.resolve(file)?;
        let extras = config.extras(self.dataset);
        let ours = with_extras(self.ours, &extras)?;
        let program = std::sync::Arc::new(crate::program::load(file, self.dataset, &config, 0)?);
        let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("program").to_string();
        let original = codegen::original_program(&program.source, &program.scop)?;
        let p = program.clone();
        let what = format!("{}: schedules and code generation", file.display());
        let points = grid::bench_points(self.threads);
        let pts = points.clone();
        let programs = in_time(&what, self.timeout_s, move || Ok(variants(&p, &pts)))?;
        let reference = ours.reference(&original)?;
        let base = reference.measurement.median_s.unwrap_or(f64::NAN);
        let ours = raced(ours, base);
        let kernel = Kernel { file, name, cc_args: &config.cc_args, extras: &extras, reference, base };
        let peers = self.peer_cells(&kernel, &mut tally.notes)?;
        let best_pluto = peers.best_pluto;
        let pluto_cell = match best_pluto {
            // The setting first: a speedup cell ends with its speedup.
            Some((t, peer)) => format!("{} {:.2}×", peer.trim_start_matches("pluto-"), base / t),
            None => "-".into(),
        };
        let our = our_cells(&ours, &kernel, &programs)?;
        let (best_cell, versus, winner) = match our.best {
            Some((t, i)) => {
                // Pluto's best is read against ours in the row (both are
                // speedups over the same original) and in the mean below.
                if let Some((p, _)) = best_pluto {
                    tally.pluto_ratios.push(p / t);
                }
                let versus = if peers.fastest.is_finite() {
                    tally.ratios.push(peers.fastest / t);
                    format!("{:.2}", peers.fastest / t)
                } else {
                    "-".into()
                };
                (format!("{:.2}×", base / t), versus, points[i].0.clone())
            }
            None => ("-".into(), "-".into(), "-".into()),
        };
        let mut cells = vec![kernel.name.clone(), crate::units::seconds(base)];
        cells.extend(peers.cells);
        cells.extend(self.pluto.then_some(pluto_cell));
        cells.extend(our.references);
        cells.extend([best_cell, versus, winner]);
        if self.evals > 0 {
            let (cell, versus) = self.campaign_cells(&kernel, &program, peers.fastest, tally)?;
            cells.extend([cell, versus]);
        }
        out(&row(&cells));
        if let Some(dgemm) = self.dgemm {
            let rate = dgemm_run(self.dgemm_cores, self.threads, self.cache, dgemm)
                .map_or("-".into(), |r| format!("{r:.1}"));
            tally.dgemm_after.push(format!("{} {rate}", kernel.name));
        }
        Ok(())
    }

    /// Each peer's cell for `kernel`, the fastest peer and Pluto's best
    /// setting; why a cell is not a speedup goes to `notes`.
    fn peer_cells(&self, kernel: &Kernel, notes: &mut Vec<String>) -> Result<PeerCells> {
        let name = &kernel.name;
        let mut cells = Vec::new();
        let mut fastest = f64::INFINITY;
        let mut best_pluto: Option<(f64, &'static str)> = None;
        for (peer, ev) in self.peers {
            let cpp = crate::program::cpp_args(self.dataset, kernel.cc_args);
            // A peer without a program for this kernel (polycc refused it)
            // fails its cell, as a campaign records it; so does one whose
            // compiler cannot build the kernel's other sources.
            let made = executor::peers::program(peer, kernel.file, &cpp, 0, false)
                .map_err(|why| (Status::ScheduleError, why))
                .and_then(|text| {
                    let ev = with_extras(ev, kernel.extras)
                        .map_err(|e| (Status::CompileError, format!("{}: {e:#}", peer.name)))?;
                    Ok((text, ev))
                });
            let (text, ev) = match made {
                Ok(made) => made,
                Err((status, why)) => {
                    notes.push(format!("{name}: {why}"));
                    cells.push(status.to_string());
                    continue;
                }
            };
            let m = raced(ev, kernel.base).evaluate(&kernel.reference, &[text])?.remove(0);
            if !m.is_ok() {
                let reason = m.reason.lines().next().unwrap_or("");
                notes.push(format!("{name}: {}: {}: {reason}", peer.name, m.status));
            }
            let t = verified_time(&m).unwrap_or(f64::INFINITY);
            fastest = fastest.min(t);
            if peer.polycc.is_some() && t < best_pluto.map_or(f64::INFINITY, |b| b.0) {
                best_pluto = Some((t, peer.name));
            }
            cells.push(speedup(&m, kernel.base));
        }
        Ok(PeerCells { cells, fastest, best_pluto })
    }
}

impl Table<'_> {
    /// The cells of `kernel`'s campaign: the speedup of its best, measured
    /// again here, with its point, and that best against the fastest peer.
    fn campaign_cells(
        &self,
        kernel: &Kernel,
        program: &Program,
        fastest: f64,
        tally: &mut Tally,
    ) -> Result<(String, String)> {
        let dir = std::env::temp_dir().join(format!("polytune-bench-peers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let found = self.campaign(kernel, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        let point = match found {
            Ok(Some(point)) => point,
            Ok(None) => return Ok(("no result".into(), "-".into())),
            Err(e) => {
                tally.notes.push(format!("{}: the campaign: {e}", kernel.name));
                return Ok(("failed".into(), "-".into()));
            }
        };
        let what = format!("{}: the campaign's best", kernel.file.display());
        let generated = variants(program, &[(point.id(), point.clone())]).remove(0);
        let Ok(text) = generated else {
            tally.notes.push(format!("{what}: {}", point.id()));
            return Ok(("codegen-error".into(), "-".into()));
        };
        let ours = with_extras(self.ours, kernel.extras)?;
        let m = raced(ours, kernel.base).evaluate(&kernel.reference, &[text])?.remove(0);
        let versus = match verified_time(&m) {
            Some(t) if fastest.is_finite() => {
                tally.campaign_ratios.push(fastest / t);
                format!("{:.2}", fastest / t)
            }
            _ => "-".into(),
        };
        let label = grid::reference_label(&point).unwrap_or_else(|| point.to_string());
        tally.notes.push(format!("{}: the campaign's best: {label}", kernel.name));
        Ok((speedup(&m, kernel.base), versus))
    }

    /// A campaign on `kernel` as `tune FILE --strategy model --evals N`
    /// runs it, in a store of its own under `dir`: its best point.
    fn campaign(&self, kernel: &Kernel, dir: &Path) -> Result<Option<Point>> {
        let config = self.build.resolve(kernel.file)?;
        let request = crate::campaign::request::Request {
            dataset: self.dataset,
            strategy: crate::strategy::StrategyKind::Model,
            threads: Some(self.threads),
            runs: self.ours.config.runs,
            tolerance: self.ours.config.tolerance.relative,
            warm_start: 0,
            db: Some(dir.join("store.db").display().to_string()),
            budget: crate::campaign::Budget { evals: Some(self.evals), time: None },
            ..crate::campaign::request::Request::new(vec![(kernel.file.to_path_buf(), config, 0)])
        };
        let silent = std::sync::Arc::new(crate::campaign::observer::Recorder::default());
        let best = match crate::campaign::request::run(&request, None, silent)? {
            crate::campaign::request::Outcome::Ran(r) => r.bests.into_iter().next().flatten(),
            crate::campaign::request::Outcome::Submitted(_) => None,
        };
        best.map(|b| {
            serde_json::from_str(&b.point_json).map_err(|e| crate::error::Error::failed(e.to_string()))
        })
        .transpose()
    }
}

/// Our cells of one row.
struct OurCells {
    /// The first two points' cells: isl's and the Pluto-like reference.
    references: [String; 2],
    /// The fastest verified program's time, and the index of its first point.
    best: Option<(f64, usize)>,
}

/// Our programs for `kernel` measured, points that generate the same
/// program sharing one measurement.
fn our_cells(
    ours: &Evaluator,
    kernel: &Kernel,
    programs: &[Result<String, pipeline::Failure>],
) -> Result<OurCells> {
    // Our programs, each failure to generate one shown as its status;
    // points that generate the same program share one measurement.
    let mut built: Vec<String> = Vec::new();
    let slot: Vec<Option<usize>> = programs
        .iter()
        .map(|r| {
            let p = r.as_ref().ok()?;
            Some(built.iter().position(|b| b == p).unwrap_or_else(|| {
                built.push(p.clone());
                built.len() - 1
            }))
        })
        .collect();
    let measured = ours.evaluate(&kernel.reference, &built)?;
    let cell = |i: usize| match (&programs[i], slot[i]) {
        (Err(f), _) => f.status.to_string(),
        (Ok(_), Some(k)) => speedup(&measured[k], kernel.base),
        (Ok(_), None) => "-".into(),
    };
    // The first point of the fastest program.
    let best = (0..programs.len())
        .filter_map(|i| verified_time(&measured[slot[i]?]).map(|t| (t, i)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    Ok(OurCells { references: [cell(0), cell(1)], best })
}

/// `ev` building with a kernel's other sources and flags.
fn with_extras(ev: &Evaluator, extras: &Extras) -> Result<Evaluator> {
    let builder = ev.builder.with_extras(extras)?;
    Ok(Evaluator { builder, slot: ev.slot.clone(), config: ev.config.clone(), jobs: ev.jobs })
}

/// `ev` racing, as campaigns do: a program that took over `RACE` times the
/// original's time (`base`) in its warm-up and first run stops there, verified.
fn raced(ev: Evaluator, base: f64) -> Evaluator {
    Evaluator {
        config: MeasureConfig { race_above_s: Some(RACE * base).filter(|r| r.is_finite()), ..ev.config },
        ..ev
    }
}

/// A measurement's median, where its outputs were verified.
fn verified_time(m: &Measurement) -> Option<f64> {
    m.median_s.filter(|_| m.is_ok())
}

/// A cell of the table: the speedup over the original's time `base`, else the status.
fn speedup(m: &Measurement, base: f64) -> String {
    match verified_time(m) {
        Some(s) => format!("{:.2}×", base / s),
        None => m.status.to_string(),
    }
}

/// The table's columns: the peers', then Pluto's best where Pluto is among
/// them; the last three are always ours, the ratio and the winner.
fn header<'a>(peers: &[&'a str], pluto: bool, evals: usize) -> Vec<&'a str> {
    let mut head = vec!["kernel", "original"];
    head.extend(peers);
    head.extend(pluto.then_some("best of Pluto"));
    head.extend(["isl", "pluto-like", "best of ours", "best / fastest peer", "winner"]);
    if evals > 0 {
        head.extend(["campaign's best", "campaign / fastest peer"]);
    }
    head
}

/// One line of a Markdown table.
fn row(cells: &[impl AsRef<str>]) -> String {
    let cells: Vec<&str> = cells.iter().map(AsRef::as_ref).collect();
    format!("| {} |", cells.join(" | "))
}

/// A program that runs over this many times the original's time cannot be
/// the best of ours or the fastest peer: one timed run tells it.
const RACE: f64 = 2.0;

/// Each point's program (its failure when it has none), the schedule of a
/// scheduler (on one layout) computed once.
fn variants(p: &Program, points: &[(String, Point)]) -> Vec<Result<String, pipeline::Failure>> {
    let mut trees: Vec<((Scheduler, bool), Result<String, pipeline::Failure>)> = Vec::new();
    let mut out = Vec::new();
    for (_, point) in points {
        let key = (point.scheduler.clone(), point.code.transpose);
        let tree = match trees.iter().find(|(k, _)| *k == key) {
            Some((_, t)) => t.clone(),
            None => {
                let t = pipeline::schedule_of(&p.scop, &p.deps, point);
                trees.push((key, t.clone()));
                t
            }
        };
        out.push(tree.and_then(|tree| pipeline::generate(&p.source, &p.scop, &p.deps, point, &tree)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pluto_columns_only_with_pluto_peers() {
        let without = header(&["clang-polly", "gcc-graphite"], false, 0);
        assert_eq!(row(&without), "| kernel | original | clang-polly | gcc-graphite | isl | pluto-like | best of ours | best / fastest peer | winner |");
        let with = header(&["gcc-graphite", "pluto-smartfuse", "pluto-maxfuse"], true, 0);
        assert_eq!(
            row(&with),
            "| kernel | original | gcc-graphite | pluto-smartfuse | pluto-maxfuse | best of Pluto | isl | pluto-like \
             | best of ours | best / fastest peer | winner |"
        );
        assert_eq!(header(&[], false, 0).len(), 7, "no empty column without peers");
    }

    #[test]
    fn the_campaign_has_columns_only_with_evaluations() {
        let head = header(&[], false, 30);
        assert_eq!(head[head.len() - 2..], ["campaign's best", "campaign / fastest peer"]);
    }
}
