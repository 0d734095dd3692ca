package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// upgradeDays adds video_days, the daily rollup of each video's chart
// entries and tracked counts (schema 7 -> 8), with the triggers that keep
// it, and fills it from the entries and stats already stored. A video page
// reads a year of a busy video from here (a row per chart per day) instead
// of tens of thousands of entries.
//
// Filling it is one pass over trending_entries and video_stats through the
// triggers' own upsert, so an upgraded database holds exactly what the
// triggers would have written.
//
// The fill runs with a page cache that holds the whole rollup
// (upgradeCache): the entries come in run order, so each upsert lands on
// a page of another video, and with SQLite's small default cache those
// pages were spilled and read back again and again.
func upgradeDays(ctx context.Context, tx *sql.Tx) error {
	return withCache(ctx, tx, upgradeCache, func() error {
		for _, q := range []string{daysV10, fillDaysFromEntries, fillDaysFromStats} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// upgradeCache is the page cache of a long upgrade step, in KiB.
const upgradeCache = 128 << 10

// withCache runs f with the connection's page cache at kib KiB, then puts
// back the size it had.
func withCache(ctx context.Context, tx *sql.Tx, kib int, f func() error) error {
	var was int
	if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&was); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -kib)); err != nil {
		return err
	}
	err := f()
	_, rerr := tx.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, was))
	return errors.Join(err, rerr)
}

// daysV10 is what schema 10 creates, in the upgrade and in schema.sql alike.
//
// A row is one video's day on one chart (region, category), or, with region
// ” and no entries, the day's counts read by tracking. peak_ms, views,
// likes and comments are the highest view count read that day and when;
// first_ms, last_ms, entries, best_rank and last_rank are the day's chart
// entries. An entry stored again (a page re-ingested) updates the counts
// and ranks but is counted once.
const daysV10 = `
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
  ON CONFLICT DO UPDATE SET ` + daysUpsert + `;
END;
CREATE TRIGGER video_days_entry_again AFTER UPDATE ON trending_entries BEGIN
  INSERT INTO video_days VALUES (new.vid, new.region, new.category, new.fetched_ms / 86400000 * 86400000,
    new.fetched_ms, new.fetched_ms, 0, new.rank, new.rank, new.fetched_ms, new.view_count, new.like_count,
    new.comment_count)
  ON CONFLICT DO UPDATE SET ` + daysUpsert + `;
END;
CREATE TRIGGER video_days_stat AFTER INSERT ON video_stats BEGIN
  INSERT INTO video_days VALUES (new.vid, '', '', new.at_ms / 86400000 * 86400000,
    new.at_ms, new.at_ms, 0, NULL, NULL, new.at_ms, new.view_count, new.like_count, new.comment_count)
  ON CONFLICT DO UPDATE SET ` + daysUpsert + `;
END;
CREATE TRIGGER video_days_stat_again AFTER UPDATE ON video_stats BEGIN
  INSERT INTO video_days VALUES (new.vid, '', '', new.at_ms / 86400000 * 86400000,
    new.at_ms, new.at_ms, 0, NULL, NULL, new.at_ms, new.view_count, new.like_count, new.comment_count)
  ON CONFLICT DO UPDATE SET ` + daysUpsert + `;
END;
`

// daysUpsert folds one more reading (excluded) into a day's row. Every
// expression reads the row as it was, so the order does not matter.
const daysUpsert = `first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END`

// The fills replay the stored rows through the triggers' upsert.
const (
	fillDaysFromEntries = `
INSERT INTO video_days
SELECT vid, region, category, fetched_ms / 86400000 * 86400000, fetched_ms, fetched_ms, 1, rank, rank,
  fetched_ms, view_count, like_count, comment_count
FROM trending_entries WHERE true
ON CONFLICT DO UPDATE SET ` + daysUpsert
	fillDaysFromStats = `
INSERT INTO video_days
SELECT vid, '', '', at_ms / 86400000 * 86400000, at_ms, at_ms, 0, NULL, NULL, at_ms, view_count, like_count,
  comment_count
FROM video_stats WHERE true
ON CONFLICT DO UPDATE SET ` + daysUpsert
)
