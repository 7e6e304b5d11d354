//! The store's API on both backends: every test body runs on a fresh SQLite file and, when
//! `POLYTUNE_TEST_POSTGRES` names a server, on a fresh PostgreSQL database (see `Fresh`).

mod common;

use common::{new_campaign, ok_record, point_id, Fresh, TempDir};
use store::{CampaignState, Claim, Record, ReportFilter, Role, Store, StoreError};

/// Generates `<name>_sqlite` and `<name>_postgres` tests running `body(&Fresh)`.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::$name(&super::Fresh::sqlite());
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                if let Some(fresh) = super::Fresh::postgres() {
                    super::$name(&fresh);
                }
            })*
        }
    };
}

both_backends!(
    round_trip,
    record_is_idempotent,
    best_compares_within_campaigns,
    report_rows_join_names_and_filter,
    failed_record_leaves_nothing_behind,
    record_all_is_all_or_nothing,
    invalid_records_are_refused,
    newer_schema_is_refused_untouched,
    reopening_keeps_everything,
    threads_share_one_store,
    someone_elses_database_is_refused_untouched,
    claims_are_leases_and_measuring_ends_them,
    known_elsewhere_ranks_each_machine_by_speedup,
    transfer_rows_are_times_over_their_campaigns_original,
);

fn round_trip(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    assert_eq!(s.backend(), if fresh.is_sqlite() { "sqlite" } else { "postgres" });

    let fp = r#"{"cpu":"Xeon","cores":2}"#;
    let m = s.machine("box", fp).unwrap();
    assert_eq!(s.machine("renamed", fp).unwrap(), m, "same fingerprint, same machine");
    assert_eq!(s.machines().unwrap()[0].name, "renamed", "the latest name wins");
    assert_eq!(s.machine("box", fp).unwrap(), m);
    let m2 = s.machine("other", r#"{"cpu":"EPYC","cores":64}"#).unwrap();
    assert_ne!(m, m2);

    let p = s.program("gemm", "polybench/gemm.c", "h-gemm", "LARGE").unwrap();
    assert_eq!(s.program("gemm", "elsewhere/gemm.c", "h-gemm", "LARGE").unwrap(), p);
    let p_small = s.program("gemm", "polybench/gemm.c", "h-gemm", "MINI").unwrap();
    assert_ne!(p, p_small, "a dataset is another program");
    let p_2mm = s.program("2mm", "polybench/2mm.c", "h-2mm", "LARGE").unwrap();

    let c = s.campaign(&new_campaign("k1")).unwrap();
    assert_eq!(c.state, CampaignState::Running);
    assert_eq!(c.seed.0, u64::MAX - 1);
    assert_eq!(c.config, new_campaign("k1").config_json);
    assert_eq!((c.strategy.as_str(), c.budget), ("random", new_campaign("k1").budget));
    s.set_campaign_state(c.id, CampaignState::Stopped).unwrap();
    let again = s.campaign(&new_campaign("k1")).unwrap();
    assert_eq!(again.id, c.id, "the same key resumes the same campaign");
    assert_eq!(again.state, CampaignState::Stopped, "resuming does not change the state");
    assert!(again.updated_at >= again.created_at);
    s.set_campaign_state(c.id, CampaignState::Running).unwrap();
    let err = s.set_campaign_state(c.id + 1000, CampaignState::Finished).unwrap_err();
    assert!(err.to_string().contains(&format!("no campaign has id {}", c.id + 1000)), "{err}");
    let c2 = s.campaign(&new_campaign("k2")).unwrap();
    assert_ne!(c2.id, c.id);
    assert_eq!(c2.profile().unwrap(), None);
    let share = |kernel: &str, share: f64| vocab::profile::RegionShare {
        kernel: kernel.into(),
        function: "main".into(),
        lines: (3, 9),
        share,
        tuned: share > 0.05,
    };
    let profile = vocab::RunProfile { run_s: 0.5, regions: vec![share("p", 0.01), share("p.1", 0.9)] };
    s.set_campaign_profile(c2.id, &profile).unwrap();
    let later = vocab::RunProfile { run_s: 0.25, ..profile };
    s.set_campaign_profile(c2.id, &later).unwrap();
    let stored = s.campaigns().unwrap().into_iter().find(|x| x.id == c2.id).unwrap();
    assert_eq!(stored.profile().unwrap(), Some(later.clone()), "the latest profile is kept");
    assert!(s.set_campaign_profile(c2.id + 1000, &later).is_err());

    // Campaign 1: gemm LARGE on `box`: the reference, two ok variants, one wrong, one crash.
    let reference = Record { schedule: None, build: None, ..ok_record(c.id, p, m, Role::Reference, 0, 2.0) };
    s.record(&reference).unwrap();
    let costs = store::Costs {
        variant_s: 1.5,
        schedule_s: 0.5,
        codegen_s: 0.25,
        compile_s: 2.0,
        run_s: 0.125,
        timed_s: 0.0625,
        capture_s: Some(3.0),
    };
    let fast = s
        .record(&Record {
            costs: Some(costs.clone()),
            kernel_s: Some(0.125),
            ..ok_record(c.id, p, m, Role::Variant, 1, 0.5)
        })
        .unwrap();
    s.record(&ok_record(c.id, p, m, Role::Variant, 2, 0.8)).unwrap();
    let wrong = Record {
        status: "wrong".parse().unwrap(),
        reason: "C[3][4] = 1.5, expected 2.5".into(),
        ..ok_record(c.id, p, m, Role::Variant, 3, 0.1)
    };
    s.record(&wrong).unwrap();
    let crash = Record {
        status: "crash".parse().unwrap(),
        reason: "signal 11".into(),
        median_s: None,
        spread: None,
        samples: vec![],
        build: None,
        ..ok_record(c.id, p, m, Role::Variant, 4, 0.0)
    };
    s.record(&crash).unwrap();
    // The identity point measured as a variant shares the reference's point id.
    s.record(&ok_record(c.id, p, m, Role::Variant, 0, 2.1)).unwrap();
    // Campaign 2: 2mm on the other machine.
    s.record(&ok_record(c2.id, p_2mm, m2, Role::Reference, 10, 1.0)).unwrap();
    s.record(&ok_record(c2.id, p_2mm, m2, Role::Variant, 11, 0.25)).unwrap();

    let measured: Vec<(String, Role)> =
        s.outcomes(c.id).unwrap().into_iter().map(|o| (o.point_id, o.role)).collect();
    let expected: Vec<(String, Role)> = [(0, Role::Reference), (1, Role::Variant), (2, Role::Variant)]
        .into_iter()
        .chain([(3, Role::Variant), (4, Role::Variant), (0, Role::Variant)])
        .map(|(n, r)| (point_id(n), r))
        .collect();
    assert_eq!(measured, expected);
    assert_eq!(s.outcomes(c2.id).unwrap().len(), 2);
    assert!(s.outcomes(c2.id + 1000).unwrap().is_empty());

    let best = s.best("gemm", None, None).unwrap().expect("gemm has a best");
    assert_eq!(best.measurement, fast);
    assert_eq!(
        (best.kernel.as_str(), best.dataset.as_str(), best.machine.as_str()),
        ("gemm", "LARGE", "box")
    );
    assert_eq!(best.program_path, "polybench/gemm.c");
    assert_eq!(best.campaign, c.id);
    assert_eq!(best.point_id, point_id(1));
    assert_eq!(best.point_json, r#"{"n":1}"#);
    assert_eq!(best.schedule.as_deref(), Some("domain: \"{ S1[i] : 0 <= i < 1 }\""));
    assert_eq!(best.source_path.as_deref(), Some("/cache/1.c"));
    assert_eq!((best.median_s, best.spread, best.kernel_s), (0.5, Some(0.01), Some(0.125)));
    assert_eq!(best.samples, vec![0.5, 0.5 * 1.01, 0.5 * 0.99]);
    assert_eq!((best.reference_median_s, best.reference_spread), (2.0, Some(0.01)));
    assert_eq!(best.speedup, 4.0);
    let json = serde_json::to_value(&best).unwrap();
    assert_eq!(json["speedup"], 4.0);
    assert!(json["measured_at"].as_str().unwrap().ends_with('Z'));

    assert_eq!(s.best("gemm", Some("box"), Some("LARGE")).unwrap().unwrap().measurement, fast);
    assert!(s.best("gemm", Some("other"), None).unwrap().is_none());
    assert!(s.best("gemm", None, Some("MINI")).unwrap().is_none());
    assert!(s.best("lu", None, None).unwrap().is_none());
    let best_2mm = s.best("2mm", Some("other"), Some("LARGE")).unwrap().unwrap();
    assert_eq!((best_2mm.speedup, best_2mm.machine.as_str()), (4.0, "other"));

    let history = s.history(None, 100).unwrap();
    assert_eq!(history.len(), 8);
    assert!(history.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    assert_eq!((history[0].kernel.as_str(), history[0].point_id.as_str()), ("2mm", point_id(11).as_str()));
    let gemm = s.history(Some("gemm"), 3).unwrap();
    assert_eq!(gemm.len(), 3);
    assert!(gemm.iter().all(|h| h.kernel == "gemm" && h.machine == "box" && h.campaign == c.id));
    assert_eq!(
        (gemm[1].status.as_str(), gemm[1].reason.as_str(), gemm[1].median_s),
        ("crash", "signal 11", None)
    );
    assert_eq!((gemm[2].status.as_str(), gemm[2].role), ("wrong", Role::Variant));
    // Costs come back as recorded; rows without them have none.
    let fast_row = history.iter().find(|h| h.id == fast).unwrap();
    assert_eq!((fast_row.costs(), fast_row.kernel_s), (Some(costs), Some(0.125)));
    assert_eq!((gemm[2].costs(), gemm[2].kernel_s), (None, None));
    assert!(s.history(Some("lu"), 10).unwrap().is_empty());
    assert!(serde_json::to_string(&history).unwrap().contains(r#""role":"variant""#));

    let machines = s.machines().unwrap();
    let summary: Vec<(&str, i64, bool)> =
        machines.iter().map(|r| (r.name.as_str(), r.measurements, r.last_measured_at.is_some())).collect();
    assert_eq!(summary, [("box", 6, true), ("other", 2, true)]);
    assert_eq!(machines[0].fingerprint, fp);
    let idle = s.machine("idle", r#"{"cpu":"none"}"#).unwrap();
    let idle_row = s.machines().unwrap().into_iter().find(|r| r.id == idle).unwrap();
    assert_eq!((idle_row.measurements, idle_row.last_measured_at), (0, None));

    let campaigns = s.campaigns().unwrap();
    assert_eq!(campaigns.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["k1", "k2"]);
    assert_eq!(campaigns[0].state, CampaignState::Running);

    let outcomes = s.outcomes(c.id).unwrap();
    assert_eq!(outcomes.len(), 6);
    assert_eq!((outcomes[3].status.as_str(), outcomes[3].median_s), ("wrong", Some(0.1)));
    assert_eq!(s.kernels().unwrap(), ["2mm", "gemm"]);

    let counts = s.counts().unwrap();
    // Point 0 serves the reference and the identity variant; the reference has no schedule.
    assert_eq!(
        (counts.machines, counts.programs, counts.points, counts.schedules, counts.builds),
        (3, 3, 7, 7, 6)
    );
    assert_eq!((counts.campaigns, counts.measurements), (2, 8));
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
}

fn record_is_idempotent(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap();
    let rec = ok_record(c.id, p, m, Role::Variant, 7, 1.0);
    let first = s.record(&rec).unwrap();
    let before = s.counts().unwrap();
    // A resumed campaign may re-record a point it had finished: the first record wins.
    let changed = Record { median_s: Some(0.001), status: "ok".parse().unwrap(), ..rec.clone() };
    assert_eq!(s.record(&rec).unwrap(), first);
    assert_eq!(s.record(&changed).unwrap(), first);
    assert_eq!(s.counts().unwrap(), before);
    assert_eq!(s.history(None, 10).unwrap()[0].median_s, Some(1.0));
    // The same point as a reference, or in another campaign, is another measurement.
    let as_reference = s.record(&Record { role: Role::Reference, ..rec.clone() }).unwrap();
    let c2 = s.campaign(&new_campaign("k2")).unwrap();
    let elsewhere = s.record(&Record { campaign: c2.id, ..rec.clone() }).unwrap();
    // A campaign may tune several programs (datasets): the same point of another program too.
    let p2 = s.program("gemm", "gemm.c", "h", "MINI").unwrap();
    let other_program = s.record(&Record { program: p2, ..rec.clone() }).unwrap();
    let ids = [first, as_reference, elsewhere, other_program];
    assert!(ids.iter().enumerate().all(|(i, a)| ids[i + 1..].iter().all(|b| a != b)), "{ids:?}");
    assert_eq!(s.record(&Record { program: p2, ..rec.clone() }).unwrap(), other_program);
    let after = s.counts().unwrap();
    assert_eq!((after.measurements, after.points, after.schedules), (4, 1, 1));
    assert_eq!(s.outcomes(c.id).unwrap().len(), 3);
}

fn claims_are_leases_and_measuring_ends_them(fresh: &Fresh) {
    use std::time::Duration;
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap();
    let (seven, eight) = (point_id(7), point_id(8));
    let (campaign, program) = (c.id, p);
    let claim = move |point_id: &'static str| Claim { campaign, program, point_id, role: Role::Variant };
    let (seven, eight): (&'static str, &'static str) = (seven.leak(), eight.leak());
    let long = Duration::from_secs(600);
    assert!(s.claim(&claim(seven), "a", long).unwrap());
    assert!(s.claim(&claim(seven), "a", long).unwrap(), "a worker's own claim is its again");
    assert!(!s.claim(&claim(seven), "b", long).unwrap(), "a live lease is not taken over");
    let live = s.live_claims(c.id).unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!((live[0].program, live[0].point_id.as_str(), live[0].worker.as_str()), (p, seven, "a"));
    // The same point as a reference is another claim.
    assert!(s.claim(&Claim { role: Role::Reference, ..claim(seven) }, "b", long).unwrap());
    // An expired lease is taken over; a heartbeat keeps one alive.
    assert!(s.claim(&claim(eight), "a", Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(5));
    assert!(s.live_claims(c.id).unwrap().iter().all(|l| l.point_id != eight), "expired: not live");
    assert_eq!(s.heartbeat("a", long).unwrap(), 2);
    assert!(!s.claim(&claim(eight), "b", long).unwrap(), "the heartbeat extended it");
    assert_eq!(s.heartbeat("a", Duration::ZERO).unwrap(), 2);
    std::thread::sleep(Duration::from_millis(5));
    assert!(s.claim(&claim(eight), "b", long).unwrap(), "expired: b takes it over");
    assert_eq!(s.heartbeat("a", long).unwrap(), 1, "a holds 7 only");
    // Recording the measurement ends the claim, and a measured point is claimed by no one.
    s.record(&ok_record(c.id, p, m, Role::Variant, 7, 1.0)).unwrap();
    assert_eq!(s.heartbeat("a", long).unwrap(), 0);
    assert!(!s.claim(&claim(seven), "a", long).unwrap());
    assert!(!s.claim(&claim(seven), "c", long).unwrap());
    assert_eq!(s.release("b").unwrap(), 2);
    assert!(s.claim(&claim(eight), "c", long).unwrap(), "released: free at once");
}

fn best_compares_within_campaigns(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let large = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let mini = s.program("gemm", "gemm.c", "h", "MINI").unwrap();
    let (a, b, c) = (
        s.campaign(&new_campaign("a")).unwrap().id,
        s.campaign(&new_campaign("b")).unwrap().id,
        s.campaign(&new_campaign("c")).unwrap().id,
    );
    // a: LARGE, reference 2.0, best variant 1.0: speedup 2.
    s.record(&ok_record(a, large, m, Role::Reference, 1, 2.0)).unwrap();
    s.record(&ok_record(a, large, m, Role::Variant, 2, 1.0)).unwrap();
    s.record(&ok_record(a, large, m, Role::Variant, 3, 1.5)).unwrap();
    // b: MINI: by far the fastest time, but only 1.25 times faster than its own reference;
    // and a faster variant that computed the wrong result.
    s.record(&ok_record(b, mini, m, Role::Reference, 1, 0.001)).unwrap();
    s.record(&ok_record(b, mini, m, Role::Variant, 4, 0.0008)).unwrap();
    let wrong =
        Record { status: "wrong".parse().unwrap(), ..ok_record(b, mini, m, Role::Variant, 5, 0.00001) };
    s.record(&wrong).unwrap();
    // c: LARGE in a slower session: its variant is slower than a's, its speedup higher.
    s.record(&ok_record(c, large, m, Role::Reference, 1, 3.3)).unwrap();
    let c_best = s.record(&ok_record(c, large, m, Role::Variant, 6, 1.1)).unwrap();
    // A variant in a campaign without a reference cannot be ranked.
    let d = s.campaign(&new_campaign("d")).unwrap().id;
    s.record(&ok_record(d, large, m, Role::Variant, 7, 0.1)).unwrap();

    let best = s.best("gemm", None, None).unwrap().unwrap();
    assert_eq!((best.measurement, best.campaign), (c_best, c));
    assert!((best.speedup - 3.0).abs() < 1e-12, "{}", best.speedup);
    let mini_best = s.best("gemm", None, Some("MINI")).unwrap().unwrap();
    assert_eq!((mini_best.point_id, mini_best.dataset.as_str()), (point_id(4), "MINI"));
    assert!((mini_best.speedup - 1.25).abs() < 1e-12);
    assert_eq!(best.reference_rounding_noise, None);

    // The reference's rounding noise is kept with it and comes back with the best.
    let e = s.campaign(&new_campaign("e")).unwrap().id;
    let noise = vocab::RoundingNoise {
        probes: vec!["-ffp-contract=off".into()],
        arrays: vec![vocab::rounding::ArrayNoise {
            array: "nrm".into(),
            noisy: 1,
            no_digit: 1,
            elements: 1,
            largest: 1.3e-28,
            magnitude: 2.8e-30,
        }],
    };
    let reference =
        Record { rounding_noise: Some(noise.clone()), ..ok_record(e, mini, m, Role::Reference, 1, 1.0) };
    s.record(&reference).unwrap();
    s.record(&ok_record(e, mini, m, Role::Variant, 8, 0.1)).unwrap();
    let noisy = s.best("gemm", None, Some("MINI")).unwrap().unwrap();
    assert_eq!(noisy.reference_rounding_noise, Some(noise));
}

/// What a new machine reads for a warm start: each other machine's points
/// by speedup over their own campaign's original (never raw times across
/// machines), best first in turn, one point per program, verified ones
/// only; nothing of its own.
fn known_elsewhere_ranks_each_machine_by_speedup(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let (fast, slow, new) = (
        s.machine("fast", r#"{"a":1}"#).unwrap(),
        s.machine("slow", r#"{"a":2}"#).unwrap(),
        s.machine("new", r#"{"a":3}"#).unwrap(),
    );
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let (a, b) = (s.campaign(&new_campaign("a")).unwrap().id, s.campaign(&new_campaign("b")).unwrap().id);
    // fast: original 1.0; points 1 (2x), 2 (4x), 3 (wrong, 100x), and 4,
    // which made point 2's program (one build).
    s.record(&ok_record(a, p, fast, Role::Reference, 0, 1.0)).unwrap();
    s.record(&ok_record(a, p, fast, Role::Variant, 1, 0.5)).unwrap();
    s.record(&ok_record(a, p, fast, Role::Variant, 2, 0.25)).unwrap();
    s.record(&Record { status: "wrong".parse().unwrap(), ..ok_record(a, p, fast, Role::Variant, 3, 0.01) })
        .unwrap();
    let same_program = ok_record(a, p, fast, Role::Variant, 4, 0.25);
    s.record(&Record { build: ok_record(a, p, fast, Role::Variant, 2, 0.25).build, ..same_program }).unwrap();
    // slow: original 10; point 5 at 2.5x (times ten times fast's), point 1 at 1.25x.
    s.record(&ok_record(b, p, slow, Role::Reference, 0, 10.0)).unwrap();
    s.record(&ok_record(b, p, slow, Role::Variant, 5, 4.0)).unwrap();
    s.record(&ok_record(b, p, slow, Role::Variant, 1, 8.0)).unwrap();
    assert!(s.has_history("gemm", "LARGE", fast).unwrap());
    assert!(!s.has_history("gemm", "LARGE", new).unwrap());
    assert!(!s.has_history("gemm", "MINI", fast).unwrap());
    let known = s.known_elsewhere("gemm", "LARGE", new).unwrap();
    let seen: Vec<(String, String, f64)> =
        known.iter().map(|k| (k.machine.clone(), k.point_json.clone(), k.speedup)).collect();
    let json = |n: u64| format!(r#"{{"n":{n}}}"#);
    assert_eq!(
        seen,
        [
            ("fast".to_string(), json(2), 4.0),
            ("slow".to_string(), json(5), 2.5),
            ("fast".to_string(), json(1), 2.0),
            ("slow".to_string(), json(1), 1.25)
        ]
    );
    // A machine's own points are not "elsewhere".
    assert!(s.known_elsewhere("gemm", "LARGE", fast).unwrap().iter().all(|k| k.machine == "slow"));
    // The new machine measures fast's best first and says where it came from.
    let c = s.campaign(&new_campaign("c")).unwrap().id;
    s.record(&ok_record(c, p, new, Role::Reference, 0, 1.0)).unwrap();
    let warm = Record { origin: Some("fast".into()), ..ok_record(c, p, new, Role::Variant, 2, 0.2) };
    s.record(&warm).unwrap();
    let best = s.best("gemm", Some("new"), None).unwrap().unwrap();
    assert_eq!(best.origin.as_deref(), Some("fast"));
    let history = s.history(Some("gemm"), 1).unwrap();
    assert_eq!(history[0].origin.as_deref(), Some("fast"));
    assert!(s.best("gemm", Some("fast"), None).unwrap().unwrap().origin.is_none());
}

fn report_rows_join_names_and_filter(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let (m1, m2) = (s.machine("alpha", r#"{"a":1}"#).unwrap(), s.machine("beta", r#"{"b":2}"#).unwrap());
    let gemm = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let lu = s.program("lu", "lu.c", "l", "MINI").unwrap();
    let c = s.campaign(&new_campaign("r")).unwrap();
    s.record(&ok_record(c.id, gemm, m1, Role::Reference, 1, 2.0)).unwrap();
    let failed = Record {
        status: "timeout".parse().unwrap(),
        median_s: None,
        spread: None,
        samples: vec![],
        schedule: None,
        ..ok_record(c.id, gemm, m1, Role::Variant, 2, 0.0)
    };
    s.record(&failed).unwrap();
    s.record(&ok_record(c.id, lu, m2, Role::Variant, 3, 0.5)).unwrap();

    let all = s.report_rows(&ReportFilter::default()).unwrap();
    let names: Vec<(&str, &str, &str, Role, &str)> = all
        .iter()
        .map(|r| (r.machine.as_str(), r.kernel.as_str(), r.dataset.as_str(), r.role, r.status.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("alpha", "gemm", "LARGE", Role::Reference, "ok"),
            ("alpha", "gemm", "LARGE", Role::Variant, "timeout"),
            ("beta", "lu", "MINI", Role::Variant, "ok"),
        ]
    );
    assert_eq!((all[0].median_s, all[1].median_s, all[1].spread), (Some(2.0), None, None));
    assert_eq!((all[2].point_id.as_str(), all[2].point_json.as_str()), (point_id(3).as_str(), r#"{"n":3}"#));
    assert!(all.iter().all(|r| r.campaign == c.id && r.campaign_started == c.created_at));
    assert!(all
        .windows(2)
        .all(|w| w[0].measurement < w[1].measurement && w[0].measured_at <= w[1].measured_at));

    let only = |machines: &[&str], kernels: &[&str]| {
        let f = ReportFilter {
            machines: machines.iter().map(|m| m.to_string()).collect(),
            kernels: kernels.iter().map(|k| k.to_string()).collect(),
        };
        s.report_rows(&f).unwrap().len()
    };
    assert_eq!((only(&["beta"], &[]), only(&[], &["gemm"]), only(&["beta"], &["gemm"])), (1, 2, 0));

    let m = s.measured_schedule("gemm", &point_id(1)).unwrap().unwrap();
    assert_eq!((m.kernel.as_str(), m.dataset.as_str(), m.program_path.as_str()), ("gemm", "LARGE", "gemm.c"));
    assert_eq!(m.tree, "domain: \"{ S1[i] : 0 <= i < 1 }\"");
    // The timeout has no schedule; another kernel's point is not this kernel's.
    assert_eq!(s.measured_schedule("gemm", &point_id(2)).unwrap(), None);
    assert_eq!(s.measured_schedule("lu", &point_id(1)).unwrap(), None);

    let progress = s.campaign_progress().unwrap();
    assert_eq!(progress.len(), 1);
    assert_eq!((progress[0].campaign.id, progress[0].measurements, progress[0].verified), (c.id, 3, 2));
    assert_eq!(progress[0].last_measured_at, Some(all[2].measured_at));
    let idle = s.campaign(&new_campaign("idle")).unwrap();
    let progress = s.campaign_progress().unwrap();
    assert_eq!(
        (progress[1].campaign.id, progress[1].measurements, progress[1].last_measured_at),
        (idle.id, 0, None)
    );
}

fn failed_record_leaves_nothing_behind(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap();
    s.record(&ok_record(c.id, p, m, Role::Variant, 1, 1.0)).unwrap();
    let before = s.counts().unwrap();
    // No campaign 999999: the measurement insert, the last statement, violates its foreign key
    // after the new point, schedule and build rows were written in the same transaction.
    let err = s.record(&ok_record(999_999, p, m, Role::Variant, 2, 1.0)).unwrap_err();
    assert!(matches!(err, StoreError::Query { what: "record a measurement", .. }), "{err}");
    assert_eq!(s.counts().unwrap(), before);
    // The failed transaction released its locks at once: another process-like handle writes
    // the same point without waiting (it would wait for the busy timeout otherwise).
    let other = Store::open(fresh.target()).unwrap();
    let start = std::time::Instant::now();
    other.record(&ok_record(c.id, p, m, Role::Variant, 2, 1.0)).unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    drop(other);
    let before = s.counts().unwrap();
    // A point id already stored with another JSON is refused, after the schedule insert.
    let conflicting = Record {
        point_json: r#"{"n":"something else"}"#.into(),
        schedule: Some("a new schedule".into()),
        ..ok_record(c.id, p, m, Role::Reference, 1, 1.0)
    };
    match s.record(&conflicting).unwrap_err() {
        StoreError::PointConflict { id, stored, .. } => {
            assert_eq!((id, stored), (point_id(1), r#"{"n":1}"#.into()))
        }
        other => panic!("expected a point conflict, got {other}"),
    }
    assert_eq!(s.counts().unwrap(), before);
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
}

fn record_all_is_all_or_nothing(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap().id;
    let good: Vec<Record> = (0..5).map(|n| ok_record(c, p, m, Role::Variant, n, 1.0 + n as f64)).collect();
    let mut bad = good.clone();
    bad.insert(3, ok_record(c + 1000, p, m, Role::Variant, 99, 1.0));
    assert!(s.record_all(&bad).is_err());
    assert_eq!(s.counts().unwrap().measurements, 0);
    assert_eq!(s.counts().unwrap().points, 0);
    let ids = s.record_all(&good).unwrap();
    assert_eq!(ids.len(), 5);
    assert_eq!(s.record_all(&good).unwrap(), ids, "idempotent like record");
    assert_eq!(s.counts().unwrap().measurements, 5);
}

fn invalid_records_are_refused(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap().id;
    let base = ok_record(c, p, m, Role::Variant, 1, 1.0);
    let cases: Vec<(Record, &str)> = vec![
        (Record { point_id: "ABCDEF0123456789".into(), ..base.clone() }, "16 lowercase hex"),
        (Record { point_id: "12345".into(), ..base.clone() }, "16 lowercase hex"),
        (Record { point_json: "{not json".into(), ..base.clone() }, "point is not JSON"),
        (Record { median_s: Some(f64::NAN), ..base.clone() }, "median is NaN"),
        (Record { spread: Some(-1.0), ..base.clone() }, "spread is -1"),
        (Record { samples: vec![1.0, f64::INFINITY], ..base.clone() }, "a sample is inf"),
        (Record { median_s: None, ..base.clone() }, "status ok but no median"),
    ];
    for (rec, expected) in cases {
        let err = s.record(&rec).unwrap_err().to_string();
        assert!(err.contains(expected), "{err:?} should say {expected:?}");
    }
    assert!(s.machine("", "{}").unwrap_err().to_string().contains("machine name is empty"));
    assert!(s.machine("box", "cpu=x").unwrap_err().to_string().contains("fingerprint is not JSON"));
    assert!(s.program("gemm", "gemm.c", "h", "").unwrap_err().to_string().contains("dataset is empty"));
    let bad_config = store::NewCampaign { config_json: "".into(), ..new_campaign("x") };
    assert!(s.campaign(&bad_config).is_err());
    assert_eq!(s.counts().unwrap().measurements, 0);
    assert_eq!(s.counts().unwrap().campaigns, 1);
}

fn newer_schema_is_refused_untouched(fresh: &Fresh) {
    {
        let s = Store::open(fresh.target()).unwrap();
        s.machine("box", "{}").unwrap();
    }
    // What a newer polytune would leave: a migration this build does not know.
    let future = 99_991_231_000_000_i64;
    fresh.execute(&format!(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         SELECT {future}, 'from the future', success, checksum, 0 FROM _sqlx_migrations \
         WHERE version = (SELECT MIN(version) FROM _sqlx_migrations)"
    ));
    let before = fresh.snapshot();
    let err = match Store::open(fresh.target()) {
        Err(err) => err,
        Ok(_) => panic!("a store with a newer schema must not open"),
    };
    match &err {
        StoreError::NewerSchema { found, known, .. } => {
            assert_eq!(*found, future);
            assert!(*known < future && *known > 0);
        }
        other => panic!("expected NewerSchema, got {other}"),
    }
    assert!(err.to_string().contains("use a newer polytune"), "{err}");
    assert_eq!(fresh.snapshot(), before, "the store must be left unchanged");
}

fn someone_elses_database_is_refused_untouched(fresh: &Fresh) {
    fresh.execute("CREATE TABLE their_data (x INTEGER)");
    let before = fresh.snapshot();
    let err = match Store::open(fresh.target()) {
        Err(err) => err,
        Ok(_) => panic!("a database with other tables and no polytune schema must not open"),
    };
    assert!(matches!(err, StoreError::NotAStore { ref tables, .. } if tables == "their_data"), "{err}");
    assert!(err.to_string().contains("give a new file or an empty database"), "{err}");
    assert_eq!(fresh.snapshot(), before, "the database must be left unchanged");
}

fn reopening_keeps_everything(fresh: &Fresh) {
    let (m, c) = {
        let s = Store::open(fresh.target()).unwrap();
        let m = s.machine("box", "{}").unwrap();
        let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
        let c = s.campaign(&new_campaign("k")).unwrap().id;
        s.record(&ok_record(c, p, m, Role::Reference, 1, 2.0)).unwrap();
        s.record(&ok_record(c, p, m, Role::Variant, 2, 1.0)).unwrap();
        (m, c)
    };
    let s = Store::open(fresh.target()).unwrap();
    assert_eq!(s.machine("box", "{}").unwrap(), m);
    assert_eq!(s.campaign(&new_campaign("k")).unwrap().id, c);
    assert_eq!(s.outcomes(c).unwrap().len(), 2);
    assert_eq!(s.best("gemm", None, None).unwrap().unwrap().speedup, 2.0);
}

/// The tuner records from rayon workers through one `Store`.
fn threads_share_one_store(fresh: &Fresh) {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap().id;
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let s = &s;
            scope.spawn(move || {
                for n in 0..25 {
                    // Every thread records the same first five points too: one row each results.
                    let point = if n < 5 { n } else { t * 100 + n };
                    s.record(&ok_record(c, p, m, Role::Variant, point, 1.0)).unwrap();
                    s.history(None, 5).unwrap();
                }
            });
        }
    });
    assert_eq!(s.outcomes(c).unwrap().len(), 5 + 4 * 20);
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
}

#[test]
fn sqlite_file_is_a_wal_database_with_integrity() {
    let fresh = Fresh::sqlite();
    let s = Store::open(fresh.target()).unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap().id;
    s.record(&ok_record(c, p, m, Role::Variant, 1, 1.0)).unwrap();
    assert!(std::path::Path::new(&format!("{}-wal", fresh.target())).exists(), "WAL mode");
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
    drop(s);
    // A `sqlite:` URL names the same file.
    let s = Store::open(&format!("sqlite://{}", fresh.target())).unwrap();
    assert_eq!(s.counts().unwrap().measurements, 1);
}

#[test]
fn in_memory_sqlite_keeps_its_rows() {
    let s = Store::open("sqlite::memory:").unwrap();
    let m = s.machine("box", "{}").unwrap();
    let p = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let c = s.campaign(&new_campaign("k")).unwrap().id;
    s.record(&ok_record(c, p, m, Role::Reference, 1, 2.0)).unwrap();
    s.record(&ok_record(c, p, m, Role::Variant, 2, 1.0)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(s.best("gemm", None, None).unwrap().unwrap().speedup, 2.0);
    assert_eq!(s.integrity_check().unwrap(), Vec::<String>::new());
}

#[test]
fn unwritable_locations_are_clear_errors() {
    let dir = TempDir::new("unwritable");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under_file = file.join("polytune.db");
    for target in [under_file.to_str().unwrap(), "/proc/polytune-store-test/polytune.db"] {
        let err = match Store::open(target) {
            Err(err) => err,
            Ok(_) => panic!("{target} should not open"),
        };
        assert!(matches!(err, StoreError::CreateDir { .. }), "{target}: {err}");
        let text = err.to_string();
        assert!(text.contains("cannot create the directory") && text.contains("POLYTUNE_DB"), "{text}");
    }
    // A directory where the file should be.
    let err = match Store::open(dir.path().to_str().unwrap()) {
        Err(err) => err,
        Ok(_) => panic!("a directory should not open as a store"),
    };
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    // A file that is not a database is refused, and left alone.
    let err = match Store::open(file.to_str().unwrap()) {
        Err(err) => err,
        Ok(_) => panic!("a text file should not open as a store"),
    };
    assert!(err.to_string().contains(file.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a directory");
    // An unreachable server.
    let err = match Store::open("postgres://polytune:secret@127.0.0.1:1/none?connect_timeout=2") {
        Err(err) => err.to_string(),
        Ok(_) => panic!("nothing listens on port 1"),
    };
    assert!(err.contains("cannot open the store postgres://polytune:***@127.0.0.1:1/none"), "{err}");
    assert!(!err.contains("secret"), "{err}");
}

/// What a search model learns from: every verified variant against its own
/// campaign's original on its program and machine, with the program's
/// kernel features where recorded; failures, and the campaign asked to be
/// left out, are not there.
fn transfer_rows_are_times_over_their_campaigns_original(fresh: &Fresh) {
    let s = Store::open(fresh.target()).unwrap();
    let (m1, m2) = (s.machine("one", r#"{"a":1}"#).unwrap(), s.machine("two", r#"{"a":2}"#).unwrap());
    let gemm = s.program("gemm", "gemm.c", "h", "LARGE").unwrap();
    let atax = s.program("atax", "atax.c", "h-atax", "MINI").unwrap();
    s.set_program_features(gemm, r#"{"kernel.depth":3.0}"#).unwrap();
    assert!(s.set_program_features(gemm, "not json").is_err());
    let (a, b) = (s.campaign(&new_campaign("a")).unwrap().id, s.campaign(&new_campaign("b")).unwrap().id);
    s.record(&ok_record(a, gemm, m1, Role::Reference, 0, 2.0)).unwrap();
    s.record(&ok_record(a, gemm, m1, Role::Variant, 1, 1.0)).unwrap();
    s.record(&Record { status: "wrong".parse().unwrap(), ..ok_record(a, gemm, m1, Role::Variant, 2, 0.1) })
        .unwrap();
    s.record(&ok_record(b, atax, m2, Role::Reference, 0, 1.0)).unwrap();
    s.record(&ok_record(b, atax, m2, Role::Variant, 3, 4.0)).unwrap();
    // A variant without its campaign's original on that program has no ratio.
    s.record(&ok_record(b, gemm, m2, Role::Variant, 1, 1.0)).unwrap();
    let rows = s.transfer_rows(None).unwrap();
    let seen: Vec<(String, i64, Option<String>, i64, String, f64)> = rows
        .iter()
        .map(|r| {
            (
                r.kernel.clone(),
                r.campaign_id,
                r.kernel_features.clone(),
                r.machine_id,
                r.point_json.clone(),
                r.log_ratio,
            )
        })
        .collect();
    let ln = |x: f64| x.ln();
    assert_eq!(
        seen,
        [
            ("gemm".into(), a, Some(r#"{"kernel.depth":3.0}"#.into()), m1, r#"{"n":1}"#.into(), ln(0.5)),
            ("atax".into(), b, None, m2, r#"{"n":3}"#.into(), ln(4.0)),
        ]
    );
    assert_eq!(rows[1].fingerprint, r#"{"a":2}"#);
    assert_eq!(s.fingerprint(m2).unwrap().as_deref(), Some(r#"{"a":2}"#));
    assert_eq!(s.fingerprint(m2 + 100).unwrap(), None);
    assert_eq!(rows[1].dataset, "MINI");
    let without_a = s.transfer_rows(Some(a)).unwrap();
    assert_eq!(without_a.iter().map(|r| r.campaign_id).collect::<Vec<_>>(), [b]);
}
