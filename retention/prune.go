// Package retention deletes what the database may no longer keep: the
// statistics older than --keep, the ledger outside the quota's span, and
// what the upstream's terms cut (docs/explanation/terms.md): the videos not fetched
// again in time, with every row pointing at them, old backfill results,
// category names and tombstones, and the videos the upstream no longer
// returns. It works over the pools and transactions the store hands out;
// the store keeps the one open and the one schema.
//
// What is where: what the database may no longer keep, deleted over the
// pools and transactions store hands out (Reader, Writer, Update, Size): the
// prune of statistics older than --keep, the ledger outside the quota's span
// and the videos nothing kept points at, SQLite's batches, checkpoints,
// paused index merges and incremental vacuum (prune.go) beside PostgreSQL's
// batches (pg.go); the terms' cuts (terms.go: backfill results, category
// names, tombstones, the videos not fetched again in time with every row
// pointing at them, each database's way side by side) and the videos gone
// upstream (Gone); what a prune would remove, each step over what the steps
// before it leave (Count); PostgreSQL's dry run, the prune in one
// transaction rolled back (DryRun).
package retention

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// Retention says what Prune removes.
type Retention struct {
	// Before: the chart runs started before it go, finished ones only, with
	// their entries; so do the stats read before it and the videos no
	// chart, search or stat has shown since.
	Before time.Time
	// OrphansBefore: the videos fetched before it that nothing kept points
	// at go (zero: Before).
	OrphansBefore time.Time
	// The upstream's terms' cuts (docs/explanation/terms.md), each kept whole when
	// zero. VideosBefore: the videos whose text was fetched before it go,
	// with every row pointing at them. SearchBefore: the backfill results
	// fetched before it. CategoriesBefore: the category names fetched
	// before it. GoneBefore: the tombstones of videos gone before it.
	VideosBefore, SearchBefore, CategoriesBefore, GoneBefore time.Time
	// LedgerBefore: the ledger rows older than it go. The caller keeps it
	// outside the quota's span (ingest.Costs.Span), which a limiter refills
	// from.
	LedgerBefore time.Time
	// Batch is about how many rows one transaction deletes (default
	// DefaultBatch; a batch of runs ends at the run that reaches it).
	// Large, because each batch of runs rewrites every page of the
	// entries' second order (by video and time) that holds one of its
	// rows: for videos that chart for months, that is most of that index,
	// a batch after batch; small enough that a batch's pages stay within
	// the WAL's bound (WALLimit, with PruneWALMark) and a daemon's write
	// waits one batch, well within its busy timeout.
	Batch int
	// Progress, when set, is told what the prune has removed so far after
	// each of its transactions.
	Progress func(ingest.Pruned)
}

// DefaultBatch is Retention.Batch's default.
const DefaultBatch = 250_000

// Prune deletes what r says from db in small transactions, oldest first,
// then, on SQLite, gives the freed pages back with an incremental vacuum.
// Search runs (a backfill's results) are kept; their results go by
// r.SearchBefore.
func Prune(ctx context.Context, db *store.DB, r Retention) (ingest.Pruned, error) {
	return newPruner(db).prune(ctx, r)
}

// WholeDays is r with Before and OrphansBefore each moved on to the next
// UTC day's 00:00 (itself when it is one): statistics go in whole days,
// which sit together in each of their orders, and the videos they leave
// with no row go with them. A cut rounded toward keeping less never keeps
// a row longer than r says. Between two days' 00:00 the cuts stay where
// they are, so a prune at each hour finds nothing to cut but once a day.
func (r Retention) WholeDays() Retention {
	up := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return time.UnixMilli((msOf(t) + dayMS - 1) / dayMS * dayMS).UTC()
	}
	r.Before, r.OrphansBefore = up(r.Before), up(r.OrphansBefore)
	return r
}

