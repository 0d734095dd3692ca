-- Step 3: the embedded limiter's tables (quota/embedded.go), as schema.sql
-- has them for SQLite, so that hosts sharing this database share one
-- exact limiter without Redis. Every decision takes an advisory lock on
-- its quota key first: the tables need no locking of their own.

-- One log entry per admitted call per pool, never one per unit.
CREATE TABLE quota_log (
  quota_key TEXT COLLATE "C" NOT NULL,
  pool      TEXT COLLATE "C" NOT NULL,
  id        TEXT COLLATE "C" NOT NULL,  -- the call's id, shared by every pool it drew from
  at_ms     BIGINT NOT NULL,            -- limiter clock (the server's), Unix milliseconds
  units     BIGINT NOT NULL CHECK (units > 0),
  PRIMARY KEY (quota_key, pool, id)
);
CREATE INDEX quota_log_at ON quota_log (quota_key, pool, at_ms);

-- A pool blocked until the upstream's reset.
CREATE TABLE quota_block (
  quota_key TEXT COLLATE "C" NOT NULL,
  pool      TEXT COLLATE "C" NOT NULL,
  until_ms  BIGINT NOT NULL,
  PRIMARY KEY (quota_key, pool)
);

-- The limiter's clock never moves backwards; seq orders calls within a ms.
CREATE TABLE quota_clock (
  quota_key TEXT COLLATE "C" PRIMARY KEY,
  last_ms   BIGINT NOT NULL,
  seq       BIGINT NOT NULL
);

-- What every worker sharing a quota key must agree on, per pool:
-- "limit:reserve:window_ms:day" (quota.ConfigError).
CREATE TABLE quota_config (
  quota_key TEXT COLLATE "C" NOT NULL,
  pool      TEXT COLLATE "C" NOT NULL,
  conf      TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (quota_key, pool)
);

-- Leases: a region never runs twice at once, on any host. expires_ms is
-- the server's clock.
CREATE TABLE locks (
  name       TEXT COLLATE "C" PRIMARY KEY,
  token      TEXT COLLATE "C" NOT NULL,
  expires_ms BIGINT NOT NULL
);
