package partition

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// slack is how far apart the upstream's clock and a ledger's may put one
// call (a call reaches the upstream within the delivery bound of its
// admission; a host's clock stepped within the limiter's guard stamps its
// runs off by up to the step): the window of matching, either way.
const slack = 2 * window

// record is what g's databases hold after the run, each database named by
// its first host (label).
type record struct {
	calls    []call
	stored   []storedPage
	runs     map[string]map[string][]time.Time   // label -> chart -> completed runs' slots (slotOf)
	offsets  map[string]map[string]time.Duration // label -> chart -> where in every its slots fall
	refusals int                                 // runs stopped because the limiter said no
}

// label is the name of db's first host in g: what the history calls it.
func (g *group) label(db string) string {
	for _, h := range g.all() {
		if h.db == db {
			return h.name
		}
	}
	return db
}

// daemonCall says whether a call of db's ledger in region is its
// daemon's: a region one of db's daemons runs.
func (g *group) daemonCall(db, region string) bool {
	for _, h := range g.hosts {
		if g.label(h.db) == db && slices.Contains(strings.Split(h.regions, ","), region) {
			return true
		}
	}
	return false
}

// all are g's hosts.
func (g *group) all() []*host { return g.hosts }

// dbOf names each of g's hosts' database by its label.
func (g *group) dbOf() map[string]string {
	out := map[string]string{}
	for _, h := range g.all() {
		out[h.name] = g.label(h.db)
	}
	return out
}

// readRecord reads g's databases.
func readRecord(t *testing.T, g *group, pg *pgServer) record {
	t.Helper()
	rec := record{runs: map[string]map[string][]time.Time{}, offsets: map[string]map[string]time.Duration{}}
	eachDatabase(t, g.all(), pg, func(h *host, db *sql.DB) {
		label := g.label(h.db)
		rec.calls = append(rec.calls, readCalls(t, label, db)...)
		rows, err := db.Query(`SELECT region, category, status, started_ms, COALESCE(finished_ms, 0), pages, COALESCE(slot_ms, 0) FROM runs WHERE kind = 'trending'`)
		if err != nil {
			t.Fatalf("%s: read its runs: %v", label, err)
		}
		defer rows.Close()
		rec.runs[label], rec.offsets[label] = map[string][]time.Time{}, map[string]time.Duration{}
		for rows.Next() {
			var region, category, status string
			var started, finished, pages, slot int64
			if err := rows.Scan(&region, &category, &status, &started, &finished, &pages, &slot); err != nil {
				t.Fatalf("%s: read its runs: %v", label, err)
			}
			to := time.UnixMilli(finished)
			if finished == 0 {
				to = time.Now()
			}
			for range pages {
				rec.stored = append(rec.stored, storedPage{db: label, region: region, from: time.UnixMilli(started), to: to})
			}
			switch status {
			case "completed":
				var at time.Time
				if slot != 0 {
					at = time.UnixMilli(slot)
					rec.offsets[label][region] = time.Duration(slot%every.Milliseconds()) * time.Millisecond
				}
				rec.runs[label][region] = append(rec.runs[label][region], slotOf(time.UnixMilli(started), at, every/time.Duration(len(strings.Split(h.regions, ",")))))
			case "stopped":
				rec.refusals++
			}
		}
	})
	return rec
}

// readCalls are the calls db's ledger holds in the default pool.
func readCalls(t *testing.T, label string, db *sql.DB) []call {
	rows, err := db.Query(`SELECT l.at_ms, l.units, l.op, l.region, COALESCE(l.run_id, 0), l.unmetered,
		EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)
		FROM ledger l WHERE l.pool = 'default'`)
	if err != nil {
		t.Fatalf("%s: read its ledger: %v", label, err)
	}
	defer rows.Close()
	var out []call
	for rows.Next() {
		var ms, units, run, unmetered int64
		var back bool
		c := call{db: label}
		if err := rows.Scan(&ms, &units, &c.op, &c.region, &run, &unmetered, &back); err != nil {
			t.Fatalf("%s: read its ledger: %v", label, err)
		}
		c.at, c.units, c.run, c.unmetered, c.givenBack = time.UnixMilli(ms), units, run, unmetered == 1, back
		out = append(out, c)
	}
	return out
}

