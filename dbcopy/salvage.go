package dbcopy

// A salvage (ingest db recover): the rows of a damaged SQLite file that
// still read, carried into a new database. SQLite's own reads stop at the
// first damaged page of a table, and the sqlite3 shell's .recover cannot
// read this schema on every system, so the file's pages are read by hand
// (pages.go): each table's tree walked from its root, a page that is not
// one of it skipped with what hangs under it, each row read written into
// the new database, which keeps only what its constraints accept.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ingestworks/ingest/store"
)

// Salvaged is what a salvage carried of one table.
type Salvaged struct {
	Table string
	// Kept are the rows written into the new database; Refused the rows
	// found that could not be kept: a record that does not read whole, or
	// one the new database refused (pointing at a row that was lost, or a
	// damaged page's bytes that read as a row).
	Kept, Refused int64
	// Pages are the table's pages read; Unreadable those that were not
	// pages of it, each with the rows on and under it lost.
	Pages, Unreadable int
}

// Lost is about how many rows the table lost: those refused, and the
// unreadable pages' at the rows a readable page of the table held.
func (s Salvaged) Lost() int64 {
	if s.Pages == 0 {
		return s.Refused
	}
	perPage := float64(s.Kept+s.Refused) / float64(s.Pages)
	return s.Refused + int64(math.Round(perPage*float64(s.Unreadable)))
}

// Salvage carries every row of src (store.OpenDamaged: a SQLite file read
// as it is) that still reads into dst, a new database store.Open migrated,
// table by table (copyTables, parents first) by the column names both
// share; the search index is built as the videos arrive. progress, when
// set, is told each table's salvage as it ends, and the pages read so far
// of the file's. src is only read.
func Salvage(ctx context.Context, src *sql.DB, dst *store.DB, progress func(s Salvaged, done, total int64)) ([]Salvaged, error) {
	p, err := openPages(ctx, src)
	if err != nil {
		return nil, err
	}
	if err := holdTriggers(ctx, dst); err != nil {
		return nil, err
	}
	var out []Salvaged
	done := int64(0)
	for _, t := range copyTables {
		s, ok, err := salvageTable(ctx, p, src, dst, t)
		if err != nil {
			return out, fmt.Errorf("%s: %w", t.name, err)
		}
		if ok {
			out = append(out, s)
			done += int64(s.Pages + s.Unreadable)
			if progress != nil {
				progress(s, done, p.count)
			}
		}
	}
	if err := (sqliteDialect{}).endCopy(ctx, dst); err != nil {
		return out, fmt.Errorf("the rollup's triggers and the search index: %w", err)
	}
	return out, nil
}

// holdTriggers keeps the rollup's triggers off while rows are written, as
// a copy does: the rollup's rows are carried as they were.
func holdTriggers(ctx context.Context, dst *store.DB) error {
	tx, err := dst.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := (sqliteDialect{}).startCopy(ctx, tx); err != nil {
		return fmt.Errorf("hold the rollup's triggers: %w", err)
	}
	return tx.Commit()
}

// salvageTable carries t's rows that read; ok false when src has no t.
func salvageTable(ctx context.Context, p *pages, src reader, dst *store.DB, t carried) (Salvaged, bool, error) {
	s := Salvaged{Table: t.name}
	l, ok, err := layoutOf(ctx, src, t.name)
	if err != nil || !ok {
		return s, false, err
	}
	theirs, err := (sqliteDialect{}).columns(ctx, dst.Reader(), t.name)
	if err != nil {
		return s, false, err
	}
	w := &rowWriter{db: dst, t: t, l: l, theirs: map[string]bool{}}
	for _, c := range theirs {
		w.theirs[c] = true
	}
	defer w.rollback()
	var written error
	walked, err := p.walk(ctx, l.root, l.index, func(rowid int64, values []any) {
		if written == nil {
			written = w.add(ctx, rowid, values)
		}
	})
	if err == nil {
		err = written
	}
	if err == nil {
		err = w.commit()
	}
	s.Kept, s.Refused, s.Pages, s.Unreadable = w.kept, w.refused+walked.broken, walked.good, walked.bad
	return s, true, err
}

