package store

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestSteadyDatesEachEntryByItsLastChange: each video of a chart's run is
// dated by the run from which it held its rank without a break: a video
// at the same rank since the first run keeps that run's start, one that
// moved the run it moved in, one that left and came back the run it came
// back in; a category's runs and another region's are not the chart's.
func TestSteadyDatesEachEntryByItsLastChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		run := func(region, category string, at time.Time, ids ...string) int64 {
			t.Helper()
			id, err := db.StartRun(ctx, region, category, ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			var vs []ingest.Video
			for _, v := range ids {
				vs = append(vs, vid(v, "title "+v))
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, region, 1, at, vs...)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
		run("US", "", h(0), "stay", "swapA", "swapB", "back")
		run("US", "10", h(1), "swapB", "stay")        // a category's chart
		run("GB", "", h(1), "back", "stay")           // another region
		run("US", "", h(2), "stay", "swapA", "swapB") // back leaves
		run("US", "", h(3), "stay", "swapB", "swapA", "back")
		last := run("US", "", h(4), "stay", "swapB", "swapA", "back", "new")
		got, err := db.Steady(ctx, "US", "", last)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{"stay": h(0), "swapA": h(3), "swapB": h(3), "back": h(3), "new": h(4)}
		if len(got.Since) != len(want) {
			t.Errorf("steady holds %d videos, want %d: %v", len(got.Since), len(want), got.Since)
		}
		for id, at := range want {
			if !got.Since[id].Equal(at) {
				t.Errorf("%s: since %s, want %s", id, got.Since[id].Format("15:04"), at.Format("15:04"))
			}
		}
		some, err := db.Steady(ctx, "US", "", last, "swapA", "gone")
		if err != nil {
			t.Fatal(err)
		}
		if len(some.Since) != 1 || !some.Since["swapA"].Equal(h(3)) {
			t.Errorf("steady of swapA and a video not in the run: %v, want swapA since %s alone", some.Since, h(3).Format("15:04"))
		}
	})
}

// TestSteadyWalksBackPastABatchOfRuns: a video that held its rank for
// more earlier runs than one step of the walk reads is dated by the first
// of them, one that moved in an earlier step by the run after its move,
// whether the run is dated whole or for a few of its videos.
func TestSteadyWalksBackPastABatchOfRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
		runs := 2*steadyBatch + 5
		moved := steadyBatch + 3 // the run from which "late" holds its rank
		var last int64
		for n := range runs {
			ids := []string{"held", "late", "other"}
			if n < moved {
				ids = []string{"held", "other", "late"}
			}
			id, err := db.StartRun(ctx, "FR", "", ingest.Trending, h(n))
			if err != nil {
				t.Fatal(err)
			}
			var vs []ingest.Video
			for _, v := range ids {
				vs = append(vs, vid(v, "title "+v))
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, "FR", 1, h(n), vs...)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: h(n).Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			last = id
		}
		for _, ids := range [][]string{nil, {"held", "late"}} {
			got, err := db.Steady(ctx, "FR", "", last, ids...)
			if err != nil {
				t.Fatal(err)
			}
			for id, at := range map[string]time.Time{"held": h(0), "late": h(moved)} {
				if !got.Held[id].Equal(at) {
					t.Errorf("of %v: %s held since %s, want %s", ids, id, got.Held[id].Format("Jan 2 15:04"), at.Format("Jan 2 15:04"))
				}
			}
		}
	})
}

// TestSteadyAndLeftFollowWhatAFeedShows: a video renamed upstream, or
// whose channel was, is dated by the page that brought the new name
// (Since) while it keeps the date of its place (Held), and a page that
// brings the same name again moves neither; a video that left one
// region's chart and stays in another's is dated by the run of the first
// that no longer held it (Left), a video never in a chart not at all.
func TestSteadyAndLeftFollowWhatAFeedShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		run := func(region string, at time.Time, vs ...ingest.Video) int64 {
			t.Helper()
			id, err := db.StartRun(ctx, region, "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, region, 1, at.Add(time.Second), vs...)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
		a, b, c := vid("a", "title a"), vid("b", "title b"), vid("c", "title c")
		run("US", h(0), a, b, c)
		run("GB", h(0), a, c)
		b.Title = "b renamed"
		run("US", h(1), a, b, c)
		c.ChannelTitle = "c's channel renamed"
		run("US", h(2), a, b, c)
		gb := run("GB", h(3), c) // a leaves GB
		us := run("US", h(4), a, b, c)
		st, err := db.Steady(ctx, "US", "", us)
		if err != nil {
			t.Fatal(err)
		}
		since := map[string]time.Time{"a": h(0), "b": h(1).Add(time.Second), "c": h(2).Add(time.Second)}
		for id, at := range since {
			if !st.Held[id].Equal(h(0)) || !st.Since[id].Equal(at) {
				t.Errorf("%s: held since %s, shown since %s; want %s and %s", id, st.Held[id].Format("15:04:05"),
					st.Since[id].Format("15:04:05"), h(0).Format("15:04:05"), at.Format("15:04:05"))
			}
		}
		left, err := db.Left(ctx, map[string]int64{"US": us, "GB": gb}, "a", "b", "c", "never")
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 1 || !left["a"].Equal(h(3)) {
			t.Errorf("left: %v, want a alone, at %s", left, h(3).Format("15:04"))
		}
	})
}
