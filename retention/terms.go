package retention

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// What the upstream's terms cut (docs/explanation/terms.md): the videos not fetched
// again in time, with every row pointing at them, old backfill results,
// category names and tombstones, and the videos the upstream no longer
// returns.

// staleStmts are what deleting a stale video takes each database's way.
// videoRows are the tables whose rows point at a video, deleted before it
// in their order, the index's among them where no trigger keeps it.
// lockBatch ends the SELECT of a batch of videos deleted with every row
// pointing at them: PostgreSQL locks them, skipping one another host's
// page holds (that page may be about to point at it).
type staleStmts struct {
	videoRows []string
	lockBatch string
}

// videoRowTables are the tables both databases hold that point at a video.
var videoRowTables = []string{"trending_entries", "search_results", "video_stats", "video_days", "video_regions"}

var (
	sqliteStaleSQL = staleStmts{videoRows: videoRowTables}
	pgStaleSQL     = staleStmts{videoRows: append(slices.Clip(videoRowTables), "video_docs"), lockBatch: ` FOR UPDATE SKIP LOCKED`}
)

// Beyond counts what a prune with r would remove, without removing it.
type Beyond struct {
	Runs, Entries, Stats, Videos, Search, Categories int64
	// Ledger is the quota ledger's rows older than r.LedgerBefore: our own
	// records, not the upstream's data, so Any does not weigh them.
	Ledger int64
}

// Any says whether anything of the upstream's data is beyond.
func (b Beyond) Any() bool {
	return b.Runs+b.Entries+b.Stats+b.Videos+b.Search+b.Categories > 0
}

// String is the counts as a message says them.
func (b Beyond) String() string {
	return fmt.Sprintf("%d chart runs with %d entries, %d tracked counts, %d videos, %d backfill results, %d category names, %d ledger rows",
		b.Runs, b.Entries, b.Stats, b.Videos, b.Search, b.Categories, b.Ledger)
}

// Count counts, by index, what Prune(db, r) would delete, each figure as
// Prune counts it: the rows each step deletes, over the database as the
// steps before it leave it (the runs and stats before the cut gone, the
// daily rollup from the cut on; the videos not fetched again in time gone
// with every row pointing at them, then the videos nothing left points
// at). On a database nothing writes meanwhile, Prune's Pruned has these
// counts.
func Count(ctx context.Context, db *store.DB, r Retention) (Beyond, error) {
	r = r.WholeDays()
	var b Beyond
	one := func(q string, args []any, dst ...any) error {
		if err := db.Reader().QueryRowContext(ctx, q, args...).Scan(dst...); err != nil {
			return fmt.Errorf("count what a prune removes: %w", err)
		}
		return nil
	}
	before := msOf(r.Before)
	var stale Beyond // the rows the videos' cut deletes beyond the other cuts
	err := errors.Join(
		one(`SELECT count(*), coalesce(sum((SELECT count(*) FROM trending_entries AS e WHERE e.run_id = r.id)), 0)
			FROM runs AS r WHERE `+prunedRun, []any{before}, &b.Runs, &b.Entries),
		one(`SELECT count(*) FROM video_stats WHERE day_ms < ?`, []any{before}, &b.Stats),
		one(`SELECT count(*) FROM search_results WHERE fetched_ms < ?`, []any{zeroMS(r.SearchBefore)}, &b.Search),
		one(`SELECT count(*) FROM categories WHERE fetched_ms < ?`, []any{zeroMS(r.CategoriesBefore)}, &b.Categories),
		one(`SELECT count(*) FROM ledger WHERE at_ms < ?`, []any{zeroMS(r.LedgerBefore)}, &b.Ledger),
		// ?1 the cut, ?2 the videos' (0: none), ?3 the backfill
		// results' (0: none), ?4 the orphans'
		one(keptDays+`SELECT
			(SELECT count(*) FROM videos WHERE last_seen_ms < ?2),
			(SELECT count(*) FROM days CROSS JOIN trending_entries AS e WHERE `+store.EntryDay+` = days.d
			   AND e.vid IN (SELECT vid FROM videos WHERE last_seen_ms < ?2) AND NOT EXISTS (
			   SELECT 1 FROM runs AS r WHERE r.id = e.run_id AND `+prunedRun+`)),
			(SELECT count(*) FROM days CROSS JOIN video_stats AS st WHERE st.day_ms = days.d
			   AND st.vid IN (SELECT vid FROM videos WHERE last_seen_ms < ?2)),
			(SELECT count(*) FROM search_results WHERE fetched_ms >= ?3
			   AND vid IN (SELECT vid FROM videos WHERE last_seen_ms < ?2)),
			(SELECT count(*) FROM videos AS v WHERE last_seen_ms < ?4 AND last_seen_ms >= ?2`+orphanAfterClause+`)`,
			[]any{before, zeroMS(r.VideosBefore), zeroMS(r.SearchBefore), msOf(r.orphansBefore())},
			&stale.Videos, &stale.Entries, &stale.Stats, &stale.Search, &b.Videos))
	b.Videos += stale.Videos
	b.Entries += stale.Entries
	b.Stats += stale.Stats
	b.Search += stale.Search
	return b, err
}

