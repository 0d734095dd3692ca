package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A chart's last pass, as the pacer reads it at start, is the slot a
// daemon's pass served, however late it started.
func TestLastPassesCountTheSlot(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		slot := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
		id, err := db.StartSlotRun(ctx, "US", "10", slot.Add(3*time.Minute), slot)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted}); err != nil {
			t.Fatal(err)
		}
		last, err := db.LastPasses(ctx, "k", slot.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := last["US/10"]; !got.Equal(slot) {
			t.Errorf("US/10's last pass %v, want the slot it served %v", got, slot)
		}
	})
}
