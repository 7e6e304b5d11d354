//! The unified scheduler (RR-9110 §4): the paper's published schedules (§6)
//! and what each knob changes.

use model::deps::Dependences;
use model::scop::Scop;
use space::schedule::{self, CoreOptions, CoreSchedule, RowKind};
use vocab::knobs::SchedulerOptions;

fn load(rel: &str) -> (Scop, Dependences) {
    let k = testkit::load(rel, "MINI");
    (k.scop, k.deps)
}

fn unified(rel: &str, settings: &[&str]) -> (Scop, CoreSchedule) {
    let (s, d) = load(rel);
    let knobs = SchedulerOptions::default().with_settings(settings).unwrap();
    let out = schedule::unified(&s, &d, None, &knobs).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (s, out)
}

/// Statement `stmt`'s band rows as text (`i`, `0`, `k`, ...), outermost first,
/// over the rows of its fusion group that are loops of some member.
fn rows_of(s: &Scop, out: &CoreSchedule, stmt: usize) -> Vec<String> {
    out.rows
        .iter()
        .filter(|r| r.kind != RowKind::Feautrier || r.affine.iter().any(|a| a.1.iter().any(|&c| c != 0)))
        .filter_map(|r| r.affine.iter().find(|a| a.0 == stmt))
        .map(|(st, c, d, e)| schedule::affine_text(s, *st, c, d, *e))
        .collect()
}

