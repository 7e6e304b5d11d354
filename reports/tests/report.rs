//! Reports from a store written here, with values worked out by hand: the model, the
//! Markdown and CSV text, and the HTML as headless Chromium renders it.

use reports::model::{Cell, Row};
use reports::{collect, Format, Report};
use store::{NewCampaign, Record, ReportFilter, Role, Store};
use vocab::knobs::{Point, Scheduler, Spatial, UnifiedOptions};

fn unified(spatial: Spatial, tiles: Option<u32>) -> Point {
    let options = UnifiedOptions { spatial, ..UnifiedOptions::default() };
    Point {
        scheduler: Scheduler::Unified { preorder: None, options },
        tiles: tiles.map(|t| vec![t]),
        threads: 2,
        code: Default::default(),
    }
}

fn isl() -> Point {
    Point { scheduler: Scheduler::Isl, tiles: Some(vec![32]), threads: 2, code: Default::default() }
}

fn label(p: &Point) -> Option<String> {
    matches!(p.scheduler, Scheduler::Isl).then(|| "isl".to_string())
}

struct Ids {
    campaign: i64,
    program: i64,
    machine: i64,
}

fn record(s: &Store, at: &Ids, role: Role, point: &Point, status: &str, median: Option<f64>) {
    record_spread(s, at, role, point, status, median, median.map(|_| 0.02));
}

fn record_spread(
    s: &Store,
    at: &Ids,
    role: Role,
    point: &Point,
    status: &str,
    median: Option<f64>,
    spread: Option<f64>,
) {
    s.record(&Record {
        campaign: at.campaign,
        program: at.program,
        machine: at.machine,
        role,
        point_id: point.id(),
        point_json: point.canonical_json(),
        schedule: None,
        build: None,
        status: status.parse().unwrap(),
        reason: String::new(),
        median_s: median,
        spread,
        samples: median.into_iter().collect(),
        costs: None,
        kernel_s: None,
        origin: None,
        rounding_noise: None,
    })
    .unwrap();
}

/// gemm on two machines, jacobi-2d on one. On `alpha`, gemm's original takes 2 s; its
/// variants, in order: isl 1 s, unified 0.8 s, a wrong one at 0.3 s, unified 0.5 s, a
/// timeout: best 4×, found at the 4th evaluation, 3 of 5 verified.
fn store() -> Store {
    let s = Store::open("sqlite::memory:").unwrap();
    let campaign = |key: &str| {
        let c = NewCampaign {
            key: key.into(),
            config_json: "{}".into(),
            strategy: "random".into(),
            seed: 1,
            budget: vocab::Budget { evals: Some(10), time: None },
        };
        s.campaign(&c).unwrap().id
    };
    let (c1, c2) = (campaign("one"), campaign("two"));
    let (alpha, beta) = (s.machine("alpha", r#"{"m":1}"#).unwrap(), s.machine("beta", r#"{"m":2}"#).unwrap());
    let gemm = s.program("gemm", "gemm.c", "g", "LARGE").unwrap();
    let jacobi = s.program("jacobi-2d", "jacobi-2d.c", "j", "LARGE").unwrap();
    let original =
        Point { scheduler: Scheduler::Original, tiles: None, threads: 2, code: Default::default() };

    let at = Ids { campaign: c1, program: gemm, machine: alpha };
    record(&s, &at, Role::Reference, &original, "ok", Some(2.0));
    record(&s, &at, Role::Variant, &isl(), "ok", Some(1.0));
    record(&s, &at, Role::Variant, &unified(Spatial::Off, Some(32)), "ok", Some(0.8));
    record(&s, &at, Role::Variant, &unified(Spatial::Off, Some(64)), "wrong", Some(0.3));
    record(&s, &at, Role::Variant, &unified(Spatial::Grouped, Some(32)), "ok", Some(0.5));
    record(&s, &at, Role::Variant, &unified(Spatial::Grouped, None), "timeout", None);

    let at = Ids { campaign: c2, program: gemm, machine: beta };
    record(&s, &at, Role::Reference, &original, "ok", Some(3.0));
    record(&s, &at, Role::Variant, &isl(), "wrong", Some(1.0));
    // beta's winner: a warm start from alpha's (second) best.
    let point = unified(Spatial::Off, Some(32));
    let warm = Record {
        campaign: at.campaign,
        program: at.program,
        machine: at.machine,
        role: Role::Variant,
        point_id: point.id(),
        point_json: point.canonical_json(),
        schedule: None,
        build: None,
        status: "ok".parse().unwrap(),
        reason: String::new(),
        median_s: Some(1.0),
        spread: Some(0.02),
        samples: vec![1.0],
        costs: None,
        kernel_s: None,
        origin: Some("alpha".into()),
        rounding_noise: None,
    };
    s.record(&warm).unwrap();

    let at = Ids { campaign: c1, program: jacobi, machine: alpha };
    record(&s, &at, Role::Reference, &original, "ok", Some(1.0));
    record(&s, &at, Role::Variant, &unified(Spatial::Off, Some(32)), "crash", None);
    s
}

fn report(filter: &ReportFilter) -> Report {
    collect(&store().report_rows(filter).unwrap(), &label)
}

fn row<'a>(r: &'a Report, machine: &str, kernel: &str) -> &'a Row {
    r.rows.iter().find(|x| x.machine == machine && x.kernel == kernel).unwrap()
}

