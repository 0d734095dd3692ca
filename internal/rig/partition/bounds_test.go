package partition

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// The checker's judgements, each a function of the history alone (what
// the upstream charged, what the ledgers hold, what the databases
// stored, what the nemesis did) and of the lab's configuration, never of
// what the system planned: checker_test.go plants each breakage in a
// history made by hand and sees it judged.

// call is one call a ledger holds in the default pool.
type call struct {
	at         time.Time // the limiter's clock
	units      int64
	db         string
	op, region string
	run        int64
	unmetered  bool // granted on the fail-open budget, the limiter unreachable
	givenBack  bool // given back as never made
}

// kept are the calls that were not given back, in time order.
func kept(calls []call) []call {
	out := slices.DeleteFunc(slices.Clone(calls), func(c call) bool { return c.givenBack })
	slices.SortFunc(out, func(a, b call) int { return a.at.Compare(b.at) })
	return out
}

// asCharges are calls as charges, for mostInAWindow.
func asCharges(calls []call) []charge {
	out := make([]charge, 0, len(calls))
	for _, c := range calls {
		out = append(out, charge{at: c.at, units: c.units, host: c.db, op: c.op, region: c.region})
	}
	return out
}

// shownOver is, over every metered admission, the most the limiter had
// counted in the window that admission ends: the metered calls admitted
// in it (the admission with them), and the calls granted unmetered in it
// that the limiter had been shown by then. A process writes what its
// database's ledger granted unmetered into the limiter before its next
// decision (the ledger it reads at start, or its own outage), so a call
// granted unmetered counts from the next metered admission of the process
// that granted it, or of one started after it: its database's daemon
// (daemon says which of its calls are the daemon's), or else its run or a
// later run beside the daemon (the lab's load runs one process after
// another). The limiter may have been shown one sooner (a refused
// decision, another process), never later: the count is at most the
// limiter's own, so a count over the limit is a limiter that admitted a
// unit too many, whatever it granted on the fail-open budget.
func shownOver(calls []call, w time.Duration, daemon func(db, region string) bool) (most, unmetered int64, at time.Time) {
	ks := kept(calls)
	sameProcess := func(u, m call) bool {
		if u.db != m.db || u.run == 0 || m.run == 0 {
			return false
		}
		if du := daemon(u.db, u.region); du || daemon(m.db, m.region) {
			return du && daemon(m.db, m.region)
		}
		return m.run >= u.run
	}
	shown := make([]time.Time, len(ks)) // when each unmetered call was in the limiter; zero: never seen
	for i, u := range ks {
		if !u.unmetered {
			continue
		}
		for _, m := range ks[i:] {
			if !m.unmetered && sameProcess(u, m) {
				shown[i] = m.at
				break
			}
		}
	}
	for _, m := range ks {
		if m.unmetered {
			continue
		}
		var sum, un int64
		for i, c := range ks {
			if c.at.After(m.at) || m.at.Sub(c.at) >= w {
				continue
			}
			switch {
			case !c.unmetered:
				sum += c.units
			case !shown[i].IsZero() && !shown[i].After(m.at):
				sum += c.units
				un += c.units
			}
		}
		if sum > most {
			most, unmetered, at = sum, un, m.at
		}
	}
	return most, unmetered, at
}

// budgetOver is, per database, the most its ledger granted unmetered in
// any trailing window, where it is over budget.
func budgetOver(calls []call, budget int64, w time.Duration) []string {
	by := map[string][]call{}
	for _, c := range kept(calls) {
		if c.unmetered {
			by[c.db] = append(by[c.db], c)
		}
	}
	var out []string
	for db, cs := range by {
		if most, from := mostInAWindow(asCharges(cs), w); most > budget {
			out = append(out, fmt.Sprintf("%s granted %d units unmetered in the %s from %s, over its fail-open budget %d",
				db, most, w, from.UTC().Format(time.RFC3339), budget))
		}
	}
	slices.Sort(out)
	return out
}

// chargeBound is the most the upstream may charge in the window from
// from: the limit, plus what each database's ledger granted unmetered
// from a delivery bound before the window (a call reaches the upstream
// up to that long after its admission) to its end, each database's at
// most its budget.
func chargeBound(limit, budget int64, calls []call, from time.Time, w, delivery time.Duration) int64 {
	by := map[string]int64{}
	for _, c := range kept(calls) {
		if c.unmetered && !c.at.Before(from.Add(-delivery)) && c.at.Before(from.Add(w)) {
			by[c.db] += c.units
		}
	}
	bound := limit
	for _, u := range by {
		bound += min(u, budget)
	}
	return bound
}

// overCharged is the window the upstream charged most over its bound in;
// over is false when none is.
type overCharged struct {
	from       time.Time
	sum, bound int64
	over       bool
	// The most charged in any window, its bound and where, for the note.
	worst, worstBound int64
	worstFrom         time.Time
}

// judgeCharges judges the upstream's charges cs (in time order) in every
// trailing window against chargeBound.
func judgeCharges(cs []charge, calls []call, limit, budget int64, w, delivery time.Duration) overCharged {
	var r overCharged
	for i := range cs {
		var sum int64
		for j := i; j < len(cs) && cs[j].at.Sub(cs[i].at) < w; j++ {
			sum += cs[j].units
		}
		bound := chargeBound(limit, budget, calls, cs[i].at, w, delivery)
		if sum > r.worst {
			r.worst, r.worstBound, r.worstFrom = sum, bound, cs[i].at
		}
		if sum > bound && (!r.over || sum-bound > r.sum-r.bound) {
			r.from, r.sum, r.bound, r.over = cs[i].at, sum, bound, true
		}
	}
	return r
}

