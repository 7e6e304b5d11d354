//! Programs of our own with the constructs real programs use (issue 14):
//! each is modelled exactly, or refused with its reason.
//! `space/tests/frontend.rs` schedules them, `polytune/tests/cli.rs` runs
//! the runnable ones end to end.

use std::path::Path;

use isl_rs::UnionMap;
use model::deps;
use model::isl::new_context;
use model::scop::{self, AccessKind, ExtractOptions, Scop};

use testkit::{load_own as load, own};

fn equal_relations(a: &str, b: &str) -> bool {
    let ctx = new_context();
    let (a, b) = (UnionMap::read_from_str(&ctx, a).unwrap(), UnionMap::read_from_str(&ctx, b).unwrap());
    a.is_equal(&b).unwrap()
}

#[test]
fn a_modulo_time_index_keeps_its_exact_dependences() {
    let (s, d) = load("modulo.c");
    // The dependences keep their parity conditions (integer divisions).
    assert!(d.deps.iter().any(|dep| dep.relation.contains("mod 2")), "{d:?}");
    // `N = 200` is a size: a parameter with its value (`T = 20` is not).
    assert_eq!(s.params, ["polytune_c200"]);
    assert_eq!(s.constants, [("polytune_c200".to_string(), 200)]);
}

/// A dividend that is non-negative for the literals' values is accepted:
/// the sign test pins the literals modelled as parameters (here `200` and
/// `1000`; free, `i - 200 + 1000` would be negative where the first is
/// large and the second small).
#[test]
fn a_sign_is_decided_with_the_literals_at_their_values() {
    let code = "double A[300], s;\nvoid k(void) {\n#pragma scop\n  for (int i = 0; i < 400; i++)\n    s += A[(i - 200 + 1000) / 4];\n#pragma endscop\n}\n";
    let scops = extract_text("sign.c", code).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scops[0].constants.len(), 3, "{:?}", scops[0].constants);
    // One that may be negative rounds toward zero as C's `/` does: at
    // n = 1001, i = 0 the subscript is -1 / 4 = 0, where floor gives -1.
    let code = "double A[300], s;\nvoid k(int n) {\n#pragma scop\n  for (int i = 0; i < 400; i++)\n    s += A[(i - n + 1000) / 4];\n#pragma endscop\n}\n";
    let scops = extract_text("sign.c", code).unwrap_or_else(|e| panic!("{e}"));
    let ctx = new_context();
    let read = UnionMap::read_from_str(&ctx, &scops[0].statements[0].accesses[1].relation).unwrap();
    let at = |element: i64| {
        let text = format!(
            "[n, polytune_c1000] -> {{ S1[0] -> A[{element}] : n = 1001 and polytune_c1000 = 1000 }}"
        );
        UnionMap::read_from_str(&ctx, &text).unwrap().is_subset(&read).unwrap()
    };
    assert!(at(0) && !at(-1), "{}", scops[0].statements[0].accesses[1].relation);
}

#[test]
fn chained_assignments_write_once_per_link() {
    let (s, _) = load("chained.c");
    let kinds = |k: usize| -> Vec<(AccessKind, String)> {
        s.statements[k].accesses.iter().map(|a| (a.kind, a.array.clone())).collect()
    };
    // A[i] = B[i] = C[i] * k: the value's reads, then B's write, then A's.
    use AccessKind::{Read, Write};
    assert_eq!(kinds(0), [(Read, "C".into()), (Read, "k".into()), (Write, "B".into()), (Write, "A".into())]);
    // C[i] += A[i - 1] = B[i]: C read (compound), B read, A written, C written.
    assert_eq!(kinds(1), [(Read, "C".into()), (Read, "B".into()), (Write, "A".into()), (Write, "C".into())]);
}

#[test]
fn a_subscript_affine_by_pieces_is_one_disjunct_per_piece() {
    let (s, _) = load("piecewise.c");
    // B[i] = 0.5 * (A[i == 0 ? N - 1 : i - 1] + A[i == N - 1 ? 0 : i + 1]), N = 300.
    let (left, right) = (&s.statements[0].accesses[0].relation, &s.statements[0].accesses[1].relation);
    // N = 300 is a size, `polytune_c300` (`Scop::constants`).
    assert!(
        equal_relations(
            left,
            "[polytune_c300] -> { S1[t, i] -> A[i - 1] : i != 0; S1[t, 0] -> A[polytune_c300 - 1] }"
        ),
        "{left}"
    );
    assert!(
        equal_relations(
            right,
            "[polytune_c300] -> { S1[t, i] -> A[i + 1] : i != polytune_c300 - 1; S1[t, i] -> A[0] : i = polytune_c300 - 1 }"
        ),
        "{right}"
    );
}

#[test]
fn a_pure_function_of_the_file_is_an_expression_of_its_arguments() {
    let (s, _) = load("purefn.c");
    let arrays: Vec<&str> = s.statements[0].accesses.iter().map(|a| a.array.as_str()).collect();
    assert_eq!(arrays, ["A", "A", "B"]);
}

