use super::*;
use std::time::Instant;

const BACKENDS: [Backend; 2] = [Backend::Cbc, Backend::Isl];

fn optimum(problem: &Problem, backend: Backend) -> Option<Vec<i64>> {
    match lexmin(problem, backend).unwrap_or_else(|e| panic!("{backend:?}: {e} on {problem:?}")) {
        Outcome::Optimal { values, objective_values } => {
            assert!(problem.satisfied_by(&values), "{backend:?}: {values:?} infeasible for {problem:?}");
            assert_eq!(problem.objective_values(&values).unwrap(), objective_values);
            Some(objective_values)
        }
        Outcome::Infeasible => None,
    }
}

fn both(problem: &Problem) -> Option<Vec<i64>> {
    let cbc = optimum(problem, Backend::Cbc);
    let isl = optimum(problem, Backend::Isl);
    assert_eq!(cbc, isl, "backends disagree on {problem:?}");
    cbc
}

#[test]
fn lexicographic_order_matters() {
    // x, y in [-3, 4], x + y >= 2: minimise x, then -y (maximise y).
    let mut p = Problem::new();
    let x = p.add_var("x", Some(-3), Some(4));
    let y = p.add_var("y", Some(-3), Some(4));
    p.add_constraint(vec![(x, 1), (y, 1)], -2, Relation::Ge);
    p.add_objective(vec![(x, 1)]);
    p.add_objective(vec![(y, -1)]);
    assert_eq!(both(&p), Some(vec![-2, -4]));
    for backend in BACKENDS {
        let Outcome::Optimal { values, .. } = lexmin(&p, backend).unwrap() else { panic!() };
        assert_eq!(values, vec![-2, 4], "{backend:?}");
    }
    // The other order: maximise y first, then minimise x.
    p.objectives.reverse();
    assert_eq!(both(&p), Some(vec![-4, -2]));
}

#[test]
fn integrality_beats_the_relaxation() {
    // 2x = 2y + 1 has no integer solution; 3x - 2y = 1 with x in [0, 10]:
    // min x is 1 (y = 1), while the relaxation would give x = 1/3.
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), Some(10));
    let y = p.add_var("y", None, None);
    p.add_constraint(vec![(x, 2), (y, -2)], -1, Relation::Eq);
    assert_eq!(both(&p), None);
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), Some(10));
    let y = p.add_var("y", None, None);
    p.add_constraint([(x, 3), (y, -2)], -1, Relation::Eq);
    p.add_objective([(x, 1)]);
    p.add_objective([(y, 1)]);
    assert_eq!(both(&p), Some(vec![1, 1]));
    // Minimise 2x + 3y with x, y >= 0 and 2x + 3y >= 7 (LP: 7, but 2x + 3y
    // hits every integer >= 2 except 1, so 7 is attained: x = 2, y = 1).
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), None);
    let y = p.add_var("y", Some(0), None);
    p.add_constraint([(x, 2), (y, 3)], -7, Relation::Ge);
    p.add_objective([(x, 2), (y, 3)]);
    p.add_objective([(x, 1)]);
    assert_eq!(both(&p), Some(vec![7, 2]));
    // 4x + 6y >= 7, x, y >= 0: only even values, so the optimum is 8.
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), None);
    let y = p.add_var("y", Some(0), None);
    p.add_constraint([(x, 4), (y, 6)], -7, Relation::Ge);
    p.add_objective([(x, 4), (y, 6)]);
    assert_eq!(both(&p), Some(vec![8]));
}

#[test]
fn negative_optima_and_equalities() {
    // x + y + z = -7, each in [-5, 5], minimise x - z, then y.
    let mut p = Problem::new();
    let v: Vec<usize> = (0..3).map(|i| p.add_var(format!("v{i}"), Some(-5), Some(5))).collect();
    p.add_constraint(vec![(v[0], 1), (v[1], 1), (v[2], 1)], 7, Relation::Eq);
    p.add_objective(vec![(v[0], 1), (v[2], -1)]);
    p.add_objective(vec![(v[1], 1)]);
    // x = -5, z = 5 forces y = -7: out of range; best is x - z = -8
    // (x = -5, z = 3, y = -5).
    assert_eq!(both(&p), Some(vec![-8, -5]));
    for backend in BACKENDS {
        let Outcome::Optimal { values, .. } = lexmin(&p, backend).unwrap() else { panic!() };
        assert_eq!(values, vec![-5, -5, 3]);
    }
}

