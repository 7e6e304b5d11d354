//! SCoP extraction on the 30 PolyBench kernels, on the official PolyBench
//! layout, on constructs that need care, and on input that must be rejected.

use std::path::Path;

use isl_rs::{Schedule, Set, UnionMap, UnionSet};
use model::deps::{self, DepKind};
use model::isl::new_context;
use model::scop::{self, ExtractOptions, Scop};

fn extract(path: &Path, args: &[&str]) -> Vec<Scop> {
    let opts = ExtractOptions { cc_args: args.iter().map(|s| s.to_string()).collect(), ..Default::default() };
    match scop::extract(path, &opts) {
        Ok((_, s)) => s,
        Err(e) => panic!("{e}"),
    }
}

use testkit::extract_text;

/// Statements per kernel, counted by hand from PolyBench/C 4.2.1 (deriche has
/// five more: its chained `a1 = a5 = k` assignments are split here).
const STATEMENTS: &[(&str, usize)] = &[
    ("2mm", 4),
    ("3mm", 6),
    ("adi", 27),
    ("atax", 4),
    ("bicg", 4),
    ("cholesky", 4),
    ("correlation", 15),
    ("covariance", 8),
    ("deriche", 47),
    ("doitgen", 3),
    ("durbin", 10),
    ("fdtd-2d", 4),
    ("floyd-warshall", 1),
    ("gemm", 2),
    ("gemver", 4),
    ("gesummv", 5),
    ("gramschmidt", 7),
    ("heat-3d", 2),
    ("jacobi-1d", 2),
    ("jacobi-2d", 2),
    ("lu", 3),
    ("ludcmp", 12),
    ("mvt", 2),
    ("nussinov", 5),
    ("seidel-2d", 1),
    ("symm", 4),
    ("syr2k", 2),
    ("syrk", 2),
    ("trisolv", 3),
    ("trmm", 2),
];

#[test]
fn all_thirty_kernels_extract_and_analyse() {
    let files = testkit::kernels();
    assert_eq!(files.len(), 30, "{files:?}");
    let ctx = new_context();
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let scops = extract(f, &["-DMINI_DATASET"]);
        assert_eq!(scops.len(), 1, "{name}");
        let s = &scops[0];
        let expected = STATEMENTS.iter().find(|(k, _)| *k == name).map(|(_, n)| *n);
        assert_eq!(Some(s.statements.len()), expected, "{name}: statement count");
        for st in &s.statements {
            Set::read_from_str(&ctx, &st.domain).unwrap_or_else(|e| panic!("{name} {}: {e:?}", st.name));
            assert!(!st.accesses.is_empty(), "{name} {}", st.name);
        }
        let d = deps::analyze(s).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every written array that is read again has a flow dependence.
        assert!(d.of_kind(DepKind::Flow).count() > 0 || name == "floyd-warshall", "{name}");
        schedule_tree_matches_flat_map(&ctx, s);
    }
}

/// The schedule tree and the 2d+1 map must describe the same order.
fn schedule_tree_matches_flat_map(ctx: &isl_rs::Context, s: &Scop) {
    let tree = Schedule::read_from_str(ctx, &s.schedule).unwrap_or_else(|e| panic!("{}: {e:?}", s.schedule));
    let domain = s.statements.iter().fold(UnionSet::empty_ctx(ctx).unwrap(), |acc, st| {
        acc.union(UnionSet::read_from_str(ctx, &st.domain).unwrap()).unwrap()
    });
    assert!(tree.get_domain().unwrap().is_equal(&domain).unwrap());
    let flat = UnionMap::read_from_str(ctx, &s.schedule_map)
        .unwrap()
        .intersect_domain(domain.copy().unwrap())
        .unwrap();
    let before = |m: UnionMap| m.copy().unwrap().lex_lt_union_map(m).unwrap();
    // The tree's map may have ranges of different lengths; order pairs of the
    // same statement and across statements through a common padded form:
    // compare the instance-level "happens before" relations.
    let from_tree = tree_before(ctx, &tree, &domain);
    let from_flat = before(flat);
    assert!(from_tree.is_equal(&from_flat).unwrap(), "{}: tree and flat schedule disagree", s.function);
}

