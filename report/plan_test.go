package report

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// TestPlan holds the plan against the built-in prices: a videos.list per
// chart page each cycle, a videoCategories.list per region a day, and a
// videos.batchGetStats per batch of tracked videos at every reading.
func TestPlan(t *testing.T) {
	costs := costs.Default()
	last := map[string]store.RunSummary{"US": {Status: ingest.StatusCompleted, Pages: 2}}
	for _, tc := range []struct {
		name  string
		sched Schedule
		want  map[string]int64 // units a day by pool
		track int64            // of the stats pool's, tracking's
	}{
		{"charts", Schedule{Timetable: jobs.NamedTimetable(time.Hour, []string{"US", "US/10", "GB", "GB/10"})},
			map[string]int64{"default": (2+4+4+4)*24 + 2, "search": 0, "stats": 0}, 0},
		{"tiers and depths", Schedule{Timetable: jobs.Timetable{Every: time.Hour,
			Charts: []regions.Chart{{Code: "US", Tier: 3, Depth: 50}, {Code: "GB", Tier: 1, Depth: 200}}}},
			map[string]int64{"default": 1*8 + 4*24 + 2, "search": 0, "stats": 0}, 0},
		{"tracking the charts' videos", Schedule{Timetable: jobs.NamedTimetable(2*time.Hour, []string{"US"}), Tracked: -1, TrackBatch: 50, TrackEvery: time.Hour},
			map[string]int64{"default": 2*12 + 1, "search": 0, "stats": 2 * 24}, 2 * 24},
		{"tracking known videos", Schedule{Timetable: jobs.NamedTimetable(time.Hour, []string{"US"}), Tracked: 101, TrackBatch: 50, TrackEvery: 6 * time.Hour},
			map[string]int64{"default": 2*24 + 1, "search": 0, "stats": 3 * 4}, 3 * 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]int64{}
			for _, l := range Plan(costs, tc.sched, last) {
				got[l.Pool] = l.Units
				if l.Pool == "stats" && l.Tracking != tc.track {
					t.Errorf("stats tracking %d, want %d", l.Tracking, tc.track)
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("units a day %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPlanSaysWhatAPoolAllowsADay: the plan's capacity is a day's, so a
// pool whose window is shorter than a day and that keeps no calendar day
// allows its limit in every window, one that keeps a day allows it once,
// and one whose window is longer spreads it over the window.
func TestPlanSaysWhatAPoolAllowsADay(t *testing.T) {
	c, err := costs.Load("pools.yaml", []byte(`pools:
  default:  {limit: 300, reserve: 50, window: 6h, day: America/Los_Angeles}
  search:   {limit: 100, reserve: 0, window: 48h}
  stats:    {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  trending: {limit: 90, reserve: 10, window: 3h}
operations:
  videos.list:          {default: 1, trending: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range Plan(c, Schedule{Timetable: jobs.NamedTimetable(time.Hour, []string{"US"})}, nil) {
		got[l.Pool] = l.Capacity
	}
	want := map[string]int64{"default": 250, "search": 50, "stats": 10000, "trending": 640}
	if !maps.Equal(got, want) {
		t.Fatalf("capacity a day %v, want %v", got, want)
	}
}

func TestOverruns(t *testing.T) {
	plan := []PlanLine{{Pool: "default", Units: 9501, Capacity: 9500}, {Pool: "search", Units: 95, Capacity: 95}}
	want := []string{"default: 9501 units a day planned, 9500 allowed"}
	if got := Overruns(plan); !reflect.DeepEqual(got, want) {
		t.Errorf("Overruns = %q, want %q", got, want)
	}
}

func TestPlanSearchAndCover(t *testing.T) {
	per := map[string]int64{"default": 1, "search": 1}
	p := PlanSearch(per, 10, 7)
	if p.Pages != 3 || !maps.Equal(p.Need, map[string]int64{"default": 3, "search": 3}) {
		t.Fatalf("PlanSearch(max 7 units) = %d pages, need %v; want 3 pages, 3 of each", p.Pages, p.Need)
	}
	blocked := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	states := []ingest.PoolState{
		{Pool: "stats", Limit: 10000, Remaining: 0},
		{Pool: "search", Limit: 100, Reserve: 5, Remaining: 2},
		{Pool: "default", Limit: 10000, Reserve: 500, Remaining: 9500},
	}
	rows, covered, until := p.Cover(states)
	want := []PoolCover{{"default", 9500, 9500, 3}, {"search", 2, 95, 3}}
	if !reflect.DeepEqual(rows, want) || covered || !until.IsZero() {
		t.Errorf("Cover = %v, %v, %v; want %v, not covered, not blocked", rows, covered, until, want)
	}
	states[1].Remaining, states[2].BlockedUntil = 95, blocked
	if _, covered, until := p.Cover(states); covered || !until.Equal(blocked) {
		t.Errorf("Cover of a blocked pool: covered %v until %v; want not covered until %v", covered, until, blocked)
	}
	states[2].BlockedUntil = time.Time{}
	if _, covered, _ := p.Cover(states); !covered {
		t.Error("Cover with room in every pool: not covered")
	}
}

// LogPlan logs one line per pool, with whether it fits.
func TestLogPlan(t *testing.T) {
	var buf bytes.Buffer
	LogPlan(slog.New(slog.NewTextHandler(&buf, nil)), []PlanLine{{Pool: "default", Units: 10, Capacity: 5, RunsPerDay: 23.96}, {Pool: "search"}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "pool=default") || !strings.Contains(lines[0], "fits=false") ||
		!strings.Contains(lines[0], "cycles_per_day=24") || !strings.Contains(lines[1], "fits=true") {
		t.Errorf("lines:\n%s", buf.String())
	}
}

// PrintCover prints a row per pool the plan needs, then the verdict.
func TestPrintCover(t *testing.T) {
	p := PlanSearch(map[string]int64{"search": 100}, 2, 0)
	var buf bytes.Buffer
	p.PrintCover(&buf, []ingest.PoolState{{Pool: "search", Limit: 10000, Reserve: 500, Remaining: 9000}, {Pool: "default", Limit: 5}})
	if want := "  search: 9000 remaining of 9500 now, 200 needed\n  today's remaining quota covers it\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	blocked := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	p.PrintCover(&buf, []ingest.PoolState{{Pool: "search", Limit: 10000, Remaining: 9000, BlockedUntil: blocked}})
	if !strings.Contains(buf.String(), "does NOT cover") || !strings.HasSuffix(buf.String(), "blocked the pool until 2026-11-24T08:00:00Z\n") {
		t.Errorf("blocked:\n%s", buf.String())
	}
}

// A pool that holds none of the schedule's regions is named with what
// would fit: the category names alone, or a longer --max-stale.
func TestUnheld(t *testing.T) {
	pool := func(limit int) *ingest.Costs {
		c, err := costs.Load("costs.yaml", []byte(fmt.Sprintf(`pools:
  default: {limit: %d, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {default: 1}
  videos.batchGetStats: {default: 1}
`, limit)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	eight := jobs.Timetable{Charts: regions.Charts(regions.Default...), Every: time.Hour, MaxStale: time.Hour}
	for _, tc := range []struct {
		name  string
		limit int
		want  string
	}{
		{"names do not fit", 5, "default: 5 units a day cannot hold the 8 regions' category names (8 units a day), let alone their charts; the names of at most 5 regions fit"},
		{"charts do not fit at --max-stale", 10, "default: 10 units a day, less the regions' category names, hold no region's own chart at --max-stale 1h; 48h would hold US alone, or give fewer regions"},
		{"one fits", 110, ""},
	} {
		got := strings.Join(Unheld(pool(tc.limit), Schedule{Timetable: eight}), "; ")
		if got != tc.want {
			t.Errorf("%s: got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
