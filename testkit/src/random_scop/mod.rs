//! Random SCoPs: small, well-formed C programs for an oracle that does not
//! depend on anyone writing test programs (issue 36).
//!
//! [`generate`] makes, deterministically per seed, a program whose
//! `kernel(n, m, alpha)` holds one `#pragma scop` region: loop nests of
//! depth 1–5 with 1–6 statements, affine bounds (several upper bounds
//! joined by `&&`, loops that count down, offsets near 1000), `if`s on
//! affine and modulo conditions, subscripts with negative coefficients and
//! large constants, `%` and `/` by constants (on non-negative operands
//! only, where C's truncation is isl's floor), reductions (`+=`, `-=`,
//! `*=`), written and read-only scalars, double and int arrays; and a
//! `main` that initialises every array, calls the kernel once and prints a
//! checksum. With [`Options::data_branches`] and
//! [`Options::indirect_subscripts`], conditions and subscripts that read
//! data as well.
//!
//! The program is well-defined by construction: the generator runs its own
//! model of the loops (every instance, at the parameter values `main`
//! passes) and shifts each subscript so that its smallest value is 0, sizes
//! each array to the largest subscript, keeps the instance count small, and
//! (unless [`Options::empty_domains`]) starts again, from the same random
//! stream, when a statement would never run. Values cannot overflow: double
//! right-hand sides are weighted sums with weights of magnitude at most 1,
//! int ones are taken modulo 1009 of non-negative terms.

use std::fmt::Write as _;

mod print;
mod sim;
use print::print_program;
use sim::{fix_conditions, fix_subscripts, Counters, Sim};

/// What the generator may produce beyond the constructs every program
/// uses; [`Options::default`] is what the CI seed set runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Negative integer literals in affine positions (`i * -1`, `+ -5`,
    /// `for (int i = -3; ...)`), not only subtraction.
    pub negative_literals: bool,
    /// Statements that may never run (a guard no instance meets).
    pub empty_domains: bool,
    /// Branches on data: a share of the statements under `if (R > 0.5)`,
    /// `R` one of their own reads (in bounds by construction), which the
    /// model keeps as may-writes.
    pub data_branches: bool,
    /// Indirect subscripts: a share of the subscripts `e` read as
    /// `I[e] % extent`, through a read-only int array `I` (in bounds by
    /// construction), which the model keeps as may-accesses of the whole
    /// extent.
    pub indirect_subscripts: bool,
}

impl Options {
    /// Every construct the generator knows.
    pub fn all() -> Self {
        Options {
            negative_literals: true,
            empty_domains: true,
            data_branches: true,
            indirect_subscripts: true,
        }
    }
}

/// A generated program.
#[derive(Debug, Clone)]
pub struct Program {
    pub seed: u64,
    /// The whole C file.
    pub text: String,
    pub statements: usize,
    /// The deepest loop nest.
    pub depth: usize,
    /// Statement instances the kernel runs.
    pub instances: u64,
}

/// The most statement instances one program may run (it must take
/// milliseconds, also under a debug build's slow neighbours).
const MAX_INSTANCES: u64 = 20_000;
/// The most loop iterations one program may run (loops whose bodies run
/// nothing count too).
const MAX_STEPS: u64 = 200_000;
/// The most elements of all arrays together.
const MAX_ELEMENTS: i64 = 400_000;

/// A small, seeded, portable PRNG (SplitMix64): the same programs for a
/// seed on every machine and with every version of `rand`.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi);
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as i64
    }
    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as i64 - 1) as usize]
    }
}

/// Loop iterators by depth, parameters by index.
const ITERS: [&str; 5] = ["i", "j", "k", "l", "p"];
const PARAMS: [&str; 2] = ["n", "m"];
/// Variable numbers: iterators are their depth, parameters from here on.
const PARAM: usize = 16;

/// `Σ coefficient · variable + constant`.
#[derive(Debug, Clone, Default)]
struct Aff {
    terms: Vec<(i64, usize)>,
    c: i64,
}

