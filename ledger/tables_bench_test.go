package ledger

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// BenchmarkDecision is one admission of the embedded limiter on SQLite,
// ledger written and all, with the tables' statements prepared, beside
// the same tables handing SQLite their text on every call. The two take
// turns, one decision each, so that a busy machine weighs on both alike;
// it reports each one's time and their ratio, text/prepared.
func BenchmarkDecision(b *testing.B) {
	ctx := context.Background()
	prepared := benchLimiter(b, (*Ledger).Tables)
	text := benchLimiter(b, func(l *Ledger) Tables { return Tables{db: l.w, turns: l.turns} })
	var inPrepared, inText time.Duration
	take := func(lim *quota.SQLite, in *time.Duration) {
		start := time.Now()
		if d, err := lim.Take(ctx, "videos.list"); err != nil || !d.Allowed {
			b.Fatalf("take: %+v, %v", d, err)
		}
		*in += time.Since(start)
	}
	n := 0
	for b.Loop() {
		take(prepared, &inPrepared)
		take(text, &inText)
		n++
	}
	b.ReportMetric(float64(inPrepared.Nanoseconds())/float64(n), "ns/prepared")
	b.ReportMetric(float64(inText.Nanoseconds())/float64(n), "ns/text")
	b.ReportMetric(float64(inText)/float64(inPrepared), "text/prepared")
}

// benchLimiter is the SQLite limiter on a database of its own, on the
// tables tables takes from its ledger.
func benchLimiter(b *testing.B, tables func(*Ledger) Tables) *quota.SQLite {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "ingest.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	l := New(db)
	id, err := l.LedgerID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := costs.Parse("bench costs", []byte("pools:\n  default: {limit: 1000000000, window: 24h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		b.Fatal(err)
	}
	t := tables(l)
	lim, err := quota.NewSQLite(quota.Tables{Turns: t, Clocks: t, Log: t, Pools: t, Leases: t}, "bench", cs,
		quota.Ledger{ID: id, Where: "bench", Record: l, Recall: l, Grant: l, Notes: l, Unknowns: l},
		quota.NoUpstreamClock, quota.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return lim
}
