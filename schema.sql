-- The complete current SQLite schema of ingest's database: what the numbered
-- migrations in store/migrations/sqlite build, read back from a new database.
-- Not applied by anything: the migrations are. A test fails when this file
-- differs from what they build; rewrite it with
--   go test ./store -run TestSchemaFiles -update
-- Version 28 (PRAGMA user_version).

CREATE TABLE quota_log (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  id        TEXT    NOT NULL,  -- the call's id, shared by every pool it drew from
  at_ms     INTEGER NOT NULL,  -- limiter clock, Unix milliseconds
  units     INTEGER NOT NULL CHECK (units > 0),
  PRIMARY KEY (quota_key, pool, id)
) WITHOUT ROWID;

CREATE TABLE quota_block (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  until_ms  INTEGER NOT NULL,
  PRIMARY KEY (quota_key, pool)
) WITHOUT ROWID;

CREATE TABLE quota_clock (
  quota_key TEXT    PRIMARY KEY,
  last_ms   INTEGER NOT NULL,
  seq       INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE locks (
  name       TEXT    PRIMARY KEY,
  token      TEXT    NOT NULL,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;

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
, thumbnail TEXT NOT NULL DEFAULT '', audio_language TEXT NOT NULL DEFAULT '', language TEXT NOT NULL DEFAULT '', retitled_ms INTEGER);

CREATE TABLE search_results (
  run_id     INTEGER NOT NULL REFERENCES runs (id),
  region     TEXT    NOT NULL,
  vid        INTEGER NOT NULL REFERENCES videos (vid),
  rank       INTEGER NOT NULL,
  fetched_ms INTEGER NOT NULL,
  PRIMARY KEY (run_id, region, vid)
) WITHOUT ROWID;

CREATE INDEX search_results_vid ON search_results (vid);

CREATE TABLE video_regions (
  vid    INTEGER NOT NULL REFERENCES videos (vid),
  region TEXT    NOT NULL,
  PRIMARY KEY (vid, region)
) WITHOUT ROWID;

CREATE TABLE ledger (
  quota_key TEXT    NOT NULL,
  call_id   TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  units     INTEGER NOT NULL CHECK (units >= 0),
  at_ms     INTEGER NOT NULL,               -- the limiter's clock
  op        TEXT    NOT NULL,
  region    TEXT    NOT NULL DEFAULT '',
  run_id    INTEGER,                        -- NULL outside a run
  unmetered INTEGER NOT NULL DEFAULT 0 CHECK (unmetered IN (0, 1)), seq INTEGER NOT NULL DEFAULT 0, client TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (quota_key, call_id, pool)
) WITHOUT ROWID;

CREATE INDEX ledger_at ON ledger (quota_key, at_ms);

CREATE INDEX ledger_run ON ledger (run_id) WHERE run_id IS NOT NULL;

CREATE TABLE categories (
  region     TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  title      TEXT    NOT NULL,
  fetched_ms INTEGER NOT NULL, language TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (region, id)
) WITHOUT ROWID;

CREATE TABLE category_fetches (
  region     TEXT    PRIMARY KEY,
  fetched_ms INTEGER NOT NULL
) WITHOUT ROWID;

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
, category TEXT NOT NULL DEFAULT '', slot_ms INTEGER);

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
, pending TEXT NOT NULL DEFAULT '') WITHOUT ROWID;

CREATE TABLE schedule (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  every_ms   INTEGER NOT NULL,
  regions    TEXT    NOT NULL,              -- comma-separated, in schedule order
  updated_ms INTEGER NOT NULL
, timetable TEXT NOT NULL DEFAULT '', plan TEXT NOT NULL DEFAULT '', costs TEXT NOT NULL DEFAULT '');

CREATE VIRTUAL TABLE videos_fts USING fts5(
  title, description, tags, channel_title,
  content = '', contentless_delete = 1, tokenize = 'ascii'
);

