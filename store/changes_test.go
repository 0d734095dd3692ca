package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestChangesSinceNamesWhatMoved: what changed since a mark's time is the
// charts a run landed in and the videos those runs listed, tracked,
// refreshed or gone; nothing from it or before it.
func TestChangesSinceNamesWhatMoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		land := func(region string, at time.Time, vs ...ingest.Video) {
			t.Helper()
			id, err := db.StartRun(ctx, region, "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, region, 1, at, vs...)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		changes := func(step string, since time.Time, want Changes) {
			t.Helper()
			got, err := db.ChangesSince(ctx, since)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %+v, %v; want %+v", step, got, err, want)
			}
		}
		land("US", t0, vid("a", "a video"), vid("b", "b video"))
		land("GB", t0.Add(time.Hour), vid("b", "b video"), vid("c", "c video"))
		gb := []ChartName{{Region: "GB"}}
		changes("GB landed, since US's end", t0.Add(time.Minute), Changes{Charts: gb, New: gb, Videos: []string{"b", "c"}})
		changes("GB landed", t0.Add(30*time.Minute), Changes{Charts: gb, New: gb, Videos: []string{"b", "c"}})
		if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: "a", ViewCount: 5, At: t0.Add(2 * time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		changes("a tracked", t0.Add(90*time.Minute), Changes{Videos: []string{"a"}})
		if err := db.Refreshed(ctx, []ingest.Video{vid("c", "c, retitled")}, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		changes("c refreshed", t0.Add(150*time.Minute), Changes{Videos: []string{"c"}})
		changes("nothing since", t0.Add(4*time.Hour), Changes{})
		land("GB", t0.Add(5*time.Hour), vid("c", "c, retitled"))
		changes("GB landed again", t0.Add(4*time.Hour), Changes{Charts: gb, Videos: []string{"c"}})
	})
}

// TestPrunedReadsTheOldestEnds: a mark whose oldest run or count moved on
// was pruned; one that only gained was not.
func TestPrunedReadsTheOldestEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		before, after string
		want          bool
	}{
		{"5 1 0 0 90 10 80 20 0", "6 1 1 0 95 10 80 20 0", false},
		{"5 1 0 0 90 10 80 20 0", "5 2 0 0 90 10 80 20 0", true},
		{"5 1 0 0 90 10 80 20 0", "5 1 0 0 90 10 80 30 0", true},
		{"5 1 0 0 90 10 80 20 0", "5 1 0 0 95 12 85 20 1", false},
		{"5 1 0 0 90 10 0 0 0", "5 1 0 0 90 10 80 80 0", false},
		{"5 1 0 0 90 10 80 20 0", "5 1 0 0 90 10 80 15 0", false},
		{"5 1 0 0 90 10 80 20 0", "0 0 0 0 0 0 0 0 0", true},
	} {
		if got := Pruned(tc.before, tc.after); got != tc.want {
			t.Errorf("Pruned(%q, %q) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
}
