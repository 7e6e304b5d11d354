//! Whether a measurement slot is quiet: how busy its cores are, from the
//! kernel's per-core counters (`/proc/stat`). Two OpenMP threads on one
//! core that another process keeps busy run 5–17× slower, and such times
//! mean nothing; the tuner checks before it measures (`--on-noise`).

use std::collections::HashMap;
use std::time::Duration;

/// One core's busy fraction over a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreLoad {
    pub core: usize,
    /// Time not idle (nor waiting for I/O) over the window, 0 to 1.
    pub busy: f64,
}

/// The busy fraction of each of `cores` over `window`, every process
/// counted (call it while nothing of ours runs there); `None` where the
/// counters cannot be read (not Linux).
pub fn load(cores: &[usize], window: Duration) -> Option<Vec<CoreLoad>> {
    let before = counters()?;
    std::thread::sleep(window);
    let after = counters()?;
    let mut out = Vec::new();
    for &core in cores {
        let (Some(a), Some(b)) = (before.get(&core), after.get(&core)) else { continue };
        let total = b.1.saturating_sub(a.1);
        let busy = b.0.saturating_sub(a.0);
        if total > 0 {
            out.push(CoreLoad { core, busy: busy as f64 / total as f64 });
        }
    }
    Some(out)
}

/// The cores of `load` busier than `threshold`, as text
/// (`core 0 (97% busy), core 1 (64% busy)`); `None` when all are below.
pub fn busy_cores(load: &[CoreLoad], threshold: f64) -> Option<String> {
    let busy: Vec<String> = load
        .iter()
        .filter(|l| l.busy > threshold)
        .map(|l| format!("core {} ({:.0}% busy)", l.core, 100.0 * l.busy))
        .collect();
    (!busy.is_empty()).then(|| busy.join(", "))
}

/// Per core: (busy, total) jiffies since boot.
fn counters() -> Option<HashMap<usize, (u64, u64)>> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// `cpuN user nice system idle iowait irq softirq steal ...` lines.
fn parse_stat(text: &str) -> Option<HashMap<usize, (u64, u64)>> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(core) = fields.next().and_then(|f| f.strip_prefix("cpu")).and_then(|n| n.parse().ok())
        else {
            continue;
        };
        // Guest time is already counted in user time: the first eight fields.
        let v: Vec<u64> = fields.take(8).filter_map(|f| f.parse().ok()).collect();
        if v.len() < 5 {
            return None;
        }
        let total: u64 = v.iter().sum();
        let idle = v[3] + v[4];
        out.insert(core, (total - idle, total));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_busy_and_total() {
        let text =
            "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 30 10 0 0 0 0 0\ncpu1 1 1 1 1 0 0 0 0\nintr 1 2\n";
        let c = parse_stat(text).unwrap();
        assert_eq!(c[&0], (10, 50));
        assert_eq!(c[&1], (3, 4));
        assert_eq!(c.len(), 2);
        let load = [CoreLoad { core: 0, busy: 0.97 }, CoreLoad { core: 1, busy: 0.1 }];
        assert_eq!(busy_cores(&load, 0.5).unwrap(), "core 0 (97% busy)");
        assert_eq!(busy_cores(&load[1..], 0.5), None);
    }

    #[test]
    fn this_machine_has_counters() {
        let l = load(&[0], Duration::from_millis(50)).unwrap();
        assert!(l.len() == 1 && (0.0..=1.0).contains(&l[0].busy), "{l:?}");
    }
}
