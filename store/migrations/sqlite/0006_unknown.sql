-- The decisions of unknown outcome.
CREATE TABLE ledger_unknown (
  quota_key TEXT    NOT NULL,
  instance  TEXT    NOT NULL,
  token     INTEGER NOT NULL,
  op        TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  charges   TEXT    NOT NULL, -- pool=units, comma separated
  PRIMARY KEY (quota_key, instance, token)
) WITHOUT ROWID;
