package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestVideoReadsSeekEveryDay stores a video's entries and counts on both
// sides of day boundaries, on the first and the last day the store keeps,
// and reads it back by video: every reader that seeks it day by day finds
// every row of the days it asks for, and none of the days it does not.
func TestVideoReadsSeekEveryDay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		day := func(n int, hm time.Duration) time.Time { return d0.Add(time.Duration(n)*24*time.Hour + hm) }
		// The first kept day's last minutes, the next day's first, and the
		// last kept day; another video charts between, alone on its days.
		charted := []time.Time{day(0, 23*time.Hour+50*time.Minute), day(1, 10*time.Minute),
			day(1, 23*time.Hour+55*time.Minute), day(2, 5*time.Minute), day(5, 12*time.Hour)}
		for i, at := range charted {
			a := vid("a", "A")
			a.ViewCount = i64(int64(100 + i))
			id := run(t, db, ingest.Trending, "US", at, page(ingest.Trending, "US", 1, at, a))
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
				t.Fatal(err)
			}
		}
		for _, at := range []time.Time{day(3, time.Hour), day(4, time.Hour)} {
			id := run(t, db, ingest.Trending, "GB", at, page(ingest.Trending, "GB", 1, at, vid("b", "B")))
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
				t.Fatal(err)
			}
		}
		tracked := []time.Time{day(0, 23*time.Hour+59*time.Minute), day(1, time.Minute), day(5, 12*time.Hour+30*time.Minute)}
		var stats []ingest.VideoStats
		for i, at := range tracked {
			stats = append(stats, ingest.VideoStats{ID: "a", At: at, ViewCount: int64(200 + i), LikeCount: i64(1)})
		}
		if err := db.SaveStats(ctx, stats); err != nil {
			t.Fatal(err)
		}

		for _, limit := range []int{1, 2, 4, 5, 9} {
			points, more, err := db.RecentEntries(ctx, "a", limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Time
			for _, p := range points {
				got = append(got, p.At)
			}
			want := charted[max(0, len(charted)-limit):]
			if !slices.Equal(got, want) || more != (limit < len(charted)) {
				t.Errorf("last %d entries: %v (more %v), want %v (more %v)", limit, got, more, want, limit < len(charted))
			}
		}

		for _, c := range []struct {
			since   time.Time
			entries int
			views   []time.Time
		}{
			// A point an hour, the highest reading of each: the counts'.
			{time.Time{}, 5, []time.Time{tracked[0], tracked[1], charted[2], charted[3], tracked[2]}},
			{day(0, 23*time.Hour+45*time.Minute), 5, nil},
			{day(0, 23*time.Hour+55*time.Minute), 4, nil},
			{day(1, 0), 4, nil},
			{day(1, 5*time.Minute), 4, nil},
			{day(2, 0), 2, nil},
			{day(5, 0), 1, nil},
		} {
			h, ok, err := db.VideoHistory(ctx, "a", c.since)
			if err != nil || !ok {
				t.Fatalf("history since %v: %v, %v", c.since, ok, err)
			}
			n := 0
			for _, p := range h.Charts {
				n += p.Entries
			}
			if n != c.entries || len(h.Charts) != 1 {
				t.Errorf("history since %v: charts %+v, want one of %d entries", c.since, h.Charts, c.entries)
			}
			if c.views == nil {
				continue
			}
			var got []time.Time
			for _, p := range h.Views {
				got = append(got, p.At)
			}
			if !slices.Equal(got, c.views) {
				t.Errorf("history since %v: views at %v, want %v", c.since, got, c.views)
			}
		}

		due, err := db.ToRefresh(ctx, day(9, 0), 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Sort(due); !slices.Equal(due, []string{"a", "b"}) {
			t.Errorf("to refresh: %v, want a and b (their rows are kept)", due)
		}
		for _, c := range []struct {
			since time.Time
			want  []string
		}{{day(5, 0), []string{"a"}}, {day(5, 12*time.Hour), []string{"a"}}, {day(5, 13*time.Hour), nil}, {day(4, 2*time.Hour), []string{"a"}}} {
			seen, err := db.SeenOnCharts(ctx, c.since)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seen, c.want) {
				t.Errorf("seen on charts since %v: %v, want %v", c.since, seen, c.want)
			}
		}
	})
}
