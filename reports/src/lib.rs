//! Report tables from the store (roadmap step 2).