// pruner is a prune's hold on the store: its pools and each database's
// statements, and the steps' sizes, which tests make small.
type pruner struct {
	db *store.DB
	// w and rd are where the prune's statements go outside update's
	// transactions: the store's pools, or, in a dry run, its one
	// transaction.
	w, rd conn
	// update runs fn in a write transaction: the store's, one a batch, or
	// the dry run's one.
	update func(ctx context.Context, fn func(*sql.Tx) error) error
	path   string
	q      staleStmts
	pg     bool
	// vacuumStep and mergePages are VacuumStep and MergePages; walMark is
	// PruneWALMark.
	vacuumStep, mergePages int
	walMark                int64
	// beforeCheckpoint, when set, is called before each checkpoint, when
	// the WAL is at its largest: tests read its size.
	beforeCheckpoint func()
	// afterStep, when set, is called after each step with the step's
	// name: the prune benchmark reads what each step wrote.
	afterStep func(step string)
	// told tells Retention.Progress what the prune has removed so far.
	told func()
	// start is the database's size when the prune began (SQLite).
	start store.Size
}

func newPruner(db *store.DB) *pruner {
	pr := &pruner{db: db, w: db.Writer(), rd: db.Reader(), update: db.Update, path: db.Path(), q: sqliteStaleSQL, pg: db.Postgres(),
		vacuumStep: VacuumStep, mergePages: MergePages, walMark: PruneWALMark}
	if pr.pg {
		pr.q = pgStaleSQL
	}
	return pr
}

// conn is a pool or a transaction, as the prune's statements take them.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DryRun is Prune on PostgreSQL in one transaction that is rolled back at
// its end: the same statements, in the same order, delete the same rows and
// count them the same way, each seeing what the ones before it deleted, and
// nothing is kept (docs/operations.md). left is the database as the prune
// left it, read in that transaction before the rollback, as Size reads it
// after a prune. The rows it deletes stay locked until it ends: a
// worker's write to one of them waits for it. SQLite's dry run is Prune on
// a page-for-page image of the file (store.Image).
func DryRun(ctx context.Context, db *store.DB, r Retention) (p ingest.Pruned, left store.Size, err error) {
	if !db.Postgres() {
		return p, left, errors.New("prune: a dry run in a transaction is PostgreSQL's; SQLite's prunes a copy")
	}
	tx, err := db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return p, left, fmt.Errorf("prune: dry run: %w", err)
	}
	defer tx.Rollback()
	pr := newPruner(db)
	pr.w, pr.rd = tx, tx
	pr.update = func(_ context.Context, fn func(*sql.Tx) error) error { return fn(tx) }
	if p, err = pr.prune(ctx, r); err != nil {
		return p, left, err
	}
	var oldest sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT pg_database_size(current_database()),
		(SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0)`).Scan(&left.Bytes, &oldest)
	if err != nil {
		return p, left, fmt.Errorf("prune: dry run: database size: %w", err)
	}
	if oldest.Valid {
		left.OldestRun = time.UnixMilli(oldest.Int64).UTC()
	}
	return p, left, nil
}

func (pr *pruner) prune(ctx context.Context, r Retention) (ingest.Pruned, error) {
	r = r.WholeDays()
	if pr.pg {
		return pr.pgPrune(ctx, r)
	}
	return pr.sqlitePrune(ctx, r)
}

// sqlitePrune is Prune on SQLite; pgPrune (pg.go) on PostgreSQL.
func (pr *pruner) sqlitePrune(ctx context.Context, r Retention) (ingest.Pruned, error) {
	if r.Batch <= 0 {
		r.Batch = DefaultBatch
	}
	var p ingest.Pruned
	pr.tell(r, &p)
	start, err := pr.db.Size(ctx)
	if err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	pr.start = start
	restore, err := pr.roomyWriter(ctx)
	if err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	defer restore()
	for _, step := range []struct {
		name string
		run  func(context.Context, Retention, *ingest.Pruned) error
	}{
		{"runs", pr.pruneRuns}, {"stats", pr.pruneStats}, {"days", pr.pruneDays}, {"terms", pr.sqlitePruneTerms},
		{"videos", pr.pruneVideos},
		{"ledger", pr.pruneLedger}, {"vacuum", pr.vacuum},
	} {
		if err := step.run(ctx, r, &p); err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		if pr.afterStep != nil {
			pr.afterStep(step.name)
		}
	}
	return p, pr.checkpoint(ctx)
}

// sqlitePruneTerms is pruneTerms with a checkpoint over the mark between
// transactions.
func (pr *pruner) sqlitePruneTerms(ctx context.Context, r Retention, p *ingest.Pruned) error {
	return pr.pruneTerms(ctx, r, p, pr.checkpointOver)
}

// pruneCache is the writer's page cache while pruning, in KiB: room for a
// whole batch's pages, so that none is spilled to the WAL and written again
// before the batch commits.
const pruneCache = 128 << 10

// roomyWriter gives the writer connection pruneCache, temporary b-trees
// in memory (a batch's keys to delete, not a temporary file) and no
// automatic checkpoints (Prune checkpoints at PruneWALMark and truncates
// the WAL, which the automatic one does not); restore puts back what it
// had.
func (pr *pruner) roomyWriter(ctx context.Context) (restore func(), err error) {
	var cache, temp, auto int
	err = pr.w.QueryRowContext(ctx, `SELECT (SELECT cache_size FROM pragma_cache_size), (SELECT temp_store FROM pragma_temp_store)`).
		Scan(&cache, &temp)
	if err == nil {
		err = pr.w.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto)
	}
	if err != nil {
		return nil, fmt.Errorf("writer settings: %w", err)
	}
	set := func(ctx context.Context, cache, temp, auto int) error {
		_, err := pr.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d; PRAGMA temp_store = %d; PRAGMA wal_autocheckpoint = %d`,
			cache, temp, auto))
		return err
	}
	if err := set(ctx, -pruneCache, 2, 0); err != nil {
		return nil, fmt.Errorf("writer settings: %w", err)
	}
	return func() { _ = set(context.WithoutCancel(ctx), cache, temp, auto) }, nil
}