#[test]
fn a_scop_at_file_scope_infers_parameters_arrays_and_scalars() {
    let (s, _) = load("fragment.c");
    assert_eq!(s.function, "");
    assert_eq!(s.params, ["N"]);
    let rank = |name: &str| s.arrays.iter().find(|a| a.name == name).map(|a| a.rank());
    assert_eq!((rank("C"), rank("A"), rank("B"), rank("alpha")), (Some(2), Some(2), Some(2), Some(0)));
    assert_eq!(s.start.line, 2);
}

#[test]
fn block_scope_declarations_are_variables_of_the_scop_and_initialisers_statements() {
    let (s, _) = load("blockdecl.c");
    let locals: Vec<&str> = s.arrays.iter().filter(|a| a.local).map(|a| a.name.as_str()).collect();
    assert_eq!(locals, ["row", "c"]);
    assert!(s.arrays.iter().any(|a| a.name == "B" && a.written && !a.local));
    // `double c = A[i][j - 1] + A[i][j + 1];` is the assignment statement S2.
    assert_eq!(s.statements[1].text, "c = A[i][j - 1] + A[i][j + 1];");
    assert_eq!(s.statements[1].accesses.last().map(|a| a.array.as_str()), Some("c"));
}

#[test]
fn struct_members_are_arrays_of_their_own() {
    let (s, _) = load("structs.c");
    let arrays: Vec<(&str, usize, bool)> =
        s.arrays.iter().map(|a| (a.name.as_str(), a.rank(), a.written)).collect();
    assert_eq!(
        arrays,
        [("g.h", 0, false), ("g.u", 2, false), ("g.v", 2, true), ("r.lo", 0, true), ("r.hi", 0, true)]
    );
    assert!(equal_relations(&s.statements[0].accesses[1].relation, "{ S1[i, j] -> g__u[i - 1, j] }"));
}

#[test]
fn members_of_arrays_of_structs_are_arrays_over_the_elements_and_their_own_dimensions() {
    let (s, d) = load("structarray.c");
    let arrays: Vec<(&str, usize, bool)> =
        s.arrays.iter().map(|a| (a.name.as_str(), a.rank(), a.written)).collect();
    assert_eq!(arrays, [("P[].y", 2, true), ("P[].x", 1, false), ("G[][].c", 2, true), ("out", 1, true)]);
    assert!(equal_relations(&s.statements[0].accesses[0].relation, "{ S1[i, k] -> P___y[i - 1, k] }"));
    // The C text of an element, as the output dump prints it.
    let y = &s.arrays[0];
    assert_eq!(y.element(&["i".into(), "k".into()]), "P[i].y[k]");
    assert_eq!(s.arrays[2].element(&["a".into(), "b".into()]), "G[a][b].c");
    // S1 carries its own flow along i; S2 reads what S1 wrote.
    assert!(d.deps.iter().any(|dep| dep.relation.contains("S1[") && dep.relation.contains("S2[")), "{d:?}");
}

/// Extracts from C text written to a temporary file.
use testkit::extract_text;

const HEADER: &str = "#define N 50\nstruct pair { double a; double b[N]; };\nstruct pair P, *Q;\ndouble A[N], B[N];\nint calls;\ndouble counted(double x) { calls++; return 2 * x; }\ndouble peek(int i) { return A[i]; }\ndouble viaptr(double *p) { return *p; }\nextern double elsewhere(double);\n";