/// An integer expression: affine, or the floor-mod or floor-division of an
/// affine expression (non-negative where it is evaluated) by a constant.
#[derive(Debug, Clone)]
enum IExpr {
    Aff(Aff),
    Mod(Aff, i64),
    Div(Aff, i64),
}

#[derive(Debug, Clone)]
enum Atom {
    /// `left op right`.
    Cmp(IExpr, &'static str, IExpr),
    /// `(aff) % k == r`.
    ModEq(Aff, i64, i64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    Double,
    Int,
}

#[derive(Debug, Clone)]
struct Array {
    name: String,
    ty: Ty,
    rank: usize,
    /// Written by some statement (else read-only, its values in [0.1, 1.1)).
    written: bool,
}

/// One reference: an array element or a scalar (written `s0`, `s1`, or the
/// read-only `alpha`).
#[derive(Debug, Clone)]
enum Ref {
    Elem(usize, Vec<IExpr>),
    Scalar(String),
}

#[derive(Debug, Clone)]
struct Stmt {
    lhs: Ref,
    op: &'static str,
    /// The right-hand side with `@N@` standing for `reads[N]`.
    rhs: String,
    reads: Vec<Ref>,
}

#[derive(Debug, Clone)]
enum Node {
    Loop {
        depth: usize,
        lower: IExpr,
        /// `v < e` (strict) or `v <= e`, joined by `&&`.
        uppers: Vec<(IExpr, bool)>,
        /// `for (v = upper; v >= lower; v--)` (one inclusive upper bound).
        down: bool,
        /// `v += step` (upward loops).
        step: i64,
        body: Vec<Node>,
    },
    If {
        atoms: Vec<Atom>,
        or: bool,
        body: Vec<Node>,
        /// The `else` branch (none when empty).
        other: Vec<Node>,
    },
    Stmt(Stmt),
}

struct Gen<'r> {
    rng: &'r mut Rng,
    opts: Options,
    arrays: Vec<Array>,
    /// Each array's extents, once they are known (for printing).
    extents: Vec<Vec<i64>>,
    scalars: Vec<String>,
    params: [i64; 2],
    statements: usize,
    max_statements: usize,
    max_depth: usize,
}

/// The program for `seed` under `opts`.
pub fn generate(seed: u64, opts: &Options) -> Program {
    let mut rng = Rng::new(seed);
    for _ in 0..1000 {
        if let Some(p) = attempt(&mut rng, seed, opts) {
            return p;
        }
    }
    panic!("random_scop: no well-formed program for seed {seed} in 1000 attempts")
}

fn attempt(rng: &mut Rng, seed: u64, opts: &Options) -> Option<Program> {
    let n_double = rng.range(1, 4) as usize;
    let n_int = if rng.pct(30) { rng.range(1, 2) as usize } else { 0 };
    let mut arrays = Vec::new();
    for a in 0..n_double + n_int {
        let ty = if a < n_double { Ty::Double } else { Ty::Int };
        let name = if ty == Ty::Double { ["A", "B", "C", "D"][a] } else { ["P", "Q"][a - n_double] };
        let rank = *rng.pick(&[1, 1, 2, 2, 2, 3]);
        arrays.push(Array { name: name.into(), ty, rank, written: false });
    }
    let scalars = (0..rng.range(0, 2)).map(|s| format!("s{s}")).collect();
    let mut g = Gen {
        params: [rng.range(3, 14), rng.range(2, 10)],
        rng,
        opts: *opts,
        arrays,
        extents: Vec::new(),
        scalars,
        statements: 0,
        max_statements: 0,
        max_depth: 0,
    };
    g.max_statements = g.rng.range(1, 6) as usize;
    g.max_depth = g.rng.range(1, 5) as usize;
    let mut top = Vec::new();
    while g.statements < g.max_statements {
        let node = g.node(0);
        top.push(node);
    }
    // Every statement's instances, and each expression's range on them.
    let mut sim = Sim::new(&g.params, g.statements);
    sim.run(&top, &mut [0; 5]);
    if sim.instances == 0 || sim.instances > MAX_INSTANCES || sim.overflow {
        return None;
    }
    if !opts.empty_domains && sim.runs.contains(&0) {
        return None;
    }
    // Modulo operands of conditions first (they decide what runs), then
    // the subscripts: each shifted to be non-negative where evaluated.
    for _ in 0..4 {
        let mut changed = false;
        fix_conditions(&mut top, &sim, &mut 0, &mut changed);
        if !changed {
            break;
        }
        sim = Sim::new(&g.params, g.statements);
        sim.run(&top, &mut [0; 5]);
    }
    if sim.negative_condition {
        return None;
    }
    if sim.instances == 0 || sim.overflow {
        return None;
    }
    if !opts.empty_domains && sim.runs.contains(&0) {
        return None;
    }
    fix_subscripts(&mut top, &sim, &mut Counters::default());
    let mut sim = Sim::new(&g.params, g.statements);
    sim.run(&top, &mut [0; 5]);
    // Extents: the largest subscript in each dimension, plus padding.
    let mut extents: Vec<Vec<i64>> = g.arrays.iter().map(|a| vec![0; a.rank]).collect();
    let mut used = vec![false; g.arrays.len()];
    for (r, (a, subs)) in sim.refs.iter().enumerate() {
        let _ = r;
        used[*a] = true;
        for (d, (lo, hi)) in subs.iter().enumerate() {
            if *lo < 0 {
                return None;
            }
            extents[*a][d] = extents[*a][d].max(*hi + 1);
        }
    }
    let mut total = 0;
    for (a, e) in extents.iter_mut().enumerate() {
        for x in e.iter_mut() {
            *x = (*x).max(1) + g.rng.range(0, 2);
        }
        if used[a] {
            total += e.iter().product::<i64>();
        }
    }
    if total > MAX_ELEMENTS {
        return None;
    }
    let (statements, depth, instances) = (g.statements, sim.depth, sim.instances);
    g.extents = extents;
    let text = print_program(&g, seed, &top, &used);
    Some(Program { seed, text, statements, depth, instances })
}

impl Gen<'_> {
    /// A loop, an `if` or a statement at `depth` (loops open so far).
    fn node(&mut self, depth: usize) -> Node {
        let left = self.max_statements - self.statements;
        let roll = self.rng.range(0, 99);
        if depth < self.max_depth && (depth == 0 || roll < 45) {
            return self.for_loop(depth);
        }
        if depth > 0 && roll < 57 && left > 0 {
            let (atoms, or) = self.condition(depth);
            let mut body = vec![self.node(depth)];
            while self.statements < self.max_statements && self.rng.pct(20) {
                body.push(self.node(depth));
            }
            let mut other = Vec::new();
            if self.statements < self.max_statements && self.rng.pct(20) {
                other.push(self.node(depth));
            }
            return Node::If { atoms, or, body, other };
        }
        Node::Stmt(self.statement(depth))
    }

