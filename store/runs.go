package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// LastStarts is each chart's latest start as last (LastRuns) holds it,
// but for a pass a signal cut short: the daemon catches that one up.
func LastStarts(last map[string]RunSummary) map[string]time.Time {
	out := map[string]time.Time{}
	for code, s := range last {
		if s.Status != ingest.StatusInterrupted {
			out[code] = s.Started
		}
	}
	return out
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

// LastStart is when the newest finished trending run of chart ("US",
// "US/music") counts from: the slot a daemon started it for, however late
// it started, or else its start. A run a signal interrupted is left out:
// that pass did not serve its slot, so a restart catches it up; zero when
// there is none.
func (db *DB) LastStart(ctx context.Context, chart string) (time.Time, error) {
	return db.lastStart(ctx, chart, `status NOT IN ('running', 'interrupted')`)
}

// LastCompletedStart is when the newest completed trending run of chart
// counts from, as LastStart counts it: the pass the chart's cadence runs
// from (a failed pass fetched the chart no fresher); zero when there is
// none.
func (db *DB) LastCompletedStart(ctx context.Context, chart string) (time.Time, error) {
	return db.lastStart(ctx, chart, `status = 'completed'`)
}

func (db *DB) lastStart(ctx context.Context, chart, status string) (time.Time, error) {
	region, category, _ := strings.Cut(chart, "/")
	var started sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(slot_ms, started_ms) FROM runs
WHERE kind = ?1 AND region = ?2 AND category = ?3 AND `+status+`
ORDER BY id DESC LIMIT 1`, string(ingest.Trending), region, category).Scan(&started)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last start of %s: %w", chart, err)
	}
	return timeOf(started), nil
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
		key := ingest.ChartName(s.Region, s.Category)
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

// RunFilter narrows ListRuns.
type RunFilter struct {
	Region string          // "": every region
	Kind   ingest.PageKind // "": both kinds
	Before int64           // only runs with a smaller id; 0: from the newest
	Limit  int
}

// ListRuns returns runs newest first, without their units.
func (db *DB) ListRuns(ctx context.Context, f RunFilter) ([]RunSummary, error) {
	before := f.Before
	if before <= 0 {
		before = 1<<62 - 1
	}
	rows, err := db.r.QueryContext(ctx, `
SELECT id, region, category, kind, status, message, started_ms, finished_ms, pages, videos, retry_at_ms
FROM runs WHERE id < ?1 AND (?2 = '' OR region = ?2) AND (?3 = '' OR kind = ?3)
ORDER BY id DESC LIMIT ?4`, before, f.Region, string(f.Kind), f.Limit)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	defer rows.Close()
	var out []RunSummary
	for rows.Next() {
		var s RunSummary
		var started, finished, retry sql.NullInt64
		if err := rows.Scan(&s.RunID, &s.Region, &s.Category, &s.Kind, &s.Status, &s.Message, &started,
			&finished, &s.Pages, &s.Videos, &retry); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		s.Started, s.Finished, s.RetryAt = timeOf(started), timeOf(finished), timeOf(retry)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return out, nil
}

// StartRun records the start of a pass of kind over region and returns
// its id: a trending run is of the chart of region and category (a
// videoCategoryId; "" the unfiltered chart), whose entries its pages store
// carry the category.
func (db *DB) StartRun(ctx context.Context, region, category string, kind ingest.PageKind, at time.Time) (int64, error) {
	return db.startRun(ctx, region, category, kind, at, time.Time{})
}

// StartSlotRun records the start of a trending pass a daemon started for
// slot, the slot kept beside the start: a pass that started late still
// counts as its slot's (LastStart).
func (db *DB) StartSlotRun(ctx context.Context, region, category string, at, slot time.Time) (int64, error) {
	return db.startRun(ctx, region, category, ingest.Trending, at, slot)
}

func (db *DB) startRun(ctx context.Context, region, category string, kind ingest.PageKind, at, slot time.Time) (int64, error) {
	var id int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx,
			`INSERT INTO runs (region, category, kind, status, started_ms, slot_ms) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			region, category, string(kind), ingest.StatusRunning, msOf(at), nullMS(slot)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("start %s run %s: %w", kind, ingest.ChartName(region, category), err)
	}
	return id, nil
}