/// "Happens before" between instances according to the schedule tree, built
/// from isl's own flattening of the tree and zero-padding to one length.
fn tree_before(ctx: &isl_rs::Context, tree: &Schedule, domain: &UnionSet) -> UnionMap {
    let map = tree.get_map().unwrap().intersect_domain(domain.copy().unwrap()).unwrap();
    let list = map.get_map_list().unwrap();
    let n = list.size().unwrap();
    let maps: Vec<String> = (0..n).map(|i| list.get_at(i).unwrap().to_str().unwrap().to_string()).collect();
    let depth = maps.iter().map(|m| out_dims(m)).max().unwrap();
    let mut padded = UnionMap::empty_ctx(ctx).unwrap();
    for m in &maps {
        let mut m = isl_rs::Map::read_from_str(ctx, m).unwrap();
        let have = out_dims(m.to_str().unwrap());
        m = m.add_dims(isl_rs::DimType::Out, (depth - have) as u32).unwrap();
        for d in have..depth {
            m = m.fix_si(isl_rs::DimType::Out, d as u32, 0).unwrap();
        }
        padded = padded.union(m.to_union_map().unwrap()).unwrap();
    }
    padded.copy().unwrap().lex_lt_union_map(padded).unwrap()
}

fn out_dims(map: &str) -> usize {
    let body = map.rsplit("-> [").next().unwrap();
    let inner = &body[..body.find(']').unwrap()];
    if inner.trim().is_empty() {
        0
    } else {
        inner.split(',').count()
    }
}

#[test]
fn official_polybench_layout_gives_the_same_model() {
    let dir = testkit::root().join("space/tests/fixtures/official");
    let inc = format!("-I{}", dir.display());
    for (official, ours) in [("gemm.c", "linear-algebra/gemm.c"), ("jacobi-2d.c", "stencils/jacobi-2d.c")] {
        let a = extract(&dir.join(official), &[&inc, "-DMINI_DATASET"]);
        let b = extract(&testkit::root().join("polybench").join(ours), &["-DMINI_DATASET"]);
        assert_eq!(a.len(), 1);
        let (a, b) = (&a[0], &b[0]);
        assert_eq!(a.params, b.params, "{official}");
        assert_eq!(a.statements.len(), b.statements.len());
        for (x, y) in a.statements.iter().zip(&b.statements) {
            assert_eq!(x.domain, y.domain, "{official}");
            let rx: Vec<_> = x.accesses.iter().map(|a| &a.relation).collect();
            let ry: Vec<_> = y.accesses.iter().map(|a| &a.relation).collect();
            assert_eq!(rx, ry, "{official}");
        }
        // Fixed-size official arrays carry their dataset extents.
        assert!(a.arrays.iter().any(|x| x.extents.iter().all(|e| e.is_some())));
    }
}

#[test]
fn decreasing_strided_and_conditional_loops() {
    let code = r#"
void k(int n, double A[n], double B[n]) {
  int i, j;
#pragma scop
  for (i = n - 1; i >= 0; i--)
    for (j = 0; j < (i < 10 ? i : 10); j += 3)
      if (j > 0 && i != j)
        A[i] = A[i] + B[j];
      else
        B[j] = 2 * i;
#pragma endscop
}
"#;
    let s = extract_text("loops.c", code).unwrap().remove(0);
    let ctx = new_context();
    let dom = |t: &str| Set::read_from_str(&ctx, t).unwrap();
    let d1 = dom(&s.statements[0].domain);
    let d2 = dom(&s.statements[1].domain);
    let base = "0 <= i < n and 0 <= j < min(i, 10) and j mod 3 = 0";
    let e1 = dom(&format!("[n] -> {{ S1[i, j] : {base} and j > 0 and i != j }}"));
    let e2 = dom(&format!("[n] -> {{ S2[i, j] : {base} and (j <= 0 or i = j) }}"));
    assert!(d1.is_equal(&e1).unwrap(), "{}", s.statements[0].domain);
    assert!(d2.is_equal(&e2).unwrap(), "{}", s.statements[1].domain);
    assert!(s.schedule.contains("[(-i)]"), "{}", s.schedule);
}