    fn for_loop(&mut self, depth: usize) -> Node {
        let big = if self.rng.pct(8) { self.rng.range(990, 1000) } else { 0 };
        let mut lower = Aff { c: big + self.rng.range(-3, 3), ..Default::default() };
        if depth > 0 && self.rng.pct(30) {
            // Triangular: from an outer iterator.
            lower = Aff {
                terms: vec![(1, self.rng.range(0, depth as i64 - 1) as usize)],
                c: self.rng.range(-2, 2),
            };
        }
        let mut uppers = Vec::new();
        let first = match self.rng.range(0, 9) {
            0..=3 => Aff {
                terms: vec![(1, PARAM + self.rng.range(0, 1) as usize)],
                c: big + self.rng.range(-2, 2),
            },
            4..=5 => Aff { c: big + self.rng.range(2, 12), ..Default::default() },
            6..=7 if depth > 0 => {
                // Triangular: up to an outer iterator.
                Aff {
                    terms: vec![(1, self.rng.range(0, depth as i64 - 1) as usize)],
                    c: self.rng.range(-1, 3),
                }
            }
            _ => Aff {
                terms: vec![(1, PARAM), (self.rng.range(-1, 1), PARAM + 1)],
                c: big + self.rng.range(-1, 4),
            },
        };
        uppers.push((self.iexpr(first, depth), self.rng.pct(75)));
        if self.rng.pct(15) {
            // A second bound: large (1000) or small.
            let c = if self.rng.pct(50) { 1000 } else { big + self.rng.range(3, 9) };
            uppers.push((IExpr::Aff(Aff { c, ..Default::default() }), true));
        }
        let down = uppers.len() == 1 && self.rng.pct(10);
        if down {
            uppers[0].1 = false;
        }
        let step = if !down && self.rng.pct(8) { self.rng.range(2, 3) } else { 1 };
        let mut body = Vec::new();
        loop {
            body.push(self.node(depth + 1));
            if self.statements >= self.max_statements || !self.rng.pct(35) {
                break;
            }
        }
        Node::Loop { depth, lower: IExpr::Aff(lower), uppers, down, step, body }
    }

