package pace

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
)

// ranElsewhere takes a pass of the entry another process started since
// this one last looked as its latest: the entry earns from that pass on.
func (p *Pacer) ranElsewhere(ctx context.Context, name string) {
	if p.cfg.LastPass == nil {
		return
	}
	if at, err := p.cfg.LastPass(ctx, name); err == nil {
		p.passed(name, at)
	}
}

// passed takes a pass of the entry that started at as its latest when it
// is, unless it was stamped more than ingest.AheadGuard ahead of the
// pacer's clock: such a start was made by a clock stepped ahead, and
// taken as the latest pass it would hold the entry for as long as the
// step.
func (p *Pacer) passed(name string, at time.Time) {
	if at.After(p.last[name]) && !at.After(p.now().Add(ingest.AheadGuard)) {
		p.last[name] = at
	}
}

// forgetAhead drops the latest passes that now lie more than
// ingest.AheadGuard ahead of the pacer's clock: those this process ran or
// read while its clock was stepped ahead, which the step's end left in
// the future. Such an entry earns as one never run (passed).
func (p *Pacer) forgetAhead() {
	ahead := p.now().Add(ingest.AheadGuard)
	for name, at := range p.last {
		if at.After(ahead) {
			delete(p.last, name)
		}
	}
}

// counted is when a pass that started at t counts from, as seen from an
// ask at one of the entry's slots (slotted): the slot it started within a
// grain of (the stagger's step), the slot it recorded (which the store
// gives as its start), or, for a pass off the slots (a catch-up at start),
// the first of its slots after t: a catch-up is the pass of the slot after
// it, so that slot does not run the chart again half a cadence on and the
// next pass is a cadence after it. From any other ask (a cron's start, a
// catch-up) the start of the grain it started in, so that a pass started
// a little after a cron's start is due again at the cron's start a
// cadence later. The grain is the tolerance the running pacer gives a late
// pass (kept), so a restarted pacer, which has only the recorded start,
// counts a pass slowed by the lease, the store or the database as its
// slot's too: a restart at any moment adds no pass and takes none away. A
// catch-up that starts within a grain after the chart's slot is that
// slot's pass, for every pacer alike.
func (p *Pacer) counted(i int, t time.Time, slotted bool) time.Time {
	s := p.entries[i].Slots
	if s == nil || t.IsZero() {
		return t
	}
	if !slotted {
		return p.inGrain(i, t)
	}
	if slot := s.Next(t.Add(-p.grain(i))); !slot.After(t) {
		return slot
	}
	return s.Next(t)
}

// inGrain is the start of the grain of the entry's schedule that t is in,
// aligned to the Unix epoch as the slots are: a pass counts there against
// its group's rate (spread), so that a start a little after its slot, or
// a cron's, is in that slot's floor.
func (p *Pacer) inGrain(i int, t time.Time) time.Time {
	g := p.grain(i)
	if g <= 0 || t.IsZero() {
		return t
	}
	since := t.Sub(time.Unix(0, 0))
	return t.Add(-(since%g + g) % g)
}

// grain is the time between two slots of the entry's schedule; zero
// without one.
func (p *Pacer) grain(i int) time.Duration {
	if s := p.entries[i].Slots; s != nil {
		return s.Grain()
	}
	return 0
}

// onSlot reports whether t is one of the entry's slots: a daemon's ask at
// a slot, not a catch-up's at the time it runs.
func (p *Pacer) onSlot(i int, t time.Time) bool {
	s := p.entries[i].Slots
	return s != nil && s.Next(t.Add(-time.Nanosecond)).Equal(t)
}

// earned is the entry's credit at slot: what it kept at the slot it was
// last asked at, or nothing from a pass counted after that slot (another
// process's, a catch-up's), and the time since over its cadence.
func (p *Pacer) earned(i int, slot time.Time) float64 {
	from, credit, asked := p.kept(i, p.onSlot(i, slot))
	every := p.every(i)
	switch {
	case every == Never:
		return min(credit, 1-1e-6)
	case !asked:
		return 1
	case every <= 0 || !slot.After(from):
		return credit
	}
	return min(credit, 1) + min(float64(slot.Sub(from))/float64(every), 1)
}

// kept is what the entry earns from, asked from a slot or not (counted):
// the time and the credit it had then; asked is false when it has neither
// been asked nor run. A pass that started within a grain after an ask at
// a slot is that slot's, however late it started, with the credit the
// slot left; after a catch-up's ask, seen from a slot, it counts as its
// recorded start does, as a restarted pacer counts it. A pass counted
// after the ask (another process's) is earned from with nothing kept.
func (p *Pacer) kept(i int, slotted bool) (from time.Time, credit float64, asked bool) {
	name := p.entries[i].Name
	from, asked = p.asked[name]
	credit = p.credit[name]
	done, ok := p.last[name]
	if !ok || p.every(i) <= 0 {
		return from, credit, asked
	}
	at := p.counted(i, done, slotted)
	ours := asked && !done.Before(from) && done.Sub(from) < p.grain(i)
	switch {
	case !asked:
		return at, 0, true
	case ours && p.onSlot(i, from):
		return from, credit, true
	case ours && slotted:
		return at, credit, true
	case at.After(from):
		return at, 0, true
	}
	return from, credit, true
}

// dueFrom is the time from which the entry will have earned a pass, not
// before the plan; zero when it cannot run.
func (p *Pacer) dueFrom(i int) time.Time {
	every := p.every(i)
	if every == Never {
		return time.Time{}
	}
	from, credit, asked := p.kept(i, false)
	if !asked || every <= 0 || credit >= 1-1e-9 {
		return p.planAt
	}
	return latest(p.planAt, from.Add(time.Duration((1-credit)*float64(every))))
}

// every is the entry's planned cadence: its floor before the first plan
// (the limiter has not answered), as without pacing; the limiter still
// decides every call.
func (p *Pacer) every(i int) time.Duration {
	if every, ok := p.plan.Every[p.entries[i].Name]; ok {
		return every
	}
	return p.entries[i].Floor
}
