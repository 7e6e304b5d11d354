//! One module per subcommand, plus what they share.

pub mod bench;
pub mod common;
pub mod explain;
pub mod export;
pub mod progress;
pub mod query;
pub mod report;
pub mod run;
pub mod schedule;
pub mod scop;
pub mod serve;
pub mod space;
pub mod tune;
pub mod variant;
pub mod worker;
