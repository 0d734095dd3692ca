package store

import (
	"context"
	"testing"
	"time"
)

// TestThePurgedMarkMovesOnlyFromTheOneRead: a cache never purged has no
// mark; the first kept is kept once; a mark moves only from the one the
// mover read, so of two processes that purged from the same mark the
// later does not move the kept mark past a move only the earlier purged;
// each cache has its own.
func TestThePurgedMarkMovesOnlyFromTheOneRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	eachStore(t, func(t *testing.T, db *DB) {
		const cache = "http://cache.test/"
		keep := func(was string, found bool, mark string, at time.Time) bool {
			t.Helper()
			ok, err := db.KeepPurged(ctx, cache, was, found, mark, at)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if _, _, found, err := db.Purged(ctx, cache); err != nil || found {
			t.Fatalf("a cache never purged: found %v (%v), want no mark", found, err)
		}
		if !keep("", false, "m1", t0) || keep("", false, "m1b", t0) {
			t.Errorf("the first mark kept: want it kept once, the second first refused")
		}
		if !keep("m1", true, "m3", t0.Add(2*time.Minute)) {
			t.Errorf("a move from the mark kept was refused")
		}
		if keep("m1", true, "m2", t0.Add(time.Minute)) {
			t.Errorf("a move from a mark no longer kept was kept: the kept mark went back past a move")
		}
		mark, at, found, err := db.Purged(ctx, cache)
		if err != nil || !found || mark != "m3" || !at.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("kept %q at %v (found %v, %v), want m3 at %v", mark, at, found, err, t0.Add(2*time.Minute))
		}
		if _, _, found, _ := db.Purged(ctx, "http://other.test/"); found {
			t.Errorf("another cache has the first one's mark")
		}
	})
}
