//! How an evaluation of a point ends: one type shared by the executor (which produces it),
//! the store (which keeps its text) and the tuner and reports (which read it).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Every way an evaluation ends. The text (`ok`, `compile-error`, ...) is what the store
/// keeps: it never changes, so that stores written by older versions read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Ran and its outputs match the original's.
    Ok,
    /// Ran, but its outputs differ from the original's: never eligible as best.
    Wrong,
    /// Ran past its limit (scaled from the original's time).
    Timeout,
    /// Died, or ran without reaching the SCoP.
    Crash,
    /// The C compiler refused the generated program.
    CompileError,
    /// The scheduler found no schedule (or failed).
    ScheduleError,
    /// Scheduling and code generation ran past their limit.
    ScheduleTimeout,
    /// The schedule breaks a dependence: a bug of ours, recorded and never run.
    Illegal,
    /// Code generation failed.
    CodegenError,
    /// Stopped by the user (Ctrl-C) before it ended.
    Interrupted,
}

impl Status {
    pub const ALL: [Status; 10] = [
        Status::Ok,
        Status::Wrong,
        Status::Timeout,
        Status::Crash,
        Status::CompileError,
        Status::ScheduleError,
        Status::ScheduleTimeout,
        Status::Illegal,
        Status::CodegenError,
        Status::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Wrong => "wrong",
            Status::Timeout => "timeout",
            Status::Crash => "crash",
            Status::CompileError => "compile-error",
            Status::ScheduleError => "schedule-error",
            Status::ScheduleTimeout => "schedule-timeout",
            Status::Illegal => "illegal",
            Status::CodegenError => "codegen-error",
            Status::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Status, String> {
        Status::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| {
            let all: Vec<&str> = Status::ALL.iter().map(|x| x.as_str()).collect();
            format!("unknown status `{s}` (known: {})", all.join(", "))
        })
    }
}

impl TryFrom<String> for Status {
    type Error = String;

    fn try_from(s: String) -> Result<Status, String> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_serde_and_parse_agree() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.as_str()));
        }
        assert!("done".parse::<Status>().unwrap_err().contains("compile-error"));
    }
}
