//! The Farkas dual by double description (`space::cone`) against isl's
//! `isl_set_coefficients` (Fourier-Motzkin on the multipliers, a separate
//! algorithm and implementation), as cones compared by isl: on every
//! dependence relation of the 30 PolyBench kernels, before and after the
//! original order is stated on them (equal), and on the random programs'
//! fixtures (within isl's). isl compares integer points, which is enough
//! here: a rational cone is the cone over its integer points (its extreme
//! rays can be scaled to integers).

use std::fmt::Write as _;
use std::path::Path;

use isl_rs::{Context, DimType, Map, Set, UnionMap};
use model::deps;
use model::isl::new_context;
use model::scop::{self, ExtractOptions, Scop};
use space::schedule::farkas::{farkas, Farkas, SlotConstraint};

/// `{ [c0, …] : constraints }` over the first `n` slots of each constraint
/// (`skip`: slots left out, zero in every constraint).
fn cone_text(n: usize, constraints: &[SlotConstraint], skip: &[usize]) -> String {
    let names: Vec<String> = (0..n).filter(|d| !skip.contains(d)).map(|d| format!("c{d}")).collect();
    let mut text = format!("{{ [{}] : 0 <= 0", names.join(", "));
    for c in constraints {
        assert_eq!(c.coeffs.len(), n);
        let mut form = c.constant.to_string();
        for (d, a) in c.coeffs.iter().enumerate() {
            if skip.contains(&d) {
                assert_eq!(*a, 0, "a dropped slot is used: {c:?}");
            } else if *a != 0 {
                write!(form, " {} {}c{d}", if *a < 0 { '-' } else { '+' }, a.abs()).unwrap();
            }
        }
        write!(text, " and {form} {} 0", if c.equality { "=" } else { ">=" }).unwrap();
    }
    text + " }"
}

/// isl's coefficients of `set`, as a set over plain dimensions.
fn isl_cone(set: Set) -> String {
    let coef = set.coefficients().unwrap();
    assert_eq!(coef.dim(DimType::Div).unwrap(), 0);
    let n = coef.dim(DimType::Set).unwrap() as usize;
    let list = coef.get_constraint_list().unwrap();
    let mut constraints = Vec::new();
    for k in 0..list.size().unwrap() {
        let c = list.get_at(k).unwrap();
        let coeffs =
            (0..n).map(|d| c.get_coefficient_val(DimType::Set, d as i32).unwrap().get_num_si().unwrap());
        constraints.push(SlotConstraint {
            coeffs: coeffs.collect(),
            constant: c.get_constant_val().unwrap().get_num_si().unwrap(),
            equality: c.is_equality().unwrap(),
        });
    }
    cone_text(n, &constraints, &[])
}

/// Compares `farkas` on one relation with isl's dual of the same set: the
/// distances' for a statement to itself (as `farkas` computes it), the
/// wrapped relation's otherwise. Equal when `exact`; otherwise ours may be
/// smaller, never larger: isl compresses equalities onto their integer
/// solutions first (`2j = n − 1` with `n >= 0` makes `n` odd, so
/// `n >= 1`), the double description works on the rational polyhedron.
/// Returns the number of constraints.
fn check(ctx: &Context, context: &str, relation: &str, exact: bool) -> usize {
    let Some(f) = farkas(ctx, relation, context).unwrap_or_else(|e| panic!("{relation}: {e}")) else {
        return 0;
    };
    let model = Set::read_from_str(ctx, context).unwrap().get_space().unwrap();
    let umap = UnionMap::read_from_str(ctx, relation)
        .unwrap()
        .align_params(model)
        .unwrap()
        .intersect_params(Set::read_from_str(ctx, context).unwrap())
        .unwrap()
        .remove_divs()
        .unwrap();
    let map = Map::from_union_map(umap).unwrap();
    let Farkas { n_params, n_src, .. } = f;
    let self_dependence = map.get_tuple_name(DimType::In).ok().is_some()
        && map.get_tuple_name(DimType::In).ok() == map.get_tuple_name(DimType::Out).ok()
        && n_src == f.n_dst;
    let (expected, skip): (String, Vec<usize>) = if self_dependence {
        (
            isl_cone(map.deltas().unwrap().remove_divs().unwrap()),
            (1 + n_params..1 + n_params + n_src).collect(),
        )
    } else {
        (isl_cone(map.wrap().unwrap()), vec![])
    };
    let ours = cone_text(f.n_slots(), &f.constraints, &skip);
    let (a, b) = (Set::read_from_str(ctx, &ours).unwrap(), Set::read_from_str(ctx, &expected).unwrap());
    let holds = if exact { a.is_equal(&b) } else { a.is_subset(&b) };
    assert!(holds.unwrap(), "{relation}:\nours {ours}\nisl  {expected}");
    f.constraints.len()
}

