package store

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
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

// TestLatestChartsSeeksEachRegion: the statement finds each region's
// latest run by seeks bounded to that region (SQLite's plan says so), so
// that a page across regions costs a few index steps a region however
// many runs the store holds, not a read of every run at every build.
func TestLatestChartsSeeksEachRegion(t *testing.T) {
	t.Parallel()
	db := openURL(t, openers[0].url(t))
	rows, err := db.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+latestEntriesSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	detail := map[int]string{}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var d string
		if err := rows.Scan(&id, &parent, &unused, &d); err != nil {
			t.Fatal(err)
		}
		detail[id] = d
		plan = append(plan, d)
		if !strings.Contains(d, "runs") && !regexp.MustCompile(`^SEARCH (n|l|r) `).MatchString(d) {
			continue
		}
		// The first region is one row of the index, the rest a seek past
		// the one before; each region's run a seek to it; the run's row by
		// its key.
		bounded := regexp.MustCompile(`region[=>]\?|rowid=\?`).MatchString(d) || detail[parent] == "CO-ROUTINE first"
		if !bounded {
			t.Errorf("the plan reads runs unbounded by a region: %q", d)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.Logf("plan:\n%s", strings.Join(plan, "\n"))
	}
}
