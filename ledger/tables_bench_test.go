//go:build linux

package ledger

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/quota"
)

// BenchmarkDecision is one admission of the embedded limiter on SQLite,
// ledger written and all, with the tables' statements prepared, beside
// the same tables handing SQLite their text on every call. The two take
// turns, one decision each, so that a busy machine weighs on both alike;
// it reports each one's time and the CPU time its thread spent (which
// other programs on the machine do not lengthen), and their ratios,
// text/prepared.
func BenchmarkDecision(b *testing.B) {
	ctx := context.Background()
	prepared := benchLimiter(b, (*Ledger).Tables)
	text := benchLimiter(b, func(l *Ledger) Tables { return Tables{db: l.w, turns: l.turns} })
	// SQLite's driver runs in the calling goroutine: on one thread, that
	// thread's CPU time is the decision's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var inPrepared, inText, cpuPrepared, cpuText time.Duration
	take := func(lim *quota.SQLite, in, cpu *time.Duration) {
		start, cpu0 := time.Now(), threadCPU(b)
		if d, err := lim.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
			b.Fatalf("take: %+v, %v", d, err)
		}
		*cpu += threadCPU(b) - cpu0
		*in += time.Since(start)
	}
	n := 0
	for b.Loop() {
		take(prepared, &inPrepared, &cpuPrepared)
		take(text, &inText, &cpuText)
		n++
	}
	b.ReportMetric(float64(inPrepared.Nanoseconds())/float64(n), "ns/prepared")
	b.ReportMetric(float64(inText.Nanoseconds())/float64(n), "ns/text")
	b.ReportMetric(float64(inText)/float64(inPrepared), "text/prepared")
	b.ReportMetric(float64(cpuPrepared.Nanoseconds())/float64(n), "cpu-ns/prepared")
	b.ReportMetric(float64(cpuText.Nanoseconds())/float64(n), "cpu-ns/text")
	b.ReportMetric(float64(cpuText)/float64(cpuPrepared), "cpu-text/prepared")
}

// threadCPU is the CPU time the calling thread has spent.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// benchLimiter is the SQLite limiter on a database of its own, on the
// tables tables takes from its ledger.
func benchLimiter(b *testing.B, tables func(*Ledger) Tables) *quota.SQLite {
	ctx := context.Background()
	db := storetest.Open(b)
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
	lim, err := quota.NewSQLite(quota.Tables{Turns: t, Clocks: t, Log: t, Pools: t, Leases: t, Ledger: t}, "bench", cs,
		quota.Ledger{ID: id, Where: "bench", Record: l, Recall: l, Grant: l, Notes: l, Unknowns: l},
		quota.NoUpstreamClock, clock.System, quota.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return lim
}
