package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/retention"
)

// TestRefreshPerPassIsBounded: an archive whose every video fell due at
// once (four charts stored 21 days ago) is fetched again a share a pass,
// one call of 50 ids each hourly pass, not in one lump; and every video is
// fetched again before the terms' 30 days, none left behind.
func TestRefreshPerPassIsBounded(t *testing.T) {
	t.Parallel()
	r := newSimRig(t)
	ctx := context.Background()
	for _, region := range []string{"US", "GB", "DE", "FR"} {
		r.chart(t, region)
	}
	archive := count(t, r.db, `SELECT count(*) FROM videos`)
	if archive <= 2*jobs.RefreshBatch {
		t.Fatalf("an archive of %d videos: the test shows nothing", archive)
	}
	r.clock.Add(ingest.RefreshAfter + time.Hour)
	refresh := r.refresh()
	refresh.Every = time.Hour
	var refreshed int64
	passes := 0
	for ; refreshed < archive && passes < 9*24; passes++ {
		res := refresh.Run(ctx)
		if res.Status != ingest.StatusCompleted {
			t.Fatalf("pass %d: %s %v", passes, res.Status, res.Err)
		}
		if res.Calls > 1 {
			t.Fatalf("pass %d fetched %d videos in %d calls, want at most one call: the archive due at once is spread",
				passes, res.Refreshed+int(res.Gone), res.Calls)
		}
		refreshed += int64(res.Refreshed) + res.Gone
		held, err := retention.ReadHeld(ctx, r.db)
		if err != nil {
			t.Fatal(err)
		}
		if age := r.clock.Now().Sub(held.Video); age > ingest.DataFor {
			t.Fatalf("pass %d: the oldest video text is %s old, past the terms' 30 days", passes, age)
		}
		r.clock.Add(time.Hour)
	}
	if refreshed != archive {
		t.Fatalf("after %d hourly passes %d of %d videos fetched again", passes, refreshed, archive)
	}
	due, _, err := r.db.RefreshDue(ctx, r.clock.Now().Add(-ingest.RefreshAfter))
	if err != nil || due != 0 {
		t.Errorf("%d videos still due after the spread (%v)", due, err)
	}
	t.Logf("%d videos fetched again over %d hourly passes, one call each", archive, passes)
}
