package store

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A daemon's pass keeps the slot it served beside its start: its chart's
// last start is the slot, however late the pass started, and a pass no
// slot started (a catch-up) is its start.
func TestLastStartIsTheSlotServed(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		slot := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
		finish := func(id int64, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted}); err != nil {
				t.Fatal(err)
			}
		}
		finish(db.StartSlotRun(ctx, "US", "", slot.Add(4*time.Minute), slot))
		if got, err := db.LastStart(ctx, "US"); err != nil || !got.Equal(slot) {
			t.Errorf("last start of a pass 4 minutes late for its slot: %v (%v), want the slot %v", got, err, slot)
		}
		caught := slot.Add(90 * time.Minute)
		finish(db.StartRun(ctx, "US", "", ingest.Trending, caught))
		if got, err := db.LastStart(ctx, "US"); err != nil || !got.Equal(caught) {
			t.Errorf("last start of a catch-up: %v (%v), want its start %v", got, err, caught)
		}
	})
}

// A chart's last start is its last run's, but for a pass a signal cut
// short, which the daemon catches up as if it had not run.
func TestLastStartsLeaveOutThePassesCutShort(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	got := LastStarts(map[string]RunSummary{
		"US":    {Status: ingest.StatusCompleted, Started: at},
		"GB":    {Status: ingest.StatusInterrupted, Started: at},
		"US/10": {Status: ingest.StatusFailed, Started: at.Add(time.Minute)},
	})
	want := map[string]time.Time{"US": at, "US/10": at.Add(time.Minute)}
	if len(got) != len(want) || !got["US"].Equal(want["US"]) || !got["US/10"].Equal(want["US/10"]) {
		t.Errorf("LastStarts = %v, want %v", got, want)
	}
}
