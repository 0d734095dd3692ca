package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestLatestChartsAreWhatChartShows: LatestCharts holds, for every region,
// the entries of the run Chart shows at no time asked, in rank order; a
// category's chart and a run still running are not in it.
func TestLatestChartsAreWhatChartShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		run := func(region, category string, at time.Time, finish bool, ids ...string) {
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
			if finish {
				if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		run("US", "", t0, true, "old")
		run("GB", "", t0.Add(time.Minute), true, "gb1", "both")
		run("US", "", t0.Add(time.Hour), true, "us1", "both", "us3")
		run("US", "10", t0.Add(2*time.Hour), true, "music")
		run("GB", "", t0.Add(3*time.Hour), false, "running")
		got, err := db.LatestCharts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range got {
			seen = append(seen, fmt.Sprintf("%s#%d %s %s", e.Region, e.Rank, e.ID, e.At.Format("15:04")))
		}
		var want []string
		for _, region := range []string{"GB", "US"} {
			c, err := db.Chart(ctx, ChartQuery{Region: region, Limit: 200, Depth: ChartBare})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range c.Entries {
				want = append(want, fmt.Sprintf("%s#%d %s %s", region, e.Rank, e.ID, c.At.Format("15:04")))
			}
		}
		if !slices.Equal(seen, want) || len(want) != 5 {
			t.Errorf("latest charts:\n%v\nwant what Chart shows:\n%v", seen, want)
		}
	})
}
