//! The knobs of the search space and the `Point` that fixes one value of each.
//!
//! A point is plain serde data. Its canonical JSON (fields in declaration
//! order, no whitespace) is what the store keeps, and a hash of that text is
//! the variant id, so the same point gets the same id on every machine.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::preorder::Preorder;

/// Register-pressure heuristic (RR-9110 §4.7): when the number of unique
/// access hulls `h` of the next row exceeds the threshold, use a
/// Feautrier-style row instead. `None` (`off`) never switches.
pub type Hlim = Option<u32>;

/// Spatial-proximity relations and their grouping (RR-9110 §4.1–4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spatial {
    Off,
    PerReference,
    Grouped,
}

/// Reordering of point loops after tiling (Pluto score, RR-9110 (2)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PostTileReorder {
    #[default]
    None,
    Pluto,
}

/// Stride-1 (consecutivity) constraints (consecutivity report §3–4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consecutivity {
    None,
    Global,
    IntraTile,
}

/// Skewing of tile loops to expose wavefront parallelism.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wavefront {
    #[default]
    None,
    Single,
    All,
}

/// What the schedule is for (RR-9110 §4.7 CPU, §4.8 GPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Seq,
    Openmp,
    Gpu,
}

/// Every knob of the unified scheduler. Defaults are the paper's CPU setting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SchedulerOptions {
    pub target: Target,
    pub hlim: Hlim,
    pub spatial: Spatial,
    pub posttile_reorder: PostTileReorder,
    pub consecutivity: Consecutivity,
    pub wavefront: Wavefront,
    /// Cache line size in bytes: elements per line = line / element size.
    pub line_bytes: u32,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            target: Target::Openmp,
            hlim: None,
            spatial: Spatial::Grouped,
            posttile_reorder: PostTileReorder::Pluto,
            consecutivity: Consecutivity::None,
            wavefront: Wavefront::None,
            line_bytes: 64,
        }
    }
}

/// One knob, its valid values and a setter: the single table `--set` reads.
struct Knob {
    name: &'static str,
    values: &'static str,
    set: fn(&mut SchedulerOptions, &str) -> bool,
}

fn set_enum<T: serde::de::DeserializeOwned>(slot: &mut T, value: &str) -> bool {
    match serde_json::from_value(serde_json::Value::String(value.to_string())) {
        Ok(v) => {
            *slot = v;
            true
        }
        Err(_) => false,
    }
}

const KNOBS: &[Knob] = &[
    Knob { name: "target", values: "seq|openmp|gpu", set: |o, v| set_enum(&mut o.target, v) },
    Knob {
        name: "hlim",
        values: "off|N",
        set: |o, v| match v {
            "off" => {
                o.hlim = None;
                true
            }
            n => n.parse().map(|n| o.hlim = Some(n)).is_ok(),
        },
    },
    Knob { name: "spatial", values: "off|per-reference|grouped", set: |o, v| set_enum(&mut o.spatial, v) },
    Knob { name: "posttile_reorder", values: "none|pluto", set: |o, v| set_enum(&mut o.posttile_reorder, v) },
    Knob {
        name: "consecutivity",
        values: "none|global|intra-tile",
        set: |o, v| set_enum(&mut o.consecutivity, v),
    },
    Knob { name: "wavefront", values: "none|single|all", set: |o, v| set_enum(&mut o.wavefront, v) },
    Knob {
        name: "line_bytes",
        values: "a power of two ≥ 8",
        set: |o, v| {
            v.parse::<u32>()
                .ok()
                .filter(|n| n.is_power_of_two() && *n >= 8)
                .map(|n| o.line_bytes = n)
                .is_some()
        },
    },
];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KnobError {
    #[error("`{0}` is not KNOB=VALUE (knobs: {1})")]
    Syntax(String, String),
    #[error("unknown knob `{0}` (knobs: {1})")]
    UnknownKnob(String, String),
    #[error("knob `{knob}`: invalid value `{value}` (valid: {valid})")]
    BadValue { knob: String, value: String, valid: String },
}

fn knob_names() -> String {
    KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

impl SchedulerOptions {
    /// Applies `KNOB=VALUE` settings in order (`--set` on the command line).
    pub fn with_settings<S: AsRef<str>>(mut self, settings: &[S]) -> Result<Self, KnobError> {
        for s in settings {
            let s = s.as_ref();
            let Some((name, value)) = s.split_once('=') else {
                return Err(KnobError::Syntax(s.to_string(), knob_names()));
            };
            let (name, value) = (name.trim(), value.trim());
            // Accept `posttile-reorder` as well as `posttile_reorder`.
            let Some(knob) = KNOBS.iter().find(|k| k.name == name.replace('-', "_")) else {
                return Err(KnobError::UnknownKnob(name.to_string(), knob_names()));
            };
            if !(knob.set)(&mut self, value) {
                return Err(KnobError::BadValue {
                    knob: knob.name.to_string(),
                    value: value.to_string(),
                    valid: knob.values.to_string(),
                });
            }
        }
        Ok(self)
    }

    /// `hlim=off spatial=grouped ...`: the settings that reproduce `self`.
    pub fn settings(&self) -> Vec<String> {
        let v = serde_json::to_value(self).expect("options serialise");
        KNOBS
            .iter()
            .map(|k| {
                let value = match &v[k.name] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => "off".to_string(),
                    other => other.to_string(),
                };
                format!("{}={value}", k.name)
            })
            .collect()
    }
}