#[test]
fn large_values() {
    // Far from zero but well inside f64's exact integers.
    let mut p = Problem::new();
    let x = p.add_var("x", Some(-1_000_000_007), Some(1_000_000_007));
    let y = p.add_var("y", None, None);
    p.add_constraint([(y, 1), (x, -3)], -1, Relation::Eq);
    p.add_objective([(y, 1)]);
    assert_eq!(both(&p), Some(vec![-3_000_000_020]));
}

#[test]
fn infeasible() {
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), Some(5));
    let y = p.add_var("y", Some(0), Some(5));
    p.add_constraint([(x, 1), (y, 1)], -11, Relation::Ge);
    p.add_objective([(x, 1)]);
    assert_eq!(both(&p), None);
    // Contradictory bounds, no objective.
    let mut p = Problem::new();
    p.add_var("x", Some(1), Some(0));
    assert_eq!(both(&p), None);
    // Infeasible and (relaxation-)unbounded at once: infeasible wins.
    let mut p = Problem::new();
    let x = p.add_var("x", None, None);
    let y = p.add_var("y", None, None);
    p.add_constraint([(x, 2), (y, -2)], -1, Relation::Eq);
    p.add_objective([(x, 1)]);
    assert_eq!(both(&p), None);
    // A constant constraint that fails.
    let mut p = Problem::new();
    p.add_var("x", Some(0), Some(1));
    p.add_constraint([], -1, Relation::Ge);
    assert_eq!(both(&p), None);
}

#[test]
fn unbounded() {
    for backend in BACKENDS {
        // First objective unbounded.
        let mut p = Problem::new();
        let x = p.add_var("x", None, Some(3));
        p.add_objective([(x, 1)]);
        assert!(matches!(lexmin(&p, backend), Err(IlpError::Unbounded { objective: 0 })), "{backend:?}");
        // Second objective unbounded once the first is pinned.
        let mut p = Problem::new();
        let x = p.add_var("x", Some(0), None);
        let y = p.add_var("y", None, None);
        p.add_constraint([(x, 1), (y, 1)], 0, Relation::Ge);
        p.add_objective([(x, 1)]);
        p.add_objective([(y, -1)]);
        let r = lexmin(&p, backend);
        assert!(matches!(r, Err(IlpError::Unbounded { objective: 1 })), "{backend:?}: {r:?}");
        // Unbounded along a lattice: x - 2y = 1 and x <= 0, objective 0 constant.
        let mut p = Problem::new();
        let x = p.add_var("x", None, Some(0));
        let y = p.add_var("y", None, None);
        p.add_constraint([(x, 1), (y, -2)], -1, Relation::Eq);
        p.add_objective([(x, 0)]);
        p.add_objective([(y, 3)]);
        let r = lexmin(&p, backend);
        assert!(matches!(r, Err(IlpError::Unbounded { objective: 1 })), "{backend:?}: {r:?}");
    }
}

#[test]
fn free_variables_are_not_an_error() {
    // No objective touches y, which is unbounded: still an optimum.
    let mut p = Problem::new();
    let x = p.add_var("x", Some(2), Some(9));
    let y = p.add_var("y", None, None);
    p.add_constraint([(y, 1), (x, -1)], 0, Relation::Ge);
    p.add_objective([(x, 1)]);
    assert_eq!(both(&p), Some(vec![2]));
    // No objectives at all: a feasibility answer.
    let mut p = Problem::new();
    let x = p.add_var("x", None, None);
    p.add_constraint([(x, 3)], -4, Relation::Ge);
    assert_eq!(both(&p), Some(vec![]));
    // No variables either.
    let p = Problem::new();
    assert_eq!(both(&p), Some(vec![]));
}

