//! A [`Report`] as the lines `polytune run` prints.

use super::Report;

impl Report {
    /// The variant's status, times and speedup, its sources, and what ran
    /// it on a GPU.
    pub fn text(&self) -> String {
        let r = self;
        let mut t = String::new();
        let mut line = |s: String| {
            t += &s;
            t.push('\n');
        };
        let time = |m: Option<f64>, s: Option<f64>| match (m, s) {
            (Some(m), Some(s)) => format!("{m:.6} s (spread {:.1}%)", 100.0 * s),
            _ => "-".to_string(),
        };
        match &r.script {
            Some(script) => {
                line(format!("{} [{}] script {}", r.file.display(), r.dataset.name(), script.display()))
            }
            None => line(format!("{} [{}] schedule {}", r.file.display(), r.dataset.name(), r.schedule)),
        }
        line(format!("  status:   {} ({})", r.status, r.reason));
        line(format!("  variant:  {}", time(r.median_s, r.spread)));
        line(format!("  original: {}", time(r.original.median_s, r.original.spread)));
        if let Some(rounding) = r.original.rounding_noise.as_ref().filter(|n| !n.is_empty()) {
            line(format!("  rounding noise in the original's outputs: {rounding}"));
        }
        if let Some(s) = r.speedup {
            line(format!("  speedup:  {s:.2}x"));
        }
        line(format!("  source:   {} (original: {})", r.source.display(), r.original_source.display()));
        if let Some(noise) = &r.noise {
            line(format!("  noise:    measured while {noise}, by other processes"));
        }
        if r.emulated {
            line("  GPU:      measured as its emulation on the CPU (blocks and threads as loops)".into());
        }
        if let Some(device) = &r.device {
            let kernels = r.kernel_s.map(|k| format!("; kernels {k:.6} s of it")).unwrap_or_default();
            line(format!("  GPU:      ran on {device} (time with allocation and copies{kernels})"));
        }
        if let Some(unit) = &r.cuda {
            line(format!("  CUDA:     {}", unit.display()));
        }
        if let (Some(k), Some(serial), Some(l)) = (r.kernels, r.serial_kernels, r.launches) {
            line(format!("  kernels:  {k} ({serial} on one thread), launched {l} times in one run"));
        }
        if let Some(said) = &r.nvcc {
            line(format!("  nvcc:     {said}"));
        }
        t
    }
}
