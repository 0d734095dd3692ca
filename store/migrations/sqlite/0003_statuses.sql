-- Runs may end interrupted or skipped, every backfill cursor is named by
-- its parts, and the schedule table. SQLite cannot alter a CHECK, so runs
-- and backfill_cursors are rebuilt with their rows; the foreign keys into
-- runs are checked at commit, when every run is back under its id. A Go
-- hook then fills the cursors' new columns from their old keys
-- (migrate_hooks.go).
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE runs_copy AS SELECT * FROM runs;
DROP TABLE runs;
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  region      TEXT    NOT NULL,
  kind        TEXT    NOT NULL CHECK (kind IN ('trending', 'search')),
  status      TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'interrupted',
                                                 'skipped', 'failed')),
  started_ms  INTEGER NOT NULL,
  finished_ms INTEGER,
  pages       INTEGER NOT NULL DEFAULT 0,   -- highest page number stored
  videos      INTEGER NOT NULL DEFAULT 0,   -- entries stored by this run
  message     TEXT    NOT NULL DEFAULT '',
  retry_at_ms INTEGER                       -- a stopped run: when it could go on
);
INSERT INTO runs SELECT * FROM temp.runs_copy;
DROP TABLE temp.runs_copy;
CREATE INDEX runs_last ON runs (kind, region, id);
CREATE TEMP TABLE cursors_copy AS SELECT * FROM backfill_cursors;
DROP TABLE backfill_cursors;
CREATE TABLE backfill_cursors (
  key        TEXT    PRIMARY KEY,
  region     TEXT    NOT NULL DEFAULT '',
  since      TEXT    NOT NULL DEFAULT '',   -- RFC 3339
  until      TEXT    NOT NULL DEFAULT '',   -- RFC 3339; '': open-ended
  query      TEXT    NOT NULL DEFAULT '',
  before     TEXT    NOT NULL DEFAULT '',   -- RFC 3339: the publishedBefore its searches send,
                                            -- fixed at its first page so page tokens stay valid
  page_token TEXT    NOT NULL DEFAULT '',
  pages      INTEGER NOT NULL DEFAULT 0,
  videos     INTEGER NOT NULL DEFAULT 0,
  units      INTEGER NOT NULL DEFAULT 0,
  reached    TEXT    NOT NULL DEFAULT '',   -- RFC 3339: how far back it got
  done       INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO backfill_cursors (key, page_token, pages, videos, units, reached, done, updated_ms)
SELECT key, page_token, pages, videos, units, reached, done, updated_ms FROM temp.cursors_copy;
DROP TABLE temp.cursors_copy;
CREATE TABLE schedule (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  every_ms   INTEGER NOT NULL,
  regions    TEXT    NOT NULL,              -- comma-separated, in schedule order
  updated_ms INTEGER NOT NULL
);
