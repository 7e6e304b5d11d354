//! What a search model learns from, as numbers that mean the same thing on
//! every kernel and every machine, so that what one campaign measured can
//! inform another (issue 39): a point's knob values (`Encoder`), and the
//! context it was measured in, the kernel's shape read off its polyhedral
//! model (`kernel`) and the machine's caches and cores read off its
//! fingerprint (`machine`). A context is a map from a feature's name to its
//! value, stored as JSON beside each program, so that a feature added later
//! reads as missing (-1) on older rows rather than breaking them.

use std::collections::{BTreeMap, BTreeSet};

use model::deps::{DepKind, Dependences};
use model::scop::{AccessKind, Scop};
use vocab::knobs::Point;

use crate::program::Dataset;

/// Named numeric features of a kernel or a machine.
pub type Context = BTreeMap<String, f64>;

/// A missing feature or an untiled point's tile sizes.
const MISSING: f64 = -1.0;

/// The kernel's shape: statements, loop depth, arrays, references, the
/// dependences of each kind (reference pairs), the deepest reduction (loops
/// of a statement that updates an element it reads and that its written
/// subscripts leave out: gemm's `k`), and the dataset's rank (MINI 0 …
/// EXTRALARGE 4), as log2(1 + count) where it is a count.
pub fn kernel(scop: &Scop, deps: &Dependences, dataset: Dataset) -> Context {
    let log = |n: usize| (1.0 + n as f64).log2();
    let depth = scop.statements.iter().map(|s| s.iterators.len()).max().unwrap_or(0);
    let references: usize = scop.statements.iter().map(|s| s.accesses.len()).sum();
    let reduction = scop
        .statements
        .iter()
        .filter_map(|s| {
            let writes = s.accesses.iter().filter(|a| a.kind == AccessKind::Write);
            writes
                .filter(|w| s.accesses.iter().any(|r| r.kind == AccessKind::Read && r.relation == w.relation))
                .filter_map(|w| scop.arrays.iter().find(|a| a.name == w.array))
                .map(|a| s.iterators.len().saturating_sub(a.rank()))
                .max()
        })
        .max()
        .unwrap_or(0);
    let mut out = Context::new();
    out.insert("kernel.statements".into(), log(scop.statements.len()));
    out.insert("kernel.depth".into(), depth as f64);
    out.insert("kernel.arrays".into(), log(scop.arrays.len()));
    out.insert("kernel.references".into(), log(references));
    out.insert("kernel.reduction_depth".into(), reduction as f64);
    for (kind, n) in deps.counts() {
        if kind != DepKind::Rar {
            out.insert(format!("kernel.deps.{kind:?}").to_lowercase(), log(n));
        }
    }
    out.insert("kernel.dataset".into(), dataset as usize as f64);
    out
}

/// The machine's logical cores and its L1 data, L2 and L3 caches (log2 of
/// bytes), from a fingerprint's JSON; what it does not say is left out.
pub fn machine(fingerprint_json: &str) -> Context {
    let mut out = Context::new();
    let Ok(f) = serde_json::from_str::<executor::machine::Fingerprint>(fingerprint_json) else {
        return out;
    };
    out.insert("machine.cores".into(), (f.logical_cores.max(1) as f64).log2());
    for c in &f.caches {
        let name = match (c.level, c.kind.as_str()) {
            (1, "Data") => "machine.l1",
            (2, _) => "machine.l2",
            (3, _) => "machine.l3",
            _ => continue,
        };
        if let Some(bytes) = cache_bytes(&c.size) {
            out.insert(name.into(), bytes.log2());
        }
    }
    out
}

/// `48K`, `2048K`, `32M` as bytes.
fn cache_bytes(size: &str) -> Option<f64> {
    let size = size.trim();
    let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit()).unwrap_or(size.len()));
    let n: f64 = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * scale)
}

/// Tile members a shape is read along (the last size repeating).
const TILE_MEMBERS: usize = 3;

/// log2 of each of the first tile members' sizes and of their product; -1
/// each where the point is untiled.
fn tile_features(p: &Point) -> Vec<f64> {
    match p.tiles.as_deref() {
        Some(sizes) if !sizes.is_empty() => {
            let member = |m: usize| f64::from(sizes[m.min(sizes.len() - 1)].max(1)).log2();
            let members: Vec<f64> = (0..TILE_MEMBERS).map(member).collect();
            let volume = members.iter().sum();
            members.into_iter().chain([volume]).collect()
        }
        _ => vec![MISSING; TILE_MEMBERS + 1],
    }
}

