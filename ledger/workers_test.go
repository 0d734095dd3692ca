package ledger

import (
	"context"
	"log/slog"
	"maps"
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
		copied.Release()
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

// NotedUnder reads the notes under a prefix, by the rest of their names,
// a path with LIKE's wildcards and spaces included, and no other note.
func TestNotedUnderReadsItsPrefixAlone(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		for name, v := range map[string]string{
			"copy_worked /srv/a copy/ingest.db": "id-a",
			"copy_worked /srv/b_%/ingest.db":    "id-b",
			"copy_worke":                        "short",
			"copy_source":                       "other",
			"xcopy_worked /srv/c.db":            "before",
			"copy-worked /srv/d.db":             "a wildcard's",
		} {
			if err := db.Note(ctx, name, v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.NotedUnder(ctx, "copy_worked ")
		want := map[string]string{"/srv/a copy/ingest.db": "id-a", "/srv/b_%/ingest.db": "id-b"}
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("NotedUnder: got %v (%v), want %v", got, err, want)
		}
	})
}
