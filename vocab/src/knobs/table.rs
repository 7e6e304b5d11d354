//! The `KNOB=VALUE` tables `--set` reads: each knob's name, its valid
//! values, a setter and a getter.

use serde::Serialize;

use super::{CodeOptions, SchedulerOptions, UnifiedOptions};

/// One knob, its valid values, a setter and a getter: the tables `--set` reads.
struct Knob<T> {
    name: &'static str,
    values: &'static str,
    set: fn(&mut T, &str) -> bool,
    get: fn(&T) -> String,
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

/// Sets `slot` to 0 for `zero` (the knob's default, spelled as a word or
/// as the number it stands for), else as [`set_one_of`] does.
fn set_one_of_or_zero(slot: &mut u32, value: &str, zero: &str, allowed: &[u32]) -> bool {
    if value == zero {
        *slot = 0;
        return true;
    }
    set_one_of(slot, value, allowed)
}

/// A knob number with its default 0 spelled `zero`.
fn zero_as(n: u32, zero: &str) -> String {
    match n {
        0 => zero.to_string(),
        n => n.to_string(),
    }
}

/// Sets `slot` to `value` when it is one of the knob's numbers.
fn set_one_of(slot: &mut u32, value: &str, allowed: &[u32]) -> bool {
    match value.parse::<u32>() {
        Ok(n) if allowed.contains(&n) => {
            *slot = n;
            true
        }
        _ => false,
    }
}

/// The register tiles `micro_tile` offers: rows of four to eight (each a
/// broadcast per step), columns of whole vectors of 256 or 512 bits.
const MICRO_TILES: [(u32, u32); 9] =
    [(4, 8), (4, 16), (4, 24), (4, 32), (6, 8), (6, 16), (6, 24), (8, 8), (8, 16)];

fn set_micro_tile(slot: &mut (u32, u32), value: &str) -> bool {
    if value == "off" {
        *slot = (0, 0);
        return true;
    }
    let tile = value.split_once('x').and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?)));
    match tile {
        Some(t) if MICRO_TILES.contains(&t) => {
            *slot = t;
            true
        }
        _ => false,
    }
}

/// `off|on` knobs.
fn set_switch(slot: &mut bool, value: &str) -> bool {
    match value {
        "on" | "off" => {
            *slot = value == "on";
            true
        }
        _ => false,
    }
}

fn switch(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}

fn get_enum<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value).expect("knobs serialise") {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
}

const KNOBS: &[Knob<UnifiedOptions>] = &[
    Knob {
        name: "target",
        values: "seq|openmp|gpu",
        set: |o, v| set_enum(&mut o.target, v),
        get: |o| get_enum(&o.target),
    },
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
        get: |o| o.hlim.map_or_else(|| "off".to_string(), |n| n.to_string()),
    },
    Knob {
        name: "spatial",
        values: "off|per-reference|grouped",
        set: |o, v| set_enum(&mut o.spatial, v),
        get: |o| get_enum(&o.spatial),
    },
    Knob {
        name: "posttile_reorder",
        values: "none|pluto",
        set: |o, v| set_enum(&mut o.posttile_reorder, v),
        get: |o| get_enum(&o.posttile_reorder),
    },
    Knob {
        name: "consecutivity",
        values: "none|global|intra-tile",
        set: |o, v| set_enum(&mut o.consecutivity, v),
        get: |o| get_enum(&o.consecutivity),
    },
    Knob {
        name: "wavefront",
        values: "none|single|all",
        set: |o, v| set_enum(&mut o.wavefront, v),
        get: |o| get_enum(&o.wavefront),
    },
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
        get: |o| o.line_bytes.to_string(),
    },
    Knob {
        name: "feautrier",
        values: "all|self-first",
        set: |o, v| set_enum(&mut o.feautrier, v),
        get: |o| get_enum(&o.feautrier),
    },
    Knob {
        name: "diamond",
        values: "off|on",
        set: |o, v| set_switch(&mut o.diamond, v),
        get: |o| switch(o.diamond),
    },
];

