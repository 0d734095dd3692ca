package store

// upgradeData adds what issue 12's data needs (schema 6 -> 7):
//
//   - the chart's category on runs and trending entries, ” for the
//     unfiltered chart, which is what every run before it fetched;
//   - the default thumbnail URL of a video, for the CSV export;
//   - video_stats, the view-count time series that tracking reads with
//     videos.batchGetStats, beside the chart entries;
//   - the indexes the year-scale queries need: a run by time (retention,
//     export), the last run of a chart, the runs still running.
//
// ADD COLUMN rewrites no rows, so the step takes the same time on a year of
// data as on a day. SQLite appends the new column to the table's text, so
// schema.sql spells those tables the way the upgrade leaves them.
var upgradeData = execAll(`
ALTER TABLE runs ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE trending_entries ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE videos ADD COLUMN thumbnail TEXT NOT NULL DEFAULT '';
DROP INDEX runs_last;
` + dataV7)

// dataV7 is what schema 7 creates, in the upgrade and in schema.sql alike.
const dataV7 = `
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
`
