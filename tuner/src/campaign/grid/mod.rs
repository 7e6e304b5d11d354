//! The space a campaign searches for one kernel: fusion preorders × the
//! scheduler's knob grid × tile shapes × the code-generation knob grid, at a
//! fixed thread count, plus the reference points that every campaign
//! measures first.

use crate::error::Result;
use vocab::knobs::{CodeOptions, Point, Scheduler, Target, UnifiedOptions, Wavefront};
use vocab::preorder::Preorder;

mod per_scop;
pub use per_scop::{for_scop, knobs_for_scop, tiles_for_scop};

/// The values each knob takes in the grid, as `KNOB=VALUE` settings. A knob
/// the user fixes with `--set` leaves the grid.
const AXES: &[(&str, &[&str])] = &[
    ("spatial", &["off", "per-reference", "grouped"]),
    ("posttile_reorder", &["none", "pluto"]),
    ("consecutivity", &["none", "global", "intra-tile"]),
    ("hlim", &["off", "4"]),
    ("wavefront", &["none", "all"]),
];

/// What GPU points search besides [`AXES`]: GPU schedules take Feautrier
/// rows where the CPU's seldom do.
const GPU_AXES: &[(&str, &[&str])] = &[("feautrier", &["all", "self-first"])];

/// What CPU points with a wavefront search besides [`AXES`]: diamond tiles,
/// whose first row of tiles the wavefront starts at once (`knobs_for_scop`
/// drops them where no band has a time row to mirror).
const WAVEFRONT_AXES: &[(&str, &[&str])] = &[("diamond", &["off", "on"])];

/// The values each code-generation knob takes in the grid. `restrict` is
/// always on: the model already assumes distinct arrays do not overlap
/// (`--set restrict=off` compares). The OpenMP schedule joins the grid
/// only with more than one thread.
const CODE_AXES: &[(&str, &[&str])] = &[
    ("restrict", &["on"]),
    ("simd", &["none", "innermost"]),
    ("unroll_jam", &["1", "2", "4"]),
    ("transpose", &["off", "on"]),
    ("expand", &["off", "on"]),
    ("fission", &["off", "on"]),
    // Only with a micro tile (`for_scop`): its sums kept apart from the
    // block's values, the scalar factor once per tile.
    ("reassociate", &["off", "on"]),
];

/// The code knobs of GPU points (`target=gpu`): a CUDA form has no use for
/// the CPU ones, which stay at their defaults (they would only make the
/// same program again); the block size and each thread's register tile
/// are searched (shared memory stays on: `--set gpu_shared=on,off` adds it).
/// 2 × 2 points per thread ran gemm's kernels fastest at LARGE on an H200
/// (docs/performance.md, 2026-11-27: 0.56 ms, against 0.88 with one point
/// and 0.82–0.92 with 4 × 4).
const GPU_CODE_AXES: &[(&str, &[&str])] = &[
    ("restrict", &["on"]),
    ("gpu_block", &["128", "256", "1024"]),
    ("gpu_thread_tile", &["1", "2", "4"]),
    // Three blocks a multiprocessor: gemm's fastest kernel on an H200 (docs/performance.md, 2026-11-29).
    ("gpu_min_blocks", &["auto", "3"]),
    // FP64 tensor cores, where a stage is a contraction (`for_scop` drops `on` elsewhere).
    ("gpu_mma", &["off", "on"]),
];

/// Tile shapes of permutable bands searched by default; `None` is untiled.
/// Besides cubes, two shapes with a long stride-1 side, which the register
/// tiles (`unroll_jam`) need to reach half of dgemm's rate: 32 × 32 × 128
/// won gemm, 2mm, 3mm and doitgen in `bench peers`, 16 × 64 × 128 syrk
/// and syr2k. 8 × 8 × 8 × 256 and 32 × 32 × 32 × 256 are time-tiled
/// stencils' shapes: the innermost loop whole (heat-3d at LARGE on one
/// core with `fission`: 1.42× at 8 steps, the others 1.12–1.16×; under
/// `mtune=icelake-server`, 32 steps ran 5–10% ahead of 8, docs/performance.md).
/// 96 × 128 × 256 is the micro tiles' (syrk, syr2k, 2mm at one thread),
/// 16 × 64 and 16 × 16 × 16 × 64 wavefronts' of time tiles. Together the
/// shapes of `bench peers`' own points, so that a campaign can reach each.
/// In a SCoP three loops deep the second is the cube of 32 again, and
/// `tiles_for_scop` drops it.
pub const TILES: &str = "0,16,32,64,32x32x128,16x64x128,96x128x256,16x64,8x8x8x256,16x16x16x64,32x32x32x256";

/// A tile shape: sizes of a band's members, outermost first, the last
/// repeating (`[32]` is a cube of 32, `[64, 64, 256]` a rectangle with a
/// long stride-1 side); `None` is untiled.
pub type Tiles = Option<Vec<u32>>;

