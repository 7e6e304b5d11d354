//! Compiles, runs and verifies program variants (code generation issue).
