// Package dbcopy carries one ingest database into another, SQLite or
// PostgreSQL either way: `ingest db copy`. Both sides are opened by
// store.Open, which migrates them to one schema; the copy reads and writes
// the tables through the pools the store hands out (store.DB's Reader and
// Writer), and asks the store for nothing else but each video's words for
// PostgreSQL's search index (store.SearchDoc).
//
// Each table is copied in its primary key's order, in batches that each
// commit on their own, so that a copy killed at any moment goes on from
// the target's last row when it is run again; the target notes which
// source it is a copy of (copyFromNote), and a target holding anything
// else is refused. The source is read in one snapshot: a SQLite file
// through a copy of it made by VACUUM INTO (store.Snapshot), which the
// resumed copy reads again; a PostgreSQL database in one repeatable read
// transaction. At the end each table is summed on both sides: its rows,
// and a hash of the rows in its key's order (sums.go).
//
// What is where: ingest db copy: a database carried into another, SQLite or
// PostgreSQL either way, through the pools store hands out (Reader, Writer),
// table by table in key order, a batch to a transaction, resumable after a
// stop, the target refused when it holds other data (TargetError), and
// summed on both sides at the end (sums.go); what a copy does each
// database's own way, SQLite's beside PostgreSQL's (dialect.go: columns, key
// order, the rollup's triggers held back, PostgreSQL's index written with
// store.SearchDoc); a copy in two steps (track.go: the source noting the
// keys of the rows that change, by triggers of its own, and the rows carried
// by those keys once its worker has stopped); a salvage (salvage.go: `ingest
// db recover`, the rows of a damaged SQLite file that still read carried
// into a new one, its pages read by hand in pages.go, as SQLite's own reads
// stop at the first damaged page); a backup (backup.go: `ingest db backup`,
// a SQLite file's copy by its backup API held to the sums of the read it
// was made of).
package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ingestworks/ingest/store"
)

// carried is a table db copy carries; key is its primary key's columns,
// the order it is read and summed in. whole is a table whose target rows
// the migrations seed: it is copied whole each time, over what is there.
type carried struct {
	name, key string
	whole     bool
	where     string // the rows carried, when not all
}

// copyTables are the tables carried, parents before the rows that point
// at them.
var copyTables = []carried{
	{name: "runs", key: "id"},
	{name: "videos", key: "vid"},
	{name: "trending_entries", key: "run_id, region, vid"},
	{name: "search_results", key: "run_id, region, vid"},
	{name: "video_regions", key: "vid, region"},
	{name: "video_stats", key: "day_ms, vid, at_ms"},
	{name: "video_days", key: "day_ms, vid, region, category"},
	{name: "videos_gone", key: "id"},
	{name: "categories", key: "region, id"},
	{name: "category_fetches", key: "region"},
	{name: "region_catalogue", key: "code"},
	{name: "backfill_cursors", key: "key"},
	{name: "schedule", key: "id"},
	{name: "api_tokens", key: "name"},
	{name: "pace_plans", key: "quota_key"},
	{name: "passes", key: "entry, started_ms"},
	{name: "ledger", key: "quota_key, call_id, pool"},
	{name: "ledger_blocks", key: "quota_key, pool, until_ms"},
	{name: "ledger_given_back", key: "quota_key, call_id"},
	{name: "ledger_seq", key: "quota_key"},
	{name: "ledger_unknown", key: "quota_key, instance, token"},
	{name: "ledger_notes", key: "name", whole: true, where: notCopyNote},
	{name: "quota_log", key: "quota_key, pool, id"},
	{name: "quota_block", key: "quota_key, pool"},
	{name: "quota_clock", key: "quota_key"},
	{name: "quota_config", key: "quota_key, pool"},
}