/// Everything but the fusion preorders that spans a kernel's space.
#[derive(Debug, Clone)]
pub struct Spec {
    pub knobs: Vec<UnifiedOptions>,
    /// The code knobs of CPU points, and of GPU points (`target=gpu`).
    pub code: Vec<CodeOptions>,
    pub gpu_code: Vec<CodeOptions>,
    pub tiles: Vec<Tiles>,
    pub threads: usize,
    /// Seeds the sample of fusion preorders when there are too many.
    pub seed: u64,
    /// Peers (`executor::peers::NAMES`) measured as reference points.
    pub peers: Vec<String>,
    /// Which of [`references`] are measured, by [`reference_label`]
    /// (`--references`); `None`: all.
    pub references: Option<Vec<String>>,
}

/// `0,16,32x32x256` → untiled, cubes of 16, 32 × 32 × 256 (outermost
/// first, the last size repeating for deeper members).
pub fn parse_tiles(text: &str) -> Result<Vec<Tiles>, String> {
    let mut out = Vec::new();
    for t in text.split(',') {
        let sizes =
            t.trim().split('x').map(|n| n.trim().parse::<u32>()).collect::<Result<Vec<u32>, _>>().map_err(
                |_| format!("`{t}` is not a tile size or shape such as 32 or 32x32x256 (0 means untiled)"),
            )?;
        let tile = match sizes[..] {
            [0] => None,
            _ if sizes.contains(&0) => return Err(format!("`{t}`: a tile shape has no size 0")),
            _ => Some(sizes),
        };
        if !out.contains(&tile) {
            out.push(tile);
        }
    }
    Ok(out)
}

/// One tile shape (`--tile`): `0`, `32` or `32x32x256`.
pub fn parse_tile(text: &str) -> Result<Tiles, String> {
    match &parse_tiles(text)?[..] {
        [one] => Ok(one.clone()),
        _ => Err(format!("`{text}`: one tile shape, such as 32 or 32x32x256")),
    }
}

