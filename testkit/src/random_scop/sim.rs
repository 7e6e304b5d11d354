//! The generator's model of a program: every instance at the parameter
//! values `main` passes, and the fixes it makes from them.

use super::*;

/// The model of the program: every instance at the parameter values.
pub(super) struct Sim {
    pub(super) params: [i64; 2],
    /// Per statement, its instances.
    pub(super) runs: Vec<u64>,
    pub(super) instances: u64,
    pub(super) steps: u64,
    pub(super) overflow: bool,
    pub(super) depth: usize,
    /// Per condition modulo operand (in order), its smallest value.
    pub(super) cond_min: Vec<i64>,
    pub(super) negative_condition: bool,
    /// Per reference (in order): its array and each subscript's range; per
    /// modulo/division subscript (in order), the operand's smallest value.
    pub(super) refs: Vec<(usize, Vec<(i64, i64)>)>,
    pub(super) sub_min: Vec<i64>,
}

impl Sim {
    pub(super) fn new(params: &[i64; 2], statements: usize) -> Self {
        Sim {
            params: *params,
            runs: vec![0; statements],
            instances: 0,
            steps: 0,
            overflow: false,
            depth: 0,
            cond_min: Vec::new(),
            negative_condition: false,
            refs: Vec::new(),
            sub_min: Vec::new(),
        }
    }

    pub(super) fn aff(&self, a: &Aff, it: &[i64; 5]) -> i64 {
        a.terms
            .iter()
            .map(|(c, v)| c * if *v >= PARAM { self.params[v - PARAM] } else { it[*v] })
            .sum::<i64>()
            + a.c
    }

    pub(super) fn expr(&self, e: &IExpr, it: &[i64; 5]) -> i64 {
        match e {
            IExpr::Aff(a) => self.aff(a, it),
            IExpr::Mod(a, k) => self.aff(a, it).rem_euclid(*k),
            IExpr::Div(a, k) => self.aff(a, it).div_euclid(*k),
        }
    }

    /// Walks `nodes`; references and conditions are numbered in text order
    /// by a first, structural pass so that unreached ones keep their slot.
    pub(super) fn run(&mut self, nodes: &[Node], it: &mut [i64; 5]) {
        let mut conds = 0;
        let mut refs = Vec::new();
        let mut subs = 0;
        let mut stmts = 0;
        number(nodes, &mut conds, &mut refs, &mut subs, &mut stmts);
        self.cond_min = vec![i64::MAX; conds];
        self.refs = refs.into_iter().map(|(a, rank)| (a, vec![(i64::MAX, i64::MIN); rank])).collect();
        self.sub_min = vec![i64::MAX; subs];
        self.walk(nodes, it, &mut Counters::default());
        for r in &mut self.refs {
            for d in &mut r.1 {
                if d.0 > d.1 {
                    *d = (0, 0);
                }
            }
        }
        self.negative_condition = self.cond_min.iter().any(|&m| m < 0 && m != i64::MAX);
    }

