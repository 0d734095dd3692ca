-- ingest's SQLite schema. Applied whole to a new database inside one
-- BEGIN IMMEDIATE transaction that also sets PRAGMA user_version; see
-- ingest.Migrate. Bump ingest.SchemaVersion and add an upgrade step when it
-- changes.

-- The embedded limiter (quota/sqlite.go): one log entry per admitted call
-- per pool, never one per unit.
CREATE TABLE quota_log (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  id        TEXT    NOT NULL,  -- the call's id, shared by every pool it drew from
  at_ms     INTEGER NOT NULL,  -- limiter clock, Unix milliseconds
  units     INTEGER NOT NULL CHECK (units > 0),
  PRIMARY KEY (quota_key, pool, id)
) WITHOUT ROWID;
CREATE INDEX quota_log_at ON quota_log (quota_key, pool, at_ms);

-- A pool blocked until the upstream's reset.
CREATE TABLE quota_block (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  until_ms  INTEGER NOT NULL,
  PRIMARY KEY (quota_key, pool)
) WITHOUT ROWID;

-- The limiter's clock never moves backwards; seq orders calls within a ms.
CREATE TABLE quota_clock (
  quota_key TEXT    PRIMARY KEY,
  last_ms   INTEGER NOT NULL,
  seq       INTEGER NOT NULL
) WITHOUT ROWID;

-- Leases for the embedded backend: a region never runs twice at once.
CREATE TABLE locks (
  name       TEXT    PRIMARY KEY,
  token      TEXT    NOT NULL,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
