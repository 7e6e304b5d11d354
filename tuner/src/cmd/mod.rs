//! One module per subcommand, plus what they share.

pub mod bench;
pub mod common;
pub mod run;
pub mod schedule;
pub mod scop;