    pub(super) fn walk(&mut self, nodes: &[Node], it: &mut [i64; 5], at: &mut Counters) {
        for node in nodes {
            if self.overflow {
                return;
            }
            match node {
                Node::Loop { depth: d, lower, uppers, down, step, body } => {
                    self.depth = self.depth.max(d + 1);
                    let lo = self.expr(lower, it);
                    let mut hi = i64::MAX;
                    for (u, strict) in uppers {
                        hi = hi.min(self.expr(u, it) - i64::from(*strict));
                    }
                    let start = *at;
                    let mut end = None;
                    let mut values: Box<dyn Iterator<Item = i64>> = if *down {
                        Box::new((lo..=hi).rev())
                    } else {
                        Box::new((lo..=hi).step_by(*step as usize))
                    };
                    if lo > hi {
                        values = Box::new(std::iter::empty());
                    }
                    for v in values {
                        self.steps += 1;
                        if self.steps > MAX_STEPS {
                            self.overflow = true;
                            return;
                        }
                        it[*d] = v;
                        let mut inner = start;
                        self.walk(body, it, &mut inner);
                        end = Some(inner);
                        if self.overflow {
                            return;
                        }
                    }
                    // Numbering continues after the body whether or not it ran.
                    *at = end.unwrap_or_else(|| skip(body, start));
                }
                Node::If { atoms, or, body, other } => {
                    let mut values = Vec::new();
                    for a in atoms {
                        values.push(match a {
                            Atom::Cmp(l, op, r) => {
                                let (l, r) = (self.expr(l, it), self.expr(r, it));
                                match *op {
                                    "<" => l < r,
                                    "<=" => l <= r,
                                    ">" => l > r,
                                    ">=" => l >= r,
                                    _ => l == r,
                                }
                            }
                            Atom::ModEq(a, k, r) => {
                                let v = self.aff(a, it);
                                let m = &mut self.cond_min[at.conds];
                                *m = (*m).min(v);
                                at.conds += 1;
                                v.rem_euclid(*k) == *r
                            }
                        });
                    }
                    let taken = if *or { values.iter().any(|&b| b) } else { values.iter().all(|&b| b) };
                    if taken {
                        self.walk(body, it, at);
                        *at = skip(other, *at);
                    } else {
                        *at = skip(body, *at);
                        self.walk(other, it, at);
                    }
                }
                Node::Stmt(s) => {
                    self.runs[at.stmts] += 1;
                    at.stmts += 1;
                    self.instances += 1;
                    if self.instances > MAX_INSTANCES {
                        self.overflow = true;
                        return;
                    }
                    for r in s.reads.iter().chain(std::iter::once(&s.lhs)) {
                        if let Ref::Elem(_, subs) = r {
                            for (d, e) in subs.iter().enumerate() {
                                if let IExpr::Mod(a, _) | IExpr::Div(a, _) = e {
                                    let v = self.aff(a, it);
                                    let m = &mut self.sub_min[at.subs];
                                    *m = (*m).min(v);
                                    at.subs += 1;
                                }
                                let v = self.expr(e, it);
                                let range = &mut self.refs[at.refs].1[d];
                                *range = (range.0.min(v), range.1.max(v));
                            }
                            at.refs += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Positions in the text order of conditions, references, modulo
/// subscripts and statements.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counters {
    pub(super) conds: usize,
    pub(super) refs: usize,
    pub(super) subs: usize,
    pub(super) stmts: usize,
}

/// The counters after `nodes`, from `at`, without running them.
pub(super) fn skip(nodes: &[Node], at: Counters) -> Counters {
    let mut conds = at.conds;
    let mut refs = vec![(0, 0); at.refs];
    let mut subs = at.subs;
    let mut stmts = at.stmts;
    number(nodes, &mut conds, &mut refs, &mut subs, &mut stmts);
    Counters { conds, refs: refs.len(), subs, stmts }
}

/// Counts (in text order) modulo conditions, references (array, rank),
/// modulo/division subscripts and statements.
pub(super) fn number(
    nodes: &[Node],
    conds: &mut usize,
    refs: &mut Vec<(usize, usize)>,
    subs: &mut usize,
    stmts: &mut usize,
) {
    for node in nodes {
        match node {
            Node::Loop { body, .. } => number(body, conds, refs, subs, stmts),
            Node::If { atoms, body, other, .. } => {
                *conds += atoms.iter().filter(|a| matches!(a, Atom::ModEq(..))).count();
                number(body, conds, refs, subs, stmts);
                number(other, conds, refs, subs, stmts);
            }
            Node::Stmt(s) => {
                *stmts += 1;
                for r in s.reads.iter().chain(std::iter::once(&s.lhs)) {
                    if let Ref::Elem(a, e) = r {
                        *subs += e.iter().filter(|e| !matches!(e, IExpr::Aff(_))).count();
                        refs.push((*a, e.len()));
                    }
                }
            }
        }
    }
}

/// Shifts each modulo condition's operand to be non-negative where evaluated.
pub(super) fn fix_conditions(nodes: &mut [Node], sim: &Sim, at: &mut usize, changed: &mut bool) {
    for node in nodes {
        match node {
            Node::Loop { body, .. } => fix_conditions(body, sim, at, changed),
            Node::If { atoms, body, other, .. } => {
                for a in atoms.iter_mut() {
                    if let Atom::ModEq(aff, k, _) = a {
                        let m = sim.cond_min[*at];
                        if m < 0 && m != i64::MAX {
                            // A multiple of k: the condition keeps its meaning.
                            aff.c += (-m + *k - 1) / *k * *k;
                            *changed = true;
                        }
                        *at += 1;
                    }
                }
                fix_conditions(body, sim, at, changed);
                fix_conditions(other, sim, at, changed);
            }
            Node::Stmt(_) => {}
        }
    }
}

/// Shifts each subscript so that its smallest value is 0 (and each modulo
/// or division operand so that it is non-negative).
pub(super) fn fix_subscripts(nodes: &mut [Node], sim: &Sim, at: &mut Counters) {
    for node in nodes {
        match node {
            Node::Loop { body, .. } => fix_subscripts(body, sim, at),
            Node::If { body, other, .. } => {
                fix_subscripts(body, sim, at);
                fix_subscripts(other, sim, at);
            }
            Node::Stmt(s) => {
                for r in s.reads.iter_mut().chain(std::iter::once(&mut s.lhs)) {
                    if let Ref::Elem(_, subs) = r {
                        for (d, e) in subs.iter_mut().enumerate() {
                            let (lo, _) = sim.refs[at.refs].1[d];
                            match e {
                                IExpr::Aff(a) => a.c -= lo,
                                IExpr::Mod(a, k) | IExpr::Div(a, k) => {
                                    let m = sim.sub_min[at.subs];
                                    if m < 0 && m != i64::MAX {
                                        a.c += (-m + *k - 1) / *k * *k;
                                    }
                                    at.subs += 1;
                                }
                            }
                        }
                        at.refs += 1;
                    }
                }
            }
        }
    }
}
