package report

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	icosts "github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/store"
)

// Schedule is what a plan is made of: the charts a daemon runs and how
// often, and the videos tracking follows.
type Schedule struct {
	// Charts are a region or region/category each, in schedule order.
	Charts []string
	Every  time.Duration
	// TrackEvery is how often tracking reads the counts of Tracked videos,
	// TrackBatch of them a call; zero leaves tracking out. Tracked below
	// zero is unknown (no database yet): the charts' own videos.
	TrackEvery time.Duration
	TrackBatch int
	Tracked    int
}

// PlanLine is what the schedule spends in a day in one pool.
type PlanLine struct {
	Pool       string
	Regions    int
	Pages      int // pages a cycle, all charts together
	RunsPerDay float64
	Units      int64 // per day, tracking's included
	Tracked    int   // videos tracking follows
	Tracking   int64 // of Units, what tracking spends
	Capacity   int64
}

// Fits says whether the pool allows what the schedule spends in it.
func (p PlanLine) Fits() bool { return p.Units <= p.Capacity }

// defaultPages is what a plan counts for a chart with no completed run:
// a chart of 200 videos.
const defaultPages = 4

// Plan estimates a day of a schedule against each pool's capacity, from
// what each fetch costs (ingest.Operations says which operations a fetch
// calls, costs what they take): every chart page each cycle, each region's
// categories once a day, and tracking's batches at every reading. A chart's
// pages are those of its last completed run, defaultPages when it has none.
func Plan(costs *ingest.Costs, s Schedule, last map[string]store.RunSummary) []PlanLine {
	pages, regions := chartPages(s.Charts, last)
	runs := float64(24*time.Hour) / float64(s.Every)
	tracked := s.Tracked
	if tracked < 0 {
		tracked = pages * store.PageSize // at least the charts' own videos
	}
	var readings float64
	if s.TrackEvery > 0 && s.TrackBatch > 0 {
		readings = float64((tracked+s.TrackBatch-1)/s.TrackBatch) * float64(24*time.Hour) / float64(s.TrackEvery)
	}
	page, cats, stats := perFetch(costs, ingest.FetchChartPage), perFetch(costs, ingest.FetchCategories), perFetch(costs, ingest.FetchStats)
	var plan []PlanLine
	for _, p := range costs.Pools {
		l := PlanLine{Pool: p.Name, Regions: regions, Pages: pages, RunsPerDay: runs, Capacity: p.Capacity(),
			Tracked: max(tracked, 0), Tracking: round(readings * float64(stats[p.Name]))}
		if readings == 0 {
			l.Tracked = 0
		}
		l.Units = round(float64(int64(pages)*page[p.Name])*runs) + int64(regions)*cats[p.Name] + l.Tracking
		plan = append(plan, l)
	}
	return plan
}

// chartPages counts the pages a cycle of charts fetches, and its regions.
func chartPages(charts []string, last map[string]store.RunSummary) (pages, regions int) {
	seen := map[string]bool{}
	for _, code := range charts {
		region, _, _ := strings.Cut(code, "/")
		seen[region] = true
		n := defaultPages
		if run, ok := last[code]; ok && run.Pages > 0 && run.Status == ingest.StatusCompleted {
			n = run.Pages
		}
		pages += n
	}
	return pages, len(seen)
}

// perFetch is what one f costs by pool; an operation costs does not price
// counts nothing (a costs file the worker loads prices every one).
func perFetch(costs *ingest.Costs, f ingest.Fetch) map[string]int64 {
	cost, _ := icosts.PerFetch(costs, f)
	return cost
}

func round(x float64) int64 { return int64(x + 0.5) }

// Overruns says, pool by pool, where the plan does not fit: "default:
// 12000 units a day planned, 9500 allowed"; nil when it all fits.
func Overruns(plan []PlanLine) []string {
	var over []string
	for _, p := range plan {
		if !p.Fits() {
			over = append(over, fmt.Sprintf("%s: %d units a day planned, %d allowed", p.Pool, p.Units, p.Capacity))
		}
	}
	return over
}

// LogPlan logs the plan at info, one line per pool, as run prints it at
// start.
func LogPlan(log *slog.Logger, plan []PlanLine) {
	for _, pl := range plan {
		log.Info("plan", ingest.LogPool, pl.Pool, "regions", pl.Regions, "pages_per_cycle", pl.Pages,
			"cycles_per_day", math.Round(pl.RunsPerDay*10)/10, "tracked_videos", pl.Tracked,
			"tracking_units_per_day", pl.Tracking, "units_per_day", pl.Units, "capacity", pl.Capacity, "fits", pl.Fits())
	}
}
