// Package pace spreads each quota pool's budget over time at a rate the
// pool can hold forever, so that no chart goes stale for hours of any day.
//
// The shipped pools hold two limits at once: a 24-hour sliding window and
// the upstream's Pacific day. A plan that spends what is left "until the
// reset" empties the window before midnight, and after the reset the day
// is new but the window still holds yesterday's spend: nothing runs until
// it ages out. So the rate is the pool's sustainable one (its capacity
// over the longer of its window and its day), never more than the window
// and the day have room for, and the reset only starts a new plan.
//
// It has two halves. The planner (Make) is pure: from each pool's rate and
// each entry's measured cost per pass, priority and floor, it sets each
// entry's cadence, level by level: a region's own charts first, at their
// floors while they fit, else stretched evenly up to a staleness bound;
// the levels below share what is left, or are dropped on purpose when
// nothing is. The Pacer around it rebuilds its own
// spend, each entry's last pass and its cost from the worker's database
// (so a restart costs nothing), reads the limiter's state, re-plans on the
// events that change the picture (a refusal, an upstream block, a pass
// dearer than planned, another worker's spend, a worker joining or leaving
// the pool, which a look finds (Look), the reset) and decides, at
// each of an entry's staggered slots, whether the entry runs there.
//
// What is where: pacing: a pure planner (each pool's sustainable rate
// against its window and its day, each entry's measured cost, priority and
// floor -> each entry's cadence, level by level, with what is dropped), the
// rate from the limiter's state and the worker's own spend (less what a
// co-tenant on its database spends, a run --once of charts of other
// regions, which the plan counts on going on; a backfill's spend is the
// worker's own, one-off, and leaves the window as its own does; a full
// window counts as holding a round of the regions' own charts, which wait
// at their slots for the room), the Pacer, built
// whole by pace.New(pace.Config) (nothing set after), that rebuilds its
// state from the database (History, FromRecords), decides at each staggered
// slot whether an entry runs, re-plans on events, and at a look (Look, once
// a period) when a pool's workers changed, and publishes each plan (Status);
// a file per concern: the plan (plan.go), the re-planning and what it holds
// dropped (replan.go), the credit at slots (credit.go), the room and the
// spread of a pass (room.go), the measurements (measure.go), the history it
// starts from (history.go), the share of a pool this worker counts on
// (share.go: 1/N, N this worker and the workers of other databases the
// limiter counts in the pool's window).
package pace

import (
	"math"
	"slices"
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
	// Tier is the entry's region's tier (1 when zero): within its level,
	// when a pool is short the lowest tiers are stretched first, a tier-N
	// entry to N times the cadence of the highest tier stretched, and past
	// the staleness bound the highest tier is dropped first (Make). Its
	// Floor is its tier's: N x --every.
	Tier int
	// Floor is the shortest cadence allowed (--every, times the tier):
	// the plan never runs the entry more often.
	Floor time.Duration
	// Cost is what one pass takes, by pool, as measured.
	Cost map[string]float64
	// Slots, when set, is when the entry may run (its staggered slots):
	// what the plan's next run is read from.
	Slots Slots
}

// Slots is an entry's schedule: the first of its slots after t, and its
// grain, the time between two slots of the schedule's entries (the
// staggered schedule, jobs.Schedule, is Slots). Whether an entry is due
// never hangs on the moments between its slot, or a cron's start, and its
// pass's recorded start: at a slot, a pass that started a few seconds
// after one of its entry's slots is that slot's, one that started later,
// as a catch-up at start does, is counted where it ran; at a cron's start,
// a pass is counted from the start of the grain it started in.
type Slots interface {
	Next(t time.Time) time.Time
	Grain() time.Duration
}

