package store

import (
	"context"
	"fmt"
	"time"
)

// LatestEntry is a video in a region's latest unfiltered chart.
type LatestEntry struct {
	StoredVideo
	Region string
	RunID  int64     // the region's latest run (Steady dates its entries)
	At     time.Time // the run's start
	Rank   int
}

// latestEntriesSQL reads every region's latest unfiltered chart in one
// statement: the run Chart would show for the region at no time asked,
// and its entries, region by region in rank order.
var latestEntriesSQL = `
SELECT ` + videoColumns + `, r.region, r.id, r.started_ms, e.rank
FROM runs AS r
JOIN trending_entries AS e ON e.run_id = r.id AND e.region = r.region
JOIN videos AS v ON v.vid = e.vid
WHERE r.id IN (SELECT max(id) FROM runs
  WHERE kind = 'trending' AND category = '' AND status <> 'running' AND videos > 0 GROUP BY region)
ORDER BY r.region, e.rank`

// LatestCharts is the entries of every region's latest unfiltered chart:
// what a page across regions reads, in one statement rather than a chart
// at a time.
func (db *DB) LatestCharts(ctx context.Context) ([]LatestEntry, error) {
	rows, err := db.r.QueryContext(ctx, latestEntriesSQL)
	if err != nil {
		return nil, fmt.Errorf("latest charts: %w", err)
	}
	defer rows.Close()
	var e LatestEntry
	var started int64
	s := newVideoScanner(&e.Region, &e.RunID, &started, &e.Rank)
	var out []LatestEntry
	for rows.Next() {
		v, err := s.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("latest charts: %w", err)
		}
		out = append(out, LatestEntry{StoredVideo: v, Region: e.Region, RunID: e.RunID, At: time.UnixMilli(started).UTC(), Rank: e.Rank})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest charts: %w", err)
	}
	return out, nil
}
