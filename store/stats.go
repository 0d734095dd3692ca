package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// statRow is one video's counts as SaveStats carries them to PostgreSQL
// (statsJSONB's names are the same).
type statRow struct {
	ID       string `json:"id"`
	At       int64  `json:"at"`
	Views    int64  `json:"views"`
	Likes    *int64 `json:"likes"`
	Comments *int64 `json:"comments"`
}

// statsJSON is tracking's counts as PostgreSQL's statement reads them.
func statsJSON(stats []ingest.VideoStats) (string, error) {
	rows := make([]statRow, len(stats))
	for i, s := range stats {
		rows[i] = statRow{ID: s.ID, At: msOf(s.At), Views: s.ViewCount, Likes: s.LikeCount, Comments: s.CommentCount}
	}
	return marshal(rows)
}

// SaveStats stores counts read by videos.batchGetStats in the video_stats
// time series, in one transaction and one statement. Counts of a video the
// database does not hold are dropped (tracking reads only videos it has
// seen); reading the same moment twice keeps the later answer.
func (db *DB) SaveStats(ctx context.Context, stats []ingest.VideoStats) error {
	if len(stats) == 0 {
		return nil
	}
	js, err := db.d.statRows(stats)
	if err != nil {
		return fmt.Errorf("save stats of %d videos: %w", len(stats), err)
	}
	defer releaseRows(js)
	if db.st != nil {
		_, err = db.st.saveStats.ExecContext(ctx, js)
	} else { // a read-only DB, which prepares nothing: SQLite's error says so
		_, err = db.w.ExecContext(ctx, db.q.saveStats, js)
	}
	if err != nil {
		return fmt.Errorf("save stats of %d videos: %w", len(stats), err)
	}
	return nil
}

// SeenOnCharts returns the ids of the videos some chart showed at or after
// since: what tracking reads the counts of. It walks the videos seen since
// (videos_last_seen) and keeps those with a chart entry since, sought day
// by day (trending_entries_day), so a backfill's finds are not tracked.
func (db *DB) SeenOnCharts(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, WithDays("?1", AllDays)+`SELECT v.id FROM videos AS v
WHERE v.last_seen_ms >= ?1 AND EXISTS (SELECT 1 FROM days CROSS JOIN trending_entries AS e
  WHERE `+EntryDay+` = days.d AND e.vid = v.vid AND e.fetched_ms >= ?1)
ORDER BY v.last_seen_ms`, msOf(since))
	if err != nil {
		return nil, fmt.Errorf("videos seen since %s: %w", since.Format(time.RFC3339), err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("videos seen since %s: %w", since.Format(time.RFC3339), err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ChartedSince returns each video some chart showed at or after since,
// with the regions whose charts showed it since, in the store's order of
// videos (the one first stored first): what tracking reads the counts of,
// at the cadence of the video's best region, a batch of those in a row at
// a time. The counts (video_stats) and their rollup (video_days) are led
// by the day, then the video: a batch of videos stored one after another
// writes its rows into a few pages of each, where a batch drawn across
// them all wrote a page a video. The regions come from the daily rollup,
// a row per video, chart and day, not from every entry.
func (db *DB) ChartedSince(ctx context.Context, since time.Time) ([]ingest.Charted, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT v.id, d.region, v.vid FROM videos AS v
JOIN video_days AS d ON d.vid = v.vid
WHERE d.day_ms >= CAST(?1 AS bigint) / 86400000 * 86400000 AND v.last_seen_ms >= ?1 AND d.region <> '' AND d.last_ms >= ?1
ORDER BY v.vid, d.region`, msOf(since))
	if err != nil {
		return nil, fmt.Errorf("videos charted since %s: %w", since.Format(time.RFC3339), err)
	}
	defer rows.Close()
	var out []ingest.Charted
	for rows.Next() {
		var id, region string
		var vid int64
		if err := rows.Scan(&id, &region, &vid); err != nil {
			return nil, fmt.Errorf("videos charted since %s: %w", since.Format(time.RFC3339), err)
		}
		if n := len(out); n > 0 && out[n-1].ID == id {
			out[n-1].Regions = append(out[n-1].Regions, region)
			continue
		}
		out = append(out, ingest.Charted{ID: id, Regions: []string{region}})
	}
	return out, rows.Err()
}

// statsStmts store tracked counts, each database's text: PostgreSQL's
// keeps one row of a video and moment that a batch holds twice.
type statsStmts struct{ saveStats string }

var (
	sqliteStatsSQL = statsStmts{saveStats: `
INSERT INTO video_stats (vid, at_ms, view_count, like_count, comment_count, day_ms)
SELECT v.vid, j.o->>'at', j.o->>'views', j.o->>'likes', j.o->>'comments', (j.o->>'at') / 86400000 * 86400000
FROM (SELECT value AS o FROM jsonb_each(?1) LIMIT -1) AS j
JOIN videos AS v ON v.id = j.o->>'id' WHERE true
ON CONFLICT (day_ms, vid, at_ms) DO UPDATE SET view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count`}
	pgStatsSQL = statsStmts{saveStats: `
INSERT INTO video_stats (vid, at_ms, view_count, like_count, comment_count, day_ms)
SELECT DISTINCT ON (v.vid, (j.o->>'at')::bigint) v.vid, (j.o->>'at')::bigint, (j.o->>'views')::bigint,
  (j.o->>'likes')::bigint, (j.o->>'comments')::bigint, (j.o->>'at')::bigint / 86400000 * 86400000
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id'
ORDER BY v.vid, (j.o->>'at')::bigint, j.n DESC
ON CONFLICT (day_ms, vid, at_ms) DO UPDATE SET view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count`}
)
