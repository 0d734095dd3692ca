-- What the charts' data needs: the chart's category on runs and trending
-- entries ('' for the unfiltered chart, which every run before it
-- fetched), the default thumbnail URL of a video, video_stats (the
-- view-count time series tracking reads), and the indexes the year-scale
-- queries need. ADD COLUMN rewrites no rows, so the step takes the same
-- time on a year of data as on a day; SQLite appends the new column to
-- the table's text.
ALTER TABLE runs ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE trending_entries ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE videos ADD COLUMN thumbnail TEXT NOT NULL DEFAULT '';
DROP INDEX runs_last;
CREATE INDEX runs_last ON runs (kind, region, category, id);
CREATE INDEX runs_started ON runs (kind, started_ms);
CREATE INDEX runs_running ON runs (region, kind, category) WHERE status = 'running';
CREATE INDEX videos_last_seen ON videos (last_seen_ms);
CREATE TABLE video_stats (
  vid           INTEGER NOT NULL REFERENCES videos (vid),
  at_ms         INTEGER NOT NULL,
  view_count    INTEGER,
  like_count    INTEGER,
  comment_count INTEGER,
  PRIMARY KEY (vid, at_ms)
) WITHOUT ROWID;
CREATE INDEX video_stats_at ON video_stats (at_ms);
