package store

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// BenchmarkChartEntriesRoom reads a chart of four pages' entries into
// room made once for as many as its run stored and, in the same loop,
// into room grown row by row as before: "alloc-grown/once" is how many
// more bytes the grown room allocated, "grown/once" how many times longer
// it took.
func BenchmarkChartEntriesRoom(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	c := newCorpus(4)
	id, err := db.StartRun(ctx, "US", "", ingest.Trending, t0)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 4 {
		if err := db.SavePage(ctx, id, c.page(ingest.Trending, i+1)); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Minute)}); err != nil {
		b.Fatal(err)
	}
	run := Chart{Region: "US", RunID: id}
	if err := db.chartRun(ctx, &run); err != nil || run.stored == 0 {
		b.Fatalf("chart's run: %d stored, %v", run.stored, err)
	}
	var took [2]time.Duration
	var alloc [2]uint64
	measure := func(i, stored int) {
		var m0, m1 runtime.MemStats
		ch := run
		ch.stored = stored
		runtime.ReadMemStats(&m0)
		start := time.Now()
		if err := db.chartEntries(ctx, &ch, maxChartLimitBench); err != nil {
			b.Fatal(err)
		}
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		measure(0, run.stored)
		measure(1, 0) // no room known: grown row by row, as before
	}
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-grown/once")
	b.ReportMetric(float64(took[1])/float64(took[0]), "grown/once")
}

// maxChartLimitBench is the most entries the site asks a chart for.
const maxChartLimitBench = 200