// Budget is what this worker may spend in a pool: a rate, and what it
// spends before the horizon ends, the reserve and the other workers' share
// already taken out.
type Budget struct {
	Pool    string
	Rate    float64 // units a second
	Units   float64 // Rate over Horizon
	Horizon time.Duration
	// Keep is the rate the pool holds for good (Sustainable), units a
	// second: when not even every region's own chart fits at the bound,
	// which of them the plan keeps is decided against it, not against
	// Rate, which dips for hours while the window frees room and would
	// drop a chart only to take it back; Rate when zero.
	Keep float64
	// Share is the part of the pool this worker counts on (Share): the
	// plan's rates are taken from it, and the status shows it.
	Share float64
}

// Plan is each entry's cadence and what it spends.
type Plan struct {
	// Every is each entry's cadence, by name; Never when it cannot run.
	Every map[string]time.Duration
	// Spend is what the plan spends in each pool by the horizon.
	Spend map[string]float64
	// Rate is what the plan spends in each pool, in units a second.
	Rate map[string]float64
	// Fixed is what running every entry at its floor would spend in each
	// pool by the horizon.
	Fixed map[string]float64
	// RunsOut is, for each pool the floors would empty before the
	// horizon, how long after now they would: the fixed cadence's run-out.
	RunsOut map[string]time.Duration
	// Dropped are the entries a pool with a budget gives no pass: what
	// does not fit, lowest level first.
	Dropped map[string]bool
}

// DefaultBound is how stale a region's own chart may grow when a pool is
// short before the plan drops it: a day.
const DefaultBound = 24 * time.Hour

// Make plans the entries against the budgets, pool by pool, level by
// level. A region's own charts (level 0) take their floors when they fit;
// the levels below share what is left, each level's cadence twice the
// one's above it once they are stretched. When level 0 cannot run at its
// floors, every lower level of the pool is dropped and level 0's lowest
// tiers give way first: as many tiers as the pool holds keep their floors,
// from tier 1 down, the rest stretched evenly (holdHighTiers); when not
// even tier 1 alone keeps its floor so, level 0 is stretched evenly, to
// the one cadence the pool holds, a tier-N entry N times tier 1's (never
// faster than an entry's floor), each as far as bound (DefaultBound when
// zero). When even every entry at bound does not
// fit, level 0 runs every bound in order of tier, then of the entries
// (the operator's --regions), while the pool holds each: from the first
// it cannot hold on, the rest are dropped, the highest tier's first, so
// that what is dropped is always the end of that order. An entry drawing from
// several pools takes the slowest cadence any of them allows, which only
// spends less.
func Make(budgets []Budget, entries []Entry, bound time.Duration) Plan {
	return makeHeld(budgets, entries, bound, nil)
}

