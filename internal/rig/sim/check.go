package sim

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// Check is every failure of the history, each a sentence. Every bound is
// taken from the configuration (the pools, --every, the tiers,
// --track-every, --max-stale), never from the plan the process published;
// the upstream's spending is the fake's own count, the passes are the
// database's runs and the fake's calls. A property the history never
// exercised is a failure too.
func Check(h *History) []string {
	var out []string
	out = append(out, checkWindows(h)...)
	out = append(out, checkAges(h)...)
	out = append(out, checkTracking(h)...)
	out = append(out, checkHousekeeping(h)...)
	out = append(out, checkServed(h)...)
	out = append(out, checkBlocks(h)...)
	out = append(out, checkPlanTold(h)...)
	out = append(out, checkTierTold(h)...)
	out = append(out, checkRoomTaken(h)...)
	out = append(out, checkCharged(h)...)
	out = append(out, checkFailOpen(h)...)
	out = append(out, checkUnknownsSettled(h)...)
	out = append(out, checkTerms(h)...)
	out = append(out, checkJoins(h)...)
	out = append(out, checkFulls(h)...)
	out = append(out, checkUpstreamDays(h)...)
	out = append(out, checkRefusedUntilReset(h)...)
	out = append(out, checkNeed(h)...)
	out = append(out, checkExercised(h)...)
	out = append(out, checkBackups(h)...)
	out = append(out, checkTrackingStored(h)...)
	out = append(out, checkRunsAsLogged(h)...)
	out = append(out, checkChartsSpend(h)...)
	out = append(out, checkBatches(h)...)
	out = append(out, checkSlotsServed(h)...)
	out = append(out, checkDropsSaid(h)...)
	out = append(out, checkLowerDropped(h)...)
	out = append(out, checkRoomAtStart(h)...)
	out = append(out, checkClockAsked(h)...)
	out = append(out, checkCopiesRefused(h)...)
	out = append(out, checkRefilled(h)...)
	out = append(out, checkCutsCountedOnce(h)...)
	out = append(out, checkLeftRedis(h)...)
	out = append(out, checkAfterCharts(h)...)
	out = append(out, checkBackfills(h)...)
	out = append(out, checkSearchPruned(h)...)
	out = append(out, checkRanks(h)...)
	out = append(out, checkSearches(h)...)
	out = append(out, checkOperator(h)...)
	out = append(out, checkRetries(h)...)
	out = append(out, checkBoundsKept(h)...)
	out = append(out, checkLog(h)...)
	out = append(out, checkTrackingTold(h)...)
	out = append(out, checkRegionsNamed(h)...)
	out = append(out, checkLogKeys(h)...)
	out = append(out, checkStoppedAtFailure(h)...)
	out = append(out, checkRegionsSaid(h)...)
	out = append(out, checkReportAfter(h)...)
	out = append(out, checkLeft(h)...)
	out = append(out, checkGoneForgotten(h)...)
	out = append(out, checkOrphans(h)...)
	out = append(out, checkClockAdvice(h)...)
	out = append(out, checkLevelsSpread(h)...)
	out = append(out, checkRoomInDay(h)...)
	out = append(out, checkTrackedInSpan(h)...)
	out = append(out, checkFreeTimes(h)...)
	out = append(out, checkOwnPools(h)...)
	out = append(out, checkRetried(h)...)
	out = append(out, checkUnreachedGivenBack(h)...)
	out = append(out, checkClockSaid(h)...)
	out = append(out, checkPreviousRanks(h)...)
	out = append(out, checkChartsWhole(h)...)
	out = append(out, checkRefreshTookDue(h)...)
	out = append(out, checkTrackCostKept(h)...)
	out = append(out, checkShareSaid(h)...)
	return out
}

// checkWindows: in no trailing window did the fake charge a pool more
// than its limit less its reserve.
func checkWindows(h *History) []string {
	if len(h.Calls) == 0 {
		return []string{"the upstream was never called"}
	}
	var out []string
	for _, pool := range h.Costs.Pools {
		most, at := windowMost(h.Calls, pool.Name, pool.Window)
		if most > pool.Capacity() {
			out = append(out, fmt.Sprintf("pool %s: the upstream counted %d units in the %s to %s, over its limit less reserve (%d)",
				pool.Name, most, pool.Window, at.UTC().Format(time.RFC3339), pool.Capacity()))
		}
		// a pool whose window is shorter than its day is exhausted by the day
		if day := dayMost(h.Calls, pool.Name); pool.Name == ingest.DefaultPool && h.Exhaust && max(most, day) < pool.Capacity()-pool.Capacity()/20 {
			out = append(out, fmt.Sprintf("pool %s: the workload was to exhaust it, yet the upstream counted at most %d of its %d in a window, %d on one of its days: the limit was never reached",
				pool.Name, most, pool.Capacity(), day))
		}
	}
	return out
}

// windowMost is the most the fake counted in pool over any trailing
// window, and when that window ended.
func windowMost(calls []Call, pool string, window time.Duration) (most int64, at time.Time) {
	for i, n := range windows(calls, pool, window) {
		if n > most {
			most, at = n, calls[i].At
		}
	}
	return most, at
}

// windows is what the fake counted in pool over the window that ended at
// each call.
func windows(calls []Call, pool string, window time.Duration) []int64 {
	out := make([]int64, len(calls))
	j := 0
	for i, c := range calls {
		for !calls[j].At.After(c.At.Add(-window)) {
			j++
		}
		var before int64
		if j > 0 {
			before = calls[j-1].Charged[pool]
		}
		out[i] = c.Charged[pool] - before
	}
	return out
}

