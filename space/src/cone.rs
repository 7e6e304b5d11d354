//! The double description method (Motzkin's, as in Fukuda's cdd): the
//! extreme rays and lines of a polyhedral cone `{ z : A z ≥ 0, B z = 0 }`,
//! one constraint at a time, in exact integer arithmetic.
//!
//! The Farkas dual of a dependence polyhedron `P` is the cone whose
//! constraints are the generators of `P`'s homogenisation (its vertices,
//! rays and lines), so computing that dual is a conversion from constraints
//! to generators. isl computes it by Fourier-Motzkin elimination of the
//! Farkas multipliers instead, whose intermediate systems grow with the
//! products of positive and negative occurrences: on a dependence of a
//! generated program with 19 constraints in 12 dimensions, 40 s for a
//! polyhedron of 270 vertices, which this method enumerates in
//! milliseconds.

/// A cone's generators: `cone(rays) + span(lines)`, every vector divided by
/// the gcd of its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generators {
    pub rays: Vec<Vec<i64>>,
    pub lines: Vec<Vec<i64>>,
}

/// One constraint `row · z ≥ 0`, or `= 0` when `equality`.
#[derive(Debug, Clone)]
pub struct HalfSpace {
    pub row: Vec<i64>,
    pub equality: bool,
}

/// More extreme rays than this at any step: the conversion gives up
/// (`None`) rather than grow without bound; what it stops on is the size of
/// the description, not the time taken, so the answer does not depend on
/// the machine.
pub const MAX_RAYS: usize = 4096;

/// An extreme ray and the inequalities (by position) it makes tight.
struct Ray {
    v: Vec<i128>,
    zero: Vec<u64>,
}

/// The generators of `{ z ∈ Q^dim : every constraint }`; `None` when the
/// description outgrows [`MAX_RAYS`] or an entry outgrows 64 bits.
pub fn generators(dim: usize, constraints: &[HalfSpace]) -> Option<Generators> {
    // Equalities first: each one lowers the dimension before any ray exists.
    let order: Vec<&HalfSpace> =
        constraints.iter().filter(|c| c.equality).chain(constraints.iter().filter(|c| !c.equality)).collect();
    let words = order.len().div_ceil(64).max(1);
    let mut lines: Vec<Vec<i128>> =
        (0..dim).map(|i| (0..dim).map(|j| i128::from(i == j)).collect()).collect();
    let mut rays: Vec<Ray> = Vec::new();
    for (k, c) in order.iter().enumerate() {
        let a: Vec<i128> = c.row.iter().map(|&x| x as i128).collect();
        let dot = |v: &[i128]| -> Option<i128> {
            v.iter().zip(&a).try_fold(0i128, |s, (x, y)| s.checked_add(x.checked_mul(*y)?))
        };
        let mut values = Vec::with_capacity(lines.len());
        for l in &lines {
            values.push(dot(l)?);
        }
        if let Some(at) = values.iter().position(|&v| v != 0) {
            // A line leaves the hyperplane: the other generators are moved
            // into it along that line, which becomes a ray (or goes, for an
            // equality). Every generator then lies on the hyperplane.
            let mut l = lines.swap_remove(at);
            let mut al = values.swap_remove(at);
            if al < 0 {
                l.iter_mut().for_each(|x| *x = -*x);
                al = -al;
            }
            for (m, am) in lines.iter_mut().zip(values) {
                if am != 0 {
                    *m = combine(al, m, -am, &l)?;
                }
            }
            for r in &mut rays {
                let ar = dot(&r.v)?;
                if ar != 0 {
                    r.v = combine(al, &r.v, -ar, &l)?;
                }
                if !c.equality {
                    set(&mut r.zero, k);
                }
            }
            if !c.equality {
                // A line lies on every earlier hyperplane.
                let mut zero = vec![0u64; words];
                (0..k).filter(|&j| !order[j].equality).for_each(|j| set(&mut zero, j));
                rays.push(Ray { v: l, zero });
            }
            continue;
        }
        let mut signs = Vec::with_capacity(rays.len());
        for r in &rays {
            signs.push(dot(&r.v)?.signum());
        }
        let mut added = Vec::new();
        for p in (0..rays.len()).filter(|&p| signs[p] > 0) {
            for n in (0..rays.len()).filter(|&n| signs[n] < 0) {
                if !adjacent(&rays, p, n) {
                    continue;
                }
                let (ap, an) = (dot(&rays[p].v)?, dot(&rays[n].v)?);
                let v = combine(ap, &rays[n].v, -an, &rays[p].v)?;
                let mut zero: Vec<u64> = rays[p].zero.iter().zip(&rays[n].zero).map(|(x, y)| x & y).collect();
                set(&mut zero, k);
                added.push(Ray { v, zero });
                if rays.len() + added.len() > MAX_RAYS {
                    return None;
                }
            }
        }
        let mut kept = Vec::with_capacity(rays.len() + added.len());
        for (mut r, s) in rays.into_iter().zip(signs) {
            if s == 0 {
                if !c.equality {
                    set(&mut r.zero, k);
                }
                kept.push(r);
            } else if s > 0 && !c.equality {
                kept.push(r);
            }
        }
        kept.extend(added);
        rays = kept;
    }
    let narrow = |v: Vec<i128>| v.into_iter().map(i64::try_from).collect::<Result<Vec<_>, _>>().ok();
    Some(Generators {
        rays: rays.into_iter().map(|r| narrow(r.v)).collect::<Option<_>>()?,
        lines: lines.into_iter().map(narrow).collect::<Option<_>>()?,
    })
}