fn check_scop(ctx: &Context, s: &Scop, exact: bool) -> usize {
    let d = deps::analyze(s).unwrap();
    let stated = space::schedule::order::with_stated_order(ctx, s, &d).unwrap();
    let mut n = 0;
    for dep in d.deps.iter().chain(&stated.deps) {
        // One relation per pair of statements, as the scheduler asks.
        let umap = UnionMap::read_from_str(ctx, &dep.relation).unwrap();
        let maps = umap.get_map_list().unwrap();
        for k in 0..maps.size().unwrap() {
            let map = maps.get_at(k).unwrap();
            n += check(ctx, &s.context, map.to_str().unwrap(), exact);
        }
    }
    n
}

#[test]
fn the_dual_of_every_polybench_dependence_is_isls() {
    let ctx = new_context();
    let mut constraints = 0;
    for f in testkit::kernels() {
        let (_, scops) = scop::extract(&f, &ExtractOptions::default()).unwrap();
        constraints += check_scop(&ctx, &scops[0], true);
    }
    assert!(constraints > 1000, "{constraints} constraints checked");
}

#[test]
fn the_dual_of_the_random_programs_dependences_is_within_isls() {
    let ctx = new_context();
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/own");
    for name in ["modflow.c", "coalesceflow.c", "backanti.c", "rationalorder.c", "modulo.c", "piecewise.c"] {
        let (_, scops) = scop::extract(&own.join(name), &ExtractOptions::default()).unwrap();
        for s in &scops {
            check_scop(&ctx, s, false);
        }
    }
}

/// Relations of a few shapes: a line in the polyhedron (a free parameter),
/// an equality, an unbounded direction, a union of pieces.
#[test]
fn the_dual_of_hand_written_relations_is_isls() {
    let ctx = new_context();
    let context = "[n, m] -> { : n >= 0 }";
    for relation in [
        "[n, m] -> { S[i] -> T[j] : 0 <= i < n and j = i + m }",
        "[n, m] -> { S[i, j] -> T[i', j'] : i' = i and j' >= j + 1 and 0 <= i, j < n }",
        "[n, m] -> { S[i] -> T[j] : j >= i }",
        "[n, m] -> { S[i] -> T[j] : (0 <= i < n and j = i + 1) or (0 <= i < m and j = 2i) }",
        "[n, m] -> { S[i, j] -> S[i', j'] : 0 <= i < i' < n and 0 <= j, j' < m }",
        "[n, m] -> { S[t, i] -> S[t + 1, i'] : 0 <= t < n and 1 <= i < n - 1 and i - 1 <= i' <= i + 1 }",
    ] {
        assert!(check(&ctx, context, relation, true) > 0, "{relation}");
    }
}

/// One piece of a dependence of random program 128 (19 constraints over 4
/// parameters and 8 iterators): isl's Fourier-Motzkin takes 40 s on its
/// dual (release build) and finds 270 constraints; the double description
/// gives one per vertex, each a valid form that is tight on enough
/// constraints to be a vertex, and as many.
#[test]
fn the_dual_of_a_polyhedron_with_many_vertices_is_its_vertices() {
    let ctx = new_context();
    let context = "[c, n, m, d] -> { : c >= 0 and d >= 0 }";
    let relation = "[c, n, m, d] -> { S2[i, j, k, l] -> S4[i', j', k', l'] : l' = -3 + n - l and c >= 0 \
        and m >= 3 and d >= 0 and i >= 5 + c and 6 + c <= j <= 7 + c + m and k <= n and l >= -3 + n - m \
        and l >= 2 and -8 - c + n <= l <= 5 and l < k and 2 + i <= i' <= 1 + c + n \
        and 6 + c <= j' <= 7 + c + m and 2 <= k' <= -3 + n }";
    let f = farkas(&ctx, relation, context).unwrap().unwrap();
    assert_eq!(f.constraints.len(), 270);
    // The polyhedron's constraints as rows over (1, params, iterators).
    let set = Map::from_union_map(UnionMap::read_from_str(&ctx, relation).unwrap()).unwrap().wrap().unwrap();
    let list = set.get_basic_set_list().unwrap().get_at(0).unwrap().get_constraint_list().unwrap();
    let rows: Vec<(Vec<i64>, bool)> = (0..list.size().unwrap())
        .map(|k| {
            let c = list.get_at(k).unwrap();
            let mut row = vec![c.get_constant_val().unwrap().get_num_si().unwrap()];
            for (t, n) in [(DimType::Param, 4), (DimType::Set, 8)] {
                row.extend((0..n).map(|d| c.get_coefficient_val(t, d).unwrap().get_num_si().unwrap()));
            }
            (row, c.is_equality().unwrap())
        })
        .collect();
    let dot = |a: &[i64], b: &[i64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<i64>();
    for c in &f.constraints {
        // A vertex (t > 0, scaled) or a ray (t = 0) of the polyhedron.
        let v = &c.coeffs;
        assert!(!c.equality && v[0] >= 0, "{c:?}");
        for (row, eq) in &rows {
            let value = dot(row, v);
            assert!(if *eq { value == 0 } else { value >= 0 }, "{v:?} outside the polyhedron");
        }
        let tight: Vec<Vec<i64>> =
            rows.iter().filter(|(r, _)| dot(r, v) == 0).map(|(r, _)| r.clone()).collect();
        assert_eq!(space::linalg::rank(&tight, 13), 12, "{v:?} is not extreme");
    }
}
