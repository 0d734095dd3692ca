package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// Steady is when each video's entry in a chart's run last changed, as a
// feed dates its entries (docs/api.md, "Feeds"): its place, its title or
// its channel. A feed built from it changes only when an entry does.
type Steady struct {
	// Held is, by video id, the start of the earliest run of the chart
	// from which the video held the same rank in every run up to this one:
	// when it entered the chart or last moved.
	Held map[string]time.Time
	// Since is, by video id, the later of Held and when the video's title
	// or channel last changed from what was stored (retitled_ms): when
	// what a feed shows of its entry last changed.
	Since map[string]time.Time
}

// retitledSQL reads when a run's videos in a region were last retitled,
// those that ever were.
const retitledSQL = `
SELECT v.id, v.retitled_ms FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
WHERE e.run_id = ? AND e.region = ? AND v.retitled_ms IS NOT NULL`

// steadyBatch is how many earlier runs one step of the walk names.
const steadyBatch = 24

// steadyEntriesSQL reads a run's entries in a region: each video's id,
// its key in the store and its rank.
const steadyEntriesSQL = `
SELECT v.id, e.vid, e.rank FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
WHERE e.run_id = ? AND e.region = ?`

// steadyRunsSQL names the runs of the same chart before run ?2, newest
// first, with when each started.
const steadyRunsSQL = `
SELECT id, started_ms FROM runs
WHERE kind = 'trending' AND region = ?1 AND category = ?4 AND status <> 'running' AND videos > 0 AND id < ?2
ORDER BY id DESC LIMIT ?3`

