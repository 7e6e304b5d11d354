//! An oracle for SCoP extraction and dependence analysis that does not trust
//! isl's view of the program: the original C program, run for real.
//!
//! For each PolyBench kernel the preprocessed file is rewritten so that every
//! SCoP statement first prints a trace record (its index, the values of its
//! loop iterators, and the subscripts of every access evaluated by the C
//! code itself) and then executes as before. The program is compiled with
//! `gcc -O0` at tiny problem sizes (the values in `main`'s size declaration
//! are replaced) and run. gcc, not our parser, decides which instances run and
//! in which order. From the trace, by brute force:
//!
//! * the instance set of each statement must equal its domain at those sizes;
//! * consecutive instances must be strictly increasing in `schedule_map`;
//! * every access relation, restricted to the domain, must map each instance
//!   to exactly the element the C code touched;
//! * value-based flow dependences (each read paired with the last earlier write
//!   of its element) must equal `deps::analyze`'s `flow` relations, per pair of
//!   references;
//! * memory-based RAW / WAR / WAW / RAR (every earlier access paired with every
//!   later one to the same element, from different instances) must equal the
//!   corresponding relations, per pair of references.
//!
//! Equality of an isl set with an explicit point list is checked as
//! "the points are a subset" plus "isl counts as many points", both after
//! fixing the parameters and projecting them out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use isl_rs::{Context, DimType, Map, Set, UnionMap};
use model::deps::{analyze, DepKind};
use model::scop::{extract, AccessKind, ExtractOptions, Scop, Source};

// ---------------------------------------------------------------------------
// Building and running the tracing program
// ---------------------------------------------------------------------------

fn kernel_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench").join(rel)
}

