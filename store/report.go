package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// RunSummary is one run as `ingest report` shows it.
type RunSummary struct {
	RunID    int64
	Region   string
	Category string // "" the unfiltered chart
	Kind     ingest.PageKind
	Status   ingest.RunStatus
	Message  string
	Started  time.Time
	Finished time.Time // zero while running
	Pages    int
	Videos   int
	// Units is what the run's calls took, all pools together; PoolUnits
	// breaks it down by pool (a region's units in the report are
	// PoolUnits["default"]).
	Units     int64
	PoolUnits map[string]int64
	// RetryAt is, for a stopped run, when it could go on.
	RetryAt time.Time
}

// LastRuns returns the most recent finished run of kind for every chart
// that has one, by chart name: the region (US) for its unfiltered chart,
// region/category (US/10) for a category's. A run in flight is not a last
// run yet.
//
// It reads a few index entries per chart, whatever the history holds: the
// charts are walked one index seek at a time (SQLite has no skip scan for
// DISTINCT), and each chart's runs newest first until a finished one.
func (db *DB) LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]RunSummary, error) {
	runs, err := db.runs(ctx, `r.id IN (`+lastRunIDs+`)`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("last %s runs: %w", kind, err)
	}
	return runs, nil
}

// lastRunIDs are the ids of the newest finished run of kind ?1 of each
// chart. It hops from region to region, then from category to category,
// down runs_last (a skip scan), so a year of hourly runs costs a few index
// seeks a chart, not a walk over every run. (x.id > 0 tells the plan test
// the newest-first walk, which stops at the first finished run, from a
// read of the chart's whole history.)
const lastRunIDs = `
WITH RECURSIVE regs (region) AS (
  SELECT (SELECT min(region) FROM runs WHERE kind = ?1 AND region > '')
  UNION ALL
  SELECT (SELECT min(region) FROM runs WHERE kind = ?1 AND region > regs.region)
  FROM regs WHERE regs.region IS NOT NULL
), charts (region, category) AS (
  SELECT region, (SELECT min(category) FROM runs WHERE kind = ?1 AND region = regs.region AND category >= '')
  FROM regs WHERE regs.region IS NOT NULL
  UNION ALL
  SELECT region, (SELECT min(category) FROM runs WHERE kind = ?1 AND region = charts.region
                  AND category > charts.category)
  FROM charts WHERE charts.category IS NOT NULL
)
SELECT (SELECT x.id FROM runs AS x WHERE x.kind = ?1 AND x.region = charts.region
        AND x.category = charts.category AND x.id > 0 AND x.status <> 'running'
        ORDER BY x.id DESC LIMIT 1)
FROM charts WHERE charts.category IS NOT NULL`

// Run returns one run, finished or not.
func (db *DB) Run(ctx context.Context, runID int64) (RunSummary, error) {
	runs, err := db.runs(ctx, `r.id = ?1`, runID)
	if err != nil {
		return RunSummary{}, fmt.Errorf("run %d: %w", runID, err)
	}
	for _, r := range runs {
		return r, nil
	}
	return RunSummary{}, fmt.Errorf("run %d: no such run", runID)
}

