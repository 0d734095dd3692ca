package partition

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The checker's arithmetic on histories made by hand, so that it is seen
// to fail where it must without a network to cut.

func TestMostInAWindowFindsTheFullestSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs := []charge{
		{at: t0, units: 10},
		{at: t0.Add(90 * time.Second), units: 20},
		{at: t0.Add(150 * time.Second), units: 25}, // 45 with the one before it, in 2 minutes
		{at: t0.Add(270 * time.Second), units: 1},  // exactly a window after the one at 150 s: a window of its own
	}
	worst, from := mostInAWindow(cs, 2*time.Minute)
	if worst != 45 || !from.Equal(t0.Add(90*time.Second)) {
		t.Errorf("mostInAWindow = %d from %s, want 45 from %s", worst, from, t0.Add(90*time.Second))
	}
}

func TestTheWindowCountsTheDefaultPoolAlone(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var cs []charge
	for i := range 40 {
		cs = append(cs, charge{at: t0.Add(time.Duration(i) * time.Second), units: 1, op: "/youtube/v3/videos"})
	}
	for i := range 16 { // tracking's reads: the stats pool's
		cs = append(cs, charge{at: t0.Add(time.Duration(50+i) * time.Second), units: 1, op: "/youtube/v3/videos:batchGetStats"})
	}
	if worst, _ := mostInAWindow(inDefaultPool(cs), 2*time.Minute); worst != 40 {
		t.Errorf("40 chart pages and 16 stats reads in a window: the default pool's window holds %d, want 40", worst)
	}
}

func TestGapsAreBoundByTheSustainedCadenceAndTheOutage(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }
	// An outage of 2 minutes from minute 10 to 12.
	outage := func(from, to time.Time) time.Duration {
		a, b := maxTime(from, at(10)), minTime(to, at(12))
		if b.After(a) {
			return b.Sub(a)
		}
		return 0
	}
	// Runs at 1, 2, 3, then none until 9 (6 minutes: over 1m + grace),
	// then 14 (5 minutes, of which 2 out: within 1m + 2m + grace), and
	// the end at 15.
	gs := gaps(t0, at(15), []time.Time{at(1), at(2), at(3), at(9), at(14)}, time.Minute, outage)
	var over []time.Time
	for _, g := range gs {
		if g.over() {
			over = append(over, g.from)
		}
	}
	if len(gs) != 6 || len(over) != 1 || !over[0].Equal(at(3)) {
		t.Errorf("%d gaps, over their bound from %v; want 6, one over from %s", len(gs), over, at(3))
	}
}

// history is a run made by hand: 40 chart pages a window, charged as
// admitted, across three databases of one key.
func history(t0 time.Time, n int) ([]charge, []call) {
	var cs []charge
	var calls []call
	dbs := []string{"h1", "h2", "h3"}
	for i := range n {
		at := t0.Add(time.Duration(i) * window / time.Duration(n))
		db := dbs[i%3]
		cs = append(cs, charge{at: at.Add(time.Second), units: 1, host: db, op: "/youtube/v3/videos", region: "US", page: fmt.Sprint(i)})
		calls = append(calls, call{at: at, units: 1, db: db, op: "videos.list", region: "US"})
	}
	return cs, calls
}

