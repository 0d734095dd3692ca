package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "ingest.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func userVersion(t *testing.T, db *DB) int {
	t.Helper()
	var v int
	if err := db.Reader().QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenAppliesSchema(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	if got := userVersion(t, db); got != SchemaVersion {
		t.Errorf("user_version = %d, want %d", got, SchemaVersion)
	}
	for _, table := range []string{"videos", "videos_fts", "runs", "trending_entries",
		"search_results", "video_regions", "ledger", "categories", "category_fetches",
		"backfill_cursors", "quota_log", "quota_block", "quota_clock", "locks"} {
		var n int
		err := db.Reader().QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, table).Scan(&n)
		if err != nil || n != 1 {
			t.Errorf("table %s: count %d, err %v; want 1", table, n, err)
		}
	}
	var mode string
	if err := db.Writer().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestReopenDoesNotReapply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.StartRun(ctx, "US", "", ingest.Trending, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Applying the first migration again would fail on the existing tables or drop
	// the run; reopening must do neither.
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	runs, err := db.LastRuns(ctx, ingest.Trending)
	if err != nil {
		t.Fatal(err)
	}
	if got := runs["US"].RunID; got != id {
		t.Errorf("run after reopen = %d, want %d", got, id)
	}
}

func TestOpenNewerSchemaFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path); err == nil {
		t.Error("Open of a newer schema: got nil error")
	}
}

func TestConcurrentOpenGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ingest.db")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			db, err := Open(context.Background(), path)
			if err == nil {
				_, err = db.StartRun(context.Background(), "US", "", ingest.Trending, time.Now())
				db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkRunCount(t, path, n)
}

// TestConcurrentOpenProcesses opens a new file from several processes at
// once: each is this test binary running TestHelperOpen.
func TestConcurrentOpenProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ingest.db")
	const n = 4
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperOpen$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "STORE_HELPER_DB="+path)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	checkRunCount(t, path, n)
}

func TestHelperOpen(t *testing.T) {
	path := os.Getenv("STORE_HELPER_DB")
	if path == "" {
		t.Skip("helper for TestConcurrentOpenProcesses")
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.StartRun(context.Background(), "US", "", ingest.Trending, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// checkRunCount: every opener migrated the same database once (a second
// migration would have failed, or emptied runs).
func checkRunCount(t *testing.T, path string, want int) {
	t.Helper()
	db, err := OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Reader().QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("runs = %d, want %d", n, want)
	}
}

func TestOpenExistingMissing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := OpenExisting(context.Background(), path)
	if !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("OpenExisting(missing) = %v, want ErrNoDatabase", err)
	}
	if want := path; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Errorf("OpenExisting left files behind: %v", entries)
	}
}

func TestOpenExistingIsReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.StartRun(ctx, "US", "", ingest.Trending, time.Now()); err == nil {
		t.Error("StartRun through OpenExisting: got nil error, want a read-only failure")
	}
	if _, err := ro.Search(ctx, "anything", SearchOptions{}); err != nil {
		t.Errorf("Search through OpenExisting: %v", err)
	}
}

func TestOpenExistingNotIngest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenExisting(context.Background(), path); err == nil {
		t.Error("OpenExisting(empty file): got nil error")
	}
}

// TestEveryConnectionCheckpointsAtTheMark: the writer (which the embedded
// limiter shares) and every reader checkpoint at WALCheckpointAt, not at
// SQLite's thousand pages.
func TestEveryConnectionCheckpointsAtTheMark(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	for name, pool := range map[string]interface {
		QueryRow(string, ...any) *sql.Row
	}{"writer": db.Writer(), "reader": db.Reader()} {
		var pages int
		if err := pool.QueryRow("PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if want := WALCheckpointAt / defaultPageSize; pages != want {
			t.Errorf("%s: wal_autocheckpoint %d pages, want %d (%d bytes)", name, pages, want, WALCheckpointAt)
		}
	}
}

// TestWriterKeepsTempInMemory: the writer a store opens keeps its
// temporary files (a statement's journal within a page's transaction) in
// memory, where the readers keep SQLite's default.
func TestWriterKeepsTempInMemory(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	for name, c := range map[string]struct {
		pool interface {
			QueryRow(string, ...any) *sql.Row
		}
		want int
	}{"writer": {db.Writer(), 2}, "reader": {db.Reader(), 0}} {
		var got int
		if err := c.pool.QueryRow("PRAGMA temp_store").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: temp_store %d, want %d", name, got, c.want)
		}
	}
}
