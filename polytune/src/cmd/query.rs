//! `polytune best | history | machines`: answers from the store, nothing runs.

use anyhow::Result;
use store::Best;
use vocab::knobs::Point;

use super::common::StoreArg;

#[derive(clap::Args)]
pub struct BestArgs {
    /// Kernel name (the C file's stem, e.g. `gemm`).
    kernel: String,
    /// Only measurements on this machine profile.
    #[arg(long)]
    machine: Option<String>,
    /// Only this dataset.
    #[arg(long, value_parser = crate::choice::choice::<super::common::Dataset>())]
    dataset: Option<super::common::Dataset>,
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

use crate::units::seconds;

/// `1.84x (spread 3.1% / 2.0%) unified ... — source PATH`.
pub fn summary(b: &Best) -> String {
    let point =
        serde_json::from_str::<Point>(&b.point_json).map(|p| p.to_string()).unwrap_or(b.point_json.clone());
    let pct = |s: Option<f64>| s.map(|s| format!("{:.1}%", 100.0 * s)).unwrap_or("-".into());
    // A lead that is not significant is noise, and is said to be.
    let mut caveats = Vec::new();
    if b.clear_of_original == Some(false) {
        caveats.push(
            "its lead over the original is not significant (Welch's t-test on log times, 5%)".to_string(),
        );
    }
    if let (Some(false), Some(m)) = (b.clear_of_runner_up, b.runner_up_median_s) {
        caveats.push(format!(
            "its lead over the runner-up ({}, spread {}) is not significant (Welch's t-test on log times, 5%)",
            seconds(m),
            pct(b.runner_up_spread)
        ));
    }
    if let Some(machine) = &b.origin {
        caveats.push(format!("a warm start: the best known on machine {machine}"));
    }
    let caveats: String = caveats.iter().map(|c| format!("; {c}")).collect();
    format!(
        "{:.2}x over the original ({}{} vs {}, spreads {} / {}) with {point}{caveats}",
        b.speedup,
        seconds(b.median_s),
        kernels(b.kernel_s),
        seconds(b.reference_median_s),
        pct(b.spread),
        pct(b.reference_spread)
    )
}

pub fn best(args: BestArgs) -> Result<()> {
    let store = args.store.open()?;
    let Some(b) = store.best(&args.kernel, args.machine.as_deref(), args.dataset.map(|d| d.name()))? else {
        let known = store.kernels()?;
        return Err(tuner::Error::NoResult(format!(
            "no correct measurement of kernel `{}`{} in the store (kernels: {})",
            args.kernel,
            args.machine.as_ref().map(|m| format!(" on machine `{m}`")).unwrap_or_default(),
            if known.is_empty() { "none yet".to_string() } else { known.join(", ") }
        ))
        .into());
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&b)?);
        return Ok(());
    }
    println!("{} [{}] on {}: {}", b.kernel, b.dataset, b.machine, summary(&b));
    println!("  point id:  {} (campaign {})", b.point_id, b.campaign);
    if let Some(line) = found_by_profile(&store, &b)? {
        println!("  {line}");
    }
    if let Some(rounding) = b.reference_rounding_noise.as_ref().filter(|n| !n.is_empty()) {
        println!("  verified within the original's rounding noise: {rounding}");
    }
    if let Some(path) = &b.source_path {
        println!("  source:    {path}");
    }
    if let Some(s) = &b.schedule {
        println!("  schedule:\n{}", indent(s));
        // The same schedule as loop transformations (`polytune explain`); the program may
        // have moved since it was tuned, which costs the explanation only.
        let file = std::path::Path::new(&b.program_path);
        let point = tuner::explain::point_of(&b.point_json);
        let (build, scop) = tuner::explain::stored_build(&store, &b.kernel);
        match tuner::explain::script_of(file, &b.dataset, (&build, scop), s, point.as_ref()) {
            Ok(e) if e.script.is_empty() => println!("  explained: the original loops, unchanged"),
            Ok(e) => println!("  explained (replay with `polytune apply`):\n{}", indent(&e.script)),
            Err(e) => {
                println!("  explained: not available ({e:#}; try `polytune explain {} --file ...`)", b.kernel)
            }
        }
    }
    Ok(())
}

