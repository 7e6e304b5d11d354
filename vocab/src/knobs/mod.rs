//! The knobs of the search space and the `Point` that fixes one value of each.
//!
//! A point is plain serde data. Its canonical JSON (fields in declaration
//! order, no whitespace) is what the store keeps, and a hash of that text is
//! the variant id, so the same point gets the same id on every machine.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::preorder::Preorder;

mod table;
pub use table::{is_code_knob, knob_names, KnobError};

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

/// What a Feautrier row (GPU without a coincident row, or hlim exceeded)
/// tries to carry: every dependence group it can (Feautrier's scheduler as
/// the paper uses it), or first only statements' dependences on themselves
/// (isl's `schedule_carry_self_first`), which keeps dependences between
/// statements for inner, parallel loops where it can. Neither wins on every
/// kernel: on an H200, `all` ran lu 4.9× faster; `self-first` gives
/// gramschmidt, lu and adi isl's launch counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feautrier {
    #[default]
    All,
    SelfFirst,
}

impl Feautrier {
    fn is_all(&self) -> bool {
        *self == Feautrier::All
    }
}

/// What the schedule is for (RR-9110 §4.7 CPU, §4.8 GPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Seq,
    Openmp,
    Gpu,
}

/// Every knob of the unified scheduler as a point sets it: what its ILPs
/// see ([`SchedulerOptions`], [`UnifiedOptions::scheduler`]) and what code
/// generation does to its tiled bands afterwards (post-tile reordering,
/// wavefront skewing, intra-tile consecutivity). One struct, in the order
/// stored points were written, so that their canonical JSON and ids hold.
/// Defaults are the paper's CPU setting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnifiedOptions {
    pub target: Target,
    pub hlim: Hlim,
    pub spatial: Spatial,
    pub posttile_reorder: PostTileReorder,
    pub consecutivity: Consecutivity,
    pub wavefront: Wavefront,
    /// Cache line size in bytes: elements per line = line / element size.
    pub line_bytes: u32,
    /// Left out of the canonical JSON at its default, so that points from
    /// before the knob keep their ids.
    #[serde(default, skip_serializing_if = "Feautrier::is_all")]
    pub feautrier: Feautrier,
    /// Diamond tiles (Bondhugula et al., TPDS 2017): in a stencil's
    /// permutable band of a time row and a skewed one (`t`, `2t + i`), the
    /// time row is replaced by the skew's mirror (`2t − i`), so that the
    /// two sum to a multiple of time and, under a wavefront of their tile
    /// loops, a whole row of tiles starts at once (concurrent start).
    /// Where no such row is legal the band stays. Left out of the
    /// canonical JSON when off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diamond: bool,
}

impl Default for UnifiedOptions {
    fn default() -> Self {
        UnifiedOptions {
            target: Target::Openmp,
            hlim: None,
            spatial: Spatial::Grouped,
            posttile_reorder: PostTileReorder::Pluto,
            consecutivity: Consecutivity::None,
            wavefront: Wavefront::None,
            line_bytes: 64,
            feautrier: Feautrier::All,
            diamond: false,
        }
    }
}

impl UnifiedOptions {
    /// The knobs the scheduler's ILPs depend on. Points that differ only in
    /// what code generation does after tiling ask the scheduler the same
    /// question. Adding a knob here means deciding which side it is on: the
    /// pattern below names every field.
    pub fn scheduler(&self) -> SchedulerOptions {
        let UnifiedOptions {
            target,
            hlim,
            spatial,
            posttile_reorder: _,
            consecutivity,
            wavefront: _,
            line_bytes,
            feautrier,
            diamond,
        } = *self;
        SchedulerOptions {
            target,
            hlim,
            spatial,
            global_consecutivity: consecutivity == Consecutivity::Global,
            line_bytes,
            feautrier,
            diamond,
        }
    }
}

