package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"slices"
	"strconv"
	"strings"
)

// `ingest db copy` carries a database into another one, SQLite or
// PostgreSQL either way. Each table is copied in its primary key's order,
// in batches that each commit on their own, so that a copy killed at any
// moment goes on from the target's last row when it is run again; the
// target notes which source it is a copy of (copyFromNote), and a target
// holding anything else is refused. The source is read in one snapshot: a
// SQLite file through a copy of it made by VACUUM INTO (Snapshot), which
// the resumed copy reads again; a PostgreSQL database in one repeatable
// read transaction. At the end each table is summed on both sides: its
// rows, and a hash of the rows in its key's order.

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
	{name: "video_stats", key: "vid, at_ms"},
	{name: "video_days", key: "vid, region, category, day_ms"},
	{name: "videos_gone", key: "id"},
	{name: "categories", key: "region, id"},
	{name: "category_fetches", key: "region"},
	{name: "region_catalogue", key: "code"},
	{name: "backfill_cursors", key: "key"},
	{name: "schedule", key: "id"},
	{name: "api_tokens", key: "name"},
	{name: "pace_plans", key: "quota_key"},
	{name: "ledger", key: "quota_key, call_id, pool"},
	{name: "ledger_blocks", key: "quota_key, pool, until_ms"},
	{name: "ledger_given_back", key: "quota_key, call_id"},
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
}

// Notes a copy keeps on its target: which source it copies (sourceID),
// kept after the end so that running the copy again only checks it, and
// while it is under way on SQLite the triggers it holds back. Neither is
// copied or summed (notCopyNote).
const (
	copyFromNote     = "copy_from"
	copyTriggersNote = "copy_triggers"
)

// SnapshotNote names a snapshot (Snapshot) on itself: a copy resumed from
// it is the same copy; one from a later snapshot of the same file is not.
const SnapshotNote = "copy_snapshot"

// notCopyNote leaves out the notes of a copy under way.
const notCopyNote = "substr(name, 1, 5) <> 'copy_'"

