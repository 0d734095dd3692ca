package store

import (
	"context"
	"fmt"
	"time"
)

// LatestEntry is a video's place in a region's latest unfiltered chart:
// the video by its id and its key in the store (VideosOf reads it).
type LatestEntry struct {
	ID     string
	Vid    int64
	Region string
	RunID  int64     // the region's latest run (Steady dates its entries)
	At     time.Time // the run's start
	Rank   int
}

// latestEntriesSQL reads every region's latest unfiltered chart in one
// statement: the run Chart would show for the region at no time asked,
// and its entries, region by region in rank order. The regions are
// found by a walk of runs_last's regions (a seek for the next after
// each), and each region's run by a seek to its newest unfiltered run
// there, going back past those running or empty: a few index steps a
// region however many runs the store holds, where a GROUP BY over runs
// read every run at every build of a page across regions.
var latestEntriesSQL = `
WITH RECURSIVE regions(region) AS (
  SELECT * FROM (SELECT region FROM runs WHERE kind = 'trending' ORDER BY region LIMIT 1) AS first
  UNION ALL
  SELECT (SELECT n.region FROM runs AS n WHERE n.kind = 'trending' AND n.region > regions.region ORDER BY n.region LIMIT 1)
  FROM regions WHERE regions.region IS NOT NULL
), latest(id) AS (
  SELECT (SELECT l.id FROM runs AS l WHERE l.kind = 'trending' AND l.region = regions.region AND l.category = ''
      AND l.status <> 'running' AND l.videos > 0 ORDER BY l.id DESC LIMIT 1)
  FROM regions WHERE regions.region IS NOT NULL
)
SELECT v.id, e.vid, r.region, r.id, r.started_ms, e.rank
FROM latest
JOIN runs AS r ON r.id = latest.id
JOIN trending_entries AS e ON e.run_id = r.id AND e.region = r.region
JOIN videos AS v ON v.vid = e.vid
ORDER BY r.region, e.rank`

// LatestCharts is the entries of every region's latest unfiltered chart:
// what a page across regions reads, in one statement rather than a chart
// at a time. It names each video and no more: a page across regions
// orders every video it finds by the places alone and reads the few it
// shows whole (VideosOf).
func (db *DB) LatestCharts(ctx context.Context) ([]LatestEntry, error) {
	rows, err := db.r.QueryContext(ctx, latestEntriesSQL)
	if err != nil {
		return nil, fmt.Errorf("latest charts: %w", err)
	}
	defer rows.Close()
	var out []LatestEntry
	for rows.Next() {
		var e LatestEntry
		var started int64
		if err := rows.Scan(&e.ID, &e.Vid, &e.Region, &e.RunID, &started, &e.Rank); err != nil {
			return nil, fmt.Errorf("latest charts: %w", err)
		}
		e.At = time.UnixMilli(started).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest charts: %w", err)
	}
	return out, nil
}

// VideosOf is the stored videos of vids (their keys in the store), by
// key; a key with no video is absent.
func (db *DB) VideosOf(ctx context.Context, vids []int64) (map[int64]StoredVideo, error) {
	out := make(map[int64]StoredVideo, len(vids))
	if len(vids) == 0 {
		return out, nil
	}
	rows, err := db.r.QueryContext(ctx, db.q.videosOf, jsonIDs(vids))
	if err != nil {
		return nil, fmt.Errorf("videos: %w", err)
	}
	defer rows.Close()
	var vid int64
	s := newVideoScanner(&vid)
	for rows.Next() {
		v, err := s.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("videos: %w", err)
		}
		out[vid] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("videos: %w", err)
	}
	return out, nil
}
