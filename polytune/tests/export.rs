//! `polytune export`: the tuned file, from a store that holds winners (made
//! here row by row, so that which point wins and on which CPU model does
//! not depend on this machine's timings). The exported file keeps every
//! line outside the SCoP, builds without new warnings, gives the original's
//! outputs, and with several machines takes each machine's branch where it
//! should; bad requests are refused with nothing written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{http_get, output, polytune, root, serve, temp_dir};
use sha2::{Digest, Sha256};
use store::{Record, Role, Store};
use vocab::knobs::{CodeOptions, Point, Scheduler, UnifiedOptions};

/// A point of our scheduler, tiles of 32, two threads, restricted
/// outlined bodies: the winner the store gets.
fn tuned_point() -> Point {
    tuned_with(&[])
}

/// [`tuned_point`] with more code knobs.
fn tuned_with(knobs: &[&str]) -> Point {
    let settings: Vec<String> = ["restrict=on"].iter().chain(knobs).map(|s| s.to_string()).collect();
    Point {
        scheduler: Scheduler::Unified { preorder: None, options: UnifiedOptions::default() },
        tiles: Some(vec![32]),
        threads: 2,
        code: CodeOptions::default().with_settings(&settings).unwrap(),
    }
}

/// The code knobs whose code reaches the exported file in its own ways
/// (file-scope buffers, register tiles, copies on the heap, split loops,
/// target pragmas), one set per kernel in turn.
const KNOBS: &[&[&str]] = &[
    &[],
    &["pack=on", "micro_tile=4x8", "reassociate=on"],
    &["transpose=on"],
    &["fission=on", "vector_width=512", "mtune=icelake-server"],
    &["unroll_jam=4", "omp_schedule=dynamic", "simd=innermost"],
];

/// A machine of the store: its name, the CPU model of its fingerprint, its winner.
struct Machine<'a> {
    name: &'a str,
    cpu_model: &'a str,
    point: Point,
}

/// `file`'s campaign on each machine at `dataset`: the original at 1 s, the
/// machine's point at 0.2 s, both verified.
fn seed(db: &Path, file: &Path, dataset: &str, machines: &[Machine]) {
    let timed: Vec<(&Machine, f64)> = machines.iter().map(|m| (m, 0.2)).collect();
    seed_scop(db, file, 0, dataset, &timed);
}

/// [`seed`] for SCoP `scop` of `file` (kernel `stem.scop`), each machine's
/// point at the time given (above 1 s: the original wins there).
fn seed_scop(db: &Path, file: &Path, scop: usize, dataset: &str, machines: &[(&Machine, f64)]) {
    let store = Store::open(db.to_str().unwrap()).unwrap();
    let bytes = std::fs::read(file).unwrap();
    let hash: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let kernel = tuner::campaign::kernel_name(file, scop);
    let program_hash = tuner::campaign::program_hash(&hash, scop, false);
    let program = store.program(&kernel, file.to_str().unwrap(), &program_hash, dataset).unwrap();
    for (n, (m, variant_s)) in machines.iter().enumerate() {
        let fingerprint = serde_json::json!({
            "cpu_model": m.cpu_model, "logical_cores": 2, "caches": [], "gpus": [],
            "compiler": "gcc", "compiler_version": "gcc 12", "flags": ["-O3", "-march=native", "-fopenmp"],
        });
        let machine = store.machine(m.name, &fingerprint.to_string()).unwrap();
        let config = serde_json::json!({
            "polytune": "test", "kernels": [{ "name": kernel, "path": file, "source_hash": hash, "scop": scop }],
            "dataset": dataset, "strategy": "random", "seed": 1, "threads": 2, "settings": [],
            "tiles": [], "runs": 3, "tolerance": 1e-9, "machine": m.name,
        });
        let campaign = store
            .campaign(&store::NewCampaign {
                key: format!("export-test-{stem}-{scop}-{n}-{}", m.name),
                config_json: config.to_string(),
                strategy: "random".into(),
                seed: 1,
                budget: vocab::Budget { evals: Some(2), time: None },
            })
            .unwrap();
        let original =
            Point { scheduler: Scheduler::Original, tiles: None, threads: 2, code: Default::default() };
        for (role, point, time) in [(Role::Reference, &original, 1.0), (Role::Variant, &m.point, *variant_s)]
        {
            store
                .record(&Record {
                    campaign: campaign.id,
                    program,
                    machine,
                    role,
                    point_id: point.id(),
                    point_json: serde_json::to_string(point).unwrap(),
                    schedule: None,
                    build: None,
                    status: store::Status::Ok,
                    reason: String::new(),
                    median_s: Some(time),
                    spread: Some(0.02),
                    samples: vec![time * 0.99, time, time * 1.01],
                    costs: None,
                    kernel_s: None,
                    origin: None,
                    rounding_noise: None,
                })
                .unwrap();
        }
    }
}

