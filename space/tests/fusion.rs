//! The fusion space (POPL'11) on PolyBench, checked against brute force and
//! against the core scheduler.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use model::deps::{DepKind, Dependences};
use model::scop::Scop;
use rand::SeedableRng;
use space::fusion::{Count, Criterion, FusionOptions, FusionSpace, Objective};
use space::schedule::{self, CoreOptions, Fusion};
use vocab::preorder::Preorder;

fn load(rel: &str) -> (Scop, Dependences) {
    let k = testkit::load(rel, "MINI");
    (k.scop, k.deps)
}

/// Every ordered set partition of `n` statements (brute force: every
/// surjective rank function), groups sorted.
fn ordered_partitions(n: usize) -> Vec<Preorder> {
    let mut out = Vec::new();
    let mut rank = vec![0usize; n];
    loop {
        let k = rank.iter().max().map_or(0, |m| m + 1);
        if (0..k).all(|r| rank.contains(&r)) {
            out.push(Preorder((0..k).map(|r| (0..n).filter(|&s| rank[s] == r).collect()).collect()));
        }
        // Next rank vector in base n.
        let mut i = 0;
        loop {
            if i == n {
                return out;
            }
            rank[i] += 1;
            if rank[i] < n {
                break;
            }
            rank[i] = 0;
            i += 1;
        }
    }
}

/// The cheap necessary check, written from the raw dependences (not from
/// `space::fusion`): no validity dependence may run from a later group to an
/// earlier one.
fn no_backward_dependence(scop: &Scop, deps: &Dependences, p: &Preorder) -> bool {
    let stmt_of: HashMap<&str, usize> = scop
        .statements
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.accesses.iter().map(move |a| (a.id.as_str(), i)))
        .collect();
    let group = |s: usize| p.0.iter().position(|g| g.contains(&s)).unwrap();
    deps.deps
        .iter()
        .filter(|d| matches!(d.kind, DepKind::Flow | DepKind::War | DepKind::Waw))
        .all(|d| group(stmt_of[d.source.as_str()]) <= group(stmt_of[d.sink.as_str()]))
}

/// Set in a child process of the oracle: which share of the partitions it
/// asks the scheduler about.
const SHARD: &str = "POLYTUNE_FUSION_ORACLE_SHARD";

/// The fast tier's sample of the partitions (see [`oracle`]).
const FAST_STRIDE: usize = 4;

/// Marks the child's answers in its output.
const ANSWER: &str = "oracle-answer: ";

/// The scheduler's answer for the partitions `i ≡ shard (mod shards)` that
/// pass the cheap check: `None` when it schedules one, else its error.
fn scheduled(
    s: &Scop,
    d: &Dependences,
    all: &[Preorder],
    shard: usize,
    shards: usize,
) -> Vec<(usize, Option<String>)> {
    (shard..all.len())
        .step_by(shards)
        .filter(|&i| no_backward_dependence(s, d, &all[i]))
        .map(|i| {
            let opts = CoreOptions { fusion: Fusion::Preorder(all[i].clone()), ..Default::default() };
            (i, schedule::schedule(s, d, &opts).err().map(|e| e.to_string()))
        })
        .collect()
}

