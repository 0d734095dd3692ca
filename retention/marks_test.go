package retention

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// TestMarksMoveWithWhatGoes: the data mark moves when a video goes
// upstream, and it and the charts' mark move when a prune deletes a run,
// so that pages cached on them are read again.
func TestMarksMoveWithWhatGoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		marks := func() [2]string {
			t.Helper()
			data, _, err := db.DataMark(ctx)
			if err != nil {
				t.Fatal(err)
			}
			charts, err := db.ChartsMark(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return [2]string{data, charts}
		}
		finished(t, db, "US", t0.Add(-24*time.Hour), vid("a", "a video")) // the day before: statistics go in whole days
		finished(t, db, "US", t0.Add(time.Hour), vid("b", "b video"))
		was := marks()
		if _, err := Gone(ctx, db, []string{"b"}, t0.Add(4*time.Hour)); err != nil {
			t.Fatal(err)
		}
		now := marks()
		if now[0] == was[0] {
			t.Errorf("a video went: the data mark stayed %q", now[0])
		}
		was = now
		if _, err := Prune(ctx, db, Retention{Before: t0.Add(-12 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		now = marks()
		if now[0] == was[0] || now[1] == was[1] {
			t.Errorf("the first run pruned: marks %q, were %q", now, was)
		}
		if charts, _ := db.Charts(ctx); len(charts) != 1 {
			t.Errorf("after the prune: charts %v, want the second run's alone", charts)
		}
	})
}

// TestPruneKeepsRollupTrue prunes the middle of a day of runs every three
// hours and tracked counts, and checks that the rollup holds no day before
// the cut's and counts the entries kept, on the cut's day too.
func TestPruneKeepsRollupTrue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		start := t0.Add(-10*24*time.Hour + 37*time.Minute)
		for i := range 10 * 8 {
			at := start.Add(time.Duration(i) * 3 * time.Hour)
			finished(t, db, "US", at, vid("other", "Other"), vid("hot", "Hot"))
			finished(t, db, "GB", at, vid("hot", "Hot"))
		}
		if err := db.SaveStats(ctx, statsEvery(start, 10*24*time.Hour, 50*time.Minute)); err != nil {
			t.Fatal(err)
		}
		cut := start.Add(5*24*time.Hour + 7*time.Hour)
		if _, err := Prune(ctx, db, Retention{Before: cut, Batch: 50}); err != nil {
			t.Fatal(err)
		}
		day := msOf(cut) / dayMS * dayMS
		if n := count(t, db, `SELECT count(*) FROM video_days WHERE day_ms < ?`, day); n != 0 {
			t.Errorf("%d rollup rows before the cut's day, want 0", n)
		}
		want := count(t, db, `SELECT count(*) FROM trending_entries`)
		if n := count(t, db, `SELECT sum(entries) FROM video_days`); n != want {
			t.Errorf("video_days counts %d entries, %d are kept", n, want)
		}
		want = count(t, db, `SELECT count(*) FROM trending_entries WHERE fetched_ms >= ? AND fetched_ms < ?`, day, day+dayMS)
		if n := count(t, db, `SELECT coalesce(sum(entries), 0) FROM video_days WHERE day_ms = ?`, day); n != want {
			t.Errorf("the cut's day counts %d entries, %d are kept", n, want)
		}
	})
}

// statsEvery is the hot video's tracked counts every step over span from
// start.
func statsEvery(start time.Time, span, step time.Duration) []ingest.VideoStats {
	var stats []ingest.VideoStats
	for at := start; at.Before(start.Add(span)); at = at.Add(step) {
		stats = append(stats, ingest.VideoStats{ID: "hot", At: at, ViewCount: int64(4000 + at.Minute()*3), LikeCount: i64(3)})
	}
	return stats
}
