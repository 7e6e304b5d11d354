//! Array expansion of arrays (Feautrier, "Array expansion", ICS 1988): a
//! temporary whose values stay in one iteration of the loops around its
//! uses gets a copy per iteration, and each element's last write says
//! where its value after the region lies.

use isl_rs::{Map, Set};
use model::deps::{self, DepKind};
use model::expansion::expand;
use model::scop::Scop;

fn first_scop(code: &str) -> Scop {
    testkit::extract_text("expansion.c", code).unwrap_or_else(|e| panic!("{e}")).remove(0)
}

/// A SCoP of `body` over arrays `A`, `B` and the temporary `t`.
fn scop_of(body: &str) -> Scop {
    first_scop(&format!(
        "void f(int n, double A[n][n], double B[n][n], double t[n]) {{ int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}"
    ))
}

/// `set` and `want` (isl text) are equal where the SCoP's context holds.
fn same_set(scop: &Scop, set: &str, want: &str) -> bool {
    let ctx = model::isl::new_context();
    let context = Set::read_from_str(&ctx, &scop.context).unwrap();
    let set = Set::read_from_str(&ctx, set).unwrap().intersect_params(context.copy().unwrap()).unwrap();
    let want = Set::read_from_str(&ctx, want).unwrap().intersect_params(context).unwrap();
    set.is_equal(&want).unwrap()
}

/// doitgen's `sum[p]`, zeroed for every `(r, q)` before its sum over `s`
/// and read back into `A[r][q]`, is expanded along `r` and `q` to
/// `polytune_expanded_sum[r][q][p]`; its values after the region are the
/// last `(r, q)`'s row; and no dependence of the expanded SCoP crosses an
/// iteration of `r` or `q` any more, so both may be tiled and run in
/// parallel.
#[test]
fn doitgens_sum_is_expanded_along_r_and_q() {
    let k = testkit::load(testkit::kernel("linear-algebra/doitgen.c"), "SMALL");
    let ctx = model::isl::new_context();
    let before = &k.deps;
    let crossing = |d: &deps::Dependence| {
        let m = Map::read_from_str(&ctx, &d.relation).unwrap();
        let same = m.copy().unwrap().equate(isl_rs::DimType::In, 0, isl_rs::DimType::Out, 0).unwrap();
        let same = same.equate(isl_rs::DimType::In, 1, isl_rs::DimType::Out, 1).unwrap();
        !m.subtract(same).unwrap().is_empty().unwrap()
    };
    let validity = [DepKind::Raw, DepKind::War, DepKind::Waw];
    assert!(before.deps.iter().any(|d| validity.contains(&d.kind) && d.array == "sum" && crossing(d)));
    let out = expand(&ctx, &k.scop).unwrap();
    let e: Vec<(&str, &str, usize)> =
        out.expansions.iter().map(|e| (e.scalar.as_str(), e.array.as_str(), e.rank)).collect();
    assert_eq!(e, [("sum", "polytune_expanded_sum", 1)]);
    let texts: Vec<&str> = out.statements.iter().map(|s| s.text.as_str()).collect();
    assert!(texts.contains(&"polytune_expanded_sum[r][q][p] = 0.0;"), "{texts:?}");
    assert!(texts.contains(&"A[r][q][p] = polytune_expanded_sum[r][q][p];"), "{texts:?}");
    assert!(out.statements.iter().flat_map(|s| &s.accesses).all(|a| a.array != "sum"));
    let e = &out.expansions[0];
    assert_eq!(e.values.len(), 3);
    let last = e.last.as_deref().unwrap();
    assert!(
        same_set(&out, last, "[nr, nq, np] -> { [nr - 1, nq - 1, p] : nr > 0 and nq > 0 and 0 <= p < np }"),
        "{last}"
    );
    let array = out.arrays.iter().find(|a| a.name == e.array).unwrap();
    assert_eq!((array.element_type.as_str(), array.extents.len(), array.local), ("double", 3, true));
    let after = deps::analyze(&out).unwrap();
    let left: Vec<_> = after.deps.iter().filter(|d| validity.contains(&d.kind) && crossing(d)).collect();
    assert!(left.is_empty(), "{left:#?}");
}

/// Arrays whose values cross an iteration stay as they are: a row summed
/// over every `i` (set once, at `i = 0`), and one read at each `i` before
/// it is written there (the value of the `i` before, or from before the
/// region). An array the region only reads is no candidate, nor one
/// written once per element (`B`), nor one along a loop that another
/// array's values cross.
#[test]
fn an_array_whose_values_cross_iterations_is_not_expanded() {
    let ctx = model::isl::new_context();
    for body in [
        "for (i = 0; i < n; i++) { if (i == 0) for (j = 0; j < n; j++) t[j] = 0;\n\
         for (j = 0; j < n; j++) t[j] += A[i][j];\n for (j = 0; j < n; j++) B[i][j] = t[j]; }",
        "for (i = 0; i < n; i++) { for (j = 0; j < n; j++) B[i][j] = t[j];\n\
         for (j = 0; j < n; j++) t[j] = A[i][j]; }",
        "for (i = 0; i < n; i++) for (j = 0; j < n; j++) B[i][j] = t[j] * A[i][j];",
        // Written at every `i`, never read: no value to keep in an iteration.
        "for (i = 0; i < n; i++) for (j = 0; j < n; j++) t[j] = A[i][j];",
    ] {
        let out = expand(&ctx, &scop_of(body)).unwrap();
        assert!(out.expansions.is_empty(), "{body}: {:?}", out.expansions);
    }
    // adi's `p`, `q` and `v` are set afresh at every time step, but `u`
    // carries values from one step to the next: copies per step would
    // make the arrays `tsteps` times as large and free no loop.
    let adi = testkit::load(testkit::kernel("stencils/adi.c"), "SMALL");
    let out = expand(&ctx, &adi.scop).unwrap();
    assert!(out.expansions.is_empty(), "{:?}", out.expansions);
    // Set before it is read in every `i`: expanded.
    let body = "for (i = 0; i < n; i++) { for (j = 0; j < n; j++) t[j] = A[i][j];\n\
                for (j = 0; j < n; j++) B[i][j] = t[j]; }";
    let out = expand(&ctx, &scop_of(body)).unwrap();
    assert_eq!(out.expansions.len(), 1);
}

/// Each element keeps the value of its own last write: `t[j]`, written at
/// every `i` up to `j`, last at `i = j`, so after the region `t[j]` is
/// the copy of iteration `j` (the diagonal), not of the last `i`.
#[test]
fn each_element_takes_its_own_last_write() {
    let ctx = model::isl::new_context();
    let body = "for (i = 0; i < n; i++) { for (j = i; j < n; j++) t[j] = A[i][j];\n\
                for (j = i; j < n; j++) B[i][j] = t[j] * 2; }";
    let scop = scop_of(body);
    let out = expand(&ctx, &scop).unwrap();
    assert_eq!(out.expansions.len(), 1, "{:?}", out.expansions);
    let last = out.expansions[0].last.as_deref().unwrap();
    assert!(same_set(&out, last, "[n] -> { [j, j] : 0 <= j < n }"), "{last}");
}
