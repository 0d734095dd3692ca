package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// Steady is how long each video of a chart's run has held its place: when
// its entry last changed, as a feed dates its entries (docs/api.md,
// "Feeds"). A feed built from it changes only when an entry does.
type Steady struct {
	// Since is, by video id, the start of the earliest run of the chart
	// from which the video held the same rank in every run up to this one:
	// when it entered the chart or last moved.
	Since map[string]time.Time
}

// steadyBatch is how many earlier runs one step of the walk names.
const steadyBatch = 24

// steadyEntriesSQL reads a run's entries in a region by video id.
const steadyEntriesSQL = `
SELECT v.id, e.rank FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
WHERE e.run_id = ? AND e.region = ?`

// Steady dates each entry of run (a run of region's chart, category ""
// the unfiltered one) by walking the chart's earlier runs back, newest
// first, until every video of the run has been found elsewhere or at
// another rank. Each step reads one run's entries by its key; the walk
// ends at the first run where every video had moved, which for a chart
// that moves is a few runs back. Given ids, only those videos of the run
// are dated (a page across regions dates the few it shows).
func (db *DB) Steady(ctx context.Context, region, category string, run int64, ids ...string) (Steady, error) {
	name := ingest.ChartName(region, category)
	st := Steady{Since: map[string]time.Time{}}
	var startMS int64
	if err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = ?`, run).Scan(&startMS); err != nil {
		return st, fmt.Errorf("steady %s: run %d: %w", name, run, err)
	}
	open, err := db.runRanks(ctx, run, region)
	if err != nil {
		return st, fmt.Errorf("steady %s: %w", name, err)
	}
	if len(ids) > 0 {
		only := make(map[string]int, len(ids))
		for _, id := range ids {
			if rank, ok := open[id]; ok {
				only[id] = rank
			}
		}
		open = only
	}
	for id := range open {
		st.Since[id] = time.UnixMilli(startMS).UTC()
	}
	for from := run; len(open) > 0; {
		runs, err := db.runIDs(ctx, prevRunSQL, region, from, steadyBatch, category)
		if err != nil {
			return st, fmt.Errorf("steady %s: %w", name, err)
		}
		for _, id := range runs {
			if len(open) == 0 {
				break
			}
			ranks, err := db.runRanks(ctx, id, region)
			if err == nil {
				err = db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = ?`, id).Scan(&startMS)
			}
			if err != nil {
				return st, fmt.Errorf("steady %s: run %d: %w", name, id, err)
			}
			for vid, rank := range open {
				if ranks[vid] != rank {
					delete(open, vid)
					continue
				}
				st.Since[vid] = time.UnixMilli(startMS).UTC()
			}
		}
		if len(runs) < steadyBatch {
			break
		}
		from = runs[len(runs)-1]
	}
	return st, nil
}

// runRanks is a run's entries in region: each video's rank by its id.
func (db *DB) runRanks(ctx context.Context, run int64, region string) (map[string]int, error) {
	rows, err := db.r.QueryContext(ctx, steadyEntriesSQL, run, region)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var rank int
		if err := rows.Scan(&id, &rank); err != nil {
			return nil, err
		}
		out[id] = rank
	}
	return out, rows.Err()
}
