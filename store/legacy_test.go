package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The search of schema version 1 (unicode61 over the raw text, external
// content, snippet() by FTS5), kept for the benchmark's "before" column:
// the same corpus and queries, measured in the same run.

// useV1Index replaces the index of a new database with version 1's, read
// from testdata/schema_v1.sql.
func useV1Index(tb testing.TB, db *DB) {
	tb.Helper()
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		tb.Fatal(err)
	}
	s := string(v1)
	from := strings.Index(s, "CREATE VIRTUAL TABLE videos_fts")
	to := strings.Index(s, "-- One pass over a region")
	if from < 0 || to < from {
		tb.Fatal("schema_v1.sql: cannot find its search index")
	}
	for _, q := range []string{"DROP TRIGGER videos_fts_insert", "DROP TRIGGER videos_fts_update",
		"DROP TRIGGER videos_fts_delete", "DROP TABLE videos_fts", s[from:to]} {
		if _, err := db.Writer().Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
}

// v1RankWindow is version 1's RankWindow.
const v1RankWindow = 5000

const v1WindowSQL = `
SELECT rowid FROM videos_fts WHERE videos_fts MATCH ?1
ORDER BY rowid DESC LIMIT 1 OFFSET ?4`

const v1RankedSQL = `
WITH top AS MATERIALIZED (
  SELECT rowid AS vid, rank FROM videos_fts WHERE videos_fts MATCH ?1
  ORDER BY rank LIMIT ?3
)
SELECT v.id, snippet(videos_fts, -1, '[', ']', '…', 16)
FROM top
JOIN videos_fts ON videos_fts.rowid = top.vid
JOIN videos AS v ON v.vid = top.vid
WHERE videos_fts MATCH ?1
ORDER BY top.rank`

const v1BroadSQL = `
WITH titled AS MATERIALIZED (
  SELECT videos_fts.rowid AS vid, coalesce(v.view_count, 0) AS views
  FROM videos_fts JOIN videos AS v ON v.vid = videos_fts.rowid
  WHERE videos_fts MATCH ?5 AND videos_fts.rowid >= ?4
  ORDER BY views DESC LIMIT ?3
),
rest AS MATERIALIZED (
  SELECT rowid AS vid FROM videos_fts
  WHERE videos_fts MATCH ?1 AND rowid >= ?4 AND rowid NOT IN (SELECT vid FROM titled)
  ORDER BY rowid DESC LIMIT ?3
),
top AS MATERIALIZED (
  SELECT vid, pos FROM (
    SELECT vid, row_number() OVER (ORDER BY views DESC) AS pos FROM titled
    UNION ALL
    SELECT vid, ?3 + row_number() OVER (ORDER BY vid DESC) FROM rest)
  ORDER BY pos LIMIT ?3
)
SELECT v.id, snippet(videos_fts, -1, '[', ']', '…', 16)
FROM top
JOIN videos_fts ON videos_fts.rowid = top.vid
JOIN videos AS v ON v.vid = top.vid
WHERE videos_fts MATCH ?1
ORDER BY top.pos`

// searchV1 is version 1's search, for plain words and prefixes.
func searchV1(ctx context.Context, db *DB, q string, limit int) ([]string, error) {
	var terms []string
	for _, w := range strings.Fields(q) {
		t := `"` + strings.ReplaceAll(strings.TrimSuffix(w, "*"), `"`, `""`) + `"`
		if strings.HasSuffix(w, "*") {
			t += "*"
		}
		terms = append(terms, t)
	}
	expr := strings.Join(terms, " ")
	var lo int64
	var rows *sql.Rows
	err := db.r.QueryRowContext(ctx, v1WindowSQL, expr, "", limit, v1RankWindow-1).Scan(&lo)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		rows, err = db.r.QueryContext(ctx, v1RankedSQL, expr, "", limit)
	case err == nil:
		rows, err = db.r.QueryContext(ctx, v1BroadSQL, expr, "", limit, lo, "title : ("+expr+")")
	}
	if err != nil {
		return nil, fmt.Errorf("v1 search %q: %w", q, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id, snip string
		if err := rows.Scan(&id, &snip); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func TestSearchV1StillRuns(t *testing.T) {
	t.Parallel()
	db := openTest(t) // the legacy FTS5 index: SQLite only
	searchFixture(t, db)
	useV1Index(t, db)
	if _, err := db.Writer().Exec(`INSERT INTO videos_fts (videos_fts) VALUES ('rebuild')`); err != nil {
		t.Fatal(err)
	}
	got, err := searchV1(context.Background(), db, "highlights", 20)
	if err != nil || len(got) != 1 || got[0] != "worldcup" {
		t.Errorf("v1 search(highlights) = %v, %v; want [worldcup]", got, err)
	}
}