// checkAges: every configured chart completed a pass at least every tier
// x --every plus a stagger step, or, when the configured charts need
// more of the default pool than it holds, within --max-stale plus a step;
// paced, the highest tier the pool holds only stretched, within the
// cadence the pool holds it at (firstTierEvery), a slot of --every and a
// step. A gap is allowed the downtime in it, and the time the upstream was
// failing in it, the daemon's longest backoff and a cadence more.
func checkAges(h *History) []string {
	cats := h.categories()
	step := h.Every / time.Duration(max(len(h.Charts)*len(cats), len(regions.Default)))
	scarce := h.scarce()
	first, firstEvery := h.firstTierEvery(h.longestDay())
	// starts are every completed pass of a chart, the second process's
	// too (its run keeps the chart as fresh); own are the daemon's alone,
	// whose pacer a catch-up is a question of; slots, the slot each of
	// those ran for (none for a catch-up).
	starts, own := map[string][]time.Time{}, map[string][]time.Time{}
	slots := map[chartPass]time.Time{}
	for _, r := range h.Runs {
		if r.Status == ingest.StatusCompleted {
			name := chartName(r.Region, r.Category)
			starts[name] = append(starts[name], r.Started)
			if !h.beside(r) {
				own[name] = append(own[name], r.Started)
				slots[chartPass{name, r.Started}] = r.Slot
			}
		}
	}
	var out []string
	for _, c := range h.Charts {
		for _, cat := range cats {
			name := chartName(c.Code, cat)
			bound := time.Duration(c.Tier)*h.Every + step
			if scarce && !h.holdsTier(c.Tier) {
				bound = max(bound, h.MaxStale+step)
			}
			held := scarce && !h.NoPace && cat == "" && c.Tier == first && firstEvery > time.Duration(c.Tier)*h.Every && firstEvery <= h.MaxStale
			if held {
				// the highest tier stretched: its cadence, a slot of --every
				// its credit may wait, and a step
				bound = firstEvery + h.Every + step
			}
			// after a burst of failures the daemon backs off (at most
			// jobs.MaxBackoff from the last failure), then waits for the slot
			healed := time.Duration(c.Tier)*h.Every + jobs.MaxBackoff
			beside, why := time.Duration(0), "tier x --every plus a step"
			if held {
				// a second process on the key takes a share the plan gives it
				beside = max(time.Duration(c.Tier)*h.Every, h.MaxStale) + step
				why = fmt.Sprintf("tier %d held every %s by the pool beside the lower tiers at --max-stale, plus a slot and a step", c.Tier, firstEvery.Round(time.Second))
			}
			if f := checkGaps(h, name, starts[name], bound, healed, beside, why); f != "" {
				out = append(out, f)
			}
			if f := checkCatchUps(h, name, own[name], slots, time.Duration(c.Tier)*(h.Every-step)); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// checkGaps is the first gap between name's passes (and from its last to
// the end) longer than bound and what excuses it, "" for none. A gap a
// second process's spell on the key (a join) overlaps, or the default
// pool's window after it, is held to beside instead when that is longer:
// the plan counts what the second process spent over the pool's last
// window as going on (docs/explanation/pacing.md), so the charts it
// stretched stay stretched for a window after it left.
func checkGaps(h *History, name string, starts []time.Time, bound, cadence, beside time.Duration, why string) string {
	if len(starts) == 0 {
		return fmt.Sprintf("%s: no pass completed in %d days", name, h.Days)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	ends := append(starts[1:len(starts):len(starts)], h.End)
	for i, from := range starts {
		to := ends[i]
		allowed := bound
		if beside > bound && slices.ContainsFunc(h.Joins, func(j Join) bool { return j.From.Before(to) && j.To.Add(h.window(ingest.DefaultPool)).After(from) }) {
			allowed = beside
		}
		allowed += h.excused(from, to, cadence)
		if h.firstAfterStart(starts, i) {
			// the catch-up at a start stands for the chart's next slot,
			// which may come up to a cadence later (docs/explanation/pacing.md)
			allowed += cadence
		}
		if to.Sub(from) > allowed {
			return fmt.Sprintf("%s: no pass from %s to %s (%s), over %s (%s%s)", name,
				from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), to.Sub(from), allowed, why, h.excuses(from, to))
		}
	}
	return ""
}

// chartPass is a chart's pass by its start.
type chartPass struct {
	name  string
	start time.Time
}

// checkCatchUps is the first pass of name, the first of a life of the
// process, followed in that life by another sooner than least (the
// chart's cadence less its stagger step), "" for none. A catch-up at a
// start is the pass of the chart's next slot, which does not run it
// again: a downtime costs one catch-up, never a second pass half a
// cadence on (docs/explanation/pacing.md). A life's first pass that a
// slot of that life started is no catch-up but that slot's pass,
// however late a wrong Date or a failure held it within its slot (a
// pass is its slot): the next pass is held to least from the slot it
// ran for, as the pacer counts it. Unpaced, every slot runs.
func checkCatchUps(h *History, name string, starts []time.Time, slots map[chartPass]time.Time, least time.Duration) string {
	if h.NoPace {
		return ""
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	for i := 0; i+1 < len(starts); i++ {
		at, to := starts[i], starts[i+1]
		from, its := at, ""
		// a slot before the life's start is one the downtime missed: a
		// pass for it at the start is the catch-up, whatever it recorded
		if slot := slots[chartPass{name, at}]; !slot.IsZero() && !slot.Before(h.lifeStart(at)) {
			from, its = slot, fmt.Sprintf(" for its slot at %s", slot.UTC().Format(time.TimeOnly))
		}
		if !h.firstAfterStart(starts, i) || h.firstAfterStart(starts, i+1) || to.Sub(from) >= least {
			continue
		}
		return fmt.Sprintf("%s: passed at %s%s, its first pass since the start, and again at %s (%s later), sooner than its cadence less a step (%s)",
			name, at.UTC().Format(time.RFC3339), its, to.UTC().Format(time.TimeOnly), to.Sub(from), least)
	}
	return ""
}

// lifeStart is when the life of the process t is in started, as the
// database keeps it (milliseconds).
func (h *History) lifeStart(t time.Time) time.Time {
	var last time.Time
	for _, s := range h.Starts {
		if s = s.Truncate(time.Millisecond); !s.After(t) {
			last = s
		}
	}
	return last
}

// excused is what the nemesis adds to a gap from from to to: the
// downtime in it, and the time the upstream was failing in it and extra
// (the next slot after it healed, the daemon's backoff) when it was.
func (h *History) excused(from, to time.Time, extra time.Duration) time.Duration {
	var d time.Duration
	for _, down := range h.Down {
		d += overlap(down, from, to)
	}
	failing := false
	for _, f := range h.failingSpans() {
		if o := overlap(f, from, to); o > 0 || f.Contains(from) {
			d, failing = d+o, true
		}
	}
	if failing {
		d += extra
	}
	return d
}

// downIn: the process was down at some time between from and to.
func (h *History) downIn(from, to time.Time) bool {
	for _, down := range h.Down {
		if overlap(down, from, to) > 0 {
			return true
		}
	}
	return false
}

func overlap(i Interval, from, to time.Time) time.Duration {
	if i.From.Before(to) && i.To.After(from) {
		return earlier(i.To, to).Sub(later(i.From, from))
	}
	return 0
}

// faultSpans is when each burst of failures held: from its start to the
// last of the calls it failed (the fake fails the next calls that come,
// however far apart the daemon's backoff spaces them).
func (h *History) faultSpans() []Interval {
	if h.spans != nil || len(h.Faults) == 0 {
		return h.spans
	}
	for _, f := range h.Faults {
		k := sort.Search(len(h.Calls), func(i int) bool { return !h.Calls[i].At.Before(f.At) })
		end := h.End
		if last := k + f.Calls - 1; last < len(h.Calls) {
			end = h.Calls[last].At
		}
		h.spans = append(h.spans, Interval{f.At, end})
	}
	return h.spans
}

// firstAfterStart: the i-th of a chart's passes is its first in a life
// of the process (the catch-up at a start, when its slot had passed).
func (h *History) firstAfterStart(passes []time.Time, i int) bool {
	for _, s := range h.Starts {
		s = s.Truncate(time.Millisecond) // the database keeps milliseconds
		if !passes[i].Before(s) && (i == 0 || passes[i-1].Before(s)) {
			return true
		}
	}
	return false
}

// beside says whether r is the second process's: a `run --once` of a
// join's region that started while one of the join's runs was under way.
func (h *History) beside(r Run) bool {
	for _, j := range h.Joins {
		if j.Region == r.Region && j.running(r.Started) {
			return true
		}
	}
	return false
}

// running says whether one of the join's runs was running at t, its start
// read at the millisecond the runs table keeps.
func (j Join) running(t time.Time) bool {
	for _, jr := range j.Runs {
		if !t.Before(jr.From.Truncate(time.Millisecond)) && !t.After(jr.To) {
			return true
		}
	}
	return false
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (h *History) excuses(from, to time.Time) string {
	if d := h.excused(from, to, 0); d > 0 {
		return fmt.Sprintf(", and the %s the process was down or the upstream failing", d)
	}
	return ""
}

// capacity is pool's limit less its reserve, per window.
func (h *History) capacity(pool string) int64 {
	for _, p := range h.Costs.Pools {
		if p.Name == pool {
			return p.Capacity()
		}
	}
	return 0
}

// scarce: the configured charts want more of the default pool a day
// than it holds.
func (h *History) scarce() bool { return chartsDemand(h) > h.capacity(ingest.DefaultPool) }

// chartsDemand is the default pool's units a day the configured charts
// take at their tiers' cadences: a page a call.
func chartsDemand(h *History) int64 {
	return h.demand(func(regions.Chart) time.Duration { return 0 })
}

// demand is the default pool's units a day the configured charts take,
// each at its tier's cadence or every stretch(chart) when that is longer.
func (h *History) demand(stretch func(regions.Chart) time.Duration) int64 {
	cats := h.categories()
	var units int64
	for _, c := range h.Charts {
		pages := int64((c.Depth + regions.PageSize - 1) / regions.PageSize)
		every := max(time.Duration(c.Tier)*h.Every, stretch(c))
		units += int64(len(cats)) * pages * int64(24*time.Hour/every)
	}
	return units
}

// holdsTier: the default pool holds the charts of tier and the tiers above
// it at their cadences beside every lower tier's at --max-stale, so that
// a scarce pool is no excuse for tier's charts to pass their cadence: the
// lower tiers give way first (docs/explanation/pacing.md).
func (h *History) holdsTier(tier int) bool {
	return h.demand(func(c regions.Chart) time.Duration {
		if c.Tier > tier {
			return h.MaxStale
		}
		return 0
	}) <= h.capacity(ingest.DefaultPool)
}

// firstTierEvery is the highest tier configured (the least number) and
// the cadence the default pool holds its charts at beside every lower
// tier's at --max-stale (the most of its floors that bound holds, as the
// plan's limit: pace.Entry.Limit) and each region's category names once
// a day, over the longest day of the pool in the history (its capacity
// over the longer of its window and that day, as the pacer's sustainable
// rate): the tier's own cadence when the pool holds it so, else the
// stretch that fits; 0 when the lower tiers alone take the pool. The
// lower tiers give way first (docs/explanation/pacing.md), so no plan
// runs the highest tier slower.
func (h *History) firstTierEvery(day time.Duration) (tier int, every time.Duration) {
	if len(h.Charts) == 0 {
		return 0, 0
	}
	tier = h.Charts[0].Tier
	for _, c := range h.Charts {
		tier = min(tier, c.Tier)
	}
	floor := time.Duration(tier) * h.Every
	var pool ingest.Pool
	for _, p := range h.Costs.Pools {
		if p.Name == ingest.DefaultPool {
			pool = p
		}
	}
	left := float64(pool.Capacity()) * float64(24*time.Hour) / float64(max(pool.Window, day))
	if charges, err := h.Costs.Op(ingest.OpCategoriesList); err == nil {
		for _, c := range charges {
			if c.Pool == ingest.DefaultPool {
				left -= float64(int64(len(h.Charts)) * c.Units)
			}
		}
	}
	var top float64              // the highest tier's units a day at its floor
	for _, c := range h.Charts { // the regions' own: the category charts give way first
		pages := float64((c.Depth + regions.PageSize - 1) / regions.PageSize)
		if c.Tier == tier {
			top += pages * float64(24*time.Hour) / float64(floor)
			continue
		}
		f := time.Duration(c.Tier) * h.Every
		limit := max(f, h.MaxStale/f*f)
		left -= pages * float64(24*time.Hour) / float64(limit)
	}
	switch {
	case top <= left:
		return tier, floor
	case left <= 0:
		return tier, 0
	}
	return tier, time.Duration(float64(floor) * top / left)
}

// longestDay is the longest day of the default pool (its Pacific day)
// in the history, a day at least.
func (h *History) longestDay() time.Duration {
	day := 24 * time.Hour
	for _, p := range h.Costs.Pools {
		if p.Name != ingest.DefaultPool || p.Day == nil {
			continue
		}
		for t := h.Start.In(p.Day); t.Before(h.End.Add(24 * time.Hour)); t = t.AddDate(0, 0, 1) {
			d0 := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, p.Day)
			day = max(day, d0.AddDate(0, 0, 1).Sub(d0))
		}
	}
	return day
}

// categories are the charts kept of each region: "" the unfiltered.
func (h *History) categories() []string {
	if len(h.Categories) > 0 && h.Categories[0] == "" {
		return h.Categories
	}
	return append([]string{""}, h.Categories...)
}

func chartName(region, category string) string {
	if category == "" {
		return region
	}
	return region + "/" + category
}

// checkTracking: tracking read the counts at every slot of --track-every:
// its passes are the fake's runs of batchGetStats calls, and none may
// start more than half a slot late after the one before, but for the
// downtime, a burst of failures, or a stats pool that could not pay.
func checkTracking(h *History) []string {
	if h.TrackFor == 0 {
		return nil
	}
	var passes []time.Time
	var last time.Time
	for _, c := range h.Calls {
		if !strings.HasSuffix(c.Path, "videos:batchGetStats") {
			continue
		}
		if last.IsZero() || c.At.Sub(last) > h.TrackEvery/2 {
			passes = append(passes, c.At)
		}
		last = c.At
	}
	if len(passes) < 2 {
		return []string{fmt.Sprintf("tracking ran %d passes in %d days at --track-every %s", len(passes), h.Days, h.TrackEvery)}
	}
	bound := h.TrackEvery + h.TrackEvery/2
	var missed []string
	slots := 0
	for i, from := range passes {
		to := h.End
		if i+1 < len(passes) {
			to = passes[i+1]
		}
		slots++
		allowed := bound + h.excused(from, to, h.TrackEvery)
		if h.downIn(from, to) {
			allowed += h.TrackEvery // a slot the process was down for: tracking is not caught up at a start
		}
		if to.Sub(from) <= allowed || h.poolFull(statsPool, from, to) {
			continue
		}
		missed = append(missed, fmt.Sprintf("%s to %s (%s)", from.UTC().Format(time.RFC3339), to.UTC().Format(time.TimeOnly), to.Sub(from)))
	}
	if len(missed) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("tracking: %d of %d passes were followed by a missed slot of --track-every %s, the stats pool able to pay: %s",
		len(missed), slots, h.TrackEvery, firstFew(missed))}
}

// firstFew is the first three of a list of findings, and how many more.
func firstFew(all []string) string {
	if len(all) <= 3 {
		return strings.Join(all, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(all[:3], "; "), len(all)-3)
}

// statsPool is the pool tracking's calls draw from (costs.yaml).
const statsPool = "stats"

// Peaks says, for each pool, the most the fake counted in a window
// against the pool's limit less reserve.
func Peaks(h *History) string {
	var out []string
	own := h.ownPools()
	for _, pool := range h.Costs.Pools {
		most, _ := windowMost(h.Calls, pool.Name, pool.Window)
		if slices.Contains(own, pool.Name) { // the upstream counts none of it
			most, _ = chargesMost(upstreamLedgerOf(h).charges[pool.Name], pool.Window)
		}
		out = append(out, fmt.Sprintf("%s peaked at %d of %d", pool.Name, most, pool.Capacity()))
	}
	return strings.Join(out, ", ")
}

// housekeeping is the work besides the charts and tracking that runs once
// every --every, at a slot of its own after the charts' (jobs.Roster).
var housekeeping = []string{"refresh", "prune"}

// checkHousekeeping: the refresh and the prune each ran at every slot of
// --every, credited to the slot it ran for, and once a slot: a pass is
// found at most half a period past the period after the one before, but
// for the downtime and, for the refresh, which calls the upstream, a burst
// of failures, a default pool that could not pay, or charts configured
// beyond the pool (the plan may drop the refresh then, and says so). A
// prune fails only on a full disk; a refresh only then or while the
// upstream fails.
func checkHousekeeping(h *History) []string {
	var out []string
	for _, entry := range housekeeping {
		var at []time.Time             // each pass, at the slot it is credited to
		caught := map[time.Time]bool{} // the catch-ups at a start, credited to when they ran
		slots := map[time.Time]int{}
		var failed []string
		for _, p := range h.Passes {
			if p.Entry != entry {
				continue
			}
			credited := p.Started
			if !p.Slot.IsZero() {
				credited = p.Slot
				slots[p.Slot]++
			} else {
				caught[credited] = true
			}
			at = append(at, credited)
			excused := h.failing(p.Started) // the upstream failing, or the disk full
			if entry == "prune" {
				excused = slices.ContainsFunc(h.Fulls, func(f Interval) bool { return f.Contains(p.Started) })
			}
			if p.Status == ingest.StatusFailed && !excused {
				failed = append(failed, p.Started.UTC().Format(time.RFC3339))
			}
		}
		if len(failed) > 0 {
			out = append(out, fmt.Sprintf("%s: %d passes failed with the upstream answering (first at %s)", entry, len(failed), failed[0]))
		}
		for slot, n := range slots {
			if n > 1 {
				out = append(out, fmt.Sprintf("%s: ran %d times for its slot %s", entry, n, slot.UTC().Format(time.RFC3339)))
			}
		}
		if f := housekeepingGaps(h, entry, at, caught); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// housekeepingGaps is the first of entry's slots with no pass, "" for none.
// A catch-up at a start stands for the entry's next slot, as a chart's
// does (docs/explanation/pacing.md): the gap after one may be a period
// longer.
func housekeepingGaps(h *History, entry string, at []time.Time, caught map[time.Time]bool) string {
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	from := h.Start
	if kept := h.passesKept(); kept.After(from) {
		// the prune deleted the passes before its cut: the history
		// starts at the first pass after it
		k := sort.Search(len(at), func(i int) bool { return !at[i].Before(kept) })
		if k == len(at) { // none kept: the gap runs from the cut, excused as any other
			from, at = kept, nil
		} else {
			from, at = at[k], at[k+1:]
		}
	}
	bound := h.Every + h.Every/2
	for _, to := range append(at, h.End) {
		allowed := bound + h.excused(from, to, h.Every)
		if h.downIn(from, to) {
			allowed += h.Every // the catch-up at the start after stands for the slot it missed
		}
		if caught[from] {
			allowed += h.Every
		}
		if to.Sub(from) > allowed && !(entry == "refresh" && (h.scarce() || h.poolFull(ingest.DefaultPool, from, to))) {
			return fmt.Sprintf("%s: no pass from %s to %s (%s), over %s (--every %s and half of it%s)", entry,
				from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), to.Sub(from), allowed, h.Every, h.excuses(from, to))
		}
		from = to
	}
	return ""
}

// blocks are the spans the daemon is to decide nothing for: from the
// upstream's refusal of the daily quota to the first reset of the default
// pool's day after the refusal ended (docs/operations.md: the pools stay
// blocked until the reset), and from a wrong Date to a minute after it
// was right again (the reading asked again before refusing).
func (h *History) blocks() []Interval {
	var out []Interval
	for _, r := range h.Refusals {
		out = append(out, Interval{r.From, h.reset(r.To)})
	}
	for _, s := range h.Skews {
		out = append(out, Interval{s.From, s.To.Add(time.Minute)})
	}
	return out
}

// reset is the first start of the default pool's day after t (t itself
// on none).
func (h *History) reset(t time.Time) time.Time {
	loc := time.UTC
	for _, p := range h.Costs.Pools {
		if p.Name == ingest.DefaultPool && p.Day != nil {
			loc = p.Day
		}
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
}

// passesKept is the earliest time from which the database still holds
// every pass at the history's end: the prune deletes those from before
// its cut, the standing's statistics kept, in whole UTC days (a day
// more, for a cut made on the last day).
func (h *History) passesKept() time.Time {
	return h.End.Add(-ingest.StandardStanding().StatsFor).Add(24 * time.Hour)
}

// failingSpans are when the upstream failed calls, refused them or sent
// a wrong Date, and when the disk was full: what the daemon cannot help.
func (h *History) failingSpans() []Interval {
	out := append(h.faultSpans(), h.blocks()...)
	return append(append(out, h.Fulls...), h.Unreachable...)
}

// failing: the upstream was failing calls, refusing them or sending a
// wrong Date at t, or the disk was full.
func (h *History) failing(t time.Time) bool {
	for _, f := range h.failingSpans() {
		if f.Contains(t) {
			return true
		}
	}
	return false
}

// failingIn: the upstream was failing, refusing or sending a wrong Date,
// or the disk was full, at some moment of in: what excuses a chart's gap
// excuses a run that failed meanwhile, and nothing more.
func (h *History) failingIn(in Interval) bool {
	return slices.ContainsFunc(h.failingSpans(), func(f Interval) bool {
		return !f.From.After(in.To) && !in.From.After(f.To)
	})
}

// poolFull: the fake counted pool within a twentieth of its limit less
// reserve, over its window, at some call between from and to.
func (h *History) poolFull(pool string, from, to time.Time) bool {
	capacity := h.capacity(pool)
	counts, ok := h.counts[pool]
	if !ok {
		for _, p := range h.Costs.Pools {
			if p.Name == pool {
				counts = windows(h.Calls, pool, p.Window)
			}
		}
		if h.counts == nil {
			h.counts = map[string][]int64{}
		}
		h.counts[pool] = counts
	}
	for i, c := range h.Calls {
		if !c.At.Before(from) && !c.At.After(to) && i < len(counts) && counts[i] >= capacity-capacity/20 {
			return true
		}
	}
	return false
}

// servedBound is how long after a run landed a reader may still be
// answered from the chart before it (docs/reference/api/dashboard.md): the
// store's mark is read once a second, and a reader who finds it moved
// waits up to half a second for the page's new copy.
const servedBound = 1500 * time.Millisecond

// checkServed: every chart a reader was answered with, while the process
// ran, was the latest run of that chart that landed servedBound before
// or later, and its page said the same run as its JSON at that instant;
// readers read at least one landed chart (else nothing was checked).
func checkServed(h *History) []string {
	if !h.Readers {
		return nil
	}
	landed := map[string][]Run{} // each region's completed unfiltered runs, by when they finished
	for _, r := range h.Runs {
		if r.Category == "" && r.Status == ingest.StatusCompleted && !r.Finished.IsZero() {
			landed[r.Region] = append(landed[r.Region], r)
		}
	}
	for _, rs := range landed {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Finished.Before(rs[j].Finished) })
	}
	var stale, wrong []string
	checked := 0
	for _, s := range h.Served {
		if s.Down {
			continue
		}
		at := s.At.UTC().Format(time.RFC3339)
		if s.Err != "" {
			wrong = append(wrong, fmt.Sprintf("at %s, the process up: %s", at, s.Err))
			continue
		}
		rs := landed[s.Region]
		k := sort.Search(len(rs), func(i int) bool { return rs[i].Finished.After(s.At.Add(-servedBound)) })
		if k == 0 {
			continue // no run of the chart had landed yet
		}
		checked++
		if want := rs[k-1]; s.RunID < want.ID {
			stale = append(stale, fmt.Sprintf("at %s %s's run %d, though run %d landed at %s",
				at, s.Region, s.RunID, want.ID, want.Finished.UTC().Format(time.TimeOnly)))
		}
		if s.PageAt != s.RunAt {
			wrong = append(wrong, fmt.Sprintf("at %s %s's page said its views were fetched at %q, its JSON at %q", at, s.Region, s.PageAt, s.RunAt))
		}
	}
	var out []string
	if len(stale) > 0 {
		out = append(out, fmt.Sprintf("readers: %d of %d answers were a chart older than the last run landed %s before: %s",
			len(stale), checked, servedBound, firstFew(stale)))
	}
	if len(wrong) > 0 {
		out = append(out, fmt.Sprintf("readers: %d answers failed or disagreed: %s", len(wrong), firstFew(wrong)))
	}
	if checked == 0 {
		out = append(out, fmt.Sprintf("readers were answered %d times and never after a chart had landed: freshness was not checked", len(h.Served)))
	}
	return out
}

// poolOf is the pool a call draws from (costs.yaml). A 403 quotaExceeded
// says the project's daily units are spent, whatever call met it: the
// default pool is blocked, and the buckets of their own (search, stats)
// go on, blocked only by their own per-day refusals (costs.BlockedPools).
func poolOf(c Call) string {
	switch {
	case strings.HasSuffix(c.Path, "videos:batchGetStats"):
		return statsPool
	case strings.HasSuffix(c.Path, "/search"):
		return "search"
	}
	return ingest.DefaultPool
}

// inFlight is how long after an answer a call the daemon had already
// made may still reach the upstream: the calls of work running at once
// (a chart's page, tracking's, the refresh's) that set out before the
// answer was read.
const inFlight = time.Second

// checkBlocks: once the upstream refused a call as over its daily quota,
// no call of the default pool reached it until the pool's day reset (but
// those in flight); while its Date was wrong, at most one call was charged (the
// first page, decided on the reading before: docs/operations.md). Over a
// long history under the nemesis, a refusal the daemon never met is a
// failure: the property was never exercised.
func checkBlocks(h *History) []string {
	var out, again []string
	met := 0
	for _, r := range h.Refusals {
		for i, c := range h.Calls {
			if !r.Contains(c.At) || c.Status != http.StatusForbidden {
				continue
			}
			met++
			reset := h.reset(c.At)
			for _, d := range h.Calls[i+1:] {
				if !d.At.Before(reset) {
					break
				}
				if poolOf(d) == ingest.DefaultPool && d.At.After(c.At.Add(inFlight)) {
					again = append(again, fmt.Sprintf("refused at %s, called again at %s, before the pool's reset at %s",
						c.At.UTC().Format(time.RFC3339), d.At.UTC().Format(time.TimeOnly), reset.UTC().Format(time.RFC3339)))
					break
				}
			}
		}
	}
	if len(again) > 0 {
		out = append(out, fmt.Sprintf("the daemon called the upstream %d times after it refused the daily quota: %s", len(again), firstFew(again)))
	}
	for _, s := range h.Skews {
		n := 0
		for _, c := range h.Calls {
			if s.Contains(c.At) {
				n++
			}
		}
		if n > 1 {
			out = append(out, fmt.Sprintf("the upstream's Date was wrong from %s to %s, and the daemon made %d calls, where one may be decided before the first wrong Date is read",
				s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.TimeOnly), n))
		}
	}
	if h.Nemesis && h.Days >= exercisedDays && met == 0 {
		out = append(out, fmt.Sprintf("in %d days the upstream never refused a call for its daily quota: the block was not exercised", h.Days))
	}
	return out
}

// exercisedDays is the length of history under the nemesis over which
// each of its faults is due to have met the daemon.
const exercisedDays = 10

var (
	tierLine      = regexp.MustCompile(`^time=(\S+) level=INFO msg="plan tier" tier=(\d+) .*every=(\S+) `)
	planLine      = regexp.MustCompile(`^time=(\S+) level=INFO msg=plan pool=(\S+) .* units_per_day=(\d+) `)
	scheduledLine = regexp.MustCompile(`^time=(\S+) level=INFO msg=scheduled (\S+=\S+) `)
)

// checkPlanTold: in each life of the process the daemon's log tells the
// day's plan once a pool and schedules each entry once, and the plan a
// reader read on the site's /quota in that life (the report `report
// --json` prints) is the one the log told.
func checkPlanTold(h *History) []string {
	if h.Log == "" {
		return nil // a history made by hand, with no daemon's log
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	type life struct {
		plans     map[string][]int64
		scheduled map[string]int
	}
	lives := make([]life, len(h.Starts))
	for i := range lives {
		lives[i] = life{plans: map[string][]int64{}, scheduled: map[string]int{}}
	}
	lifeAt := func(t time.Time) int { // the log keeps milliseconds
		return sort.Search(len(h.Starts), func(i int) bool { return h.Starts[i].Truncate(time.Millisecond).After(t) }) - 1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m := planLine.FindStringSubmatch(line); m != nil {
			at, _ := time.Parse(time.RFC3339Nano, m[1])
			units, _ := strconv.ParseInt(m[3], 10, 64)
			if i := lifeAt(at); i >= 0 {
				lives[i].plans[m[2]] = append(lives[i].plans[m[2]], units)
			}
		} else if m := scheduledLine.FindStringSubmatch(line); m != nil {
			at, _ := time.Parse(time.RFC3339Nano, m[1])
			if i := lifeAt(at); i >= 0 {
				lives[i].scheduled[m[2]]++
			}
		}
	}
	var out []string
	for i, l := range lives {
		at := h.Starts[i].UTC().Format(time.RFC3339)
		if len(l.plans) == 0 {
			out = append(out, fmt.Sprintf("the life started at %s told no plan", at))
		}
		for pool, told := range l.plans {
			if len(told) != 1 {
				out = append(out, fmt.Sprintf("the life started at %s told pool %s's plan %d times: %v units a day", at, pool, len(told), told))
			}
		}
		for entry, n := range l.scheduled {
			if n != 1 {
				out = append(out, fmt.Sprintf("the life started at %s scheduled %s %d times", at, entry, n))
			}
		}
	}
	for _, p := range h.Plans {
		at := p.At.UTC().Format(time.RFC3339)
		if p.Err != "" {
			out = append(out, fmt.Sprintf("a reader at %s, the process up: %s", at, p.Err))
			continue
		}
		i := lifeAt(p.At)
		if i < 0 {
			continue
		}
		for pool, told := range lives[i].plans {
			if got, ok := p.Units[pool]; !ok || got != told[len(told)-1] {
				out = append(out, fmt.Sprintf("at %s /quota planned pool %s at %d units a day, where the log told %d", at, pool, got, told[len(told)-1]))
			}
		}
	}
	if h.Readers && len(h.Plans) == 0 {
		out = append(out, "no reader read the plan on /quota: it was not compared with the log's")
	}
	return out
}

// checkTierTold: in each life of the process the daemon's log tells the
// highest tier's cadence at start ("plan tier"), never slower than the
// default pool holds it beside the lower tiers at --max-stale over the
// history's longest day (firstTierEvery): a plan that stretches the
// highest tier where the lower ones could give way starves it. In the
// first life, before any chart was measured (the plan counts a chart's
// depth then, as this does), it is never faster than the pool holds it
// over a day of 24 hours either: a tier the pool cannot hold at its
// cadence is said at start, and by how much, not found in its gaps.
func checkTierTold(h *History) []string {
	if h.Log == "" || len(h.Charts) == 0 || len(h.Starts) == 0 {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	tier, most := h.firstTierEvery(h.longestDay())
	_, least := h.firstTierEvery(24 * time.Hour)
	told := make([][]time.Duration, len(h.Starts))
	for _, line := range strings.Split(string(data), "\n") {
		m := tierLine.FindStringSubmatch(line)
		if m == nil || m[2] != strconv.Itoa(tier) {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, m[1])
		i := sort.Search(len(h.Starts), func(i int) bool { return h.Starts[i].Truncate(time.Millisecond).After(at) }) - 1
		if i < 0 {
			continue
		}
		every := m[3]
		if k := strings.IndexByte(every, '-'); k >= 0 { // "fastest-slowest"
			every = every[k+1:]
		}
		d, err := time.ParseDuration(every)
		if err != nil {
			d = math.MaxInt64 // "never"
		}
		told[i] = append(told[i], d)
	}
	var out []string
	for i, ds := range told {
		at := h.Starts[i].UTC().Format(time.RFC3339)
		if len(ds) == 0 {
			out = append(out, fmt.Sprintf("the life started at %s told no cadence of tier %d", at, tier))
			continue
		}
		d := slices.Max(ds)
		if most > 0 && d > most+most/1000+time.Second {
			out = append(out, fmt.Sprintf("the life started at %s told tier %d every %s, where the pool holds it every %s beside the lower tiers at --max-stale %s",
				at, tier, d, most.Round(time.Second), h.MaxStale))
		}
		if i == 0 && d < least-least/1000-time.Second {
			out = append(out, fmt.Sprintf("the life started at %s told tier %d every %s, where the pool holds it every %s at best: the plan did not say the tier it cannot hold",
				at, tier, d, least.Round(time.Second)))
		}
	}
	return out
}

// declinedLine is a chart's slot the pacer declined, and why.
var declinedLine = regexp.MustCompile(`^time=(\S+) level=INFO msg="pace: slot declined" entry=(\S+) slot=(\S+) reason="([^"]*)"`)

// roomGrace is how long after the pool frees a chart's room the chart may
// take to ask again: a few of the daemon's asks (jobs.RoomEvery).
const roomGrace = 4 * jobs.RoomEvery

// checkRoomTaken: a paced region's own chart whose slot the pacer declined
// for want of room alone (the log's "no room") passed within that slot
// when the fake's count of the default pool's window left room for a
// pass of it (the pages its last completed pass stored, a page a call)
// before the slot's end, the room not taken by a call meanwhile: the pass
// waits at its slot for the room, rather than a whole slot
// (docs/explanation/pacing.md). Not judged where the process was down or
// the upstream failing.
func checkRoomTaken(h *History) []string {
	if h.Log == "" || h.NoPace {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	capacity := h.capacity(ingest.DefaultPool)
	var window time.Duration
	day := dayRoom{latency: h.Latency, calls: inTime(h.Calls)}
	for _, p := range h.Costs.Pools {
		if p.Name == ingest.DefaultPool {
			window, day.pool = p.Window, p
		}
	}
	var calls []Call // the default pool's
	for _, c := range h.Calls {
		if poolOf(c) == ingest.DefaultPool {
			calls = append(calls, c)
		}
	}
	var missed []string
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := declinedLine.FindStringSubmatch(line)
		if m == nil || m[4] != "no room" || strings.Contains(m[2], "/") || !slices.ContainsFunc(h.Charts, func(c regions.Chart) bool { return c.Code == m[2] }) {
			continue
		}
		slot, err := time.Parse(time.RFC3339, m[3])
		if err != nil {
			continue
		}
		n++
		end := slot.Add(h.Every)
		if end.After(h.End) {
			end = h.End // room freed past the history's end is no one's to take
		}
		if h.downIn(slot, end) || h.failingIn(Interval{slot, end}) {
			continue
		}
		need := 0
		ran := false
		for _, r := range h.Runs {
			if r.Region != m[2] || r.Category != "" {
				continue
			}
			if r.Started.Before(slot) && r.Status == ingest.StatusCompleted {
				need = r.Pages
			}
			if !r.Started.Before(slot) && r.Started.Before(end) {
				ran = true
			}
		}
		if ran || need == 0 {
			continue
		}
		if at, ok := roomFreed(calls, window, day, capacity, int64(need), slot, end.Add(-roomGrace)); ok {
			missed = append(missed, fmt.Sprintf("%s declined at its slot %s for room, the pool had room for its %d pages from %s, and it did not pass before its next slot",
				m[2], slot.UTC().Format(time.RFC3339), need, at.UTC().Format(time.TimeOnly)))
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d slots declined for room were not asked again as the window freed room: %s", len(missed), n, firstFew(missed))}
}

// roomFreed is the first moment in (from, to) at which the fake's count
// of the default pool over its trailing window (the calls it charged
// since that moment less window) left need units under capacity, and so
// did its calendar day (day), and stayed so for roomGrace with no call
// charged; false when none. Room frees as a call ages out of the window,
// or at the day's reset.
func roomFreed(calls []Call, window time.Duration, day dayRoom, capacity, need int64, from, to time.Time) (time.Time, bool) {
	// The count drops when a call ages out of the window: the moments to look at.
	charged := func(t time.Time) int64 { // the units charged in (t-window, t]
		var lo, hi int64
		for _, c := range calls {
			if !c.At.After(t.Add(-window)) {
				lo = c.Charged[ingest.DefaultPool]
			}
			if !c.At.After(t) {
				hi = c.Charged[ingest.DefaultPool]
			}
		}
		return hi - lo
	}
	var moments []time.Time
	for _, c := range calls {
		moments = append(moments, c.At.Add(window))
	}
	moments = append(moments, day.resets(from, to)...)
	slices.SortFunc(moments, time.Time.Compare)
	for _, t := range moments {
		if !t.After(from) || !t.Before(to) {
			continue
		}
		if capacity-charged(t) < need || !day.holds(need, t) {
			continue
		}
		if callsIn(calls, t, t.Add(roomGrace)) == 0 {
			return t, true
		}
	}
	return time.Time{}, false
}

// stampAhead is how far the limiter may stamp a call past the moment it
// decides: never before its log's newest entry, and an unmetered call
// written back holds its millisecond whole, so the decision after it takes
// the next one (docs/explanation/limiter.md, "Call ids name their
// limiter").
const stampAhead = time.Millisecond

// checkCharged: every unit the upstream charged a pool is in the
// database's ledger: matched one to one to a unit of a call of that pool
// admitted no earlier than a call's delivery bound before the charge
// (docs/explanation/quota.md, "A call's delivery"), no later than
// stampAhead after it, and not given back. A call charged
// and given back, or charged with no row, is a unit the limiter never
// counted. Units, not calls, are matched: the fake's count read after a
// call may hold a call answered at the same moment. Charges from before
// the prune's cut of the ledger are not checked.
func checkCharged(h *History) []string {
	kept := h.passesKept() // the prune cuts the ledger where it cuts the passes, or later
	var lost []string
	n := 0
	for _, pool := range h.Costs.Pools {
		var rows []Entry
		for _, e := range h.Ledger {
			if e.Pool == pool.Name && e.Units > 0 && !e.GivenBack {
				rows = append(rows, e)
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].At.Before(rows[j].At) })
		left := make([]int64, len(rows)) // each row's units not yet matched
		for i, r := range rows {
			left[i] = r.Units
		}
		var before int64
		for _, c := range h.Calls {
			units := c.Charged[pool.Name] - before
			before = c.Charged[pool.Name]
			if units <= 0 || c.At.Before(kept) {
				continue
			}
			n++
			earliest := c.At.Add(-ingest.Delivery - time.Second)
			latest := c.At.Add(stampAhead)
			for k := sort.Search(len(rows), func(i int) bool { return !rows[i].At.Before(earliest) }); units > 0 && k < len(rows) && !rows[k].At.After(latest); k++ {
				took := min(units, left[k])
				left[k] -= took
				units -= took
			}
			if units > 0 {
				lost = append(lost, fmt.Sprintf("%s %s at %s", pool.Name, strings.TrimPrefix(c.Path, "/youtube/v3/"), c.At.UTC().Format(time.RFC3339)))
			}
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d calls the upstream charged are not in the ledger as spent: %s", len(lost), n, firstFew(lost))}
}

// callsIn is how many keyed calls the upstream answered after from, to
// to.
func callsIn(calls []Call, from, to time.Time) int {
	n := 0
	for _, c := range calls {
		if c.At.After(from) && !c.At.After(to) {
			n++
		}
	}
	return n
}

// checkTerms: from a SIGTERM to the daemon's end no call reached the
// upstream (one made at the signal's own instant is let be), and a
// SIGTERM that met a chart page on the wire, which the upstream answered
// within the page's own bound, left that page stored: the drain stores
// the page in flight and starts no call (docs/operations.md, Signals). A
// page held past its bound is abandoned, and checkCharged finds it in the
// ledger. Over long enough a history under the nemesis, a SIGTERM met a
// page, or the drain was never exercised.
func checkTerms(h *History) []string {
	var out []string
	met := 0
	for _, t := range h.Terms {
		if n := callsIn(h.Calls, t.At, t.Stopped); n > 0 {
			out = append(out, fmt.Sprintf("SIGTERM at %s: %d calls reached the upstream after it, before the daemon stopped at %s",
				t.At.UTC().Format(time.RFC3339), n, t.Stopped.UTC().Format(time.TimeOnly)))
		}
		if t.Held.First == "" || t.At.Before(h.passesKept()) {
			continue
		}
		met++
		if t.Hold < ingest.Delivery && !t.Stored {
			out = append(out, fmt.Sprintf("SIGTERM at %s met chart %s's page on the wire, answered %s later within its bound, and the page was not stored",
				t.At.UTC().Format(time.RFC3339), chartName(t.Held.Region, t.Held.Category), t.Hold))
		}
	}
	if h.Nemesis && h.Days >= exercisedDays && met == 0 {
		out = append(out, fmt.Sprintf("in %d days no SIGTERM met a chart page on the wire: the drain was not exercised", h.Days))
	}
	return out
}

// checkJoins: each `run --once` a second process ran beside the daemon,
// on its database and quota key, ended without an error but the
// limiter's refusal, and the runs it made are in the database: a join
// that ran nothing exercised nothing. What it spent is in every other
// check: the windows, the ledger, the daemon's slots.
func checkJoins(h *History) []string {
	var out []string
	for _, j := range h.Joins {
		at := j.From.UTC().Format(time.RFC3339)
		var failed []error
		for _, r := range j.Runs {
			if r.Err != nil && !errors.Is(r.Err, ingest.ErrQuotaExhausted) && !h.failingIn(r.Interval) {
				failed = append(failed, r.Err)
			}
		}
		if len(failed) > 0 {
			out = append(out, fmt.Sprintf("run --once of %s beside the daemon from %s: %d of %d runs failed outside the upstream's failures, the first: %v",
				j.Region, at, len(failed), len(j.Runs), failed[0]))
		}
		ran := slices.ContainsFunc(h.Runs, func(r Run) bool { return r.Region == j.Region && j.Contains(r.Started) })
		if !ran && !j.From.Before(h.passesKept()) {
			out = append(out, fmt.Sprintf("run --once of %s beside the daemon from %s to %s: no run in the database", j.Region, at, j.To.UTC().Format(time.TimeOnly)))
		}
	}
	return out
}

// failedPass is a chart pass the daemon's log says failed, and why.
var failedPass = regexp.MustCompile(`^time=(\S+) level=ERROR msg=pass region=(\S+) status=failed .* err=(.*)$`)

// checkFulls: while the disk was full, every chart pass that failed with
// the upstream answering said so, naming the disk (docs/operations/faults.md), rather than some other failure; what it was
// charged is in the ledger (checkCharged) and its chart is caught up once
// the room is back (the gaps, which a full disk excuses as a failing
// upstream). Over long enough a history under the nemesis, a full disk
// failed a pass, or it was never exercised.
func checkFulls(h *History) []string {
	if len(h.Fulls) == 0 && !(h.Nemesis && h.Days >= exercisedDays) {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	upstream := append(h.faultSpans(), h.blocks()...)
	var unclear []string
	met := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := failedPass.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, m[1])
		if !slices.ContainsFunc(h.Fulls, func(f Interval) bool { return f.Contains(at) }) ||
			slices.ContainsFunc(upstream, func(f Interval) bool { return f.Contains(at) }) {
			continue
		}
		if strings.Contains(m[3], "the disk is full") {
			met++
			continue
		}
		unclear = append(unclear, fmt.Sprintf("%s at %s: %s", m[2], at.UTC().Format(time.RFC3339), m[3]))
	}
	var out []string
	if len(unclear) > 0 {
		out = append(out, fmt.Sprintf("%d chart passes failed while the disk was full without saying so: %s", len(unclear), firstFew(unclear)))
	}
	if h.Nemesis && h.Days >= exercisedDays && met == 0 {
		out = append(out, fmt.Sprintf("in %d days no chart pass met the full disk: it was not exercised", h.Days))
	}
	return out
}
