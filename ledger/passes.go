package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// TrackEntry is the name PassCosts gives tracking's passes: the daemon's
// entry for it.
const TrackEntry = "track"

// PassCosts is what each chart's completed trending passes started since
// cost on average, by chart name (US, US/10) and pool (the category names
// a region's first pass of the day reads are not a pass's cost: pacing
// keeps room for them apart), and what tracking's
// passes since cost (under TrackEntry), counted from quotaKey's ledger
// (calls given back are not in it), read by the key's range of time: what
// pacing plans with, so that a pass's cost is measured rather than
// guessed. Tracking has no run row: a completed pass of it is a row of
// passes, and its cost the calls (videos.batchGetStats outside any run)
// made between its start and its end.
func (l *Ledger) PassCosts(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	if err := l.passCosts(ctx, out, `
SELECT r.region, r.category, l.pool, sum(l.units), count(DISTINCT r.id)
FROM runs AS r JOIN ledger AS l ON l.run_id = r.id
WHERE r.kind = 'trending' AND r.status = 'completed' AND r.started_ms >= ?1 AND l.quota_key = ?2
  AND l.op <> ?3
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g
                  WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)
GROUP BY r.region, r.category, l.pool`, since.UnixMilli(), quotaKey, ingest.OpCategoriesList); err != nil {
		return nil, err
	}
	if err := l.passCosts(ctx, out, trackCostsSQL, since.UnixMilli(), ingest.OpBatchGetStats, TrackEntry, quotaKey); err != nil {
		return nil, err
	}
	return out, nil
}

// trackCostsSQL sums each pool's units over tracking's completed passes
// (entry ?3) started at ?1 or later: the calls of op ?2 outside any run
// that quota key ?4's ledger holds between a pass's start and its end. It
// returns rows shaped as the charts' query's, region ?3.
const trackCostsSQL = `
SELECT CAST(?3 AS TEXT), '', l.pool, sum(l.units), count(DISTINCT p.started_ms)
FROM passes AS p JOIN ledger AS l
  ON l.quota_key = ?4 AND l.at_ms >= p.started_ms AND l.at_ms <= p.finished_ms AND l.op = ?2 AND l.run_id IS NULL
WHERE p.entry = ?3 AND p.status = 'completed' AND p.started_ms >= ?1
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g
                  WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)
GROUP BY l.pool`

// passCosts adds the query's rows (region, category, pool, units,
// passes) to out as each chart's mean cost per pass.
func (l *Ledger) passCosts(ctx context.Context, out map[string]map[string]float64, query string, args ...any) error {
	rows, err := l.r.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("pass costs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var region, category, pool string
		var units, passes int64
		if err := rows.Scan(&region, &category, &pool, &units, &passes); err != nil {
			return fmt.Errorf("pass costs: %w", err)
		}
		chart := ingest.ChartName(region, category)
		if out[chart] == nil {
			out[chart] = map[string]float64{}
		}
		out[chart][pool] = float64(units) / float64(passes)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pass costs: %w", err)
	}
	return nil
}

// StoppedPasses are the charts' trending runs the quota stopped (status
// stopped) that started at since or later, oldest first: the passes a
// chart's runs set out to make and did not. Runs are the database's, as
// passes are.
func (l *Ledger) StoppedPasses(ctx context.Context, since time.Time) ([]ingest.Stopped, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT id, region, category, started_ms FROM runs
WHERE kind = ? AND status = ? AND started_ms >= ? ORDER BY started_ms, id`,
		string(ingest.Trending), string(ingest.StatusStopped), since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("stopped passes: %w", err)
	}
	defer rows.Close()
	var out []ingest.Stopped
	for rows.Next() {
		var s ingest.Stopped
		var category string
		var ms int64
		if err := rows.Scan(&s.RunID, &s.Region, &category, &ms); err != nil {
			return nil, fmt.Errorf("stopped passes: %w", err)
		}
		s.Chart, s.Started = ingest.ChartName(s.Region, category), time.UnixMilli(ms).UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stopped passes: %w", err)
	}
	return out, nil
}

// lastPassesSQL is each chart's newest completed run of kind ?1 (by id),
// when it counts from, if it started at ?2 or later. It hops from region
// to region, then from category to category, down runs_last (a skip
// scan), and walks each chart's runs back from its newest only to its
// newest completed one: a few index seeks a chart, however many runs the
// database keeps.
const lastPassesSQL = `
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
), newest (id) AS (
  SELECT (SELECT x.id FROM runs AS x WHERE x.kind = ?1 AND x.region = charts.region
          AND x.category = charts.category AND x.id > 0 AND x.status = 'completed'
          ORDER BY x.id DESC LIMIT 1)
  FROM charts WHERE charts.category IS NOT NULL
)
SELECT r.region, r.category, coalesce(r.slot_ms, r.started_ms) FROM newest JOIN runs AS r ON r.id = newest.id
WHERE r.started_ms >= ?2`

// LastPasses is when each entry's latest completed pass counts from, for
// passes since a time: the slot a daemon ran it for, or else its start,
// for the charts' trending runs and the passes of the entries that have
// no run (tracking under TrackEntry, the refresh, the prune) alike, so
// that a pass counts for its slot whatever its length; an entry with none
// since is not in it. Pacing counts an entry's age from it, whatever runs
// stopped since. Passes are the database's, as runs are: quotaKey is not
// read.
func (l *Ledger) LastPasses(ctx context.Context, quotaKey string, since time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	rows, err := l.r.QueryContext(ctx, lastPassesSQL, string(ingest.Trending), since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("last passes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var region, category string
		var ms int64
		if err := rows.Scan(&region, &category, &ms); err != nil {
			return nil, fmt.Errorf("last passes: %w", err)
		}
		out[ingest.ChartName(region, category)] = time.UnixMilli(ms).UTC()
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last passes: %w", err)
	}
	if err := l.lastOthers(ctx, out, since); err != nil {
		return nil, fmt.Errorf("last passes: %w", err)
	}
	return out, nil
}

// lastOthers adds to out when the latest completed pass of each entry
// that has no run, started since, counts from.
func (l *Ledger) lastOthers(ctx context.Context, out map[string]time.Time, since time.Time) error {
	rows, err := l.r.QueryContext(ctx, `SELECT entry, max(coalesce(slot_ms, started_ms)) FROM passes
WHERE status = 'completed' AND started_ms >= ? GROUP BY entry`, since.UnixMilli())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var entry string
		var ms int64
		if err := rows.Scan(&entry, &ms); err != nil {
			return err
		}
		out[entry] = time.UnixMilli(ms).UTC()
	}
	return rows.Err()
}