#[test]
fn two_mm_for_openmp_is_the_published_schedule() {
    let (s, out) = unified("linear-algebra/2mm.c", &["target=openmp"]);
    // S1 -> (0, i, 0, j), S2 -> (0, i, k, j), S3 -> (1, i, 0, j), S4 -> (1, i, k, j).
    assert_eq!(out.preorder.0, vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(rows_of(&s, &out, 0), ["i", "0", "j"], "{out:#?}");
    assert_eq!(rows_of(&s, &out, 1), ["i", "k", "j"]);
    assert_eq!(rows_of(&s, &out, 2), ["i", "0", "j"]);
    assert_eq!(rows_of(&s, &out, 3), ["i", "k", "j"]);
    // The outer loop is the (single) parallel one.
    let first = out.rows.iter().find(|r| r.group == 0).unwrap();
    assert!(first.coincident);
    // The innermost j carries spatial proximity; the k row carried only A's.
    let last = out.rows.iter().rfind(|r| r.group == 0 && r.kind == RowKind::Spatial).unwrap();
    assert!(!last.spatial.is_empty());
}

#[test]
fn lu_for_openmp_orders_s1_and_s3_as_i_k_j() {
    let (s, out) = unified("linear-algebra/lu.c", &["target=openmp"]);
    assert_eq!(rows_of(&s, &out, 0), ["i", "k", "j"], "{out:#?}");
    assert_eq!(rows_of(&s, &out, 2), ["i", "k", "j"]);
}

#[test]
fn gemm_ends_with_j_and_the_core_scheduler_is_unchanged_without_knobs() {
    let (s, out) = unified("linear-algebra/gemm.c", &[]);
    assert_eq!(rows_of(&s, &out, 1), ["i", "k", "j"]);
    // Without knobs: the core scheduler, whose gemm band is (i, j, k).
    let (s2, d) = load("linear-algebra/gemm.c");
    let core = schedule::schedule(&s2, &d, &CoreOptions::default()).unwrap();
    assert_eq!(rows_of(&s2, &core, 1)[..2], ["i", "j"]);
    // spatial=off is the core ILP (3) too.
    let (s3, off) = unified("linear-algebra/gemm.c", &["spatial=off"]);
    assert_eq!(rows_of(&s3, &off, 1), rows_of(&s2, &core, 1));
}

#[test]
fn a_spatial_group_left_uncarried_does_not_order_the_last_row() {
    // fdtd-2d's hz group (S2, S3 read it, S4 writes it) cannot be carried
    // by a stride-one last row without S4 running a line after S3; when (5)
    // made such a group's distances non-negative anyway, the last row was
    // `15*t + j`: time tiles skewed by 15, and no wavefront to speak of.
    let (s, out) = unified("stencils/fdtd-2d.c", &["target=openmp"]);
    let rows: Vec<Vec<String>> = (0..4).map(|k| rows_of(&s, &out, k)).collect();
    assert_eq!(rows[1], ["t", "t - i", "t + j"], "{out:#?}");
    assert_eq!(rows[3], ["t", "t - i", "t + j + 1"]);
    let last = out.rows.iter().rfind(|r| r.kind == RowKind::Spatial).unwrap();
    assert!(!last.spatial.is_empty(), "the j row still carries some spatial proximity");
}

#[test]
fn gpu_target_maps_the_spatial_coincident_row_to_x() {
    let (_, out) = unified("linear-algebra/gemm.c", &["target=gpu"]);
    let m = out.mapping.first().expect("a thread mapping");
    let band: Vec<_> = out.rows.iter().filter(|r| r.group == m.group && r.band == m.band).collect();
    let x = m.threads.iter().find(|t| t.1 == 'x').expect("an x thread");
    assert!(band[x.0].coincident);
    assert!(m.threads.iter().all(|t| band[t.0].coincident), "{m:?}");
    // gemm: the coincident row that carries spatial proximity is j (C[i][j], B[k][j]).
    assert!(!band[x.0].spatial.is_empty(), "{out:#?}");
}

/// Code generation maps the innermost of the first three leading coincident
/// members to thread x: the scheduler puts the spatial row there. On gemm
/// the GPU strategy finds j first; it becomes the band's second member, so
/// that consecutive threads touch consecutive C[i][j] and B[k][j]. heat-3d's
/// three coincident space rows end with the one that carries the most.
#[test]
fn the_spatial_row_is_placed_where_code_generation_maps_thread_x() {
    let (s, out) = unified("linear-algebra/gemm.c", &["target=gpu"]);
    assert_eq!(rows_of(&s, &out, 1)[..2], ["i", "j"], "{out:#?}");
    for rel in ["linear-algebra/gemm.c", "stencils/heat-3d.c", "linear-algebra/2mm.c", "stencils/jacobi-2d.c"]
    {
        let (_, out) = unified(rel, &["target=gpu"]);
        for m in &out.mapping {
            let band: Vec<_> = out.rows.iter().filter(|r| r.group == m.group && r.band == m.band).collect();
            let first = band.iter().position(|r| r.coincident).unwrap();
            let run = band[first..].iter().take_while(|r| r.coincident).count();
            let x = m.threads.iter().find(|t| t.1 == 'x').expect("an x thread");
            assert_eq!(x.0, first + run.min(3) - 1, "{rel}: {m:?}");
            let most = band[first..first + run].iter().map(|r| r.spatial.len()).max().unwrap();
            assert_eq!(band[x.0].spatial.len(), most, "{rel}: {m:?}");
        }
    }
}

#[test]
fn hlim_below_the_pressure_turns_a_non_parallel_first_row_into_a_feautrier_row() {
    // seidel-2d has no outer parallel loop: with hlim=1 the first row is Feautrier's.
    let (_, out) = unified("stencils/seidel-2d.c", &["hlim=1"]);
    assert_eq!(out.rows[0].kind, RowKind::Feautrier, "{out:#?}");
    let (_, off) = unified("stencils/seidel-2d.c", &["hlim=off"]);
    assert_ne!(off.rows[0].kind, RowKind::Feautrier);
}

#[test]
fn global_consecutivity_makes_the_innermost_loop_stride_one() {
    // mvt's second nest reads A[j][i] under (i, j). Consecutivity (report
    // §3.1.1, f = 1): the innermost loop advances i by one and leaves j, i.e.
    // the direction v = e_i has c·v = 0 on every outer row and 1 on the last.
    let coefficients = |out: &CoreSchedule| -> Vec<Vec<i64>> {
        out.rows.iter().filter_map(|r| r.affine.iter().find(|a| a.0 == 1)).map(|a| a.1.clone()).collect()
    };
    let (_, out) = unified("linear-algebra/mvt.c", &["consecutivity=global", "spatial=off"]);
    let rows = coefficients(&out);
    let (last, outer) = rows.split_last().unwrap();
    assert_eq!(last[0], 1, "{rows:?}");
    assert!(outer.iter().all(|r| r[0] == 0), "{rows:?}");
    // Without it the core scheduler keeps the original order (j innermost).
    let (_, plain) = unified("linear-algebra/mvt.c", &["spatial=off"]);
    assert_eq!(coefficients(&plain).last().unwrap(), &vec![0, 1]);
}

/// Remembered lexmins change no schedule. 2mm under three preorders and
/// two knob settings, scheduled with one shared memo: the trees are those
/// scheduled without one, a repeated schedule is answered whole from the
/// memo, and damaged optima are caught by the check on each answer (solved
/// again, the same trees).
#[test]
fn remembered_lexmins_give_the_same_schedules() {
    use schedule::{InMemory, Memo, MemoKey};
    use vocab::preorder::Preorder;

    /// Hands out the inner memo's optima with one more variable set.
    struct Damaged<'a>(&'a InMemory);
    impl Memo for Damaged<'_> {
        fn get(&self, key: &MemoKey) -> Option<String> {
            let text = self.0.get(key)?;
            Some(match text.strip_prefix("optimal ") {
                Some(optimum) => format!("optimal {optimum},0:7"),
                None => text,
            })
        }
        fn put(&self, _: &MemoKey, _: &str) {}
    }

    let (s, d) = load("linear-algebra/2mm.c");
    let preorders = [
        None,
        Some(Preorder(vec![vec![0, 2], vec![1, 3]])),
        Some(Preorder(vec![vec![2], vec![0], vec![1, 3]])),
    ];
    let settings: [&[&str]; 2] = [&[], &["hlim=4", "consecutivity=global"]];
    let memo = InMemory::default();
    let mut shared = 0;
    for preorder in &preorders {
        for knobs in settings {
            let knobs_set = SchedulerOptions::default().with_settings(knobs).unwrap();
            let opts = CoreOptions::unified(preorder.clone(), &knobs_set);
            let what = format!("{preorder:?} {knobs:?}");
            let _watch = testkit::item(&what, std::time::Duration::from_secs(120));
            let plain = schedule::schedule(&s, &d, &opts).unwrap();
            let first = schedule::schedule_with(&s, &d, &opts, Some(&memo)).unwrap();
            shared += first.remembered;
            let again = schedule::schedule_with(&s, &d, &opts, Some(&memo)).unwrap();
            let checked = schedule::schedule_with(&s, &d, &opts, Some(&Damaged(&memo))).unwrap();
            assert_eq!(first.tree, plain.tree, "{what}");
            assert_eq!(again.tree, plain.tree, "{what}");
            assert_eq!(again.remembered, again.lexmins, "{what}: every lexmin asked before");
            assert_eq!(checked.tree, plain.tree, "{what}");
            assert!(checked.remembered < checked.lexmins, "{what}: damaged optima used");
        }
    }
    // Different points share ILPs: the reason for the memo.
    assert!(shared > 0, "no lexmin shared between 2mm's points");
}

