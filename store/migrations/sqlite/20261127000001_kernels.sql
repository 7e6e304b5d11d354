-- polytune store, schema 4: a GPU variant's kernels alone (the median of
-- the CUDA events around its launches, seconds) beside its region's time.
-- NULL for CPU variants, the original, and measurements recorded before.
ALTER TABLE measurements ADD COLUMN kernel_s DOUBLE PRECISION;
