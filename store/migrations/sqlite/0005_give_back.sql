-- The calls given back because they never reached the upstream.
CREATE TABLE ledger_given_back (
  quota_key TEXT    NOT NULL,
  call_id   TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  PRIMARY KEY (quota_key, call_id)
) WITHOUT ROWID;
