//! A CPU variant's steps on the schedule tree, one pass each, run in the
//! order of [`CPU`]. Each pass declares whether it may change the order in
//! which statement instances run, and the driver checks the tree against
//! the dependences again after every pass that says it may: a new pass is
//! checked because of what it declares, not because someone remembered to
//! add its knob to a list. (A GPU variant's one tree step, the mapping to
//! kernels, checks each band it maps as it maps it: `gpu::Mapping::checks`.)

use super::accumulate::{self, Accumulators};
use super::footprint::Bodies;
use super::pack::{self, Packing};
use super::transform::{transform, Transformed};
use super::{CodegenError, CodegenOptions};
use isl_rs::{Context, Schedule, UnionPwMultiAff};
use model::deps::Dependences;
use model::isl::IslResultExt;
use model::legality;
use model::scop::Scop;
use space::clay::Planned;

/// One step from tree to tree.
#[derive(Clone, Copy)]
pub(crate) struct Pass {
    pub reorders: Reorders,
    pub run: fn(&mut Stage<'_>) -> Result<(), CodegenError>,
}

/// What a pass may do to the order of statement instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reorders {
    /// Nothing: it adds marks, AST options or copies beside the instances.
    Never,
    /// What the steps it records say ([`space::clay::Action::reorders`]):
    /// the band walk, whose tiles and marks are checked as they are made.
    AsTraced,
    /// Anything, recording none of it: checked after every run. (None of
    /// the passes is, today; the tests' reversing pass is.)
    #[allow(dead_code)]
    Always,
}

/// The passes of a CPU variant, in order.
pub(crate) const CPU: &[Pass] = &[
    Pass { reorders: Reorders::AsTraced, run: bands },
    Pass { reorders: Reorders::Never, run: pack },
    Pass { reorders: Reorders::Never, run: accumulate },
];

/// The tree between passes and what they leave for printing it.
pub(crate) struct Stage<'a> {
    pub ctx: &'a Context,
    pub scop: &'a Scop,
    pub opts: &'a CodegenOptions,
    /// `None` only on the test-only unchecked path.
    pub deps: Option<&'a Dependences>,
    tree: Option<Schedule>,
    /// Some band holds isolated full tiles.
    pub isolated: bool,
    /// The SCoP's instances to the tree's domain, once a band lifted it
    /// (`Transformed::lift`): relations are read through it.
    pub lift: Option<UnionPwMultiAff>,
    /// What the band walk did, band by band.
    pub trace: Vec<Planned>,
    /// The tree's text as the last pass that may reorder left it.
    pub checked: String,
    /// The statements' bodies as packing and scalar replacement rewrite them.
    pub bodies: Bodies,
    pub packing: Packing,
    pub accumulators: Accumulators,
}

impl<'a> Stage<'a> {
    /// The given tree, whose text `checked` is.
    pub fn new(
        ctx: &'a Context,
        scop: &'a Scop,
        opts: &'a CodegenOptions,
        deps: Option<&'a Dependences>,
        (tree, checked): (Schedule, &str),
    ) -> Self {
        Stage {
            ctx,
            scop,
            opts,
            deps,
            tree: Some(tree),
            isolated: false,
            lift: None,
            trace: Vec::new(),
            checked: checked.to_string(),
            bodies: Bodies::default(),
            packing: Packing::default(),
            accumulators: Accumulators::default(),
        }
    }

    pub fn tree(&self) -> &Schedule {
        self.tree.as_ref().expect("a pass puts its tree back")
    }

    /// The tree, for a pass that returns it with [`Stage::put`].
    pub fn take(&mut self) -> Schedule {
        self.tree.take().expect("a pass puts its tree back")
    }

    pub fn put(&mut self, tree: Schedule) {
        self.tree = Some(tree);
    }

    /// `tree` as text on the SCoP's statement instances: a band tiled with
    /// tile iterators (`Walk::tile_lifted`) reads `floor(phi / size)` there,
    /// as `band_tile` would have it.
    pub fn text(&self, tree: &Schedule) -> Result<String, CodegenError> {
        let what = || "printing the schedule".to_string();
        let tree = match &self.lift {
            None => tree.copy().ctx(what)?,
            Some(l) => tree.copy().ctx(what)?.pullback_union_pw_multi_aff(l.copy().ctx(what)?).ctx(what)?,
        };
        Ok(tree.to_str().ctx(what)?.to_string())
    }
}

/// Checks the schedule-tree text `text` against `deps` (none: unchecked).
pub(crate) fn check(
    ctx: &Context,
    scop: &Scop,
    deps: Option<&Dependences>,
    text: &str,
) -> Result<(), CodegenError> {
    let Some(deps) = deps else { return Ok(()) };
    let v = legality::violations(ctx, &scop.context, text, deps)?;
    match v.is_empty() {
        true => Ok(()),
        false => Err(CodegenError::Illegal(v)),
    }
}

/// Runs `passes` in order on `stage`, checking the tree after each that may
/// have reordered it.
pub(crate) fn run(stage: &mut Stage<'_>, passes: &[Pass]) -> Result<(), CodegenError> {
    for pass in passes {
        let traced = stage.trace.len();
        (pass.run)(stage)?;
        let recheck = match pass.reorders {
            Reorders::Never => continue,
            Reorders::AsTraced => stage.trace[traced..].iter().any(|p| p.action.reorders()),
            Reorders::Always => true,
        };
        stage.checked = stage.text(stage.tree())?;
        if recheck {
            check(stage.ctx, stage.scop, stage.deps, &stage.checked)?;
        }
    }
    Ok(())
}

