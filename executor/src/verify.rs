//! Verification: a variant's outputs compared with the original's, element
//! by element, within a tolerance that knows the original's rounding noise.
//!
//! Floats are compared with a relative tolerance ([`Tolerance`]), everything
//! else exactly. Some outputs are not results but rounding noise: the last
//! columns of a Gram-Schmidt factorisation of a matrix with more columns than
//! rows, a sum that cancels. Their digits change with any change of
//! evaluation order, a variant's as well as a compiler's. So before variants
//! are compared, the original is built a second (and third) way that changes
//! only the evaluation order the compiler may choose ([`probes`]: FMA
//! contraction flipped, reassociation allowed) and its outputs compared with
//! the original's ([`NoiseModel::add_probe`]). In an array where builds of the
//! same program disagree, an element is accepted when it is within the
//! relative tolerance of the array's largest magnitude (any element), within
//! [`NOISE_FACTOR`] times the largest disagreement (an element the builds
//! disagreed on), or finite (an element they agreed on no digit of,
//! [`NO_DIGIT`]); arrays where the builds agree are compared as before. A variant that breaks a dependence changes results, not only
//! noise, and is still `wrong`.

use crate::runtime::DumpedArray;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use vocab::rounding::{ArrayNoise, RoundingNoise};

/// How close a variant's floating-point outputs must be to the reference's.
///
/// Reordered floating-point arithmetic (tiling, fusion, parallel reductions)
/// legitimately changes the last digits, so the default allows a tight relative
/// error; integers and unknown types are always compared exactly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Largest accepted `|a-b| / max(|a|,|b|)`. `0.0` means bitwise equality.
    pub relative: f64,
}

impl Tolerance {
    /// Bitwise equality (`-0.0 != 0.0`, NaN payloads must agree).
    pub const BITWISE: Tolerance = Tolerance { relative: 0.0 };
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { relative: 1e-9 }
    }
}

/// The result of comparing a variant's dump with the reference's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Match,
    /// The first difference found, in reference dump order.
    Mismatch {
        array: String,
        /// Flat element index (or byte index for types compared as bytes);
        /// `None` when the difference is not elementwise (missing array, size...).
        index: Option<usize>,
        expected: String,
        got: String,
        /// Why these differ, with the count of differing elements when elementwise.
        reason: String,
    },
}

impl Verdict {
    pub fn is_match(&self) -> bool {
        matches!(self, Verdict::Match)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Match => write!(f, "outputs match"),
            Verdict::Mismatch { array, index: Some(i), expected, got, reason } => {
                write!(f, "`{array}`[{i}]: expected {expected}, got {got} ({reason})")
            }
            Verdict::Mismatch { array, index: None, expected, got, reason } => {
                write!(f, "`{array}`: expected {expected}, got {got} ({reason})")
            }
        }
    }
}

/// How an element type's bytes are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    F32,
    F64,
    /// x87 80-bit extended precision stored in 16 bytes (`long double` on x86-64).
    F80,
    Int {
        size: usize,
        signed: bool,
    },
    Bytes,
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::F32 => 4,
            Kind::F64 => 8,
            Kind::F80 => 16,
            Kind::Int { size, .. } => size,
            Kind::Bytes => 1,
        }
    }
}

/// The first element of `dump` that is a NaN or an infinity, as
/// `name[index] = value`: a driver's generated inputs must keep a region's
/// arithmetic finite.
pub fn first_non_finite(dump: &[DumpedArray]) -> Option<String> {
    for a in dump {
        let kind = kind_of(&a.elem_type);
        if !matches!(kind, Kind::F32 | Kind::F64 | Kind::F80) {
            continue;
        }
        for (i, b) in a.data.chunks_exact(kind.size()).enumerate() {
            if let Value::F(x, _) = decode(kind, b) {
                if !x.is_finite() {
                    return Some(format!("{}[{i}] = {x}", a.name));
                }
            }
        }
    }
    None
}

