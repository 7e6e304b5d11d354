//! An oracle for generated code that does not look at outputs: which
//! statement instances a program runs. Every statement macro
//! (`#define polytune_S4(t, i, j) ...`) is replaced by a call that counts
//! the instance and adds a hash of its iterator values, per statement, in an
//! order-free sum. A variant must run the same instances as the original
//! schedule's code, each as often: an instance lost or run twice changes
//! the count or the sum, even where the outputs would not show it (a value
//! written again later, a reduction of zeros).

use std::process::Command;
use std::time::Duration;

use codegen::{self, CodegenOptions};
use executor::build::{Builder, Compiler};

use crate::Kernel;

/// Declared before the (preprocessed) program, defined after it, where the
/// harness's `stdio.h` and `stdlib.h` are in (including them again would
/// clash with their preprocessed text).
const DECLARE: &str = "static void polytune_visit(int s, const long *v, int n);\n";

/// What each statement's macro call reports: `polytune_visit(k, values, n)`.
const VISIT: &str = r#"
static unsigned long long polytune_runs[POLYTUNE_NS], polytune_sums[POLYTUNE_NS];
static void polytune_visit(int s, const long *v, int n) {
  unsigned long long h = 0x9e3779b97f4a7c15ULL * (unsigned long long)(s + 1);
  for (int k = 0; k < n; k++) {
    h ^= (unsigned long long)v[k] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  #pragma omp atomic
  polytune_runs[s]++;
  #pragma omp atomic
  polytune_sums[s] += h;
}
__attribute__((destructor)) static void polytune_report(void) {
  const char *path = getenv("POLYTUNE_INSTANCES");
  FILE *f = path ? fopen(path, "w") : (FILE *)0;
  if (!f) return;
  for (int s = 0; s < POLYTUNE_NS; s++) fprintf(f, "%llu %llu\n", polytune_runs[s], polytune_sums[s]);
  fclose(f);
}
"#;

/// Per statement of `k` (in order), how often `program` ran it and the sum
/// of its instances' hashes; `Err` when the program does not build or run.
pub fn count(k: &Kernel, program: &str) -> Result<Vec<(u64, u64)>, String> {
    let names: Vec<&str> = k.scop.statements.iter().map(|s| s.name.as_str()).collect();
    let mut counted = format!("#define POLYTUNE_NS {}\n{DECLARE}", names.len());
    let mut replaced = 0;
    for line in program.lines() {
        match visit_macro(line, &names) {
            Some(m) => {
                counted.push_str(&m);
                replaced += 1;
            }
            None => counted.push_str(line),
        }
        counted.push('\n');
    }
    counted.push_str(VISIT);
    if replaced < names.len() {
        return Err(format!("{}: fewer statement macros than statements", k.name));
    }
    let cache = crate::root().join("target/tmp/polytune-instances-test-cache");
    let builder =
        Builder::new(Compiler::new("gcc", ["-O1", "-fopenmp", "-w"]), cache).map_err(|e| e.to_string())?;
    let built = builder.build(&counted);
    let binary = built.binary().ok_or_else(|| format!("the counting program does not build: {built:?}"))?;
    let report = crate::root().join(format!(
        "target/tmp/polytune-instances-{}-{}.txt",
        builder.key(&counted),
        std::process::id()
    ));
    let out = crate::output_within(
        Command::new(binary).env("POLYTUNE_INSTANCES", &report).env("OMP_NUM_THREADS", "2"),
        Duration::from_secs(300),
    );
    let text = std::fs::read_to_string(&report);
    let _ = std::fs::remove_file(&report);
    if !out.status.success() {
        return Err(format!("the counting program failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = text.map_err(|e| format!("{}: {e}", report.display()))?;
    let numbers = |l: &str| -> Option<(u64, u64)> {
        let (runs, sum) = l.split_once(' ')?;
        Some((runs.parse().ok()?, sum.parse().ok()?))
    };
    text.lines().map(|l| numbers(l).ok_or_else(|| format!("a report line `{l}`"))).collect()
}

/// The instances of the original schedule's code, untiled and sequential:
/// what every variant must run.
pub fn original(k: &Kernel) -> Result<Vec<(u64, u64)>, String> {
    let opts = CodegenOptions::for_point(None, 1, None);
    let v =
        codegen::generate(&k.source, &k.scop, &k.deps, &k.scop.schedule, &opts).map_err(|e| e.to_string())?;
    let counts = count(k, &v.program)?;
    match k.scop.statements.iter().zip(&counts).find(|(_, c)| c.0 == 0) {
        Some((s, _)) => Err(format!("{} never runs in the original schedule's code", s.name)),
        None => Ok(counts),
    }
}

/// `Ok` when `program` (a variant of `k`) runs the instances `want` (of
/// [`original`]): every statement as often, with the same hash sum.
pub fn check(k: &Kernel, want: &[(u64, u64)], program: &str) -> Result<(), String> {
    let got = count(k, program)?;
    for (s, (w, g)) in k.scop.statements.iter().zip(want.iter().zip(&got)) {
        if w != g {
            return Err(format!(
                "{} runs {} instances (hash sum {}), the original schedule {} ({})",
                s.name, g.0, g.1, w.0, w.1
            ));
        }
    }
    Ok(())
}

/// [`check`] against [`original`], panicking with `what` on a difference.
pub fn assert_same_instances(k: &Kernel, program: &str, what: &str) {
    let want = original(k).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    if let Err(e) = check(k, &want, program) {
        panic!("{} ({what}): {e}", k.name);
    }
}

/// `#define polytune_S4(t, i, j) <body>` as a call of `polytune_visit`.
fn visit_macro(line: &str, names: &[&str]) -> Option<String> {
    // A GPU kernel with shared or private memory defines its statements
    // again inside the region, indented.
    let rest = line.trim_start().strip_prefix("#define polytune_")?;
    let (name, rest) = rest.split_once('(')?;
    let s = names.iter().position(|n| *n == name)?;
    let (params, _) = rest.split_once(')')?;
    let params: Vec<&str> = params.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    let values: String = params.iter().map(|p| format!(", (long)({p})")).collect();
    Some(format!(
        "#define polytune_{name}({}) polytune_visit({s}, (const long[]){{0{values}}}, {})",
        params.join(", "),
        params.len() + 1
    ))
}
