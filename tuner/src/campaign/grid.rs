//! The space a campaign searches for one kernel: fusion preorders × the knob
//! grid × tile sizes, at a fixed thread count, plus the reference points that
//! every campaign measures first.

use anyhow::Result;
use space::knobs::{Point, Scheduler, SchedulerOptions, Target};
use space::preorder::Preorder;

/// The values each knob takes in the grid, as `KNOB=VALUE` settings. A knob
/// the user fixes with `--set` leaves the grid.
const AXES: &[(&str, &[&str])] = &[
    ("spatial", &["off", "per-reference", "grouped"]),
    ("posttile_reorder", &["none", "pluto"]),
    ("consecutivity", &["none", "global", "intra-tile"]),
    ("hlim", &["off", "4"]),
    ("wavefront", &["none", "all"]),
];

/// Tile sizes of permutable bands searched by default; `None` is untiled.
pub const TILES: &[Option<u32>] = &[None, Some(16), Some(32), Some(64)];

/// Everything but the fusion preorders that spans a kernel's space.
#[derive(Debug, Clone)]
pub struct Spec {
    pub knobs: Vec<SchedulerOptions>,
    pub tiles: Vec<Option<u32>>,
    pub threads: usize,
    /// Seeds the sample of fusion preorders when there are too many.
    pub seed: u64,
}

/// `0,16,32` → untiled, 16, 32.
pub fn parse_tiles(text: &str) -> Result<Vec<Option<u32>>, String> {
    let mut out = Vec::new();
    for t in text.split(',') {
        let n: u32 = t.trim().parse().map_err(|_| format!("`{t}` is not a tile size (0 means untiled)"))?;
        let tile = (n > 0).then_some(n);
        if !out.contains(&tile) {
            out.push(tile);
        }
    }
    Ok(out)
}

/// The knob grid: the defaults (target from the thread count) with `fixed`
/// applied, times every value of each knob not in `fixed`. Fails on an
/// unknown knob or value in `fixed`.
pub fn knob_grid(fixed: &[String], threads: usize) -> Result<Vec<SchedulerOptions>> {
    let target = if threads > 1 { "openmp" } else { "seq" };
    let base =
        SchedulerOptions::default().with_settings(&[format!("target={target}")])?.with_settings(fixed)?;
    let fixed_names: Vec<String> =
        fixed.iter().filter_map(|s| s.split_once('=')).map(|(k, _)| k.trim().replace('-', "_")).collect();
    let mut grid = vec![base];
    for (knob, values) in AXES.iter().filter(|(k, _)| !fixed_names.iter().any(|f| f == k)) {
        grid = grid
            .into_iter()
            .flat_map(|o| values.iter().map(move |v| o.clone().with_settings(&[format!("{knob}={v}")])))
            .collect::<Result<_, _>>()?;
    }
    Ok(grid)
}

/// Every point of preorders × knobs × tiles, in that nesting order.
pub fn points(preorders: &[Option<Preorder>], spec: &Spec) -> Vec<Point> {
    let mut out = Vec::new();
    for preorder in preorders {
        for options in &spec.knobs {
            for tile in &spec.tiles {
                out.push(Point {
                    scheduler: Scheduler::Unified { preorder: preorder.clone(), options: options.clone() },
                    tiles: tile.map(|t| vec![t]),
                    threads: spec.threads,
                });
            }
        }
    }
    out
}

/// The peers every campaign measures before searching (DESIGN: reference
/// modes): the identity schedule, isl's scheduler as ppcg uses it, and a
/// Pluto-like setting of ours (no spatial proximity, maximal fusion as far as
/// legal, Pluto's post-tile reordering).
pub fn references(threads: usize, max_fusion: Option<Preorder>) -> Vec<Point> {
    vec![
        Point { scheduler: Scheduler::Original, tiles: None, threads },
        Point { scheduler: Scheduler::Isl, tiles: Some(vec![32]), threads },
        Point {
            scheduler: Scheduler::Unified { preorder: max_fusion, options: pluto_like(threads) },
            tiles: Some(vec![32]),
            threads,
        },
    ]
}

fn pluto_like(threads: usize) -> SchedulerOptions {
    SchedulerOptions {
        target: if threads > 1 { Target::Openmp } else { Target::Seq },
        spatial: space::knobs::Spatial::Off,
        posttile_reorder: space::knobs::PostTileReorder::Pluto,
        ..SchedulerOptions::default()
    }
}

/// The name reports give a point of [`references`]; `None` for any other point. (The
/// Pluto-like point is recognised by its knobs and tiles whatever its preorder, which is
/// the kernel's maximal fusion.)
pub fn reference_label(p: &Point) -> Option<String> {
    let name = match &p.scheduler {
        Scheduler::Original if p.tiles.is_none() => "identity",
        Scheduler::Isl if p.tiles.as_deref() == Some(&[32]) => "isl",
        Scheduler::Unified { options, .. }
            if *options == pluto_like(p.threads) && p.tiles.as_deref() == Some(&[32]) =>
        {
            "pluto-like"
        }
        _ => return None,
    };
    Some(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_has_a_label_and_search_points_mostly_none() {
        for threads in [1, 2] {
            let labels: Vec<_> = references(threads, None).iter().map(reference_label).collect();
            assert_eq!(labels, [Some("identity".into()), Some("isl".into()), Some("pluto-like".into())]);
        }
        let spec = Spec { knobs: knob_grid(&[], 2).unwrap(), tiles: TILES.to_vec(), threads: 2, seed: 0 };
        let labelled = points(&[None], &spec).iter().filter(|p| reference_label(p).is_some()).count();
        // Only the grid point with the Pluto-like knobs and 32-tiles is the same point.
        assert_eq!(labelled, 1);
    }

    #[test]
    fn fixed_knobs_leave_the_grid_and_bad_ones_are_errors() {
        let full = knob_grid(&[], 2).unwrap();
        assert_eq!(full.len(), AXES.iter().map(|(_, v)| v.len()).product::<usize>());
        assert!(full.iter().all(|o| o.target == Target::Openmp));
        let fixed = knob_grid(&["spatial=off".into(), "hlim=8".into()], 1).unwrap();
        assert_eq!(fixed.len(), full.len() / 6);
        assert!(fixed.iter().all(|o| o.hlim == Some(8) && o.target == Target::Seq));
        let e = knob_grid(&["spatial=diagonal".into()], 1).unwrap_err().to_string();
        assert!(e.contains("off|per-reference|grouped"), "{e}");
        let spec = Spec { knobs: fixed.clone(), tiles: TILES.to_vec(), threads: 1, seed: 0 };
        let pts = points(&[None], &spec);
        assert_eq!(pts.len(), fixed.len() * TILES.len());
        let mut ids: Vec<String> = pts.iter().map(|p| p.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), pts.len(), "distinct points have distinct ids");
        assert_eq!(parse_tiles("0, 32,32,64").unwrap(), vec![None, Some(32), Some(64)]);
        assert!(parse_tiles("32,big").unwrap_err().contains("big"));
    }
}
