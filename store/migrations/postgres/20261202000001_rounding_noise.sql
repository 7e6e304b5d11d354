-- polytune store, schema 7: an original's rounding noise (JSON: `vocab::RoundingNoise`,
-- what builds of it that differ only in floating-point evaluation order
-- disagree on), kept with its reference measurement; NULL for every other
-- measurement and for references recorded before.
ALTER TABLE measurements ADD COLUMN rounding_noise TEXT;
