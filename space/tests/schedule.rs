//! The core scheduler on PolyBench: known results of the Pluto algorithm and
//! the fusion structures it is asked to honour.

use model::deps::Dependences;
use model::scop::Scop;
use space::schedule::{self, CoreOptions, CoreSchedule, Fusion, RowKind, ScheduleError};
use vocab::preorder::Preorder;

fn load(rel: &str) -> (Scop, Dependences) {
    let k = testkit::load(rel, "MINI");
    (k.scop, k.deps)
}

fn run(rel: &str, fusion: Fusion) -> (Scop, CoreSchedule) {
    let (s, d) = load(rel);
    let out = schedule::schedule(&s, &d, &CoreOptions { fusion, ..Default::default() })
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    (s, out)
}

/// The iterator coefficients of statement `stmt` in the rows of band 0 of group 0.
fn first_band(out: &CoreSchedule, stmt: usize) -> Vec<(Vec<i64>, bool)> {
    out.rows
        .iter()
        .filter(|r| r.group == 0 && r.band == 0)
        .map(|r| (r.affine.iter().find(|a| a.0 == stmt).unwrap().1.clone(), r.coincident))
        .collect()
}

#[test]
fn gemm_gets_an_outer_parallel_band_over_i_and_j() {
    let (_, out) = run("linear-algebra/gemm.c", Fusion::Original);
    let band = first_band(&out, 1);
    assert!(band.len() >= 3, "{band:?}");
    assert_eq!(band[0], (vec![1, 0, 0], true), "{band:?}");
    assert_eq!(band[1], (vec![0, 0, 1], true), "{band:?}");
    assert!(!band[2].1);
}

#[test]
fn jacobi_1d_and_seidel_2d_get_a_skewed_permutable_band_of_full_depth() {
    for (rel, depth) in [("stencils/jacobi-1d.c", 2), ("stencils/seidel-2d.c", 3)] {
        let (_, out) = run(rel, Fusion::Original);
        let band = first_band(&out, 0);
        assert_eq!(band.len(), depth, "{rel}: {band:?}");
        assert!(band.iter().all(|r| r.0.iter().all(|&c| c >= 0)), "{rel}: {band:?}");
        // Skewed: some row mixes the time iterator with a space iterator.
        assert!(band.iter().any(|r| r.0[0] != 0 && r.0[1..].iter().any(|&c| c != 0)), "{rel}: {band:?}");
        // No coincident row: every row carries the time dependence or a skew of it.
        assert!(band.iter().all(|r| !r.1), "{rel}: {band:?}");
        assert!(testkit::tree::Tree::read(&out.tree).flags().0 > 0, "{}", out.tree);
    }
}

#[test]
fn trisolv_gets_no_outer_parallel_loop() {
    let (_, out) = run("linear-algebra/trisolv.c", Fusion::Original);
    assert!(!out.rows[0].coincident, "{:?}", out.rows[0]);
}

#[test]
fn original_fusion_keeps_the_loop_nests_and_max_fusion_merges_them() {
    let (s, out) = run("linear-algebra/2mm.c", Fusion::Original);
    assert_eq!(out.preorder, Preorder(vec![vec![0, 1], vec![2, 3]]));
    assert_eq!(out.preorder, s.original_preorder());
    let (_, out) = run("linear-algebra/2mm.c", Fusion::Max);
    assert_eq!(out.preorder, Preorder(vec![vec![0, 1, 2, 3]]));
    // Fused over i: the first row is shared by all four statements.
    assert!(out.rows[0].affine.iter().all(|a| a.1[0] == 1), "{:?}", out.rows[0]);
    // gemver's first nest (A += u1 v1 + u2 v2) and the x update cannot share
    // a loop without breaking A's column-wise read; max fusion must keep a
    // legal structure.
    let (_, out) = run("linear-algebra/gemver.c", Fusion::Max);
    assert!(out.preorder.0.len() <= 4);
}

#[test]
fn an_illegal_preorder_is_refused_with_the_dependence_that_breaks_it() {
    let (s, d) = load("linear-algebra/2mm.c");
    let backwards = Preorder(vec![vec![2, 3], vec![0, 1]]);
    let err = schedule::schedule(
        &s,
        &d,
        &CoreOptions { fusion: Fusion::Preorder(backwards), ..Default::default() },
    )
    .unwrap_err();
    assert!(matches!(err, ScheduleError::IllegalPreorder { .. }), "{err}");
    let missing = Preorder(vec![vec![0, 1, 2]]);
    let err =
        schedule::schedule(&s, &d, &CoreOptions { fusion: Fusion::Preorder(missing), ..Default::default() })
            .unwrap_err();
    assert!(matches!(err, ScheduleError::BadPreorder(_)), "{err}");
}

#[test]
fn a_feautrier_row_separates_what_no_band_row_can_order() {
    // gemm: S1 (C *= beta) must precede S2 at k = 0; after the (i, j, k) band
    // only a scalar dimension can order them.
    let (_, out) = run("linear-algebra/gemm.c", Fusion::Original);
    let last = out.rows.last().unwrap();
    assert_eq!(last.kind, RowKind::Feautrier);
    assert_eq!(last.carries, vec!["S1->S2".to_string()]);
}

