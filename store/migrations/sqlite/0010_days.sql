-- video_days, the daily rollup of each video's chart entries and tracked
-- counts, with the triggers that keep it, filled from the entries and
-- stats already stored by replaying them through the triggers' upsert, so
-- an upgraded database holds exactly what the triggers would have written.
-- A Go hook runs it with a page cache that holds the whole rollup
-- (migrate_hooks.go).
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
END;;
INSERT INTO video_days
SELECT vid, region, category, fetched_ms / 86400000 * 86400000, fetched_ms, fetched_ms, 1, rank, rank,
  fetched_ms, view_count, like_count, comment_count
FROM trending_entries WHERE true
ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
INSERT INTO video_days
SELECT vid, '', '', at_ms / 86400000 * 86400000, at_ms, at_ms, 0, NULL, NULL, at_ms, view_count, like_count,
  comment_count
FROM video_stats WHERE true
ON CONFLICT DO UPDATE SET first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END;
