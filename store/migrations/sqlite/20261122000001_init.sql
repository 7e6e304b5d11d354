-- polytune store, schema 1 (SQLite). Keep in step with ../postgres: same tables,
-- columns and indexes; only the id and float column types differ.

CREATE TABLE machines (
    id               INTEGER PRIMARY KEY,
    name             TEXT    NOT NULL,
    fingerprint      TEXT    NOT NULL,
    fingerprint_hash TEXT    NOT NULL UNIQUE,
    created_at       BIGINT  NOT NULL
);

CREATE TABLE programs (
    id          INTEGER PRIMARY KEY,
    kernel      TEXT   NOT NULL,
    path        TEXT   NOT NULL,
    source_hash TEXT   NOT NULL,
    dataset     TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (source_hash, dataset)
);
CREATE INDEX programs_kernel ON programs (kernel, dataset);

CREATE TABLE points (
    id   TEXT PRIMARY KEY,
    json TEXT NOT NULL
);

CREATE TABLE schedules (
    id   INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    tree TEXT NOT NULL
);

CREATE TABLE builds (
    id          INTEGER PRIMARY KEY,
    source_hash TEXT NOT NULL UNIQUE,
    path        TEXT NOT NULL
);

CREATE TABLE campaigns (
    id         INTEGER PRIMARY KEY,
    key        TEXT   NOT NULL UNIQUE,
    config     TEXT   NOT NULL,
    strategy   TEXT   NOT NULL,
    seed       BIGINT NOT NULL,
    budget     TEXT   NOT NULL,
    state      TEXT   NOT NULL CHECK (state IN ('running', 'finished', 'stopped')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE measurements (
    id          INTEGER PRIMARY KEY,
    campaign_id BIGINT NOT NULL REFERENCES campaigns (id),
    program_id  BIGINT NOT NULL REFERENCES programs (id),
    machine_id  BIGINT NOT NULL REFERENCES machines (id),
    point_id    TEXT   NOT NULL REFERENCES points (id),
    schedule_id BIGINT REFERENCES schedules (id),
    build_id    BIGINT REFERENCES builds (id),
    role        TEXT   NOT NULL CHECK (role IN ('reference', 'variant')),
    status      TEXT   NOT NULL,
    reason      TEXT   NOT NULL,
    median_s    REAL   CHECK (median_s >= 0),
    spread      REAL   CHECK (spread >= 0),
    samples     TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    -- One campaign measures a point once per program (a kernel on one dataset).
    UNIQUE (campaign_id, program_id, point_id, role)
);
-- `best`: the fastest ok variant of one (campaign, program, machine) is one index seek.
CREATE INDEX measurements_best
    ON measurements (campaign_id, program_id, machine_id, role, status, median_s);
-- `best`: the references of a kernel's programs; `history` by program.
CREATE INDEX measurements_program ON measurements (program_id, role, status, machine_id);
-- `machines`: counts per machine.
CREATE INDEX measurements_machine ON measurements (machine_id, created_at);
