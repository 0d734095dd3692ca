package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// A call that draws from two pools: costs.yaml may price an operation in a
// pool of the daemon's own beside the upstream's (a budget for the charts
// inside the default pool), which the upstream never counts. The limiter
// promises all or nothing across every pool a call draws from
// (docs/contract.md, the limiter's promises 1 and 2): a call admitted is
// counted in each, so that none of them spends past its limit less
// reserve over its window or its day, and a call refused in one is
// charged in none.

// ownPools are the pools of costs.yaml that no operation of the upstream
// charges: budgets the daemon keeps inside the upstream's quota, which
// only costs.yaml prices.
func (h *History) ownPools() []string {
	var out []string
	for _, p := range h.Costs.Pools {
		if !slices.ContainsFunc(ingest.Operations, func(o ingest.Operation) bool {
			return slices.ContainsFunc(o.Cost, func(ch ingest.Charge) bool { return ch.Pool == p.Name })
		}) {
			out = append(out, p.Name)
		}
	}
	return out
}

// chargesOf is what a call drew from each pool: the upstream's charge of
// its operation (chargeOf), and costs.yaml's price of it in the daemon's
// own pools.
func (h *History) chargesOf(c Call) []ingest.Charge {
	out := chargeOf(c)
	own := h.ownPools()
	if len(own) == 0 {
		return out
	}
	path := c.Path[strings.LastIndex(c.Path, "/")+1:]
	for _, o := range ingest.Operations {
		if o.Path != path {
			continue
		}
		priced, _ := h.Costs.Op(o.Name)
		for _, ch := range priced {
			if slices.Contains(own, ch.Pool) {
				out = append(out, ch)
			}
		}
	}
	return out
}

// checkOwnPools: in none of the daemon's own pools did the calls that
// reached the upstream draw more than its limit less reserve over any
// trailing window, or over any calendar day of its zone: each call
// counted in every pool its operation draws from, by costs.yaml. A call
// counted in its first pool alone leaves the others unspent in the
// limiter's count and spends them past their limit. A history whose own
// pools were never near their limit exercised nothing of it.
func checkOwnPools(h *History) []string {
	var out []string
	l := upstreamLedgerOf(h)
	for _, name := range h.ownPools() {
		p, _ := h.Costs.Pool(name)
		cs := l.charges[name]
		most, at := chargesMost(cs, p.Window)
		if most > p.Capacity() {
			out = append(out, fmt.Sprintf("pool %s (costs.yaml's own): the calls that reached the upstream drew %d units in the %s to %s, over its limit less reserve (%d)",
				name, most, p.Window, stamp(at), p.Capacity()))
		}
		if p.Day != nil {
			for _, d := range daysOf(cs, p.Day) {
				if d.charged > p.Capacity() {
					out = append(out, fmt.Sprintf("pool %s (costs.yaml's own): the calls that reached the upstream drew %d units on its day of %s, over its limit less reserve (%d)",
						name, d.charged, d.start.Format(time.DateOnly), p.Capacity()))
				}
			}
		}
		if h.Exhaust && most < p.Capacity()-p.Capacity()/20 {
			out = append(out, fmt.Sprintf("pool %s (costs.yaml's own): the workload was to spend it, yet the calls drew at most %d of its %d in a window: its limit was never reached",
				name, most, p.Capacity()))
		}
	}
	return out
}

// chargesMost is the most charges drew over any trailing window, and
// when that window ended.
func chargesMost(cs []charge, window time.Duration) (most int64, at time.Time) {
	j := 0
	var sum int64
	for _, c := range cs {
		sum += c.units
		for !cs[j].at.After(c.at.Add(-window)) {
			sum -= cs[j].units
			j++
		}
		if sum > most {
			most, at = sum, c.at
		}
	}
	return most, at
}

// daysOf is what charges drew on each calendar day of loc that had one.
func daysOf(cs []charge, loc *time.Location) []upstreamDay {
	var out []upstreamDay
	for _, c := range cs {
		d, _ := dayAround(loc, c.at)
		if len(out) == 0 || !out[len(out)-1].start.Equal(d) {
			out = append(out, upstreamDay{start: d})
		}
		out[len(out)-1].charged += c.units
	}
	return out
}