/// `polytune export ARGS --db DB` with its build cache in `dir`.
fn export(dir: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    output(polytune().arg("export").args(args).arg("--db").arg(db).env("XDG_CACHE_HOME", dir.join("cache")))
}

/// Every line of `original` outside its SCoP's lines appears in `exported`, in order.
fn kept_in_order(original: &str, exported: &str) {
    let mut rest = exported;
    let mut inside = false;
    for line in original.split_inclusive('\n') {
        let pragma = line.trim_start().trim_start_matches('#').trim_start();
        if pragma.starts_with("pragma scop") {
            inside = true;
        }
        let skip = inside;
        if pragma.starts_with("pragma endscop") {
            inside = false;
        }
        if skip {
            continue;
        }
        let at = rest.find(line).unwrap_or_else(|| panic!("line {line:?} is missing or out of order"));
        rest = &rest[at + line.len()..];
    }
}

/// gcc's warnings for `file` compiled as the default profile builds, with
/// `-Wall`, without their positions (a line moved by the export is the same warning).
fn warnings(file: &Path, dir_of_includes: &Path) -> Vec<String> {
    let out = output(
        Command::new("gcc")
            .args(["-O3", "-march=native", "-fopenmp", "-Wall", "-DSMALL_DATASET", "-c", "-o", "/dev/null"])
            .arg("-iquote")
            .arg(dir_of_includes)
            .arg(file),
    );
    assert!(out.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    let mut w: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.split_once("warning: ").map(|(_, w)| w.to_string()))
        .collect();
    w.sort();
    w
}

fn kernel(rel: &str) -> PathBuf {
    root().join("polybench").join(rel)
}