/// Maps C type text to a comparison kind (LP64 sizes). `_Complex` types are
/// compared as pairs of their real type. Anything unknown compares bytewise.
fn kind_of(ty: &str) -> Kind {
    let words: Vec<&str> = ty
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict" | "__restrict__"))
        .filter(|w| !matches!(*w, "_Complex" | "complex" | "__complex__"))
        .collect();
    let unsigned = words.contains(&"unsigned");
    let core: Vec<&str> = words.iter().copied().filter(|w| !matches!(*w, "signed" | "unsigned")).collect();
    let has = |w: &str| core.contains(&w);
    let int = |size: usize| Kind::Int { size, signed: !unsigned };
    match core.as_slice() {
        ["float"] => Kind::F32,
        ["double"] => Kind::F64,
        ["long", "double"] if cfg!(target_arch = "x86_64") => Kind::F80,
        [] | ["int"] => int(4),
        ["char"] => int(1),
        ["_Bool"] | ["bool"] => Kind::Int { size: 1, signed: false },
        _ if has("short") => int(2),
        _ if has("long") && !has("double") => int(8),
        ["int8_t"] => Kind::Int { size: 1, signed: true },
        ["uint8_t"] => Kind::Int { size: 1, signed: false },
        ["int16_t"] => Kind::Int { size: 2, signed: true },
        ["uint16_t"] => Kind::Int { size: 2, signed: false },
        ["int32_t"] => Kind::Int { size: 4, signed: true },
        ["uint32_t"] => Kind::Int { size: 4, signed: false },
        ["int64_t"] | ["ssize_t"] | ["ptrdiff_t"] | ["intptr_t"] => Kind::Int { size: 8, signed: true },
        ["uint64_t"] | ["size_t"] | ["uintptr_t"] => Kind::Int { size: 8, signed: false },
        _ => Kind::Bytes,
    }
}

/// A decoded element, for comparing and printing.
#[derive(Clone, Copy)]
enum Value {
    F(f64, u128),
    I(i128),
    B(u8),
}

fn decode(kind: Kind, b: &[u8]) -> Value {
    match kind {
        Kind::F32 => {
            let bits = u32::from_le_bytes(b.try_into().unwrap());
            Value::F(f32::from_bits(bits) as f64, bits as u128)
        }
        Kind::F64 => {
            let bits = u64::from_le_bytes(b.try_into().unwrap());
            Value::F(f64::from_bits(bits), bits as u128)
        }
        Kind::F80 => {
            // Only the low 10 bytes are significant; the rest is padding.
            let mut ten = [0u8; 16];
            ten[..10].copy_from_slice(&b[..10]);
            let bits = u128::from_le_bytes(ten);
            Value::F(f80_to_f64(&b[..10]), bits)
        }
        Kind::Int { size, signed } => {
            let mut buf = [0u8; 16];
            buf[..size].copy_from_slice(b);
            let neg = signed && b[size - 1] & 0x80 != 0;
            if neg {
                buf[size..].fill(0xff);
            }
            Value::I(i128::from_le_bytes(buf))
        }
        Kind::Bytes => Value::B(b[0]),
    }
}

/// Converts an x87 extended-precision value to the nearest f64 (enough for a
/// relative-tolerance comparison; bitwise mode compares the raw bits instead).
fn f80_to_f64(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap());
    let se = u16::from_le_bytes(b[8..10].try_into().unwrap());
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (se & 0x7fff) as i32;
    if exp == 0x7fff {
        return if mant << 1 == 0 { sign * f64::INFINITY } else { f64::NAN };
    }
    let frac = mant as f64 / (1u64 << 63) as f64;
    let e = if exp == 0 { -16382 } else { exp - 16383 };
    sign * frac * 2f64.powi(e)
}

fn show(v: Value) -> String {
    match v {
        Value::F(x, _) => format!("{x:e}"),
        Value::I(i) => i.to_string(),
        Value::B(b) => format!("0x{b:02x}"),
    }
}

