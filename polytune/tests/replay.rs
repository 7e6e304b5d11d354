//! Real programs in: a program that reads its input (a file named on its
//! command line, its standard input) is run once with them to capture its
//! region's inputs, and every measurement replays the region from that
//! capture; the replayed original must write what the program's region
//! wrote, and the PolyBench kernels replay to the same verdicts.

mod common;

use std::path::{Path, PathBuf};

use common::{output, polytune_in, temp_dir};

/// A 5-point smoothing applied three times to a grid read from the file
/// named on the command line (`from_stdin`: from standard input).
fn smoothing_program(from_stdin: bool) -> String {
    let open =
        if from_stdin { "FILE *f = stdin;" } else { "FILE *f = argc > 1 ? fopen(argv[1], \"r\") : 0;" };
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>

static void smooth(int n, int m, double A[n][m], double B[n][m])
{{
  int i, j;
#pragma scop
  for (i = 1; i < n - 1; i++)
    for (j = 1; j < m - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
#pragma endscop
}}

int main(int argc, char **argv)
{{
  {open}
  int n, m;
  if (!f || fscanf(f, "%d %d", &n, &m) != 2)
    return 1;
  double (*A)[m] = malloc(sizeof(double) * n * m);
  double (*B)[m] = calloc((size_t)n * m, sizeof(double));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      if (fscanf(f, "%lf", &A[i][j]) != 1)
        return 1;
  for (int step = 0; step < 3; step++) {{
    smooth(n, m, A, B);
    double (*t)[m] = A; A = B; B = t;
  }}
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s += A[i][j];
  printf("%.6f\n", s);
  return 0;
}}
"#
    )
}

/// The program and a 40 × 50 grid in `dir`.
fn write_program(dir: &Path, from_stdin: bool) -> (PathBuf, PathBuf) {
    let file = dir.join(if from_stdin { "smooth_stdin.c" } else { "smooth.c" });
    std::fs::write(&file, smoothing_program(from_stdin)).unwrap();
    let mut grid = String::from("40 50\n");
    for i in 0..40 {
        let row: Vec<String> =
            (0..50).map(|j| format!("{:.3}", ((i * 7 + j * 13) % 17) as f64 / 4.0)).collect();
        grid.push_str(&row.join(" "));
        grid.push('\n');
    }
    let input = dir.join("grid.txt");
    std::fs::write(&input, grid).unwrap();
    (file, input)
}

fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = polytune_in(dir, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_program_that_reads_a_file_named_on_its_command_line_runs_and_tunes_from_a_capture() {
    let dir = temp_dir("replay-file");
    let (file, _) = write_program(&dir, false);
    let f = file.to_str().unwrap();
    // Without its arguments it is refused, as before.
    let out = polytune_in(&dir, &["run", f, "--runs", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("opens a file to read it"), "{err}");
    // With them: the region captured from one run, original and variant replayed.
    let r = run_json(&dir, &["run", f, "--schedule", "unified", "--runs", "2", "--json", "--", "grid.txt"]);
    assert_eq!(r["status"], "ok", "{r}");
    let source = std::fs::read_to_string(dir.join(r["source"].as_str().unwrap())).unwrap();
    assert!(
        source.contains("polytune_rt_replay_open(") && source.contains("#define main polytune_replaced_main")
    );
    // The second of its three entries, and one it never makes.
    let r = run_json(&dir, &["run", f, "--runs", "1", "--capture-entry", "2", "--json", "--", "grid.txt"]);
    assert_eq!(r["status"], "ok", "{r}");
    let out = polytune_in(&dir, &["run", f, "--runs", "1", "--capture-entry", "5", "--", "grid.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("entered the region 3 time(s) with these arguments, so entry 5 was never captured"),
        "{err}"
    );
    // A campaign from the capture; `best` answers as for any kernel.
    let db = dir.join("store.db");
    let db = db.to_str().unwrap();
    let t =
        run_json(&dir, &["tune", f, "--evals", "3", "--runs", "2", "--db", db, "--json", "--", "grid.txt"]);
    assert!(t["best"][0]["speedup"].as_f64().is_some(), "{t}");
    let out = polytune_in(&dir, &["best", "smooth", "--db", db]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The capture's cost is the reference's, and the replays' runs are timed.
    let h = run_json(&dir, &["history", "smooth", "--db", db, "--json"]);
    let rows = h.as_array().unwrap();
    let reference = rows.iter().find(|r| r["role"] == "reference").unwrap();
    assert!(reference["costs"]["capture_s"].as_f64() > Some(0.0), "{reference}");
    assert!(rows.iter().all(|r| r["costs"]["timed_s"].as_f64() <= r["costs"]["run_s"].as_f64()), "{h}");
    // The same command again resumes the same campaign (the same input, the same capture).
    let again =
        run_json(&dir, &["tune", f, "--evals", "3", "--runs", "2", "--db", db, "--json", "--", "grid.txt"]);
    assert_eq!(again["campaign"], t["campaign"], "{again}");
    // A peer replays the region as written from the same capture, built by its own compiler.
    let peers = dir.join("peers.db");
    let peers = peers.to_str().unwrap();
    let args =
        ["tune", f, "--evals", "2", "--runs", "1", "--references", "identity", "--peers", "gcc-graphite"];
    let args = [&args[..], &["--db", peers, "--json"]].concat();
    run_json(&dir, &[&args[..], &["--", "grid.txt"]].concat());
    let out = polytune_in(&dir, &["report", "--format", "csv", "--db", peers]);
    let csv = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap_or_default().split(',').collect();
    let status = header.iter().position(|c| *c == "gcc-graphite_status").map(|i| row[i]);
    assert_eq!(status, Some("ok"), "{csv}");
    // Its export is verified on the capture, and the program built from it prints what the original prints.
    let exported = dir.join("smooth.tuned.c");
    let out = polytune_in(&dir, &["export", "smooth", "--db", db, "-o", exported.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        // Nothing beat the original beyond the noise in three evaluations: nothing to export.
        assert!(err.contains("nothing to export"), "{err}");
        return;
    }
    assert!(out.status.success() && err.contains("replayed from capture"), "{err}");
    let printed =
        |source: &Path| common::printed(source, &[], &source.with_extension("bin"), &["grid.txt"], &dir);
    assert_eq!(printed(&exported), printed(&file));
}

/// The smoothing program split as programs are: the region in one file,
/// `main` (reading the grid) in another, given with `--source`; replayed,
/// the driver's `main` takes the place of that one.
#[test]
fn a_main_in_a_source_file_gives_way_to_the_replays_own() {
    let dir = temp_dir("replay-split");
    write_program(&dir, false);
    let text = smoothing_program(false);
    let (region, main) = text.split_once("int main(").unwrap();
    let kernel = dir.join("kernel.c");
    std::fs::write(&kernel, region.replace("static void smooth", "void smooth")).unwrap();
    let main_file = dir.join("main.c");
    let declared = "#include <stdio.h>\n#include <stdlib.h>\nvoid smooth(int n, int m, double A[n][m], double B[n][m]);\n";
    std::fs::write(&main_file, format!("{declared}int main({main}")).unwrap();
    let (k, m) = (kernel.to_str().unwrap(), main_file.to_str().unwrap());
    let r = run_json(
        &dir,
        &["run", k, "--source", m, "--schedule", "unified", "--runs", "2", "--json", "--", "grid.txt"],
    );
    assert_eq!(r["status"], "ok", "{r}");
    let db = dir.join("store.db");
    let db = db.to_str().unwrap();
    let t = run_json(
        &dir,
        &["tune", k, "--source", m, "--evals", "2", "--runs", "2", "--db", db, "--json", "--", "grid.txt"],
    );
    assert!(t["best"][0]["speedup"].as_f64().is_some(), "{t}");
}

/// GPU variants replay too: here their emulation, verified in a run and a
/// campaign; and the CUDA form a GPU slot would build (the replay calling
/// the unit's host function) compiles.
#[test]
fn gpu_variants_replay_from_a_capture() {
    let dir = temp_dir("replay-gpu");
    let (file, _) = write_program(&dir, false);
    let f = file.to_str().unwrap();
    let gpu = ["--schedule", "unified", "--set", "target=gpu", "--runs", "2"];
    let r = run_json(&dir, &[&["run", f][..], &gpu, &["--json", "--", "grid.txt"]].concat());
    assert!(r["status"] == "ok" && r["emulated"] == true, "{r}");
    let db = dir.join("store.db");
    let db = db.to_str().unwrap();
    let args = ["tune", f, "--set", "target=gpu", "--emulate", "--evals", "3", "--runs", "2", "--db", db];
    let t = run_json(&dir, &[&args[..], &["--json", "--", "grid.txt"]].concat());
    assert!(t["best"][0]["speedup"].as_f64().is_some(), "{t}");
    let Some(nvcc) = executor::cuda::nvcc() else { return };
    let captures = dir.join("cache/polytune/captures");
    let capture = std::fs::read_dir(&captures).unwrap().next().unwrap().unwrap().path();
    let settings = ["target=gpu".to_string()];
    let point = vocab::knobs::Point {
        scheduler: vocab::knobs::Scheduler::Unified {
            preorder: None,
            options: vocab::knobs::UnifiedOptions::default().with_settings(&settings).unwrap(),
        },
        tiles: Some(vec![32]),
        threads: 1,
        code: Default::default(),
    };
    let point = serde_json::to_string(&point).unwrap();
    let variant =
        ["variant", f, "--dataset", "MINI", "--point", &point, "--replay-from", capture.to_str().unwrap()];
    let reply: serde_json::Value = serde_json::from_slice(&polytune_in(&dir, &variant).stdout).unwrap();
    let cuda = &reply["answer"]["Ok"][2];
    let (host, unit) = (dir.join("host.c"), dir.join("unit.cu"));
    std::fs::write(&host, cuda["program"].as_str().unwrap()).unwrap();
    std::fs::write(&unit, cuda["unit"].as_str().unwrap()).unwrap();
    let text = std::fs::read_to_string(&host).unwrap();
    assert!(text.contains("polytune_rt_replay_open(") && text.contains("polytune_gpu_smooth_"), "{text}");
    for (compiler, args) in [("gcc", ["-O2", "-c"]), (nvcc.to_str().unwrap(), ["-arch=sm_90", "-c"])] {
        let source = if compiler == "gcc" { &host } else { &unit };
        let built = output(
            std::process::Command::new(compiler)
                .args(args)
                .arg(source)
                .arg("-o")
                .arg(source.with_extension("o")),
        );
        assert!(built.status.success(), "{compiler}: {}", String::from_utf8_lossy(&built.stderr));
    }
}

#[test]
fn a_program_that_reads_its_standard_input_runs_from_a_capture() {
    let dir = temp_dir("replay-stdin");
    let (file, input) = write_program(&dir, true);
    let r = run_json(
        &dir,
        &[
            "run",
            file.to_str().unwrap(),
            "--schedule",
            "unified",
            "--runs",
            "1",
            "--json",
            "--stdin",
            input.to_str().unwrap(),
        ],
    );
    assert_eq!(r["status"], "ok", "{r}");
    // An input that makes the program fail is the capturing run's error, with its status.
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let out = polytune_in(&dir, &["run", file.to_str().unwrap(), "--stdin", empty.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the program's capturing run failed (exit status: 1)"), "{err}");
}

#[test]
fn polybench_kernels_replayed_from_captures_verify_as_their_whole_programs_do() {
    let mut checked = 0;
    for (i, file) in testkit::kernels().iter().enumerate() {
        // Three kernels in the fast tier, twelve more in the heavy one.
        if !testkit::takes(i, 0, 10, 2) {
            continue;
        }
        let name = file.file_stem().unwrap().to_str().unwrap();
        let dir = temp_dir(&format!("replay-{name}"));
        let f = file.to_str().unwrap();
        // The replayed original is checked against the whole program's region (one entry).
        let r = run_json(
            &dir,
            &[
                "run",
                f,
                "--schedule",
                "unified",
                "--dataset",
                "SMALL",
                "--runs",
                "1",
                "--replay",
                "on",
                "--json",
            ],
        );
        assert_eq!(r["status"], "ok", "{name}: {r}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// Three kernels of a library, no `main`: a 2-D convolution, a dense layer
/// with a bias and a clamp, one step of a 1-D heat equation on pointers.
const LIBRARY: &str = r#"void conv2d(int h, int w, double img[h][w], double k[3][3], double out[h][w])
{
#pragma scop
  for (int i = 1; i < h - 1; i++)
    for (int j = 1; j < w - 1; j++) {
      out[i][j] = 0.0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          out[i][j] += k[a][b] * img[i + a - 1][j + b - 1];
    }
#pragma endscop
}

void dense(int n, int m, int p, double hi, double X[n][p], double W[p][m], double bias[m], double Y[n][m])
{
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      Y[i][j] = bias[j];
      for (int q = 0; q < p; q++)
        Y[i][j] += X[i][q] * W[q][j];
      Y[i][j] = Y[i][j] > hi ? hi : Y[i][j];
    }
#pragma endscop
}

void heat_step(int n, double alpha, double *u, double *v)
{
#pragma scop
  for (int i = 1; i < n - 1; i++)
    v[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
#pragma endscop
}
"#;

#[test]
fn scops_in_library_functions_without_main_are_driven_with_the_sizes_given() {
    let dir = temp_dir("replay-library");
    let file = dir.join("kernels.c");
    std::fs::write(&file, LIBRARY).unwrap();
    let f = file.to_str().unwrap();
    let sizes =
        ["--param", "h=60", "--param", "w=70", "--param", "n=50", "--param", "m=40", "--param", "p=30"];
    for scop in ["0", "1", "2"] {
        let args =
            [&["run", f, "--scop", scop, "--schedule", "unified", "--runs", "1", "--json"][..], &sizes]
                .concat();
        let r = run_json(&dir, &args);
        assert_eq!(r["status"], "ok", "SCoP {scop}: {r}");
    }
    // A size without a value, and inputs that make the arithmetic overflow to infinity.
    let out = polytune_in(&dir, &["run", f, "--param", "w=70"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the region's sizes need values: give --param h=N"), "{err}");
    let ratio = dir.join("ratio.c");
    let text = "void ratio(int n, double *a, double *b, double *c)\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    c[i] = a[i] / (b[i] - b[i]);\n#pragma endscop\n}\n";
    std::fs::write(&ratio, text).unwrap();
    let out = polytune_in(&dir, &["run", ratio.to_str().unwrap(), "--param", "n=10", "--runs", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("with the generated inputs the region computes c[0] = inf"), "{err}");
    // A campaign on the three SCoPs, driven the same way, the evaluations shared among them.
    let db = dir.join("store.db");
    let args =
        [&["tune", f, "--evals", "6", "--runs", "2", "--db", db.to_str().unwrap(), "--json"][..], &sizes]
            .concat();
    let t = run_json(&dir, &args);
    let kernels: Vec<&str> = (0..3).filter_map(|k| t["best"][k]["kernel"].as_str()).collect();
    assert_eq!(kernels, ["kernels", "kernels.1", "kernels.2"], "{t}");
    assert!((0..3).all(|k| t["best"][k]["speedup"].as_f64().is_some()), "{t}");
}

/// The random-program generator's programs (the oracle's): where the whole
/// program's run verifies a variant, the same variant replayed from a
/// capture verifies too, its replayed original having written what the
/// program's region wrote (`check_reproduced`).
#[test]
fn random_programs_that_run_whole_also_run_replayed() {
    let seeds: Vec<u64> = (0..40).filter(|&s| testkit::takes(0, s as usize, 5, 1)).collect();
    let dir = temp_dir("replay-random");
    let (mut compared, mut refused) = (0, 0);
    for seed in seeds {
        let program = testkit::random_scop::generate(seed, &testkit::random_scop::Options::all());
        let file = dir.join(format!("seed{seed}.c"));
        std::fs::write(&file, &program.text).unwrap();
        let f = file.to_str().unwrap();
        let args = |mode: &'static str| -> Vec<&str> {
            vec!["run", f, "--schedule", "unified", "--runs", "1", "--json", "--replay", mode]
        };
        let whole = polytune_in(&dir, &args("off"));
        let verified = |out: &std::process::Output| {
            out.status.success()
                && serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok_and(|r| r["status"] == "ok")
        };
        if !verified(&whole) {
            refused += 1;
            continue;
        }
        let replayed = polytune_in(&dir, &args("on"));
        assert!(
            verified(&replayed),
            "seed {seed}: verified whole, not replayed: {}{}\n{}",
            String::from_utf8_lossy(&replayed.stdout),
            String::from_utf8_lossy(&replayed.stderr),
            program.text
        );
        compared += 1;
    }
    eprintln!(
        "random programs: {compared} replayed as they ran whole, {refused} not verified whole (skipped)"
    );
    assert!(compared > 0);
}

/// Arrays that overlap in the program's run (`shift(n, x, x + 1)`) cannot
/// be replayed as arrays of their own: the capture is refused, naming them.
#[test]
fn arrays_that_overlap_in_the_captured_run_are_refused() {
    let dir = temp_dir("replay-alias");
    let file = dir.join("shift.c");
    let text = "#include <stdio.h>\nstatic void shift(int n, double *a, double *b)\n{\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    b[i] = a[i] + 1.0;\n#pragma endscop\n}\n\nint main(int argc, char **argv)\n{\n  double x[101], y[101];\n  int i;\n  for (i = 0; i < 101; i++)\n    x[i] = y[i] = i;\n  if (argc > 1 && argv[1][0] == 's')\n    shift(100, x, x + 1);\n  else\n    shift(100, x, y);\n  printf(\"%f %f\\n\", x[100], y[100]);\n  return 0;\n}\n";
    std::fs::write(&file, text).unwrap();
    let f = file.to_str().unwrap();
    let out = polytune_in(&dir, &["run", f, "--runs", "1", "--", "same"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("the arrays a and b overlap in this run"), "{err}");
    let r = run_json(&dir, &["run", f, "--runs", "1", "--json", "--", "distinct"]);
    assert_eq!(r["status"], "ok", "{r}");
}

/// A replay restores what the region writes only before its first run:
/// later runs start from the outputs of the run before, which time alike
/// while the values stay clear of floating-point exceptions. `x[i] *=
/// 1e-160` underflows on its second run: that run is discarded, every
/// later one restored, and the runs asked are still made and verify; a
/// region whose values stay normal discards nothing.
#[test]
fn a_replayed_run_whose_data_underflow_is_discarded_and_the_runs_after_it_restored() {
    let dir = temp_dir("replay-underflow");
    for (name, update, discarded) in [("decay", "x[i] * 1e-160", true), ("relax", "x[i] * 0.5 + 1.0", false)]
    {
        let file = dir.join(format!("{name}.c"));
        let text = format!(
            "void {name}(int n, double *x)\n{{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    x[i] = {update};\n#pragma endscop\n}}\n"
        );
        std::fs::write(&file, text).unwrap();
        let r = run_json(&dir, &["run", file.to_str().unwrap(), "--param", "n=64", "--runs", "3", "--json"]);
        assert_eq!(r["status"], "ok", "{name}: {r}");
        let reasons = r.to_string();
        // The original's and the variant's reasons.
        let said = reasons.matches("discarded (a run on the outputs of the one before raised").count();
        match discarded {
            true => assert!(said >= 2, "{name}: {r}"),
            false => assert_eq!(said, 0, "{name}: {r}"),
        }
    }
}
