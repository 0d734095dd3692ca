-- ingest's SQLite schema, whole, for reading: what the numbered files of
-- migrations/sqlite build, in order, on a new database (Migrate). It is not
-- applied; a test checks that it builds exactly the schema the migrations
-- do. A change to the schema is a new migration file, and the same change
-- here.

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

-- What every worker sharing a quota key must agree on, per pool, for the
-- embedded limiter: "limit:reserve:window_ms:day" (quota.ConfigError).
CREATE TABLE quota_config (
  quota_key TEXT NOT NULL,
  pool      TEXT NOT NULL,
  conf      TEXT NOT NULL,
  PRIMARY KEY (quota_key, pool)
) WITHOUT ROWID;

-- The blocks the upstream's exhaustion caused, so that a limiter that lost
-- its data is refilled with them too. until_ms comes from the limiter's clock.
CREATE TABLE ledger_blocks (
  quota_key TEXT    NOT NULL,
  pool      TEXT    NOT NULL,
  until_ms  INTEGER NOT NULL,
  at_ms     INTEGER NOT NULL,
  op        TEXT    NOT NULL,
  PRIMARY KEY (quota_key, pool, until_ms)
) WITHOUT ROWID;

-- Calls that never reached the upstream (the connection was refused, the
-- name did not resolve): given back to the limiter, so that the ledger says
-- what the upstream charged. Calls and Recall leave them out.
CREATE TABLE ledger_given_back (
  quota_key TEXT    NOT NULL,
  call_id   TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  PRIMARY KEY (quota_key, call_id)
) WITHOUT ROWID;

-- Decisions of unknown outcome: the request went out to the shared limiter
-- and no answer came back in time. Each waits here until the limiter says
-- what became of it (by the instance's token); one it had admitted is then
-- written to the ledger as a call given back.
CREATE TABLE ledger_unknown (
  quota_key TEXT    NOT NULL,
  instance  TEXT    NOT NULL,
  token     INTEGER NOT NULL,
  op        TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  charges   TEXT    NOT NULL, -- pool=units, comma separated
  PRIMARY KEY (quota_key, instance, token)
) WITHOUT ROWID;

-- The ledger's own notes: its stable id (to the shared limiter, every
-- process writing to this database is one worker), and what the Redis
-- limiter keeps between runs (its copy of the limiter's ledgers, its clock
-- reference).
CREATE TABLE ledger_notes (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO ledger_notes (name, value) VALUES ('ledger_id', lower(hex(randomblob(8))));

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
, thumbnail TEXT NOT NULL DEFAULT '', audio_language TEXT NOT NULL DEFAULT '', language TEXT NOT NULL DEFAULT '');  -- the default thumbnail's URL ('' unknown), added by schema 7

-- Full-text index over the videos' text. It holds no text of its own
-- (contentless, so the text is kept once, in videos, exactly as sent) and
-- is fed the words of ingest_words(): Go's normalization (internal/textnorm:
-- NFKC, case folding with ß = ss, diacritics folded, emoji and joiners as
-- separators, bigrams for Chinese, Japanese, Thai and Korean runs), joined by
-- spaces, which the ascii tokenizer splits and nothing else. Queries go
-- through the same function; snippets are marked in Go over the original
-- text. contentless_delete lets a row be deleted by its rowid alone.
CREATE VIRTUAL TABLE videos_fts USING fts5(
  title, description, tags, channel_title,
  content = '', contentless_delete = 1, tokenize = 'ascii'
);
-- ORDER BY rank: a title match weighs most, then tags and channel.
INSERT INTO videos_fts (videos_fts, rank) VALUES ('rank', 'bm25(10.0, 2.0, 4.0, 4.0)');

-- The database keeps the index in sync. The update trigger fires only when
-- indexed text really changed, so re-ingesting a page costs no index work.
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

-- One pass over a region: a trending chart, or a backfill's searches.
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
, category TEXT NOT NULL DEFAULT '');  -- the chart's videoCategoryId, '' the unfiltered chart (schema 7)
CREATE INDEX runs_last ON runs (kind, region, category, id);
CREATE INDEX runs_started ON runs (kind, started_ms);
CREATE INDEX runs_running ON runs (region, kind, category) WHERE status = 'running';
-- Retention finds the videos no chart has shown for a while by this.
CREATE INDEX videos_last_seen ON videos (last_seen_ms);

-- category is the run's chart category ('' unfiltered), added by schema 7.
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
  fetched_ms    INTEGER NOT NULL, category TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, region, vid)
) WITHOUT ROWID;
CREATE INDEX trending_entries_vid ON trending_entries (vid, fetched_ms);

-- A video's counts over time, read by tracking (videos.batchGetStats) after
-- it was seen on a chart, whether or not it is still on one.
CREATE TABLE video_stats (
  vid           INTEGER NOT NULL REFERENCES videos (vid),
  at_ms         INTEGER NOT NULL,
  view_count    INTEGER,
  like_count    INTEGER,
  comment_count INTEGER,
  PRIMARY KEY (vid, at_ms)
) WITHOUT ROWID;
CREATE INDEX video_stats_at ON video_stats (at_ms);

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

-- Where a backfill got to, so that it resumes. A backfill is named by its
-- region, --since, --until as given ('' when absent: open-ended, never
-- "now") and --query; key joins them (ingest.BackfillKey).
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

-- The schedule a daemon on this database runs, so that report plans from
-- the schedule in use, not from its own flags. One row.
CREATE TABLE schedule (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  every_ms   INTEGER NOT NULL,
  regions    TEXT    NOT NULL,              -- comma-separated, in schedule order
  updated_ms INTEGER NOT NULL
);

-- The read API's tokens (ingest tokens add): a token is shown once and
-- kept only as its hash; its plan is a plan of the API's plans file.
CREATE TABLE api_tokens (
  name         TEXT    PRIMARY KEY,
  hash         TEXT    NOT NULL UNIQUE,   -- hex SHA-256 of the token: the token itself is never kept
  plan         TEXT    NOT NULL,
  created_ms   INTEGER NOT NULL,
  last_used_ms INTEGER
) WITHOUT ROWID;

-- The daily rollup of each video's chart entries and tracked counts (schema 10),
-- kept by triggers: a video page reads a busy year from here. See store/upgrade_days.go.
CREATE TABLE video_days (
  vid       INTEGER NOT NULL REFERENCES videos (vid),
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
  PRIMARY KEY (vid, region, category, day_ms)
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