// Steady dates each entry of run (a run of region's chart, category ""
// the unfiltered one) by walking the chart's earlier runs back, newest
// first, until every video of the run has been found elsewhere or at
// another rank. Each step reads, for a batch of earlier runs at once, the
// entries of the videos not yet dated alone, by the entries' key; the
// walk ends at the first run where every video had moved, which for a
// chart that moves is a few runs back. Given ids, only those videos of
// the run are dated (a page across regions dates the few it shows).
func (db *DB) Steady(ctx context.Context, region, category string, run int64, ids ...string) (Steady, error) {
	name := ingest.ChartName(region, category)
	st := Steady{Held: map[string]time.Time{}, Since: map[string]time.Time{}}
	var startMS int64
	if err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = ?`, run).Scan(&startMS); err != nil {
		return st, fmt.Errorf("steady %s: run %d: %w", name, run, err)
	}
	open, err := db.runRanks(ctx, run, region, ids)
	if err != nil {
		return st, fmt.Errorf("steady %s: %w", name, err)
	}
	for _, e := range open {
		st.Held[e.id] = time.UnixMilli(startMS).UTC()
	}
	retitled, err := db.retitled(ctx, run, region)
	if err != nil {
		return st, fmt.Errorf("steady %s: %w", name, err)
	}
	for from := run; len(open) > 0; {
		runs, starts, err := db.steadyRuns(ctx, region, category, from)
		if err != nil {
			return st, fmt.Errorf("steady %s: %w", name, err)
		}
		if len(runs) == 0 {
			break
		}
		ranks, err := db.steadyRanks(ctx, region, runs, open)
		if err != nil {
			return st, fmt.Errorf("steady %s: runs %d to %d: %w", name, runs[0], runs[len(runs)-1], err)
		}
		for i, id := range runs {
			if len(open) == 0 {
				break
			}
			for vid, e := range open {
				if ranks[steadyKey{id, vid}] != e.rank {
					delete(open, vid)
					continue
				}
				st.Held[e.id] = time.UnixMilli(starts[i]).UTC()
			}
		}
		if len(runs) < steadyBatch {
			break
		}
		from = runs[len(runs)-1]
	}
	for id, held := range st.Held {
		st.Since[id] = held
		if t, ok := retitled[id]; ok && t.After(held) {
			st.Since[id] = t
		}
	}
	return st, nil
}

// steadyEntry is a video of the run a walk dates: its id and its rank.
type steadyEntry struct {
	id   string
	rank int
}

// steadyKey is an entry of an earlier run: the run and the video's key.
type steadyKey struct{ run, vid int64 }

// steadyRuns is the next batch of the walk: the runs of the chart before
// run from, newest first, and when each started.
func (db *DB) steadyRuns(ctx context.Context, region, category string, from int64) (runs, starts []int64, err error) {
	rows, err := db.r.QueryContext(ctx, steadyRunsSQL, region, from, steadyBatch, category)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, ms int64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, nil, err
		}
		runs, starts = append(runs, id), append(starts, ms)
	}
	return runs, starts, rows.Err()
}

// steadyRanks is the ranks in region, among runs, of the videos still
// open in the walk, by run and video.
func (db *DB) steadyRanks(ctx context.Context, region string, runs []int64, open map[int64]steadyEntry) (map[steadyKey]int, error) {
	vids := make([]int64, 0, len(open))
	for vid := range open {
		vids = append(vids, vid)
	}
	rows, err := db.r.QueryContext(ctx, db.q.steadyRanks, jsonIDs(runs), region, jsonIDs(vids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[steadyKey]int, len(runs)*len(vids))
	for rows.Next() {
		var k steadyKey
		var rank int
		if err := rows.Scan(&k.run, &k.vid, &rank); err != nil {
			return nil, err
		}
		out[k] = rank
	}
	return out, rows.Err()
}

// retitled is when each of a run's videos in region last had its title
// or channel changed, for those that ever had.
func (db *DB) retitled(ctx context.Context, run int64, region string) (map[string]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, retitledSQL, run, region)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var ms int64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, err
		}
		out[id] = time.UnixMilli(ms).UTC()
	}
	return out, rows.Err()
}

// runRanks is a run's entries in region by the video's key in the
// store, those of ids alone when any are given.
func (db *DB) runRanks(ctx context.Context, run int64, region string, ids []string) (map[int64]steadyEntry, error) {
	var only map[string]bool
	if len(ids) > 0 {
		only = make(map[string]bool, len(ids))
		for _, id := range ids {
			only[id] = true
		}
	}
	rows, err := db.r.QueryContext(ctx, steadyEntriesSQL, run, region)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]steadyEntry{}
	for rows.Next() {
		var e steadyEntry
		var vid int64
		if err := rows.Scan(&e.id, &vid, &e.rank); err != nil {
			return nil, err
		}
		if only == nil || only[e.id] {
			out[vid] = e
		}
	}
	return out, rows.Err()
}

// Left dates, by video id, when each of ids last left a chart it is no
// longer in among runs (a run of each region's unfiltered chart, by
// region: a page across regions' latest charts): the start of the first
// run of that chart after the last one that held it. A video that left
// none of them has no date. With Steady's dates of the charts that hold
// it, it dates what a page across regions shows of a video: its rank in
// each region that charts it (docs/api.md, "Feeds").
//
// The daily rollup (video_days) names the regions a video was ever in and
// its last entry in each, a row per region and day since the video was
// first seen; the last entry's own row (by trending_entries_day) names its
// run.
func (db *DB) Left(ctx context.Context, runs map[string]int64, ids ...string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, id := range ids {
		var vid, first int64
		err := db.r.QueryRowContext(ctx, `SELECT vid, first_seen_ms FROM videos WHERE id = ?`, id).Scan(&vid, &first)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("left %s: %w", id, err)
		}
		last, err := db.lastEntries(ctx, vid, first)
		if err != nil {
			return nil, fmt.Errorf("left %s: %w", id, err)
		}
		for region, ms := range last {
			run, ok := runs[region]
			if !ok {
				continue
			}
			at, left, err := db.leftAt(ctx, region, run, vid, ms)
			if err != nil {
				return nil, fmt.Errorf("left %s in %s: %w", id, region, err)
			}
			if left && at.After(out[id]) {
				out[id] = at
			}
		}
	}
	return out, nil
}

// lastEntries is, by region, when vid's last entry in the region's
// unfiltered chart was fetched, over the days since first.
func (db *DB) lastEntries(ctx context.Context, vid, first int64) (map[string]int64, error) {
	rows, err := db.r.QueryContext(ctx, WithDays("?1", AllDays)+`
SELECT d.region, max(d.last_ms) FROM days CROSS JOIN video_days AS d
WHERE d.day_ms = days.d AND d.vid = ?2 AND d.category = '' AND d.region <> '' AND d.entries > 0
GROUP BY d.region`, first, vid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var region string
		var ms int64
		if err := rows.Scan(&region, &ms); err != nil {
			return nil, err
		}
		out[region] = ms
	}
	return out, rows.Err()
}

// leftAt is when vid, last fetched in region's chart at lastMS, left it
// before run: the start of the chart's next run after the one that held
// it; left is false when run holds it.
func (db *DB) leftAt(ctx context.Context, region string, run, vid, lastMS int64) (at time.Time, left bool, err error) {
	var held int64
	err = db.r.QueryRowContext(ctx, `SELECT coalesce(max(e.run_id), 0) FROM trending_entries AS e
WHERE `+EntryDay+` = ? AND e.vid = ? AND e.fetched_ms = ? AND e.region = ? AND e.category = ''`,
		lastMS/dayMS*dayMS, vid, lastMS, region).Scan(&held)
	if err != nil || held == 0 || held >= run {
		return at, false, err
	}
	var ms int64
	err = db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = (SELECT min(id) FROM runs
WHERE kind = 'trending' AND region = ? AND category = '' AND status <> 'running' AND videos > 0 AND id > ?)`,
		region, held).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return at, false, nil
	}
	if err != nil {
		return at, false, err
	}
	return time.UnixMilli(ms).UTC(), true, nil
}