// storedPage is one page a run stored: its database, region and the span
// of its run (by the test's clock).
type storedPage struct {
	db, region string
	from, to   time.Time
}

// ledgerOp is the ledger's name of the operation a request's path asks
// for: /youtube/v3/videos is videos.list.
func ledgerOp(p string) string { return path.Base(p) + ".list" }

// lostCharges are the charges (in time order) that match no call of the
// charging host's database's ledger and no page it stored, each matched
// to one alone: a call of the same operation and region admitted within
// slack of the charge, else (a chart page) a page of the same region
// stored by a run whose span holds the charge. Counts would let a lost
// page hide behind a call of another chart; one to one, it cannot.
func lostCharges(cs []charge, dbOf map[string]string, calls []call, stored []storedPage, slack time.Duration) []charge {
	type key struct{ db, op, region string }
	pool := map[key][]call{}
	for _, c := range kept(calls) {
		k := key{c.db, c.op, c.region}
		pool[k] = append(pool[k], c)
	}
	used := map[key][]bool{}
	pages := slices.Clone(stored)
	taken := make([]bool, len(pages))
	var lost []charge
	for _, c := range cs {
		k := key{dbOf[c.host], ledgerOp(c.op), c.region}
		if matchCall(pool[k], used, k, c.at, slack) {
			continue
		}
		if k.op == "videos.list" && matchPage(pages, taken, k.db, c.region, c.at, slack) {
			continue
		}
		lost = append(lost, c)
	}
	return lost
}

// matchCall takes the earliest free call of calls within slack of at:
// with charges taken in time order, the earliest is never a worse choice.
func matchCall[K comparable](calls []call, used map[K][]bool, k K, at time.Time, slack time.Duration) bool {
	if used[k] == nil {
		used[k] = make([]bool, len(calls))
	}
	for i, c := range calls {
		if !used[k][i] && !c.at.Before(at.Add(-slack)) && !c.at.After(at.Add(slack)) {
			used[k][i] = true
			return true
		}
	}
	return false
}

func matchPage(pages []storedPage, taken []bool, db, region string, at time.Time, slack time.Duration) bool {
	for i, p := range pages {
		if !taken[i] && p.db == db && p.region == region && !at.Before(p.from.Add(-slack)) && !at.After(p.to.Add(slack)) {
			taken[i] = true
			return true
		}
	}
	return false
}

// sustained is the cadence a chart configured at every can keep when
// what the pool sustains for the charts of its key, left units a window,
// is shared evenly among them: demand is what all of them ask for at
// their configured cadences, in units a window. A chart runs at its slots
// alone, every apart, so its cadence is that stretch rounded up to whole
// slots. A pacer may stretch a chart this far and no further; one that
// stretches or drops it beyond (a stale plan, a chart dropped the pool
// could pay) keeps a gap over the bound.
func sustained(every time.Duration, demand, left int64) time.Duration {
	if demand <= left {
		return every
	}
	stretched := time.Duration(float64(every) * float64(demand) / float64(left))
	return (stretched + every - 1) / every * every
}

// slackOf is the room a plan of whole passes keeps out of a pool of limit
// units for charts whose dearest pass costs dearest (docs/explanation/pacing.md): that pass, at most a tenth of the pool.
func slackOf(limit, dearest int64) int64 {
	return min(dearest, limit/10)
}

// slotOf is when a completed run counts from: the slot it recorded, when
// it started within a stagger step of it (a pass is its slot's up to a
// step late), or else its start.
func slotOf(started, slot time.Time, step time.Duration) time.Time {
	if slot.IsZero() || started.Before(slot) || started.Sub(slot) >= step {
		return started
	}
	return slot
}

// step is a clock step the nemesis held on a host of db: a run that host
// stamped in the step is stamped offset away from when it ran.
type step struct {
	db       string
	offset   time.Duration
	from, to time.Time
}

// unstep is when a run of db stamped at s ran: a stamp outside the test's
// span that a step on a host of db explains is moved back by the step's
// offset, so that the run is kept where it ran rather than dropped (which
// would open a gap nothing kept open); ok is false for a stamp outside the
// span that no step explains.
func unstep(db string, s, begin, end time.Time, steps []step, slack time.Duration) (at time.Time, ok bool) {
	if !s.Before(begin) && !s.After(end) {
		return s, true
	}
	for _, st := range steps {
		if r := s.Add(-st.offset); st.db == db && !r.Before(st.from.Add(-slack)) && !r.After(st.to.Add(slack)) {
			return r, true
		}
	}
	return s, false
}

// idle says why a group's run exercised no decision of its limiter: no
// refusal (demand never reached the limit), or, where the nemesis cut a
// host from a limiter that has a fail-open budget, no unmetered grant.
func idle(refusals, unmetered int, cut bool, budget int64) []string {
	var out []string
	if refusals == 0 {
		out = append(out, "no call was refused: the workload never drove the limiter past its pool")
	}
	if cut && budget > 0 && unmetered == 0 {
		out = append(out, "a host was cut from the limiter, and no call was granted on the fail-open budget")
	}
	return out
}

// hostsOf names hosts, for messages.
func hostsOf(hs []*host) string {
	var names []string
	for _, h := range hs {
		names = append(names, h.name)
	}
	return strings.Join(names, ",")
}