// zeroMS is t in ms, 0 for a cut not made (no row is older than 0).
func zeroMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return msOf(t)
}

// prunedRun is the runs Prune deletes, as a condition on runs AS r, ?1
// the cut.
const prunedRun = `r.kind = 'trending' AND r.started_ms < ?1 AND r.status <> 'running'`

// keptDays is the days the daily rollup holds from the cut (?1) on: what
// the prune's later steps read the rows of a video by, once the days
// before the cut are gone.
var keptDays = store.WithDays("?1", store.AllDays)

// orphanAfterClause is orphanClause over what the prune leaves: the
// entries of the runs it keeps, the backfill results from their cut (?3)
// on and the stats of the days it keeps.
const orphanAfterClause = `
  AND NOT EXISTS (SELECT 1 FROM days CROSS JOIN trending_entries AS e WHERE ` + store.EntryDay + ` = days.d AND e.vid = v.vid
    AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.id = e.run_id AND ` + prunedRun + `))
  AND NOT EXISTS (SELECT 1 FROM search_results AS s WHERE s.vid = v.vid AND s.fetched_ms >= ?3)
  AND NOT EXISTS (SELECT 1 FROM days CROSS JOIN video_stats AS st WHERE st.day_ms = days.d AND st.vid = v.vid)`

// orphanClause keeps the videos nothing kept points at.
// The entries and stats are sought day by day: a statement that holds it
// begins store.WithDays over every kept day.
const orphanClause = `
  AND NOT EXISTS (SELECT 1 FROM days CROSS JOIN trending_entries AS e WHERE ` + store.EntryDay + ` = days.d AND e.vid = v.vid)
  AND NOT EXISTS (SELECT 1 FROM search_results AS s WHERE s.vid = v.vid)
  AND NOT EXISTS (SELECT 1 FROM days CROSS JOIN video_stats AS st WHERE st.day_ms = days.d AND st.vid = v.vid)`

// orphansBefore is when a video nothing points at goes: OrphansBefore, or
// Before when that is not set.
func (r Retention) orphansBefore() time.Time {
	if r.OrphansBefore.IsZero() {
		return r.Before
	}
	return r.OrphansBefore
}

// StaleBatch is how many videos one transaction deletes with every row
// pointing at them: a chart's worth of history each, a moment's lock.
const StaleBatch = 200

