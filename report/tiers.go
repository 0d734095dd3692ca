package report

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// TierLine is what one tier of the schedule's regions gets from the plan
// made from the measured costs Plan counts, at each pool's sustainable rate (its capacity over the longer of
// its window and a day, the regions' daily category names kept out).
type TierLine struct {
	Tier    int
	Regions int
	// Every and Slowest are the fastest and slowest cadence of the tier's
	// regions' own charts that run; pace.Never when none runs. Cadence is
	// the tier's own: tier x --every.
	Every, Slowest, Cadence time.Duration
	// Depth and Deepest are the least and most of a chart its regions read.
	Depth, Deepest int
	// Units is what the tier's charts (their categories' too) spend a day
	// by the plan, all pools together.
	Units float64
	// Dropped are the tier's regions whose own chart the plan drops;
	// DroppedCharts counts its category charts dropped.
	Dropped       []string
	DroppedCharts int
}

// Tiers plans the schedule at the pools' sustainable rates, as the pacer
// would with no spend yet, and sums it by tier, lowest first.
func Tiers(costs *ingest.Costs, s Schedule) []TierLine {
	entries := s.entries(costs)
	plan := pace.Make(s.budgets(costs), entries, s.Timetable.MaxStale)
	byTier := map[int]*TierLine{}
	for _, e := range entries {
		if e.Tier == 0 { // tracking
			continue
		}
		l := byTier[e.Tier]
		if l == nil {
			l = &TierLine{Tier: e.Tier, Every: pace.Never, Depth: regions.MaxDepth, Cadence: time.Duration(e.Tier) * s.Timetable.Every}
			byTier[e.Tier] = l
		}
		l.add(e, plan, s.Timetable.Region(e.Name))
	}
	var out []TierLine
	for _, l := range byTier {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b TierLine) int { return a.Tier - b.Tier })
	return out
}

// Stretch is how many times its cadence the plan runs the tier's
// slowest chart: 1 when it holds the tier at its cadence, 0 when it runs
// none of it.
func (l TierLine) Stretch() float64 {
	if l.Slowest == 0 || l.Every == pace.Never || l.Cadence <= 0 {
		return 0
	}
	return math.Round(float64(l.Slowest)/float64(l.Cadence)*100) / 100
}

// Unheld says what the plan cannot hold of the tier at its cadence, "" when
// it holds every chart of it so: "the pool cannot hold tier 1 at its
// cadence (1h): its charts run every 1h20m, 1.34 times it".
func (l TierLine) Unheld() string {
	switch s := l.Stretch(); {
	case l.Regions == 0 || (s > 0 && s <= 1):
		return ""
	case s == 0:
		return fmt.Sprintf("the pool cannot hold tier %d at all: the plan drops its %d regions", l.Tier, l.Regions)
	default:
		return fmt.Sprintf("the pool cannot hold tier %d at its cadence (%s) beside the tiers below it at --max-stale: its charts run every %s, %.2f times it",
			l.Tier, ShortDuration(l.Cadence), cadence(l.Every, l.Slowest), s)
	}
}

// add counts one chart of the tier.
func (l *TierLine) add(e pace.Entry, plan pace.Plan, c regions.Chart) {
	every, own := plan.Every[e.Name], e.Priority == int(jobs.KindChart)
	switch {
	case own && plan.Dropped[e.Name]:
		l.Dropped = append(l.Dropped, c.Code)
	case plan.Dropped[e.Name]:
		l.DroppedCharts++
	}
	if own {
		l.Regions++
		l.Depth, l.Deepest = min(l.Depth, c.Depth), max(l.Deepest, c.Depth)
		if every != pace.Never {
			l.Every, l.Slowest = min(l.Every, every), max(l.Slowest, every)
		}
	}
	if every != pace.Never {
		for _, u := range e.Cost {
			l.Units += u * float64(24*time.Hour) / float64(every)
		}
	}
}

// entries are the schedule's charts and tracking as the pacer plans them,
// each chart at the pages its last run measured, as Plan counts it.
func (s Schedule) entries(costs *ingest.Costs) []pace.Entry {
	charts, _ := s.Timetable.Entries()
	for i, e := range charts {
		if e.Pages > 0 {
			charts[i].Pages = measuredPages(e.Pages, s.Last[e.Name])
		}
	}
	out := jobs.PaceEntries(charts, costs)
	if s.TrackEvery > 0 && s.TrackBatch > 0 {
		tracked := s.Tracked
		if tracked < 0 { // at least the charts' own videos
			pages, _, _ := chartPages(s, nil)
			tracked = pages * regions.PageSize
		}
		cost := map[string]float64{}
		for pool, u := range jobs.KindTracking.Guess(costs) {
			cost[pool] = u * math.Ceil(float64(tracked)/float64(s.TrackBatch))
		}
		out = append(out, pace.Entry{Name: "track", Priority: int(jobs.KindTracking), Floor: s.TrackEvery, Cost: cost})
	}
	return out
}