/// Extreme rays `p` and `n` are adjacent when no third one is tight on
/// every constraint both are tight on (the combinatorial test; exact while
/// `rays` holds the extreme rays only, and the lines lie on every
/// hyperplane so far, as they do here).
fn adjacent(rays: &[Ray], p: usize, n: usize) -> bool {
    let common: Vec<u64> = rays[p].zero.iter().zip(&rays[n].zero).map(|(x, y)| x & y).collect();
    !rays
        .iter()
        .enumerate()
        .any(|(r, ray)| r != p && r != n && ray.zero.iter().zip(&common).all(|(z, c)| z & c == *c))
}

/// `x·u + y·v`, divided by the gcd of its entries.
fn combine(x: i128, u: &[i128], y: i128, v: &[i128]) -> Option<Vec<i128>> {
    let mut w = Vec::with_capacity(u.len());
    for (a, b) in u.iter().zip(v) {
        w.push(x.checked_mul(*a)?.checked_add(y.checked_mul(*b)?)?);
    }
    let mut g = 0;
    for e in &w {
        g = gcd(g, e.checked_abs()?);
    }
    if g > 1 {
        w.iter_mut().for_each(|e| *e /= g);
    }
    Some(w)
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn set(bits: &mut [u64], k: usize) {
    bits[k / 64] |= 1 << (k % 64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ineq(row: &[i64]) -> HalfSpace {
        HalfSpace { row: row.to_vec(), equality: false }
    }

    fn sorted(mut v: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
        v.sort();
        v
    }

    #[test]
    fn the_positive_quadrant_is_spanned_by_its_axes() {
        let g = generators(2, &[ineq(&[1, 0]), ineq(&[0, 1])]).unwrap();
        assert!(g.lines.is_empty());
        assert_eq!(sorted(g.rays), vec![vec![0, 1], vec![1, 0]]);
    }

    #[test]
    fn a_half_plane_keeps_a_line() {
        let g = generators(2, &[ineq(&[1, -1])]).unwrap();
        assert_eq!(g.rays.len(), 1);
        assert_eq!(g.lines.len(), 1);
        // The line lies on x = y, the ray points into x > y.
        let (l, r) = (&g.lines[0], &g.rays[0]);
        assert_eq!(l[0], l[1]);
        assert!(r[0] - r[1] > 0);
    }

    /// The cone over a square `{ (t, x, y) : 0 ≤ x, y ≤ t }` has the four
    /// corners as extreme rays; an equality `x = y` leaves the diagonal's
    /// two ends.
    #[test]
    fn the_cone_over_a_square_has_its_corners() {
        let square = [ineq(&[0, 1, 0]), ineq(&[0, 0, 1]), ineq(&[1, -1, 0]), ineq(&[1, 0, -1])];
        let g = generators(3, &square).unwrap();
        assert!(g.lines.is_empty());
        assert_eq!(sorted(g.rays), vec![vec![1, 0, 0], vec![1, 0, 1], vec![1, 1, 0], vec![1, 1, 1]]);
        let mut diagonal = square.to_vec();
        diagonal.push(HalfSpace { row: vec![0, 1, -1], equality: true });
        let g = generators(3, &diagonal).unwrap();
        assert_eq!(sorted(g.rays), vec![vec![1, 0, 0], vec![1, 1, 1]]);
    }

    /// Every ray found satisfies every constraint, and each is extreme: the
    /// constraints tight on it have rank `dim − 1` (a pointed cone), checked
    /// on the cube's cone in four dimensions, whose corners are 8 rays.
    #[test]
    fn the_rays_of_a_cube_are_its_eight_corners() {
        let mut cube = Vec::new();
        for i in 1..4 {
            let mut lo = vec![0; 4];
            lo[i] = 1;
            let mut hi = vec![0; 4];
            hi[0] = 1;
            hi[i] = -1;
            cube.push(ineq(&lo));
            cube.push(ineq(&hi));
        }
        let g = generators(4, &cube).unwrap();
        assert_eq!(g.rays.len(), 8);
        for r in &g.rays {
            assert_eq!(r[0], 1);
            let tight: Vec<Vec<i64>> =
                cube.iter().filter(|c| crate::linalg::dot(&c.row, r) == 0).map(|c| c.row.clone()).collect();
            assert!(cube.iter().all(|c| crate::linalg::dot(&c.row, r) >= 0));
            assert_eq!(crate::linalg::rank(&tight, 4), 3, "{r:?}");
        }
    }

    #[test]
    fn an_empty_polyhedron_homogenises_to_the_origin() {
        // { (t, x) : t ≥ 0, x − t ≥ 0, −x ≥ 0 }: only t = x = 0.
        let g = generators(2, &[ineq(&[1, 0]), ineq(&[-1, 1]), ineq(&[0, -1])]).unwrap();
        assert!(g.rays.is_empty() && g.lines.is_empty());
    }
}
