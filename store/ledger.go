package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

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
	return calls(ctx, db.r, quotaKey, since)
}

// querier is a pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func calls(ctx context.Context, db querier, quotaKey string, since time.Time) ([]ingest.Call, error) {
	rows, err := db.QueryContext(ctx, `
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

// DailyUnits returns, per pool, the units quotaKey's ledger holds for each
// of days days UTC from since's, oldest first; given-back calls left out.
func (db *DB) DailyUnits(ctx context.Context, quotaKey string, since time.Time, days int) (map[string][]int64, error) {
	start := since.UTC().Truncate(24 * time.Hour)
	rows, err := db.r.QueryContext(ctx, `
SELECT pool, (at_ms - ?2) / 86400000 AS day, sum(units) FROM ledger
WHERE quota_key = ?1 AND at_ms >= ?2 AND at_ms < ?3
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)
GROUP BY pool, day`, quotaKey, start.UnixMilli(), start.AddDate(0, 0, days).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("daily units of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var pool string
		var day, units int64
		if err := rows.Scan(&pool, &day, &units); err != nil {
			return nil, fmt.Errorf("daily units of %s: %w", quotaKey, err)
		}
		if out[pool] == nil {
			out[pool] = make([]int64, days)
		}
		if day >= 0 && day < int64(days) {
			out[pool][day] += units
		}
	}
	return out, rows.Err()
}