// budgets are each pool's sustainable rate, less the regions' daily
// category names.
func (s Schedule) budgets(costs *ingest.Costs) []pace.Budget {
	daily := jobs.DailyCost(costs, s.Timetable.Names())
	var out []pace.Budget
	for _, p := range costs.Pools {
		units := heldADay(p) - daily[p.Name]
		out = append(out, pace.Budget{Pool: p.Name, Units: max(units, 0), Horizon: 24 * time.Hour})
	}
	return out
}

// heldADay is what pool p keeps a day (pace.Holds): a pool without a
// calendar day whose window is shorter than a day keeps its capacity in
// every window, not once a day.
func heldADay(p ingest.Pool) float64 { return pace.Holds(p, 0) * (24 * time.Hour).Seconds() }

// LogTiers logs what each tier gets, one line a tier, as run prints it at
// start beside the plan.
func LogTiers(log *slog.Logger, tiers []TierLine) {
	for _, t := range tiers {
		dropped := "none"
		if len(t.Dropped) > 0 || t.DroppedCharts > 0 {
			dropped = fmt.Sprintf("%d regions (%s), %d category charts", len(t.Dropped), strings.Join(t.Dropped, ","), t.DroppedCharts)
		}
		log.Info("plan tier", "tier", t.Tier, "regions", t.Regions, "every", cadence(t.Every, t.Slowest),
			"cadence", ShortDuration(t.Cadence), "depth", span(t.Depth, t.Deepest), "units_per_day", math.Round(t.Units), "dropped", dropped)
	}
	for _, t := range tiers {
		if msg := t.Unheld(); msg != "" && t.Stretch() > 1 {
			log.Warn(msg, "tier", t.Tier, "times_its_cadence", t.Stretch())
		}
	}
}

// cadence is a tier's cadences as a log shows them: "3h", "1h-2h", "never".
func cadence(fast, slow time.Duration) string {
	switch {
	case fast == pace.Never:
		return "never"
	case fast == slow:
		return ShortDuration(fast)
	}
	return ShortDuration(fast) + "-" + ShortDuration(slow)
}

// span is a tier's depths: "200", "50-200".
func span(least, most int) string {
	if least == most {
		return fmt.Sprint(least)
	}
	return fmt.Sprintf("%d-%d", least, most)
}

// Unheld says, pool by pool, where the schedule cannot be held at all: a
// pool smaller than a day of the regions' category names (a plan there
// would spend nothing and drop nothing), or pools that keep no region's own
// chart even at --max-stale. Each line names the pool and what would fit
// in it: fewer regions, or a longer --max-stale. nil when the plan keeps a
// region and every pool holds the names.
func Unheld(costs *ingest.Costs, s Schedule) []string {
	if len(s.Timetable.Charts) == 0 {
		return nil
	}
	kept := 0
	for _, t := range Tiers(costs, s) {
		kept += t.Regions - len(t.Dropped)
	}
	page, names := perFetch(costs, ingest.FetchChartPage), perFetch(costs, ingest.FetchCategories)
	bound := s.Timetable.MaxStale
	if bound <= 0 {
		bound = pace.DefaultBound
	}
	first := s.Timetable.Charts[0]
	for _, c := range s.Timetable.Charts[1:] {
		if c.Tier < first.Tier {
			first = c
		}
	}
	n := float64(len(s.Timetable.Charts))
	var out []string
	for _, p := range costs.Pools {
		day := heldADay(p)
		nameDay, pass := float64(names[p.Name]), float64(page[p.Name]*int64(first.Pages()))
		switch {
		case nameDay > 0 && nameDay*n >= day:
			out = append(out, fmt.Sprintf("%s: %.0f units a day cannot hold the %d regions' category names (%.0f units a day), let alone their charts; the names of at most %d regions fit",
				p.Name, day, len(s.Timetable.Charts), nameDay*n, int(day/nameDay)))
		case kept == 0 && pass > 0:
			need := time.Duration(pass / (day - nameDay*n) * float64(24*time.Hour)).Round(time.Minute)
			if need > bound {
				out = append(out, fmt.Sprintf("%s: %.0f units a day, less the regions' category names, hold no region's own chart at --max-stale %s; %s would hold %s alone, or give fewer regions",
					p.Name, day, ShortDuration(bound), ShortDuration(need), first.Code))
			}
		}
	}
	return out
}