// FinishRun records how a run ended.
func (db *DB) FinishRun(ctx context.Context, runID int64, end ingest.RunEnd) error {
	switch end.Status {
	case ingest.StatusCompleted, ingest.StatusStopped, ingest.StatusInterrupted, ingest.StatusSkipped, ingest.StatusFailed:
	default:
		return fmt.Errorf("finish run %d: status %q is not completed, stopped, interrupted, skipped or failed", runID, end.Status)
	}
	lost, err := db.lostRanks(ctx, runID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	msg := end.Message
	if len(lost) > 0 {
		msg = strings.TrimPrefix(msg+"; "+LostRanksMessage(lost), "; ")
	}
	return db.updateRun(ctx, "finish", runID,
		`UPDATE runs SET status = ?, message = ?, finished_ms = ?, retry_at_ms = ? WHERE id = ?`,
		end.Status, msg, msOf(end.At), nullMS(end.RetryAt), runID)
}

// lostRanks are the ranks of a run that none of its entries holds, below
// the highest one stored of the same page. A rank is its place on its
// page plus PageSize for each page before it, and an entry is one per
// video: a video the chart moved from one page to the next is met twice
// and keeps its first rank (trendingUpsert), so the later is lost. The
// places after a page's last are not counted: a page may hold fewer than
// PageSize.
func (db *DB) lostRanks(ctx context.Context, runID int64) ([]int, error) {
	ranks, err := int64s(db.w.QueryContext(ctx, `SELECT rank FROM trending_entries WHERE run_id = ? ORDER BY rank`, runID))
	if err != nil {
		return nil, fmt.Errorf("lost ranks: %w", err)
	}
	var lost []int
	next := int64(1)
	for _, r := range ranks {
		if first := (r-1)/PageSize*PageSize + 1; next < first { // a page begun
			next = first
		}
		for ; next < r; next++ {
			lost = append(lost, int(next))
		}
		next = r + 1
	}
	return lost, nil
}

// LostRanksMessage is what a run's message says of the ranks it lost.
func LostRanksMessage(lost []int) string {
	word := "rank"
	if len(lost) > 1 {
		word = "ranks"
	}
	return fmt.Sprintf("the chart moved between its pages: %s %s lost (a video met on two pages keeps its first rank)",
		word, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(lost)), ", "), "[]"))
}

// AbandonRuns marks the runs of kind of region and category that are
// still "running" as failed: their worker died before finishing them. Call
// it only while holding the chart's lease, when no run of it can be in
// flight.
func (db *DB) AbandonRuns(ctx context.Context, region, category string, kind ingest.PageKind, at time.Time) error {
	// status = 'running' matches the partial index runs_running, so this
	// reads only the runs in flight, not a region's year of runs.
	_, err := db.w.ExecContext(ctx, `UPDATE runs SET status = 'failed', finished_ms = ?,
		message = 'interrupted: the worker stopped before the run finished'
		WHERE region = ? AND kind = ? AND status = 'running' AND category = ?`,
		msOf(at), region, string(kind), category)
	if err != nil {
		// a full disk is said as at any other write: no other chart can store either
		return fmt.Errorf("abandon %s runs of %s: %w", kind, ingest.ChartName(region, category), db.full(err))
	}
	return nil
}

func (db *DB) updateRun(ctx context.Context, what string, runID int64, q string, args ...any) error {
	res, err := db.w.ExecContext(ctx, q, args...)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = errors.New("no such run")
		}
	}
	if err != nil {
		return fmt.Errorf("%s run %d: %w", what, runID, err)
	}
	return nil
}
