package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// TrackEntry is the name PassCosts gives tracking's passes: the daemon's
// entry for it.
const TrackEntry = "track"

// trackGap tells tracking's passes apart in the ledger, where they have
// no run: a pass's calls follow one another without a pause, and passes
// are at least a minute apart (the shortest --track-every), so a pause of
// more than half a minute starts a new pass.
const trackGap = 30 * time.Second

// PassCosts is what each chart's completed trending passes started since
// cost on average, by chart name (US, US/10) and pool (the category names
// a region's first pass of the day reads are not a pass's cost: pacing
// keeps room for them apart), and what tracking's
// passes since cost (under TrackEntry), counted from quotaKey's ledger
// (calls given back are not in it), read by the key's range of time: what pacing plans with, so that a pass's cost
// is measured rather than guessed. Tracking has no run row: its passes are
// its calls (videos.batchGetStats outside any run) told apart by the pause
// between them, and a pass stopped early counts as one.
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
	if err := l.passCosts(ctx, out, trackCostsSQL, since.UnixMilli(), trackGap.Milliseconds(),
		ingest.OpBatchGetStats, TrackEntry, quotaKey); err != nil {
		return nil, err
	}
	return out, nil
}

// trackCostsSQL numbers tracking's calls into passes (a call more than
// ?2 ms after the one before starts a pass) and sums each pool's units
// over them; it returns rows shaped as the charts' query's, region ?4.
// The calls are found by key and time (ledger_at), not by a pass over the
// whole ledger.
const trackCostsSQL = `
SELECT CAST(?4 AS TEXT), '', pool, sum(units), count(DISTINCT pass) FROM (
  SELECT pool, units, sum(starts) OVER (ORDER BY at_ms, call_id ROWS UNBOUNDED PRECEDING) AS pass
  FROM (
    SELECT l.pool, l.units, l.at_ms, l.call_id,
      CASE WHEN l.at_ms - lag(l.at_ms) OVER (ORDER BY l.at_ms, l.call_id) <= ?2 THEN 0 ELSE 1 END AS starts
    FROM ledger AS l
    WHERE l.quota_key = ?5 AND l.at_ms >= ?1 AND l.op = ?3 AND l.run_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM ledger_given_back g
                      WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)
  ) AS c
) AS p
GROUP BY pool`

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

// LastPasses is when each chart's latest completed trending pass counts
// from (the slot a daemon started it for, or else its start), and
// tracking's latest pass of quotaKey's ledger (under TrackEntry), for
// passes since a time: an entry with none since is not in it. Pacing
// counts a chart's age from it, whatever runs stopped since.
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
	var track sql.NullInt64
	if err := l.r.QueryRowContext(ctx, `SELECT max(at_ms) FROM ledger
WHERE quota_key = ? AND at_ms >= ? AND op = ? AND run_id IS NULL`, quotaKey, since.UnixMilli(), ingest.OpBatchGetStats).Scan(&track); err != nil {
		return nil, fmt.Errorf("last passes: %w", err)
	}
	if track.Valid {
		out[TrackEntry] = time.UnixMilli(track.Int64).UTC()
	}
	return out, nil
}
