//! What code generation does to the loops of a schedule, as steps a script can say and
//! replay: tile a band, reorder its point loops, skew its tiles into a wavefront,
//! register-tile (unroll-and-jam) it, run a loop across OpenMP threads, vectorise the
//! innermost one. A step names a loop by its β-prefix in the final schedule (after every
//! Clay step); code generation sees the same loop as a depth and the statements it runs
//! ([`Planned`]), since it works on the banded schedule tree, not on the form.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::form::ClayForm;
use super::transform::prefix_text;
use vocab::knobs::Wavefront;

/// One thing code generation does at one loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum Action {
    /// The band whose first loop this is gets tiled, one size per member, outermost first.
    Tile { sizes: Vec<u32> },
    /// After tiling, the band's point loops run in this order of its members.
    PointOrder { order: Vec<usize> },
    /// After tiling, the band's tile loops run in this order of its members
    /// (packing's: the member along which the most copied bytes stay the
    /// same innermost, so their copies serve every tile of it).
    TileOrder { order: Vec<usize> },
    /// After tiling, the first tile loop becomes the sum of itself and the next
    /// (`single`) or of all of them (`all`).
    Wavefront { kind: Wavefront },
    /// After tiling, the band's two outer point loops (one for a band of two) are
    /// strip-mined by the factor and their strips unrolled into the innermost loop.
    UnrollJam { factor: u32 },
    /// After tiling, the band's point loops become a micro-kernel's register tile of
    /// `rows` (unrolled) by `cols` (vectorised, the innermost loop), the loop along
    /// which the writes stay put outside it and the written elements in registers.
    MicroTile { rows: u32, cols: u32 },
    /// After tiling, the band's innermost point loop is split into one loop per
    /// statement, in their order below it (loop fission).
    Fission,
    /// The loop runs across OpenMP threads (its tile loop, in a tiled band).
    Parallelize,
    /// The innermost loop of the band (its point loop, in a tiled band) gets `omp simd`.
    Vectorize,
}

impl Action {
    /// Whether the action names the first loop of its band (the others name any loop
    /// of it: the parallel one, or the innermost for vectorisation).
    pub fn at_band_start(&self) -> bool {
        !matches!(self, Action::Parallelize | Action::Vectorize)
    }

    /// Whether code generation checks the tree against the dependences
    /// again after the action: it runs instances in an order that was not
    /// proven legal as it was applied. A tile is checked permutable, and a
    /// parallel or simd mark checked free of carried dependences, when made;
    /// a new action must say here which it is.
    pub fn reorders(&self) -> bool {
        match self {
            Action::Tile { .. } | Action::Parallelize | Action::Vectorize => false,
            Action::PointOrder { .. }
            | Action::TileOrder { .. }
            | Action::Wavefront { .. }
            | Action::UnrollJam { .. }
            | Action::MicroTile { .. }
            | Action::Fission => true,
        }
    }
}

/// An action at the loop named by `prefix`, as a script says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeStep {
    pub prefix: Vec<i64>,
    pub action: Action,
}

/// An action at a loop as code generation finds it: the loop's depth counted in loops
/// (not in tile loops code generation adds) and the statements it runs, in SCoP order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    pub depth: usize,
    pub statements: Vec<String>,
    pub action: Action,
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}

impl fmt::Display for CodeStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = prefix_text(&self.prefix);
        match &self.action {
            Action::Tile { sizes } => write!(f, "tile {p} {}", join(sizes)),
            Action::PointOrder { order } => write!(f, "point-order {p} {}", join(order)),
            Action::TileOrder { order } => write!(f, "tile-order {p} {}", join(order)),
            Action::Wavefront { kind } => {
                write!(f, "wavefront {p} {}", if *kind == Wavefront::All { "all" } else { "single" })
            }
            Action::UnrollJam { factor } => write!(f, "unroll-jam {p} {factor}"),
            Action::MicroTile { rows, cols } => write!(f, "micro-tile {p} {rows} {cols}"),
            Action::Fission => write!(f, "fission {p}"),
            Action::Parallelize => write!(f, "parallelize {p}"),
            Action::Vectorize => write!(f, "vectorize {p}"),
        }
    }
}

