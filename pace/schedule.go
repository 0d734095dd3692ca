package pace

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"time"

	"github.com/ingestworks/ingest"
)

// maxLook bounds how many of its slots Next looks ahead for a due one.
const maxLook = 10000

// Status is the plan as the report, the API, the dashboard, the metrics
// and a backfill's share show it: the one plan, published by the worker
// that paces.
type Status struct {
	At     time.Time // when it was made; zero before the first plan
	Shared bool      // other workers spend in a pool: this one counts on its share
	// DueFrom: the worker is a paced run --once that cron starts, and each
	// entry's Next is the time from which it is due, not a slot.
	DueFrom bool
	Pools   []PoolStatus
	Entries []EntryStatus
}

// PoolStatus is one pool's side of the plan.
type PoolStatus struct {
	Pool   string
	Rate   float64   // units an hour this worker plans to spend at
	Budget float64   // what this worker may spend by End
	End    time.Time // the plan's horizon: the pool's reset, or its window
	Spend  float64   // what the plan spends by End
	// Planned is the units an hour the plan spends at: Rate less it, over
	// the pool's Window, is what the plan leaves for others to take at once
	// without slowing it (a backfill's share).
	Planned float64
	Window  time.Duration
	Fixed   float64 // what every entry at its floor would spend by End
	// RunsOut is when the floors would empty the pool, at the current
	// rate; zero when they fit.
	RunsOut time.Time
	// FreeAt is when the pool's window frees room again; zero when it
	// has room now.
	FreeAt time.Time
	// Share is the part of the pool this worker counts on: 1/Workers,
	// Workers this one and each worker of another database the limiter
	// saw spend in the pool's window (pace.Share).
	Share   float64
	Workers int
}

// EntryStatus is one entry's side of the plan.
type EntryStatus struct {
	Name     string
	Priority int
	// Tier is the entry's region's tier (1 the most frequent): what the
	// proxy keeps for the daemon is what tier 1's own charts need.
	Tier    int `json:",omitempty"`
	Floor   time.Duration
	Every   time.Duration // the planned cadence; Never when it cannot run
	Cost    map[string]float64
	Last    time.Time // its latest completed pass; zero never
	Next    time.Time // the slot it runs at next, by the plan (DueFrom: the time from which it is due); zero: none
	Dropped bool      // the budget cannot hold it beside the entries above
	// Held is since when the plans hold it dropped though the pools would
	// keep it, and Returned when the plans last took it back; zero none
	// (Pacer.hold). A restarted pacer takes both from the last plan.
	Held     time.Time `json:",omitempty"`
	Returned time.Time `json:",omitempty"`
	// Declined is how many of its slots the pacer that made the plan
	// declined since it started, by reason: planned, never missed.
	Declined map[Declined]int `json:",omitempty"`
}

// Status returns the current plan.
func (p *Pacer) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status()
}

func (p *Pacer) status() Status {
	st := Status{At: p.planAt, DueFrom: p.cfg.DueFrom}
	if p.planAt.IsZero() {
		return st
	}
	for _, b := range p.budgets {
		ps := PoolStatus{Pool: b.Pool, Rate: b.rate() * 3600, Budget: b.Units, End: p.planAt.Add(b.Horizon),
			Spend: p.plan.Spend[b.Pool], Planned: p.plan.Rate[b.Pool] * 3600, Fixed: p.plan.Fixed[b.Pool],
			Workers: max(p.workers[b.Pool], 1)}
		ps.Share = cmp.Or(b.Share, 1)
		st.Shared = st.Shared || ps.Share < 1
		if pool, ok := p.pool(b.Pool); ok {
			ps.Window = pool.Window
		}
		if d, ok := p.plan.RunsOut[b.Pool]; ok {
			ps.RunsOut = p.planAt.Add(d)
		}
		for _, s := range p.states {
			if s.Pool == b.Pool {
				ps.FreeAt = s.FreeAt
			}
		}
		st.Pools = append(st.Pools, ps)
	}
	for i, e := range p.entries {
		st.Entries = append(st.Entries, EntryStatus{Name: e.Name, Priority: e.Priority, Tier: int(e.tier()), Floor: e.Floor,
			Every: p.plan.Every[e.Name], Cost: e.Cost, Last: p.last[e.Name], Next: p.next(i),
			Dropped: p.plan.Dropped[e.Name], Held: p.back[e.Name], Returned: p.returned[e.Name],
			Declined: maps.Clone(p.declined[e.Name])})
	}
	return st
}

