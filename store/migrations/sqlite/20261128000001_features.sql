-- polytune store, schema 6: each program's kernel features (JSON: a name's
-- value, `strategy::features::kernel`), what a search model learns across
-- kernels from (issue 39); NULL for programs recorded before.
ALTER TABLE programs ADD COLUMN features TEXT;