/// Diamond tiles (`diamond=on`): a stencil's band of a time row and a
/// skewed one gets the skew's mirror in the time row's place, Pluto's
/// hyperplanes for jacobi-1d (`2t − i`, `2t + i`, each statement with its
/// own constant), legal by isl's check; the two rows sum to a multiple of
/// time. A band without a time row (gemm) is left as it was.
#[test]
fn diamond_tiles_mirror_the_skew_of_a_stencils_time_band() {
    let legal = |s: &Scop, out: &CoreSchedule, rel: &str| {
        let d = load(rel).1;
        let bad = model::legality::violations(&model::isl::new_context(), &s.context, &out.tree, &d).unwrap();
        assert!(bad.is_empty(), "{rel}: {bad:?}");
    };
    let (s, out) = unified("stencils/jacobi-1d.c", &["target=openmp", "diamond=on"]);
    assert_eq!(rows_of(&s, &out, 0), ["2*t - i", "2*t + i"], "{out:#?}");
    assert_eq!(rows_of(&s, &out, 1), ["2*t - i + 1", "2*t + i + 1"]);
    legal(&s, &out, "stencils/jacobi-1d.c");
    let (_, plain) = unified("stencils/jacobi-1d.c", &["target=openmp"]);
    assert_eq!(rows_of(&s, &plain, 0)[..2], ["t", "2*t + i"], "{plain:#?}");
    // In 2-D and 3-D, the first space dimension's skew is mirrored, the others stay.
    for rel in ["stencils/jacobi-2d.c", "stencils/heat-3d.c"] {
        let (s, out) = unified(rel, &["target=openmp", "diamond=on"]);
        let rows = rows_of(&s, &out, 0);
        assert_eq!(rows[..3], ["2*t - i", "2*t + i", "2*t + j"], "{rel}: {out:#?}");
        legal(&s, &out, rel);
    }
    let (s, out) = unified("linear-algebra/gemm.c", &["target=openmp", "diamond=on"]);
    let (_, plain) = unified("linear-algebra/gemm.c", &["target=openmp"]);
    assert_eq!(out.tree, plain.tree);
    assert_eq!(rows_of(&s, &out, 1), ["i", "k", "j"]);
}
