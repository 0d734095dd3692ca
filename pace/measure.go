package pace

import (
	"context"
	"maps"
	"time"

	"github.com/ingestworks/ingest"
)

// costWindow is how many recent passes an entry's cost is the mean of.
const costWindow = 5

// dearer is how much a pass may cost over the plan's figure before the
// plan is made again.
const dearer = 1.1

// Ran tells the pacer how a pass of the entry ended: what it spent, by
// pool; the part of that outside the pass's own cost (daily: the category
// names a region's first pass of a day reads, which Config.Daily keeps
// room for); and its status. What it spent counts in full in the pacer's
// own spend; a completed pass is a cost measure of the rest, as the
// worker's history measures a pass; a pass dearer than planned, an
// entry's first, or one stopped for want of quota makes the plan again at
// once; the plan is published after every pass. A pass that did not
// complete and spent nothing (status "": it did not run after all) gives
// back what its grant took: its entry's next slot asks as if it had not
// been granted (docs/explanation/pacing.md).
func (p *Pacer) Ran(name string, units, daily map[string]int64, status ingest.RunStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.cfg.History == nil {
		for pool, u := range units {
			if u > 0 {
				p.mine[pool] = append(p.mine[pool], Spent{At: now, Units: u})
			}
		}
	}
	i, ok := p.index[name]
	if !ok {
		return
	}
	slot, granted := p.running[name]
	was := p.before[name]
	delete(p.running, name)
	delete(p.before, name)
	if granted && status != ingest.StatusCompleted && ingest.SpentNothing(units) {
		// It spent none of what its credit stood for: it did not run
		// after all, or failed before the limiter admitted a call (the
		// limiter unavailable). The entry's next slot asks as if this one
		// had not been granted.
		p.credit[name] = was.credit
		if p.asked[name] = was.at; !was.asked {
			delete(p.asked, name)
		}
	}
	switch status {
	case ingest.StatusStopped:
		p.stale = "a pass was stopped for want of quota"
	case ingest.StatusCompleted:
		if !granted {
			slot = now
		}
		if slot.After(p.last[name]) {
			p.last[name] = slot
		}
		p.measured(i, passCost(units, daily))
	}
	switch {
	case p.stale != "" && !p.planAt.IsZero():
		p.replan(context.Background()) // and publishes
	case granted && p.cfg.Publish != nil && !p.planAt.IsZero():
		p.cfg.Publish(context.Background(), p.status())
	}
}

// measured records a completed pass's cost and re-plans when it was dearer
// than the plan thought, or the entry's first: a guess is not kept longer
// than one pass.
func (p *Pacer) measured(i int, units map[string]int64) {
	e := &p.entries[i]
	got := map[string]float64{}
	for pool, u := range units {
		got[pool] = float64(u)
		if float64(u) > e.Cost[pool]*dearer {
			p.stale = "a pass cost more than planned"
		}
	}
	if len(p.recent[e.Name]) == 0 && p.stale == "" {
		p.stale = "an entry's first pass was measured"
	}
	r := append(p.recent[e.Name], got)
	if len(r) > costWindow {
		r = r[len(r)-costWindow:]
	}
	p.recent[e.Name] = r
	e.Cost = mean(r)
}

// passCost is what a pass spent less what it spent outside its own cost.
func passCost(units, daily map[string]int64) map[string]int64 {
	if len(daily) == 0 {
		return units
	}
	out := make(map[string]int64, len(units))
	for pool, u := range units {
		out[pool] = u - daily[pool]
	}
	return out
}

func mean(passes []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range passes {
		for pool, u := range m {
			out[pool] += u / float64(len(passes))
		}
	}
	return out
}

// load reads the worker's own spend from its database, each entry's last
// pass and measured cost, and at the first plan the hold the last
// published plan left.
func (p *Pacer) load(ctx context.Context, now time.Time) {
	h, err := p.cfg.History(ctx, now)
	if err != nil {
		p.logger().Warn("pace: read this worker's history; planning with what it saw", ingest.LogErr, err)
		return
	}
	for _, pool := range p.cfg.Pools {
		p.mine[pool.Name], p.short[pool.Name] = h.Spent[pool.Name], h.Short[pool.Name]
	}
	if p.planAt.IsZero() && h.Dropped != nil {
		p.plan.Dropped = h.Dropped
		maps.Copy(p.back, h.Held)
		maps.Copy(p.returned, h.Returned)
	}
	for name, at := range h.Last {
		p.passed(name, at)
	}
	for i, e := range p.entries {
		if c, ok := h.Cost[e.Name]; ok && len(c) > 0 {
			p.entries[i].Cost = c
			if len(p.recent[e.Name]) == 0 {
				// measured by earlier processes: not a guess
				p.recent[e.Name] = []map[string]float64{c}
			}
		}
	}
}