func TestTheCheckerSeesALimiterAdmittingOneOver(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs, calls := history(t0, limit)
	if most, _, _ := shownOver(calls, window, noDaemon); most != limit {
		t.Fatalf("a limiter admitting its limit: the ledgers' window holds %d, want %d", most, limit)
	}
	if r := judgeCharges(cs, calls, limit, budget, window, delivery); r.over {
		t.Errorf("the limit charged, nothing unmetered: judged over its bound %d", r.bound)
	}
	// One unit over, metered: the ledgers' own count says so, and the
	// upstream's charge, with nothing unmetered to excuse it, is over the
	// bound (a fixed limit + budget x databases would have let it by).
	cs, calls = history(t0, limit+1)
	if most, _, at := shownOver(calls, window, noDaemon); most != limit+1 || !at.Equal(calls[limit].at) {
		t.Errorf("a limiter admitting one over: the limiter counted %d at %s, want %d at %s", most, at, limit+1, calls[limit].at)
	}
	if r := judgeCharges(cs, calls, limit, budget, window, delivery); !r.over || r.sum != limit+1 || r.bound != limit {
		t.Errorf("one unit over, none unmetered: judged %+v, want %d charged over the bound %d", r, limit+1, limit)
	}
	// Three of them unmetered on one database, within its budget: the
	// charge is within its bound, the metered count within the limit.
	for i := range 3 {
		calls[3*i].unmetered = true
	}
	cs, _ = history(t0, limit+2)
	calls = append(calls, call{at: t0.Add(window - time.Second), units: 1, db: "h1", op: "videos.list", region: "US", unmetered: true})
	if most, _, _ := shownOver(calls, window, noDaemon); most > limit {
		t.Errorf("%d admitted, 4 unmetered: %d metered in the window, want at most %d", len(calls), most, limit)
	}
	if r := judgeCharges(cs, calls, limit, budget, window, delivery); r.over {
		t.Errorf("%d charged, one database granting 4 unmetered, budget %d: judged over its bound %d", len(cs), budget, r.bound)
	}
	// The database granted 4 on a budget of 3: said.
	if over := budgetOver(calls, budget, window); len(over) != 1 || !strings.Contains(over[0], "h1 granted 4 units unmetered") {
		t.Errorf("4 unmetered on h1, budget %d: %q, want h1 said over", budget, over)
	}
	// A call given back is not in the window.
	_, calls = history(t0, limit+1)
	calls[0].givenBack = true
	if most, _, _ := shownOver(calls, window, noDaemon); most != limit {
		t.Errorf("%d admitted, one given back: %d in the window, want %d", len(calls), most, limit)
	}
}

// noDaemon: no call of the history is a daemon's.
func noDaemon(string, string) bool { return false }

// A limiter one unit over beside calls granted on the fail-open budget:
// the grants the limiter was shown before a metered admission count in
// its window, so the extra unit is seen though the metered calls alone
// are within the limit; grants it may not have been shown yet do not.
func TestTheCheckerSeesOneOverBesideUnmeteredGrants(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	daemon := func(db, region string) bool { return region == "US" }
	// h1's daemon, cut from the limiter, grants 3 unmetered; back, the
	// limiter admits the rest of its limit across three databases, h1's
	// daemon first.
	grants := func(db, region string, run int64) []call {
		var out []call
		for i := range 3 {
			out = append(out, call{at: t0.Add(time.Duration(i) * time.Second), units: 1, db: db, op: "videos.list", region: region, run: run, unmetered: true})
		}
		return out
	}
	metered := func(n int) []call {
		var out []call
		for i := range n {
			out = append(out, call{at: t0.Add(10*time.Second + time.Duration(i)*time.Second), units: 1, db: []string{"h1", "h2", "h3"}[i%3], op: "videos.list", region: "US", run: int64(2 + i%3)})
		}
		return out
	}
	calls := append(grants("h1", "US", 1), metered(limit-3)...)
	if most, shown, _ := shownOver(calls, window, daemon); most != limit || shown != 3 {
		t.Errorf("3 granted unmetered, then %d admitted: the limiter counted %d (%d unmetered), want %d (3)", limit-3, most, shown, limit)
	}
	calls = append(grants("h1", "US", 1), metered(limit-2)...)
	if most, shown, _ := shownOver(calls, window, daemon); most != limit+1 || shown != 3 {
		t.Errorf("3 granted unmetered, then %d admitted, one over: the limiter counted %d (%d unmetered), want %d (3)", limit-2, most, shown, limit+1)
	}
	// A load's run (MX, run 9) granted them and never asked again: no
	// process may have written them back, so none counts.
	calls = append(grants("h1", "MX", 9), metered(limit-2)...)
	if most, shown, _ := shownOver(calls, window, daemon); most != limit-2 || shown != 0 {
		t.Errorf("3 granted by a run that asked no more, then %d admitted: the limiter counted %d (%d unmetered), want %d (0)", limit-2, most, shown, limit-2)
	}
	// An earlier run of the load asking after them proves nothing: it
	// read the ledger before they were granted.
	earlier := append(slices.Clone(calls), call{at: t0.Add(5 * time.Second), units: 1, db: "h1", op: "videos.list", region: "MX", run: 8})
	if most, shown, _ := shownOver(earlier, window, daemon); most != limit-1 || shown != 0 {
		t.Errorf("3 granted by run 9, then run 8 and %d admitted: the limiter counted %d (%d unmetered), want %d (0)", limit-2, most, shown, limit-1)
	}
	// The next run of the load asks, metered: it wrote them back before.
	later := append(slices.Clone(calls), call{at: t0.Add(5 * time.Second), units: 1, db: "h1", op: "videos.list", region: "MX", run: 10})
	if most, shown, _ := shownOver(later, window, daemon); most != limit+2 || shown != 3 {
		t.Errorf("3 granted by run 9, then run 10 and %d admitted: the limiter counted %d (%d unmetered), want %d (3)", limit-2, most, shown, limit+2)
	}
	// The same run asks again, metered: it wrote them back before.
	calls = append(calls, call{at: t0.Add(5 * time.Second), units: 1, db: "h1", op: "videos.list", region: "MX", run: 9})
	if most, shown, _ := shownOver(calls, window, daemon); most != limit+2 || shown != 3 {
		t.Errorf("3 granted by a run that then asked metered, and %d admitted: the limiter counted %d (%d unmetered), want %d (3)", limit-1, most, shown, limit+2)
	}
}