CREATE TRIGGER videos_fts_insert AFTER INSERT ON videos BEGIN
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, ingest_words(new.title), ingest_words(new.description),
    ingest_words((SELECT group_concat(value, ' ') FROM json_each(new.tags))),
    ingest_words(new.channel_title));
END;

CREATE TRIGGER videos_fts_delete AFTER DELETE ON videos BEGIN
  DELETE FROM videos_fts WHERE rowid = old.vid;
END;

CREATE TRIGGER videos_fts_update AFTER UPDATE OF vid, title, description, tags, channel_title ON videos
WHEN old.vid IS NOT new.vid OR old.title IS NOT new.title OR old.description IS NOT new.description
  OR old.tags IS NOT new.tags OR old.channel_title IS NOT new.channel_title
BEGIN
  DELETE FROM videos_fts WHERE rowid = old.vid;
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, ingest_words(new.title), ingest_words(new.description),
    ingest_words((SELECT group_concat(value, ' ') FROM json_each(new.tags))),
    ingest_words(new.channel_title));
END;

CREATE TABLE ledger_given_back (
  quota_key TEXT    NOT NULL,
  call_id   TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL, seq INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (quota_key, call_id)
) WITHOUT ROWID;

CREATE TABLE ledger_unknown (
  quota_key TEXT    NOT NULL,
  instance  TEXT    NOT NULL,
  token     INTEGER NOT NULL,
  op        TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  charges   TEXT    NOT NULL, -- pool=units, comma separated
  PRIMARY KEY (quota_key, instance, token)
) WITHOUT ROWID;

CREATE INDEX runs_last ON runs (kind, region, category, id);

CREATE INDEX runs_started ON runs (kind, started_ms);

CREATE INDEX runs_running ON runs (region, kind, category) WHERE status = 'running';

CREATE INDEX videos_last_seen ON videos (last_seen_ms);