#[test]
fn equality_lattice() {
    // None when there is no integer solution, else the lattice dimension,
    // after checking the parametrisation: A origin = b, A basis = 0,
    // inverse basis = I, inverse origin = 0.
    let check = |rows: &[(&[i128], i128)], n: usize| -> Option<usize> {
        let system: Vec<(Vec<i128>, i128)> = rows.iter().map(|&(a, b)| (a.to_vec(), b)).collect();
        let l = lattice::lattice(n, system).unwrap()?;
        let dot = |a: &[i128], x: &[i128]| a.iter().zip(x).map(|(a, x)| a * x).sum::<i128>();
        let d = l.inverse.len();
        let column = |j: usize| l.basis.iter().map(|row| row[j]).collect::<Vec<_>>();
        for &(a, b) in rows {
            assert_eq!(dot(a, &l.origin), b);
            for j in 0..d {
                assert_eq!(dot(a, &column(j)), 0);
            }
        }
        for (i, row) in l.inverse.iter().enumerate() {
            assert_eq!(dot(row, &l.origin), 0);
            for j in 0..d {
                assert_eq!(dot(row, &column(j)), (i == j) as i128);
            }
        }
        Some(d)
    };
    assert_eq!(check(&[(&[2, -2], 1)], 2), None);
    assert_eq!(check(&[(&[6, 10, 15], 1)], 3), Some(2));
    // x - 3y - z = -3 and -x + y - 3z = -4 add up to -2y - 4z = -7.
    assert_eq!(check(&[(&[1, -3, -1], -3), (&[-1, 1, -3], -4)], 3), None);
    assert_eq!(check(&[(&[1, -3, -1], -3), (&[-1, 1, -3], -5)], 3), Some(1));
    assert_eq!(check(&[(&[3, -3, 3, 1], 1)], 4), Some(3));
    // Dependent rows: consistent, then not.
    assert_eq!(check(&[(&[2, 4], 6), (&[1, 2], 3)], 2), Some(1));
    assert_eq!(check(&[(&[2, 4], 6), (&[1, 2], 4)], 2), None);
    assert_eq!(check(&[(&[0, 0], 0)], 2), Some(2));
    assert_eq!(check(&[(&[0, 0], 1)], 2), None);
    assert_eq!(check(&[(&[1, 0], 4), (&[0, 1], -7)], 2), Some(0));
}

#[test]
fn bad_index_is_an_error() {
    let mut p = Problem::new();
    p.add_var("x", None, None);
    p.add_objective([(1, 1)]);
    for backend in BACKENDS {
        assert!(matches!(lexmin(&p, backend), Err(IlpError::Solver(_))));
    }
}

#[test]
fn solve_counter_counts() {
    let mut p = Problem::new();
    let x = p.add_var("x", Some(0), Some(3));
    p.add_objective([(x, 1)]);
    p.add_objective([(x, -1)]);
    let before = solves();
    lexmin(&p, Backend::Cbc).unwrap();
    assert_eq!(solves() - before, 2, "one CBC solve per objective");
    let before = solves();
    lexmin(&p, Backend::Isl).unwrap();
    assert!(solves() > before);
}

/// A tiny deterministic generator (64-bit LCG, Knuth's constants): the
/// property test must be reproducible without a dependency.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

fn random_problem(rng: &mut Lcg) -> Problem {
    let mut p = Problem::new();
    let n = rng.range(2, 4) as usize;
    for i in 0..n {
        // Mostly the full box; sometimes tighter, occasionally empty.
        let lo = if rng.range(0, 3) == 0 { rng.range(-5, 5) } else { -5 };
        let hi = if rng.range(0, 3) == 0 { rng.range(-5, 5) } else { 5 };
        p.add_var(format!("x{i}"), Some(lo), Some(hi));
    }
    let coeffs = |rng: &mut Lcg| -> Vec<(usize, i64)> {
        (0..n).map(|i| (i, rng.range(-3, 3))).filter(|&(_, a)| a != 0).collect()
    };
    for _ in 0..rng.range(1, 4) {
        let relation = if rng.range(0, 3) == 0 { Relation::Eq } else { Relation::Ge };
        let c = coeffs(rng);
        p.add_constraint(c, rng.range(-6, 6), relation);
    }
    for _ in 0..rng.range(1, 3) {
        let o = coeffs(rng);
        p.add_objective(o);
    }
    p
}

