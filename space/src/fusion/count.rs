//! Exact counts of preorders: Fubini numbers outgrow `u128` at 34 statements
//! (deriche has 47), so counts are small unsigned big integers.

use std::cmp::Ordering;
use std::fmt;

use rand::Rng;
use serde::{Serialize, Serializer};

/// An unsigned integer of any size: little-endian base-2³² limbs, no
/// trailing zero limb (zero is the empty vector).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Count(Vec<u32>);

impl Count {
    pub fn zero() -> Count {
        Count(Vec::new())
    }

    pub fn from_u64(v: u64) -> Count {
        let mut c = Count(vec![v as u32, (v >> 32) as u32]);
        c.trim();
        c
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub fn add(&self, other: &Count) -> Count {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(other.0.len()) {
            let s = *self.0.get(i).unwrap_or(&0) as u64 + *other.0.get(i).unwrap_or(&0) as u64 + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        out.push(carry as u32);
        let mut c = Count(out);
        c.trim();
        c
    }

    /// `self − other`; `None` when `other` is larger.
    pub fn checked_sub(&self, other: &Count) -> Option<Count> {
        if self < other {
            return None;
        }
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut d = self.0[i] as i64 - *other.0.get(i).unwrap_or(&0) as i64 - borrow;
            borrow = (d < 0) as i64;
            if d < 0 {
                d += 1 << 32;
            }
            out.push(d as u32);
        }
        let mut c = Count(out);
        c.trim();
        Some(c)
    }

    pub fn mul_small(&self, k: u32) -> Count {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u64;
        for &l in &self.0 {
            let p = l as u64 * k as u64 + carry;
            out.push(p as u32);
            carry = p >> 32;
        }
        out.push(carry as u32);
        let mut c = Count(out);
        c.trim();
        c
    }

    /// `(self / k, self % k)`.
    fn divmod_small(&self, k: u32) -> (Count, u32) {
        let mut out = vec![0u32; self.0.len()];
        let mut rem = 0u64;
        for i in (0..self.0.len()).rev() {
            let cur = (rem << 32) | self.0[i] as u64;
            out[i] = (cur / k as u64) as u32;
            rem = cur % k as u64;
        }
        let mut c = Count(out);
        c.trim();
        (c, rem as u32)
    }

    /// The value when it fits.
    pub fn to_u64(&self) -> Option<u64> {
        match self.0.len() {
            0 => Some(0),
            1 => Some(self.0[0] as u64),
            2 => Some(self.0[0] as u64 | (self.0[1] as u64) << 32),
            _ => None,
        }
    }

    pub fn to_f64(&self) -> f64 {
        self.0.iter().rev().fold(0.0, |acc, &l| acc * 4294967296.0 + l as f64)
    }

    /// A uniformly random value in `[0, self)` (rejection sampling on the
    /// bit length); `self` must not be zero.
    pub fn random_below<R: Rng + ?Sized>(&self, rng: &mut R) -> Count {
        assert!(!self.is_zero(), "random_below(0)");
        let top = *self.0.last().unwrap();
        let mask = u32::MAX >> top.leading_zeros();
        loop {
            let mut limbs: Vec<u32> = (0..self.0.len()).map(|_| rng.gen()).collect();
            *limbs.last_mut().unwrap() &= mask;
            let mut c = Count(limbs);
            c.trim();
            if c < *self {
                return c;
            }
        }
    }

    /// The number of total preorders (ordered set partitions) of `n`
    /// elements: Σₖ k!·S(n, k) with Stirling numbers of the second kind.
    pub fn fubini(n: usize) -> Count {
        // Row of S(m, k) for k = 0..=m.
        let mut row = vec![Count::from_u64(1)];
        for m in 1..=n {
            let mut next = vec![Count::zero(); m + 1];
            for k in 1..=m {
                let stay = row.get(k).map_or(Count::zero(), |s| s.mul_small(k as u32));
                next[k] = stay.add(&row[k - 1]);
            }
            row = next;
        }
        let mut total = Count::zero();
        let mut factorial = Count::from_u64(1);
        for (k, s) in row.iter().enumerate() {
            if k > 0 {
                factorial = factorial.mul_small(k as u32);
            }
            total = total.add(&s.mul(&factorial));
        }
        total
    }

    /// Schoolbook product.
    pub fn mul(&self, f: &Count) -> Count {
        let mut out = vec![0u64; self.0.len() + f.0.len() + 1];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in f.0.iter().enumerate() {
                let cur = out[i + j] + a as u64 * b as u64 + carry;
                out[i + j] = cur & 0xffff_ffff;
                carry = cur >> 32;
            }
            let mut k = i + f.0.len();
            while carry > 0 {
                let cur = out[k] + carry;
                out[k] = cur & 0xffff_ffff;
                carry = cur >> 32;
                k += 1;
            }
        }
        let mut c = Count(out.into_iter().map(|x| x as u32).collect());
        c.trim();
        c
    }
}

impl PartialOrd for Count {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Count {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut chunks = Vec::new();
        let mut cur = self.clone();
        while !cur.is_zero() {
            let (q, r) = cur.divmod_small(1_000_000_000);
            chunks.push(r);
            cur = q;
        }
        let mut s = chunks.pop().unwrap().to_string();
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        f.write_str(&s)
    }
}

/// Serialised as a decimal string: JSON numbers lose precision past 2⁵³.
impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fubini_numbers_match_the_known_sequence() {
        let known = [1u64, 1, 3, 13, 75, 541, 4683, 47293, 545835, 7087261, 102247563];
        for (n, k) in known.iter().enumerate() {
            assert_eq!(Count::fubini(n), Count::from_u64(*k), "n = {n}");
        }
        // a(20) of OEIS A000670.
        assert_eq!(Count::fubini(20).to_string(), "2677687796244384203115");
    }

    #[test]
    fn arithmetic_beyond_u64() {
        let big = Count::from_u64(u64::MAX).add(&Count::from_u64(u64::MAX));
        assert_eq!(big.to_string(), "36893488147419103230");
        assert_eq!(big.checked_sub(&Count::from_u64(u64::MAX)), Some(Count::from_u64(u64::MAX)));
        assert_eq!(Count::from_u64(3).checked_sub(&Count::from_u64(4)), None);
        assert!(big > Count::from_u64(u64::MAX));
    }
}
