//! What polytune sees of a program without measuring anything: its model
//! (`scop`), our scheduler's schedule (`schedule`) and its fusion space
//! (`space`), each as a typed report with its text.

pub mod schedule;
pub mod scop;
pub mod space;
