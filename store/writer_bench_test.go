package store

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// BenchmarkHourlyRunTempStore stores the hourly runs of eight regions'
// charts (four pages each, their videos' counts moved, and tracking's
// counts of them) on a writer whose temporary files are in memory, as
// Open leaves it, and, in the same loop, on one whose temporary files are
// SQLite's default, files on disk, as before: "file/memory" is how many
// times longer the files took, "cpu-file/memory" how much more of the
// process's CPU (user and system, which a file's making and writing is
// mostly).
func BenchmarkHourlyRunTempStore(b *testing.B) {
	ctx := context.Background()
	memory, file := openTest(b), openTest(b)
	if _, err := file.Writer().ExecContext(ctx, `PRAGMA temp_store = DEFAULT`); err != nil {
		b.Fatal(err)
	}
	// The videos of a region's pages are drawn each hour from many, so
	// that a page's rows lie apart in the tables, as a store's do after
	// days of charts, and a statement changes more pages than it finds
	// room for in its journal's memory when that is not all it has.
	c := newCorpus(6)
	var pool []ingest.Video
	for i := range 80 {
		pool = append(pool, c.page(ingest.Trending, i+1).Videos...)
	}
	regions := make(map[string][]ingest.Page)
	for r := range 8 {
		region := fmt.Sprintf("R%d", r)
		for i := range 4 {
			regions[region] = append(regions[region], page(ingest.Trending, region, i+1, t0))
		}
	}
	redraw := func() {
		for _, pages := range regions {
			picked := c.r.Perm(len(pool))[:len(pages)*PageSize]
			for i := range pages {
				pages[i].Videos = pages[i].Videos[:0]
				for _, k := range picked[i*PageSize : (i+1)*PageSize] {
					v := pool[k]
					*v.ViewCount += 100
					pages[i].Videos = append(pages[i].Videos, v)
				}
			}
		}
	}
	redraw()
	for _, db := range []*DB{memory, file} {
		for n := 0; n < len(pool); n += 4 * PageSize {
			at := t0.Add(-time.Duration(n+1) * time.Minute)
			var ps []ingest.Page
			for i := range 4 {
				lo, hi := n+i*PageSize, min(n+(i+1)*PageSize, len(pool))
				if lo < hi {
					ps = append(ps, page(ingest.Trending, "US", i+1, at, pool[lo:hi]...))
				}
			}
			run(b, db, ingest.Trending, "US", at, ps...)
		}
	}
	var took, cpu [2]time.Duration
	at := t0
	hour := func(db *DB, i int) {
		start, cpu0 := time.Now(), processCPU(b)
		for region, pages := range regions {
			landRun(b, db, region, pages, at)
		}
		took[i] += time.Since(start)
		cpu[i] += processCPU(b) - cpu0
	}
	for b.Loop() {
		at = at.Add(time.Hour)
		redraw()
		hour(memory, 0)
		hour(file, 1)
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "file/memory")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-file/memory")
	b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "ms/hour")
}

// processCPU is the CPU time, user and system, the process has spent.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