/// `A[i][j + 1]` → (`A`, [`i`, `j + 1`]); a scalar `s` → (`s`, []).
fn split_reference(text: &str) -> (String, Vec<String>) {
    let bytes: Vec<char> = text.chars().collect();
    let mut paren = 0i32;
    let mut base_end = None;
    let mut subs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            '(' => paren += 1,
            ')' => paren -= 1,
            '[' if paren == 0 => {
                if base_end.is_none() {
                    base_end = Some(i);
                }
                // Match this bracket, nested brackets and parentheses included.
                let mut depth = 0i32;
                let start = i + 1;
                let mut j = i;
                loop {
                    match bytes[j] {
                        '[' | '(' => depth += 1,
                        ']' | ')' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    j += 1;
                    assert!(j < bytes.len(), "unbalanced brackets in `{text}`");
                }
                subs.push(bytes[start..j].iter().collect::<String>().trim().to_string());
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    let base: String = bytes[..base_end.unwrap_or(bytes.len())].iter().collect();
    let base = base.trim().trim_start_matches('(').trim_end_matches(')').trim().to_string();
    (base, subs)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first occurrence of `needle` in `hay` at or after `from` that does not
/// start in the middle of an identifier.
fn find_token(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(rel) = hay[at..].find(needle) {
        let pos = at + rel;
        let before = hay[..pos].chars().next_back();
        let first = needle.chars().next();
        if !(before.is_some_and(is_ident) && first.is_some_and(is_ident)) {
            return Some(pos);
        }
        at = pos + 1;
    }
    None
}

/// Replaces the literal initialiser of `name` in `decl` (`int ni = 20, nj = 25;`).
fn set_size(decl: &str, name: &str, value: i64) -> Option<String> {
    let mut from = 0;
    while let Some(pos) = find_token(decl, name, from) {
        let rest = &decl[pos + name.len()..];
        let after_name = rest.trim_start();
        if let Some(after_eq) = after_name.strip_prefix('=') {
            let lit = after_eq.trim_start();
            let digits = lit.chars().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && !lit[digits..].starts_with(|c: char| is_ident(c) || c == '.') {
                let lit_start = decl.len() - lit.len();
                return Some(format!("{}{}{}", &decl[..lit_start], value, &decl[lit_start + digits..]));
            }
        }
        from = pos + 1;
    }
    None
}

/// The preprocessed program with every SCoP statement tracing itself, and the
/// sizes in `main` replaced.
fn instrument(source: &Source, scop: &Scop, sizes: &[(&str, i64)]) -> String {
    let text = &source.text;
    let (start, end) = scop.span;
    let region = &text[start..end];

    // A parameter record right after the `#pragma scop` line.
    let first_line = region.find('\n').expect("the pragma line ends") + 1;
    let mut out = String::new();
    out.push_str(&text[..start]);
    out.push_str(&region[..first_line]);
    out.push_str("{ oracle_v(-1);");
    for p in &scop.params {
        write!(out, " oracle_v((long)({p}));").unwrap();
    }
    out.push_str(" oracle_nl(); }\n");

    let mut cursor = first_line;
    for (k, st) in scop.statements.iter().enumerate() {
        let pos = find_token(region, &st.text, cursor).unwrap_or_else(|| {
            panic!("statement {} `{}` not found in the SCoP text after byte {cursor}", st.name, st.text)
        });
        out.push_str(&region[cursor..pos]);
        write!(out, "{{ oracle_v({k});").unwrap();
        for it in &st.c_iterators {
            write!(out, " oracle_v((long)({it}));").unwrap();
        }
        for a in &st.accesses {
            let (base, subs) = split_reference(&a.text);
            assert_eq!(base, a.array, "base of `{}`", a.text);
            for s in subs {
                write!(out, " oracle_v((long)({s}));").unwrap();
            }
        }
        write!(out, " oracle_nl(); {} }}", st.text).unwrap();
        cursor = pos + st.text.len();
    }
    out.push_str(&region[cursor..]);

    // Sizes: the first declaration in `main`.
    let tail = &text[end..];
    let main_at = tail.find("int main").expect("the kernel has a main");
    let brace = main_at + tail[main_at..].find('{').expect("main has a body") + 1;
    let semi = brace + tail[brace..].find(';').expect("main declares its sizes") + 1;
    let mut decl = tail[brace..semi].to_string();
    for (name, value) in sizes {
        decl = set_size(&decl, name, *value)
            .unwrap_or_else(|| panic!("size `{name}` not found in `{}`", decl.trim()));
    }
    out.push_str(&tail[..brace]);
    out.push_str(&decl);
    out.push_str(&tail[semi..]);

    let mut program = String::from("void oracle_v(long v); void oracle_nl(void);\n");
    program.push_str(&out);
    program.push_str(
        "\nvoid oracle_v(long v) { printf(\"%ld \", v); }\nvoid oracle_nl(void) { printf(\"\\n\"); }\n",
    );
    program
}

/// Compiles and runs the tracing program; its standard output.
fn run_traced(kernel: &str, program: &str) -> String {
    let dir = testkit::TempDir::new(&format!("oracle-{}", kernel.replace(['/', '.'], "_")));
    let c = dir.join("traced.c");
    let exe = dir.join("traced");
    std::fs::write(&c, program).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let out = Command::new(&cc)
        .args(["-O0", "-w", "-x", "c"])
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .expect("the C compiler runs");
    assert!(
        out.status.success(),
        "{kernel}: the tracing program does not compile ({}):\n{}",
        c.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .env_remove("POLYTUNE_DUMP")
        .env_remove("POLYTUNE_TIME")
        .output()
        .expect("the tracing program runs");
    assert!(
        run.status.success(),
        "{kernel}: the tracing program failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout).unwrap()
}

// ---------------------------------------------------------------------------
// The trace
// ---------------------------------------------------------------------------

/// One executed statement instance.
struct Record {
    stmt: usize,
    iters: Vec<i64>,
    /// Per access of the statement, in order: the subscripts C evaluated.
    subs: Vec<Vec<i64>>,
}

fn parse_trace(scop: &Scop, trace: &str, sizes: &[(&str, i64)]) -> Vec<Record> {
    let ranks: HashMap<&str, usize> = scop.arrays.iter().map(|a| (a.name.as_str(), a.rank())).collect();
    let mut params_seen = 0;
    let mut records = Vec::new();
    for line in trace.lines() {
        let vals: Vec<i64> = line.split_whitespace().map(|t| t.parse().expect("a trace value")).collect();
        if vals.is_empty() {
            continue;
        }
        if vals[0] == -1 {
            params_seen += 1;
            let got: Vec<i64> = vals[1..].to_vec();
            let want: Vec<i64> = scop.params.iter().map(|p| size_of(sizes, p)).collect();
            assert_eq!(got, want, "parameter values seen by the kernel");
            continue;
        }
        let stmt = vals[0] as usize;
        let st = &scop.statements[stmt];
        let mut at = 1;
        let iters = vals[at..at + st.iterators.len()].to_vec();
        at += st.iterators.len();
        let mut subs = Vec::new();
        for a in &st.accesses {
            let r = ranks[a.array.as_str()];
            subs.push(vals[at..at + r].to_vec());
            at += r;
        }
        assert_eq!(at, vals.len(), "trace record length of {}", st.name);
        records.push(Record { stmt, iters, subs });
    }
    assert_eq!(params_seen, 1, "the SCoP must run exactly once");
    records
}

fn size_of(sizes: &[(&str, i64)], param: &str) -> i64 {
    sizes
        .iter()
        .find(|(n, _)| *n == param || format!("{n}_") == param)
        .unwrap_or_else(|| panic!("no size given for parameter `{param}`"))
        .1
}

// ---------------------------------------------------------------------------
// isl helpers
// ---------------------------------------------------------------------------

fn point(name: &str, vals: &[i64]) -> String {
    let v: Vec<String> = vals.iter().map(|x| x.to_string()).collect();
    format!("{name}[{}]", v.join(", "))
}

struct Oracle<'a> {
    ctx: Context,
    kernel: &'a str,
    /// `[n, m] -> { : n = 5 and m = 4 }`
    params: String,
    failures: Vec<String>,
}

impl Oracle<'_> {
    fn fix_set(&self, s: Set) -> Set {
        let p = Set::read_from_str(&self.ctx, &self.params).unwrap();
        s.intersect_params(p).unwrap().project_out_all_params().unwrap()
    }

    fn fix_map(&self, m: Map) -> Map {
        let p = Set::read_from_str(&self.ctx, &self.params).unwrap();
        m.intersect_params(p).unwrap().project_out_all_params().unwrap()
    }

    fn count(&self, s: &Set) -> Result<i64, String> {
        let v = s.count_val().unwrap();
        let t = v.to_str().unwrap().to_string();
        t.parse().map_err(|_| t)
    }

    /// `model` (parameter-free) holds exactly the distinct `points` (isl
    /// element texts, `S1[0, 1]` or `[S1[0] -> S2[1]]`).
    fn check_points(&mut self, what: &str, model: &Set, points: &[String]) {
        match self.count(model) {
            Ok(n) if n == points.len() as i64 => {}
            Ok(n) => {
                let extra = self.describe_difference(model, points);
                self.fail(format!("{what}: isl has {n} points, the run has {}{extra}", points.len()));
                return;
            }
            Err(t) => {
                self.fail(format!("{what}: isl cannot count the points ({t})"));
                return;
            }
        }
        for chunk in points.chunks(500) {
            let explicit = Set::read_from_str(&self.ctx, &format!("{{ {} }}", chunk.join("; ")))
                .unwrap_or_else(|e| panic!("{what}: explicit set: {e:?}"));
            if !explicit.is_subset(model).unwrap() {
                let extra = self.describe_difference(model, points);
                self.fail(format!("{what}: the run has points isl lacks{extra}"));
                return;
            }
        }
    }

    /// A few points on either side of a difference, for the failure message.
    fn describe_difference(&self, model: &Set, points: &[String]) -> String {
        let mut msg = String::new();
        let mut missing = Vec::new();
        for p in points {
            let s = Set::read_from_str(&self.ctx, &format!("{{ {p} }}")).unwrap();
            if !s.is_subset(model).unwrap() {
                missing.push(p.clone());
                if missing.len() == 6 {
                    break;
                }
            }
        }
        if !missing.is_empty() {
            write!(msg, "\n    in the run, not in isl: {}", missing.join("; ")).unwrap();
        }
        if !points.is_empty() && points.len() <= 4000 {
            let explicit = Set::read_from_str(&self.ctx, &format!("{{ {} }}", points.join("; "))).unwrap();
            let extra = model.copy().unwrap().subtract(explicit).unwrap();
            if !extra.is_empty().unwrap() {
                let t: String = extra.to_str().unwrap().chars().take(600).collect();
                write!(msg, "\n    in isl, not in the run: {t}").unwrap();
            }
        } else if points.is_empty() {
            let t: String = model.to_str().unwrap().chars().take(600).collect();
            write!(msg, "\n    in isl, not in the run: {t}").unwrap();
        }
        msg
    }

    fn fail(&mut self, msg: String) {
        self.failures.push(format!("{}: {msg}", self.kernel));
    }
}

// ---------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------

fn check_kernel(rel: &str, sizes: &[(&str, i64)]) {
    let t0 = Instant::now();
    let opts = ExtractOptions {
        cc: std::env::var("CC").unwrap_or_else(|_| "gcc".into()),
        cc_args: vec!["-DMINI_DATASET".into()],
        autodetect: false,
    };
    let (source, scops) =
        extract(&kernel_path(rel), &opts).unwrap_or_else(|e| panic!("{rel}: extraction failed: {e}"));
    assert_eq!(scops.len(), 1, "{rel}: one SCoP");
    let scop = &scops[0];
    let deps = analyze(scop).unwrap_or_else(|e| panic!("{rel}: dependence analysis: {e}"));
    let t_model = t0.elapsed();

    let program = instrument(&source, scop, sizes);
    let trace = run_traced(rel, &program);
    let records = parse_trace(scop, &trace, sizes);
    let t_run = t0.elapsed() - t_model;

    let params = format!(
        "[{}] -> {{ : {} }}",
        scop.params.join(", "),
        if scop.params.is_empty() {
            "true".to_string()
        } else {
            scop.params
                .iter()
                .map(|p| format!("{p} = {}", size_of(sizes, p)))
                .collect::<Vec<_>>()
                .join(" and ")
        }
    );
    let mut o = Oracle { ctx: model::isl::new_context(), kernel: rel, params, failures: Vec::new() };
    let inst = |r: &Record| point(&scop.statements[r.stmt].name, &r.iters);

    // (a) Instance sets.
    let mut per_stmt: Vec<Vec<String>> = vec![Vec::new(); scop.statements.len()];
    for r in &records {
        per_stmt[r.stmt].push(inst(r));
    }
    for (k, st) in scop.statements.iter().enumerate() {
        let pts = &per_stmt[k];
        let distinct: BTreeSet<&String> = pts.iter().collect();
        if distinct.len() != pts.len() {
            o.fail(format!("{}: some instance executed more than once", st.name));
            continue;
        }
        let dom = o.fix_set(Set::read_from_str(&o.ctx, &st.domain).unwrap());
        o.check_points(&format!("domain of {} `{}`", st.name, st.text.trim()), &dom, pts);
    }

    // (b) Execution order: consecutive instances strictly increase in the
    // original schedule.
    let sched = UnionMap::read_from_str(&o.ctx, &scop.schedule_map).unwrap();
    let before = sched.copy().unwrap().lex_lt_union_map(sched).unwrap();
    let pairs: Vec<String> =
        records.windows(2).map(|w| format!("{} -> {}", inst(&w[0]), inst(&w[1]))).collect();
    for chunk in pairs.chunks(500) {
        let explicit = UnionMap::read_from_str(&o.ctx, &format!("{{ {} }}", chunk.join("; "))).unwrap();
        if !explicit.is_subset(&before).unwrap() {
            let bad = chunk
                .iter()
                .find(|p| {
                    let m = UnionMap::read_from_str(&o.ctx, &format!("{{ {p} }}")).unwrap();
                    !m.is_subset(&before).unwrap()
                })
                .cloned()
                .unwrap_or_default();
            o.fail(format!(
                "execution order: `{bad}` runs in this order in C but not in schedule_map {}",
                scop.schedule_map
            ));
            break;
        }
    }

    // (c) Access relations, restricted to the domain.
    for st in &scop.statements {
        let k = scop.statements.iter().position(|s| s.name == st.name).unwrap();
        for (ai, a) in st.accesses.iter().enumerate() {
            let dom = Set::read_from_str(&o.ctx, &st.domain).unwrap();
            let rel = Map::read_from_str(&o.ctx, &a.relation).unwrap().intersect_domain(dom).unwrap();
            let rel = o.fix_map(rel);
            let target = rel.get_tuple_name(DimType::Out).unwrap().to_string();
            let pts: Vec<String> = records
                .iter()
                .filter(|r| r.stmt == k)
                .map(|r| format!("[{} -> {}]", inst(r), point(&target, &r.subs[ai])))
                .collect();
            o.check_points(
                &format!("access {} `{}` of {}", a.id, a.text, st.name),
                &rel.wrap().unwrap(),
                &pts,
            );
        }
    }

    // (d) Dependences by brute force, per (kind, source ref, sink ref).
    type Key = (DepKind, String, String);
    let mut brute: BTreeMap<Key, BTreeSet<(usize, usize)>> = BTreeMap::new();
    type Element<'a> = (&'a str, &'a [i64]);
    let mut last_write: HashMap<Element, (usize, usize)> = HashMap::new();
    let mut touches: HashMap<Element, Vec<(usize, usize)>> = HashMap::new();
    for (ri, r) in records.iter().enumerate() {
        let st = &scop.statements[r.stmt];
        // Reads come first in `accesses`, then the write: in each instance
        // every read happens before the write.
        for (ai, a) in st.accesses.iter().enumerate() {
            let elem = (a.array.as_str(), r.subs[ai].as_slice());
            if a.kind == AccessKind::Read {
                if let Some(&(wr, wa)) = last_write.get(&elem) {
                    let w = &scop.statements[records[wr].stmt].accesses[wa];
                    brute.entry((DepKind::Flow, w.id.clone(), a.id.clone())).or_default().insert((wr, ri));
                }
            }
            touches.entry(elem).or_default().push((ri, ai));
        }
        for (ai, a) in st.accesses.iter().enumerate() {
            if a.kind == AccessKind::Write {
                last_write.insert((a.array.as_str(), r.subs[ai].as_slice()), (ri, ai));
            }
        }
    }
    let access = |ri: usize, ai: usize| &scop.statements[records[ri].stmt].accesses[ai];
    let mut total = 0usize;
    for list in touches.values() {
        for (x, &(r1, a1)) in list.iter().enumerate() {
            for &(r2, a2) in &list[x + 1..] {
                if r1 == r2 {
                    continue; // the same instance: no dependence
                }
                let (s, t) = (access(r1, a1), access(r2, a2));
                let kind = match (s.kind, t.kind) {
                    (AccessKind::Write, AccessKind::Read) => DepKind::Raw,
                    (AccessKind::Read, AccessKind::Write) => DepKind::War,
                    (AccessKind::Write, AccessKind::Write) => DepKind::Waw,
                    (AccessKind::Read, AccessKind::Read) => DepKind::Rar,
                };
                brute.entry((kind, s.id.clone(), t.id.clone())).or_default().insert((r1, r2));
                total += 1;
            }
        }
    }
    assert!(total < 400_000, "{rel}: {total} memory-based pairs; use smaller sizes");

    let mut model: BTreeMap<Key, &str> = BTreeMap::new();
    for d in &deps.deps {
        let prev = model.insert((d.kind, d.source.clone(), d.sink.clone()), d.relation.as_str());
        assert!(prev.is_none(), "{rel}: duplicate dependence {:?}", d);
    }
    let stmt_of_ref: HashMap<&str, &str> = scop
        .statements
        .iter()
        .flat_map(|s| s.accesses.iter().map(move |a| (a.id.as_str(), s.name.as_str())))
        .collect();
    let text_of_ref: HashMap<&str, &str> = scop
        .statements
        .iter()
        .flat_map(|s| s.accesses.iter().map(|a| (a.id.as_str(), a.text.as_str())))
        .collect();
    let keys: BTreeSet<Key> = brute.keys().chain(model.keys()).cloned().collect();
    let mut pair_counts: BTreeMap<DepKind, usize> = BTreeMap::new();
    for key in keys {
        let (kind, src, snk) = &key;
        let pts: Vec<String> = brute
            .get(&key)
            .map(|s| {
                s.iter().map(|&(a, b)| format!("[{} -> {}]", inst(&records[a]), inst(&records[b]))).collect()
            })
            .unwrap_or_default();
        *pair_counts.entry(*kind).or_default() += pts.len();
        let what = format!(
            "{kind} {src} `{}` ({}) -> {snk} `{}` ({})",
            text_of_ref[src.as_str()],
            stmt_of_ref[src.as_str()],
            text_of_ref[snk.as_str()],
            stmt_of_ref[snk.as_str()]
        );
        match model.get(&key) {
            Some(text) => {
                let m = o.fix_map(Map::read_from_str(&o.ctx, text).unwrap());
                o.check_points(&what, &m.wrap().unwrap(), &pts);
            }
            None => o.fail(format!(
                "{what}: missing from deps::analyze, the run has {} pairs, e.g. {}",
                pts.len(),
                pts.iter().take(4).cloned().collect::<Vec<_>>().join("; ")
            )),
        }
    }

    eprintln!(
        "{rel}: sizes {sizes:?}; {} statements, {} instances, {} reference pairs; \
         pairs per kind {pair_counts:?}; model {:.2?}, compile+run {:.2?}, total {:.2?}",
        scop.statements.len(),
        records.len(),
        brute.len(),
        t_model,
        t_run,
        t0.elapsed()
    );
    if !o.failures.is_empty() {
        panic!("{} oracle failure(s):\n  {}", o.failures.len(), o.failures.join("\n  "));
    }
}

macro_rules! oracle {
    ($name:ident, $rel:expr, [$(($p:expr, $v:expr)),* $(,)?]) => {
        #[test]
        fn $name() {
            check_kernel($rel, &[$(($p, $v)),*]);
        }
    };
}

// A first group: linear algebra, solvers, stencils, medley, data mining.
oracle!(gemm, "linear-algebra/gemm.c", [("ni", 3), ("nj", 4), ("nk", 2)]);
oracle!(two_mm, "linear-algebra/2mm.c", [("ni", 2), ("nj", 3), ("nk", 4), ("nl", 5)]);
oracle!(atax, "linear-algebra/atax.c", [("m", 3), ("n", 4)]);
oracle!(trisolv, "linear-algebra/trisolv.c", [("n", 5)]);
oracle!(lu, "linear-algebra/lu.c", [("n", 5)]);
oracle!(jacobi_1d, "stencils/jacobi-1d.c", [("tsteps", 3), ("n", 6)]);
oracle!(seidel_2d, "stencils/seidel-2d.c", [("tsteps", 2), ("n", 5)]);
oracle!(nussinov, "medley/nussinov.c", [("n", 7)]);
oracle!(durbin, "linear-algebra/durbin.c", [("n", 5)]);
oracle!(correlation, "datamining/correlation.c", [("m", 4), ("n", 3)]);

// The rest of the suite.
oracle!(covariance, "datamining/covariance.c", [("m", 3), ("n", 4)]);
oracle!(three_mm, "linear-algebra/3mm.c", [("ni", 2), ("nj", 3), ("nk", 4), ("nl", 3), ("nm", 2)]);
oracle!(bicg, "linear-algebra/bicg.c", [("m", 3), ("n", 4)]);
oracle!(cholesky, "linear-algebra/cholesky.c", [("n", 5)]);
oracle!(doitgen, "linear-algebra/doitgen.c", [("nr", 2), ("nq", 3), ("np", 3)]);
oracle!(gemver, "linear-algebra/gemver.c", [("n", 4)]);
oracle!(gesummv, "linear-algebra/gesummv.c", [("n", 4)]);
oracle!(gramschmidt, "linear-algebra/gramschmidt.c", [("m", 4), ("n", 3)]);
oracle!(ludcmp, "linear-algebra/ludcmp.c", [("n", 5)]);
oracle!(mvt, "linear-algebra/mvt.c", [("n", 4)]);
oracle!(symm, "linear-algebra/symm.c", [("m", 3), ("n", 4)]);
oracle!(syr2k, "linear-algebra/syr2k.c", [("n", 3), ("m", 4)]);
oracle!(syrk, "linear-algebra/syrk.c", [("n", 3), ("m", 4)]);
oracle!(trmm, "linear-algebra/trmm.c", [("m", 3), ("n", 4)]);
oracle!(deriche, "medley/deriche.c", [("w", 3), ("h", 4)]);
oracle!(floyd_warshall, "medley/floyd-warshall.c", [("n", 4)]);
oracle!(adi, "stencils/adi.c", [("tsteps", 2), ("n", 4)]);
oracle!(fdtd_2d, "stencils/fdtd-2d.c", [("tmax", 2), ("nx", 3), ("ny", 4)]);
oracle!(heat_3d, "stencils/heat-3d.c", [("tsteps", 2), ("n", 4)]);
oracle!(jacobi_2d, "stencils/jacobi-2d.c", [("tsteps", 2), ("n", 5)]);

#[test]
fn reference_splitter() {
    assert_eq!(split_reference("s"), ("s".into(), vec![]));
    assert_eq!(split_reference("A[i][j + 1]"), ("A".into(), vec!["i".into(), "j + 1".into()]));
    assert_eq!(
        split_reference("(B)[a[0] - (k)][(i + 1)]"),
        ("B".into(), vec!["a[0] - (k)".into(), "(i + 1)".into()])
    );
    assert_eq!(set_size("  int m = 28, n = 32;", "n", 3).as_deref(), Some("  int m = 28, n = 3;"));
    assert_eq!(set_size("  int nm = 28, m = 32;", "m", 3).as_deref(), Some("  int nm = 28, m = 3;"));
}
