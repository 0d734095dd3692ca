package partition

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
)

// open opens h's database for reading, from the test's side.
func open(h *host, pg *pgServer) (*sql.DB, error) {
	if h.g == pgGroup {
		return sql.Open("pgx", pg.local("ingest"))
	}
	return sql.Open("sqlite", "file:"+h.db+"?mode=ro")
}

// eachDatabase calls fn once for each database of hosts, with the first
// of hosts on it and the database open for reading, closed after.
func eachDatabase(t *testing.T, hosts []*host, pg *pgServer, fn func(h *host, db *sql.DB)) {
	t.Helper()
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h.db] {
			continue
		}
		seen[h.db] = true
		db, err := open(h, pg)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer db.Close()
			fn(h, db)
		}()
	}
}

// planSample is each chart's planned cadence in one database's recorded
// plan (pace_plans, as report and the dashboard show it) at one moment.
type planSample struct {
	at    time.Time
	every map[string]time.Duration // pace.Never: dropped
}

// planLog is the history of the plans each database recorded, read every
// few seconds: a plan replaces the one before it in the database, so the
// test keeps them.
type planLog struct {
	t  *testing.T
	pg *pgServer
	mu sync.Mutex
	by map[string][]planSample // by database
	// raw is each plan read, as the database holds it, by database: the
	// history's third half, for a reader after the verdict.
	raw map[string][]string
}

func newPlanLog(t *testing.T, pg *pgServer) *planLog {
	return &planLog{t: t, pg: pg, by: map[string][]planSample{}, raw: map[string][]string{}}
}