// notCopied are the tables of either database that db copy leaves
// behind, each with why (a test holds every table of both schemas to
// copyTables or here): the search index is built again on the target,
// and the rest belongs to the database it was written on.
var notCopied = map[string]string{
	"videos_fts":     "SQLite's search index: built on the target as the videos are copied",
	"video_docs":     "PostgreSQL's search index: built on the target as the videos are copied",
	"locks":          "leases of the processes running on the source: taken anew on the target",
	"api_limits":     "the read API's request limiter, a burst per client: not the upstream's quota",
	"schema_version": "the target's own migrations write it",
	"purged":         "how far the source's caches in front were purged: the target's replicas purge theirs whole once",
	"sessions":       "sign-ins to the source's site: the operator signs in again on the target's",
	"backoff":        "the source's daemons' wait on a failing upstream, soon over: the target's find out for themselves",
	"backed_up":      "when the source was last backed up: the target has no backup yet",
}

// Notes a copy keeps on its target: which source it copies (sourceID),
// kept after the end so that running the copy again only checks it, and
// while it is under way on SQLite the triggers it holds back. Neither is
// copied or summed (notCopyNote).
const (
	copyFromNote     = "copy_from"
	copyTriggersNote = "copy_triggers"
)

// SnapshotNote names a snapshot (store.Snapshot) on itself: a copy
// resumed from it is the same copy; one from a later snapshot of the same
// file is not.
const SnapshotNote = "copy_snapshot"

// notCopyNote leaves out the notes of a copy under way.
const notCopyNote = "substr(name, 1, 5) <> 'copy_'"

// filter is t's WHERE clause, with and its condition on the key.
func (t carried) filter(and string) string {
	c := slices.DeleteFunc([]string{t.where, and}, func(s string) bool { return s == "" })
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}

// copyBatch is how many rows one transaction of the target takes; tests
// make it small.
var copyBatch = 500

// TargetError is a target db copy refuses: it holds data that is not a
// copy of this source under way.
type TargetError struct {
	Target string
	Why    string
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("%s %s: copy into a new, empty database (or delete this one)", e.Target, e.Why)
}

// reader is what a copy reads a side through: a pool, or the one
// transaction that keeps a PostgreSQL source in one snapshot.
type reader interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// side is one database of a copy and what it does its own way.
type side struct {
	db *store.DB
	d  dialect
}

func sideOf(db *store.DB) side {
	if db.Postgres() {
		return side{db, pgDialect{}}
	}
	return side{db, sqliteDialect{}}
}

// Bulk carries every table of src into dst (copyTables), going on where a
// copy of src that stopped left off: the first step of a copy in two,
// whose second carries what changed since (Carry) and then sums (Sums).
// progress, when set, is told the rows copied so far of all there are. A
// target holding other data is a *TargetError.
func Bulk(ctx context.Context, src, dst *store.DB, progress func(done, total int64)) error {
	_, err := copyThen(ctx, src, dst, progress, false)
	return err
}

// Sums sums every table on both sides, each read in one snapshot taken
// before ready is called: a worker may start on dst from then on.
func Sums(ctx context.Context, src, dst *store.DB, ready func()) ([]TableSums, error) {
	from, to := sideOf(src), sideOf(dst)
	q, done, err := from.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	opts := &sql.TxOptions{ReadOnly: true}
	if dst.Postgres() {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tq, err := to.db.Reader().BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("copy: target %s: %w", dst.Path(), err)
	}
	defer tq.Rollback()
	var n int64 // a first read: the target's snapshot starts here, whoever writes it next
	if err := tq.QueryRowContext(ctx, `SELECT count(*) FROM ledger_notes`).Scan(&n); err != nil {
		return nil, fmt.Errorf("copy: target %s: %w", dst.Path(), err)
	}
	if ready != nil {
		ready()
	}
	return sumBoth(ctx, q, from, to, tq)
}

func copyThen(ctx context.Context, src, dst *store.DB, progress func(done, total int64), sum bool) ([]TableSums, error) {
	from, to := sideOf(src), sideOf(dst)
	q, done, err := from.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	id, err := sourceID(ctx, q, src.Path())
	if err != nil {
		return nil, err
	}
	if err := to.startCopy(ctx, id); err != nil {
		return nil, err
	}
	if err := copyTablesOf(ctx, q, from, to, progress); err != nil {
		return nil, err
	}
	if err := to.d.endCopy(ctx, dst); err != nil {
		return nil, fmt.Errorf("copy: finish %s: %w", dst.Path(), err)
	}
	if !sum {
		return nil, nil
	}
	return sumBoth(ctx, q, from, to, to.db.Reader())
}

