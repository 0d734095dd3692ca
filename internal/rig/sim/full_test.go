package sim

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/wiring"
)

// TestFillFailsARunsEndFirst: the full disk's spell meets a run's end
// before anything else, as a disk filled by the pass's own pages, so that
// a pass whose last page was stored meets it at its end; once the room is
// back the end goes through.
func TestFillFailsARunsEndFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, err := wiring.Open(ctx, filepath.Join(t.TempDir(), "ingest.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		filled := make(chan error, 1)
		go func() {
			_, err := fill(db.DB, endsFirst+time.Hour)
			filled <- err
		}()
		time.Sleep(time.Minute)
		id, err := db.StartRun(ctx, "US", "", ingest.Trending, time.Now())
		if err != nil {
			t.Fatalf("a pass's start while the disk fills: %v", err)
		}
		end := ingest.RunEnd{Status: ingest.StatusCompleted, At: time.Now()}
		if err := db.Full(db.FinishRun(ctx, id, end)); !errors.Is(err, ingest.ErrDiskFull) {
			t.Errorf("a run's end on the full disk: got %v, want the disk full", err)
		}
		if err := <-filled; err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, id, end); err != nil {
			t.Errorf("a run's end once the room is back: %v", err)
		}
	})
}
