//! Mutation smoke test on the official PolyBench layout (a kernel file plus
//! the utilities translation unit, `space/tests/fixtures/official`): the
//! original and a generated variant verify `ok`, and mutants of the SCoP
//! (an operator flipped, an iteration dropped) are caught as `wrong`.

use std::path::{Path, PathBuf};

use codegen::{self, CodegenOptions};
use executor::build::Extras;
use executor::measure::Status;
use executor::verify::Tolerance;
use model::deps;
use model::scop::{self, ExtractOptions};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("space/tests/fixtures/official")
}

#[test]
fn mutants_of_an_official_layout_kernel_are_caught() {
    let dir = fixtures();
    let cpp_args = vec!["-DSMALL_DATASET".to_string(), format!("-I{}", dir.display())];
    let opts = ExtractOptions { cc_args: cpp_args.clone(), ..Default::default() };
    let (source, mut scops) = scop::extract(&dir.join("gemm.c"), &opts).unwrap();
    let scop = scops.remove(0);
    let deps = deps::analyze(&scop).unwrap();

    let extras = Extras { sources: vec![dir.join("polybench.c")], cpp_args, cflags: vec![], ldflags: vec![] };
    let mut ev = testkit::evaluator("official", &["-O2", "-fopenmp"], None, Tolerance::default());
    ev.builder = ev.builder.with_extras(&extras).unwrap();

    let original = codegen::original_program(&source, &scop).unwrap();
    let reference = ev.reference(&original).unwrap();
    let tiled = CodegenOptions { tile_sizes: Some(vec![16]), ..Default::default() };
    let variant = codegen::generate(&source, &scop, &deps, &scop.schedule, &tiled).unwrap().program;

    // Mutants of the original's SCoP, as a wrong transformation would make them.
    let region = original.find("polytune: SCoP of").unwrap();
    let (head, body) = original.split_at(region);
    let mutants = [
        ("`+=` flipped to `-=`", format!("{head}{}", body.replacen("+=", "-=", 1))),
        (
            "the last `j` of the scaling dropped",
            format!("{head}{}", body.replacen("j < nj;", "j < nj - 1;", 1)),
        ),
    ];
    for (what, m) in &mutants {
        assert_ne!(m, &original, "{what}: the mutation did not apply");
    }
    let programs: Vec<String> =
        std::iter::once(variant).chain(mutants.iter().map(|(_, m)| m.clone())).collect();
    let got = ev.evaluate(&reference, &programs).unwrap();
    assert_eq!(got[0].status, Status::Ok, "the variant: {}", got[0].reason);
    for ((what, _), m) in mutants.iter().zip(&got[1..]) {
        assert_eq!(m.status, Status::Wrong, "{what}: {}", m.reason);
        assert!(m.reason.contains("`C`"), "{what}: {}", m.reason);
    }
}