#[test]
fn model_matches_the_hand_worked_values() {
    let r = report(&ReportFilter::default());
    assert_eq!(r.machines, ["alpha", "beta"]);
    assert_eq!(r.labels, ["isl"]);
    assert_eq!(r.rows.len(), 3);

    let g = row(&r, "alpha", "gemm");
    assert_eq!(g.original.unwrap().median_s, 2.0);
    assert_eq!((g.evaluations, g.verified), (5, 3));
    let best = g.best.as_ref().unwrap();
    assert_eq!(best.speedup, 4.0);
    assert_eq!(best.point, unified(Spatial::Grouped, Some(32)).to_string());
    assert_eq!(best.point_id, unified(Spatial::Grouped, Some(32)).id());
    assert!((best.speedup_spread.unwrap() - 0.04).abs() < 1e-12);
    let steps: Vec<(usize, f64)> = g.progress.iter().map(|s| (s.evaluation, s.speedup)).collect();
    assert_eq!(steps, [(1, 2.0), (2, 2.5), (4, 4.0)]);
    assert_eq!(g.evaluations_to_near_best, Some(4));
    match &g.references["isl"] {
        Cell::Ok { speedup, .. } => assert_eq!(*speedup, 2.0),
        other => panic!("{other:?}"),
    }
    // Knob samples come from verified variants only (the isl point has no spatial knob).
    let spatial: Vec<&str> =
        g.knobs.iter().filter(|k| k.knob == "spatial").map(|k| k.value.as_str()).collect();
    assert_eq!(spatial, ["off", "grouped"]);

    let b = row(&r, "beta", "gemm");
    assert_eq!(b.references["isl"], Cell::Failed(store::Status::Wrong));
    assert_eq!(b.best.as_ref().unwrap().speedup, 3.0);
    assert_eq!(b.evaluations_to_near_best, Some(2));

    let j = row(&r, "alpha", "jacobi-2d");
    assert!(j.best.is_none() && j.progress.is_empty());
    assert_eq!((j.evaluations, j.verified), (1, 0));
}

#[test]
fn filters_select_machines_and_kernels() {
    let r = report(&ReportFilter { machines: vec!["beta".into()], kernels: vec![] });
    assert_eq!(r.machines, ["beta"]);
    assert_eq!(r.rows.len(), 1);
    let r = report(&ReportFilter { machines: vec![], kernels: vec!["jacobi-2d".into()] });
    assert_eq!(r.rows.len(), 1);
    assert_eq!(r.rows[0].kernel, "jacobi-2d");
    let none = report(&ReportFilter { machines: vec!["gamma".into()], kernels: vec![] });
    assert!(Format::Markdown.render(&none).contains("No measurements match."));
}

