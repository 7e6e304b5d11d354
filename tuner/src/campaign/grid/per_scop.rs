//! The grid narrowed to one SCoP: the knob values that would make the
//! programs (or schedules) other values make there are dropped, so that a
//! campaign does not spend evaluations on duplicates.

use super::Tiles;
use crate::error::Result;
use vocab::knobs::{CodeOptions, UnifiedOptions};

/// `code` for one SCoP: where no matrix is worth a transposed copy
/// (`space::layout::candidates`), `transpose=on` makes the programs `off`
/// makes; where no two statements are nested equally deep (two loops or
/// more), no innermost loop runs two statements and `fission=on` makes
/// them too; where no statement three loops deep writes the same element
/// along one of them, `micro_tile` finds no band (and `reassociate`, which
/// acts on micro tiles only, nothing); where no statement is a contraction
/// (`codegen::has_contraction`), `gpu_mma` finds no stage. Such knobs are
/// set off and the duplicates dropped.
pub fn for_scop(code: &[CodeOptions], scop: &model::scop::Scop) -> Result<Vec<CodeOptions>> {
    let ctx = model::isl::new_context();
    let transpose = !space::layout::candidates(&ctx, scop)?.is_empty();
    let depths: Vec<usize> = scop.statements.iter().map(|s| s.iterators.len()).filter(|&d| d >= 2).collect();
    let fission = depths.iter().enumerate().any(|(i, d)| depths[i + 1..].contains(d));
    let micro = codegen::reduces_in_three_loops(&ctx, scop)?;
    // Only where some scalar would get copies: else `expand=on` is the same program.
    let expand = !model::expansion::expand(&ctx, scop)?.expansions.is_empty();
    let mma = code.iter().any(|c| c.gpu_mma) && codegen::has_contraction(&ctx, scop)?;
    let mut out: Vec<CodeOptions> = Vec::new();
    for c in code {
        let c = CodeOptions {
            transpose: c.transpose && transpose,
            expand: c.expand && expand,
            fission: c.fission && fission,
            micro_tile: if micro { c.micro_tile } else { (0, 0) },
            reassociate: c.reassociate && micro,
            gpu_mma: c.gpu_mma && mma,
            ..c.clone()
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// `knobs` for one SCoP: where the CPU schedule of the core ILP with diamond
/// tiles mirrors no row (`space::schedule::RowKind::Diamond`: no band of a time
/// row and a skewed one), `diamond=on` makes the schedules `off` makes; it
/// is set off and the duplicates dropped, and so are the points with a
/// single wavefront that only diamond tiles brought. Only SCoPs whose
/// statements all sit in one outer loop are scheduled to find out.
pub fn knobs_for_scop(
    knobs: &[UnifiedOptions],
    scop: &model::scop::Scop,
    deps: &model::deps::Dependences,
) -> Vec<UnifiedOptions> {
    if !knobs.iter().any(|o| o.diamond) {
        return knobs.to_vec();
    }
    let outer = |s: &model::scop::Statement| s.iterators.first().cloned();
    let one_loop =
        scop.statements.iter().all(|s| s.iterators.len() >= 2 && outer(s) == outer(&scop.statements[0]));
    // The core ILP alone (spatial=off) answers in seconds where the locality
    // ILPs take a minute (adi); a schedule that fails here says nothing of
    // the other points: no diamond.
    let mirrors = one_loop && {
        let o = UnifiedOptions {
            diamond: true,
            spatial: vocab::knobs::Spatial::Off,
            ..UnifiedOptions::default()
        };
        space::schedule::unified(scop, deps, None, &o.scheduler())
            .is_ok_and(|s| s.rows.iter().any(|r| r.kind == space::schedule::RowKind::Diamond))
    };
    let mut out: Vec<UnifiedOptions> = Vec::new();
    for o in knobs {
        // A single wavefront is searched for diamond tiles' sake (`knob_grid`).
        if o.diamond && !mirrors && o.wavefront == vocab::knobs::Wavefront::Single {
            continue;
        }
        let o = UnifiedOptions { diamond: o.diamond && mirrors, ..o.clone() };
        if !out.contains(&o) {
            out.push(o);
        }
    }
    out
}

/// The tile shapes of `tiles` that make different programs of `scop`: no
/// band has more members than the deepest statement has loops, so shapes
/// equal over that many sizes (the last repeating) tile every band alike
/// (in gemm, `32x32x32x256` is the cube of 32). The first of each such set
/// is kept.
pub fn tiles_for_scop(tiles: &[Tiles], scop: &model::scop::Scop) -> Vec<Tiles> {
    let depth = scop.statements.iter().map(|s| s.iterators.len()).max().unwrap_or(0).max(1);
    let over_depth = |t: &Tiles| {
        t.as_ref().map(|sizes| (0..depth).map(|k| sizes.get(k).or(sizes.last()).copied()).collect::<Vec<_>>())
    };
    let mut out: Vec<Tiles> = Vec::new();
    for t in tiles {
        if !out.iter().any(|kept| over_depth(kept) == over_depth(t)) {
            out.push(t.clone());
        }
    }
    out
}
