//! Farkas' lemma: the affine forms that are non-negative on a dependence
//! relation, as linear constraints on their coefficients.
//!
//! For the wrapped relation `[S[x] -> T[y]]`, these are the constraints of
//! the (rational) cone of `(c_cst, c_params, c_x, c_y)` such that
//! `c_cst + c_params·p + c_x·x + c_y·y >= 0` on every point: the dual of
//! the dependence polyhedron. Its constraints are the polyhedron's
//! generators, found by double description (`cone`); isl's
//! `isl_set_coefficients`, which eliminates the Farkas multipliers by
//! Fourier-Motzkin, is the fallback where that description grows too large.
//! The two differ where a piece's equalities have no integer solution at
//! some rational points (`2j = n − 1` with `n >= 0`: isl first compresses
//! onto the integer solutions, so `n >= 1`): the double description's cone
//! is then the smaller, the dual of a larger set, so every form it admits
//! is still valid.

use std::collections::HashSet;

use isl_rs::{Context, DimType, Map, Set, UnionMap};

use crate::cone::{self, HalfSpace};
use crate::linalg::null_space;
use model::isl::{IslError, IslResultExt};

/// `Σ coeffs[k]·slot[k] + constant (= | >=) 0` where the slots are, in order,
/// the constant term, one per parameter, one per source dimension and one per
/// sink dimension of the affine form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotConstraint {
    pub coeffs: Vec<i64>,
    pub constant: i64,
    pub equality: bool,
}

/// The non-negative affine forms on one dependence relation.
#[derive(Debug, Clone)]
pub struct Farkas {
    pub n_params: usize,
    pub n_src: usize,
    pub n_dst: usize,
    pub constraints: Vec<SlotConstraint>,
}

impl Farkas {
    pub fn n_slots(&self) -> usize {
        1 + self.n_params + self.n_src + self.n_dst
    }

    /// The forms that vanish on the relation (zero dependence distance, the
    /// coincidence condition), as independent equalities: `F ∩ −F` for the
    /// cone `F = { σ : Aσ ≥ 0, Bσ = 0 }` is `{ σ : Aσ = 0, Bσ = 0 }`, whose
    /// row space `null_space` of its `null_space` spans. Stating both signs
    /// as inequalities instead gives CBC hundreds of rows that are implicit
    /// equalities (adi: 672 of 1162), which its branch and bound cannot
    /// eliminate. `None` when some constraint is not homogeneous (not a cone).
    pub fn vanishing(&self) -> Option<Farkas> {
        if self.constraints.iter().any(|c| c.constant != 0) {
            return None;
        }
        let n = self.n_slots();
        let rows: Vec<Vec<i64>> = self.constraints.iter().map(|c| c.coeffs.clone()).collect();
        let constraints = null_space(&null_space(&rows, n), n)
            .into_iter()
            .map(|coeffs| SlotConstraint { coeffs, constant: 0, equality: true })
            .collect();
        Some(Farkas { constraints, ..self.clone() })
    }
}

/// The Farkas constraints of `relation` (restricted to the parameter
/// `context`); `None` when the relation is empty (every form is non-negative).
pub fn farkas(ctx: &Context, relation: &str, context: &str) -> Result<Option<Farkas>, IslError> {
    let what = || format!("Farkas coefficients of {relation}");
    let params = Set::read_from_str(ctx, context).ctx(what)?;
    // Parameter slots follow the context's parameter order (the SCoP's).
    let model = params.get_space().ctx(what)?;
    let rel = UnionMap::read_from_str(ctx, relation)
        .ctx(what)?
        .align_params(model)
        .ctx(what)?
        .intersect_params(params)
        .ctx(what)?;
    if rel.is_empty().ctx(what)? {
        return Ok(None);
    }
    // Integer divisions (a modulo time index: `(t + t') mod 2 = 0`) have no
    // Farkas dual; projecting them out rationally, as isl's own scheduler
    // does, over-approximates the relation, which keeps every form found
    // valid on the exact one. Legality is checked afterwards on the exact
    // dependences.
    let rel = rel.remove_divs().ctx(what)?;
    if let Some(f) = intra(&rel).ctx(what)? {
        return Ok(Some(f));
    }
    wrapped(rel, relation)
}

