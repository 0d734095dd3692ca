package store

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestTheBackoffIsKeptUntilEnded: a database that kept no backoff reads
// none; one kept reads back whole, a longer one replaces it, and the zero
// Backoff ends it; on both databases.
func TestTheBackoffIsKeptUntilEnded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	eachStore(t, func(t *testing.T, db *DB) {
		read := func() ingest.Backoff {
			t.Helper()
			b, err := db.KeptBackoff(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if b := read(); b != (ingest.Backoff{}) {
			t.Fatalf("a database that kept none reads %+v", b)
		}
		first := ingest.Backoff{Until: t0.Add(5 * time.Minute), Wait: 5 * time.Minute, InARow: 3, Blamed: "an upstream", Cause: "HTTP 503"}
		longer := ingest.Backoff{Until: t0.Add(15 * time.Minute), Wait: 10 * time.Minute, InARow: 4, Blamed: "an upstream", Cause: "HTTP 500"}
		for _, want := range []ingest.Backoff{first, longer} {
			if err := db.KeepBackoff(ctx, want); err != nil {
				t.Fatal(err)
			}
			if b := read(); b != want {
				t.Errorf("kept %+v, read %+v", want, b)
			}
		}
		if err := db.KeepBackoff(ctx, ingest.Backoff{}); err != nil {
			t.Fatal(err)
		}
		if b := read(); b != (ingest.Backoff{}) {
			t.Errorf("an ended backoff reads %+v", b)
		}
	})
}
