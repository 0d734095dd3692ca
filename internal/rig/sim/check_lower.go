package sim

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// checkLowerDropped: when a pool cannot give every region's own chart a
// pass each of its tier's --every, every lower level of that pool is
// dropped (docs/explanation/pacing.md, "Scarcity stretches before it
// drops"): paced, the category charts, the refresh and tracking that draw
// from it run no pass. A pool is short so when the own charts at their
// floors want more than its limit less reserve over its window, the most
// the pacer's rate ever is: each chart at the fewest pages a completed
// pass of it stored, at the pages its depth asks before one did, so that
// no measure the plan takes makes them fit. Not held once the log says a
// plan dropped an own chart: a chart dropped and held leaves its part of
// the pool to the lower levels.
func checkLowerDropped(h *History) []string {
	if h.NoPace || h.ownDropped() {
		return nil
	}
	var out []string
	for _, pool := range h.shortPools() {
		for _, c := range h.lowerLevels(pool) {
			if c.n > 0 {
				out = append(out, fmt.Sprintf("pool %s: the regions' own charts at their --every want more than it holds, yet %s ran %d passes (first at %s): a short pool's lower levels are dropped",
					pool, c.name, c.n, c.first.UTC().Format(time.RFC3339)))
			}
		}
	}
	return out
}

// lowerCount is how many passes a lower level ran, and its first.
type lowerCount struct {
	name  string
	n     int
	first time.Time
}

// lowerLevels is each lower level drawing from pool, with the passes it
// ran: the category charts (the daemon's, not a second process's), the
// refresh and tracking.
func (h *History) lowerLevels(pool string) []lowerCount {
	var out []lowerCount
	if h.draws(ingest.OpVideosList, pool) {
		cats := lowerCount{name: "the category charts"}
		for _, r := range h.Runs {
			if r.Category != "" && !h.beside(r) {
				cats.add(r.Started)
			}
		}
		out = append(out, cats, h.passesOf("refresh", "the refresh"))
	}
	if h.TrackFor > 0 && h.draws(ingest.OpBatchGetStats, pool) {
		out = append(out, h.passesOf("track", "tracking"))
	}
	return out
}

func (c *lowerCount) add(at time.Time) {
	if c.n == 0 || at.Before(c.first) {
		c.first = at
	}
	c.n++
}

// passesOf is the database's passes of entry the daemon ran: a second
// process's `run --once` beside it is no pass of the daemon's plan.
func (h *History) passesOf(entry, name string) lowerCount {
	c := lowerCount{name: name}
	for _, p := range h.Passes {
		if p.Entry == entry && !h.besideAt(p.Started) {
			c.add(p.Started)
		}
	}
	return c
}

// besideAt says whether a second process's run --once was running at t.
func (h *History) besideAt(t time.Time) bool {
	for _, j := range h.Joins {
		if j.running(t) {
			return true
		}
	}
	return false
}

// draws says whether op charges pool.
func (h *History) draws(op, pool string) bool {
	charges, err := h.Costs.Op(op)
	if err != nil {
		return false
	}
	for _, c := range charges {
		if c.Pool == pool && c.Units > 0 {
			return true
		}
	}
	return false
}

// shortPools are the pools the regions' own charts at their floors want
// more of than the pool's limit less reserve over its window, each chart
// at the fewest pages a completed pass of it stored.
func (h *History) shortPools() []string {
	charges, err := h.Costs.Op(ingest.OpVideosList)
	if err != nil {
		return nil
	}
	pages := h.fewestPages()
	var out []string
	for _, c := range charges {
		var want float64 // units a second
		for _, ch := range h.Charts {
			want += float64(pages[ch.Code]*c.Units) / (time.Duration(ch.Tier) * h.Every).Seconds()
		}
		for _, p := range h.Costs.Pools {
			if p.Name == c.Pool && p.Window > 0 && want > float64(p.Capacity())/p.Window.Seconds() {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// fewestPages is each own chart's fewest pages of a completed pass the
// daemon ran, the pages its depth asks when none completed.
func (h *History) fewestPages() map[string]int64 {
	out := map[string]int64{}
	for _, c := range h.Charts {
		out[c.Code] = int64((c.Depth + regions.PageSize - 1) / regions.PageSize)
	}
	ran := map[string]bool{}
	for _, r := range h.Runs {
		n, own := out[r.Region]
		if !own || r.Category != "" || r.Status != ingest.StatusCompleted || h.beside(r) {
			continue
		}
		if !ran[r.Region] || int64(r.Pages) < n {
			out[r.Region] = int64(r.Pages)
		}
		ran[r.Region] = true
	}
	return out
}

// ownDropped says whether the daemon's log says a plan dropped a region's
// own chart, or more entries than its line names.
func (h *History) ownDropped() bool {
	if h.Log == "" {
		return false
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m := dropLine.FindStringSubmatch(line); m != nil && m[2] == "drops" && h.namesOwn(strings.Trim(m[4], `"`)) {
			return true
		}
	}
	return false
}