/// Lexicographic optimum over every integer point of the (finite) box.
fn brute_force(p: &Problem) -> Option<Vec<i64>> {
    let lo: Vec<i64> = p.vars.iter().map(|v| v.lower.unwrap()).collect();
    let hi: Vec<i64> = p.vars.iter().map(|v| v.upper.unwrap()).collect();
    if lo.iter().zip(&hi).any(|(l, h)| l > h) {
        return None;
    }
    let mut x = lo.clone();
    let mut best: Option<Vec<i64>> = None;
    loop {
        if p.satisfied_by(&x) {
            let o = p.objective_values(&x).unwrap();
            if best.as_ref().is_none_or(|b| o < *b) {
                best = Some(o);
            }
        }
        // Odometer increment.
        let mut i = 0;
        loop {
            if i == x.len() {
                return best;
            }
            if x[i] < hi[i] {
                x[i] += 1;
                break;
            }
            x[i] = lo[i];
            i += 1;
        }
    }
}

#[test]
fn random_problems_agree_with_brute_force() {
    let mut rng = Lcg(0x5eed_1e55);
    let (mut feasible, mut infeasible) = (0, 0);
    for case in 0..300 {
        let p = random_problem(&mut rng);
        let expected = brute_force(&p);
        let cbc = optimum(&p, Backend::Cbc);
        let isl = optimum(&p, Backend::Isl);
        assert_eq!(cbc, expected, "case {case}: CBC vs brute force on {p:?}");
        assert_eq!(isl, expected, "case {case}: isl vs brute force on {p:?}");
        if expected.is_some() {
            feasible += 1;
        } else {
            infeasible += 1;
        }
    }
    // The generator must exercise both answers to mean anything.
    assert!(feasible >= 50 && infeasible >= 20, "feasible {feasible}, infeasible {infeasible}");
}

/// Presolve's merging of equal and opposite inequalities: problems
/// where a random inequality comes back negated (an implicit equality,
/// or a range, or an empty range) or repeated with another constant.
#[test]
fn parallel_inequalities_agree_with_brute_force() {
    let mut rng = Lcg(0x0dd5_5173);
    let (mut feasible, mut infeasible) = (0, 0);
    for case in 0..300 {
        let mut p = random_problem(&mut rng);
        for _ in 0..rng.range(1, 3) {
            let c = p.constraints[rng.range(0, p.constraints.len() as i64 - 1) as usize].clone();
            let negated: Vec<(usize, i64)> = c.coeffs.iter().map(|&(v, a)| (v, -a)).collect();
            match rng.range(0, 2) {
                0 => p.add_constraint(negated, -c.constant + rng.range(-1, 1), Relation::Ge),
                1 => p.add_constraint(c.coeffs.clone(), c.constant + rng.range(-2, 2), Relation::Ge),
                _ => p.add_constraint(negated, -c.constant, Relation::Ge),
            }
        }
        let expected = brute_force(&p);
        assert_eq!(optimum(&p, Backend::Cbc), expected, "case {case}: CBC vs brute force on {p:?}");
        if expected.is_some() {
            feasible += 1;
        } else {
            infeasible += 1;
        }
    }
    assert!(feasible >= 50 && infeasible >= 20, "feasible {feasible}, infeasible {infeasible}");
}

/// Like [`random_problem`], but some bounds are missing, so that
/// unbounded objectives and unbounded free variables occur.
fn random_open_problem(rng: &mut Lcg) -> Problem {
    let mut p = random_problem(rng);
    for v in &mut p.vars {
        if rng.range(0, 2) == 0 {
            v.lower = None;
        }
        if rng.range(0, 2) == 0 {
            v.upper = None;
        }
    }
    p
}

/// What the backends must agree on: the optimum, infeasibility, or which
/// objective is unbounded.
fn verdict(p: &Problem, backend: Backend) -> Result<Option<Vec<i64>>, usize> {
    match lexmin(p, backend) {
        Ok(Outcome::Optimal { values, objective_values }) => {
            assert!(p.satisfied_by(&values), "{backend:?}: {values:?} infeasible for {p:?}");
            Ok(Some(objective_values))
        }
        Ok(Outcome::Infeasible) => Ok(None),
        Err(IlpError::Unbounded { objective }) => Err(objective),
        Err(e) => panic!("{backend:?}: {e} on {p:?}"),
    }
}

