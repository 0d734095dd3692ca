-- What the readers' replicas share beyond the data, so that any of them,
-- started at any time, acts as the others would.
--
-- purged: the data mark each cache in front was last purged up to (its
-- time, changed_ms, as DataMark read it), kept once the cache took the
-- purge: a process that starts, or a cache that comes back, purges what
-- moved since, even a landing made while every purger was down. cache is
-- the cache's address without its password.
CREATE TABLE purged (
  cache      TEXT    PRIMARY KEY,
  mark       TEXT    NOT NULL,
  changed_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- sessions: the readers' site's sign-ins, honoured by every replica and
-- ended on all by a sign-out. hash is the hex SHA-256 of the session id:
-- the id itself, a bearer credential, is never kept.
CREATE TABLE sessions (
  hash       TEXT    PRIMARY KEY,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_expires ON sessions (expires_ms);