// layout is how a table's rows lie in the file.
type layout struct {
	root int64
	// index: a WITHOUT ROWID table, its rows the records of its primary
	// key's index tree.
	index bool
	cols  []string // each record's values, in order
	// alias is the INTEGER PRIMARY KEY column, whose value is the rowid
	// (the record holds NULL); -1 when none.
	alias int
}

// layoutOf reads table's layout from src's schema; ok false when src has
// no such table.
func layoutOf(ctx context.Context, src reader, table string) (layout, bool, error) {
	l := layout{alias: -1}
	err := src.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&l.root)
	if errors.Is(err, sql.ErrNoRows) {
		return l, false, nil
	} else if err != nil {
		return l, false, fmt.Errorf("schema: %w", err)
	}
	if err := src.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, table).Scan(&l.index); err != nil {
		return l, false, fmt.Errorf("schema: %w", err)
	}
	if l.index {
		l.cols, err = columnNames(ctx, src, `SELECT x.name FROM pragma_index_list(?1) AS i, pragma_index_xinfo(i.name) AS x
WHERE i.origin = 'pk' AND x.cid >= 0 ORDER BY x.seqno`, table)
		return l, true, err
	}
	rows, err := src.QueryContext(ctx, `SELECT name, upper(type), pk FROM pragma_table_xinfo(?) WHERE hidden IN (0, 3) ORDER BY cid`, table)
	if err != nil {
		return l, false, fmt.Errorf("columns of %s: %w", table, err)
	}
	got, err := scanAll(rows, 3)
	if err != nil {
		return l, false, fmt.Errorf("columns of %s: %w", table, err)
	}
	keys := 0
	for i, r := range got {
		l.cols = append(l.cols, text(r[0]))
		if text(r[2]) != "0" {
			keys++
			if text(r[1]) == "INTEGER" {
				l.alias = i
			}
		}
	}
	if keys != 1 {
		l.alias = -1
	}
	return l, true, nil
}

// salvageBatch is how many rows one transaction of the new database takes.
const salvageBatch = 5000

// rowWriter writes one table's rows into the new database, counting those
// it keeps and those it refuses.
type rowWriter struct {
	db            *store.DB
	t             carried
	l             layout
	theirs        map[string]bool // the new database's columns of t
	tx            *sql.Tx
	n             int
	kept, refused int64
}

// add writes one row read: its values under the columns the new database
// has (a row written before a column was added holds fewer values, and
// the new database gives the rest their default).
func (w *rowWriter) add(ctx context.Context, rowid int64, values []any) error {
	if len(values) > len(w.l.cols) {
		w.refused++ // not one of this table's rows
		return nil
	}
	if w.l.alias >= 0 && w.l.alias < len(values) && values[w.l.alias] == nil {
		values[w.l.alias] = rowid
	}
	var cols []string
	var args []any
	for i, v := range values {
		if w.theirs[w.l.cols[i]] {
			cols, args = append(cols, w.l.cols[i]), append(args, v)
		}
	}
	if w.t.whole && copyNote(cols, args) {
		return nil
	}
	if w.tx == nil {
		tx, err := w.db.Writer().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		w.tx = tx
	}
	q, qa := insertRows(w.t, cols, [][]any{args})
	switch _, err := w.tx.ExecContext(ctx, q, qa...); {
	case store.Refused(err):
		w.refused++
	case err != nil:
		return err
	default:
		w.kept++
	}
	if w.n++; w.n%salvageBatch == 0 {
		return w.commit()
	}
	return nil
}

// copyNote says whether a row of ledger_notes is a copy's own note, which
// belongs to the file it was written on.
func copyNote(cols []string, args []any) bool {
	for i, c := range cols {
		if s, ok := args[i].(string); c == "name" && ok && strings.HasPrefix(s, "copy_") {
			return true
		}
	}
	return false
}

func (w *rowWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx = nil
	return err
}

func (w *rowWriter) rollback() {
	if w.tx != nil {
		w.tx.Rollback()
	}
}
