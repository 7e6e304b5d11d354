//! Exact integer linear algebra for linear independence: the orthogonal
//! complement of the schedule rows found so far for a statement. Shared by
//! `schedule` (non-triviality, Farkas lineality) and `spatial` (access ranks),
//! so it sits below both.

/// An integer basis of `{ x : H x = 0 }` (the null space of the rows of `h`),
/// each vector divided by the gcd of its entries. `dims` is the row length.
pub fn null_space(h: &[Vec<i64>], dims: usize) -> Vec<Vec<i64>> {
    // Fraction-free Gaussian elimination to reduced row echelon form over i128.
    let mut m: Vec<Vec<i128>> = h.iter().map(|r| r.iter().map(|&v| v as i128).collect()).collect();
    let mut pivots = Vec::new();
    let mut row = 0;
    for col in 0..dims {
        let Some(p) = (row..m.len()).find(|&r| m[r][col] != 0) else { continue };
        m.swap(row, p);
        let pivot = m[row].clone();
        for (r, other) in m.iter_mut().enumerate() {
            if r != row && other[col] != 0 {
                let (a, b) = (pivot[col], other[col]);
                for (x, &p) in other.iter_mut().zip(&pivot).take(dims) {
                    *x = *x * a - p * b;
                }
                normalize(other);
            }
        }
        pivots.push(col);
        row += 1;
        if row == m.len() {
            break;
        }
    }
    let free: Vec<usize> = (0..dims).filter(|c| !pivots.contains(c)).collect();
    let mut basis = Vec::new();
    for &f in &free {
        // x_f = L (common multiple of the pivots), other free vars 0, pivot
        // vars solved from their rows.
        let l = pivots.iter().enumerate().fold(1i128, |acc, (r, &pc)| lcm(acc, m[r][pc].abs()));
        let mut x = vec![0i128; dims];
        x[f] = l;
        for (r, &pc) in pivots.iter().enumerate() {
            x[pc] = -m[r][f] * l / m[r][pc];
        }
        normalize(&mut x);
        basis.push(x.into_iter().map(|v| v as i64).collect());
    }
    basis
}

/// The rank of the rows of `h`.
pub fn rank(h: &[Vec<i64>], dims: usize) -> usize {
    dims - null_space(h, dims).len()
}

/// The dot product of two integer vectors of equal length.
pub fn dot(a: &[i64], b: &[i64]) -> i64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: i128, b: i128) -> i128 {
    if a == 0 || b == 0 {
        a.max(b)
    } else {
        a / gcd(a, b) * b
    }
}

fn normalize(v: &mut [i128]) {
    let g = v.iter().fold(0, |g, &x| gcd(g, x));
    if g > 1 {
        v.iter_mut().for_each(|x| *x /= g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[i64], b: &[i64]) -> i64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn null_space_is_orthogonal_and_completes_the_rank() {
        let cases: Vec<(Vec<Vec<i64>>, usize)> = vec![
            (vec![], 3),
            (vec![vec![1, 0, 0]], 3),
            (vec![vec![1, 1, 0], vec![0, 1, 1]], 3),
            (vec![vec![2, 4], vec![1, 2]], 2),
            (vec![vec![1, -1, 2, 0], vec![0, 3, 0, 1]], 4),
            (vec![vec![1, 0], vec![0, 1]], 2),
        ];
        for (h, dims) in cases {
            let n = null_space(&h, dims);
            for v in &n {
                assert!(v.iter().any(|&x| x != 0));
                for r in &h {
                    assert_eq!(dot(r, v), 0, "{h:?} {v:?}");
                }
            }
            // rank(H) + dim(null) = dims, and H plus the basis has full rank.
            let mut all = h.clone();
            all.extend(n.iter().cloned());
            assert_eq!(null_space(&all, dims).len(), 0, "{h:?} {n:?}");
        }
        assert_eq!(rank(&[vec![2, 4], vec![1, 2]], 2), 1);
    }
}