    /// Sometimes a floor-division of `a` by a constant (a loop bound), where
    /// `a` is a positive sum of parameters (C truncates: only non-negative
    /// operands divide as isl's floor does).
    fn iexpr(&mut self, a: Aff, _depth: usize) -> IExpr {
        if self.rng.pct(8) && a.c >= 0 && a.terms.iter().all(|(c, v)| *c > 0 && *v >= PARAM) {
            IExpr::Div(a, self.rng.range(2, 3))
        } else {
            IExpr::Aff(a)
        }
    }

    /// An affine form of the iterators `0..depth` and the parameters.
    fn aff(&mut self, depth: usize, vars: usize, coef: i64, c: i64) -> Aff {
        let mut terms: Vec<(i64, usize)> = Vec::new();
        for _ in 0..self.rng.range(1, vars as i64) {
            let v = if depth == 0 || self.rng.pct(15) {
                PARAM + self.rng.range(0, 1) as usize
            } else {
                self.rng.range(0, depth as i64 - 1) as usize
            };
            let mut a = self.rng.range(-coef, coef);
            if a == 0 {
                a = 1;
            }
            match terms.iter_mut().find(|t| t.1 == v) {
                Some(t) => t.0 += a,
                None => terms.push((a, v)),
            }
        }
        terms.retain(|t| t.0 != 0);
        Aff { terms, c: self.rng.range(-c, c) }
    }

    fn condition(&mut self, depth: usize) -> (Vec<Atom>, bool) {
        let mut atoms = Vec::new();
        for _ in 0..self.rng.range(1, 2) {
            let atom = if self.rng.pct(30) {
                let k = self.rng.range(2, 4);
                let a = self.aff(depth, 2, 2, 3);
                Atom::ModEq(a, k, self.rng.range(0, k - 1))
            } else {
                let l = self.aff(depth, 2, 2, 2);
                let r = if self.rng.pct(50) {
                    Aff { c: self.rng.range(-2, 12), ..Default::default() }
                } else {
                    self.aff(depth, 1, 1, 6)
                };
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", ">=", "<="]);
                Atom::Cmp(IExpr::Aff(l), op, IExpr::Aff(r))
            };
            atoms.push(atom);
        }
        let or = atoms.len() > 1 && self.rng.pct(25);
        (atoms, or)
    }

