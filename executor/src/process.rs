//! Running a child process with limits and a timeout: the one runner that builds,
//! measurements and the campaign's scheduling children share. The child runs in its own
//! process group (killed whole at the timeout), pinned to the given cores, with address
//! space and CPU-time limits and no core dumps; its stderr is kept, head and tail.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// `pid-counter-nanos`: unique across threads and processes sharing a directory.
pub fn unique_suffix() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed), nanos)
}

/// Resource limits applied in the child between fork and exec.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub cores: Option<Vec<usize>>,
    pub address_space: Option<u64>,
    pub cpu_seconds: Option<u64>,
}

pub enum End {
    Exited(ExitStatus),
    /// Killed (with its whole process group) at the timeout.
    TimedOut,
}

pub struct RunOutput {
    pub end: End,
    pub wall: Duration,
    /// The child's stderr, head and tail kept.
    pub output: Captured,
}

/// Spawns `cmd` (stderr captured) in its own process group with `limits`,
/// kills the group at `timeout`. `Err` only when it could not be started.
pub fn run_limited(
    mut cmd: Command,
    limits: &Limits,
    timeout: Duration,
    keep: usize,
) -> std::io::Result<RunOutput> {
    cmd.stderr(Stdio::piped()).process_group(0);
    let cpuset = match &limits.cores {
        Some(cores) => Some(cpu_set(cores)?),
        None => None,
    };
    let address_space = limits.address_space;
    let cpu_seconds = limits.cpu_seconds;
    // SAFETY: the closure only makes async-signal-safe system calls on data
    // prepared before the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(set) = &cpuset {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            set_limit(libc::RLIMIT_CORE, 0, 0)?;
            if let Some(bytes) = address_space {
                set_limit(libc::RLIMIT_AS, bytes, bytes)?;
            }
            if let Some(s) = cpu_seconds {
                // SIGXCPU at the soft limit, SIGKILL one second later.
                set_limit(libc::RLIMIT_CPU, s, s + 1)?;
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let captured = Arc::new(Mutex::new(Captured::new(keep)));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    if let Some(mut err) = child.stderr.take() {
        let captured = Arc::clone(&captured);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match err.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => captured.lock().unwrap_or_else(|e| e.into_inner()).push(&buf[..n]),
                }
            }
            let _ = done_tx.send(());
        });
    } else {
        let _ = done_tx.send(());
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let end = match rx.recv_timeout(timeout) {
        Ok(status) => End::Exited(status?),
        Err(_) => {
            // SAFETY: plain kill(2) of the child's own process group.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            // Reap it; a child stuck in the kernel is abandoned after a while.
            let _ = rx.recv_timeout(Duration::from_secs(10));
            End::TimedOut
        }
    };
    let wall = start.elapsed();
    // Leftover grandchildren holding stderr open are not waited for long.
    let _ = done_rx.recv_timeout(Duration::from_millis(500));
    let output = captured.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(RunOutput { end, wall, output })
}

fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> std::io::Result<()> {
    let lim = libc::rlimit { rlim_cur: soft as libc::rlim_t, rlim_max: hard as libc::rlim_t };
    // SAFETY: setrlimit with a valid pointer to a local struct.
    if unsafe { libc::setrlimit(resource, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn cpu_set(cores: &[usize]) -> std::io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain bits; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &c in cores {
        if c >= capacity {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("core {c} is beyond CPU_SETSIZE"),
            ));
        }
        // SAFETY: c < CPU_SETSIZE checked above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    Ok(set)
}

/// A bounded copy of a stream: its first and last `keep` bytes.
#[derive(Debug, Clone)]
pub struct Captured {
    keep: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: usize,
}

impl Captured {
    pub fn new(keep: usize) -> Self {
        Captured { keep, head: Vec::new(), tail: Default::default(), total: 0 }
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len();
        let room = self.keep.saturating_sub(self.head.len());
        let n = room.min(data.len());
        self.head.extend_from_slice(&data[..n]);
        data = &data[n..];
        self.tail.extend(data);
        while self.tail.len() > self.keep {
            self.tail.pop_front();
        }
    }

    /// Lossy UTF-8 text, with a marker where bytes were left out.
    pub fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        let omitted = self.total - self.head.len() - self.tail.len();
        if omitted > 0 {
            s.push_str(&format!("\n[... {omitted} bytes omitted ...]\n"));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        s.push_str(&String::from_utf8_lossy(&tail));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Captured::new(4);
        c.push(b"abcdefghij");
        c.push(b"kl");
        assert_eq!(c.text(), "abcd\n[... 4 bytes omitted ...]\nijkl");
    }
}