/// Tiling, parallel marks, wavefronts, point-loop orders, register tiles
/// and fission, band by band (`transform`); tiles are checked permutable
/// as they are made.
fn bands(stage: &mut Stage<'_>) -> Result<(), CodegenError> {
    let tree = stage.take();
    let checks = stage.deps.map(|d| (stage.scop.context.as_str(), d));
    let Transformed { tree, isolated, lift, trace } =
        transform(stage.ctx, stage.scop, tree, stage.opts, checks)?;
    stage.lift = match lift {
        Some(l) => Some(UnionPwMultiAff::from_union_map(l).ctx(|| "lifted instances".into())?),
        None => None,
    };
    stage.put(tree);
    stage.isolated = isolated;
    stage.trace.extend(trace);
    Ok(())
}

/// Packed tiles (`pack=on`): copies into contiguous buffers grafted above
/// the tiles that read them.
fn pack(stage: &mut Stage<'_>) -> Result<(), CodegenError> {
    if !stage.opts.code.pack {
        return Ok(());
    }
    let tree = stage.take();
    let (tree, packing) = pack::apply(stage.ctx, stage.scop, tree, &mut stage.bodies)?;
    stage.put(tree);
    stage.packing = packing;
    Ok(())
}

/// Micro tiles' written elements kept in registers, and scalar replacement.
fn accumulate(stage: &mut Stage<'_>) -> Result<(), CodegenError> {
    let tree = stage.take();
    let reassociate = stage.opts.code.reassociate;
    // The dependences name the SCoP's instances: not those of a lifted tree.
    let deps = stage.deps.filter(|_| stage.lift.is_none());
    let (tree, acc) = accumulate::apply(stage.ctx, stage.scop, tree, deps, &mut stage.bodies, reassociate)?;
    stage.put(tree);
    stage.accumulators = acc;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use isl_rs::MultiUnionPwAff;
    use model::scop::{extract, ExtractOptions};
    use vocab::knobs::UnifiedOptions;

    /// Runs the outermost band backwards: jacobi-1d's time loop reversed
    /// reads each step's values before they are computed.
    fn reverse_outermost_band(stage: &mut Stage<'_>) -> Result<(), CodegenError> {
        let what = || "reversing the outermost band".to_string();
        let mut node = stage.take().get_root().ctx(what)?;
        while node.get_type().ctx(what)? != isl_rs::ScheduleNodeType::Band {
            node = node.child(0).ctx(what)?;
        }
        let reversed: MultiUnionPwAff = node.band_get_partial_schedule().ctx(what)?.neg().ctx(what)?;
        let node = node.delete().ctx(what)?.insert_partial_schedule(reversed).ctx(what)?;
        stage.put(node.get_schedule().ctx(what)?);
        Ok(())
    }

    fn jacobi_1d() -> (model::scop::Source, Scop, Dependences) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench/stencils/jacobi-1d.c");
        let opts = ExtractOptions { cc_args: vec!["-DMINI_DATASET".into()], ..Default::default() };
        let (source, mut scops) = extract(&path, &opts).unwrap();
        let scop = scops.remove(0);
        let deps = model::deps::analyze(&scop).unwrap();
        (source, scop, deps)
    }

    /// The driver checks the tree after a pass because the pass says it may
    /// reorder: the same reversing pass declared `Never` goes through
    /// unchecked (and would be wrong code).
    #[test]
    fn a_pass_that_may_reorder_is_checked_after_it_runs() {
        let (source, scop, deps) = jacobi_1d();
        let opts = CodegenOptions::for_point(None, 1, Some(&UnifiedOptions::default()));
        let with = |reorders| {
            let passes = [CPU, &[Pass { reorders, run: reverse_outermost_band }]].concat();
            crate::generate_inner(&source, &scop, Some(&deps), &scop.schedule, &opts, &passes)
        };
        match with(Reorders::Always) {
            Err(CodegenError::Illegal(v)) => assert!(!v.is_empty()),
            other => panic!("the reversed time loop was not refused: {:?}", other.map(|v| v.schedule)),
        }
        let unchecked = with(Reorders::Never).expect("a pass declared not to reorder is not checked");
        assert!(unchecked.region.contains("-"), "{}", unchecked.region);
        // Without the reversing pass the given tree is legal.
        crate::generate_inner(&source, &scop, Some(&deps), &scop.schedule, &opts, CPU).unwrap();
    }

    /// The band walk is checked after it when its trace holds a step that
    /// reorders beyond what it proved as it went (a wavefront), and not
    /// for tiles and marks alone.
    #[test]
    fn the_band_walk_is_checked_as_its_trace_says() {
        use space::clay::Action;
        use vocab::knobs::Wavefront;
        let (source, scop, deps) = jacobi_1d();
        let tiles = CodegenOptions::for_point(Some(vec![16]), 2, Some(&UnifiedOptions::default()));
        let wave = CodegenOptions { wavefront: Wavefront::All, ..tiles.clone() };
        let s = space::schedule::unified(&scop, &deps, None, &UnifiedOptions::default().scheduler()).unwrap();
        for (opts, reorders) in [(tiles, false), (wave, true)] {
            let v = crate::generate(&source, &scop, &deps, &s.tree, &opts).unwrap();
            assert!(v.bands.iter().any(|p| matches!(p.action, Action::Tile { .. })), "{:?}", v.bands);
            assert_eq!(v.bands.iter().any(|p| p.action.reorders()), reorders, "{:?}", v.bands);
        }
    }
}
