package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// What a copy does on each database (copy.go): its tables' columns, the
// order of a key, and what a target needs beside the rows. The daily
// rollup (video_days) is copied as it is, so the triggers that keep it
// from chart entries and tracked counts are held back while those are
// copied, and put back at the end; the search index is built as the
// videos arrive.

// rollupTables are the tables whose triggers keep video_days.
const rollupTables = "'trending_entries', 'video_stats'"

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
		cols[i] = fmt.Sprint(text(r[0]))
	}
	return cols, nil
}

func text(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// keyOrder is an ORDER BY of keys in bytes' order, as SQLite's BINARY
// compares text: one order on both sides of a copy.
func (sqliteDialect) keyOrder(keys []string) string { return quoted(keys) }

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
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name IN (`+rollupTables+`)`)
	if err != nil {
		return err
	}
	got, err := scanAll(rows, 2)
	if err != nil {
		return err
	}
	var keep []string
	for _, r := range got {
		keep = append(keep, fmt.Sprint(text(r[1])))
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER "`+fmt.Sprint(text(r[0]))+`"`); err != nil {
			return err
		}
	}
	note, _ := json.Marshal(keep)
	_, err = tx.ExecContext(ctx, `INSERT INTO ledger_notes (name, value) VALUES (?, ?)`, copyTriggersNote, string(note))
	return err
}

// startCopy turns the rollup's triggers off.
func (pgDialect) startCopy(ctx context.Context, tx *sql.Tx) error {
	for _, t := range []string{"trending_entries", "video_stats"} {
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
		var tags []string
		_ = json.Unmarshal([]byte(fmt.Sprint(text(r[at[3]]))), &tags)
		args = append(args, r[at[0]], tsDoc(pgText(fmt.Sprint(text(r[at[1]]))), pgText(fmt.Sprint(text(r[at[2]]))),
			pgText(strings.Join(tags, " ")), pgText(fmt.Sprint(text(r[at[4]])))))
	}
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

// endCopy puts the rollup's triggers back and merges the search index.
func (sqliteDialect) endCopy(ctx context.Context, db *DB) error {
	note, err := db.noted(ctx, copyTriggersNote)
	if err != nil || note == "" {
		return err
	}
	var keep []string
	if err := json.Unmarshal([]byte(note), &keep); err != nil {
		return fmt.Errorf("the triggers kept in %s: %w", copyTriggersNote, err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range append(keep, `DELETE FROM ledger_notes WHERE name = '`+copyTriggersNote+`'`,
		`INSERT INTO videos_fts (videos_fts) VALUES ('optimize')`) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// endCopy turns the rollup's triggers on and sets the identity columns'
// sequences past the rows copied.
func (pgDialect) endCopy(ctx context.Context, db *DB) error {
	for _, q := range []string{
		`ALTER TABLE trending_entries ENABLE TRIGGER USER`,
		`ALTER TABLE video_stats ENABLE TRIGGER USER`,
		`SELECT setval(pg_get_serial_sequence('videos', 'vid'), coalesce(max(vid), 0) + 1, false) FROM videos`,
		`SELECT setval(pg_get_serial_sequence('runs', 'id'), coalesce(max(id), 0) + 1, false) FROM runs`,
		`ANALYZE`,
	} {
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