func TestTheCheckerSeesALostPage(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs, calls := history(t0, 9)
	dbOf := map[string]string{"h1": "h1", "h2": "h2", "h3": "h3"}
	if lost := lostCharges(cs, dbOf, calls, nil, slack); len(lost) != 0 {
		t.Fatalf("every charge admitted: %d lost, want none: %+v", len(lost), lost)
	}
	// One US page charged to h2 whose call h2's ledger lacks, while a
	// call of another chart (GB) stands in for it: as many calls as
	// charges, and still one of h2's pages lost (which of h2's US pages
	// within the slack is the one is not the checker's to say).
	calls[1].region = "GB"
	if lost := lostCharges(cs, dbOf, calls, nil, slack); len(lost) != 1 || lost[0].host != "h2" {
		t.Errorf("h2's US page 1 in no ledger, a GB call in its stead: lost %+v, want one of h2's", lost)
	}
	// The same call in another database's ledger does not vouch for it.
	calls[1].region, calls[1].db = "US", "h3"
	if lost := lostCharges(cs, dbOf, calls, nil, slack); len(lost) != 1 || lost[0].host != "h2" {
		t.Errorf("h2's page in h3's ledger: lost %+v, want h2's page", lost)
	}
	// Stored by a run of h2's in its span: not lost.
	stored := []storedPage{{db: "h2", region: "US", from: t0, to: t0.Add(time.Minute)}}
	if lost := lostCharges(cs, dbOf, calls, stored, slack); len(lost) != 0 {
		t.Errorf("h2's page stored by its run: lost %+v, want none", lost)
	}
	// Stored by a run of another region: lost again.
	stored[0].region = "GB"
	if lost := lostCharges(cs, dbOf, calls, stored, slack); len(lost) != 1 {
		t.Errorf("h2's US page, a GB page stored: lost %+v, want the US page", lost)
	}
}