/// The code-generation grid of CPU points: the defaults with `fixed`
/// applied, times every value of each code knob not in `fixed`; with
/// `avx512` (the machine's compiler targets it: `Compiler::avx512`), the
/// 512-bit vector width too, which gcc does not prefer by default there,
/// and Ice Lake's costs (`mtune`), under which gcc keeps a register tile's
/// row operand in a register (gemm 1.2× and syrk 1.1× on a Zen 4, whose
/// own tuning gcc 12 does not have).
pub fn code_grid(fixed: &[String], threads: usize, avx512: bool) -> Result<Vec<CodeOptions>> {
    let schedule: &[&str] = &["static", "dynamic"];
    let widths: &[&str] = &["default", "512"];
    let tunes: &[&str] = &["default", "icelake-server"];
    // Four vectors of columns by four rows (16 accumulators) where 32
    // vector registers hold them; six by two vectors of four (12) in
    // AVX2's 16.
    let micro: &[&str] = if avx512 { &["off", "4x32"] } else { &["off", "6x8"] };
    let axes = CODE_AXES
        .iter()
        .copied()
        .chain([("micro_tile", micro)])
        .chain((threads > 1).then_some(("omp_schedule", schedule)))
        .chain(avx512.then_some(("vector_width", widths)))
        .chain(avx512.then_some(("mtune", tunes)));
    // `reassociate` acts on micro tiles only: elsewhere it makes the same program.
    let mut out: Vec<CodeOptions> = Vec::new();
    for c in code_grid_on(fixed, axes)? {
        let c = CodeOptions { reassociate: c.reassociate && c.micro_tile != (0, 0), ..c };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// [`code_grid`] for GPU points: [`GPU_CODE_AXES`].
pub fn gpu_code_grid(fixed: &[String]) -> Result<Vec<CodeOptions>> {
    code_grid_on(fixed, GPU_CODE_AXES.iter().copied())
}

fn code_grid_on(
    fixed: &[String],
    axes: impl Iterator<Item = (&'static str, &'static [&'static str])>,
) -> Result<Vec<CodeOptions>> {
    let (single, searched) = split_settings(fixed, true);
    let base = CodeOptions::default().with_settings(&single)?;
    grid(base, fixed, axes, searched, |o, s| o.with_settings(s))
}

/// The knob grid: the defaults (target from the thread count) with `fixed`
/// applied, times every value of each knob not in `fixed`. Fails on an
/// unknown knob or value in `fixed`.
pub fn knob_grid(fixed: &[String], threads: usize) -> Result<Vec<UnifiedOptions>> {
    let target = if threads > 1 { "openmp" } else { "seq" };
    let (single, searched) = split_settings(fixed, false);
    let base =
        UnifiedOptions::default().with_settings(&[format!("target={target}")])?.with_settings(&single)?;
    let set = |o: UnifiedOptions, s: &[String]| o.with_settings(s);
    let wavefront_fixed = fixed_names(fixed).any(|k| k == "wavefront");
    let mut out = Vec::new();
    for o in grid(base, fixed, AXES.iter().copied(), searched, set)? {
        match o.target {
            Target::Gpu => out.extend(grid(o, fixed, GPU_AXES.iter().copied(), Vec::new(), set)?),
            _ if o.wavefront != Wavefront::None => {
                for d in grid(o, fixed, WAVEFRONT_AXES.iter().copied(), Vec::new(), set)? {
                    // A single wavefront is diamond tiles' better partner:
                    // heat-3d at two threads ran 0.75-1.05 s with it against
                    // 1.61-1.70 s with `all` (docs/performance.md, 2026-12-03).
                    // Both are searched unless the user fixed the wavefront.
                    if d.diamond && d.wavefront == Wavefront::All && !wavefront_fixed {
                        out.push(UnifiedOptions { wavefront: Wavefront::Single, ..d.clone() });
                    }
                    out.push(d);
                }
            }
            _ => out.push(o),
        }
    }
    Ok(out)
}

/// The knobs `--set` settings name (`wavefront=all` names `wavefront`).
fn fixed_names(fixed: &[String]) -> impl Iterator<Item = String> + '_ {
    fixed.iter().filter_map(|s| s.split_once('=')).map(|(k, _)| k.trim().replace('-', "_"))
}

/// `--set` settings of the code knobs (`code`) or of the scheduler's: those
/// with one value (`simd=none`, fixed), and those with several
/// (`vector_width=default,512`, searched over exactly these values).
fn split_settings(fixed: &[String], code: bool) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut single = Vec::new();
    let mut searched = Vec::new();
    for s in fixed {
        match s.split_once('=') {
            Some((knob, values)) if values.contains(',') => {
                if vocab::knobs::is_code_knob(knob) == code {
                    let values = values.split(',').map(|v| v.trim().to_string()).collect();
                    searched.push((knob.trim().replace('-', "_"), values));
                }
            }
            _ => single.push(s.clone()),
        }
    }
    (single, searched)
}

/// `base` times every value of each axis whose knob is not in `fixed`, then
/// times the values of each `searched` knob.
fn grid<T: Clone>(
    base: T,
    fixed: &[String],
    axes: impl Iterator<Item = (&'static str, &'static [&'static str])>,
    searched: Vec<(String, Vec<String>)>,
    set: impl Fn(T, &[String]) -> Result<T, vocab::knobs::KnobError>,
) -> Result<Vec<T>> {
    let fixed_names: Vec<String> = fixed_names(fixed).collect();
    let defaults = axes
        .filter(|(k, _)| !fixed_names.iter().any(|f| f == k))
        .map(|(k, values)| (k.to_string(), values.iter().map(|v| v.to_string()).collect::<Vec<_>>()));
    let mut grid = vec![base];
    for (knob, values) in defaults.chain(searched) {
        grid = grid
            .into_iter()
            .flat_map(|o| values.iter().map(|v| set(o.clone(), &[format!("{knob}={v}")])).collect::<Vec<_>>())
            .collect::<Result<_, _>>()?;
    }
    Ok(grid)
}

/// Every point of preorders × knobs × tiles × code knobs, in that nesting order.
pub fn points(preorders: &[Option<Preorder>], spec: &Spec) -> Vec<Point> {
    let mut out = Vec::new();
    for preorder in preorders {
        for options in &spec.knobs {
            let codes = if options.target == Target::Gpu { &spec.gpu_code } else { &spec.code };
            for tiles in &spec.tiles {
                for code in codes {
                    out.push(Point {
                        scheduler: Scheduler::Unified {
                            preorder: preorder.clone(),
                            options: options.clone(),
                        },
                        tiles: tiles.clone(),
                        threads: spec.threads,
                        code: code.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The fixed points `bench peers` measures of ours per kernel, each with its
/// label: isl's and the Pluto-like references, and the unified scheduler's
/// defaults with the code-generation knobs over a few tiles. Each is a point
/// of the default space of the kernels it acts on (`bench_points_are_in_the_default_space`).
pub fn bench_points(threads: usize) -> Vec<(String, Point)> {
    // Sequential code has no OpenMP schedule: the default's program.
    let handed_out = match threads > 1 {
        true => vocab::knobs::OmpSchedule::Dynamic,
        false => vocab::knobs::OmpSchedule::default(),
    };
    let target = if threads > 1 { Target::Openmp } else { Target::Seq };
    let unified =
        Scheduler::Unified { preorder: None, options: UnifiedOptions { target, ..Default::default() } };
    let mut out: Vec<(String, Point)> = references(threads, None, false)
        .into_iter()
        .skip(1)
        .map(|p| (reference_label(&p).unwrap_or_default(), p))
        .collect();
    let plain = CodeOptions::default();
    let fast =
        |uj: &str| CodeOptions::default().with_settings(&["restrict=on", "simd=innermost", uj]).unwrap();
    for tiles in [vec![32], vec![64], vec![32, 32, 128]] {
        for code in [plain.clone(), fast("unroll_jam=1"), fast("unroll_jam=2"), fast("unroll_jam=4")] {
            let p = Point { scheduler: unified.clone(), tiles: Some(tiles.clone()), threads, code };
            out.push((p.to_string(), p));
        }
    }
    // Time-skewed stencils have no parallel loop until their tile loops are
    // skewed into a wavefront (the same as the other points elsewhere).
    let wavefront_options =
        UnifiedOptions { target, wavefront: vocab::knobs::Wavefront::All, ..Default::default() };
    let wavefront = Scheduler::Unified { preorder: None, options: wavefront_options };
    for tiles in [vec![32], vec![16, 64]] {
        let p =
            Point { scheduler: wavefront.clone(), tiles: Some(tiles), threads, code: fast("unroll_jam=1") };
        out.push((p.to_string(), p));
    }
    // Time-tiled stencils: each sweep in a loop of its own inside the tiles
    // (fission), vectorised; on one core as they are, on more in a wavefront.
    let fissioned = CodeOptions { fission: true, ..fast("unroll_jam=1") };
    for (scheduler, tiles) in [
        (&unified, vec![32]),
        (&unified, vec![64]),
        (&unified, vec![16, 16, 16, 64]),
        // heat-3d's innermost loop untiled at LARGE (n = 120).
        (&unified, vec![8, 8, 8, 256]),
        (&wavefront, vec![32]),
        (&wavefront, vec![16, 16, 16, 64]),
    ] {
        let p = Point { scheduler: scheduler.clone(), tiles: Some(tiles), threads, code: fissioned.clone() };
        out.push((p.to_string(), p));
    }
    // The stencils' winners again under Ice Lake's costs (`mtune`), which
    // load each point of a sweep once where Zen 3's reload it per use; under
    // them heat-3d's time tiles of 32 steps ran 5–10% ahead of 8.
    let tuned = CodeOptions { mtune: vocab::knobs::Mtune::IcelakeServer, ..fissioned.clone() };
    // A wavefront's tiles handed out as threads finish: the tiles of one
    // front differ in work (partial tiles at its ends), and on two threads
    // heat-3d's 8x8x8x256 ran in 0.85 s against 1.55 s in equal chunks.
    let dynamic = CodeOptions { omp_schedule: handed_out, ..tuned.clone() };
    for (scheduler, tiles, code) in [
        (&unified, vec![64], &tuned),
        (&unified, vec![8, 8, 8, 256], &tuned),
        (&unified, vec![32, 32, 32, 256], &tuned),
        (&wavefront, vec![32], &tuned),
        (&wavefront, vec![64], &dynamic),
        (&wavefront, vec![16, 64], &dynamic),
        (&wavefront, vec![8, 8, 8, 256], &dynamic),
    ] {
        let p = Point { scheduler: scheduler.clone(), tiles: Some(tiles), threads, code: code.clone() };
        out.push((p.to_string(), p));
    }
    // The register-pressure heuristic (hlim, §4.7) stops fusing the stencils'
    // statements under the time loop, leaving their space loops parallel.
    let options = UnifiedOptions { target, hlim: Some(4), ..Default::default() };
    let split = Scheduler::Unified { preorder: None, options };
    for tiles in [None, Some(vec![32])] {
        let p = Point { scheduler: split.clone(), tiles, threads, code: fast("unroll_jam=1") };
        out.push((p.to_string(), p));
    }
    // gcc prefers 256-bit vectors even where 512-bit ones exist.
    let mut wide = fast("unroll_jam=4");
    wide.vector_width = 512;
    let p = Point { scheduler: unified.clone(), tiles: Some(vec![32, 32, 128]), threads, code: wide.clone() };
    out.push((p.to_string(), p));
    // Read-only matrices walked down their columns read through transposed
    // copies (syrk, syr2k; elsewhere the same program as above), their
    // triangular loops handed out dynamically.
    let transposed = CodeOptions { transpose: true, omp_schedule: handed_out, ..wide };
    for tiles in [vec![32, 32, 128], vec![16, 64, 128]] {
        let p = Point { scheduler: unified.clone(), tiles: Some(tiles), threads, code: transposed.clone() };
        out.push((p.to_string(), p));
    }
    // Micro tiles (4 rows by 32 columns, the reduction loop outside them,
    // the written block in registers), plain and over transposed copies.
    for (code, tiles) in [
        (&wide, vec![32, 32, 128]),
        (&wide, vec![96, 128, 256]),
        (&transposed, vec![16, 64, 128]),
        (&transposed, vec![96, 128, 256]),
    ] {
        let code = CodeOptions { micro_tile: (4, 32), ..code.clone() };
        let p = Point { scheduler: unified.clone(), tiles: Some(tiles.clone()), threads, code: code.clone() };
        out.push((p.to_string(), p));
        // The same under Ice Lake's costs, which keep the tile's row
        // operand in a register where the machine's own may not.
        let code = CodeOptions { mtune: vocab::knobs::Mtune::IcelakeServer, ..code };
        let p = Point { scheduler: unified.clone(), tiles: Some(tiles.clone()), threads, code: code.clone() };
        out.push((p.to_string(), p));
        // And with the tile's sums reassociated: `alpha` once per tile,
        // syr2k's two products one multiply-add each.
        let code = CodeOptions { reassociate: true, ..code };
        let p = Point { scheduler: unified.clone(), tiles: Some(tiles), threads, code };
        out.push((p.to_string(), p));
    }
    out
}

/// The peers every campaign measures before searching (docs/design.md,
/// "Reference points"): the identity schedule, isl's scheduler as ppcg uses it, and a
/// Pluto-like setting of ours (no spatial proximity, maximal fusion as far as
/// legal, Pluto's post-tile reordering); with GPU points (`gpu`), also isl's
/// scheduler as ppcg runs it for GPUs, mapped to the GPU.
pub fn references(threads: usize, max_fusion: Option<Preorder>, gpu: bool) -> Vec<Point> {
    let tiled = |scheduler| Point { scheduler, tiles: Some(vec![32]), threads, code: CodeOptions::default() };
    let mut out = vec![
        Point { scheduler: Scheduler::Original, tiles: None, threads, code: CodeOptions::default() },
        tiled(Scheduler::Isl),
        tiled(Scheduler::Unified { preorder: max_fusion, options: pluto_like(threads) }),
    ];
    if gpu {
        out.push(tiled(Scheduler::IslGpu));
    }
    out
}

/// A point measured on another machine, made a point of this campaign
/// (`spec`): its threads, and its CPU target for them; `None` for a kind of
/// point the campaign does not measure (a GPU point in a CPU campaign and
/// the reverse) and for the reference points, which every campaign
/// measures anyway.
pub fn transferred(mut p: Point, spec: &Spec) -> Option<Point> {
    let Scheduler::Unified { options, .. } = &mut p.scheduler else {
        return None;
    };
    let target = match options.target {
        Target::Gpu => Target::Gpu,
        _ if spec.threads > 1 => Target::Openmp,
        _ => Target::Seq,
    };
    if !spec.knobs.iter().any(|o| o.target == target) {
        return None;
    }
    options.target = target;
    p.threads = spec.threads;
    Some(p)
}

/// The names `--references` takes, as [`reference_label`] gives them.
pub const REFERENCE_NAMES: [&str; 4] = ["identity", "isl", "pluto-like", "isl-gpu"];

/// `--references`' value: `all` (`None`), `none`, or names of
/// [`REFERENCE_NAMES`], comma-separated.
#[derive(Debug, Clone, PartialEq)]
pub struct References(pub Option<Vec<String>>);

pub fn parse_references(text: &str) -> Result<References, String> {
    match text.trim() {
        "all" => Ok(References(None)),
        "none" | "" => Ok(References(Some(Vec::new()))),
        names => {
            let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
            match names.iter().find(|n| !REFERENCE_NAMES.contains(&n.as_str())) {
                Some(n) => Err(format!(
                    "unknown reference point `{n}` (all, none, or some of {})",
                    REFERENCE_NAMES.join(", ")
                )),
                None => Ok(References(Some(names))),
            }
        }
    }
}

fn pluto_like(threads: usize) -> UnifiedOptions {
    UnifiedOptions {
        target: if threads > 1 { Target::Openmp } else { Target::Seq },
        spatial: vocab::knobs::Spatial::Off,
        posttile_reorder: vocab::knobs::PostTileReorder::Pluto,
        ..UnifiedOptions::default()
    }
}

/// The name reports give a point of [`references`]; `None` for any other point. (The
/// Pluto-like point is recognised by its knobs and tiles whatever its preorder, which is
/// the kernel's maximal fusion.)
pub fn reference_label(p: &Point) -> Option<String> {
    let name = match &p.scheduler {
        Scheduler::Original if p.tiles.is_none() => "identity",
        Scheduler::Isl if p.tiles.as_deref() == Some(&[32]) => "isl",
        Scheduler::IslGpu if p.tiles.as_deref() == Some(&[32]) => "isl-gpu",
        Scheduler::Unified { options, .. }
            if *options == pluto_like(p.threads) && p.tiles.as_deref() == Some(&[32]) =>
        {
            "pluto-like"
        }
        Scheduler::Peer { name } => name,
        _ => return None,
    };
    Some(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_chosen_by_their_labels() {
        assert_eq!(parse_references("all"), Ok(References(None)));
        assert_eq!(parse_references("none"), Ok(References(Some(Vec::new()))));
        assert_eq!(
            parse_references("isl-gpu, isl"),
            Ok(References(Some(vec!["isl-gpu".into(), "isl".into()])))
        );
        let err = parse_references("isl,pluto").unwrap_err();
        assert!(err.contains("`pluto`") && err.contains("pluto-like"), "{err}");
        // Every name parses and is the label of one reference point.
        let labels: Vec<_> = references(2, None, true).iter().filter_map(reference_label).collect();
        assert_eq!(labels, REFERENCE_NAMES);
    }

    #[test]
    fn every_reference_has_a_label_and_search_points_mostly_none() {
        for threads in [1, 2] {
            let labels: Vec<_> = references(threads, None, false).iter().map(reference_label).collect();
            assert_eq!(labels, [Some("identity".into()), Some("isl".into()), Some("pluto-like".into())]);
            let gpu: Vec<_> = references(threads, None, true).iter().map(reference_label).collect();
            assert_eq!(gpu.last(), Some(&Some("isl-gpu".into())));
        }
        let code = vec![CodeOptions::default()];
        let tiles = parse_tiles(TILES).unwrap();
        let spec = Spec {
            knobs: knob_grid(&[], 2).unwrap(),
            code,
            gpu_code: Vec::new(),
            tiles,
            threads: 2,
            seed: 0,
            peers: Vec::new(),
            references: None,
        };
        let labelled = points(&[None], &spec).iter().filter(|p| reference_label(p).is_some()).count();
        // Only the grid point with the Pluto-like knobs, 32-tiles and default code is the same point.
        assert_eq!(labelled, 1);
    }

    /// Diamond tiles stay in the grid of a stencil, whose time band they
    /// mirror, and leave that of a product, which has no time row.
    #[test]
    fn diamond_tiles_are_searched_only_where_a_time_band_has_a_skew() {
        let model = |text: &str| {
            let scop =
                model::scop::extract_preprocessed(std::path::Path::new("k.c"), text).unwrap().remove(0);
            let deps = model::deps::analyze(&scop).unwrap();
            (scop, deps)
        };
        let knobs = knob_grid(&[], 2).unwrap();
        let stencil = model(
            "void f(int T, int n, double A[n], double B[n]) {\n#pragma scop\n\
             for (int t = 0; t < T; t++) {\n for (int i = 1; i < n - 1; i++)\n B[i] = A[i - 1] + A[i + 1];\n\
             for (int i = 1; i < n - 1; i++)\n A[i] = B[i - 1] + B[i + 1];\n }\n#pragma endscop\n}\n",
        );
        assert_eq!(knobs_for_scop(&knobs, &stencil.0, &stencil.1), knobs);
        let product = model(
            "void f(int n, double C[n][n], double A[n][n], double B[n][n]) {\n#pragma scop\n\
             for (int i = 0; i < n; i++)\n for (int k = 0; k < n; k++)\n for (int j = 0; j < n; j++)\n\
             C[i][j] += A[i][k] * B[k][j];\n#pragma endscop\n}\n",
        );
        let kept = knobs_for_scop(&knobs, &product.0, &product.1);
        assert!(kept.iter().all(|o| !o.diamond) && kept.len() * 2 == knobs.len(), "{}", kept.len());
        assert!(kept.iter().all(|o| o.wavefront != Wavefront::Single));
    }

    #[test]
    fn transpose_and_fission_are_searched_only_where_they_can_act() {
        let scop = |statement: &str| {
            let text = format!(
                "void f(int n, double C[n][n], double A[n][n], double B[n][n]) {{\n#pragma scop\n\
                 for (int i = 0; i < n; i++)\n for (int k = 0; k < n; k++)\n for (int j = 0; j <= i; j++)\n\
                 {statement}\n#pragma endscop\n}}\n"
            );
            model::scop::extract_preprocessed(std::path::Path::new("k.c"), &text).unwrap().remove(0)
        };
        let code = code_grid(&[], 2, false).unwrap();
        let syrk = for_scop(&code, &scop("C[i][j] += A[i][k] * A[j][k];")).unwrap();
        // No scalar to expand in any of these: `expand` is never searched.
        assert_eq!(syrk.len(), code.len() / 4);
        assert!(syrk.iter().all(|c| !c.fission) && syrk.iter().any(|c| c.transpose));
        let gemm = for_scop(&code, &scop("C[i][j] += A[i][k] * B[k][j];")).unwrap();
        assert_eq!(gemm.len(), code.len() / 8);
        assert!(gemm.iter().all(|c| !c.transpose && !c.fission));
        assert!(gemm.iter().any(|c| c.micro_tile != (0, 0)));
        // An element written once: no micro tile keeps anything.
        let once = for_scop(&code, &scop("C[i + k][j] = A[i][k] * B[k][j];")).unwrap();
        assert!(
            once.iter().all(|c| c.micro_tile == (0, 0) && !c.reassociate) && once.len() == gemm.len() / 3
        );
        // Two statements three loops deep: a loop may run both.
        let two = for_scop(&code, &scop("{ C[i][j] += A[i][k] * A[j][k]; B[i][j] += A[i][k]; }")).unwrap();
        assert_eq!(two.len(), code.len() / 2);
        assert!(two.iter().all(|c| !c.expand) && two.iter().any(|c| c.transpose && c.fission));
        // A scalar written and read in each iteration: expanded or not.
        let text = "void f(int n, double C[n][n], double A[n][n]) { double s;\n#pragma scop\n\
                    for (int i = 0; i < n; i++)\n for (int j = 0; j < n; j++) {\n s = A[i][j];\n C[i][j] = s * s;\n }\n\
                    #pragma endscop\n}\n";
        let scalar = model::scop::extract_preprocessed(std::path::Path::new("k.c"), text).unwrap().remove(0);
        let scalar = for_scop(&code, &scalar).unwrap();
        assert!(scalar.iter().any(|c| c.expand) && scalar.iter().any(|c| !c.expand));
    }

    #[test]
    fn tile_shapes_that_tile_a_scop_alike_are_searched_once() {
        let scop = |loops: &str, statement: &str| {
            let text = format!(
                "void f(int n, double A[n][n][n], double B[n][n][n]) {{\n#pragma scop\n{loops}\n\
                 {statement}\n#pragma endscop\n}}\n"
            );
            model::scop::extract_preprocessed(std::path::Path::new("k.c"), &text).unwrap().remove(0)
        };
        let tiles = parse_tiles(TILES).unwrap();
        let three = "for (int i = 1; i < n; i++)\n for (int j = 1; j < n; j++)\n for (int k = 1; k < n; k++)";
        let gemm_like = tiles_for_scop(&tiles, &scop(three, "A[i][j][k] = B[i][j][k] + B[i-1][j][k];"));
        let shapes: Vec<&str> =
            TILES.split(',').filter(|&t| t != "32x32x32x256" && t != "16x16x16x64").collect();
        assert_eq!(gemm_like, parse_tiles(&shapes.join(",")).unwrap());
        let four = format!("for (int t = 0; t < n; t++)\n{three}");
        assert_eq!(tiles_for_scop(&tiles, &scop(&four, "A[i][j][k] = B[i][j][k] + A[i-1][j][k];")), tiles);
        // Two loops deep, 32x32x128 tiles like 32 and 16x64x128 like 16x64.
        let two = tiles_for_scop(
            &tiles,
            &scop("for (int i = 1; i < n; i++)\n for (int j = 1; j < n; j++)", "A[i][j][0] = A[i-1][j][0];"),
        );
        assert_eq!(two, parse_tiles("0,16,32,64,16x64x128,96x128x256,8x8x8x256").unwrap());
    }

    #[test]
    fn fixed_knobs_leave_the_grid_and_bad_ones_are_errors() {
        let full = knob_grid(&[], 2).unwrap();
        let axes = AXES.iter().map(|(_, v)| v.len()).product::<usize>();
        // The wavefront's half of the grid without diamond tiles, and with
        // them under `wavefront=all` and `single`.
        assert_eq!(full.len(), 2 * axes);
        assert!(full.iter().all(|o| !o.diamond || o.wavefront != Wavefront::None));
        let diamond = |w: Wavefront| full.iter().filter(|o| o.diamond && o.wavefront == w).count();
        assert_eq!((diamond(Wavefront::All), diamond(Wavefront::Single)), (axes / 2, axes / 2));
        assert!(full.iter().all(|o| o.diamond || o.wavefront != Wavefront::Single));
        // A wavefront the user fixes is the only one, diamond tiles or not.
        let all = knob_grid(&["wavefront=all".into()], 2).unwrap();
        assert!(all.iter().all(|o| o.wavefront == Wavefront::All) && all.len() == axes);
        assert!(full.iter().all(|o| o.target == Target::Openmp));
        let fixed = knob_grid(&["spatial=off".into(), "hlim=8".into()], 1).unwrap();
        assert_eq!(fixed.len(), full.len() / 6);
        assert!(fixed.iter().all(|o| o.hlim == Some(8) && o.target == Target::Seq));
        let e = knob_grid(&["spatial=diagonal".into()], 1).unwrap_err().to_string();
        assert!(e.contains("off|per-reference|grouped"), "{e}");
        let code = code_grid(&["simd=none".into(), "spatial=off".into()], 1, false).unwrap();
        assert_eq!(
            code.len(),
            72,
            "unroll_jam 1, 2 and 4, transpose, expand and fission off and on, micro tiles off and on with their sums reassociated or not; no OpenMP schedule on one thread"
        );
        assert!(code.iter().all(|c| c.restrict && c.simd == vocab::knobs::Simd::None));
        assert_eq!(code_grid(&[], 2, false).unwrap().len(), 288);
        // On a compiler that targets AVX-512, the 512-bit width is searched
        // too, unless the user fixes or lists the widths; micro tiles are
        // four rows of four vectors there, six of two elsewhere.
        // gcc's tuning for Ice Lake likewise.
        let avx512 = code_grid(&[], 2, true).unwrap();
        assert_eq!(avx512.iter().filter(|c| c.vector_width == 512).count(), 576);
        assert_eq!(avx512.iter().filter(|c| c.vector_width == 0).count(), 576);
        assert_eq!(avx512.iter().filter(|c| c.mtune == vocab::knobs::Mtune::IcelakeServer).count(), 576);
        assert!(code_grid(&[], 2, false).unwrap().iter().all(|c| c.mtune == vocab::knobs::Mtune::Default));
        assert!(avx512.iter().any(|c| c.micro_tile == (4, 32)));
        assert!(code.iter().any(|c| c.micro_tile == (6, 8)));
        let one_width = code_grid(&["vector_width=256".into(), "mtune=generic".into()], 2, true).unwrap();
        assert!(one_width.len() == 288 && one_width.iter().all(|c| c.vector_width == 256));
        assert!(one_width.iter().all(|c| c.mtune == vocab::knobs::Mtune::Generic));
        // Several values: searched over exactly these, on either table.
        let wide = code_grid(&["vector_width=default,512".into(), "hlim=4,8".into()], 2, false).unwrap();
        assert_eq!(wide.len(), 576);
        assert_eq!(wide.iter().filter(|c| c.vector_width == 512).count(), 288);
        let hlims = knob_grid(&["vector_width=default,512".into(), "hlim=4,8".into()], 2).unwrap();
        assert_eq!(hlims.len(), full.len());
        assert!(hlims.iter().all(|o| o.hlim == Some(4) || o.hlim == Some(8)));
        assert!(code_grid(&["vector_width=default,384".into()], 2, false)
            .unwrap_err()
            .to_string()
            .contains("512"));
        // GPU points search the block size, not the CPU's code knobs.
        let gpu = gpu_code_grid(&["target=gpu".into()]).unwrap();
        let blocks: Vec<(u32, u32)> = gpu
            .iter()
            .filter(|c| c.gpu_min_blocks == 0 && !c.gpu_mma)
            .map(|c| (c.gpu_block, c.gpu_thread_tile))
            .collect();
        let expected = [(128, 0), (128, 2), (128, 4), (256, 0), (256, 2), (256, 4), (0, 0), (0, 2), (0, 4)];
        assert_eq!(blocks, expected);
        // Each with three blocks a multiprocessor too, and each on tensor cores.
        assert_eq!(gpu.iter().filter(|c| c.gpu_min_blocks == 3).count(), 2 * expected.len());
        assert_eq!(gpu.iter().filter(|c| c.gpu_mma).count(), 2 * expected.len());
        assert!(gpu.iter().all(|c| CodeOptions {
            gpu_block: 0,
            gpu_thread_tile: 0,
            gpu_min_blocks: 0,
            gpu_mma: false,
            ..c.clone()
        } == CodeOptions { restrict: true, ..CodeOptions::default() }));
        assert!(code_grid(&[], 2, false).unwrap().iter().all(|c| c.gpu_block == 0));
        // ... and the Feautrier rows; in a campaign of both targets, each
        // point takes its own target's knobs.
        let both = knob_grid(&["target=openmp,gpu".into()], 2).unwrap();
        let on_gpu = both.iter().filter(|o| o.target == Target::Gpu).count();
        assert_eq!((both.len(), on_gpu), (full.len() + axes * 2, axes * 2));
        assert!(both.iter().all(|o| o.target == Target::Gpu || o.feautrier == vocab::knobs::Feautrier::All));
        let spec = Spec {
            knobs: both,
            code: code_grid(&[], 2, false).unwrap(),
            gpu_code: gpu.clone(),
            tiles: vec![None],
            threads: 2,
            seed: 0,
            peers: Vec::new(),
            references: None,
        };
        let pts = points(&[None], &spec);
        assert_eq!(pts.len(), full.len() * 288 + axes * 2 * 36);
        assert!(pts.iter().filter(|p| p.on_gpu()).all(|p| gpu.contains(&p.code)));
        let tiles = parse_tiles(TILES).unwrap();
        let spec = Spec {
            knobs: fixed.clone(),
            code: code.clone(),
            gpu_code: Vec::new(),
            tiles: tiles.clone(),
            threads: 1,
            seed: 0,
            peers: Vec::new(),
            references: None,
        };
        let pts = points(&[None], &spec);
        assert_eq!(pts.len(), fixed.len() * tiles.len() * code.len());
        let mut ids: Vec<String> = pts.iter().map(|p| p.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), pts.len(), "distinct points have distinct ids");
        assert_eq!(parse_tiles("0, 32,32,64").unwrap(), vec![None, Some(vec![32]), Some(vec![64])]);
        assert_eq!(parse_tiles("64x64x256").unwrap(), vec![Some(vec![64, 64, 256])]);
        assert!(parse_tiles("32,big").unwrap_err().contains("big"));
        assert!(parse_tiles("32x0").unwrap_err().contains("no size 0"));
    }
}
