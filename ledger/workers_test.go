package ledger

import (
	"context"
	"log/slog"
	"testing"
)

// A copy's worker's lease on its source and the source's own workers'
// leases are told apart: each read names only its own kind, with the
// host, the process and (for a copy's) the copy's path, spaces and all;
// a released lease is in neither.
func TestCopyWorkersAreApartFromWorkers(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		log := slog.New(slog.DiscardHandler)
		own, err := db.HoldWorker(ctx, "src-host", 41, log)
		if err != nil {
			t.Fatal(err)
		}
		copied, err := db.HoldCopyWorker(ctx, "copy-host", 42, "/var/lib/a copy/ingest.db", log)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := db.Workers(ctx)
		if err != nil || len(ws) != 1 || ws[0].Host != "src-host" || ws[0].PID != 41 {
			t.Errorf("Workers: got %v (%v), want the source's worker alone", ws, err)
		}
		cs, err := db.CopyWorkers(ctx)
		if err != nil || len(cs) != 1 || cs[0].Host != "copy-host" || cs[0].PID != 42 || cs[0].Copy != "/var/lib/a copy/ingest.db" {
			t.Errorf("CopyWorkers: got %+v (%v), want the copy's worker alone", cs, err)
		}
		copied()
		own()
		ws, err = db.Workers(ctx)
		if err != nil || len(ws) != 0 {
			t.Errorf("Workers after release: got %v (%v), want none", ws, err)
		}
		if cs, err = db.CopyWorkers(ctx); err != nil || len(cs) != 0 {
			t.Errorf("CopyWorkers after release: got %v (%v), want none", cs, err)
		}
	})
}
