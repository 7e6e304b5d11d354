-- polytune store, schema 2: what each evaluation cost (issue 20), as JSON
-- (`store::Costs`): the point's schedule and code, its compile, its runs.
-- NULL for measurements recorded before, and for the original's.
ALTER TABLE measurements ADD COLUMN costs TEXT;
