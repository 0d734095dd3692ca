-- backoff: a daemon's wait on an upstream that fails every chart, kept
-- here rather than in the process, so that a daemon restarted during it,
-- or another on the same database, calls no upstream before until_ms; a
-- chart that succeeds in any of them deletes the row. wait_ms is the wait
-- that ends then, which the next failure doubles; at most one row.
CREATE TABLE backoff (
  one      INTEGER PRIMARY KEY CHECK (one = 1),
  until_ms INTEGER NOT NULL,
  wait_ms  INTEGER NOT NULL,
  in_a_row INTEGER NOT NULL,
  blamed   TEXT    NOT NULL,
  cause    TEXT    NOT NULL
);

-- backed_up: when the newest backup of this database was taken (ingest db
-- backup, or the daemon's --backup-to), which /metrics gives as its age on
-- either database: a PostgreSQL one is backed up by another process than
-- the daemon that serves the series. At most one row.
CREATE TABLE backed_up (
  one   INTEGER PRIMARY KEY CHECK (one = 1),
  at_ms INTEGER NOT NULL
);
