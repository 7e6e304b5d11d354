//! A headless Chromium for the tests of what users open in a browser (the
//! HTML report, `serve`'s page): it loads a URL, dumps the parsed DOM and
//! takes a screenshot. Without Chromium those tests say so and pass, except
//! under CI (which installs it) or with POLYTUNE_EXPECT_CHROMIUM=1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A browser on PATH, its own profile in a directory of its own.
pub struct Browser {
    command: &'static str,
    profile: PathBuf,
}

impl Browser {
    /// Chromium (or Chrome), or `None` after saying the browser part of the
    /// test is skipped; a missing browser fails the test where it is required.
    pub fn find(profile: &Path) -> Option<Browser> {
        let Some(command) = ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        else {
            let required = std::env::var("CI").is_ok() || std::env::var("POLYTUNE_EXPECT_CHROMIUM").is_ok();
            assert!(
                !required,
                "no chromium on PATH, but CI or POLYTUNE_EXPECT_CHROMIUM asks for the browser test"
            );
            eprintln!("no chromium on PATH: the page was not loaded in a browser");
            return None;
        };
        Some(Browser { command, profile: profile.to_path_buf() })
    }

    fn headless(&self, url: &str, extra: &[String]) -> std::process::Output {
        let mut cmd = Command::new(self.command);
        cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            .arg(format!("--user-data-dir={}", self.profile.display()))
            .args(extra)
            .arg(url);
        let out = crate::output_within(&mut cmd, Duration::from_secs(120));
        assert!(out.status.success(), "{}: {}", self.command, String::from_utf8_lossy(&out.stderr));
        out
    }

    /// The DOM of the page at `url` once parsed.
    pub fn dom(&self, url: &str) -> String {
        String::from_utf8(self.headless(url, &["--dump-dom".into()]).stdout).expect("the DOM is UTF-8")
    }

    /// A PNG screenshot of the page at `url`, `width` × `height` pixels, written to `png`.
    pub fn screenshot(&self, url: &str, png: &Path, (width, height): (u32, u32)) -> Vec<u8> {
        self.headless(
            url,
            &[format!("--screenshot={}", png.display()), format!("--window-size={width},{height}")],
        );
        std::fs::read(png).unwrap_or_else(|e| panic!("{}: {e}", png.display()))
    }
}
