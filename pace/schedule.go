package pace

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"
)

// maxLook bounds how many of its slots Schedule looks ahead for a due one.
const maxLook = 10000

// Schedule adapts an entry's staggered schedule (base: never faster than
// the floor, and staggered so that two charts of one region never start
// together) to the plan: Next is the first of base's slots after t at
// which the entry will have earned a pass at its planned cadence, and
// counts that pass, as cron runs the entry at the time Next gives. It
// re-plans first when an event asked for it, so a re-plan reaches an entry
// from its next firing. Use it or Due for an entry, not both: each counts
// the passes it allows.
func (p *Pacer) Schedule(name string, base cron.Schedule) cron.Schedule {
	return schedule{p: p, name: name, base: base}
}

type schedule struct {
	p    *Pacer
	name string
	base cron.Schedule
}

func (s schedule) Next(t time.Time) time.Time {
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := s.base.Next(t)
	i, ok := p.index[s.name]
	if !ok {
		return slot
	}
	if last, ok := p.asked[s.name]; ok && last.After(t) {
		// Asked again before the slot it gave (the daemon logs the next
		// run as cron starts): the same slot, counted once.
		return last
	}
	p.replan(context.Background())
	for range maxLook {
		if c := p.earned(s.name, i, slot); c >= 1-1e-9 {
			p.credit[s.name], p.asked[s.name] = c-1, slot
			return slot
		}
		slot = s.base.Next(slot)
	}
	return slot
}

// Status is the plan as the report and the metrics show it.
type Status struct {
	At      time.Time // when it was made; zero before the first plan
	Pools   []PoolStatus
	Entries []EntryStatus
}

// PoolStatus is one pool's side of the plan.
type PoolStatus struct {
	Pool   string
	Budget float64   // what this worker may spend by End
	End    time.Time // the plan's horizon: the pool's reset, or its window
	Spend  float64   // what the plan spends by End
	Fixed  float64   // what every entry at its floor would spend by End
	// RunsOut is when the floors would empty the pool, at the current
	// rate; zero when they fit.
	RunsOut time.Time
}

// EntryStatus is one entry's side of the plan.
type EntryStatus struct {
	Name     string
	Priority int
	Floor    time.Duration
	Every    time.Duration // the planned cadence; Never when it cannot run
	Cost     map[string]float64
}

// Status returns the current plan.
func (p *Pacer) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{At: p.planAt}
	if p.planAt.IsZero() {
		return st
	}
	for _, b := range p.budgets {
		ps := PoolStatus{Pool: b.Pool, Budget: b.Units, End: p.planAt.Add(b.Horizon),
			Spend: p.plan.Spend[b.Pool], Fixed: p.plan.Fixed[b.Pool]}
		if d, ok := p.plan.RunsOut[b.Pool]; ok {
			ps.RunsOut = p.planAt.Add(d)
		}
		st.Pools = append(st.Pools, ps)
	}
	for _, e := range p.entries {
		st.Entries = append(st.Entries, EntryStatus{Name: e.Name, Priority: e.Priority, Floor: e.Floor,
			Every: p.plan.Every[e.Name], Cost: e.Cost})
	}
	return st
}
