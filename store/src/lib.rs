//! The measurement store (store issue).