/// `found by --autodetect: f(), lines 10-24, 84.1% of a 3.2 s run of the
/// program`, where the best's campaign chose its regions from a profile.
fn found_by_profile(store: &store::Store, b: &Best) -> Result<Option<String>> {
    let Some(campaign) = store.campaigns()?.into_iter().find(|c| c.id == b.campaign) else { return Ok(None) };
    let Some(profile) = campaign.profile()? else { return Ok(None) };
    let Some(region) = profile.regions.iter().find(|r| r.kernel == b.kernel) else { return Ok(None) };
    let others: Vec<String> = profile
        .regions
        .iter()
        .filter(|r| r.kernel != b.kernel)
        .map(|r| format!("{} {:.1}%{}", r.kernel, 100.0 * r.share, if r.tuned { "" } else { " not tuned" }))
        .collect();
    let others = match others.is_empty() {
        true => String::new(),
        false => format!("; the other regions: {}", others.join(", ")),
    };
    Ok(Some(format!(
        "found by --autodetect: {}(), lines {}-{}, {:.1}% of a {} run of the program{others}",
        region.function,
        region.lines.0,
        region.lines.1,
        100.0 * region.share,
        seconds(profile.run_s)
    )))
}

/// ` (kernels 557.1 µs)` for a GPU variant's time, where its kernels' is known.
fn kernels(kernel_s: Option<f64>) -> String {
    kernel_s.map(|k| format!(" (kernels {})", seconds(k))).unwrap_or_default()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// Only this kernel.
    kernel: Option<String>,
    /// How many measurements, newest first.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// What each evaluation cost (the `polytune variant` child with its
    /// scheduling and code generation, the compile, the runs), and the
    /// totals over the rows shown.
    #[arg(long)]
    costs: bool,
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn history(args: HistoryArgs) -> Result<()> {
    let rows = args.store.open()?.history(args.kernel.as_deref(), args.limit)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    let mut total = store::Costs::default();
    let mut costed = 0;
    for r in &rows {
        let time = r.median_s.map(|m| seconds(m) + &kernels(r.kernel_s)).unwrap_or("-".into());
        println!(
            "{} {} [{}] {} {} {}: {} {time}",
            r.created_at, r.kernel, r.dataset, r.machine, r.role, r.point_id, r.status
        );
        let Some(c) = r.costs().filter(|_| args.costs) else { continue };
        let run = format!(
            "run {} (timed {}, set-up {})",
            seconds(c.run_s),
            seconds(c.timed_s),
            seconds((c.run_s - c.timed_s).max(0.0))
        );
        if r.role == store::Role::Reference {
            let capture = c.capture_s.map(|s| format!("capture {}, ", seconds(s))).unwrap_or_default();
            println!(
                "    costs: {capture}{run}: the original's runs, its second run and its rounding probes"
            );
            total.capture_s = Some(total.capture_s.unwrap_or(0.0) + c.capture_s.unwrap_or(0.0));
            continue;
        }
        println!(
            "    costs: variant {} (schedule {}, codegen {}), compile {}, {run}",
            seconds(c.variant_s),
            seconds(c.schedule_s),
            seconds(c.codegen_s),
            seconds(c.compile_s),
        );
        total.variant_s += c.variant_s;
        total.schedule_s += c.schedule_s;
        total.codegen_s += c.codegen_s;
        total.compile_s += c.compile_s;
        total.run_s += c.run_s;
        total.timed_s += c.timed_s;
        costed += 1;
    }
    if args.costs && costed > 0 {
        println!("{}", cost_summary(costed, &total));
    }
    Ok(())
}

/// The last line of `history --costs`: `total` summed over `costed`
/// evaluations, each step's share of the summed steps.
fn cost_summary(costed: usize, total: &store::Costs) -> String {
    let all = total.variant_s + total.compile_s + total.run_s;
    let share = |x: f64| if all > 0.0 { 100.0 * x / all } else { 0.0 };
    let outside = if total.run_s > 0.0 { 100.0 * (1.0 - total.timed_s / total.run_s) } else { 0.0 };
    let capture =
        total.capture_s.map(|s| format!("; capturing the inputs took {}", seconds(s))).unwrap_or_default();
    format!(
        "{costed} evaluations with costs: {} in all, {} each; variant {:.0}% (schedule {:.0}%, codegen {:.0}%), \
         compile {:.0}%, run {:.0}% (shares of the summed steps: points are made and built in parallel); \
         {outside:.0}% of the run time outside the timer{capture}",
        seconds(all),
        seconds(all / costed as f64),
        share(total.variant_s),
        share(total.schedule_s),
        share(total.codegen_s),
        share(total.compile_s),
        share(total.run_s),
    )
}

#[derive(clap::Args)]
pub struct MachinesArgs {
    #[command(flatten)]
    store: StoreArg,
    #[arg(long)]
    json: bool,
}

pub fn machines(args: MachinesArgs) -> Result<()> {
    let rows = args.store.open()?.machines()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    for m in rows {
        println!("{} ({} measurements): {}", m.name, m.measurements, m.fingerprint);
    }
    Ok(())
}