/// Every band row gives each statement that still needs a linearly
/// independent row one: its iterator coefficients raise the rank of the
/// statement's rows so far (earlier bands of its group included). Feautrier
/// rows make no such promise. cholesky's S3 used to get `i` in rows 1 and 2:
/// the search's leaf was non-trivial for S3, but the final lexmin, held only
/// to the sign cases of the statements branched on, moved back to `i`.
#[test]
fn every_band_row_is_linearly_independent_for_each_statement_that_needs_one() {
    use space::linalg::rank;
    let (root, files) = (testkit::kernel(""), testkit::kernels());
    let mut failures = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_str().unwrap().to_string();
        let item = testkit::item(format!("{rel}: schedule"), std::time::Duration::from_secs(300));
        let (s, out) = run(&rel, Fusion::Original);
        drop(item);
        for (stmt, st) in s.statements.iter().enumerate() {
            let dims = st.iterators.len();
            let mut h: Vec<Vec<i64>> = Vec::new();
            for (i, row) in out.rows.iter().enumerate() {
                let Some(a) = row.affine.iter().find(|a| a.0 == stmt) else { continue };
                let before = rank(&h, dims);
                h.push(a.1.clone());
                if row.kind != RowKind::Feautrier && before < dims && rank(&h, dims) == before {
                    failures.push(format!(
                        "{rel}: row {i} of {} is {:?}, dependent on {:?}",
                        st.name,
                        a.1,
                        &h[..h.len() - 1]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every lexmin the scheduler solves on the 30 kernels, solved by both
/// backends (CBC successive ILPs and isl's exact optimisation): equal optima
/// everywhere. isl gets an operation quota per lexmin and a time budget per
/// kernel; a lexmin it gave up on is counted, not compared. Most of adi's
/// lexmins (over a hundred variables, over a hundred objectives each) and a
/// few of gramschmidt's and deriche's are beyond it. Each lexmin covers a
/// row's whole objective vector (sign-case nodes included), so about 900 are
/// compared in all (every fourth kernel's in the fast tier).
const ISL_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

#[test]
fn cbc_and_isl_reach_equal_optima_on_every_ilp_of_the_30_kernels() {
    space::schedule::ilp::set_isl_quota(2_000_000);
    let (root, files) = (testkit::kernel(""), testkit::kernels());
    assert_eq!(files.len(), 30);
    let (mut checked, mut unchecked) = (0, 0);
    let mut failures = Vec::new();
    // The fast tier: every fourth kernel (about 230 lexmins); the heavy tier: the others.
    let sample: Vec<_> = files.iter().enumerate().filter(|(i, _)| testkit::takes(*i, 0, 4, 1)).collect();
    for &(_, f) in &sample {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let rel = f.strip_prefix(&root).unwrap().to_str().unwrap().to_string();
        let (s, d) = load(&rel);
        let opts = CoreOptions { cross_check: true, ..Default::default() };
        let t = std::time::Instant::now();
        space::schedule::ilp::set_isl_deadline(Some(t + ISL_BUDGET));
        let result = schedule::schedule(&s, &d, &opts);
        match result {
            Ok(out) => {
                eprintln!(
                    "{name}: {:.1?}, {} cross-checked, {} not",
                    t.elapsed(),
                    out.cross_checked,
                    out.cross_unchecked
                );
                checked += out.cross_checked;
                unchecked += out.cross_unchecked;
            }
            // adi: the isl backend fails to read back one of its own optima
            // (a syntax error from isl on the pinning set); a known defect of
            // the isl backend, not a disagreement.
            Err(ScheduleError::Ilp(e)) if name == "adi" && e.to_string().contains("isl") => {}
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!("cross-checked {checked} lexmins, isl gave up on {unchecked}");
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(checked > 800 * sample.len() / files.len(), "{checked}");
}

/// A reduction into one scalar at the bottom of a 10-deep nest of constant
/// trip counts 3: every instance depends on every earlier one. The band
/// rows of such a nest coalesce loops (`2·i0 + i1`, `6·i0 + 2·i1 + i2`, ...,
/// coefficients growing as 3^d) unless isl's coalescing bound stops them,
/// and the Farkas duals of its 20-dimensional wrapped relations took most
/// of the time: depth 9 did not schedule in 300 s. Each row keeps its
/// coefficients within half the other loops' trip count.
#[test]
fn a_reduction_in_a_ten_deep_nest_schedules_with_small_coefficients() {
    let depth = 10;
    let dir = testkit::TempDir::new("deep-nest");
    let path = dir.join("nest.c");
    let mut c = String::from("#include <stdio.h>\nint main(void) {\n  double s = 0;\n#pragma scop\n");
    for k in 0..depth {
        c.push_str(&format!("  for (int i{k} = 0; i{k} < 3; i{k}++)\n"));
    }
    c.push_str("    s += 1;\n#pragma endscop\n  printf(\"%f\\n\", s);\n  return 0;\n}\n");
    std::fs::write(&path, c).unwrap();
    let (_, mut scops) = model::scop::extract(&path, &Default::default()).unwrap();
    let s = scops.remove(0);
    let d = model::deps::analyze(&s).unwrap();
    let out = {
        let _item = testkit::item("the 10-deep nest's schedule", std::time::Duration::from_secs(300));
        schedule::schedule(&s, &d, &CoreOptions::default()).unwrap()
    };
    std::fs::remove_dir_all(&dir).ok();
    let coefficients = out.rows.iter().flat_map(|r| r.affine.iter().flat_map(|a| a.1.iter()));
    assert!(coefficients.clone().all(|c| c.abs() <= 2), "{:?}", out.rows);
    assert!(coefficients.filter(|&&c| c != 0).count() >= depth);
}