// checkCharges: the ledgers' metered calls in every trailing window within
// the limit, each database's unmetered ones within its fail-open budget,
// and the upstream's charge in every trailing window within the limit
// plus the unmetered calls that could reach it then.
func checkCharges(t *testing.T, up *upstream, g *group, rec record) {
	up.mu.Lock()
	cs := inDefaultPool(up.charges[g.key])
	up.mu.Unlock()
	r := judgeCharges(cs, rec.calls, limit, g.budget, window, delivery)
	unmetered := 0
	for _, c := range kept(rec.calls) {
		if c.unmetered {
			unmetered++
		}
	}
	t.Logf("%s (%d hosts, under load): the upstream charged %d units in %d calls; the most in any trailing %s window: %d from %s, its bound %d (the limit %d + the unmetered calls that could reach it, each database's at most its fail-open budget %d)",
		g.name, len(g.all()), sumUnits(cs), len(cs), window, r.worst, r.worstFrom.UTC().Format("15:04:05"), r.worstBound, limit, g.budget)
	if r.over {
		t.Errorf("%s: the upstream charged %d units in the %s window from %s, over its bound %d", g.name, r.sum, window, r.from.UTC().Format(time.RFC3339), r.bound)
	}
	most, shown, at := shownOver(rec.calls, window, g.daemonCall)
	t.Logf("%s: the ledgers admitted %d metered calls and %d unmetered; the most the limiter counted in the %s window of a metered admission: %d at %s (%d of them granted unmetered and written back before it), the limit %d",
		g.name, len(kept(rec.calls))-unmetered, unmetered, window, most, at.UTC().Format("15:04:05"), shown, limit)
	if most > limit {
		t.Errorf("%s: the limiter admitted a call at %s with %d units in the %s window it ends (%d metered, %d granted unmetered and written back before it), over the limit %d: it admitted more than its pool",
			g.name, at.UTC().Format(time.RFC3339), most, window, most-shown, shown, limit)
	}
	for _, e := range budgetOver(rec.calls, g.budget, window) {
		t.Errorf("%s: %s", g.name, e)
	}
}

// checkPages: every call the upstream charged for g's key matched, one to
// one, to a call of the charging host's ledger or a page its database
// stored.
func checkPages(t *testing.T, up *upstream, g *group, rec record) {
	up.mu.Lock()
	cs := inDefaultPool(up.charges[g.key])
	up.mu.Unlock()
	pages := 0
	for _, c := range cs {
		if ledgerOp(c.op) == "videos.list" {
			pages++
		}
	}
	lost := lostCharges(cs, g.dbOf(), rec.calls, rec.stored, slack)
	t.Logf("%s: %d calls charged, %d of them chart pages; %d pages stored; %d charged calls matched to no ledger call nor stored page", g.name, len(cs), pages, len(rec.stored), len(lost))
	for i, c := range lost {
		if i == 5 {
			t.Errorf("%s: and %d more", g.name, len(lost)-i)
			break
		}
		t.Errorf("%s: the upstream charged %s %s (page %q) from %s at %s, and neither a ledger holds the call nor its database the page", g.name, c.op, c.region, c.page, c.host, c.at.UTC().Format("15:04:05.000"))
	}
}

// checkWorkload: the run made g's limiter decide: it refused calls, and
// granted some on the fail-open budget when a host was cut from it.
func checkWorkload(t *testing.T, g *group, rec record, faults []fault) {
	cut := slices.ContainsFunc(faults, func(f fault) bool {
		return f.kind == "limiter" && slices.ContainsFunc(f.hosts, func(h *host) bool { return h.g == g })
	})
	unmetered := 0
	for _, c := range kept(rec.calls) {
		if c.unmetered {
			unmetered++
		}
	}
	t.Logf("%s: %d runs stopped by the limiter's refusal, %d calls granted on the fail-open budget", g.name, rec.refusals, unmetered)
	for _, why := range idle(rec.refusals, unmetered, cut, g.budget) {
		if *runFor < 2*window {
			// The demand is twice the pool a window: a run shorter than two
			// windows (make test's) can end, after an early fault, before it
			// reaches the limit.
			t.Logf("%s: %s (said, not failed: the run is shorter than two windows)", g.name, why)
			continue
		}
		t.Errorf("%s: %s", g.name, why)
	}
}