// makeHeld is Make with the entries of held dropped whatever the budgets:
// entries a plan dropped that the pools have not yet held long enough to
// take back (Pacer.hold).
func makeHeld(budgets []Budget, entries []Entry, bound time.Duration, held map[string]bool) Plan {
	plan := Plan{Every: map[string]time.Duration{}, Spend: map[string]float64{}, Rate: map[string]float64{},
		Fixed: map[string]float64{}, RunsOut: map[string]time.Duration{}, Dropped: map[string]bool{}}
	every := make([]float64, len(entries))
	for i, e := range entries {
		every[i] = e.Floor.Seconds()
	}
	for _, b := range budgets {
		got, dropped := solve(b.rate(), max(b.Keep, b.rate()), b.Pool, entries, bound, held)
		for i, s := range got {
			every[i] = max(every[i], s)
			if dropped[i] {
				plan.Dropped[entries[i].Name] = true
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

// solve is one pool's cadences, in seconds, by entry index (0 for an entry
// that does not draw from the pool), and which entries the pool drops:
// those it gives no pass though it has a budget.
func solve(rate, keep float64, pool string, entries []Entry, bound time.Duration, held map[string]bool) (map[int]float64, map[int]bool) {
	every, dropped := map[int]float64{}, map[int]bool{}
	var top, below []int
	var ms []member
	drop := func(is []int) {
		for _, i := range is {
			every[i], dropped[i] = math.Inf(1), rate > 0
		}
	}
	cut := -1 // the first level 0 entry held, in the order the bound keeps them
	for i, e := range entries {
		switch c := e.Cost[pool]; {
		case c <= 0:
		case held[e.Name]:
			drop([]int{i})
			if e.Priority <= 0 && (cut < 0 || before(entries, i, cut)) {
				cut = i
			}
		case e.Priority <= 0:
			f := e.Floor.Seconds()
			top, ms = append(top, i), append(ms, member{cost: c, floor: f, weight: e.tier(), limit: e.Limit(bound).Seconds()})
		default:
			below = append(below, i)
		}
	}
	if k := stretch(rate, ms); k > 0 {
		drop(below)
		if held := holdHighTiers(rate, ms); held != nil {
			for j, i := range top {
				every[i] = held[j]
			}
			return every, dropped
		}
		if !math.IsInf(k, 1) {
			for j, i := range top {
				every[i] = ms[j].at(k)
			}
			return every, dropped
		}
		left, full := keep, false
		for _, j := range byTier(entries, top) {
			need := ms[j].cost / ms[j].limit
			full = full || need > left*(1+1e-12) || (cut >= 0 && before(entries, cut, top[j]))
			if full {
				drop([]int{top[j]})
				continue
			}
			every[top[j]], left = ms[j].limit, left-need
		}
		return every, dropped
	}
	demand := 0.0
	for j, i := range top {
		every[i] = ms[j].floor
		demand += ms[j].cost / ms[j].floor
	}
	ms = make([]member, len(below))
	for j, i := range below {
		e := entries[i]
		ms[j] = member{cost: e.Cost[pool], floor: e.Floor.Seconds(), weight: weight(e.Priority-1) * e.tier(), limit: math.Inf(1)}
	}
	k := stretch(rate-demand, ms)
	for j, i := range below {
		every[i] = ms[j].at(k)
		if math.IsInf(every[i], 1) {
			dropped[i] = rate > 0
		}
	}
	return every, dropped
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
			p.Rate[b.Pool] += c / every[i]
		}
	}
	p.Fixed[b.Pool] = fixedRate * h
	if fixedRate*h > b.Units {
		p.RunsOut[b.Pool] = duration(max(b.Units, 0) / fixedRate)
	}
}

func (b Budget) rate() float64 {
	if b.Rate > 0 {
		return b.Rate
	}
	if b.Horizon <= 0 || b.Units <= 0 {
		return 0
	}
	return b.Units / b.Horizon.Seconds()
}

// member is an entry as one pool's stretch sees it: its cadence is
// k x weight, never under its floor nor over its limit.
type member struct{ cost, floor, weight, limit float64 }

// at is the member's cadence at the stretch k.
func (m member) at(k float64) float64 { return min(max(m.floor, k*m.weight), m.limit) }

// Limit is the longest cadence the plan gives the entry under bound
// (--max-stale, DefaultBound when zero): the most of its floors, its
// slots' period, that bound holds, and never under one floor. A cadence
// between two of its slots' multiples would run some passes a slot later
// than the bound allows.
func (e Entry) Limit(bound time.Duration) time.Duration {
	if bound <= 0 {
		bound = DefaultBound
	}
	if e.Floor <= 0 || bound <= e.Floor {
		return max(e.Floor, bound)
	}
	return bound / e.Floor * e.Floor
}

// holdHighTiers is level 0's cadences, by member, when the pool holds the
// highest tiers at their floors and only the lower ones stretched (each
// within its limit, tier N to N times the lowest stretched tier's cadence
// as ever): as many tiers held as the pool allows, from tier 1 down, so
// that a short pool takes from the lowest tiers first. Nil when not even
// tier 1 alone is held so: every tier is stretched together then.
func holdHighTiers(rate float64, ms []member) []float64 {
	var tiers []float64
	for _, m := range ms {
		if !slices.Contains(tiers, m.weight) {
			tiers = append(tiers, m.weight)
		}
	}
	sort.Float64s(tiers)
	for n := len(tiers) - 1; n >= 1; n-- {
		var fixed float64
		var rest []member
		for _, m := range ms {
			if m.weight <= tiers[n-1] {
				fixed += m.cost / m.floor
			} else {
				rest = append(rest, m)
			}
		}
		k := stretch(rate-fixed, rest)
		if math.IsInf(k, 1) {
			continue
		}
		out := make([]float64, len(ms))
		for j, m := range ms {
			out[j] = m.floor
			if m.weight > tiers[n-1] {
				out[j] = m.at(k)
			}
		}
		return out
	}
	return nil
}

// tier is the entry's tier as a weight: 1 when unset.
func (e Entry) tier() float64 { return float64(max(e.Tier, 1)) }

// byTier is the positions in top, in the order a pool keeps them past
// the staleness bound: tier 1 first, and within a tier the entries' order.
func byTier(entries []Entry, top []int) []int {
	order := make([]int, len(top))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return entries[top[order[a]]].tier() < entries[top[order[b]]].tier() })
	return order
}