#[test]
fn an_exported_kernel_keeps_the_users_lines_builds_without_new_warnings_and_verifies() {
    let kernels: Vec<PathBuf> = testkit::kernels();
    let mut checked = 0;
    for (i, file) in kernels.iter().enumerate() {
        // Five kernels in the fast tier (each set of knobs once), ten more in the heavy one.
        if !testkit::takes(i, 0, 6, 2) {
            continue;
        }
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let dir = temp_dir(&format!("export-{name}"));
        let db = dir.join("store.db");
        let point = tuned_with(KNOBS[i % KNOBS.len()]);
        seed(&db, file, "SMALL", &[Machine { name: "here", cpu_model: "any", point }]);
        let out_file = dir.join(format!("{name}.c"));
        let out = export(&dir, &db, &[&name, "-o", out_file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(err.contains("verified: the export: outputs match the original's"), "{name}: {err}");
        let original = std::fs::read_to_string(file).unwrap();
        let exported = std::fs::read_to_string(&out_file).unwrap();
        kept_in_order(&original, &exported);
        for absent in ["polytune_rt_", "#pragma scop", "#define polytune_", "#define min", "#define floord"] {
            assert!(!exported.contains(absent), "{name}: the export holds `{absent}`");
        }
        // No warning that the original does not have (the pragma scop ones go).
        let (ours, theirs) =
            (warnings(&out_file, file.parent().unwrap()), warnings(file, file.parent().unwrap()));
        // gcc's "ignoring loop annotation" is its note on a `#pragma GCC
        // unroll` it cannot honour: the variant's, in its measurement too.
        let new: Vec<&String> =
            ours.iter().filter(|w| !theirs.contains(w) && *w != "ignoring loop annotation").collect();
        assert!(new.is_empty(), "{name}: warnings the export introduced: {new:?}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// The CPU model this machine's fingerprint reads.
fn this_cpu_model() -> String {
    let compiler = executor::build::Compiler::new("gcc", ["-O3"]);
    executor::machine::Fingerprint::detect(&compiler).unwrap().cpu_model
}

/// `exported` with a line after each branch's opening that says which ran
/// (`branch <label>`, `branch original`).
fn marked_branches(exported: &str, labels: &[&str]) -> String {
    let mut marked = exported.replace("  else {\n", "  else {\n fprintf(stderr, \"branch original\\n\");\n");
    for l in labels {
        let opening = format!("(polytune_machine == POLYTUNE_MACHINE_{l}) {{\n");
        marked = marked.replace(&opening, &format!("{opening} fprintf(stderr, \"branch {l}\\n\");\n"));
    }
    marked
}

#[test]
fn several_machines_are_chosen_by_define_by_cpu_model_and_by_name_with_the_original_last() {
    let file = kernel("linear-algebra/gemm.c");
    let dir = temp_dir("export-machines");
    let db = dir.join("store.db");
    let other = Point { tiles: Some(vec![16]), ..tuned_point() };
    let here = this_cpu_model();
    // The first machine's CPU is not this one: a faked fingerprint.
    seed(
        &db,
        &file,
        "SMALL",
        &[
            Machine { name: "far-away", cpu_model: "Imaginary CPU 9000", point: tuned_point() },
            Machine { name: "here", cpu_model: &here, point: other },
        ],
    );
    let out_file = dir.join("gemm.c");
    let out = export(&dir, &db, &["gemm", "--all-machines", "-o", out_file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for v in [
        "-DPOLYTUNE_TARGET=far_away",
        "POLYTUNE_MACHINE=here at run time",
        "no machine matched (the code as written)",
    ] {
        assert!(err.contains(&format!("verified: {v}")), "{v}: {err}");
    }
    // Each branch says that it ran: a line of ours after each branch's opening.
    let exported = std::fs::read_to_string(&out_file).unwrap();
    kept_in_order(&std::fs::read_to_string(&file).unwrap(), &exported);
    let marked = marked_branches(&exported, &["far_away", "here"]);
    assert_eq!(marked.matches("fprintf(stderr, \"branch").count(), 3, "{exported}");
    let marked_file = dir.join("marked.c");
    std::fs::write(&marked_file, marked).unwrap();
    let build = |defines: &[&str], binary: &str| -> Result<PathBuf, String> {
        let binary = dir.join(binary);
        let out = output(
            Command::new("gcc")
                .args(["-O2", "-fopenmp", "-DMINI_DATASET"])
                .args(defines)
                .arg("-iquote")
                .arg(file.parent().unwrap())
                .arg(&marked_file)
                .args(["-lm", "-o"])
                .arg(&binary),
        );
        match out.status.success() {
            true => Ok(binary),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    };
    let ran = |binary: &Path, env: Option<&str>| -> String {
        let mut cmd = Command::new(binary);
        cmd.env_remove("POLYTUNE_MACHINE").env("OMP_NUM_THREADS", "2").stdout(std::process::Stdio::null());
        if let Some(m) = env {
            cmd.env("POLYTUNE_MACHINE", m);
        }
        let out = output(&mut cmd);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        err.lines().filter(|l| l.starts_with("branch ")).collect::<Vec<_>>().join(",")
    };
    let chosen_at_run_time = build(&[], "run-time").unwrap();
    assert_eq!(ran(&chosen_at_run_time, None), "branch here", "this machine's CPU model");
    assert_eq!(ran(&chosen_at_run_time, Some("far_away")), "branch far_away");
    assert_eq!(ran(&chosen_at_run_time, Some("nowhere")), "branch original");
    let chosen_at_build_time = build(&["-DPOLYTUNE_TARGET=far_away"], "build-time").unwrap();
    assert_eq!(ran(&chosen_at_build_time, None), "branch far_away");
    let unknown = build(&["-DPOLYTUNE_TARGET=nowhere"], "unknown").unwrap_err();
    assert!(
        unknown.contains("POLYTUNE_TARGET names no machine of this export (known: far_away, here)"),
        "{unknown}"
    );
}

/// Two SCoPs in two functions, and a `main` that prints what they made.
const TWO: &str = r#"#include <stdio.h>

#define N 120
static double A[N][N], B[N][N], C[N][N];

static void blur(void)
{
  int i, j;
#pragma scop
  for (i = 1; i < N - 1; i++)
    for (j = 1; j < N - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
#pragma endscop
}

static void product(void)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      C[i][j] = 0.0;
      for (k = 0; k < N; k++)
        C[i][j] += B[i][k] * A[k][j];
    }
#pragma endscop
}

int main(void)
{
  double sum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 11.0;
  blur();
  product();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      sum += B[i][j] + C[i][j] * (1 + (i + j) % 3);
  printf("%.12e\n", sum);
  return 0;
}
"#;

/// Two SCoPs of one file on two machines, where the second's winner on
/// this machine is the original: one file, every branch verified, chosen
/// at run time by the machine's name or its CPU model, the code as written
/// where no machine matches (and for the SCoP the original won).
#[test]
fn two_scops_on_two_machines_go_into_one_file_each_chosen_by_machine() {
    let dir = temp_dir("export-two");
    let file = dir.join("two.c");
    std::fs::write(&file, TWO).unwrap();
    let db = dir.join("store.db");
    let here = this_cpu_model();
    let far = Machine { name: "far-away", cpu_model: "Imaginary CPU 9000", point: tuned_point() };
    let near =
        Machine { name: "here", cpu_model: &here, point: Point { tiles: Some(vec![16]), ..tuned_point() } };
    seed_scop(&db, &file, 0, "SMALL", &[(&far, 0.2), (&near, 0.3)]);
    seed_scop(&db, &file, 1, "SMALL", &[(&far, 0.2), (&near, 1.5)]);
    let out_file = dir.join("two.tuned.c");
    let out =
        export(&dir, &db, &[file.to_str().unwrap(), "--all-machines", "-o", out_file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for v in [
        "two: -DPOLYTUNE_TARGET=far_away: outputs match",
        "two: POLYTUNE_MACHINE=here at run time: outputs match",
        "two.1: POLYTUNE_MACHINE=far_away at run time: outputs match",
        "the file with 2 SCoPs replaced with -DPOLYTUNE_TARGET=here: compiles",
    ] {
        assert!(err.contains(&format!("verified: {v}")), "{v}: {err}");
    }
    let exported = std::fs::read_to_string(&out_file).unwrap();
    kept_in_order(TWO, &exported);
    assert_eq!(exported.matches("static int polytune_blur_machine(void)").count(), 1, "{exported}");
    let marked = dir.join("marked.c");
    std::fs::write(&marked, marked_branches(&exported, &["far_away", "here"])).unwrap();
    let binary = |source: &Path, defines: &[&str]| -> PathBuf {
        let binary = source.with_extension(format!("{}.bin", defines.len()));
        let built = output(
            Command::new("gcc").args(["-O2", "-fopenmp"]).args(defines).arg(source).arg("-o").arg(&binary),
        );
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        binary
    };
    let ran = |binary: &Path, machine: Option<&str>| -> (String, String) {
        let mut cmd = Command::new(binary);
        cmd.env_remove("POLYTUNE_MACHINE").env("OMP_NUM_THREADS", "2");
        if let Some(m) = machine {
            cmd.env("POLYTUNE_MACHINE", m);
        }
        let out = output(&mut cmd);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr);
        let branches = err.lines().filter(|l| l.starts_with("branch ")).collect::<Vec<_>>().join(",");
        (branches, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let want = ran(&binary(&file, &[]), None).1;
    let chosen = binary(&marked, &[]);
    for (machine, branches) in [
        (None, "branch here,branch original"),
        (Some("here"), "branch here,branch original"),
        (Some("far_away"), "branch far_away,branch far_away"),
        (Some("nowhere"), "branch original,branch original"),
    ] {
        let (b, printed) = ran(&chosen, machine);
        assert_eq!(b, branches, "{machine:?}");
        assert_eq!(printed, want, "{machine:?}: the outputs differ from the original's");
    }
    let built_for_far = binary(&marked, &["-DPOLYTUNE_TARGET=far_away"]);
    assert_eq!(ran(&built_for_far, Some("here")).0, "branch far_away,branch far_away");
}

/// A GPU winner (a row of the store: no GPU here) exported as the user's
/// file calling its host function and the CUDA unit beside it: the
/// emulation's outputs verified on the CPU, the file compiled, the unit
/// compiled by nvcc where there is one (CI has it) without the
/// measurement's timing, and the two built into one program.
#[test]
fn a_gpu_winner_is_exported_as_the_file_and_its_cuda_unit() {
    let file = kernel("linear-algebra/gemm.c");
    let dir = temp_dir("export-gpu");
    let db = dir.join("store.db");
    let gpu = ["target=gpu".to_string()];
    let point = Point {
        scheduler: Scheduler::Unified {
            preorder: None,
            options: UnifiedOptions::default().with_settings(&gpu).unwrap(),
        },
        tiles: Some(vec![32]),
        threads: 1,
        code: CodeOptions::default(),
    };
    seed(&db, &file, "SMALL", &[Machine { name: "gpu-box", cpu_model: "any", point }]);
    // Two files: without -o there is nowhere to put the unit.
    let out = export(&dir, &db, &["gemm"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("give -o"), "{err}");
    let out_file = dir.join("gemm.tuned.c");
    let out = export(&dir, &db, &["gemm", "-o", out_file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for v in [
        "its emulation on the CPU, the export: outputs match",
        "the file that calls the host function: compiles",
    ] {
        assert!(err.contains(&format!("verified: {v}")), "{v}: {err}");
    }
    let nvcc = executor::cuda::nvcc();
    assert!(nvcc.is_some() || std::env::var_os("POLYTUNE_EXPECT_NVCC").is_none(), "no nvcc");
    assert_eq!(nvcc.is_some(), err.contains("verified: the CUDA unit: compiles with"), "{err}");
    let c = std::fs::read_to_string(&out_file).unwrap();
    let cu = std::fs::read_to_string(out_file.with_extension("cu")).unwrap();
    kept_in_order(&std::fs::read_to_string(&file).unwrap(), &c);
    assert!(c.contains("polytune_gpu_kernel_gemm_") && !c.contains("polytune_rt_"), "{c}");
    assert!(c.contains("CUDA unit written beside this file"), "{c}");
    assert!(cu.contains("__global__") && cu.contains("extern \"C\" void polytune_gpu_kernel_gemm_"), "{cu}");
    for absent in ["getenv", "cudaEvent", "POLYTUNE_"] {
        assert!(!cu.contains(absent), "the unit holds `{absent}`:\n{cu}");
    }
    let Some(nvcc) = nvcc else { return };
    let binary = dir.join("gemm.tuned");
    let built = output(
        Command::new(&nvcc)
            .args(["-O3", "-arch=sm_90", "-Xcompiler", "-fopenmp", "-DSMALL_DATASET", "-I"])
            .arg(file.parent().unwrap())
            .arg(&out_file)
            .arg(out_file.with_extension("cu"))
            .args(["-lgomp", "-o"])
            .arg(&binary),
    );
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
}

/// A variant tuned under the model's assumption on leading dimensions
/// (`k <= lda`, `ldmatmul.c`) checks it where it runs: built at leading
/// dimensions shorter than its rows, the exported file runs the code as
/// written and prints what the original prints (at `PAD=-20` the tiled
/// code on overlapping rows would print another sum).
#[test]
fn an_export_runs_the_code_as_written_where_the_models_assumption_fails() {
    let file = root().join("space/tests/fixtures/own/ldmatmul.c");
    let dir = temp_dir("export-assumed");
    let db = dir.join("store.db");
    seed(&db, &file, "MINI", &[Machine { name: "here", cpu_model: "any", point: tuned_point() }]);
    let out_file = dir.join("ldmatmul.c");
    let out = export(&dir, &db, &["ldmatmul", "-o", out_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let exported = std::fs::read_to_string(&out_file).unwrap();
    assert!(exported.contains("lda >= k") && !exported.contains("polytune_rt_"), "{exported}");
    let printed = |source: &Path, pad: &str| -> String {
        let binary = dir.join(format!("{}{pad}.bin", source.file_stem().unwrap().to_str().unwrap()));
        common::printed(source, &["-DMINI_DATASET", &format!("-DPAD={pad}")], &binary, &[], &dir)
    };
    for pad in ["3", "0", "-3", "-20"] {
        assert_eq!(printed(&out_file, pad), printed(&file, pad), "PAD={pad}");
    }
}

#[test]
fn bad_requests_are_refused_with_their_reason_and_write_nothing() {
    let dir = temp_dir("export-refused");
    let db = dir.join("store.db");
    // A copy of gemm beside its harness' path, so that it can change.
    let copy_dir = dir.join("linear-algebra");
    std::fs::create_dir_all(&copy_dir).unwrap();
    std::fs::create_dir_all(dir.join("harness")).unwrap();
    std::fs::copy(root().join("polybench/harness/polytune.h"), dir.join("harness/polytune.h")).unwrap();
    let file = copy_dir.join("gemm.c");
    std::fs::copy(kernel("linear-algebra/gemm.c"), &file).unwrap();
    seed(&db, &file, "SMALL", &[Machine { name: "here", cpu_model: "any", point: tuned_point() }]);
    // atax: a program the store knows, never measured.
    let atax = kernel("linear-algebra/atax.c");
    let hash: String =
        Sha256::digest(std::fs::read(&atax).unwrap()).iter().map(|b| format!("{b:02x}")).collect();
    Store::open(db.to_str().unwrap())
        .unwrap()
        .program("atax", atax.to_str().unwrap(), &hash, "SMALL")
        .unwrap();
    let out_file = dir.join("out.c");
    let o = out_file.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["nosuchkernel", "-o", o], 3, "no kernel `nosuchkernel` in the store (kernels: atax, gemm)"),
        (
            vec!["gemm", "--machine", "elsewhere", "-o", o],
            1,
            "no machine `elsewhere` in the store (machines: here)",
        ),
        (vec!["atax", "-o", o], 3, "no verified variant of kernel `atax`"),
        (vec!["gemm", "--dataset", "LARGE", "-o", o], 3, "no verified variant of kernel `gemm` at LARGE"),
    ];
    for (args, code, said) in &cases {
        let out = export(&dir, &db, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(!out_file.exists(), "{args:?} wrote {o}");
    }
    // The file changed since it was tuned.
    std::fs::write(&file, std::fs::read_to_string(&file).unwrap() + "\n/* edited */\n").unwrap();
    let out = export(&dir, &db, &["gemm", "-o", o]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the file has changed since it was tuned"), "{err}");
    assert!(!out_file.exists());
}

/// A program whose arrays have fixed sizes from a macro, as PolyBench's
/// official sources do.
const FIXED: &str = r#"#include <stdio.h>
#ifndef N
#define N 40
#endif
static double A[N][N], B[N][N];

static void scale(double alpha)
{
  int i, j;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      B[i][j] = alpha * A[i][j] + B[i][j];
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (i * j % 7) / 7.0, B[i][j] = 1.0;
  scale(1.5);
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      s += B[i][j];
  printf("%f\n", s);
  return 0;
}
"#;

#[test]
fn an_export_built_at_other_sizes_than_it_was_tuned_at_is_a_compile_error() {
    let dir = temp_dir("export-sizes");
    let file = dir.join("scale.c");
    std::fs::write(&file, FIXED).unwrap();
    let db = dir.join("store.db");
    seed(&db, &file, "LARGE", &[Machine { name: "here", cpu_model: "any", point: tuned_point() }]);
    let out_file = dir.join("scale.tuned.c");
    let out = export(&dir, &db, &["scale", "-o", out_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let compile = |define: &str| {
        output(Command::new("gcc").args(["-O2", "-fopenmp", define, "-c", "-o", "/dev/null"]).arg(&out_file))
    };
    assert!(compile("-DN=40").status.success());
    let other = compile("-DN=50");
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(
        !other.status.success() && err.contains("the rows of A are not the size this code was tuned for"),
        "{err}"
    );
}

#[test]
fn serve_answers_an_export_with_the_bytes_the_command_writes() {
    let file = kernel("linear-algebra/gemm.c");
    let dir = temp_dir("export-serve");
    let db = dir.join("store.db");
    seed(&db, &file, "SMALL", &[Machine { name: "here", cpu_model: "any", point: tuned_point() }]);
    let out_file = dir.join("gemm.c");
    let out = export(&dir, &db, &["gemm", "-o", out_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let server = serve(&["--db", db.to_str().unwrap(), "--addr", "127.0.0.1:0"]).unwrap();
    let (status, body) = http_get(&server, "/export/gemm", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, std::fs::read_to_string(&out_file).unwrap());
    assert_eq!(http_get(&server, "/export/nosuchkernel", None).0, 404);
    assert_eq!(http_get(&server, "/export/gemm?dataset=LARGE", None).0, 404);
    assert_eq!(http_get(&server, "/export/gemm?machine=elsewhere", None).0, 422);
}

/// `serve`'s page at `/`: the report's tables, reloaded while campaigns run,
/// and a link per kernel and machine that answers the export's bytes; as
/// Chromium shows it.
#[test]
fn serve_shows_the_report_as_a_page_with_a_link_to_each_export() {
    let file = kernel("linear-algebra/gemm.c");
    let dir = temp_dir("export-page");
    let db = dir.join("store.db");
    seed(&db, &file, "SMALL", &[Machine { name: "here", cpu_model: "any", point: tuned_point() }]);
    let server = serve(&["--db", db.to_str().unwrap(), "--addr", "127.0.0.1:0"]).unwrap();
    let (status, page) = http_get(&server, "/", None);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<meta http-equiv=\"refresh\""), "{page}");
    assert!(page.contains("<table data-table=\"here\">"), "{page}");
    let link = "export/gemm?machine=here";
    assert!(page.contains(&format!("<a href=\"{link}\">gemm</a>")), "{page}");
    let (status, linked) = http_get(&server, &format!("/{link}"), None);
    assert_eq!(status, 200, "{linked}");
    assert_eq!(linked, http_get(&server, "/export/gemm?machine=here", None).1);
    assert!(linked.contains("polytune") && linked.contains("int main"), "{linked}");
    let Some(browser) = testkit::Browser::find(&dir.join("profile")) else { return };
    let dom = browser.dom(&format!("http://{}/", server.base));
    assert_eq!(dom.matches("<table data-table=").count(), 2, "{dom}");
    assert!(dom.contains("<figure data-plot=\"speedup-per-kernel\">") && dom.contains("<svg"), "{dom}");
    let png = browser.screenshot(&format!("http://{}/", server.base), &dir.join("page.png"), (1200, 1600));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "screenshot of {} bytes", png.len());
}
