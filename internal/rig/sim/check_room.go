package sim

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
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
// that instant, holds the chart's pass (a region's own) or a round of the
// own charts (a category chart). The fake's count is read short of the
// window by a call's delivery bound and a second, so that every unit in
// it is one the limiter had admitted by then; each own chart is counted
// at the fewest pages a completed pass of it stored (fewestPages), less
// than any measure the plan takes. Not held once the log says a plan
// dropped an own chart (the round is of the charts the plan keeps), nor
// within a window of a wrong Date or, on Redis, of a loss or a stall,
// when the limiter counts less than the fake did.
func checkRoomAtStart(h *History) []string {
	if h.NoPace {
		return nil
	}
	pages, dropped := h.fewestPages(), h.ownDropped()
	var out []string
	for _, pool := range h.Costs.Pools {
		per := h.pageUnits(pool.Name)
		if per == 0 || pool.Window <= 0 {
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
				need = round
			}
			if h.beside(r) || h.peers(r) || (r.Category != "" && dropped) || h.limiterBehind(r.Started, pool.Window) {
				continue
			}
			n++
			used := chargedBefore(h.Calls, pool.Name, r.Started.Add(-pool.Window+ingest.Delivery+time.Second), r.Started)
			if left := pool.Capacity() - used; left < need {
				short = append(short, fmt.Sprintf("%s at %s with %d left of the %d it needs", chartName(r.Region, r.Category), r.Started.UTC().Format(time.RFC3339), left, need))
			}
		}
		if len(short) > 0 {
			out = append(out, fmt.Sprintf("pool %s: %d of %d chart passes started where the pool did not hold them (a category chart: and a round of the regions' own charts after it): %s",
				pool.Name, len(short), n, firstFew(short)))
		}
	}
	return out
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

// chargedBefore is what the fake charged pool after from and before to.
func chargedBefore(calls []Call, pool string, from, to time.Time) int64 {
	var lo, hi int64
	for _, c := range calls {
		if !c.At.Before(to) {
			break
		}
		if !c.At.After(from) {
			lo = c.Charged[pool]
		}
		hi = c.Charged[pool]
	}
	return hi - lo
}

// limiterBehind says whether the limiter may have counted less than the
// fake in the window before t: a wrong Date within it (and skewMost), or,
// on Redis, a loss of its data or a stall (calls gone ahead unmetered).
func (h *History) limiterBehind(t time.Time, window time.Duration) bool {
	for _, s := range h.Skews {
		if s.From.Before(t) && t.Sub(s.To) < window+skewMost {
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
