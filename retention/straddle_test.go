package retention

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// TestPruneStoppedBeforeItsRollupIsPutRight: a run begun before a cut's
// 00:00 took an entry after it, so the prune takes the run whole and makes
// the cut's day of the rollup again without its entry. A prune stopped
// between the two (a signal ends it between transactions, or the host
// dies) leaves the run gone and the rollup still counting it: the next
// prune, with the same cut, puts the day right.
func TestPruneStoppedBeforeItsRollupIsPutRight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		next := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
		late := storetest.Run(t, db, ingest.Trending, "GB", next.Add(-time.Minute),
			page(ingest.Trending, "GB", 1, next.Add(time.Minute), vid("hot", "Hot")))
		if err := db.FinishRun(ctx, late, ingest.RunEnd{Status: ingest.StatusCompleted, At: next.Add(2 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		finished(t, db, "GB", next.Add(time.Hour), vid("hot", "Hot"))
		// The prune's first step, alone: the run begun before the cut goes
		// whole, in its own transaction, and the prune stops there.
		for _, q := range []string{`DELETE FROM trending_entries WHERE run_id = ?`, `DELETE FROM runs WHERE id = ?`} {
			if _, err := db.Writer().ExecContext(ctx, q, late); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, db, `SELECT coalesce(sum(entries), 0) FROM video_days`); n != 2 {
			t.Fatalf("before the next prune the rollup counts %d entries; want the stopped prune's 2", n)
		}
		if _, err := Prune(ctx, db, Retention{Before: next.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		kept := count(t, db, `SELECT count(*) FROM trending_entries`)
		if n := count(t, db, `SELECT coalesce(sum(entries), 0) FROM video_days`); n != kept || kept != 1 {
			t.Errorf("after the next prune the rollup counts %d entries, %d are kept: want the one run kept's", n, kept)
		}
		at := count(t, db, `SELECT first_ms FROM video_days WHERE region = 'GB'`)
		if want := next.Add(time.Hour).UnixMilli(); int64(at) != want {
			t.Errorf("the day's first entry in the rollup is at %d, want the kept run's %d", at, want)
		}
	})
}