func TestTheCheckerSeesADroppedChartAndAStalePlan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }
	none := func(_, _ time.Time) time.Duration { return 0 }
	// What was configured asks for 1.5 times the pool: a chart at 1m is
	// sustained every 1m30s, whatever the plan says, which its slots, a
	// minute apart, keep every 2 minutes.
	every := sustained(time.Minute, 3*limit/2, limit)
	if every != 2*time.Minute {
		t.Fatalf("sustained(1m, 1.5 x the limit) = %s, want 2m (1m30s on slots of 1m)", every)
	}
	if e := sustained(time.Minute, limit/2, limit); e != time.Minute {
		t.Errorf("sustained(1m, half the limit) = %s, want 1m (never shortened)", e)
	}
	if e := sustained(time.Minute, 2*limit, limit); e != 2*time.Minute {
		t.Errorf("sustained(1m, twice the limit) = %s, want 2m (whole slots already)", e)
	}
	overs := func(starts []time.Time, end float64) (n int) {
		for _, g := range gaps(t0, at(end), starts, every, none) {
			if g.over() {
				n++
			}
		}
		return n
	}
	var paced []time.Time
	for m := 1.0; m < 30; m += 2 {
		paced = append(paced, at(m))
	}
	if n := overs(paced, 30); n != 0 {
		t.Errorf("a chart run at the sustained cadence: %d gaps over, want none", n)
	}
	// Dropped by the plan after minute 10, the pool could pay it: red.
	if n := overs([]time.Time{at(1), at(3), at(5), at(7), at(9), at(10)}, 30); n != 1 {
		t.Errorf("a chart dropped at minute 10 of 30: %d gaps over, want 1", n)
	}
	// A stale plan, stretched to 5 minutes (from an outage long healed),
	// the chart run at it: red.
	var stale []time.Time
	for m := 1.0; m < 30; m += 5 {
		stale = append(stale, at(m))
	}
	if n := overs(stale, 30); n == 0 {
		t.Errorf("a chart run every 5 minutes where the pool sustains every %s: no gap over", every)
	}
}

// A pass counts from the slot it recorded when it started within a
// stagger step of it, and from its start otherwise: a catch-up (its slot
// the next one) or a pass that started later than a step; the room a plan
// of whole passes keeps is its dearest pass, at most a tenth of the pool.
func TestAPassCountsFromItsSlotWithinAStep(t *testing.T) {
	slot := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	step := 20 * time.Second
	for _, c := range []struct {
		started, slot, want time.Time
	}{
		{slot.Add(3 * time.Second), slot, slot},
		{slot.Add(25 * time.Second), slot, slot.Add(25 * time.Second)},
		{slot.Add(-10 * time.Second), slot, slot.Add(-10 * time.Second)},
		{slot.Add(3 * time.Second), time.Time{}, slot.Add(3 * time.Second)},
	} {
		if got := slotOf(c.started, c.slot, step); !got.Equal(c.want) {
			t.Errorf("slotOf(started %s, slot %s, step %s) = %s, want %s", c.started.Format("15:04:05"), c.slot.Format("15:04:05"), step, got.Format("15:04:05"), c.want.Format("15:04:05"))
		}
	}
	if s := slackOf(40, 4); s != 4 {
		t.Errorf("slackOf(40, 4) = %d, want 4", s)
	}
	if s := slackOf(40, 9); s != 4 {
		t.Errorf("slackOf(40, 9) = %d, want 4 (a tenth of the pool)", s)
	}
}

func TestARunStampedDuringAClockStepIsKept(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }
	none := func(_, _ time.Time) time.Duration { return 0 }
	steps := []step{{db: "h1", offset: -time.Hour, from: at(3.5), to: at(4.5)}}
	// h1 ran at 1, 2, 4 (stamped an hour back: its clock was stepped), 6
	// and 7.
	stamps := []time.Time{at(1), at(2), at(4).Add(-time.Hour), at(6), at(7)}
	var starts []time.Time
	for _, s := range stamps {
		r, ok := unstep("h1", s, t0, at(8), steps, slack)
		if !ok {
			t.Fatalf("the run stamped %s: no step explains it", s)
		}
		starts = append(starts, r)
	}
	if !starts[2].Equal(at(4)) {
		t.Errorf("the run stamped an hour back put at %s, want %s", starts[2], at(4))
	}
	for _, g := range gaps(t0, at(8), starts, time.Minute, none) {
		if g.over() {
			t.Errorf("a gap from %s of %s over its bound: the run stamped in the step was not kept", g.from, g.length)
		}
	}
	// Dropped, it would have opened a gap from 2 to 6 over the bound (a
	// false red): the reason to keep it.
	if gs := gaps(t0, at(8), []time.Time{at(1), at(2), at(6), at(7)}, time.Minute, none); !slices.ContainsFunc(gs, gap.over) {
		t.Errorf("the same runs without the stepped one: no gap over; the case does not show what keeping it is for")
	}
	// Another database's step explains nothing of h1's.
	if _, ok := unstep("h2", stamps[2], t0, at(8), steps, slack); ok {
		t.Errorf("h2's run stamped an hour back, the step on h1: explained")
	}
}

