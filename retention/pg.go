package retention

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// pgPrune is Prune on PostgreSQL: the same rows go, in transactions of
// about r.Batch rows, so that hosts writing meanwhile wait one batch. There
// is no WAL to bound nor file to shrink: PostgreSQL's autovacuum reuses the
// space, so Freed stays 0.
func (pr *pruner) pgPrune(ctx context.Context, r Retention) (ingest.Pruned, error) {
	if r.Batch <= 0 {
		r.Batch = 50000
	}
	var p ingest.Pruned
	pr.tell(r, &p)
	before, ledgerBefore := msOf(r.Before), msOf(r.LedgerBefore)
	steps := []struct {
		n    *int64
		q    string
		args []any
	}{
		{&p.Runs, pgPruneRuns, []any{before, max(1, r.Batch/50)}},
		{&p.Stats, pgPruneStats, []any{before, r.Batch}},
		{&p.Videos, pgPruneVideos, []any{msOf(r.orphansBefore()), r.Batch}},
	}
	if !r.LedgerBefore.IsZero() {
		steps = append(steps, struct {
			n    *int64
			q    string
			args []any
		}{&p.Ledger, pgPruneLedger, []any{ledgerBefore, r.Batch}})
	}
	for i, s := range steps {
		if err := pr.pgBatches(ctx, s.n, &p.Entries, s.q, s.args...); err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		if i == 1 { // the rollup, once the runs and stats it sums are gone
			if err := pr.pgPruneDays(ctx, before); err != nil {
				return p, fmt.Errorf("prune: daily rollup: %w", err)
			}
			if err := pr.pruneTerms(ctx, r, &p, func(context.Context) error { pr.told(); return nil }); err != nil {
				return p, fmt.Errorf("prune: %w", err)
			}
		}
	}
	if err := pr.prunePasses(ctx, r); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	return p, nil
}

// pgBatches runs q, one transaction at a time, until it deletes nothing;
// q returns how many rows it deleted and how many entries went with them.
func (pr *pruner) pgBatches(ctx context.Context, n, entries *int64, q string, args ...any) error {
	for {
		var got, gone int64
		err := pr.update(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, q, args...).Scan(&got, &gone) })
		if err != nil {
			return err
		}
		*n, *entries = *n+got, *entries+gone
		pr.told()
		if got == 0 {
			return nil
		}
	}
}

// The prune's batches. Rows that point at each other go in one statement:
// PostgreSQL checks the foreign keys at its end. An orphan video is locked
// as it is chosen, and one another host's page holds is left for a later
// prune: that page may be about to point at it.
const (
	pgPruneRuns = `
WITH old AS (SELECT id FROM runs WHERE kind = 'trending' AND started_ms < ?1 AND status <> 'running'
             ORDER BY started_ms LIMIT ?2),
  e AS (DELETE FROM trending_entries WHERE run_id IN (SELECT id FROM old) RETURNING 1),
  r AS (DELETE FROM runs WHERE id IN (SELECT id FROM old) RETURNING 1)
SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM e)`
	pgPruneStats = `
WITH s AS (DELETE FROM video_stats WHERE ctid IN (SELECT ctid FROM video_stats WHERE day_ms < ?1 LIMIT ?2) RETURNING 1)
SELECT count(*), 0 FROM s`
)

var (
	pgPruneVideos = store.WithDays("0", store.AllDays) + `,
  o AS (SELECT vid FROM videos AS v WHERE last_seen_ms < ?1` + orphanClause + `
           ORDER BY last_seen_ms LIMIT ?2 FOR UPDATE SKIP LOCKED),
  r AS (DELETE FROM video_regions WHERE vid IN (SELECT vid FROM o)),
  d AS (DELETE FROM video_days AS vd USING days WHERE vd.day_ms = days.d AND vd.vid IN (SELECT vid FROM o)),
  x AS (DELETE FROM video_docs WHERE vid IN (SELECT vid FROM o)),
  v AS (DELETE FROM videos WHERE vid IN (SELECT vid FROM o) RETURNING 1)
SELECT count(*), 0 FROM v`
	pgPruneLedger = `
WITH l AS (DELETE FROM ledger WHERE ctid IN (SELECT ctid FROM ledger WHERE at_ms < ?1 LIMIT ?2) RETURNING 1),
  g AS (DELETE FROM ledger_given_back WHERE at_ms < ?1)
SELECT count(*), 0 FROM l`
)

// pgPruneDays deletes the rollup of the days before the cut (a day's
// 00:00) and makes the cut's day again for the videos a run begun the
// day before left in it, as pruneDays does.
func (pr *pruner) pgPruneDays(ctx context.Context, before int64) error {
	if _, err := pr.w.ExecContext(ctx, `DELETE FROM video_days WHERE day_ms < ?1`, before); err != nil {
		return err
	}
	return pr.refillStraddled(ctx, before)
}

// PostgreSQL's refills, as refillDelete and the others.
const (
	pgRefillDelete         = `DELETE FROM video_days WHERE day_ms = ?1 AND vid IN (SELECT jsonb_array_elements_text(?2::jsonb)::bigint)`
	pgRefillDayFromEntries = `
SELECT video_days_fold(ARRAY[ROW(vid, region, category, fetched_ms / 86400000 * 86400000, fetched_ms, fetched_ms, 1,
  rank, rank, fetched_ms, view_count, like_count, comment_count)::video_days])
FROM trending_entries AS e WHERE ` + store.EntryDay + ` = ?1 AND e.vid IN (SELECT jsonb_array_elements_text(?2::jsonb)::bigint)`
	pgRefillDayFromStats = `
SELECT video_days_fold(ARRAY[ROW(vid, '', '', day_ms, at_ms, at_ms, 0, NULL, NULL, at_ms,
  view_count, like_count, comment_count)::video_days])
FROM video_stats WHERE day_ms = ?1 AND vid IN (SELECT jsonb_array_elements_text(?2::jsonb)::bigint)`
)