/// `Ok(())` when equal under `tol`, else why not.
fn element_eq(a: Value, b: Value, tol: Tolerance) -> Result<(), String> {
    match (a, b) {
        (Value::F(x, xb), Value::F(y, yb)) => {
            if tol.relative <= 0.0 {
                return if xb == yb { Ok(()) } else { Err("bitwise comparison".to_string()) };
            }
            if x == y || (x.is_nan() && y.is_nan()) {
                return Ok(());
            }
            let err = (x - y).abs() / x.abs().max(y.abs());
            if err <= tol.relative {
                Ok(())
            } else if err.is_nan() {
                Err("one value is NaN or infinite".to_string())
            } else {
                Err(format!("relative error {err:.3e} > tolerance {:.1e}", tol.relative))
            }
        }
        (Value::I(x), Value::I(y)) if x == y => Ok(()),
        (Value::B(x), Value::B(y)) if x == y => Ok(()),
        _ => Err("exact comparison".to_string()),
    }
}

/// The extra flags of the builds that probe an original's rounding noise,
/// given the compiler's own flags: FMA contraction the other way round, then
/// reassociation (which vectorises reductions, as a reordered variant sums).
pub fn probes(flags: &[String]) -> Vec<Vec<String>> {
    let contraction = if flags.iter().any(|f| f == "-ffp-contract=off") {
        "-ffp-contract=fast"
    } else {
        "-ffp-contract=off"
    };
    vec![
        vec![contraction.to_string()],
        ["-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math"].map(String::from).to_vec(),
    ]
}

/// How many times the largest disagreement between two builds of the original
/// a noisy element may differ by: a variant draws its noise from the same
/// distribution, and two draws may lie further apart than the two seen.
pub const NOISE_FACTOR: f64 = 4.0;

/// A relative disagreement at least this large means the builds agree on no
/// digit of the element (a factor of two, or the sign): its value is not a
/// result at all, and any finite value is as good. Noise on noise (a sum of
/// squared residuals) spans orders of magnitude between builds, so no factor
/// of the disagreement seen would bound it.
pub const NO_DIGIT: f64 = 0.5;

/// The share of an array's elements a probe must disagree on for its noise
/// to be the array's, not only theirs: where the builds disagree on most
/// elements (a recurrence that carries each element's rounding into the
/// next, as durbin's), the few they happened to agree on are draws of the
/// same noise, and a third build differs there too.
pub const PERVASIVE: f64 = 0.5;

/// Which elements of which arrays are rounding noise, and how large it is.
#[derive(Debug, Clone, Default)]
pub struct NoiseModel {
    arrays: HashMap<(String, usize), NoisyArray>,
    /// What is stored and printed.
    pub summary: RoundingNoise,
}

/// One bit per element of an array.
#[derive(Debug, Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(elements: usize) -> Bits {
        Bits(vec![0; elements.div_ceil(64)])
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    /// Sets bit `i`; whether it was clear.
    fn set(&mut self, i: usize) -> bool {
        let was = self.get(i);
        self.0[i / 64] |= 1 << (i % 64);
        !was
    }
}

#[derive(Debug, Clone)]
struct NoisyArray {
    /// Elements a build disagreed with the original on, beyond the tolerance.
    noisy: Bits,
    /// Those of them on which it agreed on no digit ([`NO_DIGIT`]).
    free: Bits,
    counts: (u64, u64),
    elements: usize,
    /// The largest disagreement (infinite where a build's value was not finite).
    largest: f64,
    magnitude: f64,
}

impl NoisyArray {
    fn new(elements: usize) -> NoisyArray {
        NoisyArray {
            noisy: Bits::new(elements),
            free: Bits::new(elements),
            counts: (0, 0),
            elements,
            largest: 0.0,
            magnitude: 0.0,
        }
    }

    /// Marks element `i`, where the original wrote `x` and a build `y`.
    fn mark(&mut self, i: usize, x: f64, y: f64) {
        let d = (x - y).abs();
        self.counts.0 += self.noisy.set(i) as u64;
        // NaN (an infinity on either side) agrees on no digit either.
        let relative = d / x.abs().max(y.abs());
        if relative.is_nan() || relative >= NO_DIGIT {
            self.counts.1 += self.free.set(i) as u64;
        }
        self.largest = if d.is_finite() { self.largest.max(d) } else { f64::INFINITY };
    }

