package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestUpgradeDataKeepsRows upgrades a schema 5 database holding a run, its
// chart entries and its ledger, and checks every row is still there, the
// run and its entries now the unfiltered chart (”).
func TestUpgradeDataKeepsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), "v5.db"), false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(string(v1)); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sqliteMigrations[1:5] {
		if err := m.apply(ctx, tx, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO runs (id, region, kind, status, started_ms) VALUES (7, 'GB', 'trending', 'completed', 1000)`,
		`INSERT INTO videos (vid, id, title, description, tags, channel_id, channel_title, category_id, duration,
		   first_seen_ms, last_seen_ms) VALUES (3, 'abc', 'A title', '', '[]', 'UC1', 'Chan', '10', 'PT1M', 1000, 1000)`,
		`INSERT INTO trending_entries (run_id, region, vid, rank, view_count, fetched_ms) VALUES (7, 'GB', 3, 1, 500, 1000)`,
		`INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op, region, run_id) VALUES ('k', 'c1', 'default', 1, 1000, 'videos.list', 'GB', 7)`,
		`PRAGMA user_version = 5`,
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, db); err != nil {
		t.Fatalf("upgrade 5 to %d: %v", SchemaVersion, err)
	}
	var runCat, entryCat, thumb string
	var views, ledger int64
	err = db.QueryRow(`SELECT r.category, e.category, e.view_count, v.thumbnail, (SELECT count(*) FROM ledger)
		FROM runs r JOIN trending_entries e ON e.run_id = r.id JOIN videos v ON v.vid = e.vid`).
		Scan(&runCat, &entryCat, &views, &thumb, &ledger)
	if err != nil {
		t.Fatalf("read after upgrade: %v", err)
	}
	if runCat != "" || entryCat != "" || views != 500 || thumb != "" || ledger != 1 {
		t.Errorf("after upgrade: run category %q, entry category %q, views %d, thumbnail %q, ledger rows %d; want '', '', 500, '', 1",
			runCat, entryCat, views, thumb, ledger)
	}
	if _, err := db.Exec(`INSERT INTO video_stats (vid, at_ms, view_count, day_ms) VALUES (3, 2000, 600, 0)`); err != nil {
		t.Errorf("video_stats after upgrade: %v", err)
	}
}

func TestNewDatabaseVacuumsIncrementally(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	var mode int
	if err := db.Writer().QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum = %d (%v), want 2 (incremental)", mode, err)
	}
}