CREATE TABLE ledger_notes (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE api_tokens (
  name         TEXT    PRIMARY KEY,
  hash         TEXT    NOT NULL UNIQUE,   -- hex SHA-256 of the token: the token itself is never kept
  plan         TEXT    NOT NULL,
  created_ms   INTEGER NOT NULL,
  last_used_ms INTEGER
) WITHOUT ROWID;

CREATE TABLE pace_plans (
  quota_key  TEXT PRIMARY KEY,
  written_ms INTEGER NOT NULL,
  plan       TEXT NOT NULL
);

CREATE TABLE videos_gone (
  id      TEXT    PRIMARY KEY,           -- the upstream's video id
  gone_ms INTEGER NOT NULL               -- when a refresh found it gone
) WITHOUT ROWID;

CREATE INDEX search_results_fetched ON search_results (fetched_ms);

CREATE INDEX categories_fetched ON categories (fetched_ms);

CREATE INDEX quota_log_at ON quota_log (quota_key, pool, at_ms, units);

CREATE TABLE region_catalogue (
  code       TEXT    PRIMARY KEY,   -- ISO 3166-1 alpha-2
  name       TEXT    NOT NULL,      -- in English (hl=en_US)
  fetched_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX ledger_pool ON ledger (quota_key, pool, at_ms, units);

CREATE TABLE trending_entries (
  run_id        INTEGER NOT NULL REFERENCES runs (id),
  region        TEXT    NOT NULL,
  vid           INTEGER NOT NULL,           -- videos.vid
  rank          INTEGER NOT NULL,           -- 1-based over the whole chart
  view_count    INTEGER,
  like_count    INTEGER,                    -- NULL: hidden
  comment_count INTEGER,                    -- NULL: hidden
  fetched_ms    INTEGER NOT NULL,
  category      TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, region, vid)
) WITHOUT ROWID;

CREATE INDEX trending_entries_day ON trending_entries (fetched_ms / 86400000 * 86400000, vid, fetched_ms);

CREATE TABLE video_stats (
  vid           INTEGER NOT NULL,           -- videos.vid
  at_ms         INTEGER NOT NULL,
  view_count    INTEGER,
  like_count    INTEGER,
  comment_count INTEGER,
  day_ms        INTEGER NOT NULL CHECK (day_ms = at_ms / 86400000 * 86400000),  -- at_ms's UTC day
  PRIMARY KEY (day_ms, vid, at_ms)
) WITHOUT ROWID;

CREATE INDEX video_stats_at ON video_stats (at_ms);

CREATE TABLE video_days (
  vid       INTEGER NOT NULL,  -- videos.vid
  region    TEXT    NOT NULL,  -- '': tracking's reads (video_stats)
  category  TEXT    NOT NULL,
  day_ms    INTEGER NOT NULL,  -- the UTC day's 00:00
  first_ms  INTEGER NOT NULL,
  last_ms   INTEGER NOT NULL,
  entries   INTEGER NOT NULL,  -- chart entries that day (0 for tracking)
  best_rank INTEGER,
  last_rank INTEGER,
  peak_ms   INTEGER NOT NULL,  -- when the day's highest view count was read
  views     INTEGER,
  likes     INTEGER,
  comments  INTEGER,
  PRIMARY KEY (day_ms, vid, region, category)
) WITHOUT ROWID;

CREATE TRIGGER video_days_entry AFTER INSERT ON trending_entries BEGIN
  INSERT INTO video_days VALUES (new.vid, new.region, new.category, new.fetched_ms / 86400000 * 86400000,
    new.fetched_ms, new.fetched_ms, 1, new.rank, new.rank, new.fetched_ms, new.view_count, new.like_count,
    new.comment_count)
  ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
END;

CREATE TRIGGER video_days_entry_again AFTER UPDATE ON trending_entries BEGIN
  INSERT INTO video_days VALUES (new.vid, new.region, new.category, new.fetched_ms / 86400000 * 86400000,
    new.fetched_ms, new.fetched_ms, 0, new.rank, new.rank, new.fetched_ms, new.view_count, new.like_count,
    new.comment_count)
  ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
END;

CREATE TRIGGER video_days_stat AFTER INSERT ON video_stats BEGIN
  INSERT INTO video_days VALUES (new.vid, '', '', new.at_ms / 86400000 * 86400000,
    new.at_ms, new.at_ms, 0, NULL, NULL, new.at_ms, new.view_count, new.like_count, new.comment_count)
  ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
END;

CREATE TRIGGER video_days_stat_again AFTER UPDATE ON video_stats BEGIN
  INSERT INTO video_days VALUES (new.vid, '', '', new.at_ms / 86400000 * 86400000,
    new.at_ms, new.at_ms, 0, NULL, NULL, new.at_ms, new.view_count, new.like_count, new.comment_count)
  ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
END;

CREATE TABLE ledger_seq (
  quota_key TEXT    PRIMARY KEY,
  last      INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX ledger_written ON ledger (quota_key, seq);

CREATE INDEX ledger_given_back_written ON ledger_given_back (quota_key, seq);

CREATE TABLE passes (
  entry       TEXT    NOT NULL,
  started_ms  INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  slot_ms     INTEGER,
  status      TEXT    NOT NULL CHECK (status IN ('completed', 'stopped', 'interrupted', 'skipped', 'failed')),
  PRIMARY KEY (entry, started_ms)
) WITHOUT ROWID;

CREATE INDEX passes_started ON passes (started_ms);

CREATE TABLE purged (
  cache      TEXT    PRIMARY KEY,
  mark       TEXT    NOT NULL,
  changed_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE sessions (
  hash       TEXT    PRIMARY KEY,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX sessions_expires ON sessions (expires_ms);

CREATE TABLE backoff (
  one      INTEGER PRIMARY KEY CHECK (one = 1),
  until_ms INTEGER NOT NULL,
  wait_ms  INTEGER NOT NULL,
  in_a_row INTEGER NOT NULL,
  blamed   TEXT    NOT NULL,
  cause    TEXT    NOT NULL
);

CREATE TABLE backed_up (
  one   INTEGER PRIMARY KEY CHECK (one = 1),
  at_ms INTEGER NOT NULL
);

PRAGMA user_version = 28;
