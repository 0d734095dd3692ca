package pace

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// replan makes the plan again when an event asked for it, the horizon
// ended (the reset, a block's end) or the plan is older than Refresh. A
// limiter that does not answer keeps the plan it had.
func (p *Pacer) replan(ctx context.Context) {
	now := p.now()
	why := p.stale
	switch {
	case why != "":
	case !now.Before(p.until):
		why = "the plan's horizon ended"
	case p.cfg.Refresh > 0 && now.Sub(p.planAt) >= p.cfg.Refresh:
		why = "refresh"
	default:
		return
	}
	states, err := p.cfg.State(ctx)
	if err != nil {
		p.logger().Warn("pace: the limiter did not answer; keeping the plan", ingest.LogErr, err)
		return
	}
	p.planFrom(ctx, states, now, why)
}

// Look reads the limiter's pools and makes the plan again when a pool's
// workers are not those the plan counted (a worker joined it, or the last
// spend of one that left has left its window), or an event asked for a
// plan. The daemon asks once a period (--every), between the slots: the
// slots alone leave a plan for longer, a tier's period apart, and a plan
// made off them (at a pass's end, at start) is not yet a period old at
// the next, so without it a worker joining would be counted a period late
// or more (docs/explanation/pacing.md, "Other workers"). One read of the limiter;
// the plan is made again only when something changed. Before the first
// plan it does nothing: the first ask at a slot plans.
func (p *Pacer) Look(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.planAt.IsZero() {
		return
	}
	now := p.now()
	states, err := p.cfg.State(ctx)
	if err != nil {
		// The next slot's ask says so, and keeps the plan as this does.
		p.logger().Debug("pace: the limiter did not answer a look; keeping the plan", ingest.LogErr, err)
		return
	}
	why := p.stale
	if why == "" {
		why = p.recount(states)
	}
	if why != "" {
		p.planFrom(ctx, states, now, why)
	}
}

// recount says why the plan is made again when a pool's workers, as the
// limiter counts them in states, are not those the plan counted (share);
// "" when they are.
func (p *Pacer) recount(states []ingest.PoolState) string {
	for _, st := range states {
		if _, ok := p.pool(st.Pool); ok && 1+max(st.Others, 0) != max(p.workers[st.Pool], 1) {
			return "a worker joined or left a pool"
		}
	}
	return ""
}

// planFrom makes the plan from the limiter's states read at now, and
// publishes it.
func (p *Pacer) planFrom(ctx context.Context, states []ingest.PoolState, now time.Time, why string) {
	if p.cfg.History != nil {
		p.load(ctx, now)
	}
	p.make(states, now)
	p.stale = ""
	p.logger().Debug("pace: planned", "why", why, "until", p.until)
	if p.cfg.Publish != nil {
		p.cfg.Publish(ctx, p.status())
	}
}

// make plans from the limiter's states at now.
func (p *Pacer) make(states []ingest.PoolState, now time.Time) {
	p.budgets = p.budgets[:0]
	p.until = time.Time{}
	for _, st := range states {
		pool, ok := p.pool(st.Pool)
		if !ok {
			continue
		}
		p.share(st)
		p.mine[st.Pool] = trim(p.mine[st.Pool], now.Add(-pool.Window-edge))
		slack := Slack(pool, p.entries) + p.cfg.Daily[st.Pool]*pool.Window.Hours()/24
		b := budgetBeside(st, pool, now, p.mine[st.Pool], slack, p.beside(pool, now))
		p.budgets = append(p.budgets, b)
		if end := now.Add(b.Horizon); p.until.IsZero() || end.Before(p.until) {
			p.until = end
		}
	}
	p.states = states
	p.roomOf(states)
	before := p.plan
	p.plan, p.planAt = p.hold(Make(p.budgets, p.entries, p.cfg.Bound), before.Dropped, now), now
	p.top, p.rates = p.topRound(), p.groupRates()
	p.logChange(before.Dropped)
	p.logTiers(before)
}

// logTiers says, a line a tier, when the plan stretches a tier that the
// plan before held at its floor (the first plan included), and when it
// holds one at its floor again: which tier gives way to a short pool, and
// by how much, whenever the day's plan changes it (the reset, a block, a
// worker joining).
func (p *Pacer) logTiers(before Plan) {
	var tiers []int
	for _, e := range p.entries {
		if t := max(e.Tier, 1); e.Priority <= 0 && !slices.Contains(tiers, t) {
			tiers = append(tiers, t)
		}
	}
	slices.Sort(tiers)
	for _, t := range tiers {
		was, now := p.stretchOf(before, t), p.stretchOf(p.plan, t)
		switch {
		case now > 1+1e-9 && was <= 1+1e-9:
			p.logger().Info("pace: the plan stretches a tier to give way to a short pool", "tier", t,
				"times_its_cadence", math.Round(now*100)/100)
		case was > 1+1e-9 && now <= 1+1e-9:
			p.logger().Info("pace: the plan holds a tier at its cadence again", "tier", t)
		}
	}
}

// stretchOf is the most plan stretches a region's own chart of tier over
// its floor (1: every one at its floor; 0: none planned, all dropped).
func (p *Pacer) stretchOf(plan Plan, tier int) float64 {
	most := 0.0
	for _, e := range p.entries {
		every, ok := plan.Every[e.Name]
		if e.Priority > 0 || max(e.Tier, 1) != tier || !ok || plan.Dropped[e.Name] || e.Floor <= 0 || every == Never {
			continue
		}
		most = max(most, float64(every)/float64(e.Floor))
	}
	return most
}

