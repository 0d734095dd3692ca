package dbcopy

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// What a copy does on each database, SQLite's beside PostgreSQL's: its
// tables' columns, the order of a key, and what a target needs beside the
// rows. The daily rollup (video_days) is copied as it is, so the triggers
// that keep it from chart entries and tracked counts are held back while
// those are copied, and put back at the end; the search index is built as
// the videos arrive.

// dialect is what a copy does each database's own way.
type dialect interface {
	// columns are a table's columns in their order.
	columns(ctx context.Context, q reader, table string) ([]string, error)
	// keyOrder is an ORDER BY of keys in bytes' order, as SQLite's BINARY
	// compares text: one order on both sides of a copy.
	keyOrder(keys []string) string
	// startCopy holds back the rollup's triggers on a target.
	startCopy(ctx context.Context, tx *sql.Tx) error
	// copied writes what the target keeps beside rows copied into table.
	copied(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error
	// endCopy puts back what startCopy held back.
	endCopy(ctx context.Context, db *store.DB) error
	// carried writes, over what is there, what the target keeps beside
	// rows a carry wrote again (track.go).
	carried(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error
	// dropping deletes what the target keeps beside rows of table a
	// carry is about to delete, by their keys.
	dropping(ctx context.Context, tx *sql.Tx, table string, keys [][]any) error
	// endCarry puts back, in a carry's transaction, what startCopy held
	// back there.
	endCarry(ctx context.Context, tx *sql.Tx) error
}

// sqliteDialect is a copy on SQLite: FTS5's triggers index the videos.
type sqliteDialect struct{}

// pgDialect is a copy on PostgreSQL: the copy writes the index's rows.
type pgDialect struct{}

// rollupTables are the tables whose triggers keep video_days.
var rollupTables = []string{"trending_entries", "video_stats"}

func (sqliteDialect) columns(ctx context.Context, q reader, table string) ([]string, error) {
	return columnNames(ctx, q, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
}

func (pgDialect) columns(ctx context.Context, q reader, table string) ([]string, error) {
	return columnNames(ctx, q, `SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`, table)
}

func columnNames(ctx context.Context, q reader, query, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	got, err := scanAll(rows, 1)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("columns of %s: no such table", table)
	}
	cols := make([]string, len(got))
	for i, r := range got {
		cols[i] = text(r[0])
	}
	return cols, nil
}

// text is a value read as text: a driver may give it as bytes.
func text(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

func (sqliteDialect) keyOrder(keys []string) string { return quoted(keys, "") }

func (pgDialect) keyOrder(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + k + `"`
		if pgTextKeys[k] {
			q[i] += ` COLLATE "C"`
		}
	}
	return strings.Join(q, ", ")
}

// pgTextKeys are the key columns that hold text: sorted by their bytes
// whatever the column's collation (pace_plans.quota_key has the server's).
var pgTextKeys = map[string]bool{"quota_key": true, "name": true, "region": true, "category": true, "key": true,
	"call_id": true, "pool": true, "instance": true}

// startCopy keeps the rollup's triggers in a note and drops them.
func (sqliteDialect) startCopy(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'
AND tbl_name IN (?, ?)`, rollupTables[0], rollupTables[1])
	if err != nil {
		return err
	}
	got, err := scanAll(rows, 2)
	if err != nil {
		return err
	}
	var keep []string
	for _, r := range got {
		keep = append(keep, text(r[1]))
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER "`+text(r[0])+`"`); err != nil {
			return err
		}
	}
	note, _ := json.Marshal(keep)
	_, err = tx.ExecContext(ctx, `INSERT INTO ledger_notes (name, value) VALUES (?, ?)`, copyTriggersNote, string(note))
	return err
}

// startCopy turns the rollup's triggers off.
func (pgDialect) startCopy(ctx context.Context, tx *sql.Tx) error {
	for _, t := range rollupTables {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+t+` DISABLE TRIGGER USER`); err != nil {
			return err
		}
	}
	return nil
}

// copied: SQLite's triggers index the videos.
func (sqliteDialect) copied(context.Context, *sql.Tx, string, []string, [][]any) error { return nil }