#[test]
fn random_open_problems_agree() {
    let mut rng = Lcg(0x0bad_cafe);
    let mut unbounded = 0;
    for case in 0..300 {
        let p = random_open_problem(&mut rng);
        let cbc = verdict(&p, Backend::Cbc);
        let isl = verdict(&p, Backend::Isl);
        assert_eq!(cbc, isl, "case {case}: CBC vs isl on {p:?}");
        unbounded += cbc.is_err() as usize;
    }
    assert!(unbounded >= 20, "only {unbounded} unbounded cases");
}

/// Two scheduler-sized problems: the backends agree; time per lexmin is
/// printed, not asserted (`cargo test -p space --release timing -- --nocapture`).
#[test]
fn timing() {
    // Bounded: eight coefficients in [-4, 4], legality-like constraints,
    // three objectives.
    let mut bounded = Problem::new();
    let c: Vec<usize> = (0..8).map(|i| bounded.add_var(format!("c{i}"), Some(-4), Some(4))).collect();
    bounded.add_constraint([(c[0], 1), (c[1], -1), (c[2], 2)], -1, Relation::Ge);
    bounded.add_constraint([(c[3], 1), (c[4], 1), (c[5], -1), (c[0], 1)], -2, Relation::Ge);
    bounded.add_constraint([(c[6], 2), (c[7], -1), (c[1], 1)], 0, Relation::Eq);
    bounded.add_objective(c.iter().map(|&i| (i, 1)).collect::<Vec<_>>());
    bounded.add_objective([(c[0], 1)]);
    bounded.add_objective([(c[7], -1)]);
    // Farkas-like: coefficients split as c+ - c-, multipliers and a bound
    // w, all >= 0 without upper bounds, equalities tying them together.
    let mut farkas = Problem::new();
    let cp: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("c+{i}"), Some(0), None)).collect();
    let cm: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("c-{i}"), Some(0), None)).collect();
    let l: Vec<usize> = (0..4).map(|i| farkas.add_var(format!("l{i}"), Some(0), None)).collect();
    let w = farkas.add_var("w", Some(0), None);
    let c = |i: usize, a: i64| [(cp[i], a), (cm[i], -a)];
    farkas.add_constraint([&c(0, 1)[..], &c(2, -1), &[(l[0], -1)]].concat(), 0, Relation::Eq);
    farkas.add_constraint([&c(1, 1)[..], &[(l[1], -1), (l[2], -1)]].concat(), 0, Relation::Eq);
    farkas.add_constraint([&c(2, 1)[..], &c(3, 1), &[(l[3], -1)]].concat(), -1, Relation::Eq);
    farkas.add_constraint([&c(0, -1)[..], &c(1, -1), &[(w, 1)]].concat(), 0, Relation::Ge);
    farkas.add_constraint(cp.iter().chain(&cm).map(|&i| (i, 1)).collect::<Vec<_>>(), -1, Relation::Ge);
    farkas.add_objective([(w, 1)]);
    farkas.add_objective(cp.iter().chain(&cm).map(|&i| (i, 1)).collect::<Vec<_>>());
    farkas.add_objective(l.iter().map(|&i| (i, 1)).collect::<Vec<_>>());
    for (name, p) in [("bounded", &bounded), ("farkas", &farkas)] {
        let optimum = |o: Outcome| match o {
            Outcome::Optimal { objective_values, .. } => Some(objective_values),
            Outcome::Infeasible => None,
        };
        assert_eq!(
            optimum(lexmin(p, Backend::Cbc).unwrap()),
            optimum(lexmin(p, Backend::Isl).unwrap()),
            "{name}"
        );
        for backend in BACKENDS {
            let runs = 20;
            let start = Instant::now();
            let before = solves();
            let mut last = None;
            for _ in 0..runs {
                last = Some(lexmin(p, backend).unwrap());
            }
            let per = start.elapsed() / runs;
            let n = (solves() - before) / runs as u64;
            println!("{name} {backend:?}: {per:?} per lexmin ({n} solves each), {last:?}");
        }
    }
}