// pruneTerms deletes what the terms' cuts of r name, in short
// transactions, calling between after each: the backfill results fetched
// before r.SearchBefore, the videos fetched before r.VideosBefore with every
// row pointing at them, the category names fetched before
// r.CategoriesBefore (their region fetches them again), and the tombstones
// older than r.GoneBefore.
func (pr *pruner) pruneTerms(ctx context.Context, r Retention, p *ingest.Pruned, between func(context.Context) error) error {
	if !r.SearchBefore.IsZero() {
		batch := max(1, r.Batch/10)
		if err := pr.batches(ctx, &p.Search, batch, between, []any{msOf(r.SearchBefore), batch},
			`DELETE FROM search_results WHERE (run_id, region, vid) IN (
			   SELECT run_id, region, vid FROM search_results WHERE fetched_ms < ? ORDER BY fetched_ms LIMIT ?)`); err != nil {
			return fmt.Errorf("backfill results: %w", err)
		}
	}
	if !r.VideosBefore.IsZero() {
		if err := pr.pruneStale(ctx, r.VideosBefore, p, between); err != nil {
			return fmt.Errorf("videos not fetched again: %w", err)
		}
	}
	if !r.CategoriesBefore.IsZero() {
		at := msOf(r.CategoriesBefore)
		err := pr.update(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM categories WHERE fetched_ms < ?`, at)
			if err == nil {
				p.Categories, _ = res.RowsAffected()
				_, err = tx.ExecContext(ctx, `DELETE FROM category_fetches WHERE fetched_ms < ?`, at)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("category names: %w", err)
		}
	}
	if !r.GoneBefore.IsZero() {
		if _, err := pr.w.ExecContext(ctx, `DELETE FROM videos_gone WHERE gone_ms < ?`, msOf(r.GoneBefore)); err != nil {
			return fmt.Errorf("tombstones: %w", err)
		}
	}
	return nil
}

// pruneStale deletes the videos whose text was fetched before before, with
// every row pointing at them, StaleBatch videos a transaction.
func (pr *pruner) pruneStale(ctx context.Context, before time.Time, p *ingest.Pruned, between func(context.Context) error) error {
	for {
		var n int
		err := pr.update(ctx, func(tx *sql.Tx) error {
			vids, err := vidsOf(ctx, tx, `SELECT vid FROM videos WHERE last_seen_ms < ? ORDER BY last_seen_ms LIMIT ?`+
				pr.q.lockBatch, msOf(before), StaleBatch)
			if n = len(vids); err != nil || n == 0 {
				return err
			}
			return pr.deleteVideos(ctx, tx, vids, p)
		})
		if err != nil || n == 0 {
			return err
		}
		if err := between(ctx); err != nil {
			return err
		}
	}
}

// vidsOf runs q, which selects vids.
func vidsOf(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vids []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vids = append(vids, v)
	}
	return vids, rows.Err()
}

// byDay are the tables led by the day, whose rows of a video are sought
// day by day: their key, and the day as their order says it.
var byDay = map[string]struct{ key, day string }{
	"trending_entries": {"run_id, region, vid", "fetched_ms / 86400000 * 86400000"},
	"video_stats":      {"day_ms, vid, at_ms", "day_ms"},
	"video_days":       {"day_ms, vid, region, category", "day_ms"},
}

// deleteVideos deletes vids with every row pointing at them (the index's
// words too: a trigger's on SQLite, video_docs on PostgreSQL), counting the
// entries, stats, results and videos.
func (pr *pruner) deleteVideos(ctx context.Context, tx *sql.Tx, vids []int64, p *ingest.Pruned) error {
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(vids)), ",") + ")"
	args := make([]any, len(vids))
	for i, v := range vids {
		args[i] = v
	}
	counts := map[string]*int64{"trending_entries": &p.Entries, "search_results": &p.Search, "video_stats": &p.Stats,
		"videos": &p.Videos}
	for _, t := range append(pr.q.videoRows[:len(pr.q.videoRows):len(pr.q.videoRows)], "videos") {
		q := `DELETE FROM ` + t + ` WHERE vid IN ` + in
		if k, ok := byDay[t]; ok {
			q = store.WithDays("0", store.AllDays) + `DELETE FROM ` + t + ` WHERE (` + k.key + `) IN (
  SELECT ` + k.key + ` FROM days CROSS JOIN ` + t + ` WHERE ` + k.day + ` = days.d AND vid IN ` + in + `)`
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if c := counts[t]; c != nil {
			n, _ := res.RowsAffected()
			*c += n
		}
	}
	return nil
}

// batches runs q in one transaction at a time until it deletes fewer than
// batch rows, adding what it deleted to n and calling between after each.
func (pr *pruner) batches(ctx context.Context, n *int64, batch int, between func(context.Context) error, args []any, q string) error {
	for {
		var got int64
		err := pr.update(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q, args...)
			if err == nil {
				got, err = res.RowsAffected()
			}
			return err
		})
		if err != nil {
			return err
		}
		*n += got
		if err := between(ctx); err != nil || got < int64(batch) {
			return err
		}
	}
}

// Gone deletes the videos ids names, which the upstream no longer returns
// (deleted, made private), with every row pointing at them, and keeps a
// tombstone of each: its id and when it went. It returns how many of them
// the database held.
func Gone(ctx context.Context, db *store.DB, ids []string, at time.Time) (int64, error) {
	pr := newPruner(db)
	var p ingest.Pruned
	err := db.Update(ctx, func(tx *sql.Tx) error {
		p = ingest.Pruned{}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO videos_gone (id, gone_ms) VALUES (?, ?)
ON CONFLICT (id) DO NOTHING`, id, msOf(at)); err != nil {
				return err
			}
			vids, err := vidsOf(ctx, tx, `SELECT vid FROM videos WHERE id = ?`, id)
			if err == nil && len(vids) > 0 {
				err = pr.deleteVideos(ctx, tx, vids, &p)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete %d videos gone upstream: %w", len(ids), err)
	}
	return p.Videos, nil
}