// filter is t's WHERE clause, with and its condition on the key.
func (t carried) filter(and string) string {
	var c []string
	for _, s := range []string{t.where, and} {
		if s != "" {
			c = append(c, s)
		}
	}
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

// Sum is a table's rows on one side of a copy and the hash of them in the
// key's order (hex, shortened).
type Sum struct {
	Rows int64
	Hash string
}

// TableSums is a table's sums on both sides.
type TableSums struct {
	Table          string
	Source, Target Sum
}

// Same says whether both sides agree.
func (t TableSums) Same() bool { return t.Source == t.Target }

// reader is what a copy reads the source through: a pool, or the one
// transaction that keeps a PostgreSQL source in one snapshot.
type reader interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// Snapshot copies the SQLite database at path into into with VACUUM INTO:
// one consistent, compacted copy of a file that a worker may be writing,
// read through a connection that changes nothing. It is written beside
// into and renamed when whole, so a file at into is always a whole one.
func Snapshot(ctx context.Context, path, into string) error {
	r, err := sql.Open(driverName, "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	defer r.Close()
	part := into + ".part"
	os.Remove(part)
	if _, err := r.ExecContext(ctx, `VACUUM INTO ?`, part); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if err := os.Rename(part, into); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return nil
}

// Copy carries every table of src into dst (copyTables), going on where a
// copy of src that stopped left off, and sums both sides. progress, when
// set, is told the rows copied so far of all there are. A target holding
// other data is a *TargetError.
func Copy(ctx context.Context, src, dst *DB, progress func(done, total int64)) ([]TableSums, error) {
	q, done, err := src.snapshotReader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	from, err := sourceID(ctx, q, src.path)
	if err != nil {
		return nil, err
	}
	if err := dst.startCopy(ctx, from); err != nil {
		return nil, err
	}
	var total, copied int64
	for _, t := range copyTables {
		n, err := countRows(ctx, q, t)
		if err != nil {
			return nil, fmt.Errorf("copy: source %s: %w", src.path, err)
		}
		total += n
	}
	for _, t := range copyTables {
		err := copyRows(ctx, q, src.d, dst, t, func(n int64) {
			if copied += n; progress != nil {
				progress(copied, total)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t.name, err)
		}
	}
	if err := dst.d.endCopy(ctx, dst); err != nil {
		return nil, fmt.Errorf("copy: finish %s: %w", dst.path, err)
	}
	return sumBoth(ctx, q, src.d, dst)
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

// snapshotReader is what Copy reads db through: on PostgreSQL one
// repeatable read transaction, on SQLite (a snapshot nobody writes) the
// reading pool.
func (db *DB) snapshotReader(ctx context.Context) (reader, func(), error) {
	if _, ok := db.d.(pgDialect); !ok {
		return db.r, func() {}, nil
	}
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("copy: source %s: %w", db.path, err)
	}
	return tx, func() { tx.Rollback() }, nil
}

func countRows(ctx context.Context, q reader, t carried) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name+t.filter("")).Scan(&n)
	if err != nil {
		err = fmt.Errorf("count %s: %w", t.name, err)
	}
	return n, err
}

// noted returns the note a copy keeps under name, "" when there is none.
func (db *DB) noted(ctx context.Context, name string) (string, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(value), '') FROM ledger_notes WHERE name = ?`, name).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("read note %s: %w", name, err)
	}
	return v, nil
}

// startCopy checks that db is empty, or a copy of from under way, and
// marks it as the latter.
func (db *DB) startCopy(ctx context.Context, from string) error {
	of, err := db.noted(ctx, copyFromNote)
	switch {
	case err != nil:
		return fmt.Errorf("copy: target %s: %w", db.path, err)
	case of == from:
		return nil
	case of != "":
		return &TargetError{db.path, "holds a copy of another database, or an earlier one of this (" + of + ")"}
	}
	for _, t := range copyTables {
		seeded := ""
		if t.name == "ledger_notes" {
			seeded = "name <> 'ledger_id'" // every new database has one
		}
		var n int64
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name+t.filter(seeded)).Scan(&n); err != nil {
			return fmt.Errorf("copy: target %s: %w", db.path, err)
		}
		if n > 0 {
			return &TargetError{db.path, fmt.Sprintf("holds data (%d rows in %s)", n, t.name)}
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("copy: target %s: %w", db.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_notes (name, value) VALUES (?, ?)`, copyFromNote, from); err != nil {
		return fmt.Errorf("copy: target %s: %w", db.path, err)
	}
	if err := db.d.startCopy(ctx, tx); err != nil {
		return fmt.Errorf("copy: target %s: %w", db.path, err)
	}
	return tx.Commit()
}

