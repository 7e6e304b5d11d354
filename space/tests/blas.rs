//! The scheduler under a threaded system BLAS (issue 13): two threads
//! scheduling at once while a third forks child processes, the way the knob
//! sweep and campaigns schedule while they compile and run variants. With
//! OpenBLAS's pthread build as the system LAPACK this hung forever inside
//! CBC's dense factorisation; see `space::blas`.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use model::scop::{self, ExtractOptions};
use vocab::knobs::SchedulerOptions;

/// Whether OpenBLAS is mapped into this process (it comes with CBC when it
/// is the system LAPACK).
fn openblas_loaded() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains("openblas"))
}

fn schedule_all(kernels: &[&str], settings: &[&str]) {
    for rel in kernels {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("polybench").join(rel);
        let opts = ExtractOptions { cc_args: vec!["-DMINI_DATASET".into()], ..Default::default() };
        let (_, mut scops) = scop::extract(&path, &opts).unwrap();
        let s = scops.remove(0);
        let d = model::deps::analyze(&s).unwrap();
        let settings: Vec<String> = settings.iter().map(|x| x.to_string()).collect();
        let knobs = SchedulerOptions::default().with_settings(&settings).unwrap();
        space::schedule::unified(&s, &d, None, &knobs).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
}

#[test]
fn two_threads_scheduling_while_a_third_forks_finish() {
    if std::env::var_os("POLYTUNE_EXPECT_OPENBLAS").is_some() {
        // CI installs libopenblas-dev so that this test sees the users' setup.
        assert!(openblas_loaded(), "POLYTUNE_EXPECT_OPENBLAS is set but OpenBLAS is not loaded");
    }
    let done = Arc::new(AtomicBool::new(false));
    let forker = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut n = 0u32;
            while !done.load(Ordering::Relaxed) {
                // `pre_exec` makes std fork (not posix_spawn), which runs the
                // atfork handlers, as the executor's measured children do.
                let mut c = Command::new("true");
                c.stdout(Stdio::null()).stderr(Stdio::null());
                // SAFETY: the hook does nothing, so nothing unsafe runs after the fork.
                unsafe { c.pre_exec(|| Ok(())) };
                let _ = c.status();
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            n
        })
    };
    let a = ["linear-algebra/gemm.c", "linear-algebra/2mm.c", "stencils/jacobi-2d.c", "linear-algebra/lu.c"];
    let b =
        ["linear-algebra/3mm.c", "stencils/fdtd-2d.c", "datamining/covariance.c", "linear-algebra/gemver.c"];
    // Each thread's work under a limit: a hang stops the test in a minute.
    let t1 = std::thread::spawn(move || {
        let _item = testkit::item("thread 1 (gemm, 2mm, jacobi-2d, lu)", Duration::from_secs(60));
        schedule_all(&a, &[]);
    });
    let t2 = std::thread::spawn(move || {
        let _item = testkit::item("thread 2 (3mm, fdtd-2d, covariance, gemver)", Duration::from_secs(60));
        schedule_all(&b, &["target=gpu"]);
    });
    let r1 = t1.join();
    let r2 = t2.join();
    done.store(true, Ordering::Relaxed);
    let forks = forker.join().unwrap();
    eprintln!("OpenBLAS loaded: {}, {forks} forks during the run", openblas_loaded());
    if let Err(e) = r1 {
        std::panic::resume_unwind(e);
    }
    if let Err(e) = r2 {
        std::panic::resume_unwind(e);
    }
    if openblas_loaded() {
        assert_eq!(space::blas::openblas_threads(), Some(1), "OpenBLAS should run single-threaded under CBC");
    }
}
