package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// TestPruneOfADayWritesAboutWhatItFrees keeps six days of an hourly chart
// and of many videos tracked every two hours (a few readings of each a
// day, as at every region), then prunes the oldest day, as a daemon's
// prune does once a day, and weighs what SQLite wrote (the WAL's frames,
// counted at each checkpoint) against the pages the prune took out of use.
// Where a table or an index kept the rows by video, the day's rows sat a
// few on every page: the prune wrote every page for few freed.
func TestPruneOfADayWritesAboutWhatItFrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t) // SQLite's own counters: its WAL and its pages
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const days, pool, shown = 6, 600, 50
	videos := make([]ingest.Video, pool)
	for i := range videos {
		videos[i] = vid(fmt.Sprintf("v%03d", i), fmt.Sprint("title ", i))
	}
	var stats []ingest.VideoStats
	for h := range days * 24 {
		at := start.Add(time.Duration(h) * time.Hour)
		first := h * shown % pool
		finished(t, db, "US", at.Add(time.Minute), videos[first:first+shown]...)
		if h%2 == 0 {
			for i, v := range videos {
				stats = append(stats, ingest.VideoStats{ID: v.ID, At: at.Add(time.Duration(i%50) * time.Minute),
					ViewCount: int64(1000*h + i), LikeCount: i64(int64(h))})
			}
		}
	}
	if err := db.SaveStats(ctx, stats); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(`PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	inUse := func() int64 {
		s, err := db.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Bytes - s.FreeBytes
	}
	before := inUse()
	pr := newPruner(db)
	var written int64
	pr.beforeCheckpoint = func() { written += walSize(t, db) }
	got, err := pr.prune(ctx, Retention{Before: start.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	written += walSize(t, db)
	freed := before - inUse()
	if got.Runs != 24 || got.Stats != 12*pool || got.Videos != 0 {
		t.Fatalf("pruned %+v: want the first day's 24 runs and %d counts, no video", got, 12*pool)
	}
	if freed <= 0 || written > 2*freed {
		t.Errorf("a day pruned wrote %d bytes of pages for %d bytes taken out of use: want at most twice", written, freed)
	}
	t.Logf("a day pruned: %d bytes written, %d freed (%.2fx)", written, freed, float64(written)/float64(max(freed, 1)))
	integrityCheck(t, db)
}

// TestPruneCutsStatsInWholeDays prunes with a cut in the middle of a day:
// the statistics of that whole day go with those before it (a cut rounded
// toward keeping less: nothing is kept longer than the cut says), those of
// the next day stay from its first millisecond, and the rollup says what
// is kept. A cut on a day's 00:00 is that day's.
func TestPruneCutsStatsInWholeDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
		for _, at := range []time.Time{day.Add(-time.Hour), day.Add(9 * time.Hour), day.Add(11 * time.Hour),
			day.Add(24*time.Hour + 30*time.Minute)} {
			finished(t, db, "US", at, vid("hot", "Hot"))
		}
		// A run begun before the next day's 00:00 whose entry is of that day.
		late := storetest.Run(t, db, ingest.Trending, "GB", day.Add(24*time.Hour-time.Minute),
			page(ingest.Trending, "GB", 1, day.Add(24*time.Hour+time.Minute), vid("hot", "Hot")))
		if err := db.FinishRun(ctx, late, ingest.RunEnd{Status: ingest.StatusCompleted, At: day.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var stats []ingest.VideoStats
		for _, at := range []time.Time{day.Add(-time.Minute), day.Add(10*time.Hour - time.Minute),
			day.Add(10*time.Hour + time.Minute), day.Add(24*time.Hour - time.Millisecond), day.Add(24 * time.Hour)} {
			stats = append(stats, ingest.VideoStats{ID: "hot", At: at, ViewCount: 7, LikeCount: i64(1)})
		}
		if err := db.SaveStats(ctx, stats); err != nil {
			t.Fatal(err)
		}
		cut := Retention{Before: day.Add(10 * time.Hour)}
		b, err := Count(ctx, db, cut)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Prune(ctx, db, cut)
		if err != nil {
			t.Fatal(err)
		}
		next := day.Add(24 * time.Hour).UnixMilli()
		if got.Runs != 4 || got.Stats != 4 || b.Runs != got.Runs || b.Stats != got.Stats {
			t.Errorf("a cut at 10:00 pruned %+v (counted %+v): want the day's and the day before's 4 runs and 4 counts", got, b)
		}
		if n := count(t, db, `SELECT count(*) FROM video_stats WHERE at_ms < ?`, next); n != 0 {
			t.Errorf("%d counts of the cut's day kept: want the whole day gone", n)
		}
		if n := count(t, db, `SELECT count(*) FROM video_stats WHERE at_ms = ?`, next); n != 1 {
			t.Errorf("%d counts of the next day's 00:00 kept, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM runs WHERE started_ms < ?`, next); n != 0 {
			t.Errorf("%d runs begun before the next day kept, want 0", n)
		}
		if n := count(t, db, `SELECT count(*) FROM video_days WHERE day_ms < ?`, next); n != 0 {
			t.Errorf("%d rollup rows before the next day kept, want 0", n)
		}
		want := count(t, db, `SELECT count(*) FROM trending_entries`)
		if n := count(t, db, `SELECT coalesce(sum(entries), 0) FROM video_days`); n != want || want != 1 {
			t.Errorf("the rollup counts %d entries, %d are kept: want the next day's one run's", n, want)
		}
		// The next day's 00:00 is a cut of its own: it keeps that day.
		if got, err = Prune(ctx, db, Retention{Before: day.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if got.Runs != 0 || got.Stats != 0 || count(t, db, `SELECT count(*) FROM video_stats`) != 1 {
			t.Errorf("a cut at 00:00 pruned %+v: want nothing of its own day", got)
		}
	})
}