// PruneWALMark is how much the WAL may hold before Prune checkpoints it.
// A checkpoint copies every page the WAL holds into the database, each
// once however many batches wrote it, and each dirties a page-cache folio
// of the file: fewer, larger checkpoints write less. The mark plus one
// batch stays within WALLimit.
const PruneWALMark = 24 << 20

// tell makes the prune tell r.Progress about p after each transaction.
func (pr *pruner) tell(r Retention, p *ingest.Pruned) {
	pr.told = func() {}
	if r.Progress != nil {
		pr.told = func() { r.Progress(*p) }
	}
}

// checkpointOver is called between a prune's transactions on SQLite: it
// tells the prune's progress, then checkpoints once the WAL holds
// pr.walMark bytes or more.
func (pr *pruner) checkpointOver(ctx context.Context) error {
	if pr.told != nil {
		pr.told()
	}
	if fi, err := os.Stat(pr.path + "-wal"); err == nil && fi.Size() < pr.walMark {
		return nil
	}
	return pr.checkpoint(ctx)
}

// checkpoint copies the WAL into the database and truncates it, so that
// the WAL holds at most the mark and a batch while pruning, and nothing
// after it. It gives up, without an error, while a reader still needs the
// WAL's pages (busy): the next checkpoint gets them.
func (pr *pruner) checkpoint(ctx context.Context) error {
	if pr.beforeCheckpoint != nil {
		pr.beforeCheckpoint()
	}
	if _, err := pr.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// pruneRuns deletes finished chart runs started before r.Before, oldest
// first, a batch of runs (about r.Batch entries) a transaction, each
// batch's entries in one statement by their key (run_id first), then
// checkpoints.
func (pr *pruner) pruneRuns(ctx context.Context, r Retention, p *ingest.Pruned) error {
	for {
		var n int
		err := pr.update(ctx, func(tx *sql.Tx) error {
			ids, err := oldRuns(ctx, tx, r.Before, r.Batch)
			if n = len(ids); err != nil || n == 0 {
				return err
			}
			return deleteRuns(ctx, tx, jsonIDs(ids), p)
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return pr.prunePasses(ctx, r)
		}
		if err := pr.checkpointOver(ctx); err != nil {
			return err
		}
	}
}

// prunePasses deletes the passes of the work with no run row (tracking,
// the refresh, the prune) that started before r.Before, as the chart runs
// go: pacing reads only the last days of them.
func (pr *pruner) prunePasses(ctx context.Context, r Retention) error {
	if _, err := pr.w.ExecContext(ctx, `DELETE FROM passes WHERE started_ms < ?`, msOf(r.Before)); err != nil {
		return fmt.Errorf("passes: %w", err)
	}
	return nil
}

// oldRuns returns the oldest finished chart runs started before before,
// as many as hold about entries entries (at least one).
func oldRuns(ctx context.Context, tx *sql.Tx, before time.Time, entries int) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, videos FROM runs WHERE kind = 'trending' AND started_ms < ?
		AND status <> 'running' ORDER BY kind, started_ms LIMIT ?`, msOf(before), entries)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for sum := 0; sum < entries && rows.Next(); {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		ids, sum = append(ids, id), sum+max(n, 1)
	}
	return ids, rows.Err()
}

func deleteRuns(ctx context.Context, tx *sql.Tx, ids string, p *ingest.Pruned) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM trending_entries WHERE run_id IN (SELECT value FROM json_each(?))`, ids)
	if err != nil {
		return fmt.Errorf("entries of runs: %w", err)
	}
	n, _ := res.RowsAffected()
	p.Entries += n
	if res, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))`, ids); err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	n, _ = res.RowsAffected()
	p.Runs += n
	return nil
}

// pruneStats deletes the stats read before r.Before (a day's 00:00), a day
// at a time, oldest first, and a range of videos a transaction inside a
// day of more than r.Batch rows: each day's rows sit together in both of
// the table's orders (by day and video, by time), so the deletes free
// whole pages and write little else. A prune stopped midway leaves the
// later days to the next.
func (pr *pruner) pruneStats(ctx context.Context, r Retention, p *ingest.Pruned) error {
	before := msOf(r.Before)
	for {
		var day sql.NullInt64
		var n, top int64
		if err := pr.w.QueryRowContext(ctx, `SELECT min(day_ms) FROM video_stats WHERE day_ms < ?`, before).
			Scan(&day); err != nil || !day.Valid {
			return err
		}
		if err := pr.w.QueryRowContext(ctx, `SELECT count(*), coalesce(max(vid), 0) FROM video_stats WHERE day_ms = ?`,
			day.Int64).Scan(&n, &top); err != nil {
			return err
		}
		span := max(1, int64(r.Batch)*(top+1)/max(n, 1))
		for lo := int64(0); lo <= top; lo += span {
			res, err := pr.w.ExecContext(ctx, `DELETE FROM video_stats WHERE day_ms = ? AND vid >= ? AND vid < ?`,
				day.Int64, lo, lo+span)
			if err != nil {
				return fmt.Errorf("stats: %w", err)
			}
			k, _ := res.RowsAffected()
			p.Stats += k
			if err := pr.checkpointOver(ctx); err != nil {
				return err
			}
		}
	}
}

// pruneDays deletes the daily rollup (video_days) of the days before
// r.Before (a day's 00:00), a day a transaction: they sit together. The
// cut's own day stays whole but for the entries of a run begun the day
// before, which went with their run: the day is made again from what is
// left of it for those videos alone (refillStraddled), so that the rollup
// says what the entries and stats kept say.
func (pr *pruner) pruneDays(ctx context.Context, r Retention, p *ingest.Pruned) error {
	day := msOf(r.Before)
	for {
		var first sql.NullInt64
		if err := pr.w.QueryRowContext(ctx, `SELECT min(day_ms) FROM video_days WHERE day_ms < ?`, day).
			Scan(&first); err != nil {
			return err
		}
		if !first.Valid {
			break
		}
		if _, err := pr.w.ExecContext(ctx, `DELETE FROM video_days WHERE day_ms = ?`, first.Int64); err != nil {
			return fmt.Errorf("daily rollup: %w", err)
		}
		if err := pr.checkpointOver(ctx); err != nil {
			return err
		}
	}
	return pr.refillStraddled(ctx, day)
}

// refillStraddled makes day's rollup again for the videos whose rows of
// it count entries no kept run holds: a row whose first entry of the day
// is older than the first run kept that day began can only hold entries of
// a run begun the day before, which the prune took whole. The videos are
// read from the database, in the refill's transaction, so that a prune
// stopped between its steps is put right by the next one.
func (pr *pruner) refillStraddled(ctx context.Context, day int64) error {
	stmts := []string{refillDelete, refillDayFromEntries, refillDayFromStats}
	if pr.pg {
		stmts = []string{pgRefillDelete, pgRefillDayFromEntries, pgRefillDayFromStats}
	}
	return pr.update(ctx, func(tx *sql.Tx) error {
		vids, err := vidsOf(ctx, tx, straddledSQL, day, day+(24*time.Hour).Milliseconds())
		if err != nil || len(vids) == 0 {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q, day, jsonIDs(vids)); err != nil {
				return fmt.Errorf("daily rollup of %s: %w", time.UnixMilli(day).UTC().Format(time.DateOnly), err)
			}
		}
		return nil
	})
}

// straddledSQL: the videos of day ?1's rollup (?2 its end) with a chart's
// row whose first entry precedes every run kept that day.
const straddledSQL = `SELECT DISTINCT vid FROM video_days WHERE day_ms = ?1 AND region <> ''
  AND first_ms < coalesce((SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms >= ?1), ?2)`

// The refills put day ?1 of the videos ?2 (a JSON array) back into the
// rollup from the entries and the stats of that day.
const (
	refillDelete         = `DELETE FROM video_days WHERE day_ms = ?1 AND vid IN (SELECT value FROM json_each(?2))`
	refillDayFromEntries = `