// copyTablesOf copies every table, telling progress the rows copied of
// all the source holds.
func copyTablesOf(ctx context.Context, q reader, from, to side, progress func(done, total int64)) error {
	var total, copied int64
	for _, t := range copyTables {
		n, err := countRows(ctx, q, t, "")
		if err != nil {
			return fmt.Errorf("copy: source %s: %w", from.db.Path(), err)
		}
		total += n
	}
	for _, t := range copyTables {
		err := copyRows(ctx, q, from.d, to, t, func(n int64) {
			if copied += n; progress != nil {
				progress(copied, total)
			}
		})
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
	}
	return nil
}

// sourceID names what a copy reads: a snapshot by its note, a database by
// its ledger id and where it is.
func sourceID(ctx context.Context, q reader, path string) (string, error) {
	var id, snap string
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(CASE WHEN name = 'ledger_id' THEN value END), ''),
  coalesce(max(CASE WHEN name = ?1 THEN value END), '') FROM ledger_notes`, SnapshotNote).Scan(&id, &snap)
	if err != nil {
		return "", fmt.Errorf("copy: source %s: ledger id: %w", path, err)
	}
	if snap != "" {
		return "snapshot " + snap, nil
	}
	return "ledger " + id + " at " + path, nil
}

// snapshot is what a copy reads s through: on PostgreSQL one repeatable
// read transaction, on SQLite (a snapshot nobody writes) the reading
// pool.
func (s side) snapshot(ctx context.Context) (reader, func(), error) {
	if !s.db.Postgres() {
		return s.db.Reader(), func() {}, nil
	}
	tx, err := s.db.Reader().BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("copy: source %s: %w", s.db.Path(), err)
	}
	return tx, func() { tx.Rollback() }, nil
}

func countRows(ctx context.Context, q reader, t carried, and string) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name+t.filter(and)).Scan(&n)
	if err != nil {
		err = fmt.Errorf("count %s: %w", t.name, err)
	}
	return n, err
}

// noted returns the note a copy keeps under name, "" when there is none.
func noted(ctx context.Context, db *store.DB, name string) (string, error) {
	var v string
	err := db.Reader().QueryRowContext(ctx, `SELECT coalesce(max(value), '') FROM ledger_notes WHERE name = ?`, name).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("read note %s: %w", name, err)
	}
	return v, nil
}

// startCopy checks that s is empty, or a copy of from under way, and
// marks it as the latter.
func (s side) startCopy(ctx context.Context, from string) error {
	path := s.db.Path()
	of, err := noted(ctx, s.db, copyFromNote)
	switch {
	case err != nil:
		return fmt.Errorf("copy: target %s: %w", path, err)
	case of == from:
		return nil
	case of != "":
		return &TargetError{path, "holds a copy of another database, or an earlier one of this (" + of + ")"}
	}
	if err := s.empty(ctx); err != nil {
		return err
	}
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("copy: target %s: %w", path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_notes (name, value) VALUES (?, ?)`, copyFromNote, from); err != nil {
		return fmt.Errorf("copy: target %s: %w", path, err)
	}
	if err := s.d.startCopy(ctx, tx); err != nil {
		return fmt.Errorf("copy: target %s: %w", path, err)
	}
	return tx.Commit()
}

// empty is a *TargetError when s holds a row in a table a copy carries.
func (s side) empty(ctx context.Context) error {
	for _, t := range copyTables {
		seeded := ""
		if t.name == "ledger_notes" {
			seeded = "name <> 'ledger_id'" // every new database has one
		}
		n, err := countRows(ctx, s.db.Reader(), t, seeded)
		if err != nil {
			return fmt.Errorf("copy: target %s: %w", s.db.Path(), err)
		}
		if n > 0 {
			return &TargetError{s.db.Path(), fmt.Sprintf("holds data (%d rows in %s)", n, t.name)}
		}
	}
	return nil
}

