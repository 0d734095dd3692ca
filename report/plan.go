package report

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ingestworks/ingest"
	icosts "github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// Schedule is what a plan is made of: the charts a run follows and how
// often (its timetable), and the videos tracking follows.
type Schedule struct {
	Timetable jobs.Timetable
	// TrackEvery is how often tracking reads the counts of Tracked videos,
	// TrackBatch of them a call; zero leaves tracking out. Tracked below
	// zero is unknown (no database yet): the charts' own videos.
	TrackEvery time.Duration
	TrackBatch int
	Tracked    int
	// Last is each chart's last finished run, by name: a chart costs the
	// pages of its last completed run, its depth's when it has none, in
	// the plan of each pool and its tiers alike.
	Last map[string]store.RunSummary
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
	Categories int64 // of Units, the category names each region's first pass of a day reads
	// Capacity is what the pool allows a day: its limit less reserve,
	// once a day where it keeps a calendar day or a window of a day or
	// more (spread over a longer window), and in every window of a pool
	// without a day whose window is shorter.
	Capacity int64
}

// Fits says whether the pool allows what the schedule spends in it.
func (p PlanLine) Fits() bool { return p.Units <= p.Capacity }

// Plan estimates a day of a schedule against each pool's capacity, from
// what each fetch costs (ingest.Operations says which operations a fetch
// calls, costs what they take): every chart page each cycle, each region's
// categories once a day, and tracking's batches at every reading. A chart's
// pages are those of its last completed run, its depth's when it has none, and a
// tier-N region's charts run every N x Every.
func Plan(costs *ingest.Costs, s Schedule, last map[string]store.RunSummary) []PlanLine {
	if last == nil {
		last = s.Last
	}
	pages, perDay, regions := chartPages(s, last)
	runs := float64(24*time.Hour) / float64(s.Timetable.Every)
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
		l := PlanLine{Pool: p.Name, Regions: regions, Pages: pages, RunsPerDay: runs, Capacity: int64(heldADay(p) + 1e-6),
			Tracked: max(tracked, 0), Tracking: round(readings * float64(stats[p.Name]))}
		if readings == 0 {
			l.Tracked = 0
		}
		l.Categories = int64(regions) * cats[p.Name]
		l.Units = round(perDay*float64(page[p.Name])) + l.Categories + l.Tracking
		plan = append(plan, l)
	}
	return plan
}

// chartPages counts the pages a cycle of charts fetches, the pages they
// fetch a day (each chart at its tier's cadence) and its regions.
func chartPages(s Schedule, last map[string]store.RunSummary) (pages int, perDay float64, regions int) {
	seen := map[string]bool{}
	for _, name := range s.Timetable.Names() {
		c := s.Timetable.Region(name)
		seen[c.Code] = true
		n := measuredPages(c.Pages(), last[name])
		pages += n
		perDay += float64(n) * float64(24*time.Hour) / float64(c.Period(s.Timetable.Every))
	}
	return pages, perDay, len(seen)
}

// measuredPages is what a chart of depth pages reads a pass, as its last
// run measured it.
func measuredPages(depth int, run store.RunSummary) int {
	if run.Pages > 0 && run.Status == ingest.StatusCompleted {
		return min(run.Pages, depth)
	}
	return depth
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
			"tracking_units_per_day", pl.Tracking, "category_units_per_day", pl.Categories, "units_per_day", pl.Units, "capacity", pl.Capacity, "fits", pl.Fits())
	}
}