    /// Whether `x` (the original's) and `y` (a variant's) at element `i`
    /// differ by no more than this array's noise allows.
    fn admits(&self, i: usize, x: f64, y: f64, tol: Tolerance) -> bool {
        let d = (x - y).abs();
        if d <= tol.relative * self.magnitude {
            return true;
        }
        if self.free.get(i) {
            return y.is_finite() || self.largest == f64::INFINITY;
        }
        let pervasive = self.counts.0 as f64 >= PERVASIVE * self.elements as f64;
        (pervasive || self.noisy.get(i)) && d <= NOISE_FACTOR * self.largest
    }
}

impl NoiseModel {
    /// Adds what a build of the original made with `flags` wrote (`probe`)
    /// against what the original wrote (`reference`): every float element
    /// that differs beyond `tol` is noise. Arrays that do not pair up
    /// (missing, another type or size) add nothing: the probe is no
    /// evidence about them.
    pub fn add_probe(
        &mut self,
        flags: &str,
        reference: &[DumpedArray],
        probe: &[DumpedArray],
        tol: Tolerance,
    ) {
        self.summary.probes.push(flags.to_string());
        let probe_at: HashMap<(String, usize), &DumpedArray> = keys(probe).into_iter().zip(probe).collect();
        for (r, key) in reference.iter().zip(keys(reference)) {
            let Some(p) = probe_at.get(&key) else { continue };
            let kind = kind_of(&r.elem_type);
            let size = kind.size();
            let float = matches!(kind, Kind::F32 | Kind::F64 | Kind::F80);
            if !float
                || p.elem_type != r.elem_type
                || p.data.len() != r.data.len()
                || r.data.len() % size != 0
            {
                continue;
            }
            let elements = r.data.len() / size;
            for (i, (rb, pb)) in r.data.chunks_exact(size).zip(p.data.chunks_exact(size)).enumerate() {
                if rb == pb {
                    continue;
                }
                let (a, b) = (decode(kind, rb), decode(kind, pb));
                if let (Err(_), Value::F(x, _), Value::F(y, _)) = (element_eq(a, b, tol), a, b) {
                    self.arrays.entry(key.clone()).or_insert_with(|| NoisyArray::new(elements)).mark(i, x, y);
                }
            }
            if let Some(n) = self.arrays.get_mut(&key) {
                n.magnitude = r
                    .data
                    .chunks_exact(size)
                    .filter_map(|b| match decode(kind, b) {
                        Value::F(x, _) if x.is_finite() => Some(x.abs()),
                        _ => None,
                    })
                    .fold(0.0, f64::max);
            }
        }
        self.summary.arrays = reference
            .iter()
            .zip(keys(reference))
            .filter_map(|(r, key)| {
                let n = self.arrays.get(&key)?;
                Some(ArrayNoise {
                    array: label(&key),
                    noisy: n.counts.0,
                    no_digit: n.counts.1,
                    elements: (r.data.len() / kind_of(&r.elem_type).size()) as u64,
                    largest: n.largest,
                    magnitude: n.magnitude,
                })
            })
            .collect();
    }
}

/// What a variant's outputs are compared with: the original's dump and,
/// where it was probed, its rounding noise.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub dump: &'a [DumpedArray],
    pub noise: Option<&'a NoiseModel>,
}

impl<'a> From<&'a [DumpedArray]> for Expected<'a> {
    fn from(dump: &'a [DumpedArray]) -> Self {
        Expected { dump, noise: None }
    }
}

impl<'a> From<&'a Vec<DumpedArray>> for Expected<'a> {
    fn from(dump: &'a Vec<DumpedArray>) -> Self {
        Expected { dump, noise: None }
    }
}

