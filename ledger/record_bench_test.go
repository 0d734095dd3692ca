//go:build linux

package ledger

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// BenchmarkRecordCall is one admitted call written to the ledger, as the
// limiter writes each, with its statement prepared beside the same
// ledger handing SQLite its text on every call. The two take turns, one
// call each, and it reports each one's time, the CPU time its thread
// spent, and their ratios, text/prepared.
func BenchmarkRecordCall(b *testing.B) {
	ctx := context.Background()
	prepared := New(storetest.Open(b))
	text := New(storetest.Open(b))
	text.prep.once.Do(func() {}) // nothing prepared: every statement as text
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var inPrepared, inText, cpuPrepared, cpuText time.Duration
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	record := func(l *Ledger, n int, in, cpu *time.Duration) {
		call := ingest.Call{QuotaKey: "bench", ID: fmt.Sprint(n), Op: "videos.list", Region: "US", At: at.Add(time.Duration(n) * time.Millisecond),
			Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}
		start, cpu0 := time.Now(), threadCPU(b)
		if err := l.RecordCall(ctx, call); err != nil {
			b.Fatal(err)
		}
		*cpu += threadCPU(b) - cpu0
		*in += time.Since(start)
	}
	n := 0
	for b.Loop() {
		record(prepared, n, &inPrepared, &cpuPrepared)
		record(text, n, &inText, &cpuText)
		n++
	}
	b.ReportMetric(float64(inPrepared.Nanoseconds())/float64(n), "ns/prepared")
	b.ReportMetric(float64(inText.Nanoseconds())/float64(n), "ns/text")
	b.ReportMetric(float64(inText)/float64(inPrepared), "text/prepared")
	b.ReportMetric(float64(cpuPrepared.Nanoseconds())/float64(n), "cpu-ns/prepared")
	b.ReportMetric(float64(cpuText.Nanoseconds())/float64(n), "cpu-ns/text")
	b.ReportMetric(float64(cpuText)/float64(cpuPrepared), "cpu-text/prepared")
}
