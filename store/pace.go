package store

import (
	"context"
	"fmt"
	"time"
)

// PassCosts is what each chart's completed trending passes started since
// cost on average, by chart name (US, US/10) and pool, counted from the
// ledger (calls given back are not in it): what pacing plans with, so that
// a chart's cost is measured rather than guessed.
func (db *DB) PassCosts(ctx context.Context, since time.Time) (map[string]map[string]float64, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT r.region, r.category, l.pool, sum(l.units), count(DISTINCT r.id)
FROM runs AS r JOIN ledger AS l ON l.run_id = r.id
WHERE r.kind = 'trending' AND r.status = 'completed' AND r.started_ms >= ?1
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g
                  WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)
GROUP BY r.region, r.category, l.pool`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("pass costs: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]float64{}
	for rows.Next() {
		var region, category, pool string
		var units, passes int64
		if err := rows.Scan(&region, &category, &pool, &units, &passes); err != nil {
			return nil, fmt.Errorf("pass costs: %w", err)
		}
		chart := chartName(region, category)
		if out[chart] == nil {
			out[chart] = map[string]float64{}
		}
		out[chart][pool] = float64(units) / float64(passes)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pass costs: %w", err)
	}
	return out, nil
}