impl<'a, const N: usize> From<&'a [DumpedArray; N]> for Expected<'a> {
    fn from(dump: &'a [DumpedArray; N]) -> Self {
        Expected { dump, noise: None }
    }
}

/// Each record's key: (name, occurrence number from 1).
fn keys(arrays: &[DumpedArray]) -> Vec<(String, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    arrays
        .iter()
        .map(|a| {
            let n = seen.entry(a.name.as_str()).or_default();
            *n += 1;
            (a.name.clone(), *n)
        })
        .collect()
}

fn label((name, n): &(String, usize)) -> String {
    if *n == 1 {
        name.clone()
    } else {
        format!("{name} (dump #{n})")
    }
}

/// Compares a variant's dump with the reference's, with no noise admitted.
pub fn compare(reference: &[DumpedArray], variant: &[DumpedArray], tolerance: Tolerance) -> Verdict {
    compare_with(Expected::from(reference), variant, tolerance)
}

/// Compares a variant's dump with the expected outputs.
///
/// Records are matched by (name, occurrence number), so a program that dumps
/// the same array twice is compared occurrence by occurrence; a record missing on
/// either side, a different element type or byte count is a mismatch. Floats are
/// compared with `tolerance` (both NaN counts as equal) and, in an array with
/// rounding noise, within it (module doc); everything else exactly.
pub fn compare_with(expected: Expected<'_>, variant: &[DumpedArray], tolerance: Tolerance) -> Verdict {
    let reference = expected.dump;
    let ref_keys = keys(reference);
    let var_keys = keys(variant);
    let var_index: HashMap<&(String, usize), usize> =
        var_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();

    for (r, k) in reference.iter().zip(&ref_keys) {
        let Some(&vi) = var_index.get(k) else {
            return Verdict::Mismatch {
                array: label(k),
                index: None,
                expected: format!("{} bytes of {}", r.data.len(), r.elem_type),
                got: "nothing".to_string(),
                reason: "the variant did not dump this array".to_string(),
            };
        };
        let v = &variant[vi];
        if r.elem_type != v.elem_type {
            return Verdict::Mismatch {
                array: label(k),
                index: None,
                expected: format!("type {}", r.elem_type),
                got: format!("type {}", v.elem_type),
                reason: "element types differ".to_string(),
            };
        }
        if r.data.len() != v.data.len() {
            return Verdict::Mismatch {
                array: label(k),
                index: None,
                expected: format!("{} bytes", r.data.len()),
                got: format!("{} bytes", v.data.len()),
                reason: "array sizes differ".to_string(),
            };
        }
        let noise = expected.noise.and_then(|n| n.arrays.get(k));
        if let Some(m) = compare_data(&label(k), &r.elem_type, &r.data, &v.data, tolerance, noise) {
            return m;
        }
    }
    let ref_set: std::collections::HashSet<&(String, usize)> = ref_keys.iter().collect();
    if let Some((v, k)) = variant.iter().zip(&var_keys).find(|(_, k)| !ref_set.contains(k)) {
        return Verdict::Mismatch {
            array: label(k),
            index: None,
            expected: "nothing".to_string(),
            got: format!("{} bytes of {}", v.data.len(), v.elem_type),
            reason: "the reference did not dump this array".to_string(),
        };
    }
    Verdict::Match
}

