//! What the tests of the `polytune` executable share: how to run it, under
//! a limit, from the repository's root, and fresh temporary directories.
#![allow(dead_code)] // each test binary uses a part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Every command of these tests ends within this, or fails the test naming
/// it (`POLYTUNE_ITEM_LIMIT_S` overrides).
pub const LIMIT: Duration = Duration::from_secs(600);

/// The repository's root, where the commands run (they name `polybench/…`).
pub fn root() -> PathBuf {
    testkit::root()
}

/// `polytune`, run from the root, its OpenMP threads sleeping when idle.
pub fn polytune() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_polytune"));
    c.current_dir(root()).env("OMP_WAIT_POLICY", "PASSIVE");
    c
}

/// `cmd`'s output, under [`LIMIT`].
pub fn output(cmd: &mut Command) -> Output {
    testkit::output_within(cmd, LIMIT)
}

/// `polytune ARGS` in `dir`, its cache there too, under [`LIMIT`].
pub fn polytune_in(dir: &std::path::Path, args: &[&str]) -> Output {
    output(polytune().current_dir(dir).env("XDG_CACHE_HOME", dir.join("cache")).args(args))
}

/// What `source`, built by gcc (`-O2 -fopenmp` and `flags`) into
/// `binary`, prints when run in `dir` with `args` on two threads.
pub fn printed(
    source: &std::path::Path,
    flags: &[&str],
    binary: &std::path::Path,
    args: &[&str],
    dir: &std::path::Path,
) -> String {
    let built =
        output(Command::new("gcc").args(["-O2", "-fopenmp"]).args(flags).arg(source).arg("-o").arg(binary));
    assert!(built.status.success(), "{}: {}", source.display(), String::from_utf8_lossy(&built.stderr));
    let ran = output(Command::new(binary).args(args).current_dir(dir).env("OMP_NUM_THREADS", "2"));
    assert!(ran.status.success(), "{}: {}", binary.display(), String::from_utf8_lossy(&ran.stderr));
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

/// `polytune ARGS`'s output, under [`LIMIT`].
pub fn run(args: &[&str]) -> Output {
    output(polytune().args(args))
}

/// A fresh, empty directory named after `name`, removed when dropped.
pub fn temp_dir(name: &str) -> testkit::TempDir {
    testkit::TempDir::new(name)
}

/// A `polytune serve` child, killed when dropped.
pub struct Server {
    child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `polytune serve ARGS`, once it listens (its stderr if it does not start).
pub fn serve(args: &[&str]) -> Result<Server, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .arg("serve")
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    match line.trim().strip_prefix("listening on http://") {
        Some(addr) => Ok(Server { child, base: addr.to_string() }),
        None => {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            let _ = child.wait();
            Err(err)
        }
    }
}

/// (status, body) of `GET path` on `server`, with an optional bearer token.
pub fn http_get(server: &Server, path: &str, token: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(&server.base).unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\n{auth}Connection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    // A chunked body (axum streams large ones) is put back together.
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.push_str(&after[..n]);
            rest = &after[n + 2..];
        }
        return (status, out);
    }
    (status, body.to_string())
}
