package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestChartAtPicksTheRunCurrentThen checks which run a chart at a time
// is: the newest finished run of that chart (region and category) that
// started at or before the time, whatever other charts ran in between.
func TestChartAtPicksTheRunCurrentThen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		chartRun := func(region, category string, at time.Time, finish bool) int64 {
			t.Helper()
			id, err := db.StartRun(ctx, region, category, ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			p := page(ingest.Trending, region, 1, at, vid("v"+region+category, "a video"))
			if err := db.SavePage(ctx, id, p); err != nil {
				t.Fatal(err)
			}
			if finish {
				if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			return id
		}
		us0 := chartRun("US", "", t0, true)
		chartRun("GB", "", t0.Add(30*time.Minute), true)
		us1 := chartRun("US", "", t0.Add(time.Hour), true)
		chartRun("GB", "", t0.Add(90*time.Minute), true)
		us2 := chartRun("US", "", t0.Add(2*time.Hour), true)
		music := chartRun("US", "10", t0.Add(150*time.Minute), true)
		chartRun("US", "", t0.Add(3*time.Hour), false) // still running: not a chart yet

		for _, tc := range []struct {
			name     string
			category string
			at       time.Time
			want     int64 // 0: no chart then
			prev     int64
		}{
			{"latest", "", time.Time{}, us2, us1},
			{"exactly at a run's start", "", t0.Add(time.Hour), us1, us0},
			{"between two runs", "", t0.Add(119 * time.Minute), us1, us0},
			{"the first run", "", t0.Add(59 * time.Minute), us0, 0},
			{"before any run", "", t0.Add(-time.Minute), 0, 0},
			{"after the last finished run", "", t0.Add(5 * time.Hour), us2, us1},
			{"a category's latest", "10", time.Time{}, music, 0},
			{"a category before its first run", "10", t0.Add(2 * time.Hour), 0, 0},
		} {
			c, err := db.Chart(ctx, ChartQuery{Region: "US", Category: tc.category, At: tc.at, Limit: 50})
			switch {
			case tc.want == 0 && !errors.Is(err, ErrNoChart):
				t.Errorf("%s: run %d, err %v; want no chart", tc.name, c.RunID, err)
			case tc.want != 0 && err != nil:
				t.Errorf("%s: %v", tc.name, err)
			case tc.want != 0 && (c.RunID != tc.want || c.PrevRun != tc.prev):
				t.Errorf("%s: run %d (previous %d), want %d (previous %d)", tc.name, c.RunID, c.PrevRun, tc.want, tc.prev)
			}
		}
	})
}

// TestChartViewsBefore: each entry carries its views in the chart's
// previous run and in its run a day before, when it was in them.
func TestChartViewsBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		run := func(at time.Time, views ...int64) {
			t.Helper()
			id, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			var vs []ingest.Video
			for i, n := range views {
				v := vid(fmt.Sprintf("v%d", i), "a video")
				v.ViewCount = &n
				vs = append(vs, v)
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, at, vs...)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		run(t0, 100)
		run(t0.Add(23*time.Hour), 150, 20)
		run(t0.Add(25*time.Hour), 300, 40, 7)
		c, err := db.Chart(ctx, ChartQuery{Region: "US", Category: "", At: time.Time{}, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range c.Entries {
			got = append(got, fmt.Sprintf("%s:%d/%d", e.ID, e.PrevViews, e.DayViews))
		}
		if want := "v0:150/100 v1:20/0 v2:0/0"; strings.Join(got, " ") != want {
			t.Errorf("views before: %s, want %s", strings.Join(got, " "), want)
		}
		// ChartTop: the latest run's top, each with its rank and views in
		// the run before, and no more of the history.
		top, err := db.Chart(ctx, ChartQuery{Region: "US", Category: "", Limit: 2, Depth: ChartMoves})
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, e := range top.Entries {
			got = append(got, fmt.Sprintf("%s:%d:%d/%d", e.ID, e.Rank, e.PrevRank, e.PrevViews))
		}
		if want := "v0:1:1/150 v1:2:2/20"; top.RunID != c.RunID || top.PrevRun != c.PrevRun || !top.PrevAt.Equal(c.PrevAt) || strings.Join(got, " ") != want {
			t.Errorf("top: run %d (previous %d at %v) %s; want run %d (previous %d at %v) %s", top.RunID, top.PrevRun, top.PrevAt,
				strings.Join(got, " "), c.RunID, c.PrevRun, c.PrevAt, want)
		}
		// ChartPlain: the same run, the runs before and a day before read,
		// not the whole history.
		plain, err := db.Chart(ctx, ChartQuery{Region: "US", Category: "", Language: "", At: time.Time{}, Limit: 50, Depth: ChartPlain})
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, e := range plain.Entries {
			got = append(got, fmt.Sprintf("%s:%d:%d/%d/%d/%d", e.ID, e.Rank, e.PrevRank, e.PrevViews, e.Peak, len(e.ViewTrend)))
		}
		if want := "v0:1:1/150/0/0 v1:2:2/20/0/0 v2:3:0/0/0/0"; plain.RunID != c.RunID || plain.PrevRun != c.PrevRun || !plain.PrevAt.Equal(c.PrevAt) ||
			plain.DayRun != c.DayRun || plain.Entries[0].DayViews != 100 || strings.Join(got, " ") != want {
			t.Errorf("plain: run %d (previous %d at %v, day %d) %s; want run %d (previous %d at %v, day %d) %s", plain.RunID, plain.PrevRun, plain.PrevAt,
				plain.DayRun, strings.Join(got, " "), c.RunID, c.PrevRun, c.PrevAt, c.DayRun, want)
		}
		if _, err := db.Chart(ctx, ChartQuery{Region: "GB", Category: "", Limit: 10, Depth: ChartMoves}); !errors.Is(err, ErrNoChart) {
			t.Errorf("the top of a chart with no run: %v, want ErrNoChart", err)
		}
	})
}