INSERT INTO video_days
SELECT vid, region, category, fetched_ms / 86400000 * 86400000, fetched_ms, fetched_ms, 1, rank, rank,
  fetched_ms, view_count, like_count, comment_count
FROM trending_entries AS e WHERE ` + store.EntryDay + ` = ?1 AND e.vid IN (SELECT value FROM json_each(?2))
ON CONFLICT DO UPDATE SET ` + daysUpsert
	refillDayFromStats = `
INSERT INTO video_days
SELECT vid, '', '', day_ms, at_ms, at_ms, 0, NULL, NULL, at_ms, view_count, like_count, comment_count
FROM video_stats WHERE day_ms = ?1 AND vid IN (SELECT value FROM json_each(?2))
ON CONFLICT DO UPDATE SET ` + daysUpsert
)

// pruneVideos deletes the videos last seen before r.Before that nothing
// kept points at any more (the index triggers drop their words).
//
// The index's automatic merges are paused meanwhile: each batch's deletes
// would otherwise rewrite the index's segments, a batch after batch; the
// index is merged once afterwards (mergeIndex).
func (pr *pruner) pruneVideos(ctx context.Context, r Retention, p *ingest.Pruned) error {
	const orphans = `SELECT vid FROM videos AS v WHERE last_seen_ms < ?1` + orphanClause + `
		ORDER BY last_seen_ms LIMIT ?2`
	with := store.WithDays("0", store.AllDays)
	restore, err := pr.pauseMerges(ctx)
	if err != nil {
		return err
	}
	before := p.Videos
	batch := max(1, r.Batch/videoRows)
	err = pr.inBatches(ctx, &p.Videos, batch, []any{msOf(r.orphansBefore()), batch},
		with+`DELETE FROM video_regions WHERE vid IN (`+orphans+`)`,
		with+`DELETE FROM videos WHERE vid IN (`+orphans+`)`)
	if err = errors.Join(err, restore()); err != nil || p.Videos == before {
		return err
	}
	return pr.mergeIndex(ctx)
}

// videoRows is about how many entries' worth of pages one video's row,
// its regions and its words take: pruneVideos deletes Batch/videoRows
// videos a transaction, so that its WAL stays as bounded as the runs'.
const videoRows = 25

// pauseMerges turns the index's automerge off; restore puts back what it
// was.
func (pr *pruner) pauseMerges(ctx context.Context) (restore func() error, err error) {
	var was int
	err = pr.w.QueryRowContext(ctx, `SELECT coalesce((SELECT v FROM videos_fts_config WHERE k = 'automerge'), 4)`).Scan(&was)
	if err == nil {
		_, err = pr.w.ExecContext(ctx, `INSERT INTO videos_fts (videos_fts, rank) VALUES ('automerge', 0)`)
	}
	if err != nil {
		return nil, fmt.Errorf("pause index merges: %w", err)
	}
	return func() error {
		_, err := pr.w.ExecContext(context.WithoutCancel(ctx), `INSERT INTO videos_fts (videos_fts, rank) VALUES ('automerge', ?)`, was)
		if err != nil {
			return fmt.Errorf("restore index merges: %w", err)
		}
		return nil
	}, nil
}

// MergePages is about how many index pages one merge step writes.
const MergePages = 1000

// mergeIndex merges the index's segments, and with them the deletes, into
// one, a bounded step a transaction with a checkpoint after each: FTS5's
// own signal that the merging is done is a step that changes fewer than
// two rows.
func (pr *pruner) mergeIndex(ctx context.Context) error {
	for {
		var before, after int64
		err := pr.w.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before)
		if err == nil {
			_, err = pr.w.ExecContext(ctx, `INSERT INTO videos_fts (videos_fts, rank) VALUES ('merge', ?)`, -pr.mergePages)
		}
		if err == nil {
			err = pr.w.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after)
		}
		if err != nil {
			return fmt.Errorf("merge index: %w", err)
		}
		if err := pr.checkpointOver(ctx); err != nil || after-before < 2 {
			return err
		}
	}
}

// pruneLedger deletes ledger rows older than r.LedgerBefore, one quota key
// at a time so that ledger_at finds them; each key is found by one index
// seek from the last (a loose index scan), not by a pass over the whole
// ledger as DISTINCT would make.
func (pr *pruner) pruneLedger(ctx context.Context, r Retention, p *ingest.Pruned) error {
	if r.LedgerBefore.IsZero() {
		return nil
	}
	at := msOf(r.LedgerBefore)
	for key := ""; ; {
		var next sql.NullString
		if err := pr.rd.QueryRowContext(ctx, `SELECT min(quota_key) FROM ledger WHERE quota_key > ?`, key).Scan(&next); err != nil {
			return fmt.Errorf("quota keys: %w", err)
		}
		if !next.Valid {
			break
		}
		key = next.String
		if err := pr.inBatches(ctx, &p.Ledger, r.Batch, []any{at, r.Batch, key},
			`DELETE FROM ledger WHERE (quota_key, call_id, pool) IN (SELECT quota_key, call_id, pool
			   FROM ledger WHERE quota_key = ?3 AND at_ms < ?1 ORDER BY at_ms LIMIT ?2)`); err != nil {
			return err
		}
	}
	_, err := pr.w.ExecContext(ctx, `DELETE FROM ledger_given_back WHERE at_ms < ?`, at)
	return err
}

// inBatches runs stmts in one transaction, again and again, until the last
// deletes fewer than batch rows; it adds what the last deleted to n. Every
// statement takes args, ?2 being batch.
func (pr *pruner) inBatches(ctx context.Context, n *int64, batch int, args []any, stmts ...string) error {
	for {
		var got int64
		err := pr.update(ctx, func(tx *sql.Tx) error {
			for _, q := range stmts {
				res, err := tx.ExecContext(ctx, q, args...)
				if err != nil {
					return err
				}
				if got, err = res.RowsAffected(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		*n += got
		if err := pr.checkpointOver(ctx); err != nil || got < int64(batch) {
			return err
		}
	}
}

// VacuumStep is how many pages one incremental vacuum moves or gives back
// before a checkpoint: what bounds the WAL while the file shrinks.
const VacuumStep = 4096

// vacuum gives free pages back to the file system (auto_vacuum is
// incremental on files made since schema 7), VacuumStep pages a
// transaction with a checkpoint after each, so that the file shrinks
// without the WAL growing to the size of what was freed.
//
// It keeps free, for new rows to reuse, as many pages as a day of what it
// deleted freed (reserve), and gives back only the rest: the
// vacuum moves a page from the end of the file into each hole it fills,
// writing it twice (the WAL, then the file), so giving back what the next
// day's charts would take again costs about twice what it frees and
// leaves the file as large the day after. A daily prune thus moves no
// page, and a prune that cuts many days gives back all but a day of them.
func (pr *pruner) vacuum(ctx context.Context, r Retention, p *ingest.Pruned) error {
	before, err := pr.db.Size(ctx)
	if err != nil {
		return err
	}
	var pageSize int64
	if err := pr.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return fmt.Errorf("page size: %w", err)
	}
	reserve := pr.reserve(r, before)
	for free := before.FreeBytes; free > reserve && before.Incremental; {
		pages := min(int64(pr.vacuumStep), (free-reserve+pageSize-1)/pageSize)
		if _, err := pr.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, pages)); err != nil {
			return fmt.Errorf("incremental vacuum: %w", err)
		}
		if err := pr.checkpointOver(ctx); err != nil {
			return err
		}
		s, err := pr.db.Size(ctx)
		if err != nil {
			return err
		}
		if s.FreeBytes >= free {
			break
		}
		free = s.FreeBytes
	}
	after, err := pr.db.Size(ctx)
	if err != nil {
		return err
	}
	p.Freed = max(0, before.Bytes-after.Bytes)
	p.FreeKept = after.FreeBytes
	return nil
}

// reserve is how many bytes of free pages the vacuum keeps in the file:
// the free pages the prune made (now is the size before the vacuum: the
// rows' pages, and those the search index's merge left behind) spread over
// the days it cut, from the oldest chart run it found to r.Before (at
// least one), one day of them: the room a day of new rows takes, as a day
// of the oldest did. A prune that made no free page (between two days'
// cuts, there is nothing to cut) keeps those it finds: an earlier prune
// kept them for the rows of the day under way.
func (pr *pruner) reserve(r Retention, now store.Size) int64 {
	freed := now.FreeBytes - pr.start.FreeBytes
	if freed <= 0 {
		return now.FreeBytes
	}
	days := 1.0
	if o := pr.start.OldestRun; !o.IsZero() && r.Before.After(o) {
		days = max(1, float64(r.Before.Sub(o))/float64(dayMS*time.Millisecond))
	}
	return int64(float64(freed) / days)
}

func msOf(t time.Time) int64 { return t.UnixMilli() }

// dayMS is a day in milliseconds, the rollup's unit.
const dayMS = 24 * 60 * 60 * 1000

// jsonIDs is ids as a JSON array, for json_each.
func jsonIDs(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