/// A point's knob values other than its tiles, which are read as numbers.
fn knob_values(p: &Point) -> Vec<(String, String)> {
    p.knob_values().into_iter().filter(|(k, _)| k != "tiles").collect()
}

/// Turns points and their contexts into rows of numbers with one column
/// layout for all: one-hot knob values (so that a split can ask "is knob k
/// set to v?"), numbers where a knob's values are numbers (`hlim=off,4`
/// too: off is -1), each tile member's size, the tile's volume, the tile's
/// doubles against the L1 and L2 caches where the context has them (so that
/// "the tile fits L2" reads the same on two machines), then each context
/// feature. Columns are those of the points and contexts it was built from.
pub struct Encoder {
    one_hot: BTreeMap<(String, String), usize>,
    numeric: Vec<String>,
    context: Vec<String>,
}

impl Encoder {
    pub fn new<'a>(points: impl IntoIterator<Item = &'a Point>, contexts: &[&Context]) -> Encoder {
        let mut one_hot = BTreeMap::new();
        for p in points {
            for kv in knob_values(p) {
                let n = one_hot.len();
                one_hot.entry(kv).or_insert(n);
            }
        }
        let numeric: BTreeSet<String> =
            one_hot.keys().filter(|(_, v)| v.parse::<f64>().is_ok()).map(|(k, _)| k.clone()).collect();
        let context: BTreeSet<String> = contexts.iter().flat_map(|c| c.keys().cloned()).collect();
        Encoder { one_hot, numeric: numeric.into_iter().collect(), context: context.into_iter().collect() }
    }

    pub fn row(&self, p: &Point, context: &Context) -> Vec<f64> {
        let mut f = vec![0.0; self.one_hot.len()];
        let values = knob_values(p);
        for kv in &values {
            if let Some(&c) = self.one_hot.get(kv) {
                f[c] = 1.0;
            }
        }
        for name in &self.numeric {
            let v = values.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.parse::<f64>().ok());
            f.push(v.filter(|v| *v > 0.0).map_or(MISSING, f64::log2));
        }
        let tiles = tile_features(p);
        // Doubles of a cube-ish tile (its volume), over the cache's.
        let against = |cache: &str| match (tiles[TILE_MEMBERS], context.get(cache)) {
            (v, Some(c)) if v >= 0.0 => v + 3.0 - c,
            _ => MISSING,
        };
        let fits = [against("machine.l1"), against("machine.l2")];
        f.extend(tiles);
        f.extend(fits);
        f.extend(self.context.iter().map(|k| context.get(k).copied().unwrap_or(MISSING)));
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_read_as_sysfs_prints_them() {
        assert_eq!(cache_bytes("48K"), Some(48.0 * 1024.0));
        assert_eq!(cache_bytes("32M"), Some(32.0 * 1024.0 * 1024.0));
        assert_eq!(cache_bytes("512"), Some(512.0));
        assert_eq!(cache_bytes("lots"), None);
    }

    #[test]
    fn a_fingerprint_gives_cores_and_caches() {
        let json = r#"{"cpu_model":"x","logical_cores":8,"caches":[
            {"level":1,"kind":"Data","size":"32K"},{"level":1,"kind":"Instruction","size":"32K"},
            {"level":2,"kind":"Unified","size":"1024K"},{"level":3,"kind":"Unified","size":"16M"}],
            "gpus":[],"compiler":"gcc","compiler_version":"gcc 12","flags":[]}"#;
        let m = machine(json);
        assert_eq!(m["machine.cores"], 3.0);
        assert_eq!(m["machine.l1"], 15.0);
        assert_eq!(m["machine.l2"], 20.0);
        assert_eq!(m["machine.l3"], 24.0);
        assert!(machine("not json").is_empty());
    }

    /// gemm: one statement updates `C[i][j]` in a loop over `k` its
    /// subscripts leave out; the reduction depth is 1, the depth 3.
    #[test]
    fn gemm_has_a_reduction_one_loop_deep() {
        let file =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench/linear-algebra/gemm.c");
        let prog = crate::program::load(&file, Dataset::Mini, &Default::default(), 0).unwrap();
        let k = kernel(&prog.scop, &prog.deps, Dataset::Mini);
        assert_eq!(k["kernel.depth"], 3.0);
        assert_eq!(k["kernel.reduction_depth"], 1.0);
        assert_eq!(k["kernel.dataset"], 0.0);
        assert!(k["kernel.deps.flow"] > 0.0, "{k:?}");
    }
}