/// F must be exactly the ordered partitions the scheduler can schedule; the
/// encoding's membership test must agree with the enumeration; max fusion
/// and max distribution must reach the brute-force optima.
///
/// With `test` (the name of the calling test), half of the scheduler calls
/// run in a second process running that test: CBC is locked process-wide,
/// so threads do not help, and 3mm needs 352 schedules. The fast tier asks
/// the scheduler about one partition in [`FAST_STRIDE`] (and checks the
/// optima against that sample), the heavy tier about every one.
fn oracle(rel: &str, test: Option<&str>) {
    let (s, d) = load(rel);
    let stride = if testkit::tier() == testkit::Tier::Fast { FAST_STRIDE } else { 1 };
    let shards = if test.is_some() { 2 } else { 1 };
    let step = shards * stride;
    let sampled = |i: usize| i % step < shards;
    if std::env::var(SHARD).is_ok() {
        let all = ordered_partitions(s.statements.len());
        for (i, err) in scheduled(&s, &d, &all, 1, step) {
            match err {
                None => println!("\n{ANSWER}scheduled {i}"),
                Some(e) => println!("\n{ANSWER}refused {i} {}", e.replace('\n', " ")),
            }
        }
        return;
    }
    let n = s.statements.len();
    assert!(n <= 6, "{rel}: {n} statements");
    let space = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
    let f: BTreeSet<Vec<Vec<usize>>> = space.preorders().into_iter().map(|p| p.0).collect();
    assert_eq!(Count::from_u64(f.len() as u64), space.count(), "{rel}");
    let all = ordered_partitions(n);
    assert_eq!(Count::from_u64(all.len() as u64), Count::fubini(n));
    assert_eq!(space.unpruned(), Count::fubini(n));
    let started = Instant::now();
    let calls =
        all.iter().enumerate().filter(|(i, p)| sampled(*i) && no_backward_dependence(&s, &d, p)).count();
    let mut answers: HashMap<usize, Option<String>> = HashMap::new();
    match test {
        Some(name) => {
            let exe = std::env::current_exe().unwrap();
            let child = std::process::Command::new(exe)
                .args([name, "--exact", "--nocapture", "--test-threads=1"])
                .env(SHARD, "1")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            answers.extend(scheduled(&s, &d, &all, 0, step));
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{rel}: the second oracle process failed");
            let text = String::from_utf8_lossy(&out.stdout);
            // The harness prints its own text around ours: take what
            // follows the marker.
            for line in text.lines().filter_map(|l| l.split_once(ANSWER).map(|(_, a)| a)) {
                if let Some(i) = line.strip_prefix("scheduled ") {
                    answers.insert(i.parse().unwrap(), None);
                } else if let Some(rest) = line.strip_prefix("refused ") {
                    let (i, e) = rest.split_once(' ').unwrap();
                    answers.insert(i.parse().unwrap(), Some(e.to_string()));
                }
            }
            // Every partition that passes the check got an answer.
            assert_eq!(answers.len(), calls, "{rel}: {text}");
        }
        None => answers.extend(scheduled(&s, &d, &all, 0, step)),
    }
    let mut wrong = Vec::new();
    let mut legal = Vec::new();
    for (i, p) in all.iter().enumerate() {
        let in_f = f.contains(&p.0);
        assert_eq!(space.contains(p), in_f, "{rel}: encoding and enumeration disagree on {}", p.display());
        if !sampled(i) {
            continue;
        }
        let scheduled = matches!(answers.get(&i), Some(None));
        if scheduled {
            legal.push(p.clone());
        }
        if scheduled != in_f {
            let why = answers.get(&i).cloned().flatten().unwrap_or_default();
            wrong.push(format!("{}: in F {in_f}, scheduled {scheduled} {why}", p.display()));
        }
    }
    eprintln!("{rel}: |O| {} |F| {} scheduler calls {calls} in {:?}", all.len(), f.len(), started.elapsed());
    assert!(wrong.is_empty(), "{rel}: {wrong:#?}");
    let most = legal.iter().map(FusionSpace::fused_pairs).max().unwrap_or_default();
    let least = legal.iter().map(FusionSpace::fused_pairs).min().unwrap_or(usize::MAX);
    let max_fusion = space.optimise(&Objective::MaxFusion).unwrap().unwrap();
    let max_distribution = space.optimise(&Objective::MaxDistribution).unwrap().unwrap();
    let (fused, distributed) =
        (FusionSpace::fused_pairs(&max_fusion), FusionSpace::fused_pairs(&max_distribution));
    if stride == 1 {
        assert_eq!(fused, most, "{rel}: {}", max_fusion.display());
        assert_eq!(distributed, least, "{rel}: {}", max_distribution.display());
    } else {
        assert!(fused >= most, "{rel}: {}", max_fusion.display());
        assert!(distributed <= least, "{rel}: {}", max_distribution.display());
    }
    assert!(f.contains(&max_fusion.0) && f.contains(&max_distribution.0));
}

// One test per few kernels, so the harness runs them side by side.
#[test]
fn oracle_3mm() {
    oracle("linear-algebra/3mm.c", Some("oracle_3mm"));
}

#[test]
fn oracle_gesummv_bicg_2mm_atax_gemver_mvt() {
    for k in ["gesummv", "bicg", "2mm", "atax", "gemver", "mvt"] {
        oracle(&format!("linear-algebra/{k}.c"), None);
    }
}

#[test]
fn oracle_other_kernels_up_to_six_statements() {
    for k in [
        "linear-algebra/cholesky.c",
        "linear-algebra/doitgen.c",
        "linear-algebra/gemm.c",
        "linear-algebra/lu.c",
        "linear-algebra/symm.c",
        "linear-algebra/syr2k.c",
        "linear-algebra/syrk.c",
        "linear-algebra/trisolv.c",
        "linear-algebra/trmm.c",
        "medley/floyd-warshall.c",
        "medley/nussinov.c",
        "stencils/fdtd-2d.c",
        "stencils/heat-3d.c",
        "stencils/jacobi-1d.c",
        "stencils/jacobi-2d.c",
        "stencils/seidel-2d.c",
    ] {
        oracle(k, None);
    }
}

