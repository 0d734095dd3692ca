package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
)

// checkLevelsSpread: paced, the category charts keep to their planned
// rate over each of their --every, a pass more at most: charts that fall
// due together run one after another over the hours, not in one burst
// (docs/explanation/pacing.md, "Priorities, and what is dropped"). The
// rate is bounded from the configuration, never read from the plan: the
// most the pacer ever plans for the levels below is the pool's limit less
// reserve over the longer of its window and a day, less the regions' own
// charts at their floors, each at the fewest pages a completed pass of it
// stored. Each pass is counted at what the upstream charged for its
// chart's calls while it ran, and placed at its slot (its start, for a
// catch-up), as the pacer places it; the passes of one tier whose slots
// fall within one of that tier's --every then spend no more than that
// rate over it and the dearest of them. Not held on a short pool, whose
// lower levels are dropped (checkLowerDropped), while the log says the
// plans may have dropped an own chart (its part goes to the levels
// below), nor for a
// window a second process ran in or the upstream failed in (a pass asked
// again is charged again).
func checkLevelsSpread(h *History) []string {
	if h.NoPace || h.Every <= 0 {
		return nil
	}
	tiers := map[string]int{}
	for _, c := range h.Charts {
		tiers[c.Code] = max(c.Tier, 1)
	}
	short, dropped := h.shortPools(), h.ownDroppedAt()
	calls := inTime(h.Calls)
	var out []string
	for _, pool := range h.Costs.Pools {
		per := h.pageUnits(pool.Name)
		if per == 0 || pool.Window <= 0 || slices.Contains(short, pool.Name) {
			continue
		}
		rate := h.lowerRate(pool, per)
		var over []string
		for _, tier := range distinct(tiers) {
			over = append(over, h.spreadOver(calls, pool.Name, tier, rate, tiers, dropped)...)
		}
		if len(over) > 0 {
			out = append(out, fmt.Sprintf("pool %s: the category charts spent more than the most the plan gives them (%.1f units an hour) over %d of their --every, and a pass more: %s",
				pool.Name, rate*3600, len(over), firstFew(over)))
		}
	}
	return out
}

// lowerRate is the most the pacer plans for the levels below the regions'
// own charts in pool, in units a second.
func (h *History) lowerRate(pool ingest.Pool, per int64) float64 {
	pages := h.fewestPages()
	rate := float64(pool.Capacity()) / max(pool.Window, 24*time.Hour).Seconds()
	for _, c := range h.Charts {
		rate -= float64(pages[c.Code]*per) / (time.Duration(max(c.Tier, 1)) * h.Every).Seconds()
	}
	return max(rate, 0)
}

// spreadPass is a category chart's pass as the spread counts it: where it
// is placed, and what the upstream charged for it.
type spreadPass struct {
	name  string
	at    time.Time
	units int64
}

// spreadOver is each window of tier's --every, ending at a pass of a
// category chart of tier, in which those passes spent more than rate
// over it and the dearest of them.
func (h *History) spreadOver(calls callsInTime, pool string, tier int, rate float64, tiers map[string]int, dropped func(time.Time) bool) []string {
	floor := time.Duration(tier) * h.Every
	var passes []spreadPass
	for _, r := range h.Runs {
		if r.Category == "" || tiers[r.Region] != tier || h.beside(r) {
			continue
		}
		end := r.Finished
		if end.IsZero() {
			end = h.End
		}
		name := chartName(r.Region, r.Category)
		units := calls.chargedIn(pool, r.Started, end.Add(h.Latency+time.Second), func(c Call) bool {
			return c.Kind == KindChart && c.Worker == WorkerDaemon && chartName(c.Region, c.Category) == name
		})
		at := r.Slot
		if at.IsZero() {
			at = r.Started
		}
		passes = append(passes, spreadPass{name, at, units})
	}
	slices.SortFunc(passes, func(a, b spreadPass) int { return a.at.Compare(b.at) })
	var over []string
	for i, p := range passes {
		in := Interval{p.at.Add(-floor), p.at}
		if h.failingIn(in) || h.joinedIn(in) {
			continue
		}
		var spent, dearest int64
		var names []string
		held := false
		for j := i; j >= 0 && passes[j].at.After(in.From); j-- {
			held = held || dropped(passes[j].at)
			spent += passes[j].units
			dearest = max(dearest, passes[j].units)
			names = append(names, passes[j].name)
		}
		if allow := rate*floor.Seconds() + float64(dearest); !held && float64(spent) > allow+1e-9 {
			slices.Reverse(names)
			over = append(over, fmt.Sprintf("%d units in the %s to %s (%d passes: %v), over %.1f", spent, floor,
				p.at.UTC().Format(time.RFC3339), len(names), names, allow))
		}
	}
	return over
}

// distinct is the values of m, each once, in order.
func distinct(m map[string]int) []int {
	var out []int
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