/// How a point's schedule is obtained.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "mode")]
pub enum Scheduler {
    /// The identity schedule: the program as written (through isl's code generator).
    Original,
    /// isl's own scheduler with its default options (as ppcg uses it).
    Isl,
    /// Our unified scheduler with a fusion preorder (`None`: as in the
    /// original program) and knob values.
    Unified { preorder: Option<Preorder>, options: SchedulerOptions },
}

/// One point of the search space: everything that decides the generated code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    pub scheduler: Scheduler,
    /// Rectangular tile sizes of permutable bands (outermost first, the last
    /// repeats); `None`: no tiling.
    pub tiles: Option<Vec<u32>>,
    /// OpenMP threads; 1 runs sequential code.
    pub threads: usize,
}

impl Point {
    /// The canonical JSON text: the point's identity in the store.
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("points serialise")
    }

    /// A stable 64-bit FNV-1a hash of the canonical JSON, as 16 hex digits.
    pub fn id(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.canonical_json().bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

impl Point {
    /// The point's value of each knob, by name (`scheduler`, `fusion`, each scheduler
    /// option, `tiles`, `threads`): what reports group by and what a search model learns from.
    pub fn knob_values(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mode = match &self.scheduler {
            Scheduler::Original => "original",
            Scheduler::Isl => "isl",
            Scheduler::Unified { .. } => "unified",
        };
        out.push(("scheduler".to_string(), mode.to_string()));
        if let Scheduler::Unified { preorder, options } = &self.scheduler {
            let fusion = preorder.as_ref().map_or_else(|| "as written".to_string(), |p| p.display());
            out.push(("fusion".to_string(), fusion));
            for s in options.settings() {
                if let Some((k, v)) = s.split_once('=') {
                    out.push((k.to_string(), v.to_string()));
                }
            }
        }
        let tiles = self.tiles.as_ref().map_or_else(
            || "untiled".to_string(),
            |t| t.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("x"),
        );
        out.push(("tiles".to_string(), tiles));
        out.push(("threads".to_string(), self.threads.to_string()));
        out
    }
}

impl fmt::Display for Point {
    /// `unified (S1 S2)(S3) spatial=grouped ... tiles=32 threads=2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scheduler {
            Scheduler::Original => write!(f, "original")?,
            Scheduler::Isl => write!(f, "isl")?,
            Scheduler::Unified { preorder, options } => {
                write!(f, "unified")?;
                if let Some(p) = preorder {
                    write!(f, " {}", p.display())?;
                }
                let defaults = SchedulerOptions::default().settings();
                for s in options.settings().into_iter().filter(|s| !defaults.contains(s)) {
                    write!(f, " {s}")?;
                }
            }
        }
        match &self.tiles {
            Some(t) => write!(f, " tiles={}", t.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("x"))?,
            None => write!(f, " untiled")?,
        }
        write!(f, " threads={}", self.threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_errors_list_valid_values() {
        let o = SchedulerOptions::default()
            .with_settings(&["hlim=3", "spatial=per-reference", "posttile-reorder=none", "wavefront=all"])
            .unwrap();
        assert_eq!(o.hlim, Some(3));
        assert_eq!(o.spatial, Spatial::PerReference);
        assert_eq!(o.posttile_reorder, PostTileReorder::None);
        assert_eq!(SchedulerOptions::default().with_settings(&o.settings()).unwrap(), o);

        let e = SchedulerOptions::default().with_settings(&["spatial=sideways"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "knob `spatial`: invalid value `sideways` (valid: off|per-reference|grouped)"
        );
        let e = SchedulerOptions::default().with_settings(&["tilesize=3"]).unwrap_err();
        assert!(matches!(e, KnobError::UnknownKnob(..)) && e.to_string().contains("consecutivity"));
        assert!(SchedulerOptions::default().with_settings(&["hlim"]).is_err());
        assert!(SchedulerOptions::default().with_settings(&["hlim=-1"]).is_err());
    }

    #[test]
    fn point_ids_follow_the_canonical_json() {
        let p = Point {
            scheduler: Scheduler::Unified {
                preorder: Some(Preorder(vec![vec![0, 1], vec![2]])),
                options: SchedulerOptions::default(),
            },
            tiles: Some(vec![32]),
            threads: 2,
        };
        let back: Point = serde_json::from_str(&p.canonical_json()).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.id(), p.id());
        let q = Point { threads: 1, ..p.clone() };
        assert_ne!(q.id(), p.id());
        assert_eq!(p.to_string(), "unified (S1 S2)(S3) tiles=32 threads=2");
    }
}