// before reports whether entry i comes before entry j in the order a pool
// keeps them past the staleness bound (byTier).
func before(entries []Entry, i, j int) bool {
	if a, b := entries[i].tier(), entries[j].tier(); a != b {
		return a < b
	}
	return i < j
}

// weight is how much longer than level 0's a level's cadence is when the
// pool is short.
func weight(priority int) float64 { return math.Pow(2, float64(max(priority, 0))) }

// stretch returns the smallest k such that running each member at k
// (member.at) spends at most rate units a second: 0 when the floors fit,
// +Inf when there is no budget or even every member at its limit spends
// more. The spend is continuous and falls as k grows; between two of the
// members' thresholds (floor/weight, limit/weight) it is A + B/k, solved
// exactly.
func stretch(rate float64, ms []member) float64 {
	if spend(ms, 0) <= rate {
		return 0
	}
	if rate <= 0 {
		return math.Inf(1)
	}
	var points []float64
	for _, m := range ms {
		points = append(points, m.floor/m.weight, m.limit/m.weight)
	}
	sort.Float64s(points)
	lo := 0.0
	for _, hi := range append(points, math.Inf(1)) {
		if hi < lo || math.IsInf(lo, 1) {
			continue
		}
		a, b := segment(ms, lo, hi)
		switch {
		case b == 0 && a <= rate:
			return lo
		case b > 0 && rate > a:
			if k := b / (rate - a); k <= hi {
				return max(k, lo)
			}
		}
		lo = hi
	}
	return math.Inf(1)
}

// spend is what the members spend at k, in units a second.
func spend(ms []member, k float64) float64 {
	var s float64
	for _, m := range ms {
		s += m.cost / m.at(k)
	}
	return s
}

// segment is the spend between the thresholds lo and hi as A + B/k: A
// what the members held at their floor or limit spend, B the stretched
// ones' cost over their weight.
func segment(ms []member, lo, hi float64) (a, b float64) {
	mid := lo + 1
	if !math.IsInf(hi, 1) {
		mid = (lo + hi) / 2
	}
	for _, m := range ms {
		switch x := mid * m.weight; {
		case x <= m.floor:
			a += m.cost / m.floor
		case x >= m.limit:
			a += m.cost / m.limit
		default:
			b += m.cost / m.weight
		}
	}
	return a, b
}

// duration turns seconds into a cadence, rounded up to the millisecond so
// that the plan never spends more than its budget.
func duration(s float64) time.Duration {
	if math.IsInf(s, 1) || s*1e3 >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return Never
	}
	return time.Duration(math.Ceil(s*1e3-1e-6)) * time.Millisecond
}
