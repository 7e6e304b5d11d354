-- polytune store, schema 3: claims (issue 19). A worker claims a point of a campaign before
-- it schedules, builds and measures it; the claim is a lease that the worker's heartbeat
-- extends, and that another worker may take over once it has expired (the first worker was
-- killed or lost its node). Recording the measurement deletes the claim in the same
-- transaction. Times are milliseconds since the epoch, from the workers' clocks.
CREATE TABLE claims (
    campaign_id BIGINT  NOT NULL REFERENCES campaigns (id),
    program_id  BIGINT  NOT NULL REFERENCES programs (id),
    point_id    TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('reference', 'variant')),
    worker      TEXT    NOT NULL,
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (campaign_id, program_id, point_id, role)
);
CREATE INDEX claims_worker ON claims (worker);
