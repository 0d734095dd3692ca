// Package pace spreads each quota pool's budget over the rest of the
// upstream's day, so that a schedule that does not fit the day does not
// spend the pool by morning and leave every chart stale until the reset.
//
// It has two halves. The planner (Make) is pure: from what each pool lets
// this worker spend until its horizon (the pool's next day start, or its
// window for a pool without a day) and each entry's measured cost per pass,
// priority and floor, it sets each entry's cadence so that the pools'
// budgets are spent evenly over the horizon and never faster than the
// floor. The Pacer around it reads the limiter's state, measures costs,
// re-plans on the events that change the picture (a refusal, an upstream
// block, a pass dearer than planned, another worker's spend, the reset) and
// decides, at each of an entry's staggered slots, whether the entry runs
// there. Its Schedule adapts any cron.Schedule the same way.
//
// Priorities are levels: 0 runs most often, and when a pool is short each
// level below runs half as often as the one above it, never faster than its
// floor. Every entry keeps a share, so nothing goes stale for the whole day
// while a higher level is served.
package pace

import (
	"math"
	"sort"
	"time"
)

// Never is the cadence of an entry that cannot run before the horizon: a
// pool it draws from has nothing left.
const Never = time.Duration(math.MaxInt64)

// Entry is one job of the schedule as the planner sees it.
type Entry struct {
	Name string
	// Priority is the entry's level: 0 first (a region's own chart), then
	// 1 (its categories), 2 (tracking). When a pool is short, each level
	// runs half as often as the one above.
	Priority int
	// Floor is the shortest cadence allowed (--every): the plan never runs
	// the entry more often.
	Floor time.Duration
	// Cost is what one pass takes, by pool, as measured.
	Cost map[string]float64
}

// Budget is what this worker may spend in a pool before the horizon ends,
// the reserve and the other workers' share already taken out.
type Budget struct {
	Pool    string
	Units   float64
	Horizon time.Duration
}

// Plan is each entry's cadence and what it spends.
type Plan struct {
	// Every is each entry's cadence, by name; Never when it cannot run.
	Every map[string]time.Duration
	// Spend is what the plan spends in each pool by the horizon.
	Spend map[string]float64
	// Fixed is what running every entry at its floor would spend in each
	// pool by the horizon.
	Fixed map[string]float64
	// RunsOut is, for each pool the floors would empty before the
	// horizon, how long after now they would: the fixed cadence's run-out.
	RunsOut map[string]time.Duration
}

// Make plans the entries against the budgets. Each pool is solved on its
// own, for the one stretch that spends its budget exactly (or none when
// the floors fit); an entry drawing from several pools takes the slowest
// cadence any of them allows, which only spends less.
func Make(budgets []Budget, entries []Entry) Plan {
	plan := Plan{Every: map[string]time.Duration{}, Spend: map[string]float64{},
		Fixed: map[string]float64{}, RunsOut: map[string]time.Duration{}}
	every := make([]float64, len(entries))
	for i, e := range entries {
		every[i] = e.Floor.Seconds()
	}
	for _, b := range budgets {
		k := stretch(b.rate(), members(b.Pool, entries))
		for i, e := range entries {
			if e.Cost[b.Pool] > 0 {
				every[i] = max(every[i], k*weight(e.Priority))
			}
		}
	}
	for i, e := range entries {
		plan.Every[e.Name] = duration(every[i])
	}
	for _, b := range budgets {
		plan.account(b, entries, every)
	}
	return plan
}

// account fills the pool's projected spend, planned and fixed.
func (p *Plan) account(b Budget, entries []Entry, every []float64) {
	h := b.Horizon.Seconds()
	var fixedRate float64
	for i, e := range entries {
		c := e.Cost[b.Pool]
		if c <= 0 {
			continue
		}
		fixedRate += c / e.Floor.Seconds()
		if !math.IsInf(every[i], 1) {
			p.Spend[b.Pool] += c * h / every[i]
		}
	}
	p.Fixed[b.Pool] = fixedRate * h
	if fixedRate*h > b.Units {
		p.RunsOut[b.Pool] = duration(max(b.Units, 0) / fixedRate)
	}
}

func (b Budget) rate() float64 {
	if b.Horizon <= 0 || b.Units <= 0 {
		return 0
	}
	return b.Units / b.Horizon.Seconds()
}

// member is an entry as one pool's solve sees it.
type member struct{ cost, floor, weight float64 }

func members(pool string, entries []Entry) []member {
	var out []member
	for _, e := range entries {
		if c := e.Cost[pool]; c > 0 {
			out = append(out, member{cost: c, floor: e.Floor.Seconds(), weight: weight(e.Priority)})
		}
	}
	return out
}

// weight is how much longer than level 0's a level's cadence is when the
// pool is short.
func weight(priority int) float64 { return math.Pow(2, float64(max(priority, 0))) }

// stretch returns the smallest k such that running each member every
// max(floor, k x weight) seconds spends at most rate units a second: 0
// when the floors fit, +Inf when there is no budget. The spend is
// continuous and falls as k grows; between two members' thresholds
// (floor/weight) it is A + B/k, solved exactly.
func stretch(rate float64, ms []member) float64 {
	var atFloor float64
	for _, m := range ms {
		atFloor += m.cost / m.floor
	}
	if atFloor <= rate {
		return 0
	}
	if rate <= 0 {
		return math.Inf(1)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].floor/ms[i].weight < ms[j].floor/ms[j].weight })
	a, b := atFloor, 0.0
	for j, m := range ms {
		a -= m.cost / m.floor // m is now stretched
		b += m.cost / m.weight
		upper := math.Inf(1)
		if j+1 < len(ms) {
			upper = ms[j+1].floor / ms[j+1].weight
		}
		if rate > a {
			if k := b / (rate - a); k <= upper {
				return k
			}
		}
	}
	return math.Inf(1) // not reached: the last segment always solves
}

// duration turns seconds into a cadence, rounded up to the millisecond so
// that the plan never spends more than its budget.
func duration(s float64) time.Duration {
	if math.IsInf(s, 1) || s*1e3 >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return Never
	}
	return time.Duration(math.Ceil(s*1e3-1e-6)) * time.Millisecond
}