// TestChartsMarkMovesWithTheCharts: the mark moves when a run starts, when
// a running run stores a page or ends; not when nothing changed.
func TestChartsMarkMovesWithTheCharts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		marks := map[string]string{}
		mark := func(step string) {
			t.Helper()
			m, err := db.ChartsMark(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for was, at := range marks {
				if at == m {
					t.Errorf("%s: the mark %q is %s's", step, m, was)
				}
			}
			marks[step] = m
		}
		mark("empty")
		id, err := db.StartRun(ctx, "US", "", ingest.Trending, t0)
		if err != nil {
			t.Fatal(err)
		}
		mark("a run started")
		if again, _ := db.ChartsMark(ctx); again != marks["a run started"] {
			t.Errorf("nothing changed, the mark moved: %q, %q", marks["a run started"], again)
		}
		if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, t0, vid("a", "a video"))); err != nil {
			t.Fatal(err)
		}
		mark("its first page")
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		mark("it ended")
		id2, err := db.StartRun(ctx, "US", "10", ingest.Trending, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SavePage(ctx, id2, page(ingest.Trending, "US", 1, t0.Add(time.Hour), vid("b", "b video"))); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, id2, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Hour + time.Minute)}); err != nil {
			t.Fatal(err)
		}
		mark("a second chart")
	})
}

// passesOfUS records one pass of US's chart an hour from at, ending as
// each status says.
func passesOfUS(t *testing.T, db *DB, at time.Time, statuses ...ingest.RunStatus) {
	t.Helper()
	ctx := context.Background()
	for i, status := range statuses {
		id, err := db.StartRun(ctx, "US", "", ingest.Trending, at.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: status}); err != nil {
			t.Fatal(err)
		}
	}
}

// A pass a signal interrupted is no start: the chart's last start is the
// pass before it, so a restart catches the interrupted one up.
func TestLastStartLeavesInterruptedOut(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
		passesOfUS(t, db, at, ingest.StatusCompleted, ingest.StatusInterrupted)
		if got, err := db.LastStart(ctx, "US"); err != nil || !got.Equal(at) {
			t.Errorf("last start %v (%v), want the completed pass's %v", got, err, at)
		}
	})
}

// A failed pass fetched the chart no fresher: the chart's last completed
// start, which its cadence runs from, is the pass before it, while its
// last start (a slot another daemon tried) is the failed one.
func TestLastCompletedStartLeavesFailedOut(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
		passesOfUS(t, db, at, ingest.StatusCompleted, ingest.StatusFailed)
		if got, err := db.LastCompletedStart(ctx, "US"); err != nil || !got.Equal(at) {
			t.Errorf("last completed start %v (%v), want the completed pass's %v", got, err, at)
		}
		if got, err := db.LastStart(ctx, "US"); err != nil || !got.Equal(at.Add(time.Hour)) {
			t.Errorf("last start %v (%v), want the failed pass's %v", got, err, at.Add(time.Hour))
		}
	})
}

// TestChartEntriesReadIntoRoomMadeOnce: a chart's entries are read into
// room made once for as many as its run stored (or its limit, when
// lower), not grown row by row, and a chart of none reads as none.
func TestChartEntriesReadIntoRoomMadeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "A"), vid("b", "B"), vid("c", "C")))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			language         string
			limit, len, room int
		}{{"", 50, 3, 3}, {"", 2, 2, 2}, {"fr", 50, 0, 0}} {
			ch, err := db.Chart(ctx, ChartQuery{Region: "US", Language: c.language, Limit: c.limit, Depth: ChartMoves})
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Entries) != c.len || cap(ch.Entries) != c.room {
				t.Errorf("chart in %q, limit %d: %d entries in room for %d, want %d in room for %d",
					c.language, c.limit, len(ch.Entries), cap(ch.Entries), c.len, c.room)
			}
			if c.len == 0 && ch.Entries != nil {
				t.Errorf("chart in %q: entries %#v, want none", c.language, ch.Entries)
			}
		}
	})
}
