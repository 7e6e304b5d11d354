//! One module per subcommand, plus what they share.

pub mod bench;
pub mod bench_peers;
pub mod bench_ratios;
pub mod bench_search;
pub mod bench_transfer;
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
