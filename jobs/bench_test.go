package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// BenchmarkOnceCycle runs a full --once cycle of the default regions against
// the fake upstream answering every call after 20 ms, and reports the wall
// time beside the sum of that latency: what is left is our own overhead
// (limiter, ledger, decoding, storing).
func BenchmarkOnceCycle(b *testing.B) {
	const latency = 20 * time.Millisecond
	var wall, waited time.Duration
	for b.Loop() {
		b.StopTimer()
		r := newRig(b, "")
		r.fake.SetLatency(latency)
		run := &jobs.Runner{Clock: clock.System, Locker: r.limiter, Logger: quiet()}
		for _, code := range regions.Default {
			run.Passes = append(run.Passes, r.pass(code))
		}
		b.StartTimer()
		start := time.Now()
		for _, res := range run.Once(context.Background()) {
			if res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		wall += time.Since(start)
		waited += time.Duration(r.fake.Requests()) * latency
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/cycle")
	b.ReportMetric(float64(waited.Milliseconds())/float64(b.N), "latency-ms/cycle")
	b.ReportMetric(100*float64(wall-waited)/float64(waited), "overhead-%")
}