/// The dual of the wrapped relation `[S[x] -> T[y]]` (`relation`: its text,
/// for errors).
fn wrapped(rel: UnionMap, relation: &str) -> Result<Option<Farkas>, IslError> {
    let what = || format!("Farkas coefficients of {relation}");
    if rel.n_map().ctx(what)? != 1 {
        return Err(IslError { what: what(), message: "expected one coefficient space".into() });
    }
    let map = Map::from_union_map(rel).ctx(what)?;
    let n_params = map.dim(DimType::Param).ctx(what)? as usize;
    let n_src = map.dim(DimType::In).ctx(what)? as usize;
    let n_dst = map.dim(DimType::Out).ctx(what)? as usize;
    let set = map.wrap().ctx(what)?;
    let constraints = dual(set)
        .ctx(what)?
        .ok_or_else(|| IslError { what: what(), message: "coefficient set with integer divisions".into() })?;
    if let Some(c) = constraints.iter().find(|c| c.coeffs.len() != 1 + n_params + n_src + n_dst) {
        return Err(IslError {
            what: what(),
            message: format!("unexpected coefficient space of {} dimensions", c.coeffs.len()),
        });
    }
    Ok(Some(Farkas { n_params, n_src, n_dst, constraints }))
}

/// The constraints on `(c_cst, c_params, c_set)` of the forms non-negative
/// on `set`: its generators, or isl's dual where they outgrow
/// [`cone::MAX_RAYS`]; `None` where isl's has integer divisions.
fn dual(set: Set) -> Result<Option<Vec<SlotConstraint>>, isl_rs::LibISLError> {
    match generated(&set)? {
        Some(constraints) => Ok(Some(constraints)),
        None => isl_dual(set),
    }
}

/// The constraints on `(c_cst, c_params, c_set)` of the forms non-negative
/// on `set` (without integer divisions): one double description per piece,
/// the dual of a union being the intersection of its pieces' duals. `None`
/// when some piece's description outgrows [`cone::MAX_RAYS`] (or has
/// integer divisions, which `farkas` removes first).
fn generated(set: &Set) -> Result<Option<Vec<SlotConstraint>>, isl_rs::LibISLError> {
    let (np, nd) = (set.dim(DimType::Param)? as usize, set.dim(DimType::Set)? as usize);
    let pieces = set.get_basic_set_list()?;
    let mut constraints = Vec::new();
    let mut seen = HashSet::new();
    for b in 0..pieces.size()? {
        let piece = pieces.get_at(b)?;
        if piece.dim(DimType::Div)? > 0 {
            return Ok(None);
        }
        // The homogenisation `{ (t, p, x) : t ≥ 0, b t + A (p, x) ≥ 0 }`:
        // its generators are the valid forms' constraints.
        let mut rows = vec![HalfSpace { row: unit(1 + np + nd, 0), equality: false }];
        let list = piece.get_constraint_list()?;
        for k in 0..list.size()? {
            let c = list.get_at(k)?;
            let mut row = vec![int(c.get_constant_val()?)?];
            for d in 0..np {
                row.push(int(c.get_coefficient_val(DimType::Param, d as i32)?)?);
            }
            for d in 0..nd {
                row.push(int(c.get_coefficient_val(DimType::Set, d as i32)?)?);
            }
            rows.push(HalfSpace { row, equality: c.is_equality()? });
        }
        let Some(g) = cone::generators(1 + np + nd, &rows) else { return Ok(None) };
        let forms = g.rays.into_iter().map(|r| (r, false)).chain(g.lines.into_iter().map(|l| (l, true)));
        for (coeffs, equality) in forms {
            if seen.insert((coeffs.clone(), equality)) {
                constraints.push(SlotConstraint { coeffs, constant: 0, equality });
            }
        }
    }
    Ok(Some(constraints))
}