/// (what, the SCoP's statements, line:column of the refusal, reason).
const REFUSED: &[(&str, &str, &str, &str)] = &[
    (
        "shadowing declaration",
        "  for (int i = 0; i < N; i++) {\n    double calls = A[i] * 2;\n    B[i] = calls + 1;\n  }\n",
        "14:12",
        "`calls` declared inside the SCoP shadows another `calls`; rename one of them",
    ),
    (
        "size of a local from an iterator",
        "  for (int i = 0; i < N; i++) {\n    double t[i + 1];\n    t[0] = A[i];\n  }\n",
        "14:12",
        "the size of `t` depends on the loop iterator `i`",
    ),
    (
        "member through a pointer",
        "  for (int i = 0; i < N; i++)\n    Q->b[i] = A[i];\n",
        "14:5",
        "`Q->b` is a struct member polytune cannot model: it is reached through a pointer",
    ),
    (
        "iterator after a nested loop",
        "  for (int i = 0; i < N; i++)\n    for (k = 0; k < N; k++)\n      A[k] = B[k];\n  B[0] = A[k - 1];\n",
        "16:12",
        "loop iterator `k` is read after the loop over `i` (line 13) around its own loop (line 14): there it holds what the last iteration's loop left",
    ),
    (
        "iterator before its loop",
        "  B[0] = A[k];\n  for (k = 0; k < N; k++)\n    A[k] = B[k];\n",
        "13:12",
        "loop iterator `k` is read before any loop over it has run in the SCoP",
    ),
    (
        "iterator after a conditional loop",
        "  if (calls > 2)\n    for (k = 0; k < N; k++)\n      A[k] = B[k];\n  B[0] = A[k - 1];\n",
        "16:12",
        "loop iterator `k` is read after the `if` (line 13) around its loop (line 14): its value depends on the branch taken",
    ),
    (
        "impure call",
        "  for (int i = 0; i < N; i++)\n    B[i] = counted(A[i]);\n",
        "14:12",
        "call to `counted`, which may have side effects: it writes `calls`, which is not its own (line 6)",
    ),
    (
        "hidden read",
        "  for (int i = 0; i < N; i++)\n    B[i] = peek(i);\n",
        "14:12",
        "call to `peek`, which may have side effects: it reads the global `A` (line 7)",
    ),
    (
        "pointer arithmetic argument",
        "  for (int i = 0; i < N; i++)\n    B[i] = viaptr(A + i);\n",
        "14:19",
        "call to `viaptr` passes `A + i` to its pointer parameter `p`: polytune models an array `A`, a row `A[i]` or an address `&A[i][j]` there",
    ),
    (
        "body elsewhere",
        "  for (int i = 0; i < N; i++)\n    B[i] = elsewhere(A[i]);\n",
        "14:12",
        "call to `elsewhere`, which may have side effects: its body is not in this file",
    ),
    (
        "unbounded loop",
        "  for (int i = 0; i < i + 1; i++)\n    B[0] = A[0];\n",
        "13:19",
        "the loop condition `i < i + 1` does not bound `i`: the iteration domain",
    ),
    (
        "unsigned wrap in a subscript",
        "  for (int i = 0; i < N; i++)\n    B[i] = A[(unsigned)i - 1u];\n",
        "14:14",
        "`(unsigned)i - 1u` is unsigned and wraps around below zero (first at i = 0)",
    ),
    (
        "unsigned wrap in a bound",
        "  for (unsigned u = 0; u < calls - 1u; u++)\n    B[u] = A[u];\n",
        "13:28",
        "`calls - 1u` is unsigned and wraps around below zero (first at calls = 0, u = 0)",
    ),
    (
        "unsigned loop down to zero",
        "  for (unsigned u = N - 1; u >= 0; u--)\n    B[u] = A[u];\n",
        "13:29",
        "`u` is unsigned and wraps around below zero: C computes it modulo 2^w",
    ),
    (
        "access before the array",
        "  for (int i = 0; i < N; i++)\n    B[i] = A[i - 1];\n",
        "14:5",
        "`A[i - 1]` reads outside `A[50]` whenever the statement runs: first at i = 0, where it touches `A[-1]`",
    ),
    (
        "write past a parametric extent",
        "  for (int i = 0; i < calls; i++)\n    V[i + 1] = A[0];\n",
        "14:5",
        "`V[i + 1]` writes outside `V[calls]` whenever the statement runs: first at calls = 1, i = 0, where it touches `V[1]`",
    ),
    (
        "branch on data that changes its condition",
        "  for (int i = 0; i < 10; i++)\n    if (A[i] > 0)\n      for (int j = 0; j < 10; j++) {\n        B[j] = A[i];\n        A[i] = A[i] * 0.5;\n      }\n",
        "14:8",
        "the branch on `A[i] > 0` writes `A`, which its condition reads, and holds 2 statements and a loop",
    ),
    (
        "rows a subscript leaves whatever the sizes",
        "  for (int i = 0; i < 10; i++)\n    for (int j = 0; j <= calls; j++)\n      B[i * calls + j] = 1.0;\n",
        "15:9",
        "`i * calls + j` reads as rows of `calls` only where 0 <= j < calls, and the loops around it do not imply that",
    ),
    (
        "rows and a plain subscript",
        "  for (int i = 0; i < 10; i++)\n    for (int j = 0; j < calls; j++)\n      B[i * calls + j] = B[j];\n",
        "15:7",
        "`B` is indexed with other rows (or none) elsewhere in the SCoP than `i * calls + j` here",
    ),
    (
        "nothing ever runs",
        "  for (int i = 0; i < 0; i++)\n    B[i] = A[i];\n",
        "12:1",
        "no statement of the SCoP ever runs:\n  ",
    ),
];