// copyRows copies t's rows past the target's last one, a batch to a
// transaction.
func copyRows(ctx context.Context, q reader, from dialect, dst side, t carried, step func(int64)) error {
	cols, err := sameColumns(ctx, q, from, dst, t.name)
	if err != nil {
		return err
	}
	keys := strings.Split(t.key, ", ")
	at := keyIndexes(cols, keys)
	var last []any
	if !t.whole {
		if last, err = lastKey(ctx, dst.db.Reader(), t, keys); err != nil {
			return err
		}
	}
	for {
		rows, err := readBatch(ctx, q, t, cols, keys, last)
		if err != nil || len(rows) == 0 {
			return err
		}
		if err := dst.writeBatch(ctx, t, cols, rows); err != nil {
			return err
		}
		step(int64(len(rows)))
		last = make([]any, len(at))
		for i, j := range at {
			last[i] = rows[len(rows)-1][j]
		}
	}
}

// sameColumns is table's columns on the source, when the target has the
// same ones.
func sameColumns(ctx context.Context, q reader, from dialect, dst side, table string) ([]string, error) {
	cols, err := from.columns(ctx, q, table)
	if err != nil {
		return nil, err
	}
	have, err := dst.d.columns(ctx, dst.db.Reader(), table)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(slices.Sorted(slices.Values(cols)), slices.Sorted(slices.Values(have))) {
		return nil, fmt.Errorf("the source's columns (%s) are not the target's (%s): both must be of this version's schema",
			strings.Join(cols, ", "), strings.Join(have, ", "))
	}
	return cols, nil
}

func keyIndexes(cols, keys []string) []int {
	at := make([]int, len(keys))
	for i, k := range keys {
		at[i] = slices.Index(cols, k)
	}
	return at
}

// lastKey is the key of the target's last row of t, nil when it has none.
func lastKey(ctx context.Context, q reader, t carried, keys []string) ([]any, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(keys, "")+` FROM `+t.name+` ORDER BY `+quoted(keys, " DESC")+` LIMIT 1`)
	if err != nil {
		return nil, err
	}
	got, err := scanAll(rows, len(keys))
	if err != nil || len(got) == 0 {
		return nil, err
	}
	return got[0], nil
}

// readBatch reads the next rows of t after the key last (from the first
// when nil), in the key's order.
func readBatch(ctx context.Context, q reader, t carried, cols, keys []string, last []any) ([][]any, error) {
	after := ""
	if last != nil {
		after = `(` + quoted(keys, "") + `) > (` + marks(len(keys)) + `)`
	}
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(cols, "")+` FROM `+t.name+t.filter(after)+` ORDER BY `+quoted(keys, "")+
		` LIMIT `+strconv.Itoa(copyBatch), last...)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return scanAll(rows, len(cols))
}

func scanAll(rows *sql.Rows, n int) ([][]any, error) {
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		row := make([]any, n)
		if err := rows.Scan(pointers(row)...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// pointers points at each of row's values, for a Scan.
func pointers(row []any) []any {
	ptrs := make([]any, len(row))
	for i := range row {
		ptrs[i] = &row[i]
	}
	return ptrs
}

// writeBatch inserts rows into t in one transaction, with what the
// target's dialect adds beside them (PostgreSQL's search index).
func (s side) writeBatch(ctx context.Context, t carried, cols []string, rows [][]any) error {
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer tx.Rollback()
	q, args := insertRows(t, cols, rows)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := s.d.copied(ctx, tx, t.name, cols, rows); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// insertRows is the INSERT of rows into t, over what is there when t is
// copied whole.
func insertRows(t carried, cols []string, rows [][]any) (string, []any) {
	q := `INSERT INTO ` + t.name + ` (` + quoted(cols, "") + `) VALUES `
	args := make([]any, 0, len(rows)*len(cols))
	for i, row := range rows {
		if i > 0 {
			q += ", "
		}
		q += "(" + marks(len(cols)) + ")"
		args = append(args, row...)
	}
	if t.whole {
		set := make([]string, len(cols))
		for i, c := range cols {
			set[i] = `"` + c + `" = excluded."` + c + `"`
		}
		q += ` ON CONFLICT (` + quoted(strings.Split(t.key, ", "), "") + `) DO UPDATE SET ` + strings.Join(set, ", ")
	}
	return q, args
}

// quoted is cols quoted, each followed by suffix, in a list.
func quoted(cols []string, suffix string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"` + suffix
	}
	return strings.Join(q, ", ")
}

func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
