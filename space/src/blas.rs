//! No threaded BLAS under the ILP solver.
//!
//! CBC's dense factorisation (`CoinDenseFactorization`) calls LAPACK's
//! `dgetrf`/`dgetrs`. Where the system LAPACK is OpenBLAS (Debian's
//! `libopenblas-dev` makes it so through the alternatives system, as on many
//! HPC and data-science machines), those calls run on OpenBLAS's own thread
//! pool. OpenBLAS registers a `pthread_atfork` handler that shuts that pool
//! down in the *parent* before every `fork`; a fork from one thread (a
//! compiler or a variant started with `pre_exec`, which makes std fork
//! rather than `posix_spawn`) while another thread waits in `exec_blas` for
//! the pool leaves the waiter spinning in `sched_yield` forever. The
//! matrices CBC factorises for scheduler ILPs are tiny, so threads buy
//! nothing there: every BLAS library found in the process is set to one
//! thread, once, before the first solve ([`single_threaded`]).
//!
//! The environment (`OPENBLAS_NUM_THREADS=1`) cannot do this from inside the
//! process: OpenBLAS reads it in its constructor, when the library is
//! loaded with the executable, before `main`. So the setters are looked up
//! at run time with `dlsym` in the global scope, where the libraries that
//! CBC pulls in (CoinUtils → liblapack → the chosen BLAS) live; a library
//! that is not loaded is simply not found.
//!
//! MKL and BLIS are set too where present. Neither shuts its threads down
//! at fork (MKL threads through OpenMP, BLIS starts threads per call and
//! defaults to one), so neither is known to hang here; one thread is still
//! the right setting for CBC's tiny factorisations.

use std::ffi::CStr;
use std::sync::OnceLock;

/// The BLAS libraries found in this process and set to one thread.
static LIMITED: OnceLock<Vec<&'static str>> = OnceLock::new();

/// Set every BLAS library loaded in this process to a single thread; the
/// first call does the work, later calls return what it found. Cheap enough
/// to call before every solve.
pub fn single_threaded() -> &'static [&'static str] {
    LIMITED.get_or_init(|| {
        let mut found = Vec::new();
        // OpenBLAS (pthreads and OpenMP builds): `void openblas_set_num_threads(int)`.
        if let Some(f) = lookup(c"openblas_set_num_threads") {
            // SAFETY: the loader found this symbol of OpenBLAS's API, whose signature it is.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(f) };
            f(1);
            found.push("OpenBLAS");
        }
        // MKL: `void MKL_Set_Num_Threads(int)`.
        if let Some(f) = lookup(c"MKL_Set_Num_Threads") {
            // SAFETY: the loader found this symbol of MKL's API, whose signature it is.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(f) };
            f(1);
            found.push("MKL");
        }
        // BLIS: `void bli_thread_set_num_threads(dim_t)`, `dim_t` being int64_t.
        if let Some(f) = lookup(c"bli_thread_set_num_threads") {
            // SAFETY: the loader found this symbol of BLIS's API, whose signature it is.
            let f: extern "C" fn(i64) = unsafe { std::mem::transmute(f) };
            f(1);
            found.push("BLIS");
        }
        found
    })
}

/// OpenBLAS's own thread count, `None` when OpenBLAS is not loaded.
pub fn openblas_threads() -> Option<i32> {
    let f = lookup(c"openblas_get_num_threads")?;
    // SAFETY: the loader found this symbol of OpenBLAS's API, whose signature it is.
    let f: extern "C" fn() -> libc::c_int = unsafe { std::mem::transmute(f) };
    Some(f())
}

fn lookup(name: &CStr) -> Option<*mut libc::c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT only reads the loader's tables.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}