/// The error extracting `code` (as `file`) gives; `what` names the case.
fn refusal(file: &str, code: &str, what: &str) -> String {
    match extract_text(file, code) {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn constructs_outside_the_model_are_refused_with_their_reason() {
    for (what, body, at, reason) in REFUSED {
        let file = format!("{}.c", what.replace(' ', "-"));
        let code = format!(
            "{HEADER}void k(double V[calls]) {{\n  int k;\n#pragma scop\n{body}#pragma endscop\n}}\n"
        );
        let err = refusal(&file, &code, what);
        assert!(err.contains(&format!("{file}:{at}")), "{what}: {err}");
        assert!(err.contains(reason), "{what}: {err}");
    }
}

/// `(kind, array, relation)` of each access of statement `k`, in order.
fn accesses(s: &Scop, k: usize) -> Vec<(AccessKind, String, String)> {
    s.statements[k].accesses.iter().map(|a| (a.kind, a.array.clone(), a.relation.clone())).collect()
}

/// Whether the accesses of statement `k` are `expected`, in order, each
/// relation equal to isl's.
fn same_accesses(s: &Scop, k: usize, expected: &[(AccessKind, &str, &str)]) -> bool {
    let got = accesses(s, k);
    got.len() == expected.len()
        && got.iter().zip(expected).all(|((k, a, r), (ek, ea, er))| {
            k == ek && a == ea && equal_relations(r, &format!("[{}] -> {er}", s.params.join(", ")))
        })
}

/// `A[i * n + j]` on `double *` (and `i * n + i`) is `A[i][j]` of rows of
/// `n`: the statements keep their linear subscripts, the model and the
/// dumps see rows (the 2-D Jacobi's neighbours: `polytune/tests/own.rs` runs it).
#[test]
fn linearised_subscripts_are_read_as_rows() {
    use AccessKind::{Read, Write};
    let (s, d) = load("linmatmul.c");
    let c = s.arrays.iter().find(|a| a.name == "C").unwrap();
    assert!(c.linearised && c.extents == [None, Some("n".to_string())], "{c:?}");
    assert_eq!(c.element(&["x0".into(), "x1".into()]), "C[(x0) * (n) + x1]");
    assert_eq!(s.statements[0].text, "C[i * n + j] += A[i * n + k] * B[k * n + j];");
    let product = [
        (Read, "C", "{ S1[i, j, k] -> C[i, j] }"),
        (Read, "A", "{ S1[i, j, k] -> A[i, k] }"),
        (Read, "B", "{ S1[i, j, k] -> B[k, j] }"),
        (Write, "C", "{ S1[i, j, k] -> C[i, j] }"),
    ];
    assert!(same_accesses(&s, 0, &product), "{:?}", accesses(&s, 0));
    // The reduction over k carries the one flow; i and j carry none.
    let flows: Vec<&deps::Dependence> = d.of_kind(deps::DepKind::Flow).collect();
    let along_k = "[n] -> { S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < n and 0 <= j < n and 0 <= k < n - 1 }";
    assert!(flows.len() == 1 && equal_relations(&flows[0].relation, along_k), "{flows:?}");
    let (s, _) = load("lintrisolv.c");
    assert!(
        same_accesses(
            &s,
            2,
            &[
                (Read, "x", "{ S3[i] -> x[i] }"),
                (Read, "L", "{ S3[i] -> L[i, i] }"),
                (Write, "x", "{ S3[i] -> x[i] }")
            ]
        ),
        "{:?}",
        accesses(&s, 2)
    );
}

/// BLAS's leading dimensions (`A[i * lda + p]`, `p < k`): the rows hold
/// their columns only where `k <= lda`, which the program does not state;
/// the model assumes it (in its context) and says so, and where the loops
/// imply it nothing is assumed.
#[test]
fn leading_dimensions_are_assumed_to_hold_their_rows() {
    let (s, _) = load("ldmatmul.c");
    let a = s.assumed.as_ref().expect("an assumption");
    assert_eq!(a.why.len(), 3, "{:?}", a.why);
    assert!(a.why[1].contains("`i * lda + p` reads as rows of `lda` where 0 <= p < lda"), "{:?}", a.why);
    let ctx = model::isl::new_context();
    let context = isl_rs::Set::read_from_str(&ctx, &s.context).unwrap();
    let known = isl_rs::Set::read_from_str(&ctx, &a.known).unwrap();
    let with = |cond: &str| {
        isl_rs::Set::read_from_str(&ctx, &format!("[m, n, k, ldc, lda, ldb] -> {{ : {cond} }}")).unwrap()
    };
    // Rows at least as long as the loops: assumed; shorter: outside it.
    let holds = "m = 4 and n = 5 and k = 6 and lda = 6 and ldb = 5 and ldc = 7";
    let broken = "m = 4 and n = 5 and k = 6 and lda = 5 and ldb = 5 and ldc = 7";
    assert!(!context.copy().unwrap().intersect(with(holds)).unwrap().is_empty().unwrap());
    assert!(context.intersect(with(broken)).unwrap().is_empty().unwrap());
    assert!(!known.intersect(with(broken)).unwrap().is_empty().unwrap());
    // `i * n + j` with `j < n`: the loops say it, nothing is assumed.
    assert!(load("linmatmul.c").0.assumed.is_none());
}

#[test]
fn calls_of_functions_that_take_arrays_are_the_accesses_of_their_bodies() {
    let (s, d) = load("callptr.c");
    use AccessKind::{Read, Write};
    // set(&C[i]): `p[0] = 1.0` writes C[i]; the address is spelled so
    // that no rewrite of C's elements takes it for one.
    assert_eq!(s.statements[0].text, "set((C + (i)));");
    assert!(same_accesses(&s, 0, &[(Write, "C", "{ S1[i] -> C[i] }")]), "{:?}", accesses(&s, 0));
    // D[i] = get(A[i], i): the row A[i], its element i.
    let get = [(Read, "A", "{ S2[i] -> A[i, i] }"), (Write, "D", "{ S2[i] -> D[i] }")];
    assert!(same_accesses(&s, 1, &get), "{:?}", accesses(&s, 1));
    // bump(B[i], i): `r[j] += 1`.
    let bump = [(Read, "B", "{ S3[i] -> B[i, i] }"), (Write, "B", "{ S3[i] -> B[i, i] }")];
    assert!(same_accesses(&s, 2, &bump), "{:?}", accesses(&s, 2));
    // both(B[i], A[i], j) calls axpy(y, x, k) then bump(y, k + 1).
    let both = [
        (Read, "B", "{ S4[i, j] -> B[i, j] }"),
        (Read, "A", "{ S4[i, j] -> A[i, j] }"),
        (Write, "B", "{ S4[i, j] -> B[i, j] }"),
        (Read, "B", "{ S4[i, j] -> B[i, j + 1] }"),
        (Write, "B", "{ S4[i, j] -> B[i, j + 1] }"),
    ];
    assert!(same_accesses(&s, 3, &both), "{:?}", accesses(&s, 3));
    // swap(&A[i][j]): `e[0]` and `e[1]` are A[i][j] and A[i][j + 1].
    let swap = [
        (Read, "A", "{ S5[i, j] -> A[i, j] }"),
        (Read, "A", "{ S5[i, j] -> A[i, j + 1] }"),
        (Write, "A", "{ S5[i, j] -> A[i, j] }"),
        (Write, "A", "{ S5[i, j] -> A[i, j + 1] }"),
    ];
    assert!(same_accesses(&s, 4, &swap), "{:?}", accesses(&s, 4));
    // The value bump(y, k + 1) writes at j is the one axpy reads at j + 1.
    let carried = "{ S4[i, j] -> S4[i, j + 1] : 0 <= i <= 39 and 0 <= j <= 37 }";
    assert!(
        d.of_kind(deps::DepKind::Flow).any(|dep| equal_relations(&dep.relation, carried)),
        "{:?}",
        d.of_kind(deps::DepKind::Flow).collect::<Vec<_>>()
    );
    // B[i][i], which S3 writes, is next read by bump(y, k + 1) at j = i - 1.
    let s3_s4 = "{ S3[i] -> S4[i, i - 1] : 0 < i <= 39 }";
    assert!(d.of_kind(deps::DepKind::Flow).any(|dep| equal_relations(&dep.relation, s3_s4)), "{d:?}");
}

#[test]
fn a_pointer_argument_of_a_function_of_the_file_is_an_access_of_the_call() {
    let code = format!("{HEADER}void k(void) {{\n#pragma scop\n  for (int i = 0; i < N; i++)\n    B[i] = viaptr(&A[i]);\n#pragma endscop\n}}\n");
    let scops = extract_text("viaptr.c", &code).unwrap_or_else(|e| panic!("{e}"));
    use AccessKind::{Read, Write};
    let expected = [(Read, "A", "{ S1[i] -> A[i] }"), (Write, "B", "{ S1[i] -> B[i] }")];
    assert!(same_accesses(&scops[0], 0, &expected), "{:?}", accesses(&scops[0], 0));
}

/// Functions whose calls are refused, each on its own line from line 3.
const CALLEES: &str = "#define N 50\ndouble A[N], B[N][N], G;\n\
void looped(double *p) { for (int k = 0; k < 2; k++) p[k] = 0; }\n\
void moved(double *p) { p++; p[0] = 1; }\n\
void global(double *p) { p[0] = G; }\n\
void again(double *p, int n) { again(p, n - 1); }\n\
void (*fp)(double *);\n\
void ext(double *p);\n\
void local(double *p, int n) { int k = n; p[k] = 1; }\n\
void early(double *p) { return; p[0] = 1; }\n\
void flat(double *p) { p[0] = 1; }\n\
void other(double *p) { fp(p); }\n";

/// (what, the call in `for (int i = 0; i < N; i++)`, column of the refusal, reason).
const REFUSED_CALLS: &[(&str, &str, &str, &str)] = &[
    ("loop in the callee", "looped(&A[i])", "5", "`looped` holds a `for` loop (line 3), and polytune inlines only straight-line code"),
    ("pointer assigned", "moved(&A[i])", "5", "`moved` assigns the pointer `p` itself (line 4)"),
    ("global read", "global(&A[i])", "5", "`global` uses `G` (line 5), which is neither its parameter nor its own variable"),
    ("recursion", "again(&A[i], i)", "5", "`again` calls `again` (line 6), which is already running: recursion"),
    ("call through a pointer", "(*fp)(&A[i])", "5", "call through a pointer, `(*fp)`"),
    ("body elsewhere", "ext(&A[i])", "5", "call to `ext`, which may have side effects: its body is not in this file"),
    ("callee's local in a subscript", "local(&A[i], i)", "5", "the subscript `k` of `p` in `local` (line 9) is not affine in its parameters: `k` is a variable of `local`, not a parameter"),
    ("early return", "early(&A[i])", "5", "`early` returns before the end of its body (line 10)"),
    ("element passed as a pointer", "flat(A[i])", "10", "call to `flat` passes `A[i]` to its pointer parameter `p`"),
    ("rank mismatch", "flat(B)", "10", "call to `flat` passes `B` to its pointer parameter `p`: `p` has 1 dimension(s) where the argument has 2"),
    ("callee calls elsewhere", "other(&A[i])", "5", "`other` calls `fp` (line 12), whose body is not in this file"),
];

#[test]
fn calls_outside_the_model_are_refused_with_the_callee_and_its_line() {
    for (what, call, column, reason) in REFUSED_CALLS {
        let file = format!("{}.c", what.replace(' ', "-").replace('\'', ""));
        let code = format!(
            "{CALLEES}void k(void) {{\n#pragma scop\n  for (int i = 0; i < N; i++)\n    {call};\n#pragma endscop\n}}\n"
        );
        let err = refusal(&file, &code, what);
        assert!(err.contains(&format!("{file}:16:{column}")), "{what}: {err}");
        assert!(err.contains(reason), "{what}: {err}");
    }
}

#[test]
fn iterators_read_after_their_loop_hold_their_exit_value() {
    let (s, _) = load("liveout.c");
    use AccessKind::{Read, Write};
    // `B[i] = A[i - 1] + i;` after `for (i = 0; i < n; i++)`: i = max(0, n).
    let after = [(Read, "A", "{ S2[] -> A[max(n, 0) - 1] }"), (Write, "B", "{ S2[] -> B[max(n, 0)] }")];
    assert!(same_accesses(&s, 1, &after), "{:?}", accesses(&s, 1));
    // Its C text reads the value, not the variable the variant never sets.
    let text = &s.statements[1].text;
    assert!(text.starts_with("B[((int) ((long)(n) > (long)(0) ? (long)(n) : (long)(0)))]"), "{text}");
    // `for (j = i; j < N; j++)`: a bound that reads it.
    let ctx = new_context();
    let domain = isl_rs::Set::read_from_str(&ctx, &s.statements[2].domain).unwrap();
    let expected = isl_rs::Set::read_from_str(&ctx, "[n] -> { S3[j] : max(n, 0) <= j < 50 }").unwrap();
    assert!(domain.is_equal(&expected).unwrap(), "{}", s.statements[2].domain);
    // `for (k = N - 1; k >= 2; k -= 3)` leaves k = 1: `A[k + 2]` is A[3].
    assert!(same_accesses(&s, 4, &[(Write, "A", "{ S5[] -> A[3] }")]), "{:?}", accesses(&s, 4));
    // j after its loop in the body of the loop over i: max(0, i).
    let nested = [(Read, "B", "{ S7[i] -> B[i] }"), (Write, "C", "{ S7[i] -> C[i, max(i, 0)] }")];
    assert!(same_accesses(&s, 6, &nested), "{:?}", accesses(&s, 6));
    // The program reads i and k after the SCoP: the region leaves them
    // with the original's values (j, nested, is not read there).
    let exits: Vec<(&str, &str)> =
        s.exit_values.iter().map(|e| (e.variable.as_str(), e.value.as_str())).collect();
    assert_eq!(exits, [("i", "((int) 50)"), ("k", "((int) 1)")]);
    // A kernel that never reads its iterators after the SCoP leaves them be:
    // its generated code is what it was before exit values.
    let gemm = testkit::load("linear-algebra/gemm.c", "MINI").scop;
    assert!(gemm.exit_values.is_empty(), "{:?}", gemm.exit_values);
}

#[test]
fn an_iterator_the_program_reads_after_the_scop_with_an_unmodelled_value_is_refused() {
    let code = "double X[10][10];\nint main(void) {\n  int i, j;\n#pragma scop\n  for (i = 0; i < 10; i++)\n    for (j = 0; j < 10; j++)\n      X[i][j] = 0;\n#pragma endscop\n  return j;\n}\n";
    let err = extract_text("nestedout.c", code).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err.contains("nestedout.c:6:5: loop iterator `j` keeps the value its loops leave after the SCoP, and the program may read it there (line 9): its loop (line 6) is nested in the loop over `i` (line 5)"),
        "{err}"
    );
    // Not read after the SCoP (assigned first): nothing to leave, accepted;
    // `i` is left with its exit value.
    let code = code.replace("  return j;", "  j = 3;\n  return j + i;");
    let scops = extract_text("nestedkilled.c", &code).unwrap_or_else(|e| panic!("{e}"));
    let exits: Vec<&str> = scops[0].exit_values.iter().map(|e| e.variable.as_str()).collect();
    assert_eq!(exits, ["i"]);
}

fn inputs(path: &Path) -> Result<(), String> {
    let include = format!("-I{}", path.parent().unwrap().display());
    let opts = ExtractOptions { cc_args: vec!["-DSMALL_DATASET".into(), include], ..Default::default() };
    let (source, scops) = scop::extract(path, &opts).unwrap_or_else(|e| panic!("{e}"));
    scop::check_runnable(&source, &scops[0]).map_err(|e| e.to_string())
}

#[test]
fn a_program_that_reads_arguments_or_files_or_is_a_fragment_is_not_runnable() {
    let err = inputs(&own("argv.c")).unwrap_err();
    assert!(err.contains("argv.c:5:") && err.contains("reads its arguments (`argv[1]`)"), "{err}");
    let err = inputs(&own("fileinput.c")).unwrap_err();
    assert!(err.contains("fileinput.c:4:") && err.contains("opens a file to read it"), "{err}");
    // PolyBench's `argv[0]` guard against dead-code elimination names the
    // program and reads nothing.
    let official = testkit::root().join("space/tests/fixtures/official");
    for kernel in ["gemm.c", "jacobi-2d.c"] {
        inputs(&official.join(kernel)).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    }
    let err = inputs(&own("fragment.c")).unwrap_err();
    assert!(err.contains("fragment.c:2:") && err.contains("stands at file scope"), "{err}");
    for name in ["noparam.c", "modulo.c", "nondet.c"] {
        inputs(&own(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn negative_constants_and_negated_expressions_are_affine() {
    let (s, _) = load("negative.c");
    // for (int i = -5; i < N; i++) if (i > -1)
    //   B[i + (-1) + 5] = A[i * -1 + 99] + A[-(i + 1) + N];
    let st = &s.statements[0];
    let ctx = new_context();
    let domain = isl_rs::Set::read_from_str(&ctx, &st.domain).unwrap();
    // N = 100 is a size (`Scop::constants`).
    let expected =
        isl_rs::Set::read_from_str(&ctx, "[polytune_c100] -> { S1[i] : 0 <= i < polytune_c100 }").unwrap();
    assert!(domain.is_equal(&expected).unwrap(), "{}", st.domain);
    let relation = |k: usize| st.accesses[k].relation.as_str();
    assert!(equal_relations(relation(0), "{ S1[i] -> A[99 - i] }"), "{}", relation(0));
    assert!(
        equal_relations(relation(1), "[polytune_c100] -> { S1[i] -> A[polytune_c100 - 1 - i] }"),
        "{}",
        relation(1)
    );
    assert!(equal_relations(relation(2), "{ S1[i] -> B[i + 4] }"), "{}", relation(2));
}

/// `/` and `%` of a dividend that may be negative round toward zero, as
/// C's do: each access relation is the one the program's own arithmetic
/// gives, instance by instance (Rust's `/` and `%` round as C's).
#[test]
fn division_of_a_value_that_may_be_negative_rounds_toward_zero() {
    let (s, _) = load("truncdiv.c");
    let image = |range: std::ops::Range<i64>, name: &str, array: &str, f: &dyn Fn(i64) -> i64| {
        let pairs: Vec<String> = range.map(|i| format!("{name}[{i}] -> {array}[{}]", f(i))).collect();
        format!("{{ {} }}", pairs.join("; "))
    };
    let expected = [
        (0, 1, image(-12..28, "S1", "B", &|i| (i + 1) % 5 + 20)),
        (0, 2, image(-12..28, "S1", "B", &|i| (i - 3) / 4 + 10)),
        (1, 0, image(0..40, "S2", "A", &|i| (-i + 17) / 3 + 20)),
    ];
    let ctx = new_context();
    for (st, k, want) in expected {
        let got = &s.statements[st].accesses[k].relation;
        let domain = isl_rs::UnionSet::read_from_str(&ctx, &s.statements[st].domain).unwrap();
        let on_domain = UnionMap::read_from_str(&ctx, got).unwrap().intersect_domain(domain).unwrap();
        let want_map = UnionMap::read_from_str(&ctx, &want).unwrap();
        assert!(on_domain.is_equal(&want_map).unwrap(), "S{} access {k}: {got}\nwant {want}", st + 1);
    }
}

#[test]
fn a_statement_that_never_runs_is_left_out_with_a_note() {
    let (s, d) = load("neverruns.c");
    // `A[i] = B[i] + 1` under `i > 200` and `B[j] = 0` under `0 <= j < 0`.
    let texts: Vec<&str> = s.statements.iter().map(|st| st.text.as_str()).collect();
    assert_eq!(texts, ["B[i] = A[i] * 2;"]);
    assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
    assert!(s.notes[0].contains("neverruns.c:10:7: `A[i] = B[i] + 1;` never runs"), "{:?}", s.notes);
    assert!(s.notes[1].contains("neverruns.c:13:5: `B[j] = 0;` never runs"), "{:?}", s.notes);
    // A is only read now, and no dependence names the statement left out.
    assert!(s.arrays.iter().any(|a| a.name == "A" && !a.written));
    assert!(d.deps.iter().all(|dep| dep.relation.contains("S1[")), "{d:?}");
}

#[test]
fn a_struct_declared_inside_the_scop_is_local_with_its_members() {
    let (s, _) = load("localstruct.c");
    let arrays: Vec<(&str, &str, bool, bool)> =
        s.arrays.iter().map(|a| (a.name.as_str(), a.element_type.as_str(), a.written, a.local)).collect();
    assert_eq!(
        arrays,
        [
            ("p.a", "double", true, true),
            ("in", "double", false, false),
            ("p.b", "double", true, true),
            ("out", "double", true, false),
            ("p", "struct pair", false, true),
        ]
    );
}

#[test]
fn an_implicit_int_main_is_read() {
    let (s, _) = load("implicitint.c");
    assert_eq!(s.function, "main");
    assert_eq!(s.statements.len(), 1);
    assert_eq!(s.start.line, 8);
}

#[test]
fn in_bounds_accesses_under_parameters_and_unsigned_values_that_cannot_wrap_are_kept() {
    // PolyBench's shape: loops to a parameter over arrays of constant
    // extent (out of bounds only where n > 100, so n <= 100 is taken);
    // `size_t` iterators, and `i - 1u` where i >= 1.
    let code = "#include <stddef.h>\ndouble A[100], B[100];\nvoid k(int n, size_t m) {\n#pragma scop\n\
                for (int i = 0; i < n; i++)\n  B[i] = A[i];\n\
                for (size_t j = 1; j < m; j++)\n  B[j - 1u] = A[j] + A[(unsigned)j - 1u];\n#pragma endscop\n}\n";
    let scops = extract_text("inbounds.c", code).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scops[0].statements.len(), 2);
    assert!(equal_relations(&scops[0].statements[1].accesses[1].relation, "[n, m] -> { S2[j] -> A[j - 1] }"));
}

/// `s = a[0] + a[1] + ... + a[N - 1];` in one statement, the subscripts
/// taken modulo `period`.
fn long_sum(terms: usize, period: usize) -> String {
    let sum: Vec<String> = (0..terms).map(|k| format!("a[{}]", k % period)).collect();
    format!(
        "double a[{terms}], s;\nvoid k(void) {{\n#pragma scop\n  s = {};\n#pragma endscop\n}}\n",
        sum.join(" + ")
    )
}

/// `s = ((((a[0]))));` nested `depth` deep, and as deep in blocks.
fn deep(depth: usize) -> (String, String) {
    let parens = format!(
        "double a[1], s;\nvoid k(void) {{\n#pragma scop\n  s = {}a[0]{};\n#pragma endscop\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let blocks = format!(
        "double a[1], s;\nvoid k(void) {{\n#pragma scop\n  {}s = a[0];{}\n#pragma endscop\n}}\n",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    (parens, blocks)
}

#[test]
fn long_and_deep_expressions_are_read_or_refused_at_their_depth() {
    // Subscripts below 100: no literal is lifted to a parameter (a sum over
    // 20,000 distinct elements lifts 200 of them, and extraction takes
    // minutes: issue 36).
    let scops = extract_text("sum.c", &long_sum(20_000, 100)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scops[0].statements[0].accesses.len(), 20_001);
    let (parens, blocks) = deep(10_000);
    let scops = extract_text("parens.c", &parens).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scops[0].statements[0].accesses.len(), 2);
    let scops = extract_text("blocks.c", &blocks).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scops[0].statements.len(), 1);
    // As deep in an affine subscript (folded bottom-up: once quadratic).
    let subscript = format!(
        "double a[10], s;\nvoid k(void) {{\n#pragma scop\n  for (int i = 0; i < 5; i++)\n    s = a[{}i + (2 - 1){}];\n#pragma endscop\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let scops = extract_text("subscript.c", &subscript).unwrap_or_else(|e| panic!("{e}"));
    assert!(equal_relations(&scops[0].statements[0].accesses[0].relation, "{ S1[i] -> a[i + 1] }"));
    // Deeper than the walks go: a clear error where the nesting gets too deep.
    let (parens, _) = deep(60_000);
    let err = extract_text("deeper.c", &parens).unwrap_err().to_string();
    assert!(err.contains("deeper.c:4:") && err.contains("nesting deeper than 50000 levels"), "{err}");
}

#[test]
fn dependences_of_many_references_to_distinct_elements_are_exact() {
    // The references' subscript boxes never meet except on `s`: no
    // dependence between the reads of `a`, one per reference pair on `s`.
    let scops = extract_text("sum2000.c", &long_sum(2_000, 2_000)).unwrap_or_else(|e| panic!("{e}"));
    let d = deps::analyze(&scops[0]).unwrap();
    assert!(d.deps.iter().all(|dep| dep.array == "s"), "{:?}", &d.deps[..3.min(d.deps.len())]);
    // Two overlapping references still pair: a[i] and a[i + 1] in a loop.
    let code = "double a[100];\nvoid k(void) {\n#pragma scop\n  for (int i = 0; i < 99; i++)\n    a[i + 1] = a[i] + a[0];\n#pragma endscop\n}\n";
    let scops = extract_text("pair.c", code).unwrap_or_else(|e| panic!("{e}"));
    let d = deps::analyze(&scops[0]).unwrap();
    let flows: Vec<(&str, &str)> =
        d.of_kind(deps::DepKind::Flow).map(|f| (f.source.as_str(), f.sink.as_str())).collect();
    // a[0] is never written: only a[i] reads what a[i + 1] wrote.
    assert_eq!(flows, [("ref2", "ref0")], "{d:?}");
    assert_eq!(d.of_kind(deps::DepKind::Rar).count(), 2, "{d:?}");
}