    /// A subscript in the iterators `0..depth`: mostly `v + c`.
    fn subscript(&mut self, depth: usize, dim: usize) -> IExpr {
        if depth == 0 {
            return IExpr::Aff(Aff { c: self.rng.range(0, 3), ..Default::default() });
        }
        let roll = self.rng.range(0, 99);
        let v = if self.rng.pct(70) {
            (depth - 1).saturating_sub(dim)
        } else {
            self.rng.range(0, depth as i64 - 1) as usize
        };
        match roll {
            0..=54 => IExpr::Aff(Aff { terms: vec![(1, v)], c: self.rng.range(-3, 3) }),
            55..=64 => IExpr::Aff(Aff { terms: vec![(-1, v), (1, PARAM)], c: self.rng.range(-3, 3) }),
            65..=79 => IExpr::Aff(self.aff(depth, 2, 2, 5)),
            80..=86 => IExpr::Aff(Aff { c: self.rng.range(0, 4), ..Default::default() }),
            87..=93 => {
                let a = Aff { terms: vec![(1, v)], c: self.rng.range(0, 3) };
                IExpr::Mod(a, self.rng.range(2, 4))
            }
            _ => {
                let a = self.aff(depth, 2, 2, 3);
                IExpr::Div(a, self.rng.range(2, 3))
            }
        }
    }

    fn reference(&mut self, depth: usize, ty: Ty) -> Option<Ref> {
        let candidates: Vec<usize> = (0..self.arrays.len()).filter(|&a| self.arrays[a].ty == ty).collect();
        if candidates.is_empty() {
            return None;
        }
        let a = *self.rng.pick(&candidates);
        let subs = (0..self.arrays[a].rank).map(|d| self.subscript(depth, d)).collect();
        Some(Ref::Elem(a, subs))
    }

    fn statement(&mut self, depth: usize) -> Stmt {
        self.statements += 1;
        let has_int = self.arrays.iter().any(|a| a.ty == Ty::Int);
        let ty = if has_int && self.rng.pct(30) { Ty::Int } else { Ty::Double };
        let lhs = if ty == Ty::Double && !self.scalars.is_empty() && self.rng.pct(20) {
            Ref::Scalar(self.rng.pick(&self.scalars).clone())
        } else {
            self.reference(depth, ty).expect("an array of the type")
        };
        if let Ref::Elem(a, _) = &lhs {
            self.arrays[*a].written = true;
        }
        let mut reads = Vec::new();
        match ty {
            Ty::Int => {
                // (Σ small multiples of reads + c) % 1009, reads non-negative.
                let op = "=";
                let mut rhs = String::from("(");
                if self.rng.pct(40) {
                    reads.push(lhs.clone());
                    rhs.push_str("@0@");
                }
                for _ in 0..self.rng.range(1, 2) {
                    let r = self.reference(depth, Ty::Int).unwrap();
                    if !reads.is_empty() {
                        rhs.push_str(" + ");
                    }
                    let _ = write!(rhs, "{} * @{}@", self.rng.range(1, 3), reads.len());
                    reads.push(r);
                }
                let _ = write!(rhs, " + {}) % 1009", self.rng.range(0, 9));
                Stmt { lhs, op, rhs, reads }
            }
            Ty::Double => {
                let op = *self.rng.pick(&["=", "=", "=", "+=", "+=", "-=", "*="]);
                let mut terms = Vec::new();
                let n = self.rng.range(1, 3);
                for _ in 0..n {
                    let t = self.double_term(depth, &mut reads);
                    terms.push(t);
                }
                let rhs = if op == "*=" {
                    // A factor in [0.5, 1]: 0.5 + 0.5 * (a weighted mean).
                    format!("(0.5 + 0.5 * ({}))", weighted(self.rng, &terms, 1))
                } else {
                    weighted(self.rng, &terms, 1)
                };
                Stmt { lhs, op, rhs, reads }
            }
        }
    }