#[test]
fn several_scops_scalars_math_and_for_declarations() {
    let code = r#"
#include <math.h>
#define N 16
double g[N];
void k(int n, double x[N]) {
  double s;
#pragma scop
  s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] > 0 ? sqrt(x[i]) : fabs(x[i]);
  g[0] = s;
#pragma endscop
#pragma scop
  for (int i = 0; i < n; i++)
    x[i] = pow(g[i], 2.0);
#pragma endscop
}
"#;
    let scops = extract_text("two.c", code).unwrap();
    assert_eq!(scops.len(), 2);
    let s = &scops[0];
    assert_eq!(s.statements.len(), 3);
    let arr = |n: &str| s.arrays.iter().find(|a| a.name == n).unwrap();
    assert_eq!(arr("s").rank(), 0);
    assert!(arr("s").written);
    assert_eq!(arr("x").extents, vec![Some("16".to_string())]);
    assert!(!arr("x").written);
    let d = deps::analyze(s).unwrap();
    assert!(d.of_kind(DepKind::Flow).any(|d| d.array == "s"));
    assert_eq!(scops[1].statements[0].accesses.len(), 2);
}

/// Each case: code, expected `line:column`, and words the reason must contain.
const REJECTED: &[(&str, &str, &str, &str)] = &[
    ("while", "void k(int n, double A[n]) {\n  int i = 0;\n#pragma scop\n  while (i < n) A[i] = 0;\n#pragma endscop\n}\n", "4:3", "while"),
    ("goto", "void k(int n, double A[n]) {\n#pragma scop\n  A[0] = 1;\n  goto end;\n#pragma endscop\nend:;\n}\n", "4:3", "goto"),
    ("data-dependent bound", "void k(int n, int A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < A[0]; i++)\n    A[i] = 0;\n#pragma endscop\n}\n", "4:19", "data-dependent"),
    // Any element of B's extent, but a pointer states none.
    ("data-dependent subscript", "void k(int n, int A[n], double *B) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    B[A[i]] = 0;\n#pragma endscop\n}\n", "5:7", "the declaration of `B` states no extent"),
    ("written scalar as bound", "void k(int n, double A[n]) {\n  int i, m;\n#pragma scop\n  m = 3;\n  for (i = 0; i < m; i++)\n    A[i] = 0;\n#pragma endscop\n}\n", "5:19", "assigned inside the SCoP"),
    ("pointer arithmetic", "void k(int n, double *A) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    *(A + i) = 0;\n#pragma endscop\n}\n", "5:5", "pointer"),
    ("side-effect call", "double f(double);\nvoid k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = f(A[i]);\n#pragma endscop\n}\n", "6:12", "side effects"),
    ("non-affine product", "void k(int n, double *A) {\n  int i, j;\n#pragma scop\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      A[i * j] = 0;\n#pragma endscop\n}\n", "6:9", "`i * j` is not an affine subscript"),
    ("unclosed scop", "void k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = 0;\n}\n", "3:1", "without `#pragma endscop`"),
    ("stray endscop", "void k(int n, double A[n]) {\n  A[0] = 0;\n#pragma endscop\n}\n", "3:1", "without `#pragma scop`"),
    ("syntax error", "void k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = = 0;\n#pragma endscop\n}\n", "5:", "syntax error"),
    // After a loop nested in another, the inner iterator's value is not modelled.
    ("iterator after a nested loop", "void k(int n, double A[n][n]) {\n  int i, j;\n#pragma scop\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      A[i][j] = 0;\n  A[0][j - 1] = 1;\n#pragma endscop\n}\n", "7:8", "around its own loop"),
    // Its exit value is modelled, and here it writes past the array's end.
    ("iterator at its exit value", "void k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = 0;\n  A[i] = 1;\n#pragma endscop\n}\n", "6:3", "writes outside `A[n]`"),
    ("not-equal loop bound", "void k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i != n; i++)\n    A[i] = 0;\n#pragma endscop\n}\n", "4:15", "!="),
    ("undeclared", "void k(int n, double A[n]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = q;\n#pragma endscop\n}\n", "5:12", "not declared"),
    ("no scop", "int main(void) { return 0; }\n", "", "no `#pragma scop`"),
];

#[test]
fn non_static_control_is_rejected_with_a_location() {
    for (what, code, at, reason) in REJECTED {
        let file = format!("{}.c", what.replace(' ', "-"));
        let err = match extract_text(&file, code) {
            Ok(_) => panic!("{what}: accepted"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(&format!("{file}:{at}")), "{what}: {err}");
        assert!(err.contains(reason), "{what}: {err}");
    }
}

#[test]
fn preprocessor_failure_and_missing_file_are_errors() {
    let err = extract_text("inc.c", "#include \"nowhere.h\"\n").unwrap_err().to_string();
    assert!(err.contains("preprocessor failed") && err.contains("nowhere.h"), "{err}");
    let err = scop::extract(Path::new("/no/such/file.c"), &ExtractOptions::default()).unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
}
