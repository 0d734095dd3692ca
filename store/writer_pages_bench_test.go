package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkHourlyRunWriterCache stores the hourly runs of eight regions'
// charts on a writer as Open leaves it (SQLite's own page cache, no
// memory map, a checkpoint at WALCheckpointAt), and, in the same loop, on
// one with a larger page cache, on one that maps the file and on one that
// checkpoints only at WALLimit: "cpu-cache/default", "cpu-mmap/default"
// and "cpu-ckpt/default" are how many times the process's CPU each took.
// A page's rows lie apart in the tables, so each commit reads pages the
// cache may not hold, and a checkpoint copies each page the WAL holds.
func BenchmarkHourlyRunWriterCache(b *testing.B) {
	ctx := context.Background()
	dbs := []*DB{openTest(b), openTest(b), openTest(b), openTest(b)}
	for i, pragma := range []string{"", `PRAGMA cache_size = -16384`, `PRAGMA mmap_size = 268435456`, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, WALLimit/defaultPageSize)} {
		if pragma == "" {
			continue
		}
		if _, err := dbs[i].Writer().ExecContext(ctx, pragma); err != nil {
			b.Fatal(err)
		}
	}
	charts := newHourlyCharts()
	charts.seed(b, dbs...)
	var cpu [4]time.Duration
	at := t0
	for b.Loop() {
		at = at.Add(time.Hour)
		charts.redraw()
		for i, db := range dbs {
			cpu0 := processCPU(b)
			charts.land(b, db, at)
			cpu[i] += processCPU(b) - cpu0
		}
	}
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-cache/default")
	b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "cpu-mmap/default")
	b.ReportMetric(float64(cpu[3])/float64(cpu[0]), "cpu-ckpt/default")
}

// BenchmarkPageWALFrames counts the pages a chart page's transaction
// writes to the WAL at its commit, each a frame SQLite writes with two
// calls to the kernel and later copies into the file: on the store as the
// migrations build it, and on stores without one of the structures that a
// page's rows, lying apart, each write a page of ("frames/page" and
// "frames-without-X/page", tracking's counts of the run included). It
// says what each costs a commit; none of them may go, as readers need
// each (docs/testing/cost-store.md).
func BenchmarkPageWALFrames(b *testing.B) {
	ctx := context.Background()
	variants := []struct{ name, drop string }{
		{"", ""},
		{"-without-last-seen", `DROP INDEX videos_last_seen`},
		{"-without-entries-day", `DROP INDEX trending_entries_day`},
		{"-without-entries-rollup", `DROP TRIGGER video_days_entry; DROP TRIGGER video_days_entry_again`},
		{"-without-counts-rollup", `DROP TRIGGER video_days_stat; DROP TRIGGER video_days_stat_again`},
	}
	dbs := make([]*DB, len(variants))
	for i := range variants {
		dbs[i] = openTest(b)
	}
	charts := newHourlyCharts()
	charts.seed(b, dbs...)
	for i, v := range variants {
		if v.drop == "" {
			continue
		}
		if _, err := dbs[i].Writer().ExecContext(ctx, v.drop); err != nil {
			b.Fatal(err)
		}
	}
	frames := make([]int64, len(variants))
	pages := 0
	at := t0
	for b.Loop() {
		at = at.Add(time.Hour)
		charts.redraw()
		for region, ps := range charts.regions {
			for i, db := range dbs {
				frames[i] += walFramesOf(b, db, func() { landRun(b, db, region, ps, at) })
			}
			pages += len(ps)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(frames[i])/float64(pages), "frames"+v.name+"/page")
	}
}

// walFramesOf is how many frames write adds to db's WAL, emptied before it.
func walFramesOf(b *testing.B, db *DB, write func()) int64 {
	ctx := context.Background()
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	write()
	var busy, frames, copied int64
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		b.Fatal(err)
	}
	return frames
}