// copied writes the words of the videos copied into the search index.
func (pgDialect) copied(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if table != "videos" {
		return nil
	}
	at := keyIndexes(cols, []string{"vid", "title", "description", "tags", "channel_title"})
	q := `INSERT INTO video_docs (vid, doc) VALUES `
	args := make([]any, 0, 2*len(rows))
	for i, r := range rows {
		if i > 0 {
			q += ", "
		}
		q += "(?, ?::tsvector)"
		v := ingest.Video{Title: text(r[at[1]]), Description: text(r[at[2]]), ChannelTitle: text(r[at[4]])}
		_ = json.Unmarshal([]byte(text(r[at[3]])), &v.Tags)
		args = append(args, r[at[0]], store.SearchDoc(&v))
	}
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

// carried: SQLite's triggers index the videos written again.
func (sqliteDialect) carried(context.Context, *sql.Tx, string, []string, [][]any) error { return nil }

func (sqliteDialect) dropping(context.Context, *sql.Tx, string, [][]any) error { return nil }

// carried writes again the words of the videos written again.
func (pgDialect) carried(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if table != "videos" {
		return nil
	}
	at := keyIndexes(cols, []string{"vid"})
	vids := make([][]any, len(rows))
	for i, r := range rows {
		vids[i] = []any{r[at[0]]}
	}
	if err := (pgDialect{}).dropping(ctx, tx, table, vids); err != nil {
		return err
	}
	return pgDialect{}.copied(ctx, tx, table, cols, rows)
}

// dropping deletes the words of the videos about to be deleted.
func (pgDialect) dropping(ctx context.Context, tx *sql.Tx, table string, keys [][]any) error {
	if table != "videos" || len(keys) == 0 {
		return nil
	}
	where, args := keysWhere([]string{"vid"}, keys)
	_, err := tx.ExecContext(ctx, `DELETE FROM video_docs WHERE `+where, args...)
	return err
}

// endCarry puts back the rollup's triggers startCopy kept in a note.
func (sqliteDialect) endCarry(ctx context.Context, tx *sql.Tx) error {
	var note string
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(value), '') FROM ledger_notes WHERE name = ?`, copyTriggersNote).Scan(&note)
	if err != nil || note == "" {
		return err
	}
	var keep []string
	if err := json.Unmarshal([]byte(note), &keep); err != nil {
		return fmt.Errorf("the triggers kept in %s: %w", copyTriggersNote, err)
	}
	for _, q := range append(keep, `DELETE FROM ledger_notes WHERE name = '`+copyTriggersNote+`'`) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// endCarry turns the rollup's triggers on and sets the identity columns'
// sequences past the rows carried.
func (pgDialect) endCarry(ctx context.Context, tx *sql.Tx) error {
	for _, q := range pgEnd[:4] {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// endCopy puts the rollup's triggers back and merges the search index.
func (sqliteDialect) endCopy(ctx context.Context, db *store.DB) error {
	note, err := noted(ctx, db, copyTriggersNote)
	if err != nil || note == "" {
		return err
	}
	var keep []string
	if err := json.Unmarshal([]byte(note), &keep); err != nil {
		return fmt.Errorf("the triggers kept in %s: %w", copyTriggersNote, err)
	}
	return inOne(ctx, db, append(keep, `DELETE FROM ledger_notes WHERE name = '`+copyTriggersNote+`'`,
		`INSERT INTO videos_fts (videos_fts) VALUES ('optimize')`))
}

// endCopy turns the rollup's triggers on and sets the identity columns'
// sequences past the rows copied.
func (pgDialect) endCopy(ctx context.Context, db *store.DB) error {
	return inOne(ctx, db, pgEnd)
}

// pgEnd ends a copy on PostgreSQL: the triggers, the sequences, and the
// planner's statistics (last: a carry leaves them).
var pgEnd = []string{
	`ALTER TABLE trending_entries ENABLE TRIGGER USER`,
	`ALTER TABLE video_stats ENABLE TRIGGER USER`,
	`SELECT setval(pg_get_serial_sequence('videos', 'vid'), coalesce(max(vid), 0) + 1, false) FROM videos`,
	`SELECT setval(pg_get_serial_sequence('runs', 'id'), coalesce(max(id), 0) + 1, false) FROM runs`,
	`ANALYZE`,
}

// inOne runs stmts in one transaction of db's writer.
func inOne(ctx context.Context, db *store.DB, stmts []string) error {
	tx, err := db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}