#[test]
fn winners_carry_the_explanation_they_are_given() {
    let mut r = report(&ReportFilter::default());
    r.explain_winners(|row, w| (row.machine == "alpha").then(|| format!("fuse (0)   # {}\n", w.point_id)));
    let md = Format::Markdown.render(&r);
    let id = unified(Spatial::Grouped, Some(32)).id();
    assert!(
        md.contains(&format!("`gemm` LARGE on `alpha` (campaign 1):\n\n```\nfuse (0)   # {id}\n```")),
        "{md}"
    );
    assert!(!md.contains("on `beta`"), "{md}");
    let html = Format::Html.render(&r);
    assert_eq!(html.matches("<details data-explanation=").count(), 1);
    assert!(html.contains(&format!("<pre>fuse (0)   # {id}\n</pre>")));
}

#[test]
fn markdown_has_a_table_per_machine_and_one_across() {
    let md = Format::Markdown.render(&report(&ReportFilter::default()));
    assert!(md.contains("## Machine `alpha`") && md.contains("## Machine `beta`"), "{md}");
    let gemm_alpha = md.lines().find(|l| l.starts_with("| gemm | LARGE | 1 |")).expect(&md);
    let cells: Vec<&str> = gemm_alpha.trim_matches('|').split(" | ").map(str::trim).collect();
    assert_eq!(cells[3], "2.00 s ±2%");
    assert_eq!(cells[4], "2.00×"); // isl
    assert_eq!(cells[5], "500.0 ms ±2%");
    assert_eq!(cells[6], "4.00× ±4%");
    assert_eq!(cells[7], unified(Spatial::Grouped, Some(32)).to_string());
    assert_eq!(&cells[8..10], ["5", "3"]);
    assert_eq!(cells[11], "4");
    let gemm_beta = md.lines().find(|l| l.starts_with("| gemm | LARGE | 2 |")).expect(&md);
    assert!(
        gemm_beta.contains(&format!("{} (from alpha) |", unified(Spatial::Off, Some(32)))),
        "{gemm_beta}"
    );
    assert!(md.contains("| jacobi-2d | LARGE | 1 | 1.00 s ±2% | – | none verified |"), "{md}");
    let across = md.split("## Across machines").nth(1).unwrap();
    assert!(across.contains("| kernel | dataset | alpha | beta |"), "{across}");
    assert!(across.contains("| gemm | LARGE | 4.00× | 3.00× |"), "{across}");
    assert!(across.contains("| jacobi-2d | LARGE | – | – |"), "{across}");
}

#[test]
fn csv_is_rectangular_and_quotes_what_needs_it() {
    let csv = Format::Csv.render(&report(&ReportFilter::default()));
    let lines: Vec<Vec<String>> = csv.split_terminator("\r\n").map(parse_csv_line).collect();
    let header = &lines[0];
    assert_eq!(lines.len(), 4, "{csv}");
    for l in &lines[1..] {
        assert_eq!(l.len(), header.len(), "{l:?}");
    }
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let gemm = lines.iter().find(|l| l[0] == "alpha" && l[1] == "gemm").unwrap();
    assert_eq!(gemm[col("best_speedup")], "4");
    assert_eq!(gemm[col("isl_speedup")], "2");
    assert_eq!(gemm[col("evaluations_to_within_5pct")], "4");
    let beta = lines.iter().find(|l| l[0] == "beta").unwrap();
    assert_eq!(beta[col("isl_status")], "wrong");
    // Where a winner came from: a warm start's machine, else nothing.
    assert_eq!((beta[col("best_origin")].as_str(), gemm[col("best_origin")].as_str()), ("alpha", ""));
}