/// What the unified scheduler's ILPs depend on (RR-9110 §4): the part of
/// a point's [`UnifiedOptions`] that reaches `space::schedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SchedulerOptions {
    pub target: Target,
    pub hlim: Hlim,
    pub spatial: Spatial,
    /// Stride-one constraints on every row (consecutivity report §3, the
    /// global level); the intra-tile level acts after tiling instead.
    pub global_consecutivity: bool,
    pub line_bytes: u32,
    pub feautrier: Feautrier,
    /// [`UnifiedOptions::diamond`]; left out of the JSON when off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diamond: bool,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        UnifiedOptions::default().scheduler()
    }
}

impl From<SchedulerOptions> for UnifiedOptions {
    /// The point's knobs with the post-tiling ones at their defaults.
    fn from(o: SchedulerOptions) -> Self {
        let consecutivity = if o.global_consecutivity { Consecutivity::Global } else { Consecutivity::None };
        UnifiedOptions {
            target: o.target,
            hlim: o.hlim,
            spatial: o.spatial,
            consecutivity,
            line_bytes: o.line_bytes,
            feautrier: o.feautrier,
            diamond: o.diamond,
            ..UnifiedOptions::default()
        }
    }
}

/// Vectorisation of the innermost loop (Pluto's `--prevector` idea).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Simd {
    #[default]
    None,
    /// The innermost point loop, when it is parallel, gets `#pragma omp simd`.
    Innermost,
}

/// How OpenMP shares a parallel loop's iterations among threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OmpSchedule {
    /// Equal chunks (the OpenMP default; no clause printed).
    #[default]
    Static,
    /// Chunks handed out as threads finish: triangular loops (lu, syrk).
    Dynamic,
}

/// How idle OpenMP threads wait for work: a property of the run, not of
/// the code (`OMP_WAIT_POLICY` in the measured program's environment).
/// Spinning threads answer fastest on quiet cores; on a virtual machine
/// whose host takes cores away, threads that sleep can be steadier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OmpWait {
    /// The OpenMP runtime's own choice (no variable set).
    #[default]
    Default,
    Passive,
    Active,
}

impl OmpWait {
    fn is_default(&self) -> bool {
        *self == OmpWait::Default
    }
}

/// The processor whose costs gcc's instruction selection and scheduling
/// assume in the variant's file (`#pragma GCC target("tune=...")`): a
/// cost model, not an instruction set, so any x86 machine runs the code.
/// Under `-march=native` on an AMD Zen 4, gcc 12 tunes for Zen 3, whose
/// costs make each multiply-add of a register tile reload its row operand
/// from memory (four loads where one would do on a 4-row tile); Ice Lake's
/// keep the operand in a register.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mtune {
    /// The build's own (`-march=native` tunes for the machine).
    #[default]
    Default,
    Generic,
    IcelakeServer,
}

impl Mtune {
    fn is_default(&self) -> bool {
        *self == Mtune::Default
    }

    /// The `tune=` value of gcc's target pragma; `None` for the default.
    pub fn gcc_name(&self) -> Option<&'static str> {
        match self {
            Mtune::Default => None,
            Mtune::Generic => Some("generic"),
            Mtune::IcelakeServer => Some("icelake-server"),
        }
    }
}

