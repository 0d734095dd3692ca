package retention

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// A prune that finds a video orphaned while another host's page, not yet
// committed, stores it again leaves the video to that page.
func TestPGPruneBesideAnotherHostsPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openURL(t, pgtest.URL(t))
	id := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("X", "x video")))
	if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(48 * time.Hour)
	r2, err := db.StartRun(ctx, "GB", "", ingest.Trending, later)
	if err != nil {
		t.Fatal(err)
	}
	host := openURL(t, db.Path())
	tx, err := host.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE videos SET last_seen_ms = $1 WHERE id = 'X'`, later.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO trending_entries (run_id, region, vid, rank, fetched_ms)
		SELECT $1, 'GB', vid, 1, $2 FROM videos WHERE id = 'X'`, r2, later.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Prune(ctx, db, Retention{Before: t0.Add(24 * time.Hour)})
		done <- err
	}()
	// The prune either ends without touching the page's rows or waits for
	// them: the page commits once it does one or the other.
	var pruned error
	ended := false
	deadline := time.Now().Add(time.Minute)
	for waiting := 0; waiting == 0 && !ended; {
		if time.Now().After(deadline) {
			t.Fatal("the prune neither ended nor waited for the page's rows within a minute")
		}
		select {
		case pruned = <-done:
			ended = true
		case <-time.After(10 * time.Millisecond):
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the prune ended before the page committed: %v", ended)
	if !ended {
		pruned = <-done
	}
	if err := pruned; err != nil {
		t.Fatalf("prune beside another host's page: %v", err)
	}
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM trending_entries e JOIN videos v USING (vid) WHERE v.id = 'X'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("video X has %d entries after the prune (%v), want the other host's 1", n, err)
	}
}

// DryRun on PostgreSQL is the prune kept from the database: what it
// counts is what Prune then deletes, as Count says beforehand, and every
// row is where it was after it.
func TestPGDryRunIsThePruneRolledBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openURL(t, pgtest.URL(t))
	termsWorld(t, db)
	r := termsCut()
	r.Batch = 3
	rows := func() []int {
		var n []int
		for _, table := range []string{"runs", "trending_entries", "video_stats", "video_days", "videos", "search_results", "categories"} {
			n = append(n, count(t, db, `SELECT count(*) FROM `+table))
		}
		return n
	}
	before := rows()
	counted, err := Count(ctx, db, r)
	if err != nil {
		t.Fatal(err)
	}
	dry, left, err := DryRun(ctx, db, r)
	if err != nil {
		t.Fatal(err)
	}
	if after := rows(); !slices.Equal(after, before) {
		t.Errorf("rows before the dry run %v, after it %v", before, after)
	}
	pruned, err := Prune(ctx, db, r)
	if err != nil {
		t.Fatal(err)
	}
	if dry != pruned || (Beyond{Runs: dry.Runs, Entries: dry.Entries, Stats: dry.Stats, Videos: dry.Videos, Search: dry.Search,
		Categories: dry.Categories, Ledger: dry.Ledger}) != counted {
		t.Errorf("dry run %+v, prune %+v, counted %+v", dry, pruned, counted)
	}
	size, err := db.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !left.OldestRun.Equal(size.OldestRun) {
		t.Errorf("the dry run left the oldest run at %v, the prune at %v", left.OldestRun, size.OldestRun)
	}
}
