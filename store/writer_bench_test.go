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
	charts := newHourlyCharts()
	charts.seed(b, memory, file)
	var took, cpu [2]time.Duration
	at := t0
	hour := func(db *DB, i int) {
		start, cpu0 := time.Now(), processCPU(b)
		charts.land(b, db, at)
		took[i] += time.Since(start)
		cpu[i] += processCPU(b) - cpu0
	}
	for b.Loop() {
		at = at.Add(time.Hour)
		charts.redraw()
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

// hourlyCharts are eight regions' hourly charts, four pages each. The
// videos of a region's pages are drawn each hour from many, so that a
// page's rows lie apart in the tables, as a store's do after days of
// charts, and a statement changes more pages than it finds room for in
// its journal's memory when that is not all it has.
type hourlyCharts struct {
	c       *corpus
	pool    []ingest.Video
	regions map[string][]ingest.Page
}

func newHourlyCharts() *hourlyCharts {
	h := &hourlyCharts{c: newCorpus(6), regions: map[string][]ingest.Page{}}
	for i := range 80 {
		h.pool = append(h.pool, h.c.page(ingest.Trending, i+1).Videos...)
	}
	for r := range 8 {
		region := fmt.Sprintf("R%d", r)
		for i := range 4 {
			h.regions[region] = append(h.regions[region], page(ingest.Trending, region, i+1, t0))
		}
	}
	h.redraw()
	return h
}

// redraw draws the next hour's pages, each video's views moved.
func (h *hourlyCharts) redraw() {
	for _, pages := range h.regions {
		picked := h.c.r.Perm(len(h.pool))[:len(pages)*PageSize]
		for i := range pages {
			pages[i].Videos = pages[i].Videos[:0]
			for _, k := range picked[i*PageSize : (i+1)*PageSize] {
				v := h.pool[k]
				*v.ViewCount += 100
				pages[i].Videos = append(pages[i].Videos, v)
			}
		}
	}
}

// seed stores every video of the pool in each of dbs, before t0.
func (h *hourlyCharts) seed(b *testing.B, dbs ...*DB) {
	for _, db := range dbs {
		for n := 0; n < len(h.pool); n += 4 * PageSize {
			at := t0.Add(-time.Duration(n+1) * time.Minute)
			var ps []ingest.Page
			for i := range 4 {
				lo, hi := n+i*PageSize, min(n+(i+1)*PageSize, len(h.pool))
				if lo < hi {
					ps = append(ps, page(ingest.Trending, "US", i+1, at, h.pool[lo:hi]...))
				}
			}
			run(b, db, ingest.Trending, "US", at, ps...)
		}
	}
}

// land stores the hour's runs of every region in db at at.
func (h *hourlyCharts) land(b *testing.B, db *DB, at time.Time) {
	for region, pages := range h.regions {
		landRun(b, db, region, pages, at)
	}
}
