-- The 2026 quota model: the pools' settings every worker must agree on,
-- and the blocks kept in the ledger.
CREATE TABLE quota_config (
  quota_key TEXT NOT NULL,
  pool      TEXT NOT NULL,
  conf      TEXT NOT NULL,
  PRIMARY KEY (quota_key, pool)
) WITHOUT ROWID;

CREATE TABLE ledger_blocks (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  until_ms  INTEGER NOT NULL,
  at_ms     INTEGER NOT NULL,
  op        TEXT    NOT NULL,
  PRIMARY KEY (quota_key, pool, until_ms)
) WITHOUT ROWID;
