//! One module per subcommand.

pub mod scop;
