//! Consecutivity at the global level (consecutivity report §3): intra- and
//! inter-statement constraints in the unified scheduler's ILPs.

use model::deps;
use model::scop::{self, Scop};
use space::schedule;
use vocab::knobs::SchedulerOptions;
use vocab::preorder::Preorder;

fn scop_of(text: &str) -> Scop {
    scop::extract_preprocessed(std::path::Path::new("inline.c"), text).unwrap().remove(0)
}

/// `(iterator coefficients, constant)` of statement `stmt` in each row.
fn rows_of(s: &schedule::CoreSchedule, stmt: usize) -> Vec<(Vec<i64>, i64)> {
    s.rows.iter().filter_map(|r| r.affine.iter().find(|a| a.0 == stmt).map(|a| (a.1.clone(), a.3))).collect()
}

fn unified(scop: &Scop, preorder: Option<Preorder>, settings: &[&str]) -> schedule::CoreSchedule {
    let deps = deps::analyze(scop).unwrap();
    let knobs = SchedulerOptions::default().with_settings(settings).unwrap();
    schedule::unified(scop, &deps, preorder, &knobs).unwrap()
}

/// Two statements writing the even and the odd elements of A. With both
/// kinds of consecutivity the writes interleave (S1: 2i, S2: 2i + 1), so
/// that consecutive schedule points write consecutive elements; with
/// intra-statement consecutivity alone both get 2i and the pairs are not
/// one step apart.
#[test]
fn even_and_odd_writes_interleave_one_step_apart() {
    let one_loop = scop_of(
        "void k(int n, double A[2 * n + 2], double B[n], double C[n]) {\n#pragma scop\n\
         for (int i = 0; i < n; i++) {\n  A[2 * i] = B[i];\n  A[2 * i + 1] = C[i];\n}\n#pragma endscop\n}\n",
    );
    let two_loops = scop_of(
        "void k(int n, double A[2 * n + 2], double B[n], double C[n]) {\n#pragma scop\n\
         for (int i = 0; i < n; i++)\n  A[2 * i] = B[i];\n\
         for (int i = 0; i < n; i++)\n  A[2 * i + 1] = C[i];\n#pragma endscop\n}\n",
    );
    let settings = ["consecutivity=global", "spatial=off", "target=seq"];
    for (scop, preorder) in [(&one_loop, None), (&two_loops, Some(Preorder(vec![vec![0, 1]])))] {
        let s = unified(scop, preorder.clone(), &settings);
        let (s1, s2) = (rows_of(&s, 0), rows_of(&s, 1));
        assert_eq!(s1[0].0, vec![2], "{s1:?} {s2:?}");
        assert_eq!(s2[0].0, vec![2], "{s1:?} {s2:?}");
        assert_eq!(s2[0].1 - s1[0].1, 1, "{s1:?} {s2:?}");
    }
    // Control: the odd elements go to another array, so no pair is
    // consecutive; intra-statement consecutivity alone gives both 2i.
    let other_array = scop_of(
        "void k(int n, double A[2 * n + 2], double D[2 * n + 2], double B[n], double C[n]) {\n#pragma scop\n\
         for (int i = 0; i < n; i++) {\n  A[2 * i] = B[i];\n  D[2 * i + 1] = C[i];\n}\n#pragma endscop\n}\n",
    );
    let s = unified(&other_array, None, &settings);
    let (s1, s2) = (rows_of(&s, 0), rows_of(&s, 1));
    assert_eq!((s1[0].0.clone(), s2[0].0.clone()), (vec![2], vec![2]), "{s1:?} {s2:?}");
    assert_eq!(s2[0].1, s1[0].1, "{s1:?} {s2:?}");
}
