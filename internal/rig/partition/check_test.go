package partition

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// await waits until a plan of every database of hosts was read, at most
// two minutes: a daemon that records none by then is said, and the
// history begins without it.
func (p *planLog) await(hosts []*host) {
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		p.mu.Lock()
		n := 0
		for _, h := range hosts {
			if len(p.by[h.db]) > 0 {
				n++
			}
		}
		p.mu.Unlock()
		if n == len(hosts) {
			return
		}
	}
	p.t.Logf("not every database had recorded a plan two minutes after its daemon started")
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

// writeHistory writes g's half of the history into dir: the upstream's
// charges (when it took each request, from which host, for what) and the
// ledgers' calls (when admitted, by which database, for what, and whether
// unmetered or given back), one line each, tab-separated.
func writeHistory(t *testing.T, dir string, up *upstream, g *group, calls []call) {
	t.Helper()
	up.mu.Lock()
	cs := slices.Clone(up.charges[g.key])
	up.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%s\t%s\n", c.at.UTC().Format("15:04:05.000"), c.units, c.host, c.op, c.region, c.page)
	}
	if err := os.WriteFile(filepath.Join(dir, g.key+".charged.tsv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for _, c := range calls {
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%s\trun %d\tunmetered=%v\tgiven_back=%v\n", c.at.UTC().Format("15:04:05.000"), c.units, c.db, c.op, c.region, c.run, c.unmetered, c.givenBack)
	}
	if err := os.WriteFile(filepath.Join(dir, g.key+".admitted.tsv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
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