    /// A term of magnitude at most about the largest value read: a read, a
    /// product with a value below one, a constant, an iterator's value.
    fn double_term(&mut self, depth: usize, reads: &mut Vec<Ref>) -> String {
        let read = |g: &mut Self, reads: &mut Vec<Ref>| -> String {
            let r = if !g.scalars.is_empty() && g.rng.pct(15) {
                Ref::Scalar(g.rng.pick(&g.scalars).clone())
            } else if g.rng.pct(10) {
                Ref::Scalar("alpha".into())
            } else if g.arrays.iter().any(|a| a.ty == Ty::Int) && g.rng.pct(10) {
                let r = g.reference(depth, Ty::Int).unwrap();
                reads.push(r);
                return format!("0.001 * @{}@", reads.len() - 1);
            } else {
                g.reference(depth, Ty::Double).unwrap()
            };
            reads.push(r);
            format!("@{}@", reads.len() - 1)
        };
        match self.rng.range(0, 9) {
            0..=4 => read(self, reads),
            5..=6 => {
                // A quotient bounded by its numerator.
                let a = read(self, reads);
                let b = read(self, reads);
                format!("{a} / (1.0 + {b} * {b})")
            }
            7 => format!("{}.{}", self.rng.range(0, 1), self.rng.range(0, 9)),
            _ if depth > 0 => format!("0.01 * {}", ITERS[self.rng.range(0, depth as i64 - 1) as usize]),
            _ => read(self, reads),
        }
    }
}

/// `w1 * t1 + w2 * t2 ...` with `Σ |w| <= total`.
fn weighted(rng: &mut Rng, terms: &[String], total: i64) -> String {
    if terms.len() == 1 && rng.pct(50) {
        return terms[0].clone();
    }
    let ws = ["0.5", "0.25", "0.125"];
    let mut out = String::new();
    let mut budget = 8 * total; // in eighths
    for (i, t) in terms.iter().enumerate() {
        let w = if budget >= 4 { *rng.pick(&ws[..]) } else { "0.125" };
        budget -= match w {
            "0.5" => 4,
            "0.25" => 2,
            _ => 1,
        };
        let neg = i > 0 && rng.pct(30);
        let _ = write!(
            out,
            "{}{w} * {t}",
            if i == 0 {
                ""
            } else if neg {
                " - "
            } else {
                " + "
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_program_and_seeds_differ() {
        let a = generate(7, &Options::default());
        assert_eq!(a.text, generate(7, &Options::default()).text);
        assert_ne!(a.text, generate(8, &Options::default()).text);
    }

    #[test]
    fn programs_have_the_announced_shape() {
        for seed in 0..300 {
            let p = generate(seed, &Options::all());
            assert!((1..=6).contains(&p.statements), "{seed}: {}", p.text);
            assert!((1..=5).contains(&p.depth), "{seed}: {}", p.text);
            assert!(p.instances >= 1 && p.instances <= MAX_INSTANCES, "{seed}");
            assert!(p.text.contains("#pragma scop") && p.text.contains("#pragma endscop"));
        }
    }

    /// Branches on data come only with the option, and then in a share of
    /// the programs, which are otherwise the same.
    #[test]
    fn branches_on_data_come_with_their_option() {
        let with = |on| Options { data_branches: on, ..Options::all() };
        let guarded = (0..50).filter(|&seed| generate(seed, &with(true)).text.contains(" > 0.5) ")).count();
        assert!((10..50).contains(&guarded), "{guarded} of 50");
        for seed in 0..50 {
            let (a, b) = (generate(seed, &with(true)), generate(seed, &with(false)));
            assert!(!b.text.contains(" > 0.5) "));
            assert_eq!(a.text.lines().count(), b.text.lines().count(), "{seed}");
        }
    }

    /// Indirect subscripts likewise: the same programs but for the
    /// subscripts read through `I`, in a share of them.
    #[test]
    fn indirect_subscripts_come_with_their_option() {
        let with = |on| Options { indirect_subscripts: on, ..Options::all() };
        let indirect = (0..50).filter(|&seed| generate(seed, &with(true)).text.contains("[I[")).count();
        assert!((10..50).contains(&indirect), "{indirect} of 50");
        for seed in 0..50 {
            let (a, b) = (generate(seed, &with(true)), generate(seed, &with(false)));
            assert!(!b.text.contains("[I[") && !b.text.contains("int I["), "{seed}");
            // `I`'s declaration and its initialisation.
            assert_eq!(a.text.lines().count(), b.text.lines().count() + 2, "{seed}");
        }
    }
}
