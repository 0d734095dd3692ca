-- The rows a prune cuts sit together: the tracked counts, the daily
-- rollup and the entries' order by video are each led by the UTC day
-- (its 00:00, in ms), then the video, so that a cut of whole days deletes
-- whole pages of each and leaves every other page as it was. A read of one
-- video seeks it day by day over the days it asks for.
--
-- The three tables hold no foreign key to videos any more: SQLite checks
-- one by looking the video up in the child table, which would need an
-- order by video beside the day's; retention deletes a video's rows
-- before the video. The tables are rebuilt, row for row, in the
-- migration's transaction; the rollup's triggers are made again over them.
DROP TRIGGER video_days_entry;
DROP TRIGGER video_days_entry_again;
DROP TRIGGER video_days_stat;
DROP TRIGGER video_days_stat_again;

ALTER TABLE trending_entries RENAME TO trending_entries_by_video;
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
INSERT INTO trending_entries SELECT run_id, region, vid, rank, view_count, like_count, comment_count, fetched_ms,
  category FROM trending_entries_by_video;
DROP TABLE trending_entries_by_video;
CREATE INDEX trending_entries_day ON trending_entries (fetched_ms / 86400000 * 86400000, vid, fetched_ms);

ALTER TABLE video_stats RENAME TO video_stats_by_video;
CREATE TABLE video_stats (
  vid           INTEGER NOT NULL,           -- videos.vid
  at_ms         INTEGER NOT NULL,
  view_count    INTEGER,
  like_count    INTEGER,
  comment_count INTEGER,
  day_ms        INTEGER NOT NULL CHECK (day_ms = at_ms / 86400000 * 86400000),  -- at_ms's UTC day
  PRIMARY KEY (day_ms, vid, at_ms)
) WITHOUT ROWID;
INSERT INTO video_stats SELECT vid, at_ms, view_count, like_count, comment_count, at_ms / 86400000 * 86400000
FROM video_stats_by_video ORDER BY at_ms / 86400000 * 86400000, vid, at_ms;
DROP TABLE video_stats_by_video;
CREATE INDEX video_stats_at ON video_stats (at_ms);

ALTER TABLE video_days RENAME TO video_days_by_video;
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
INSERT INTO video_days SELECT * FROM video_days_by_video ORDER BY day_ms, vid, region, category;
DROP TABLE video_days_by_video;

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