// runs reads the runs that match where, with their units from the ledger,
// by chart name (the region, or region/category). The ledger is summed over
// those runs only (ledger_run).
func (db *DB) runs(ctx context.Context, where string, arg any) (map[string]RunSummary, error) {
	rows, err := db.r.QueryContext(ctx, `
WITH sel AS MATERIALIZED (SELECT * FROM runs AS r WHERE `+where+`)
SELECT sr.id, sr.region, sr.category, sr.kind, sr.status, sr.message, sr.started_ms, sr.finished_ms,
  sr.pages, sr.videos, sr.retry_at_ms, l.pool, l.units
FROM sel AS sr
LEFT JOIN (SELECT run_id, pool, sum(units) AS units FROM ledger
           WHERE run_id IS NOT NULL AND run_id IN (SELECT id FROM sel)
             AND NOT EXISTS (SELECT 1 FROM ledger_given_back g
               WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)
           GROUP BY run_id, pool) AS l ON l.run_id = sr.id`, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	runs := map[string]RunSummary{}
	for rows.Next() {
		var s RunSummary
		var started, finished, retry, units sql.NullInt64
		var pool sql.NullString
		if err := rows.Scan(&s.RunID, &s.Region, &s.Category, &s.Kind, &s.Status, &s.Message, &started, &finished,
			&s.Pages, &s.Videos, &retry, &pool, &units); err != nil {
			return nil, err
		}
		key := chartName(s.Region, s.Category)
		if prev, ok := runs[key]; ok {
			s.PoolUnits, s.Units = prev.PoolUnits, prev.Units
		} else {
			s.PoolUnits = map[string]int64{}
		}
		s.Started, s.Finished, s.RetryAt = timeOf(started), timeOf(finished), timeOf(retry)
		if pool.Valid {
			s.PoolUnits[pool.String] += units.Int64
			s.Units += units.Int64
		}
		runs[key] = s
	}
	return runs, rows.Err()
}

// Recall returns what the ledger holds for quotaKey since a time: the
// calls, and the blocks still in force, for a limiter to refill itself.
func (db *DB) Recall(ctx context.Context, quotaKey string, since time.Time) (ingest.Recalled, error) {
	calls, err := db.Calls(ctx, quotaKey, since)
	if err != nil {
		return ingest.Recalled{}, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT pool, until_ms, at_ms, op FROM ledger_blocks
WHERE quota_key = ? AND until_ms > ?`, quotaKey, time.Now().UnixMilli())
	if err != nil {
		return ingest.Recalled{}, fmt.Errorf("ledger blocks of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	rec := ingest.Recalled{Calls: calls}
	for rows.Next() {
		b := ingest.Block{QuotaKey: quotaKey}
		var until, at int64
		if err := rows.Scan(&b.Pool, &until, &at, &b.Op); err != nil {
			return ingest.Recalled{}, fmt.Errorf("ledger blocks of %s: %w", quotaKey, err)
		}
		b.Until, b.At = time.UnixMilli(until).UTC(), time.UnixMilli(at).UTC()
		rec.Blocks = append(rec.Blocks, b)
	}
	return rec, rows.Err()
}

// Calls returns the ledger's calls under quotaKey made at or after since,
// oldest first, each with its charges in every pool: for the report's
// breakdowns, and to refill a limiter that lost its data.
func (db *DB) Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT call_id, pool, units, at_ms, op, region, coalesce(run_id, 0), unmetered
FROM ledger WHERE quota_key = ? AND at_ms >= ?
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)
ORDER BY at_ms, call_id, pool`, quotaKey, msOf(since))
	if err != nil {
		return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	var calls []ingest.Call
	for rows.Next() {
		c := ingest.Call{QuotaKey: quotaKey}
		var ch ingest.Charge
		var at int64
		if err := rows.Scan(&c.ID, &ch.Pool, &ch.Units, &at, &c.Op, &c.Region, &c.RunID, &c.Unmetered); err != nil {
			return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
		}
		c.At = time.UnixMilli(at).UTC()
		if n := len(calls); n == 0 || calls[n-1].ID != c.ID {
			calls = append(calls, c)
		}
		if ch.Pool != "" || ch.Units != 0 {
			last := &calls[len(calls)-1]
			last.Charges = append(last.Charges, ch)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
	}
	return calls, nil
}

// ViewPoint is a video's counts in one trending run.
type ViewPoint struct {
	RunID    int64
	Region   string
	Category string // the run's chart: "" the unfiltered one
	At       time.Time
	Rank     int
	Views    int64
	Likes    *int64 // nil: hidden
	Comments *int64 // nil: hidden
}

// ViewHistory returns videoID's trending entries, oldest first; none when
// the video never trended.
func (db *DB) ViewHistory(ctx context.Context, videoID string) ([]ViewPoint, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT e.run_id, e.region, e.category, e.fetched_ms, e.rank, coalesce(e.view_count, 0),
  e.like_count, e.comment_count
FROM videos AS v JOIN trending_entries AS e ON e.vid = v.vid
WHERE v.id = ? ORDER BY e.fetched_ms, e.run_id, e.region`, videoID)
	if err != nil {
		return nil, fmt.Errorf("view history of %s: %w", videoID, err)
	}
	defer rows.Close()
	var points []ViewPoint
	for rows.Next() {
		var p ViewPoint
		var at int64
		var likes, comments sql.NullInt64
		if err := rows.Scan(&p.RunID, &p.Region, &p.Category, &at, &p.Rank, &p.Views, &likes, &comments); err != nil {
			return nil, fmt.Errorf("view history of %s: %w", videoID, err)
		}
		p.At, p.Likes, p.Comments = time.UnixMilli(at).UTC(), ptr(likes), ptr(comments)
		points = append(points, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("view history of %s: %w", videoID, err)
	}
	return points, nil
}

// StoredVideo is a video's latest metadata with when it was first and last
// seen.
type StoredVideo struct {
	ingest.Video
	FirstSeen, LastSeen time.Time
}

// Video returns the latest metadata of videoID; ok is false when it is not
// stored.
func (db *DB) Video(ctx context.Context, videoID string) (v StoredVideo, ok bool, err error) {
	var tags string
	var pub, views, likes, comments sql.NullInt64
	var first, last int64
	err = db.r.QueryRowContext(ctx, `
SELECT id, title, description, tags, channel_id, channel_title, category_id,
  published_at_ms, duration, view_count, like_count, comment_count,
  first_seen_ms, last_seen_ms
FROM videos WHERE id = ?`, videoID).Scan(&v.ID, &v.Title, &v.Description, &tags,
		&v.ChannelID, &v.ChannelTitle, &v.CategoryID, &pub, &v.Duration, &views,
		&likes, &comments, &first, &last)
	if err == sql.ErrNoRows {
		return v, false, nil
	}
	if err == nil {
		err = json.Unmarshal([]byte(tags), &v.Tags)
	}
	if err != nil {
		return v, false, fmt.Errorf("video %s: %w", videoID, err)
	}
	v.PublishedAt = timeOf(pub)
	v.ViewCount, v.LikeCount, v.CommentCount = ptr(views), ptr(likes), ptr(comments)
	v.FirstSeen, v.LastSeen = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
	return v, true, nil
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// QuotaKeys returns the quota keys the ledger holds, sorted.
func (db *DB) QuotaKeys(ctx context.Context) ([]string, error) {
	// One index seek per key (a loose index scan), not a pass over the
	// whole ledger as DISTINCT would make.
	rows, err := db.r.QueryContext(ctx, `WITH RECURSIVE k (key) AS (
  SELECT (SELECT min(quota_key) FROM ledger)
  UNION ALL
  SELECT (SELECT min(quota_key) FROM ledger WHERE quota_key > k.key) FROM k WHERE k.key IS NOT NULL
) SELECT key FROM k WHERE key IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("quota keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("quota keys: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}