impl fmt::Display for Planned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = CodeStep { prefix: vec![], action: self.action.clone() }.to_string();
        let (op, args) = step.split_once(" ()").unwrap_or((&step, ""));
        write!(f, "{op}{args} at the loop of depth {} around {}", self.depth, self.statements.join(" "))
    }
}

/// The words after the β-prefix of a code step (`op` is one of [`OPS`]).
pub(super) fn parse_action(op: &str, args: &[i64], rest: &str) -> Result<Action, String> {
    let unsigned =
        |x: i64| u32::try_from(x).ok().filter(|&x| x > 0).ok_or(format!("`{x}` is not a positive size"));
    let shape = |s: &str| Err(format!("`{op}` is written `{s}`"));
    let members = |args: &[i64]| -> Result<Vec<usize>, String> {
        args.iter().map(|&x| usize::try_from(x).map_err(|_| format!("`{x}` is not a member"))).collect()
    };
    Ok(match op {
        "tile" if !args.is_empty() => {
            Action::Tile { sizes: args.iter().map(|&x| unsigned(x)).collect::<Result<_, _>>()? }
        }
        "tile" => return shape("tile (PREFIX) SIZE..."),
        "point-order" if !args.is_empty() => Action::PointOrder { order: members(args)? },
        "point-order" => return shape("point-order (PREFIX) MEMBER..."),
        "tile-order" if !args.is_empty() => Action::TileOrder { order: members(args)? },
        "tile-order" => return shape("tile-order (PREFIX) MEMBER..."),
        "wavefront" => match rest {
            "single" => Action::Wavefront { kind: Wavefront::Single },
            "all" => Action::Wavefront { kind: Wavefront::All },
            _ => return shape("wavefront (PREFIX) single|all"),
        },
        "unroll-jam" if args.len() == 1 => Action::UnrollJam { factor: unsigned(args[0])? },
        "unroll-jam" => return shape("unroll-jam (PREFIX) FACTOR"),
        "micro-tile" if args.len() == 2 => {
            Action::MicroTile { rows: unsigned(args[0])?, cols: unsigned(args[1])? }
        }
        "micro-tile" => return shape("micro-tile (PREFIX) ROWS COLUMNS"),
        "fission" if args.is_empty() => Action::Fission,
        "parallelize" if args.is_empty() => Action::Parallelize,
        "vectorize" if args.is_empty() => Action::Vectorize,
        _ => return shape(&format!("{op} (PREFIX)")),
    })
}

/// The code-generation steps a script may hold (after its Clay steps).
pub const OPS: [&str; 9] = [
    "tile",
    "point-order",
    "tile-order",
    "wavefront",
    "unroll-jam",
    "micro-tile",
    "fission",
    "parallelize",
    "vectorize",
];

impl ClayForm {
    /// Where code generation finds the loop `step` names: its depth and statements.
    pub fn locate(&self, step: &CodeStep) -> Result<Planned, String> {
        let inside = self.inside(&step.prefix);
        let depth = step.prefix.len().checked_sub(1).ok_or("the root is not a loop")?;
        if inside.is_empty() || inside.iter().any(|&r| self.relations[r].alpha.len() <= depth) {
            return Err(format!("{} names no loop", prefix_text(&step.prefix)));
        }
        let statements = inside.iter().map(|&r| self.relations[r].statement.clone()).collect();
        Ok(Planned { depth, statements, action: step.action.clone() })
    }

    /// The step that names `planned`'s loop by its β-prefix, if the form has that loop.
    pub fn name(&self, planned: &Planned) -> Option<CodeStep> {
        let first = self.relations.iter().find(|r| planned.statements.first() == Some(&r.statement))?;
        let prefix = first.beta.get(..=planned.depth)?.to_vec();
        let step = CodeStep { prefix, action: planned.action.clone() };
        (self.locate(&step).ok()?.statements == planned.statements).then_some(step)
    }
}
