//! The default GPU grid's tensor-core points (issue 67): gemm at LARGE at
//! every tile shape and code setting a `tune --set target=gpu` campaign
//! offers with `gpu_mma=on`, generated, compiled by nvcc for sm_80 and
//! sm_90, and spilling nothing to local memory (ptxas's report, kept
//! beside each unit); where a block has too few warps for its tile's
//! fragments, the point is the program `gpu_mma=off` makes. The fast tier takes every fourth point, the heavy
//! tier the rest; without nvcc (and without `POLYTUNE_EXPECT_NVCC`) the
//! points are generated only.

use std::time::Duration;

use codegen::CodegenOptions;
use tuner::campaign::grid;
use vocab::knobs::UnifiedOptions;

#[test]
fn gemms_tensor_core_points_of_the_default_grid_spill_nothing() {
    let k = testkit::load("linear-algebra/gemm.c", "LARGE");
    let knobs = UnifiedOptions::default().with_settings(&["target=gpu"]).unwrap();
    let tiles = grid::tiles_for_scop(&grid::parse_tiles(grid::TILES).unwrap(), &k.scop);
    let code = grid::for_scop(&grid::gpu_code_grid(&["target=gpu".into()]).unwrap(), &k.scop).unwrap();
    let mma: Vec<_> = code.into_iter().filter(|c| c.gpu_mma).collect();
    assert_eq!(mma.len(), 18, "gemm is a contraction: every GPU code setting once with gpu_mma=on");
    let s = space::schedule::unified(&k.scop, &k.deps, None, &knobs.scheduler()).unwrap();
    let nvcc = executor::cuda::nvcc();
    assert!(
        nvcc.is_some() || std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(),
        "POLYTUNE_EXPECT_NVCC is set but no nvcc"
    );
    let dir = testkit::root().join("target/tmp/polytune-gpu-grid-units");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut spilled, mut untouched) = (Vec::new(), Vec::new());
    for (i, t) in tiles.iter().enumerate() {
        let Some(sizes) = t else { continue };
        for (j, c) in mma.iter().enumerate() {
            if !testkit::takes(i, j, 4, 1) {
                continue;
            }
            let shape: Vec<String> = sizes.iter().map(u32::to_string).collect();
            let gpu: Vec<String> = c.settings().into_iter().filter(|s| s.starts_with("gpu_")).collect();
            let name = format!("gemm.{}.{}", shape.join("x"), gpu.join(".").replace('=', "-"));
            let _item = testkit::item(format!("{name}: codegen and nvcc"), Duration::from_secs(600));
            let mut opts = CodegenOptions::for_point(Some(sizes.clone()), 1, Some(&knobs));
            opts.code = c.clone();
            let v = executor::pipeline::generate_variant(&k.source, &k.scop, &k.deps, &opts, &s.tree)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let unit = &v.cuda.as_ref().expect("gemm has a CUDA form").unit;
            if !unit.contains("nvcuda::wmma::mma_sync(") {
                // Too few warps for the tile's fragments: the program `gpu_mma=off` makes.
                opts.code.gpu_mma = false;
                let off = executor::pipeline::generate_variant(&k.source, &k.scop, &k.deps, &opts, &s.tree)
                    .unwrap();
                assert_eq!(
                    &off.cuda.unwrap().unit,
                    unit,
                    "{name}: no tensor cores, and not the program without"
                );
                untouched.push(name);
                continue;
            }
            let Some(nvcc) = &nvcc else { continue };
            let path = dir.join(format!("{name}.cu"));
            std::fs::write(&path, unit).unwrap();
            let report = executor::cuda::compile_report(nvcc, &path, &["sm_80", "sm_90"])
                .unwrap_or_else(|e| panic!("{name}: nvcc: {e}"));
            std::fs::write(dir.join(format!("{name}.ptxas.txt")), &report).unwrap();
            let spills = executor::cuda::spills(&report);
            if !spills.is_empty() {
                spilled.push(format!("{name}: {spills:?}"));
            }
        }
    }
    eprintln!(
        "{} point(s) where the tensor cores find too few warps:\n{}",
        untouched.len(),
        untouched.join("\n")
    );
    assert!(spilled.is_empty(), "points of the default grid that spill:\n{}", spilled.join("\n"));
}
