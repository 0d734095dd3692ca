package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestUpgradeKeepsRunsAndRekeysOpenEndedCursors builds a version-1
// database with runs, their entries and cursors in the old format, then
// upgrades it: every row stays, the foreign keys hold, new statuses are
// accepted, and an old open-ended cursor (its until is the moment its run
// started) takes the open-ended name while a dated one keeps its own.
func TestUpgradeKeepsRunsAndRekeysOpenEndedCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	ranAt := time.Date(2026, 3, 1, 12, 0, 7, 0, time.UTC)
	seed := `PRAGMA user_version = 1;
INSERT INTO runs (id, region, kind, status, started_ms, pages, videos) VALUES
  (1, 'GB', 'search', 'stopped', ?1, 2, 100),
  (2, 'US', 'trending', 'completed', ?1, 1, 1);
INSERT INTO videos (vid, id, title, description, tags, channel_id, channel_title, category_id, duration, first_seen_ms, last_seen_ms)
  VALUES (1, 'abcdefghijk', 't', 'd', '[]', 'c', 'ct', '10', 'PT1M', 0, 0);
INSERT INTO trending_entries (run_id, region, vid, rank, fetched_ms) VALUES (2, 'US', 1, 1, 0);
INSERT INTO backfill_cursors (key, page_token, pages, videos, units, done, updated_ms) VALUES
  ('GB|2026-01-01T00:00:00Z|2026-03-01T12:00:05Z|', 'tok3', 2, 100, 202, 0, 1),
  ('GB|2026-01-01T00:00:00Z|2026-02-01T00:00:00Z|', 'tokX', 1, 50, 101, 0, 1);`
	if _, err := old.Exec(string(v1)); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(seed, ranAt.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, old); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs, entries, violations int
	w := db.Writer()
	if err := w.QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM trending_entries),
		(SELECT count(*) FROM pragma_foreign_key_check)`).Scan(&runs, &entries, &violations); err != nil {
		t.Fatal(err)
	}
	if runs != 2 || entries != 1 || violations != 0 {
		t.Errorf("after upgrade: %d runs, %d entries, %d foreign key violations; want 2, 1, 0", runs, entries, violations)
	}
	if err := db.FinishRun(ctx, 1, ingest.RunEnd{Status: ingest.StatusInterrupted, At: ranAt}); err != nil {
		t.Errorf("an upgraded runs table refuses status interrupted: %v", err)
	}
	open := ingest.BackfillID{Region: "GB", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}.Key()
	c, ok, err := db.Cursor(ctx, open)
	if err != nil || !ok {
		t.Fatalf("open-ended cursor %q after upgrade: ok %v err %v", open, ok, err)
	}
	if c.PageToken != "tok3" || c.Pages != 2 || !c.ID.OpenEnded() || !c.Before.Equal(time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)) {
		t.Errorf("open-ended cursor after upgrade: %+v; want tok3, 2 pages, open-ended, before 12:00:05", c)
	}
	dated := ingest.BackfillID{Region: "GB", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}.Key()
	if c, ok, _ := db.Cursor(ctx, dated); !ok || c.PageToken != "tokX" || c.ID.OpenEnded() {
		t.Errorf("dated cursor %q after upgrade: ok %v %+v", dated, ok, c)
	}
}