/// Knobs that shape the generated code of any schedule (original, isl's or
/// ours) without changing the schedule itself. The defaults are the code
/// polytune generated before these knobs existed; a point at the defaults
/// leaves them out of its canonical JSON, so its id did not change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct CodeOptions {
    /// The SCoP's arrays are used through `restrict`-qualified pointers
    /// inside the region: the model already assumes distinct arrays do
    /// not overlap, and this tells the compiler.
    pub restrict: bool,
    pub simd: Simd,
    /// Register tiling (unroll-and-jam): the (up to) two outer point loops
    /// of a tiled band are strip-mined by this factor and the strips
    /// unrolled inside the innermost point loop. 1: none.
    pub unroll_jam: u32,
    pub omp_schedule: OmpSchedule,
    /// A parallel loop runs on a team of threads only when it has at least
    /// this many iterations (OpenMP's `if` clause, tested at run time):
    /// starting a team costs microseconds, more than a wavefront diagonal of
    /// one or two small tiles is worth. 0: always.
    #[serde(skip_serializing_if = "is_zero")]
    pub parallel_min: u32,
    /// The widest vectors, in bits, gcc's vectoriser may use in this file
    /// (`#pragma GCC target("prefer-vector-width=N")`). gcc prefers 256-bit
    /// vectors on AVX-512 machines, which halves the arithmetic of a register
    /// tile there. 0: the compiler's own choice.
    #[serde(skip_serializing_if = "is_zero")]
    pub vector_width: u32,
    /// The processor gcc tunes the file's code for ([`Mtune`]); x86 with
    /// gcc only (the pragma is left out elsewhere).
    #[serde(skip_serializing_if = "Mtune::is_default")]
    pub mtune: Mtune,
    /// Read-only matrices that the original's innermost loops mostly walk
    /// down their columns are read through a transposed copy made at the
    /// region's start (`space::layout`); the scheduler sees the copy's
    /// layout. CPU variants only.
    #[serde(skip_serializing_if = "is_false")]
    pub transpose: bool,
    /// Scalars and arrays written in a loop and read after it in the same
    /// iteration (symm's `temp2`, doitgen's row `sum`) get a copy per
    /// iteration, as GPU points always do (`model::expansion`): the
    /// scheduler is then free of their false dependences. CPU variants
    /// (GPU ones expand anyway).
    #[serde(default, skip_serializing_if = "is_false")]
    pub expand: bool,
    /// The most threads of a CUDA block (GPU variants): the innermost thread
    /// dimension takes what its tile allows, the outer ones what is left.
    /// 0: CUDA's limit, 1024.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_block: u32,
    /// GPU variants read and write global memory only (`gpu_shared=off`):
    /// no tile of an array a block reuses is staged in shared memory.
    #[serde(skip_serializing_if = "is_false")]
    pub gpu_global: bool,
    /// GPU kernels ask nvcc to unroll their constant loops (a stage's
    /// steps over a full tile) whole (`gpu_unroll=on`), instead of leaving
    /// them to its own choice.
    #[serde(skip_serializing_if = "is_false")]
    pub gpu_unroll: bool,
    /// The points of its block's tile each GPU thread runs along each
    /// mapped member (a register tile of `n × n` on two): a block has the
    /// tile over `n` threads along each. 0: as many threads as the tile
    /// allows (one point each, up to `gpu_block`).
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_thread_tile: u32,
    /// The blocks a GPU multiprocessor must hold at once, as the second
    /// argument of each kernel's `__launch_bounds__`: the registers nvcc
    /// may give a thread follow from it (a 256-thread gemm kernel with
    /// 4 × 4 points gets 80 registers and spills without it, 110 with 2).
    /// 0: nvcc's own choice.
    #[serde(skip_serializing_if = "is_zero")]
    pub gpu_min_blocks: u32,
    /// FP64 tensor cores (`gpu_mma=on`): where a kernel's stage is a
    /// contraction (`C[i][j] += A[i][k] * B[k][j]`, its scalar factors
    /// folded into the staged tiles), the block's tile of `C` is summed by
    /// warps in `wmma` fragments of 8 × 8 × 4 doubles (sm_80 and later) and
    /// added to `C` after the stage loop. Elsewhere it changes nothing.
    /// Changes the rounding: outputs agree with the original's within the
    /// tolerance, not bit for bit.
    #[serde(skip_serializing_if = "is_false")]
    pub gpu_mma: bool,
    /// Two-level tiling: a tiled band's tile loops are tiled again by this
    /// factor, outer tiles of `factor` tiles per member (L2 tiles over L1
    /// tiles); the outer tile loops are the parallel ones. 1: one level.
    /// Not with wavefronts (their tile loops are skewed).
    #[serde(skip_serializing_if = "is_one")]
    pub l2_tile: u32,
    /// How the program's OpenMP threads wait ([`OmpWait`]): set in its
    /// environment when it runs, the program's text unchanged.
    #[serde(skip_serializing_if = "OmpWait::is_default")]
    pub omp_wait: OmpWait,
    /// After tiling, the innermost point loop is split into one loop per
    /// statement (loop fission), where the dependences allow. Statements
    /// fused with a shift in that loop (a stencil's two sweeps) make the
    /// second reload, misaligned, the vector the first just stored, which
    /// store-to-load forwarding cannot serve. CPU variants only.
    #[serde(skip_serializing_if = "is_false")]
    pub fission: bool,
    /// Packing: at each tile of a tiled band, what the tile reads of a
    /// matrix the band does not write is copied into a contiguous buffer of
    /// the thread's own, which the tile then reads (BLIS's panels). CPU
    /// variants only.
    #[serde(skip_serializing_if = "is_false")]
    pub pack: bool,
    /// The micro-kernel's register tile (rows, columns), `(0, 0)` for none:
    /// at a tiled band whose writes stay put along one point loop (gemm's
    /// `k`), that loop runs outside strips of `rows` of the next outer loop
    /// (unrolled) and `columns` of the innermost one (vectorised), and the
    /// strip's elements of the written arrays live in a local array around
    /// it (scalar replacement), so the compiler keeps them in registers
    /// (BLIS's micro-kernel). Replaces `unroll_jam` at the bands it applies
    /// to. CPU variants only.
    #[serde(skip_serializing_if = "is_none_pair")]
    pub micro_tile: (u32, u32),
    /// Under `micro_tile`, a sum added to the register tile is added term
    /// by term, and a scalar that multiplies every term (gemm's `alpha`)
    /// multiplies the tile once, when it is written back (BLAS's
    /// `alpha * (A B)`). Changes the rounding: outputs agree with the
    /// original's within the tolerance, not bit for bit. CPU variants only.
    #[serde(skip_serializing_if = "is_false")]
    pub reassociate: bool,
}