const CODE_KNOBS: &[Knob<CodeOptions>] = &[
    Knob {
        name: "restrict",
        values: "off|on",
        set: |o, v| set_switch(&mut o.restrict, v),
        get: |o| switch(o.restrict),
    },
    Knob {
        name: "simd",
        values: "none|innermost",
        set: |o, v| set_enum(&mut o.simd, v),
        get: |o| get_enum(&o.simd),
    },
    Knob {
        name: "unroll_jam",
        values: "1|2|4|8",
        set: |o, v| set_one_of(&mut o.unroll_jam, v, &[1, 2, 4, 8]),
        get: |o| o.unroll_jam.to_string(),
    },
    Knob {
        name: "l2_tile",
        values: "1|2|4|8",
        set: |o, v| set_one_of(&mut o.l2_tile, v, &[1, 2, 4, 8]),
        get: |o| o.l2_tile.to_string(),
    },
    Knob {
        name: "omp_schedule",
        values: "static|dynamic",
        set: |o, v| set_enum(&mut o.omp_schedule, v),
        get: |o| get_enum(&o.omp_schedule),
    },
    Knob {
        name: "parallel_min",
        values: "0|2|4|16",
        set: |o, v| set_one_of(&mut o.parallel_min, v, &[0, 2, 4, 16]),
        get: |o| o.parallel_min.to_string(),
    },
    Knob {
        name: "vector_width",
        values: "default|128|256|512",
        set: |o, v| set_one_of_or_zero(&mut o.vector_width, v, "default", &[128, 256, 512]),
        get: |o| zero_as(o.vector_width, "default"),
    },
    Knob {
        name: "mtune",
        values: "default|generic|icelake-server",
        set: |o, v| set_enum(&mut o.mtune, v),
        get: |o| get_enum(&o.mtune),
    },
    Knob {
        name: "omp_wait",
        values: "default|passive|active",
        set: |o, v| set_enum(&mut o.omp_wait, v),
        get: |o| get_enum(&o.omp_wait),
    },
    Knob {
        name: "transpose",
        values: "off|on",
        set: |o, v| set_switch(&mut o.transpose, v),
        get: |o| switch(o.transpose),
    },
    Knob {
        name: "expand",
        values: "off|on",
        set: |o, v| set_switch(&mut o.expand, v),
        get: |o| switch(o.expand),
    },
    Knob {
        name: "fission",
        values: "off|on",
        set: |o, v| set_switch(&mut o.fission, v),
        get: |o| switch(o.fission),
    },
    Knob { name: "pack", values: "off|on", set: |o, v| set_switch(&mut o.pack, v), get: |o| switch(o.pack) },
    Knob {
        name: "micro_tile",
        values: "off|4x8|4x16|4x24|4x32|6x8|6x16|6x24|8x8|8x16",
        set: |o, v| set_micro_tile(&mut o.micro_tile, v),
        get: |o| match o.micro_tile {
            (0, 0) => "off".to_string(),
            (r, c) => format!("{r}x{c}"),
        },
    },
    Knob {
        name: "reassociate",
        values: "off|on",
        set: |o, v| set_switch(&mut o.reassociate, v),
        get: |o| switch(o.reassociate),
    },
    Knob {
        name: "gpu_block",
        values: "64|128|256|512|1024",
        set: |o, v| set_one_of_or_zero(&mut o.gpu_block, v, "1024", &[64, 128, 256, 512]),
        get: |o| zero_as(o.gpu_block, "1024"),
    },
    Knob {
        name: "gpu_thread_tile",
        values: "1|2|4|8",
        set: |o, v| set_one_of_or_zero(&mut o.gpu_thread_tile, v, "1", &[2, 4, 8]),
        get: |o| zero_as(o.gpu_thread_tile, "1"),
    },
    Knob {
        name: "gpu_min_blocks",
        values: "auto|1|2|3|4",
        set: |o, v| set_one_of_or_zero(&mut o.gpu_min_blocks, v, "auto", &[1, 2, 3, 4]),
        get: |o| zero_as(o.gpu_min_blocks, "auto"),
    },
    Knob {
        name: "gpu_shared",
        values: "on|off",
        set: |o, v| {
            let mut on = !o.gpu_global;
            let ok = set_switch(&mut on, v);
            o.gpu_global = !on;
            ok
        },
        get: |o| switch(!o.gpu_global),
    },
    Knob {
        name: "gpu_unroll",
        values: "off|on",
        set: |o, v| set_switch(&mut o.gpu_unroll, v),
        get: |o| switch(o.gpu_unroll),
    },
    Knob {
        name: "gpu_mma",
        values: "off|on",
        set: |o, v| set_switch(&mut o.gpu_mma, v),
        get: |o| switch(o.gpu_mma),
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

/// Every knob's name, the scheduler's then the code's.
pub fn knob_names() -> String {
    let names = KNOBS.iter().map(|k| k.name).chain(CODE_KNOBS.iter().map(|k| k.name));
    names.collect::<Vec<_>>().join(", ")
}

/// `KNOB=VALUE` split at `=`, the name with `-` read as `_`.
fn parse_setting(s: &str) -> Result<(String, &str), KnobError> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(KnobError::Syntax(s.to_string(), knob_names()));
    };
    Ok((name.trim().replace('-', "_"), value.trim()))
}