// checkGaps: every chart's gaps, between its completed runs and from the
// start and to the end of the run, within the cadence the pool sustains
// for what was configured (sustained), plus the time the nemesis kept
// every host that runs it from spending, plus grace. A run stamped by a
// stepped clock is put back where it ran.
//
// Runs stamped from started (the daemons' start) to begin (the history's,
// once each had recorded its plan) are before the history: no gap's.
func checkGaps(t *testing.T, g *group, rec record, plans *planLog, faults []fault, steps []step, every time.Duration, started, begin, end time.Time) {
	seen := map[string]bool{}
	for _, h := range g.hosts {
		if seen[h.db] {
			continue
		}
		seen[h.db] = true
		var on []*host // the daemons that run its charts
		for _, o := range g.hosts {
			if o.db == h.db {
				on = append(on, o)
			}
		}
		var kept []fault // the faults that kept every daemon of the database from spending
		for _, f := range faults {
			if keepsAll(f, on) {
				kept = append(kept, f)
			}
		}
		label := g.label(h.db)
		for _, chart := range strings.Split(h.regions, ",") {
			offset, ok := rec.offsets[label][chart]
			outage := func(from, to time.Time) time.Duration {
				return outageIn(kept, from, to, every, offset, ok)
			}
			var starts []time.Time
			var moved, unplaced int
			for _, s := range rec.runs[label][chart] {
				at, ok := unstep(label, s, started, end, steps, slack)
				switch {
				case !ok:
					unplaced++
				case !at.Equal(s):
					moved++
				}
				starts = append(starts, at)
			}
			slices.SortFunc(starts, time.Time.Compare)
			var worst gap
			for _, gp := range gaps(begin, end, starts, every, outage) {
				if gp.length > worst.length {
					worst = gp
				}
				if gp.over() {
					t.Errorf("%s %s: %s without a completed run from %s, over its bound %s (the pool sustains every %s for what was configured + outage %s + grace %s)",
						hostsOf(on), chart, gp.length.Round(time.Second), gp.from.UTC().Format("15:04:05"), gp.bound().Round(time.Second),
						gp.every.Round(time.Second), gp.outage.Round(time.Second), grace)
				}
			}
			note := ""
			if moved > 0 {
				note += fmt.Sprintf("; %d runs stamped by a stepped clock put back where they ran", moved)
			}
			if unplaced > 0 {
				note += fmt.Sprintf("; %d runs stamped outside the test's span that no step explains, left out", unplaced)
			}
			t.Logf("%s %s: %d completed runs, worst gap %s from %s (its bound %s)%s; its plan's cadences (not its bound): %s", hostsOf(on), chart, len(starts),
				worst.length.Round(time.Second), worst.from.UTC().Format("15:04:05"), worst.bound().Round(time.Second), note, plans.changes(h.db, chart))
		}
	}
}

// outageIn is how long the faults kept a chart from a pass between from
// and to: each from its start to the chart's first slot after it ended
// (its slots fall offset into each every; ok false when no run recorded
// one, and then every after the end), since a chart runs at its slots
// alone and a fault that ends between two of them keeps it until the
// next; faults that overlap count once.
func outageIn(faults []fault, from, to time.Time, every, offset time.Duration, ok bool) time.Duration {
	type span struct{ a, b time.Time }
	var spans []span
	for _, f := range faults {
		end := f.to.Add(every)
		if ok {
			end = nextSlot(f.to, every, offset)
		}
		if a, b := maxTime(f.from, from), minTime(end, to); b.After(a) {
			spans = append(spans, span{a, b})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a.Compare(y.a) })
	var d time.Duration
	var reach time.Time
	for _, s := range spans {
		if s.a.Before(reach) {
			s.a = reach
		}
		if s.b.After(s.a) {
			d += s.b.Sub(s.a)
			reach = s.b
		}
	}
	return d
}

// nextSlot is the first slot at or after t of slots every apart, offset
// into each.
func nextSlot(t time.Time, every, offset time.Duration) time.Time {
	base := t.Add(-offset).Truncate(every).Add(offset)
	if base.Before(t) {
		base = base.Add(every)
	}
	return base
}

// keepsAll says whether f kept every one of on from spending: a chart
// that several hosts run waits only when none of them can.
func keepsAll(f fault, on []*host) bool {
	for _, h := range on {
		if !slices.Contains(f.hosts, h) {
			return false
		}
	}
	return len(on) > 0
}

// gap is a span without a completed run of a chart, and what bounds it.
type gap struct {
	from          time.Time
	length        time.Duration
	every, outage time.Duration // the sustained cadence, and the outage in the gap
}

func (g gap) bound() time.Duration { return g.every + g.outage + grace }

func (g gap) over() bool { return g.length > g.bound() }

// gaps are a chart's gaps from begin to its first completed run (starts,
// in order, within begin to end), between its runs and from its last to
// end, each bound by every and the outage in it.
func gaps(begin, end time.Time, starts []time.Time, every time.Duration, outage func(from, to time.Time) time.Duration) []gap {
	at := []time.Time{begin}
	for _, s := range starts {
		if !s.Before(begin) && !s.After(end) {
			at = append(at, s)
		}
	}
	at = append(at, end)
	var out []gap
	for i := 1; i < len(at); i++ {
		out = append(out, gap{from: at[i-1], length: at[i].Sub(at[i-1]), every: every, outage: outage(at[i-1], at[i])})
	}
	return out
}