fn is_none_pair(p: &(u32, u32)) -> bool {
    *p == (0, 0)
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for CodeOptions {
    fn default() -> Self {
        CodeOptions {
            restrict: false,
            simd: Simd::None,
            unroll_jam: 1,
            omp_schedule: OmpSchedule::Static,
            parallel_min: 0,
            vector_width: 0,
            mtune: Mtune::Default,
            transpose: false,
            expand: false,
            gpu_block: 0,
            gpu_global: false,
            gpu_unroll: false,
            gpu_thread_tile: 0,
            gpu_min_blocks: 0,
            gpu_mma: false,
            l2_tile: 1,
            omp_wait: OmpWait::Default,
            fission: false,
            pack: false,
            micro_tile: (0, 0),
            reassociate: false,
        }
    }
}

impl CodeOptions {
    pub fn is_default(&self) -> bool {
        *self == CodeOptions::default()
    }

    /// The environment the program runs with, beyond the protocol's own.
    pub fn run_env(&self) -> Vec<(String, String)> {
        match self.omp_wait {
            OmpWait::Default => Vec::new(),
            OmpWait::Passive => vec![("OMP_WAIT_POLICY".into(), "passive".into())],
            OmpWait::Active => vec![("OMP_WAIT_POLICY".into(), "active".into())],
        }
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
    /// isl's scheduler as ppcg runs it for GPUs (outer coincidence), its
    /// schedule mapped to the GPU by our code: a GPU campaign's reference.
    IslGpu,
    /// Our unified scheduler with a fusion preorder (`None`: as in the
    /// original program) and knob values.
    Unified { preorder: Option<Preorder>, options: UnifiedOptions },
    /// No schedule of ours: the unmodified program built by another
    /// compiler (`executor::peers` names them), a reference point.
    Peer { name: String },
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
    /// Code-generation knobs; left out of the JSON at their defaults.
    #[serde(default, skip_serializing_if = "CodeOptions::is_default")]
    pub code: CodeOptions,
}

impl Point {
    /// Whether the point's program runs on the GPU (a CUDA form).
    pub fn on_gpu(&self) -> bool {
        match &self.scheduler {
            Scheduler::IslGpu => true,
            Scheduler::Unified { options, .. } => options.target == Target::Gpu,
            _ => false,
        }
    }

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
    /// option, `tiles`, `threads`, each code-generation option): what reports group by and what a search model learns from.
    pub fn knob_values(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mode = match &self.scheduler {
            Scheduler::Original => "original",
            Scheduler::Isl => "isl",
            Scheduler::IslGpu => "isl-gpu",
            Scheduler::Unified { .. } => "unified",
            Scheduler::Peer { name } => name,
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
        for s in self.code.settings() {
            if let Some((k, v)) = s.split_once('=') {
                out.push((k.to_string(), v.to_string()));
            }
        }
        out
    }
}

impl fmt::Display for Point {
    /// `unified (S1 S2)(S3) spatial=grouped ... tiles=32 threads=2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scheduler {
            Scheduler::Original => write!(f, "original")?,
            Scheduler::Isl => write!(f, "isl")?,
            Scheduler::IslGpu => write!(f, "isl-gpu")?,
            Scheduler::Peer { name } => write!(f, "peer {name}")?,
            Scheduler::Unified { preorder, options } => {
                write!(f, "unified")?;
                if let Some(p) = preorder {
                    write!(f, " {}", p.display())?;
                }
                let defaults = UnifiedOptions::default().settings();
                for s in options.settings().into_iter().filter(|s| !defaults.contains(s)) {
                    write!(f, " {s}")?;
                }
            }
        }
        let defaults = CodeOptions::default().settings();
        for s in self.code.settings().into_iter().filter(|s| !defaults.contains(s)) {
            write!(f, " {s}")?;
        }
        match &self.tiles {
            Some(t) => write!(f, " tiles={}", t.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("x"))?,
            None => write!(f, " untiled")?,
        }
        // A GPU program's threads are its blocks', not OpenMP's.
        if self.on_gpu() {
            return Ok(());
        }
        write!(f, " threads={}", self.threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_errors_list_valid_values() {
        let o = UnifiedOptions::default()
            .with_settings(&["hlim=3", "spatial=per-reference", "posttile-reorder=none", "wavefront=all"])
            .unwrap();
        assert_eq!(o.hlim, Some(3));
        assert_eq!(o.spatial, Spatial::PerReference);
        assert_eq!(o.posttile_reorder, PostTileReorder::None);
        assert_eq!(UnifiedOptions::default().with_settings(&o.settings()).unwrap(), o);

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
                options: UnifiedOptions::default(),
            },
            tiles: Some(vec![32]),
            threads: 2,
            code: CodeOptions::default(),
        };
        let back: Point = serde_json::from_str(&p.canonical_json()).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.id(), p.id());
        let q = Point { threads: 1, ..p.clone() };
        assert_ne!(q.id(), p.id());
        assert_eq!(p.to_string(), "unified (S1 S2)(S3) tiles=32 threads=2");
        // Code knobs at their defaults are not part of the identity: ids
        // stored before the knobs existed still name the same points.
        assert!(!p.canonical_json().contains("code"));
        assert_eq!(p.id(), "1dfdf83247ed1344");
        let code =
            CodeOptions::default().with_settings(&["simd=innermost", "unroll-jam=4", "hlim=3"]).unwrap();
        let r = Point { code, ..p.clone() };
        assert_ne!(r.id(), p.id());
        assert_eq!(serde_json::from_str::<Point>(&r.canonical_json()).unwrap(), r);
        assert_eq!(r.to_string(), "unified (S1 S2)(S3) simd=innermost unroll_jam=4 tiles=32 threads=2");
    }

    #[test]
    fn code_knobs_and_scheduler_knobs_share_one_setting_list() {
        let set = ["restrict=on", "spatial=off", "omp-schedule=dynamic"];
        let o = SchedulerOptions::default().with_settings(&set).unwrap();
        assert_eq!(o, SchedulerOptions { spatial: Spatial::Off, ..SchedulerOptions::default() });
        let c = CodeOptions::default().with_settings(&set).unwrap();
        assert!(c.restrict && c.omp_schedule == OmpSchedule::Dynamic);
        assert_eq!(CodeOptions::default().with_settings(&c.settings()).unwrap(), c);
        let e = CodeOptions::default().with_settings(&["unroll_jam=3"]).unwrap_err();
        assert_eq!(e.to_string(), "knob `unroll_jam`: invalid value `3` (valid: 1|2|4|8)");
        let m = CodeOptions::default().with_settings(&["micro_tile=6x16"]).unwrap();
        assert_eq!(m.micro_tile, (6, 16));
        assert!(m.settings().contains(&"micro_tile=6x16".to_string()));
        assert!(CodeOptions::default().settings().contains(&"micro_tile=off".to_string()));
        let e = CodeOptions::default().with_settings(&["micro_tile=5x7"]).unwrap_err();
        assert!(e.to_string().contains("invalid value `5x7` (valid: off|4x8|"), "{e}");
        let e = SchedulerOptions::default().with_settings(&["vectorize=yes"]).unwrap_err();
        assert!(e.to_string().contains("line_bytes, feautrier, diamond, restrict, simd"), "{e}");
        assert!(is_code_knob("omp-schedule") && !is_code_knob("hlim"));
    }
}

