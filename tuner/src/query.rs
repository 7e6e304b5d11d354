//! `polytune best | history | machines`: the store's answers as the lines
//! they print as (the rows themselves are the store's, printed as JSON).

use store::{Best, Costs, HistoryRow, MachineRow, Role, Store};

use crate::error::{Error, Result};
use crate::program::Dataset;
use crate::stored::{kernels_time, summary};
use crate::units::seconds;

/// The best variant of `kernel` (on `machine`, on `dataset`); none is
/// [`Error::NoResult`], naming the kernels the store knows.
pub fn best(store: &Store, kernel: &str, machine: Option<&str>, dataset: Option<Dataset>) -> Result<Best> {
    if let Some(b) = store.best(kernel, machine, dataset.map(|d| d.name()))? {
        return Ok(b);
    }
    let known = store.kernels()?;
    Err(Error::NoResult(format!(
        "no correct measurement of kernel `{kernel}`{} in the store (kernels: {})",
        machine.map(|m| format!(" on machine `{m}`")).unwrap_or_default(),
        if known.is_empty() { "none yet".to_string() } else { known.join(", ") }
    )))
}

/// `best`'s text, line by line to `out` (the explanation, made last, may
/// take a while): the summary, the point, the region's share of the
/// profiled run, the rounding noise, the source, the schedule and its
/// explanation as loop transformations.
pub fn describe_best(store: &Store, b: &Best, out: &mut dyn FnMut(&str)) -> Result<()> {
    out(&format!("{} [{}] on {}: {}", b.kernel, b.dataset, b.machine, summary(b)));
    out(&format!("  point id:  {} (campaign {})", b.point_id, b.campaign));
    if let Some(line) = found_by_profile(store, b)? {
        out(&format!("  {line}"));
    }
    if let Some(rounding) = b.reference_rounding_noise.as_ref().filter(|n| !n.is_empty()) {
        out(&format!("  verified within the original's rounding noise: {rounding}"));
    }
    if let Some(path) = &b.source_path {
        out(&format!("  source:    {path}"));
    }
    let Some(s) = &b.schedule else { return Ok(()) };
    out(&format!("  schedule:\n{}", indent(s)));
    // The same schedule as loop transformations (`polytune explain`); the program may
    // have moved since it was tuned, which costs the explanation only.
    let file = std::path::Path::new(&b.program_path);
    let point = crate::explain::point_of(&b.point_json);
    let (build, scop) = crate::explain::stored_build(store, &b.kernel);
    match crate::explain::script_of(file, &b.dataset, (&build, scop), s, point.as_ref()) {
        Ok(e) if e.script.is_empty() => out("  explained: the original loops, unchanged"),
        Ok(e) => out(&format!("  explained (replay with `polytune apply`):\n{}", indent(&e.script))),
        Err(e) => out(&format!(
            "  explained: not available ({e:#}; try `polytune explain {} --file ...`)",
            b.kernel
        )),
    }
    Ok(())
}

/// `found by --autodetect: f(), lines 10-24, 84.1% of a 3.2 s run of the
/// program`, where the best's campaign chose its regions from a profile.
fn found_by_profile(store: &Store, b: &Best) -> Result<Option<String>> {
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

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// `history`'s lines: one per measurement; with `costs`, what each cost and
/// a last line of totals.
pub fn history_text(rows: &[HistoryRow], costs: bool) -> String {
    let mut text = String::new();
    let mut total = Costs::default();
    let mut costed = 0;
    for r in rows {
        let time = r.median_s.map(|m| seconds(m) + &kernels_time(r.kernel_s)).unwrap_or("-".into());
        text += &format!(
            "{} {} [{}] {} {} {}: {} {time}\n",
            r.created_at, r.kernel, r.dataset, r.machine, r.role, r.point_id, r.status
        );
        let Some(c) = r.costs().filter(|_| costs) else { continue };
        let run = format!(
            "run {} (timed {}, set-up {})",
            seconds(c.run_s),
            seconds(c.timed_s),
            seconds((c.run_s - c.timed_s).max(0.0))
        );
        if r.role == Role::Reference {
            let capture = c.capture_s.map(|s| format!("capture {}, ", seconds(s))).unwrap_or_default();
            text += &format!(
                "    costs: {capture}{run}: the original's runs, its second run and its rounding probes\n"
            );
            total.capture_s = Some(total.capture_s.unwrap_or(0.0) + c.capture_s.unwrap_or(0.0));
            continue;
        }
        text += &format!(
            "    costs: variant {} (schedule {}, codegen {}), compile {}, {run}\n",
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
    if costs && costed > 0 {
        text += &cost_summary(costed, &total);
        text.push('\n');
    }
    text
}

/// The last line of `history --costs`: `total` summed over `costed`
/// evaluations, each step's share of the summed steps.
fn cost_summary(costed: usize, total: &Costs) -> String {
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

/// `machines`' lines: each machine, its measurements and fingerprint.
pub fn machines_text(rows: &[MachineRow]) -> String {
    rows.iter()
        .map(|m| format!("{} ({} measurements): {}\n", m.name, m.measurements, m.fingerprint))
        .collect()
}