/// isl's own dual (Fourier-Motzkin on the Farkas multipliers), for a set
/// whose double description was given up; `None` if it has integer
/// divisions.
fn isl_dual(set: Set) -> Result<Option<Vec<SlotConstraint>>, isl_rs::LibISLError> {
    let coef = set.coefficients()?;
    if coef.dim(DimType::Div)? > 0 {
        return Ok(None);
    }
    let n = coef.dim(DimType::Set)? as usize;
    let cons = coef.get_constraint_list()?;
    let mut constraints = Vec::new();
    for k in 0..cons.size()? {
        let c = cons.get_at(k)?;
        let mut coeffs = Vec::with_capacity(n);
        for d in 0..n {
            coeffs.push(int(c.get_coefficient_val(DimType::Set, d as i32)?)?);
        }
        let constant = int(c.get_constant_val()?)?;
        constraints.push(SlotConstraint { coeffs, constant, equality: c.is_equality()? });
    }
    Ok(Some(constraints))
}

fn unit(n: usize, at: usize) -> Vec<i64> {
    (0..n).map(|i| i64::from(i == at)).collect()
}

/// A relation from a statement to itself through the dual of its distances
/// `delta R = { y − x }`, as isl's scheduler computes it: the schedule's
/// distance on such a relation is a form of `y − x` alone, and the dual of
/// the deltas has half the dimensions of the wrapped relation's (a
/// reduction over a depth-8 nest: 8 instead of 16, which cut its
/// Fourier-Motzkin eliminations from most of the scheduler's time). The
/// constraints are on `(c_cst, c_params, c_d)`; in the slot layout, `c_d`
/// stands on the sink's slots and the source's are zero, which is exact
/// for the forms the scheduler asks about here, whose source slots are the
/// sink's negated. `None` for a relation between two statements.
fn intra(rel: &UnionMap) -> Result<Option<Farkas>, isl_rs::LibISLError> {
    if rel.n_map()? != 1 {
        return Ok(None);
    }
    let map = isl_rs::Map::from_union_map(rel.copy()?)?;
    let same = map.get_tuple_name(DimType::In).ok() == map.get_tuple_name(DimType::Out).ok()
        && map.dim(DimType::In)? == map.dim(DimType::Out)?;
    if !same || map.get_tuple_name(DimType::In).is_err() {
        return Ok(None);
    }
    let n_params = map.dim(DimType::Param)? as usize;
    let dims = map.dim(DimType::In)? as usize;
    // Projecting x out of (x, y − x) leaves existentials: dropped, as above.
    let deltas = map.deltas()?.remove_divs()?;
    let Some(duals) = dual(deltas)? else { return Ok(None) };
    let mut constraints = Vec::new();
    for c in duals {
        if c.coeffs.len() != 1 + n_params + dims {
            return Ok(None);
        }
        let mut coeffs = vec![0; 1 + n_params + 2 * dims];
        for (d, a) in c.coeffs.into_iter().enumerate() {
            coeffs[if d < 1 + n_params { d } else { d + dims }] = a;
        }
        constraints.push(SlotConstraint { coeffs, ..c });
    }
    Ok(Some(Farkas { n_params, n_src: dims, n_dst: dims, constraints }))
}