#[cfg(test)]
mod split {
    use super::*;

    #[test]
    fn knobs_that_act_after_tiling_do_not_reach_the_scheduler() {
        let set = |s: &[&str]| UnifiedOptions::default().with_settings(s).unwrap();
        let plain = set(&["posttile_reorder=none"]);
        let after = set(&["posttile_reorder=pluto", "wavefront=all", "consecutivity=intra-tile"]);
        assert_ne!(plain, after);
        assert_eq!(plain.scheduler(), after.scheduler());
        let global = set(&["consecutivity=global", "hlim=2"]);
        assert!(global.scheduler().global_consecutivity && global.scheduler().hlim == Some(2));
        assert_eq!(UnifiedOptions::from(global.scheduler()), global);
        assert_eq!(SchedulerOptions::default(), UnifiedOptions::default().scheduler());
        let seen = SchedulerOptions::default().with_settings(&["wavefront=all", "spatial=off"]).unwrap();
        assert_eq!(seen, set(&["spatial=off"]).scheduler());
    }

    #[test]
    fn a_point_of_the_unified_scheduler_keeps_its_stored_form() {
        let options = UnifiedOptions::default()
            .with_settings(&[
                "hlim=4",
                "consecutivity=intra-tile",
                "wavefront=single",
                "feautrier=self-first",
            ])
            .unwrap();
        let p = Point {
            scheduler: Scheduler::Unified { preorder: None, options },
            tiles: Some(vec![32, 16]),
            threads: 2,
            code: CodeOptions::default(),
        };
        assert_eq!(
            p.canonical_json(),
            r#"{"scheduler":{"mode":"unified","preorder":null,"options":{"target":"openmp","hlim":4,"spatial":"grouped","posttile_reorder":"pluto","consecutivity":"intra-tile","wavefront":"single","line_bytes":64,"feautrier":"self-first"}},"tiles":[32,16],"threads":2}"#
        );
    }
}