func TestARunThatNeverReachedTheLimiterIsAFailure(t *testing.T) {
	if why := idle(0, 2, true, budget); len(why) != 1 || !strings.Contains(why[0], "no call was refused") {
		t.Errorf("no refusal: %q, want it said", why)
	}
	if why := idle(3, 0, true, budget); len(why) != 1 || !strings.Contains(why[0], "fail-open") {
		t.Errorf("a cut from Redis, no unmetered grant: %q, want it said", why)
	}
	if why := idle(3, 0, true, 0); len(why) != 0 {
		t.Errorf("a cut from a limiter without a fail-open budget: %q, want nothing said", why)
	}
	if why := idle(3, 1, true, budget); len(why) != 0 {
		t.Errorf("refusals and a grant: %q, want nothing said", why)
	}
}

func TestAnOutageOfOneHostLeavesTheChartsOfTwo(t *testing.T) {
	p1, p2 := &host{name: "p1"}, &host{name: "p2"}
	if keepsAll(fault{hosts: []*host{p1}}, []*host{p1, p2}) {
		t.Errorf("p1 cut, p2 running the same charts: counted as their outage")
	}
	if !keepsAll(fault{hosts: []*host{p1, p2}}, []*host{p1, p2}) || !keepsAll(fault{hosts: []*host{p1}}, []*host{p1}) {
		t.Errorf("every host of the charts kept from spending: not counted as their outage")
	}
}

// A fault keeps a chart from its pass until the chart's first slot after
// the fault ends, since it runs at its slots alone; faults that overlap
// count once.
func TestAnOutageLastsToTheChartsNextSlot(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	offset := 15 * time.Second // the chart's slots: 10:00:15, 10:01:15, ...
	one := []fault{{from: at(20), to: at(30)}}
	if d := outageIn(one, t0, at(600), time.Minute, offset, true); d != 55*time.Second {
		t.Errorf("a fault from :20 to :30, slots at :15: outage %s, want 55s (to the slot at 10:01:15)", d)
	}
	if d := outageIn(one, t0, at(600), time.Minute, 0, false); d != 70*time.Second {
		t.Errorf("a fault from :20 to :30, no slot known: outage %s, want 1m10s (a whole every after it)", d)
	}
	both := []fault{{from: at(20), to: at(30)}, {from: at(25), to: at(40)}}
	if d := outageIn(both, t0, at(600), time.Minute, offset, true); d != 55*time.Second {
		t.Errorf("two faults from :20 to :40, slots at :15: outage %s, want 55s, counted once", d)
	}
	if d := outageIn(one, at(40), at(600), time.Minute, offset, true); d != 35*time.Second {
		t.Errorf("a gap from :40, a fault from :20 to :30: outage %s, want 35s (to the slot at 10:01:15)", d)
	}
	if d := outageIn([]fault{{from: at(75), to: at(80)}}, t0, at(600), time.Minute, offset, true); d != time.Minute {
		t.Errorf("a fault from the slot at 10:01:15 to 10:01:20: outage %s, want 1m0s (the slot lost, to the one at 10:02:15)", d)
	}
	if d := outageIn(one, at(100), at(600), time.Minute, offset, true); d != 0 {
		t.Errorf("a gap from 10:01:40, a fault before it: outage %s, want none", d)
	}
}