// hold keeps a region's own chart dropped that the plan before dropped
// (old), the plans took back within the pools' longest window and dropped
// since, until the plans have kept it for that window on end: the pools'
// room moves a little with what leaves their window and with the day's
// length, and a chart taken back at the first plan that holds it would
// be dropped again at the next, in and out of the plan, older than the
// bound each time it is back. A chart dropped once (a start that spent
// the window) comes back at the first plan that keeps it; a plan that
// drops a chart drops it at once.
func (p *Pacer) hold(plan Plan, old map[string]bool, now time.Time) Plan {
	var window time.Duration
	for _, pl := range p.cfg.Pools {
		window = max(window, pl.Window)
	}
	held := map[string]bool{}
	for _, e := range p.entries {
		since, waits := p.back[e.Name]
		switch last, ok := p.returned[e.Name]; {
		case e.Priority > 0 || !old[e.Name] || plan.Dropped[e.Name]:
			delete(p.back, e.Name)
		case !waits && (!ok || now.Sub(last) >= window):
			p.returned[e.Name] = now
		case !waits:
			p.back[e.Name], held[e.Name] = now, true
		case now.Sub(since) < window:
			held[e.Name] = true
		default:
			delete(p.back, e.Name)
			p.returned[e.Name] = now
		}
	}
	if len(held) == 0 {
		return plan
	}
	return makeHeld(p.budgets, p.entries, p.cfg.Bound, held)
}

// logChange says, in one line, which entries the new plan drops that the
// one before kept, and which it takes back: nothing when neither.
func (p *Pacer) logChange(old map[string]bool) {
	var dropped, back []string
	for _, e := range p.entries {
		switch now := p.plan.Dropped[e.Name]; {
		case now && !old[e.Name]:
			dropped = append(dropped, e.Name)
		case !now && old[e.Name]:
			back = append(back, e.Name)
		}
	}
	if len(dropped) > 0 {
		p.logger().Warn("pace: the plan drops what the budget cannot hold beside the entries above it",
			"dropped", len(dropped), "entries", names(dropped), "back", len(back), "kept", len(p.entries)-len(p.plan.Dropped))
	} else if len(back) > 0 {
		p.logger().Info("pace: the plan takes back entries it dropped", "back", len(back), "entries", names(back))
	}
}

// names is a list of entries as a log line shows it: the first few, and
// how many more.
func names(list []string) string {
	const shown = 8
	if len(list) <= shown {
		return strings.Join(list, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:shown], ","), len(list)-shown)
}

func (p *Pacer) pool(name string) (ingest.Pool, bool) {
	for _, pl := range p.cfg.Pools {
		if pl.Name == name {
			return pl, true
		}
	}
	return ingest.Pool{}, false
}

// beside is what this worker spends in pool outside its entries' passes
// and the least room the plan counts the window as having (beside). A
// co-tenant is a chart pass of a region the pacer does not pace (a run
// --once of other charts beside the daemon), whichever process on the
// database ran it: the plan counts on what it asked for over the pool's
// last window going on, as it does where it is a cron's: what it spent,
// and what its runs the quota stopped wanted beyond that (History.Short),
// so that a co-tenant the entries' passes crowd out is not read as one
// that wants less, nor planned over. What the entries'
// charts spent, a backfill's one-off spend (which takes what the plan
// leaves, and so must not shrink the plan to leave it more) and what no
// run of a region spent (tracking, the refresh) are the entries'. The
// least room is a round of the regions' own charts, which find the room
// at their slots or wait there for it.
func (p *Pacer) beside(pool ingest.Pool, now time.Time) beside {
	var o beside
	outside := func(s Spent) bool { return s.Region != "" && !p.regions[s.Region] }
	from := now.Add(-pool.Window)
	var units int64
	for _, s := range slices.Concat(p.mine[pool.Name], p.short[pool.Name]) {
		if !outside(s) {
			continue
		}
		o.outside = outside
		if s.At.After(from) && !s.At.After(now) {
			units += s.Units
		}
	}
	if pool.Window > 0 {
		o.rate = float64(units) / pool.Window.Seconds()
	}
	for _, e := range p.entries {
		if e.Priority <= 0 {
			o.least += e.Cost[pool.Name]
		}
	}
	return o
}

// trim drops the spends before since.
func trim(s []Spent, since time.Time) []Spent {
	i := 0
	for i < len(s) && !s[i].At.After(since) {
		i++
	}
	return s[i:]
}

// Slack is the room a plan of whole passes needs in the pool over its
// average: an entry that runs less often than at each of its slots can
// fall twice in one window where its average says once, so one pass of
// each entry below level 0, and of the dearest at level 0, is kept out of
// the sustainable rate. It is never more than a tenth of the capacity.
func Slack(pool ingest.Pool, entries []Entry) float64 {
	var below, top float64
	for _, e := range entries {
		c := e.Cost[pool.Name]
		if e.Priority > 0 {
			below += c
		} else {
			top = max(top, c)
		}
	}
	return min(below+top, float64(pool.Capacity())/10)
}
