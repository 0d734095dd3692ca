package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingestworks/ingest"
)

// pgTables are the tables of PostgreSQL's first migration in the order it creates them,
// which is an order their foreign keys allow.
func pgTables() []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^CREATE TABLE (\w+)`).FindAllStringSubmatch(pgMigrations[0].sql, -1) {
		names = append(names, m[1])
	}
	return names
}

// copyToPG copies the rows of the SQLite store at path (opened read-only)
// into the empty PostgreSQL store at url, for benchmarks: each table of
// PostgreSQL's first migration with the columns PostgreSQL has, written with COPY.
// video_docs, which SQLite does not have, is built from each video's text
// by tsDoc, as SavePage builds it. The session copies as a replica
// (session_replication_role), so no trigger fires: video_days is copied as
// SQLite has it, rather than folded again from the entries and the stats it
// already holds, and foreign keys are not checked row by row (the rows come
// from a store that kept them). Then the identity sequences are moved past
// the copied ids, and every table is vacuumed and analyzed. It returns the
// rows copied per table.
func copyToPG(ctx context.Context, path, url string) (map[string]int64, error) {
	src, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer dst.Close(context.Background())
	if _, err := dst.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, table := range pgTables() {
		var n int64
		if table == "video_docs" {
			n, err = copyDocs(ctx, src, dst)
		} else {
			n, err = copyTable(ctx, src, dst, table)
		}
		if err != nil {
			return counts, fmt.Errorf("copy %s: %w", table, err)
		}
		counts[table] = n
	}
	for _, q := range []string{
		`SELECT setval(pg_get_serial_sequence('videos', 'vid'), coalesce(max(vid), 0) + 1, false) FROM videos`,
		`SELECT setval(pg_get_serial_sequence('runs', 'id'), coalesce(max(id), 0) + 1, false) FROM runs`,
		`RESET session_replication_role`,
		`VACUUM ANALYZE`,
	} {
		if _, err := dst.Exec(ctx, q); err != nil {
			return counts, fmt.Errorf("%s: %w", q, err)
		}
	}
	return counts, nil
}

// pgColumns are a table's columns in PostgreSQL, in their order.
func pgColumns(ctx context.Context, dst *pgx.Conn, table string) ([]string, error) {
	rows, err := dst.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// copyTable replaces the PostgreSQL table's rows with SQLite's, streamed:
// text loses its NUL characters, as pgRow's does.
func copyTable(ctx context.Context, src *sql.DB, dst *pgx.Conn, table string) (int64, error) {
	cols, err := pgColumns(ctx, dst, table)
	if err != nil {
		return 0, err
	}
	// The schema writes rows of its own (the ledger's id), which the
	// copied store's replace.
	if _, err := dst.Exec(ctx, `DELETE FROM `+table); err != nil {
		return 0, err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	rows, err := src.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n, err := dst.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		if !rows.Next() {
			return nil, rows.Err()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			switch v := v.(type) {
			case []byte:
				vals[i] = strings.ReplaceAll(string(v), "\x00", "")
			case string:
				vals[i] = strings.ReplaceAll(v, "\x00", "")
			}
		}
		return vals, nil
	}))
	if err != nil {
		return n, err
	}
	return n, rows.Err()
}

// copyDocs writes video_docs from the videos' text as the store does
// (pgRow, then the literal cast to tsvector), through a temporary table of
// literals: the cast is the server's, as in the page's docs statement (pages.go).
func copyDocs(ctx context.Context, src *sql.DB, dst *pgx.Conn) (int64, error) {
	if _, err := dst.Exec(ctx, `CREATE TEMP TABLE docs_text (vid BIGINT, doc TEXT, regions TEXT)`); err != nil {
		return 0, err
	}
	rows, err := src.QueryContext(ctx, `SELECT vid, title, description, tags, channel_title,
  coalesce((SELECT group_concat(region, ' ') FROM video_regions AS r WHERE r.vid = videos.vid), '') FROM videos`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	_, err = dst.CopyFrom(ctx, pgx.Identifier{"docs_text"}, []string{"vid", "doc", "regions"}, pgx.CopyFromFunc(func() ([]any, error) {
		if !rows.Next() {
			return nil, rows.Err()
		}
		var vid int64
		var v ingest.Video
		var tags, regions string
		if err := rows.Scan(&vid, &v.Title, &v.Description, &tags, &v.ChannelTitle, &regions); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &v.Tags); err != nil {
			return nil, err
		}
		return []any{vid, SearchDoc(&v), regions}, nil
	}))
	if err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	tag, err := dst.Exec(ctx, `INSERT INTO video_docs (vid, doc, regions)
  SELECT vid, doc::tsvector, array_to_tsvector(string_to_array(regions, ' ')) FROM docs_text`)
	if err != nil {
		return 0, err
	}
	_, err = dst.Exec(ctx, `DROP TABLE docs_text`)
	return tag.RowsAffected(), err
}

// loadPG opens a new PostgreSQL store at url and copies the SQLite store at
// path into it, returning how long the copy took.
func loadPG(ctx context.Context, path, url string) (*DB, map[string]int64, time.Duration, error) {
	db, err := Open(ctx, url)
	if err != nil {
		return nil, nil, 0, err
	}
	start := time.Now()
	counts, err := copyToPG(ctx, path, url)
	if err != nil {
		db.Close()
		return nil, counts, 0, err
	}
	return db, counts, time.Since(start), nil
}

// loadPGOnce is loadPG into a database kept between runs: when the store
// at url already holds videos, it is opened as it is.
func loadPGOnce(ctx context.Context, path, url string) (*DB, map[string]int64, time.Duration, error) {
	db, err := Open(ctx, url)
	if err != nil {
		return nil, nil, 0, err
	}
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&n); err != nil || n == 0 {
		db.Close()
		return loadPG(ctx, path, url)
	}
	return db, map[string]int64{"videos": n}, 0, nil
}

// LoadPGOnce is loadPGOnce for package store_test.
var LoadPGOnce = loadPGOnce

// LoadPG is loadPG for the benchmarks of package store_test, which can
// import internal/rig/yeardb (it imports store).
var LoadPG = loadPG