fn int(v: isl_rs::Val) -> Result<i64, isl_rs::LibISLError> {
    // isl states every constraint with integer coefficients.
    v.get_num_si()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a form against the constraints by plain arithmetic.
    fn admits(f: &Farkas, slots: &[i64]) -> bool {
        f.constraints.iter().all(|c| {
            let v: i64 = c.coeffs.iter().zip(slots).map(|(a, b)| a * b).sum::<i64>() + c.constant;
            if c.equality {
                v == 0
            } else {
                v >= 0
            }
        })
    }

    #[test]
    fn forward_dependence_admits_the_identity_and_rejects_reversal() {
        let ctx = model::isl::new_context();
        let f = farkas(&ctx, "[n] -> { S[i] -> S[i'] : 0 <= i < i' < n }", "[n] -> { : n >= 0 }")
            .unwrap()
            .unwrap();
        assert_eq!((f.n_params, f.n_src, f.n_dst), (1, 1, 1));
        // phi(i) = i: distance i' - i >= 0 -> slots (cst 0, n 0, x -1, y 1).
        assert!(admits(&f, &[0, 0, -1, 1]));
        // phi(i) = -i: distance i - i' < 0.
        assert!(!admits(&f, &[0, 0, 1, -1]));
        // distance i' - i - 1 >= 0 also holds (strict order).
        assert!(admits(&f, &[-1, 0, -1, 1]));
        assert!(!admits(&f, &[-2, 0, -1, 1]));
    }

    #[test]
    fn vanishing_forms_are_those_of_zero_distance() {
        let ctx = model::isl::new_context();
        // S[i] -> T[i + 1], 0 <= i < n - 1: slots (cst, n, x, y). (Between
        // two statements: the dual of the wrapped relation, which admits
        // forms of x and y apart.)
        let f = farkas(&ctx, "[n] -> { S[i] -> T[i + 1] : 0 <= i < n - 1 }", "[n] -> { : n >= 2 }")
            .unwrap()
            .unwrap();
        let zero = f.vanishing().unwrap();
        assert!(zero.constraints.iter().all(|c| c.equality && c.constant == 0));
        // Brute force over small slot values: vanishing exactly when both the
        // form and its negation are admitted, i.e. c_y = −c_x and cst = −c_y
        // with no parameter term.
        let r = -2..=2;
        for cst in r.clone() {
            for p in r.clone() {
                for x in r.clone() {
                    for y in r.clone() {
                        let s = [cst, p, x, y];
                        let neg = [-cst, -p, -x, -y];
                        let expected = admits(&f, &s) && admits(&f, &neg);
                        assert_eq!(admits(&zero, &s), expected, "{s:?}");
                        assert_eq!(expected, p == 0 && y == -x && cst == -y, "{s:?}");
                    }
                }
            }
        }
    }

    /// The dual of the distances admits exactly the forms of `y − x` that
    /// the dual of the wrapped relation admits (brute force over small
    /// coefficients, on a lexicographic order, a stencil-like relation and
    /// one with parameters in its bounds).
    #[test]
    fn a_self_dependence_through_its_distances_admits_what_the_relation_does() {
        let ctx = model::isl::new_context();
        let context = "[n] -> { : n >= 0 }";
        for relation in [
            "[n] -> { S[i, j] -> S[i', j'] : 0 <= i, j, i', j' < 3 and (i' > i or (i' = i and j' > j)) }",
            "[n] -> { S[t, i] -> S[t + 1, i'] : 0 <= t < n and 1 <= i < n - 1 and i - 1 <= i' <= i + 1 }",
            "[n] -> { S[i, j] -> S[i + 1, j - 1] : 0 <= i < n and 1 <= j < n }",
        ] {
            let read = || {
                let model = Set::read_from_str(&ctx, context).unwrap().get_space().unwrap();
                UnionMap::read_from_str(&ctx, relation).unwrap().align_params(model).unwrap()
            };
            let by_deltas = intra(&read()).unwrap().expect("a self-dependence");
            let full = wrapped(read(), relation).unwrap().unwrap();
            let r = -2..=2;
            for cst in r.clone() {
                for p in r.clone() {
                    for a in r.clone() {
                        for b in r.clone() {
                            let s = [cst, p, -a, -b, a, b];
                            assert_eq!(admits(&by_deltas, &s), admits(&full, &s), "{relation}: {s:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn empty_relation_has_no_constraints() {
        let ctx = model::isl::new_context();
        let f = farkas(&ctx, "[n] -> { S[i] -> S[i'] : 0 <= i < i' < n and n < 0 }", "[n] -> { : n >= 0 }")
            .unwrap();
        assert!(f.is_none());
    }
}