// copyRows copies t's rows past the target's last one, a batch to a
// transaction.
func copyRows(ctx context.Context, q reader, from dialect, dst *DB, t carried, step func(int64)) error {
	cols, err := from.columns(ctx, q, t.name)
	if err != nil {
		return err
	}
	have, err := dst.d.columns(ctx, dst.r, t.name)
	if err != nil {
		return err
	}
	if strings.Join(sorted(cols), ",") != strings.Join(sorted(have), ",") {
		return fmt.Errorf("the source's columns (%s) are not the target's (%s): both must be of this version's schema",
			strings.Join(cols, ", "), strings.Join(have, ", "))
	}
	keys := strings.Split(t.key, ", ")
	at := keyIndexes(cols, keys)
	var last []any
	if !t.whole {
		if last, err = lastKey(ctx, dst.r, t, keys); err != nil {
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
		end := rows[len(rows)-1]
		last = make([]any, len(at))
		for i, j := range at {
			last[i] = end[j]
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func keyIndexes(cols, keys []string) []int {
	at := make([]int, len(keys))
	for i, k := range keys {
		for j, c := range cols {
			if c == k {
				at[i] = j
			}
		}
	}
	return at
}

// lastKey is the key of the target's last row of t, nil when it has none.
func lastKey(ctx context.Context, q reader, t carried, keys []string) ([]any, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(keys)+` FROM `+t.name+` ORDER BY `+descending(keys)+` LIMIT 1`)
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
		after = `(` + quoted(keys) + `) > (` + marks(len(keys)) + `)`
	}
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(cols)+` FROM `+t.name+t.filter(after)+` ORDER BY `+quoted(keys)+
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
		ptrs := make([]any, n)
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// writeBatch inserts rows into t in one transaction, with what the
// target's dialect adds beside them (PostgreSQL's search index).
func (db *DB) writeBatch(ctx context.Context, t carried, cols []string, rows [][]any) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer tx.Rollback()
	q := `INSERT INTO ` + t.name + ` (` + quoted(cols) + `) VALUES `
	args := make([]any, 0, len(rows)*len(cols))
	for i, row := range rows {
		if i > 0 {
			q += ", "
		}
		q += "(" + marks(len(cols)) + ")"
		args = append(args, row...)
	}
	if t.whole {
		var set []string
		for _, c := range cols {
			set = append(set, `"`+c+`" = excluded."`+c+`"`)
		}
		q += ` ON CONFLICT (` + quoted(strings.Split(t.key, ", ")) + `) DO UPDATE SET ` + strings.Join(set, ", ")
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := db.d.copied(ctx, tx, t.name, cols, rows); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func quoted(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"`
	}
	return strings.Join(q, ", ")
}

func descending(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `" DESC`
	}
	return strings.Join(q, ", ")
}

func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// sumBoth sums every table on the source (through q, the copy's snapshot)
// and on the target.
func sumBoth(ctx context.Context, q reader, from dialect, dst *DB) ([]TableSums, error) {
	var out []TableSums
	for _, t := range copyTables {
		s := TableSums{Table: t.name}
		var err error
		if s.Source, err = sumTable(ctx, q, from, t); err != nil {
			return nil, fmt.Errorf("sum source %s: %w", t.name, err)
		}
		if s.Target, err = sumTable(ctx, dst.r, dst.d, t); err != nil {
			return nil, fmt.Errorf("sum target %s: %w", t.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// SumTables sums every table db copy carries, as a copy's end does.
func (db *DB) SumTables(ctx context.Context) ([]TableSums, error) {
	q, done, err := db.snapshotReader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []TableSums
	for _, t := range copyTables {
		s, err := sumTable(ctx, q, db.d, t)
		if err != nil {
			return nil, fmt.Errorf("sum %s: %w", t.name, err)
		}
		out = append(out, TableSums{Table: t.name, Source: s})
	}
	return out, nil
}

// sumTable counts t's rows and hashes them in the key's order, column by
// column in the order of their names, each value in one text both
// databases give alike: a NULL apart from any text, an integer in decimal,
// text as its bytes with their length before them.
func sumTable(ctx context.Context, q reader, d dialect, t carried) (Sum, error) {
	cols, err := d.columns(ctx, q, t.name)
	if err != nil {
		return Sum{}, err
	}
	cols = sorted(cols)
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(cols)+` FROM `+t.name+t.filter("")+` ORDER BY `+d.keyOrder(strings.Split(t.key, ", ")))
	if err != nil {
		return Sum{}, err
	}
	defer rows.Close()
	h := sha256.New()
	var n int64
	row := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range row {
		ptrs[i] = &row[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return Sum{}, err
		}
		for _, v := range row {
			writeValue(h, v)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return Sum{}, err
	}
	return Sum{Rows: n, Hash: hex.EncodeToString(h.Sum(nil))[:16]}, nil
}

func writeValue(h hash.Hash, v any) {
	switch v := v.(type) {
	case nil:
		h.Write([]byte{'N'})
	case int64:
		fmt.Fprintf(h, "I%d;", v)
	case string:
		fmt.Fprintf(h, "S%d:%s", len(v), v)
	case []byte:
		fmt.Fprintf(h, "S%d:%s", len(v), v)
	case float64:
		fmt.Fprintf(h, "F%s;", strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		fmt.Fprintf(h, "I%d;", b2i(v))
	default:
		fmt.Fprintf(h, "?%v;", v)
	}
}