fn compare_data(
    array: &str,
    ty: &str,
    r: &[u8],
    v: &[u8],
    tol: Tolerance,
    noise: Option<&NoisyArray>,
) -> Option<Verdict> {
    let mut kind = kind_of(ty);
    if !r.len().is_multiple_of(kind.size()) {
        kind = Kind::Bytes;
    }
    let size = kind.size();
    let mut first: Option<(usize, Value, Value, String)> = None;
    let mut differing = 0usize;
    for (i, (rb, vb)) in r.chunks_exact(size).zip(v.chunks_exact(size)).enumerate() {
        if rb == vb {
            continue;
        }
        let (a, b) = (decode(kind, rb), decode(kind, vb));
        let Err(why) = element_eq(a, b, tol) else { continue };
        if let (Some(n), Value::F(x, _), Value::F(y, _)) = (noise, a, b) {
            if n.admits(i, x, y, tol) {
                continue;
            }
        }
        differing += 1;
        if first.is_none() {
            first = Some((i, a, b, why));
        }
    }
    let (index, a, b, why) = first?;
    let total = r.len() / size;
    let unit = if kind == Kind::Bytes { "bytes" } else { "elements" };
    let beyond = match noise {
        Some(n) => format!(
            ", beyond the original's rounding noise ({} elements, differences up to {:.1e})",
            n.counts.0, n.largest
        ),
        None => String::new(),
    };
    Some(Verdict::Mismatch {
        array: array.to_string(),
        index: Some(index),
        expected: show(a),
        got: show(b),
        reason: format!("{why}{beyond}; {differing} of {total} {unit} differ"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind_of("double"), Kind::F64);
        assert_eq!(kind_of("const float"), Kind::F32);
        assert_eq!(kind_of("unsigned char"), Kind::Int { size: 1, signed: false });
        assert_eq!(kind_of("long long int"), Kind::Int { size: 8, signed: true });
        assert_eq!(kind_of("unsigned"), Kind::Int { size: 4, signed: false });
        assert_eq!(kind_of("short int"), Kind::Int { size: 2, signed: true });
        assert_eq!(kind_of("double _Complex"), Kind::F64);
        assert_eq!(kind_of("struct pt"), Kind::Bytes);
    }

    #[test]
    fn negative_ints_decode() {
        match decode(Kind::Int { size: 4, signed: true }, &(-7i32).to_le_bytes()) {
            Value::I(v) => assert_eq!(v, -7),
            _ => unreachable!(),
        }
    }

    #[test]
    fn f80_conversion() {
        // 1.5 in x87 format: exponent 16383, mantissa 0xC000...
        let mut b = [0u8; 10];
        b[..8].copy_from_slice(&0xC000_0000_0000_0000u64.to_le_bytes());
        b[8..].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(f80_to_f64(&b), 1.5);
    }

    fn doubles(name: &str, values: &[f64]) -> DumpedArray {
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        DumpedArray { name: name.into(), elem_type: "double".into(), data }
    }

    /// Element 1 of `x` is noise of 1e-3 (a probe disagreed by that much);
    /// element 0 is a result; `n` is an int array, which has no noise.
    fn model() -> (Vec<DumpedArray>, NoiseModel) {
        let reference = vec![doubles("x", &[1.0, 0.5, 2.0]), doubles("y", &[3.0])];
        let probe = vec![doubles("x", &[1.0, 0.501, 2.0]), doubles("y", &[3.0])];
        let mut noise = NoiseModel::default();
        noise.add_probe("-ffp-contract=off", &reference, &probe, Tolerance::default());
        (reference, noise)
    }

    #[test]
    fn a_probe_marks_the_elements_it_disagrees_on() {
        let (_, noise) = model();
        let x = &noise.summary.arrays[..];
        assert_eq!(x.len(), 1, "{x:?}");
        assert_eq!((x[0].array.as_str(), x[0].noisy, x[0].elements), ("x", 1, 3));
        assert!((x[0].largest - 1e-3).abs() < 1e-12 && x[0].magnitude == 2.0, "{x:?}");
        assert_eq!(noise.summary.probes, ["-ffp-contract=off"]);
    }

    #[test]
    fn noisy_elements_are_compared_within_their_noise_and_the_rest_strictly() {
        let (reference, noise) = model();
        let expected = Expected { dump: &reference, noise: Some(&noise) };
        let tol = Tolerance::default();
        let within = [doubles("x", &[1.0, 0.5 + 3.9e-3, 2.0]), doubles("y", &[3.0])];
        assert!(compare_with(expected, &within, tol).is_match());
        assert!(!compare(&reference, &within, tol).is_match(), "without the noise it differs");
        let beyond = [doubles("x", &[1.0, 0.5 + 4.1e-3, 2.0]), doubles("y", &[3.0])];
        let verdict = compare_with(expected, &beyond, tol);
        assert!(matches!(&verdict, Verdict::Mismatch { index: Some(1), .. }), "{verdict}");
        assert!(verdict.to_string().contains("rounding noise"), "{verdict}");
        // A result of a noisy array: within the tolerance of the array's magnitude.
        let small = [doubles("x", &[1.0 + 1.9e-9, 0.5, 2.0]), doubles("y", &[3.0])];
        assert!(compare_with(expected, &small, tol).is_match());
        let large = [doubles("x", &[1.0 + 1e-6, 0.5, 2.0]), doubles("y", &[3.0])];
        assert!(!compare_with(expected, &large, tol).is_match());
        // An array without noise: as strict as ever.
        let y = [doubles("x", &[1.0, 0.5, 2.0]), doubles("y", &[3.0 + 1e-8])];
        assert!(!compare_with(expected, &y, tol).is_match());
    }

    #[test]
    fn noise_on_most_elements_of_an_array_is_admitted_on_all_of_them() {
        let reference = [doubles("y", &[1.0, 2.0, 3.0, 4.0])];
        let probe = [doubles("y", &[1.0 + 1e-6, 2.0 + 1e-6, 3.0 + 1e-6, 4.0])];
        let mut noise = NoiseModel::default();
        noise.add_probe("p", &reference, &probe, Tolerance::default());
        let expected = Expected { dump: &reference, noise: Some(&noise) };
        let tol = Tolerance::default();
        // Element 3, where the probe agreed, within the noise seen elsewhere.
        assert!(compare_with(expected, &[doubles("y", &[1.0, 2.0, 3.0, 4.0 + 3e-6])], tol).is_match());
        assert!(!compare_with(expected, &[doubles("y", &[1.0, 2.0, 3.0, 4.0 + 5e-6])], tol).is_match());
        // Noise on one element of four is that element's alone.
        let probe = [doubles("y", &[1.0 + 1e-6, 2.0, 3.0, 4.0])];
        let mut noise = NoiseModel::default();
        noise.add_probe("p", &reference, &probe, tol);
        let expected = Expected { dump: &reference, noise: Some(&noise) };
        assert!(!compare_with(expected, &[doubles("y", &[1.0, 2.0, 3.0, 4.0 + 3e-6])], tol).is_match());
    }

    #[test]
    fn an_element_with_no_digit_agreed_admits_any_finite_value() {
        let reference = [doubles("nrm", &[2.8e-30])];
        let mut noise = NoiseModel::default();
        noise.add_probe("p", &reference, &[doubles("nrm", &[9.6e-29])], Tolerance::default());
        assert_eq!(noise.summary.arrays[0].no_digit, 1);
        let expected = Expected { dump: &reference, noise: Some(&noise) };
        assert!(compare_with(expected, &[doubles("nrm", &[6.3e-28])], Tolerance::default()).is_match());
        assert!(!compare_with(expected, &[doubles("nrm", &[f64::NAN])], Tolerance::default()).is_match());
    }

    #[test]
    fn integers_and_mismatched_arrays_add_no_noise() {
        let ints = |v: i32| DumpedArray {
            name: "n".into(),
            elem_type: "int".into(),
            data: v.to_le_bytes().to_vec(),
        };
        let mut noise = NoiseModel::default();
        let tol = Tolerance::default();
        noise.add_probe("p", &[ints(1), doubles("x", &[1.0])], &[ints(2), doubles("x", &[1.0, 2.0])], tol);
        assert!(noise.summary.is_empty(), "{:?}", noise.summary);
    }

    #[test]
    fn probes_flip_contraction() {
        let on = probes(&["-O3".to_string()]);
        assert_eq!(on[0], ["-ffp-contract=off"]);
        let off = probes(&["-O3".to_string(), "-ffp-contract=off".to_string()]);
        assert_eq!(off[0], ["-ffp-contract=fast"]);
        assert!(on[1].contains(&"-fassociative-math".to_string()));
    }
}
