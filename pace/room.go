package pace

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
)

// fits reports whether the pools hold a pass of the entry now, as the
// limiter counts them: the room the pacer holds is read again first
// unless this ask read it already (its plan). Room frees as
// the window slides, and what others spend between two plans (a
// co-tenant's run --once, another worker, a call outside the passes) is
// in no room the pacer counted down itself: a pass let in on that room
// where a co-tenant had spent the day would stop at its first page, its
// slot spent. A limiter that does not answer leaves the room as held. A
// chart below level 0 is read again only when the room held says no, as
// its passes keep a round of the level 0 charts' room beside them: read
// at each ask, those declined for room wait at their slots together and
// run in one burst as the window frees it, past their spread.
func (p *Pacer) fits(ctx context.Context, i int) bool {
	if p.planAt.IsZero() {
		return true
	}
	if !p.fresh && (p.entries[i].Priority <= 0 || !p.hasRoom(i)) {
		if states, err := p.cfg.State(ctx); err == nil {
			p.roomOf(states)
		}
	}
	return p.hasRoom(i)
}

// hasRoom reports whether the pools hold a pass of the entry now. An
// entry below level 0 also leaves room for a round of the level 0 entries
// the plan keeps: a category chart never takes what a region's own chart
// needs next.
func (p *Pacer) hasRoom(i int) bool {
	e := p.entries[i]
	for pool, c := range e.Cost {
		need := c
		if e.Priority > 0 {
			need += p.top[pool]
		}
		if r, ok := p.room[pool]; ok && need > r+1e-9 {
			return false
		}
	}
	return true
}

// topRound is what one pass of each level 0 entry the plan keeps costs, by
// pool.
func (p *Pacer) topRound() map[string]float64 {
	out := map[string]float64{}
	for _, e := range p.entries {
		if e.Priority > 0 || p.plan.Every[e.Name] == Never {
			continue
		}
		for pool, c := range e.Cost {
			out[pool] += c
		}
	}
	return out
}

// group is a set of entries whose passes keep to one planned rate
// together (spread): a level, and within it a tier, so that a tier's
// passes never wait for a higher tier's.
type group struct{ level, tier int }

// none is the group of an entry that keeps its slots.
var none = group{level: -1}

// spreads is the entry's group: its tier of the levels below level 0, or
// of the regions' own charts the plan stretched beyond their floors; none
// for a chart at its floor, which keeps its slots.
func (p *Pacer) spreads(i int) group {
	e := p.entries[i]
	switch every := p.plan.Every[e.Name]; {
	case every == Never || every <= 0 || e.Floor <= 0:
		return none
	case e.Priority > 0:
		return group{1, max(e.Tier, 1)}
	case every > e.Floor:
		return group{0, max(e.Tier, 1)}
	}
	return none
}

// groupRates is what the plan spends in each pool, in units a second, by
// group (spreads).
func (p *Pacer) groupRates() map[group]map[string]float64 {
	out := map[group]map[string]float64{}
	for i, e := range p.entries {
		if g := p.spreads(i); g != none {
			if out[g] == nil {
				out[g] = map[string]float64{}
			}
			for pool, c := range e.Cost {
				out[g][pool] += c / p.plan.Every[e.Name].Seconds()
			}
		}
	}
	return out
}

// spread reports whether a pass keeps its group (spreads) within its
// planned rate over the entry's floor, and one pass: the category charts
// of one cadence, due at once, then run one after another over the hours
// instead of in one burst, and so do the regions' own charts the plan
// stretched (a pool that cannot hold them at their floors). What they
// spent is read from their last passes, so a run --once and a restart
// count it. A region's own chart that would pass its staleness bound
// before its next slot is not asked (bounded).
func (p *Pacer) spread(i int, at time.Time) bool {
	e, g := p.entries[i], p.spreads(i)
	if g == none {
		return true
	}
	since := at.Add(-e.Floor)
	for pool, c := range e.Cost {
		rate := p.rates[g][pool]
		if c <= 0 || rate <= 0 {
			continue
		}
		spent := 0.0
		for j, o := range p.entries {
			last, ok := p.last[o.Name]
			if slot, busy := p.running[o.Name]; busy {
				last, ok = slot, true
			}
			last = p.inGrain(j, last) // a start a little after its slot, or a cron's, is in that slot's floor
			if p.spreads(j) == g && ok && last.After(since) && !last.After(at) {
				spent += o.Cost[pool]
			}
		}
		// One pass over the planned rate is the slack the plan keeps: a
		// pass's recorded start and its slot may both fall in one floor.
		// The regions' own charts keep one more: each has one slot a
		// floor, and a pass held back there waits a whole floor.
		allow := max(rate*e.Floor.Seconds(), c)
		if g.level == 0 {
			allow = rate*e.Floor.Seconds() + c
		}
		if spent > allow+1e-9 {
			return false
		}
	}
	return true
}

// bounded reports whether the entry, a region's own chart the plan
// stretched, would pass its staleness bound (Entry.Limit) if it waited
// from at to its next slot, counted from its latest pass's start, not
// from the slot it counts as (a catch-up is its next slot's pass, up to a
// slot after it ran): it then runs at at, whatever it earned and its
// group spent, and the promise is kept after a downtime too. A chart at
// its floor keeps its slots.
func (p *Pacer) bounded(i int, at time.Time) bool {
	e := p.entries[i]
	if e.Priority > 0 || e.Slots == nil || p.spreads(i) == none {
		return false
	}
	last, ok := p.last[e.Name]
	return ok && !last.IsZero() && e.Slots.Next(at).Sub(last) > e.Limit(p.cfg.Bound)
}

// pastCadence reports whether the entry, a region's own chart the plan
// stretched, would wait past its cadence's slot if it waited from at to
// its next slot: its cadence rounded up to its slots (a cadence of 1.4
// floors runs a floor or two apart), counted from the slot its latest
// pass counts as. The spread smooths the group's passes, and never holds
// one of them a slot beyond that.
func (p *Pacer) pastCadence(i int, at time.Time) bool {
	e := p.entries[i]
	if e.Priority > 0 || e.Slots == nil || e.Floor <= 0 || p.spreads(i) == none {
		return false
	}
	last, ok := p.last[e.Name]
	if !ok || last.IsZero() {
		return false
	}
	every := p.every(i)
	slots := (every + e.Floor - 1) / e.Floor * e.Floor
	return e.Slots.Next(at).Sub(p.counted(i, last, true)) > slots
}

// take counts a granted pass against the room until the limiter is read
// again.
func (p *Pacer) take(i int) {
	for pool, c := range p.entries[i].Cost {
		if _, ok := p.room[pool]; ok {
			p.room[pool] -= c
		}
	}
}

// roomOf is what each pool holds now: what remains, whatever this
// worker's share, less a whole pass of each entry granted and still
// running. The share paces what the plan spends over the window; the room
// at a slot is the limiter's to give, first come first served, and a pass
// that waited for its share of it would wait while callers that do not
// wait took each unit as it freed. A running pass's calls are counted by
// the limiter only as they go out: two passes waiting for room and let in
// on one reading of it would both start where the pool holds one, and
// one would stop midway, its slot spent. What a running pass already
// spent is counted twice until it ends, which only waits a little.
func (p *Pacer) roomOf(states []ingest.PoolState) {
	p.fresh = true
	for _, st := range states {
		if _, ok := p.pool(st.Pool); !ok {
			continue
		}
		p.room[st.Pool] = float64(st.Remaining)
	}
	for name := range p.running {
		if i, ok := p.index[name]; ok {
			p.take(i)
		}
	}
}