// sample reads the hosts' plans until the returned stop is called.
func (p *planLog) sample(hosts []*host) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(sample)
		defer tick.Stop()
		for {
			seen := map[string]bool{}
			for _, h := range hosts {
				if !seen[h.db] {
					seen[h.db] = true
					p.read(h)
				}
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}

func (p *planLog) read(h *host) {
	db, err := open(h, p.pg)
	if err != nil {
		return
	}
	defer db.Close()
	var text string
	if db.QueryRow(`SELECT plan FROM pace_plans`).Scan(&text) != nil {
		return // none yet, or the file is busy: the next sample reads it
	}
	var st pace.Status
	if json.Unmarshal([]byte(text), &st) != nil {
		return
	}
	s := planSample{at: time.Now(), every: map[string]time.Duration{}}
	for _, e := range st.Entries {
		if e.Dropped {
			s.every[e.Name] = pace.Never
		} else {
			s.every[e.Name] = e.Every
		}
	}
	p.mu.Lock()
	p.by[h.db] = append(p.by[h.db], s)
	p.raw[h.db] = append(p.raw[h.db], s.at.UTC().Format("15:04:05.000")+"\t"+text)
	p.mu.Unlock()
}

// planned is the longest cadence the plans of db gave chart from the last
// sample at or before from until to; ok is false when none was read.
func (p *planLog) planned(db, chart string, from, to time.Time) (every time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ss := p.by[db]
	i := sort.Search(len(ss), func(i int) bool { return ss[i].at.After(from) })
	if i > 0 {
		i--
	}
	for ; i < len(ss) && !ss[i].at.After(to); i++ {
		if e, has := ss[i].every[chart]; has {
			every, ok = max(every, e), true
		}
	}
	return every, ok
}

// changes says when db's plans changed chart's cadence: "15:04:05 1m0s,
// 15:06:10 2m0s"; "never" is dropped.
func (p *planLog) changes(db, chart string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	last := time.Duration(-1)
	for _, s := range p.by[db] {
		e, ok := s.every[chart]
		if !ok || e == last {
			continue
		}
		last = e
		text := e.Round(time.Second).String()
		if e == pace.Never {
			text = "never"
		}
		out = append(out, s.at.UTC().Format("15:04:05")+" "+text)
	}
	if len(out) == 0 {
		return "no plan read"
	}
	return strings.Join(out, ", ")
}

// checkCharges: the upstream's charge for g's key in every trailing window
// within the limit plus each database's fail-open budget. A failover loses
// no admission: each counts only once the replica holds it.
func checkCharges(t *testing.T, up *upstream, g *group, admitted []charge) {
	up.mu.Lock()
	cs := inDefaultPool(up.charges[g.key])
	up.mu.Unlock()
	dbs := map[string]bool{}
	for _, h := range g.hosts {
		dbs[h.db] = true
	}
	bound := int64(limit + g.budget*len(dbs))
	worst, worstAt := mostInAWindow(cs, window)
	var windows []string
	// The charge in each window of the run, back to back, for the note.
	if len(cs) > 0 {
		for w := cs[0].at; !w.After(cs[len(cs)-1].at); w = w.Add(window) {
			var sum int64
			for _, c := range cs {
				if !c.at.Before(w) && c.at.Before(w.Add(window)) {
					sum += c.units
				}
			}
			windows = append(windows, fmt.Sprint(sum))
		}
	}
	t.Logf("%s (%d hosts, %d databases): charged %d units in %d calls; per %s window from the first call: %s; the most in any trailing window: %d (from %s), bound %d (limit %d + %d databases x fail-open budget %d; a failover adds nothing: every admission waited for the replica)",
		g.name, len(g.hosts), len(dbs), sumUnits(cs), len(cs), window, strings.Join(windows, " "), worst, worstAt.UTC().Format("15:04:05"),
		bound, limit, len(dbs), g.budget)
	// The same count by the limiter's side: when each call the ledgers
	// hold (and did not give back) was admitted. A window the upstream
	// charged over the bound while the admissions in every window stayed
	// within it is a call charged in another window than it was admitted.
	most, mostAt := mostInAWindow(admitted, window)
	t.Logf("%s: the ledgers admitted %d units in %d calls; the most admitted in any trailing window: %d (from %s)",
		g.name, sumUnits(admitted), len(admitted), most, mostAt.UTC().Format("15:04:05"))
	if worst > bound {
		t.Errorf("%s: the upstream charged %d units in the %s window from %s, over the bound %d", g.name, worst, window, worstAt.UTC().Format(time.RFC3339), bound)
	}
}

// inDefaultPool are the charges of the operations that draw from the
// default pool, whose window the bound is for: tracking's
// videos.batchGetStats draws from the stats pool and search.list from
// search, each a budget of its own that the upstream charges under the
// same key.
func inDefaultPool(cs []charge) []charge {
	var out []charge
	for _, c := range cs {
		if !strings.HasSuffix(c.op, "/videos:batchGetStats") && !strings.HasSuffix(c.op, "/search") {
			out = append(out, c)
		}
	}
	return out
}

// mostInAWindow is the most cs charged in any span of length w (a span
// that starts at a charge holds the most of any that covers it), and where
// that span starts; cs are in time order.
func mostInAWindow(cs []charge, w time.Duration) (worst int64, from time.Time) {
	for i := range cs {
		var sum int64
		for j := i; j < len(cs) && cs[j].at.Sub(cs[i].at) < w; j++ {
			sum += cs[j].units
		}
		if sum > worst {
			worst, from = sum, cs[i].at
		}
	}
	return worst, from
}

// checkPages: every chart page the upstream charged for g's key is in one
// of g's ledgers; it says how many are stored.
func checkPages(t *testing.T, up *upstream, g *group, pg *pgServer) {
	up.mu.Lock()
	charged := up.fake.ChargedByOp(g.key)[ingest.OpVideosList]
	up.mu.Unlock()
	var ledgered, givenBack, stored int64
	eachDatabase(t, g.hosts, pg, func(h *host, db *sql.DB) {
		var n, back, p int64
		if err := db.QueryRow(`SELECT count(*) FROM ledger WHERE op = 'videos.list'`).Scan(&n); err != nil {
			t.Errorf("%s: read its ledger: %v", h.name, err)
		}
		// A call given back never reached the upstream, by the worker's
		// account: the upstream charged none of them.
		if err := db.QueryRow(`SELECT count(*) FROM ledger l JOIN ledger_given_back g ON g.quota_key = l.quota_key AND g.call_id = l.call_id
			WHERE l.op = 'videos.list'`).Scan(&back); err != nil {
			t.Errorf("%s: read the calls given back: %v", h.name, err)
		}
		if err := db.QueryRow(`SELECT COALESCE(sum(pages), 0) FROM runs WHERE kind = 'trending'`).Scan(&p); err != nil {
			t.Errorf("%s: read its runs: %v", h.name, err)
		}
		ledgered, givenBack, stored = ledgered+n, givenBack+back, stored+p
	})
	t.Logf("%s: chart pages: %d charged, %d in the ledgers (%d of them given back as never made), %d stored", g.name, charged, ledgered, givenBack, stored)
	if charged > ledgered-givenBack {
		t.Errorf("%s: the upstream charged %d chart calls, the ledgers hold %d that were not given back: a call was made that no ledger counts", g.name, charged, ledgered-givenBack)
	}
}

// checkGaps: every chart's gaps, between its completed runs and from the
// start and to the end of the run, within the longest cadence its
// database's plan gave it over the gap, plus the time the nemesis kept a
// host that runs it from spending over the gap, plus grace. A chart the
// plan dropped has no bound while dropped; it is said.
func checkGaps(t *testing.T, hosts []*host, pg *pgServer, plans *planLog, faults []fault, begin, end time.Time) {
	eachDatabase(t, hosts, pg, func(h *host, db *sql.DB) {
		var on []*host // the hosts that run its charts
		for _, o := range hosts {
			if o.db == h.db {
				on = append(on, o)
			}
		}
		outage := func(from, to time.Time) (d time.Duration) {
			for _, f := range faults {
				if !slices.ContainsFunc(f.hosts, func(x *host) bool { return slices.Contains(on, x) }) {
					continue
				}
				if a, b := maxTime(f.from, from), minTime(f.to, to); b.After(a) {
					d += b.Sub(a)
				}
			}
			return d
		}
		starts := map[string][]time.Time{}
		rows, err := db.Query(`SELECT region, category, started_ms FROM runs WHERE kind = 'trending' AND status = 'completed' ORDER BY started_ms`)
		if err != nil {
			t.Fatalf("%s: read its runs: %v", h.name, err)
		}
		for rows.Next() {
			var region, category string
			var ms int64
			rows.Scan(&region, &category, &ms)
			name := region
			if category != "" {
				name += "/" + category
			}
			starts[name] = append(starts[name], time.UnixMilli(ms))
		}
		rows.Close()
		var names []string
		for _, o := range on {
			names = append(names, o.name)
		}
		for _, chart := range strings.Split(h.regions, ",") {
			gs := gaps(begin, end, starts[chart],
				func(from, to time.Time) (time.Duration, bool) { return plans.planned(h.db, chart, from, to) }, outage)
			var worst gap
			var dropped bool
			for _, g := range gs {
				dropped = dropped || g.dropped
				if !g.dropped && g.length > worst.length {
					worst = g
				}
				if g.over() {
					t.Errorf("%s %s: %s without a completed run from %s, over its bound %s (planned every %s + outage %s + grace %s)",
						strings.Join(names, ","), chart, g.length.Round(time.Second), g.from.UTC().Format("15:04:05"), g.bound().Round(time.Second),
						g.every, g.outage.Round(time.Second), grace)
				}
			}
			note := ""
			if dropped {
				note = "; dropped by the plan for a while (no bound then)"
			}
			if n := stampedOutside(begin, end, starts[chart]); n > 0 {
				note += fmt.Sprintf("; %d runs stamped outside the test's span by a stepped clock, left out", n)
			}
			t.Logf("%s %s: %d completed runs, worst gap %s from %s (its bound %s)%s; planned every: %s", strings.Join(names, ","), chart, len(starts[chart]),
				worst.length.Round(time.Second), worst.from.UTC().Format("15:04:05"), worst.bound().Round(time.Second), note, plans.changes(h.db, chart))
		}
	})
}

// gap is a span without a completed run of a chart, and what bounds it.
type gap struct {
	from          time.Time
	length        time.Duration
	every, outage time.Duration // the plan's longest cadence over it, and the outage in it
	dropped       bool          // the plan dropped the chart then: no bound
}

func (g gap) bound() time.Duration { return g.every + g.outage + grace }

func (g gap) over() bool { return !g.dropped && g.length > g.bound() }

// gaps are a chart's gaps from begin to its first completed run (starts,
// in order), between its runs and from its last to end, each with the
// plan's cadence over it (planned; --every when no plan was read yet) and
// the outage in it. A run stamped outside begin to end was stamped by a
// host's stepped clock, not when it ran: it is left out (stamped, say, an
// hour back it would open a gap of an hour that nothing kept open), as
// stampedOutside counts.
func gaps(begin, end time.Time, starts []time.Time, planned func(from, to time.Time) (time.Duration, bool),
	outage func(from, to time.Time) time.Duration) []gap {
	at := []time.Time{begin}
	for _, s := range starts {
		if !s.Before(begin) && !s.After(end) {
			at = append(at, s)
		}
	}
	at = append(at, end)
	var out []gap
	for i := 1; i < len(at); i++ {
		g := gap{from: at[i-1], length: at[i].Sub(at[i-1]), outage: outage(at[i-1], at[i])}
		every, ok := planned(at[i-1], at[i])
		if !ok {
			every = time.Minute // --every, before any plan was read
		}
		g.every, g.dropped = every, every == pace.Never
		out = append(out, g)
	}
	return out
}

// stampedOutside counts the starts outside begin to end, which gaps
// leaves out.
func stampedOutside(begin, end time.Time, starts []time.Time) (n int) {
	for _, s := range starts {
		if s.Before(begin) || s.After(end) {
			n++
		}
	}
	return n
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func sumUnits(cs []charge) (n int64) {
	for _, c := range cs {
		n += c.units
	}
	return n
}

// ledgerCalls are the calls of g's ledgers in the default pool that were
// not given back, each at the time the limiter admitted it, in time order.
func ledgerCalls(t *testing.T, g *group, pg *pgServer) []charge {
	t.Helper()
	var out []charge
	eachDatabase(t, g.hosts, pg, func(h *host, db *sql.DB) {
		rows, err := db.Query(`SELECT l.at_ms, l.units, l.op, l.region, COALESCE(l.run_id, 0) FROM ledger l
			WHERE l.pool = 'default' AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)`)
		if err != nil {
			t.Fatalf("%s: read its ledger: %v", h.name, err)
		}
		defer rows.Close()
		for rows.Next() {
			var ms, units, run int64
			var op, region string
			if err := rows.Scan(&ms, &units, &op, &region, &run); err != nil {
				t.Fatalf("%s: read its ledger: %v", h.name, err)
			}
			out = append(out, charge{at: time.UnixMilli(ms), units: units, host: h.name, op: op, region: region, page: fmt.Sprint("run ", run)})
		}
	})
	slices.SortFunc(out, func(a, b charge) int { return a.at.Compare(b.at) })
	return out
}

// writeHistory writes g's half of the history into dir: the upstream's
// charges (when it took each request, from which host, for what) and the
// ledgers' admissions, one line each, tab-separated.
func writeHistory(t *testing.T, dir string, up *upstream, g *group, admitted []charge) {
	t.Helper()
	up.mu.Lock()
	cs := slices.Clone(up.charges[g.key])
	up.mu.Unlock()
	write := func(name string, cs []charge) {
		var b strings.Builder
		for _, c := range cs {
			fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%s\t%s\n", c.at.UTC().Format("15:04:05.000"), c.units, c.host, c.op, c.region, c.page)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(g.key+".charged.tsv", cs)
	write(g.key+".admitted.tsv", admitted)
	t.Logf("%s: the history is in %s (%s.charged.tsv, %s.admitted.tsv)", g.name, dir, g.key, g.key)
}

// writeHosts writes the hosts' half of the history into dir: each host's
// log, and each database's plans as read (the time, then the plan as
// pace_plans holds it), named by its first host.
func writeHosts(t *testing.T, dir string, hosts []*host, plans *planLog) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if log, err := os.ReadFile(h.log.Name()); err == nil {
			os.WriteFile(filepath.Join(dir, h.name+".log"), log, 0o644)
		}
		if seen[h.db] {
			continue
		}
		seen[h.db] = true
		plans.mu.Lock()
		text := strings.Join(plans.raw[h.db], "\n")
		plans.mu.Unlock()
		if err := os.WriteFile(filepath.Join(dir, h.name+".plans.tsv"), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("the hosts' logs and plans are in %s (<host>.log, <first host>.plans.tsv)", dir)
}