/// A CSV line's fields (RFC 4180 quoting), written independently of the crate's writer.
fn parse_csv_line(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// The HTML file as a browser sees it: Chromium loads it headless, dumps the DOM and takes a
/// screenshot (see `testkit::Browser` for a machine without Chromium).
#[test]
fn html_renders_in_headless_chromium() {
    let html = Format::Html.render(&report(&ReportFilter::default()));
    let dir = testkit::TempDir::new("report-test");
    let Some(browser) = testkit::Browser::find(&dir.join("profile")) else { return };
    let file = dir.join("report.html");
    std::fs::write(&file, &html).unwrap();
    let url = format!("file://{}", file.display());
    let dom = browser.dom(&url);
    // The parsed DOM: 3 tables (two machines, across), the plots as SVG elements with content.
    assert_eq!(dom.matches("<table data-table=").count(), 3, "{dom}");
    let figures: Vec<&str> = dom.split("<figure data-plot=").skip(1).collect();
    // Speedup per kernel; progress ×2 per machine; the knobs with two values or more among
    // verified variants (scheduler: isl and unified; spatial: off and grouped).
    assert_eq!(figures.len(), 1 + 2 * 2 + 2, "{dom}");
    for f in &figures {
        assert!(
            f.contains("<svg") && (f.contains("<circle") || f.contains("<polyline") || f.contains("<rect")),
            "{f}"
        );
    }
    let shot = dir.join("report.png");
    let png = browser.screenshot(&url, &shot, (1200, 2400));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot of {} bytes", png.len());
    if let Ok(keep) = std::env::var("POLYTUNE_KEEP_REPORT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lead within the spreads is reported as not significant, by the reports and by
/// `Store::best` alike; a clear one is not marked.
#[test]
fn a_lead_within_the_spreads_is_marked_not_significant() {
    let s = Store::open("sqlite::memory:").unwrap();
    let c = NewCampaign {
        key: "noise".into(),
        config_json: "{}".into(),
        strategy: "random".into(),
        seed: 1,
        budget: vocab::Budget { evals: Some(3), time: None },
    };
    let at = Ids {
        campaign: s.campaign(&c).unwrap().id,
        program: s.program("gemm", "gemm.c", "g", "LARGE").unwrap(),
        machine: s.machine("alpha", "{}").unwrap(),
    };
    let timed = |role: Role, point: &Point, median: f64, spread: f64| {
        record_spread(&s, &at, role, point, "ok", Some(median), Some(spread))
    };
    let original =
        Point { scheduler: Scheduler::Original, tiles: None, threads: 2, code: Default::default() };
    // Original 1.00 s ±20%, winner 0.95 s ±10%, runner-up 0.97 s ±10%: both leads are noise.
    timed(Role::Reference, &original, 1.0, 0.2);
    timed(Role::Variant, &unified(Spatial::Off, Some(32)), 0.97, 0.1);
    timed(Role::Variant, &unified(Spatial::Grouped, Some(32)), 0.95, 0.1);
    let r = collect(&s.report_rows(&ReportFilter::default()).unwrap(), &label);
    let w = r.rows[0].best.as_ref().unwrap();
    assert_eq!((w.clear_of_original, w.clear_of_runner_up), (Some(false), Some(false)));
    assert_eq!(w.runner_up.unwrap().median_s, 0.97);
    let md = Format::Markdown.render(&r);
    assert!(md.contains("950.0 ms ±10% (n.s. vs runner-up)") && md.contains("(n.s. vs original)"), "{md}");
    let csv = Format::Csv.render(&r);
    assert!(csv.lines().nth(1).unwrap().ends_with(",false,false,"), "{csv}");
    let b = s.best("gemm", None, None).unwrap().unwrap();
    assert_eq!(
        (b.clear_of_original, b.clear_of_runner_up, b.runner_up_median_s),
        (Some(false), Some(false), Some(0.97))
    );
    // The hand-worked store: gemm on alpha wins 0.5 s ±2% against 0.8 s and 2 s, clearly.
    let r = report(&ReportFilter::default());
    let w = row(&r, "alpha", "gemm").best.as_ref().unwrap();
    assert_eq!((w.clear_of_original, w.clear_of_runner_up), (Some(true), Some(true)));
    assert!(!Format::Markdown.render(&r).contains("n.s. vs"));
    // One verified variant: no runner-up to compare with.
    assert_eq!(row(&r, "beta", "gemm").best.as_ref().unwrap().clear_of_runner_up, None);
}
