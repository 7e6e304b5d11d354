-- polytune store, schema 8: where the profiled run of the program spent its
-- time, region by region (JSON: `vocab::RunProfile`), kept with the campaign
-- that tuned its hot regions (`tune --autodetect`); NULL for other campaigns.
ALTER TABLE campaigns ADD COLUMN profile TEXT;