/// Applies `settings` in order; a knob of `others` is skipped (it belongs
/// to the other table), any other unknown name is an error.
fn apply<T, U>(
    table: &[Knob<T>],
    others: &[Knob<U>],
    target: &mut T,
    settings: &[impl AsRef<str>],
) -> Result<(), KnobError> {
    for s in settings {
        let (name, value) = parse_setting(s.as_ref())?;
        let Some(knob) = table.iter().find(|k| k.name == name) else {
            if others.iter().any(|k| k.name == name) {
                continue;
            }
            let shown = s.as_ref().split_once('=').map_or("", |(n, _)| n.trim());
            return Err(KnobError::UnknownKnob(shown.to_string(), knob_names()));
        };
        if !(knob.set)(target, value) {
            return Err(KnobError::BadValue {
                knob: knob.name.to_string(),
                value: value.to_string(),
                valid: knob.values.to_string(),
            });
        }
    }
    Ok(())
}

impl UnifiedOptions {
    /// Applies `KNOB=VALUE` settings in order (`--set` on the command
    /// line); code-generation knobs are left to [`CodeOptions::with_settings`].
    pub fn with_settings<S: AsRef<str>>(mut self, settings: &[S]) -> Result<Self, KnobError> {
        apply(KNOBS, CODE_KNOBS, &mut self, settings)?;
        Ok(self)
    }

    /// `hlim=off spatial=grouped ...`: the settings that reproduce `self`.
    pub fn settings(&self) -> Vec<String> {
        KNOBS.iter().map(|k| format!("{}={}", k.name, (k.get)(self))).collect()
    }
}

impl SchedulerOptions {
    /// [`UnifiedOptions::with_settings`] seen by the scheduler: the knobs
    /// that act after tiling are read and have no effect here.
    pub fn with_settings<S: AsRef<str>>(self, settings: &[S]) -> Result<Self, KnobError> {
        Ok(UnifiedOptions::from(self).with_settings(settings)?.scheduler())
    }
}

impl CodeOptions {
    /// Applies the code-generation knobs among `KNOB=VALUE` settings in
    /// order; the scheduler's knobs are left to [`UnifiedOptions::with_settings`].
    pub fn with_settings<S: AsRef<str>>(mut self, settings: &[S]) -> Result<Self, KnobError> {
        apply(CODE_KNOBS, KNOBS, &mut self, settings)?;
        Ok(self)
    }

    /// `restrict=on simd=innermost ...`: the settings that reproduce `self`.
    pub fn settings(&self) -> Vec<String> {
        CODE_KNOBS.iter().map(|k| format!("{}={}", k.name, (k.get)(self))).collect()
    }
}

/// Whether `name` (with `-` or `_`) is a code-generation knob.
pub fn is_code_knob(name: &str) -> bool {
    let name = name.trim().replace('-', "_");
    CODE_KNOBS.iter().any(|k| k.name == name)
}