/// Counting without enumerating agrees with enumeration where both run, on
/// every kernel; the large spaces are counted only.
#[test]
fn counts_agree_with_enumeration_on_the_30_kernels() {
    let root = testkit::kernel("");
    for rel in testkit::kernels().iter().map(|p| p.strip_prefix(&root).unwrap().to_str().unwrap().to_string())
    {
        let _item = testkit::item(format!("{rel}: fusion space"), Duration::from_secs(300));
        let (s, d) = load(&rel);
        let t = Instant::now();
        let f = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
        let c = f.count();
        let enumerated = c.to_u64().filter(|&c| c <= 100_000).map(|_| f.preorders().len());
        if let Some(e) = enumerated {
            assert_eq!(Count::from_u64(e as u64), c, "{rel}");
        }
        assert!(c <= f.unpruned() && !c.is_zero(), "{rel}: {c}");
        // The original program's structure is always legal.
        assert!(f.contains(&s.original_preorder()), "{rel}");
        eprintln!(
            "| {rel} | {} | {} | {} | {:.3} s |",
            s.statements.len(),
            f.unpruned(),
            c,
            t.elapsed().as_secs_f64()
        );
    }
}

/// Seeded uniform sampling: on gemver's 8 points, 8000 draws hit every point
/// 1000 ± 150 times (a 5-sigma band), and every draw is in F.
#[test]
fn sampling_is_uniform() {
    let (s, d) = load("linear-algebra/gemver.c");
    let f = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
    let points = f.preorders();
    assert_eq!(points.len(), 8);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut hits: HashMap<Vec<Vec<usize>>, usize> = HashMap::new();
    for _ in 0..8000 {
        let p = f.sample(&mut rng).unwrap();
        assert!(f.contains(&p));
        *hits.entry(p.0).or_default() += 1;
    }
    assert_eq!(hits.len(), 8, "{hits:?}");
    assert!(hits.values().all(|&h| (850..=1150).contains(&h)), "{hits:?}");
    // Sampling a space too large to enumerate: draws are points of F.
    let (s, d) = load("medley/deriche.c");
    let f = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
    for _ in 0..20 {
        assert!(f.contains(&f.sample(&mut rng).unwrap()));
    }
}

/// The paper's interleaving criterion keeps a subset of the scheduler's
/// shared-loop space.
#[test]
fn interleaving_is_stricter_than_a_shared_loop() {
    for k in ["gemver", "2mm", "atax", "gesummv"] {
        let (s, d) = load(&format!("linear-algebra/{k}.c"));
        let shared = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
        let strict = FusionSpace::outer(
            &s,
            &d,
            &FusionOptions { criterion: Criterion::Interleaved { max_offset: 0 } },
        )
        .unwrap();
        for p in strict.preorders() {
            assert!(shared.contains(&p), "{k}: {}", p.display());
        }
        eprintln!("{k}: shared loop {} interleaved {}", shared.count(), strict.count());
    }
}

/// Level 2 under 2mm's original outer structure: every point refines it,
/// and counting agrees with enumeration.
#[test]
fn level_two_refines_the_outer_preorder() {
    let (s, d) = load("linear-algebra/2mm.c");
    let outer = s.original_preorder();
    let f2 = FusionSpace::inner(&s, &d, &outer, &FusionOptions::default()).unwrap();
    let points = f2.preorders();
    assert_eq!(Count::from_u64(points.len() as u64), f2.count());
    assert_eq!(f2.unpruned(), Count::from_u64(9));
    for p in &points {
        // Groups of p lie inside groups of outer, in the same order.
        let outer_of = |st: usize| outer.0.iter().position(|g| g.contains(&st)).unwrap();
        for g in &p.0 {
            assert!(g.iter().all(|&st| outer_of(st) == outer_of(g[0])), "{}", p.display());
        }
        let flat: Vec<usize> = p.0.iter().map(|g| outer_of(g[0])).collect();
        assert!(flat.windows(2).all(|w| w[0] <= w[1]), "{}", p.display());
    }
    assert!(!points.is_empty());
    let bad = Preorder(vec![vec![0, 1, 2]]);
    assert!(FusionSpace::inner(&s, &d, &bad, &FusionOptions::default()).is_err());
}

/// Kernels with too many statements for the brute-force oracle: sampled
/// points of F, and its max-fusion and max-distribution points, are all
/// scheduled.
#[test]
fn sampled_points_of_larger_spaces_are_scheduled() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for rel in ["datamining/covariance.c", "datamining/correlation.c", "linear-algebra/ludcmp.c"] {
        let (s, d) = load(rel);
        let f = FusionSpace::outer(&s, &d, &FusionOptions::default()).unwrap();
        let mut points: Vec<Preorder> = (0..3).map(|_| f.sample(&mut rng).unwrap()).collect();
        points.push(f.optimise(&Objective::MaxFusion).unwrap().unwrap());
        points.push(f.optimise(&Objective::MaxDistribution).unwrap().unwrap());
        for p in points {
            let opts = CoreOptions { fusion: Fusion::Preorder(p.clone()), ..Default::default() };
            if let Err(e) = schedule::schedule(&s, &d, &opts) {
                panic!("{rel}: {} is in F but: {e}", p.display());
            }
        }
    }
}
