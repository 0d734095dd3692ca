package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// ChartedSince names each video charted in the span once, with every
// region that showed it, in the order the store first stored them (a
// video seen again later keeps its place); RefreshDue counts the videos
// due and when the oldest was fetched. On both databases.
func TestChartedSinceAndRefreshDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		// One video a run where a page first stores it: PostgreSQL stores a
		// page's videos in the order of their ids, SQLite in the page's.
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("c", "C")))
		mid := t0.Add(30 * time.Minute)
		run(t, db, ingest.Trending, "US", mid, page(ingest.Trending, "US", 1, mid, vid("b", "B")))
		later := t0.Add(time.Hour)
		run(t, db, ingest.Trending, "GB", later, page(ingest.Trending, "GB", 1, later, vid("c", "C"), vid("a", "A")))
		got, err := db.ChartedSince(ctx, t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := []ingest.Charted{{ID: "c", Regions: []string{"GB", "US"}}, {ID: "b", Regions: []string{"US"}}, {ID: "a", Regions: []string{"GB"}}}
		if !slices.EqualFunc(got, want, func(x, y ingest.Charted) bool { return x.ID == y.ID && slices.Equal(x.Regions, y.Regions) }) {
			t.Errorf("ChartedSince = %v, want %v", got, want)
		}
		if got, _ := db.ChartedSince(ctx, later.Add(time.Minute)); len(got) != 0 {
			t.Errorf("ChartedSince after every chart = %v, want none", got)
		}
		n, oldest, err := db.RefreshDue(ctx, later.Add(time.Minute))
		if err != nil || n != 3 || !oldest.Equal(mid) {
			t.Errorf("RefreshDue = %d, %s, %v; want 3 videos, the oldest fetched at %s", n, oldest, err, mid)
		}
		if n, oldest, err := db.RefreshDue(ctx, t0.Add(-time.Hour)); err != nil || n != 0 || !oldest.IsZero() {
			t.Errorf("RefreshDue before any = %d, %s, %v; want none", n, oldest, err)
		}
	})
}
