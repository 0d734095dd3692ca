-- The first released schema.
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

-- ---------------------------------------------------------------------------
-- The store (store/): videos, what was fetched when, and what it cost.
-- Times are Unix milliseconds (UTC) unless a comment says otherwise.

-- The latest metadata of each video. vid is the rowid the FTS index points
-- at: rows are upserted (INSERT ... ON CONFLICT(id) DO UPDATE), never
-- replaced, so a video keeps its vid for ever and the index stays true.
CREATE TABLE videos (
  vid             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,   -- the upstream's video id
  title           TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  tags            TEXT    NOT NULL,          -- JSON array of strings
  channel_id      TEXT    NOT NULL,
  channel_title   TEXT    NOT NULL,
  category_id     TEXT    NOT NULL,
  published_at_ms INTEGER,                   -- NULL when unknown
  duration        TEXT    NOT NULL,          -- ISO 8601, as sent (PT4M13S)
  view_count      INTEGER,
  like_count      INTEGER,                   -- NULL: hidden by the owner
  comment_count   INTEGER,                   -- NULL: hidden by the owner
  first_seen_ms   INTEGER NOT NULL,
  last_seen_ms    INTEGER NOT NULL
);

-- Full-text index over the videos' text. External content keeps the text
-- once (in videos) and still gives snippet() and highlight(). The tokenizer
-- folds diacritics (muller finds Müller) and keeps combining marks inside
-- words, so Devanagari words with vowel signs stay whole.
CREATE VIRTUAL TABLE videos_fts USING fts5(
  title, description, tags, channel_title,
  content = 'videos', content_rowid = 'vid',
  tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co Mc Mn'"
);
-- ORDER BY rank: a title match weighs most, then tags and channel.
INSERT INTO videos_fts (videos_fts, rank) VALUES ('rank', 'bm25(10.0, 2.0, 4.0, 4.0)');

-- The database keeps the index in sync. A delete must give the old values,
-- or stale terms stay behind; the update trigger fires only when indexed
-- text really changed, so re-ingesting a page costs no index work.
CREATE TRIGGER videos_fts_insert AFTER INSERT ON videos BEGIN
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, new.title, new.description, new.tags, new.channel_title);
END;
CREATE TRIGGER videos_fts_delete AFTER DELETE ON videos BEGIN
  INSERT INTO videos_fts (videos_fts, rowid, title, description, tags, channel_title)
  VALUES ('delete', old.vid, old.title, old.description, old.tags, old.channel_title);
END;
CREATE TRIGGER videos_fts_update AFTER UPDATE OF vid, title, description, tags, channel_title ON videos
WHEN old.vid IS NOT new.vid OR old.title IS NOT new.title OR old.description IS NOT new.description
  OR old.tags IS NOT new.tags OR old.channel_title IS NOT new.channel_title
BEGIN
  INSERT INTO videos_fts (videos_fts, rowid, title, description, tags, channel_title)
  VALUES ('delete', old.vid, old.title, old.description, old.tags, old.channel_title);
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, new.title, new.description, new.tags, new.channel_title);
END;

-- One pass over a region: a trending chart, or a backfill's searches.
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  region      TEXT    NOT NULL,
  kind        TEXT    NOT NULL CHECK (kind IN ('trending', 'search')),
  status      TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed')),
  started_ms  INTEGER NOT NULL,
  finished_ms INTEGER,
  pages       INTEGER NOT NULL DEFAULT 0,   -- highest page number stored
  videos      INTEGER NOT NULL DEFAULT 0,   -- entries stored by this run
  message     TEXT    NOT NULL DEFAULT '',
  retry_at_ms INTEGER                       -- a stopped run: when it could go on
);
CREATE INDEX runs_last ON runs (kind, region, id);

-- A video's place in a region's chart at one run, with the counts of the
-- moment: the view-count history.
CREATE TABLE trending_entries (
  run_id        INTEGER NOT NULL REFERENCES runs (id),
  region        TEXT    NOT NULL,
  vid           INTEGER NOT NULL REFERENCES videos (vid),
  rank          INTEGER NOT NULL,           -- 1-based over the whole chart
  view_count    INTEGER,
  like_count    INTEGER,                    -- NULL: hidden
  comment_count INTEGER,                    -- NULL: hidden
  fetched_ms    INTEGER NOT NULL,
  PRIMARY KEY (run_id, region, vid)
) WITHOUT ROWID;
CREATE INDEX trending_entries_vid ON trending_entries (vid, fetched_ms);

-- What a backfill's searches found; never mixed with the charts.
CREATE TABLE search_results (
  run_id     INTEGER NOT NULL REFERENCES runs (id),
  region     TEXT    NOT NULL,
  vid        INTEGER NOT NULL REFERENCES videos (vid),
  rank       INTEGER NOT NULL,
  fetched_ms INTEGER NOT NULL,
  PRIMARY KEY (run_id, region, vid)
) WITHOUT ROWID;
CREATE INDEX search_results_vid ON search_results (vid);

-- The regions where a video trended or was found: search's region filter.
CREATE TABLE video_regions (
  vid    INTEGER NOT NULL REFERENCES videos (vid),
  region TEXT    NOT NULL,
  PRIMARY KEY (vid, region)
) WITHOUT ROWID;

-- The quota ledger: one row per admitted call per pool it drew from, metered
-- or not. Keyed by the limiter's call id, so writing a call twice, or
-- refilling a limiter from here, never counts it twice.
CREATE TABLE ledger (
  quota_key TEXT    NOT NULL,
  call_id   TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  units     INTEGER NOT NULL CHECK (units >= 0),
  at_ms     INTEGER NOT NULL,               -- the limiter's clock
  op        TEXT    NOT NULL,
  region    TEXT    NOT NULL DEFAULT '',
  run_id    INTEGER,                        -- NULL outside a run
  unmetered INTEGER NOT NULL DEFAULT 0 CHECK (unmetered IN (0, 1)),
  PRIMARY KEY (quota_key, call_id, pool)
) WITHOUT ROWID;
CREATE INDEX ledger_at ON ledger (quota_key, at_ms);
CREATE INDEX ledger_run ON ledger (run_id) WHERE run_id IS NOT NULL;

-- Video categories per region, and when each region's list was fetched
-- (at most once a day).
CREATE TABLE categories (
  region     TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  title      TEXT    NOT NULL,
  fetched_ms INTEGER NOT NULL,
  PRIMARY KEY (region, id)
) WITHOUT ROWID;
CREATE TABLE category_fetches (
  region     TEXT    PRIMARY KEY,
  fetched_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- Where a backfill got to, so that it resumes. key is built from the
-- region, the dates and the query (store.CursorKey).
CREATE TABLE backfill_cursors (
  key        TEXT    PRIMARY KEY,
  page_token TEXT    NOT NULL DEFAULT '',
  pages      INTEGER NOT NULL DEFAULT 0,
  videos     INTEGER NOT NULL DEFAULT 0,
  units      INTEGER NOT NULL DEFAULT 0,
  reached    TEXT    NOT NULL DEFAULT '',   -- RFC 3339: how far back it got
  done       INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
