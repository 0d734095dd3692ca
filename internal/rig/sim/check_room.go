package sim

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// skewMost is the furthest behind the nemesis sets the upstream's Date:
// an entry the limiter stamped on it leaves the limiter's window that much
// before the fake's charge leaves the fake's.
const skewMost = 2 * time.Hour

// checkRoomAtStart: paced, a pass starts only where the pool holds it,
// and a category chart only where the pool's room would also hold a round
// of the regions' own charts after it (docs/explanation/pacing.md: a pass
// that finds no room at its slot waits there for it; "Priorities, and
// what is dropped"). At each of the daemon's chart passes, the pool's
// limit less reserve, less what the fake charged in its window before
// that instant, holds the chart's pass and, for a category chart, a round
// of the own charts after it. The fake's count is read short of the
// window by the upstream's latency and a second, so that every unit in
// it is one the limiter had admitted by then (a page a SIGTERM met, held
// up to its delivery bound, aside); each chart is counted at
// the fewest pages a completed pass of it stored (an own chart at the
// pages its depth asks, a category chart at none, before one did), less
// than any measure the plan takes. A category chart's is not held while
// the log says the plans may have dropped an own chart (the round is of
// the charts they keep); no pass's within a window of a wrong Date or,
// on Redis, of a loss or a stall, when the limiter counts less than the
// fake did.
func checkRoomAtStart(h *History) []string {
	return passesHeld(h, "pool", func(p ingest.Pool, started time.Time) (time.Time, time.Duration, bool) {
		return started.Add(-p.Window), p.Window, p.Window > 0
	})
}

// passesHeld holds each of the daemon's paced chart passes to the room a
// pool had at its start, counted as checkRoomAtStart counts it, over the
// span since says: where it begins (the fake's count read from the
// upstream's latency and a second after it), how far back it reaches
// (for what the limiter may have counted short), and whether the pool
// has one. what names the span in a finding.
func passesHeld(h *History, what string, since func(p ingest.Pool, started time.Time) (from time.Time, reach time.Duration, ok bool)) []string {
	if h.NoPace {
		return nil
	}
	pages, cats, dropped := h.fewestPages(), h.fewestCategoryPages(), h.ownDroppedAt()
	calls := inTime(h.Calls)
	var out []string
	for _, pool := range h.Costs.Pools {
		per := h.pageUnits(pool.Name)
		if _, _, ok := since(pool, h.Start); per == 0 || !ok {
			continue
		}
		var round int64
		for _, c := range h.Charts {
			round += pages[c.Code] * per
		}
		var short []string
		n := 0
		for _, r := range h.Runs {
			need := pages[r.Region] * per
			if r.Category != "" {
				need = round + cats[chartName(r.Region, r.Category)]*per
			}
			from, reach, _ := since(pool, r.Started)
			if h.beside(r) || h.peers(r) || (r.Category != "" && dropped(r.Started)) || h.limiterBehind(r.Started, reach) {
				continue
			}
			n++
			used := calls.chargedBefore(pool.Name, from.Add(h.Latency+time.Second), r.Started)
			if left := pool.Capacity() - used; left < need {
				short = append(short, fmt.Sprintf("%s at %s with %d left of the %d it needs", chartName(r.Region, r.Category), r.Started.UTC().Format(time.RFC3339), left, need))
			}
		}
		if len(short) > 0 {
			out = append(out, fmt.Sprintf("pool %s: %d of %d chart passes started where the %s did not hold them (a category chart: and a round of the regions' own charts after it): %s",
				pool.Name, len(short), n, what, firstFew(short)))
		}
	}
	return out
}

// fewestCategoryPages is each category chart's fewest pages of a
// completed pass the daemon ran, by name; none for one that never
// completed.
func (h *History) fewestCategoryPages() map[string]int64 {
	out := map[string]int64{}
	for _, r := range h.Runs {
		if r.Category == "" || r.Status != ingest.StatusCompleted || h.beside(r) {
			continue
		}
		name := chartName(r.Region, r.Category)
		if n, ok := out[name]; !ok || int64(r.Pages) < n {
			out[name] = int64(r.Pages)
		}
	}
	return out
}

// ownDroppedAt says whether, by the daemon's log, the plans at t may
// have dropped a region's own chart: a line dropped one or more entries
// than it names, and the lines taking entries back since have not taken
// back as many as were dropped.
func (h *History) ownDroppedAt() func(time.Time) bool {
	type change struct {
		at    time.Time
		n     int
		maybe bool
	}
	var changes []change
	if data, err := os.ReadFile(h.Log); h.Log != "" && err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			m := dropLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil {
				continue
			}
			n, _ := strconv.Atoi(m[3])
			if m[2] != "drops" {
				n = -n
			}
			changes = append(changes, change{at, n, h.namesOwn(strings.Trim(m[4], `"`))})
		}
	}
	return func(t time.Time) bool {
		dropped, maybe := 0, false
		for _, c := range changes {
			if c.at.After(t) {
				break
			}
			dropped += c.n
			maybe = maybe || c.maybe
			if dropped <= 0 {
				dropped, maybe = 0, false
			}
		}
		return maybe
	}
}

// namesOwn says whether a drop line's entries name a region's own chart,
// or more entries than the line lists.
func (h *History) namesOwn(list string) bool {
	if strings.Contains(list, " and ") {
		return true
	}
	for _, e := range strings.Split(list, ",") {
		if slices.ContainsFunc(h.Charts, func(c regions.Chart) bool { return c.Code == e }) {
			return true
		}
	}
	return false
}

// pageUnits is what a chart's page charges pool.
func (h *History) pageUnits(pool string) int64 {
	charges, err := h.Costs.Op(ingest.OpVideosList)
	if err != nil {
		return 0
	}
	var units int64
	for _, c := range charges {
		if c.Pool == pool {
			units += c.Units
		}
	}
	return units
}

// limiterBehind says whether the limiter may have counted less than the
// fake in the window before t: a wrong Date within it (and skewMost), a
// page held on the wire at its edge (a SIGTERM's), or,
// on Redis, a loss of its data or a stall (calls gone ahead unmetered).
func (h *History) limiterBehind(t time.Time, window time.Duration) bool {
	for _, s := range h.Skews {
		if s.From.Before(t) && t.Sub(s.To) < window+skewMost {
			return true
		}
	}
	for _, s := range h.Terms {
		if edge := t.Add(-window); s.At.After(edge.Add(-ingest.Delivery)) && s.At.Before(edge.Add(ingest.Delivery)) {
			return true
		}
	}
	if h.Redis == "" {
		return false
	}
	for _, at := range append(append([]time.Time{}, h.Losses...), h.Stalls...) {
		if !at.After(t) && t.Sub(at) < window {
			return true
		}
	}
	return false
}
