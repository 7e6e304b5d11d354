-- polytune store, schema 5: where a warm-started point came from (the
-- machine of the store whose best it was, `tune --warm-start`); NULL for
-- every other measurement and those recorded before.
ALTER TABLE measurements ADD COLUMN origin TEXT;