// next is the first of the entry's slots after the plan was made at which
// it will have earned a pass, counting nothing, or under a cron the time
// from which it is due; zero when it has no slots or cannot run.
func (p *Pacer) next(i int) time.Time { return p.nextFrom(i, p.planAt) }

// nextFrom is next from the slot after from.
func (p *Pacer) nextFrom(i int, from time.Time) time.Time {
	e := p.entries[i]
	if p.cfg.DueFrom {
		return p.dueFrom(i)
	}
	if e.Slots == nil || p.every(i) == Never {
		return time.Time{}
	}
	slot := e.Slots.Next(from)
	for range maxLook {
		if p.earned(i, slot) >= 1-1e-9 {
			return slot
		}
		slot = e.Slots.Next(slot)
	}
	return time.Time{}
}

// Next is when the entry named runs next by the plan, made again now if
// it is due: the time report, the API and the pages give as its next run;
// zero when the plan runs it at none of its slots or does not know it.
func (p *Pacer) Next(ctx context.Context, name string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.index[name]
	if !ok {
		return time.Time{}
	}
	p.replan(ctx)
	return p.next(i)
}

// Stale reports whether the plan is too old to be a running daemon's: made
// more than twice its longest cadence (or floor) ago. A daemon that paces
// makes its plan again at least every floor, so a live one's never is.
func (s Status) Stale(now time.Time) bool {
	var longest time.Duration
	for _, e := range s.Entries {
		longest = max(longest, e.Floor)
		if e.Every != Never {
			longest = max(longest, e.Every)
		}
	}
	return s.At.IsZero() || now.Sub(s.At) > 2*longest
}

// Plan makes the plan now, whatever the last one, and returns it: for a
// reader with no daemon's plan to show.
func (p *Pacer) Plan(ctx context.Context) (Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stale = "asked"
	p.replan(ctx)
	if p.stale != "" {
		return Status{}, errors.New("the limiter did not answer")
	}
	return p.status(), nil
}

// tierOne is what the plan's tier-1 region charts spend of pool over span
// at their planned cadence, rounded up.
func (s Status) tierOne(pool string, span time.Duration) int64 {
	if span <= 0 {
		return 0
	}
	var need float64
	for _, e := range s.Entries {
		if e.Priority != 0 || e.Tier > 1 || e.Dropped || e.Every <= 0 || e.Every == Never {
			continue
		}
		need += e.Cost[pool] * math.Ceil(float64(span)/float64(e.Every))
	}
	return int64(math.Ceil(need))
}

func (s Status) pool(name string) PoolStatus {
	for _, p := range s.Pools {
		if p.Pool == name {
			return p
		}
	}
	return PoolStatus{Pool: name}
}

// Left is what of one pool others may take now beside the plan's tier-1
// charts, and the budget of the pool that says so: its window, or its day.
type Left struct {
	Units  int64     // what may be taken now: Room less Kept, never below zero
	Room   int64     // what the binding budget has left
	Kept   int64     // what the tier-1 charts need of Room
	Window bool      // the pool's window binds, not its day
	End    time.Time // the plan's horizon in the pool: its reset, or its window
}

// LeftBeside is what of the pool st others may take now and leave the
// plan's tier-1 charts their passes (what the proxy keeps from its
// clients, and what report says is not theirs): of the window's room,
// their need over the next whole window, and of the day's, their need to
// the reset. That suffices because a unit taken now stays in the window
// for one window and no longer, so the window at any moment of the next
// holds at most what it holds now and what is taken since, and the day
// drops nothing before its reset. A plan without its pool's window (one
// older than the field) keeps the window's need to the horizon only.
func (s Status) LeftBeside(st ingest.PoolState, now time.Time) Left {
	p := s.pool(st.Pool)
	day := Left{Room: st.Remaining, Kept: s.tierOne(st.Pool, p.End.Sub(now)), End: p.End}
	win := Left{Room: max(st.Limit-st.Reserve-st.Used, 0), Window: true, End: p.End,
		Kept: s.tierOne(st.Pool, max(p.Window, p.End.Sub(now)))}
	l := day
	if win.Room-win.Kept < day.Room-day.Kept {
		l = win
	}
	l.Units = max(l.Room-l.Kept, 0)
	return l
}
