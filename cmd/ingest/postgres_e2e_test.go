package main

// End-to-end tests of --db postgres://: several hosts, one database. The
// PostgreSQL is real (internal/rig/pgtest), and so is the Redis that the hosts
// share their quota through, when they do; without it they share the
// limiter in the database.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// pgPassword is the password every test URL carries: trust authentication
// ignores it, and no output may show it.
const pgPassword = "pg-Sekret-9876"

// withPostgres points INGEST_DB at a new PostgreSQL database, by a URL
// with a password, and returns that URL.
func (h *harness) withPostgres() string {
	h.t.Helper()
	u, err := url.Parse(pgtest.URL(h.t))
	if err != nil {
		h.t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	h.set("INGEST_DB", u.String())
	return u.String()
}

// startOn runs the binary in the background as if on another host: in a
// UTS namespace of its own with that host name, where this user may make
// one (root); else on this host.
func (h *harness) startOn(host string, args ...string) *proc {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*cmdTimeout)
	h.created(ctx, args)
	p := &proc{cmd: h.bare(ctx, args...), out: &lockedBuffer{}, done: make(chan struct{}), cancel: cancel}
	if u, err := exec.LookPath("unshare"); err == nil && os.Geteuid() == 0 {
		p.cmd.Args = append([]string{"unshare", "--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, host, ingestBin(h.t)}, args...)
		p.cmd.Path = u
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		cancel()
		h.t.Fatalf("start ingest %s on %s: %v", strings.Join(args, " "), host, err)
	}
	go func() { p.code = exitCode(p.cmd.Wait()); close(p.done) }()
	h.t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done; cancel(); p.noRace(h.t, args) })
	return p
}

func openPG(t *testing.T, rawURL string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Two daemons on two hosts share one PostgreSQL and one Redis: every chart
// is stored once in its slot, whichever host ran it, the ledger holds what
// the upstream charged, and search and report answer the same on either
// host.
func TestTwoHostsOnePostgres(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	dbURL := h.withPostgres()
	hosts := []string{"host-a", "host-b"}
	var ps []*proc
	for _, host := range hosts {
		ps = append(ps, h.startOn(host, "run", "--every", "1h"))
	}
	db := openPG(t, dbURL)
	waitForCharts(t, db, ps)
	var out strings.Builder
	for i, p := range ps {
		p.signal(t, syscall.SIGTERM)
		code, ok := p.wait(cmdTimeout)
		out.WriteString(p.out.String())
		if !ok || code != 0 {
			t.Fatalf("%s: exited %v, code %d, want 0\n%s", hosts[i], ok, code, p.out)
		}
	}
	checkChartsOnce(t, h, db, time.Hour)
	charged := h.fake.Charged(testKey)
	ledger := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE NOT EXISTS
		(SELECT 1 FROM ledger_given_back g WHERE g.call_id = ledger.call_id)`)
	if ledger != charged || charged == 0 {
		t.Errorf("the ledger holds %d units, the upstream charged %d", ledger, charged)
	}
	byHost := strings.Count(out.String(), "another process ran this slot")
	t.Logf("two hosts, one PostgreSQL: %d units charged and in the ledger; %d passes skipped as run by the other host", charged, byHost)
	sameOnEveryHost(t, h, hosts, []string{"search", "--json", "--limit", "50", "video"}, []string{"report", "--json"})
	if strings.Contains(out.String(), pgPassword) {
		t.Errorf("a host printed the database's password:\n%s", out.String())
	}
}

// allRegions is the default regions in schedule order.
var allRegions = regions.Default

// waitForCharts waits until every region has a finished chart run.
func waitForCharts(t *testing.T, db *sql.DB, ps []*proc) {
	t.Helper()
	deadline := time.Now().Add(cmdTimeout)
	for time.Now().Before(deadline) {
		var n int // an error: the hosts have not made the schema yet
		err := db.QueryRow(`SELECT count(DISTINCT region) FROM runs WHERE kind = 'trending' AND status = 'completed'`).Scan(&n)
		if err == nil && n == len(allRegions) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not every chart was stored within %s:\n%s\n---\n%s", cmdTimeout, ps[0].out, ps[1].out)
}

// checkChartsOnce: no region has two runs in one slot of its schedule, and
// its latest run holds the whole chart, whichever host ran it.
func checkChartsOnce(t *testing.T, h *harness, db *sql.DB, every time.Duration) {
	t.Helper()
	for i, region := range allRegions {
		sched, _ := regions.Stagger(every, i, len(allRegions))
		slots := map[time.Time]int{}
		rows, err := db.Query(`SELECT started_ms FROM runs WHERE kind = 'trending' AND region = $1`, region)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var ms int64
			if err := rows.Scan(&ms); err != nil {
				t.Fatal(err)
			}
			slots[sched.Prev(time.UnixMilli(ms))]++
		}
		rows.Close()
		for slot, n := range slots {
			if n != 1 {
				t.Errorf("%s: %d runs in the slot of %s, want 1", region, n, slot.Format(time.TimeOnly))
			}
		}
		entries := queryInt(t, db, `SELECT count(*) FROM trending_entries WHERE run_id =
			(SELECT max(id) FROM runs WHERE kind = 'trending' AND region = $1)`, region)
		if entries != int64(h.fake.ChartLength(region)) {
			t.Errorf("%s: the latest run holds %d entries, want the chart's %d", region, entries, h.fake.ChartLength(region))
		}
	}
}

// sameOnEveryHost runs each command on each host and compares what they
// print, a report's times of day aside.
func sameOnEveryHost(t *testing.T, h *harness, hosts []string, cmds ...[]string) {
	t.Helper()
	for _, args := range cmds {
		var first string
		for _, host := range hosts {
			p := h.startOn(host, args...)
			if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
				t.Fatalf("%s on %s: exit %d\n%s", strings.Join(args, " "), host, code, p.out)
			}
			got := comparable(t, p.out.String())
			if host == hosts[0] {
				first = got
				if len(first) < 100 {
					t.Errorf("%s on %s printed too little to compare:\n%s", strings.Join(args, " "), host, got)
				}
			} else if got != first {
				t.Errorf("%s differs between %s and %s:\n%s\n---\n%s", strings.Join(args, " "), hosts[0], host, first, got)
			}
		}
	}
}

// comparable is a command's JSON with the fields that follow the clock
// (a pool's free_at, the next run, a chart's age, the pace's budget, spend
// and times, the database's size while the daemons write their plans)
// taken out.
func comparable(t *testing.T, out string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	drop(v, "free_at", "next_run", "upstream_reset", "size", "generated", "age_seconds", "reset",
		"budget_units", "projected_units", "fixed_runs_out_at", "made_at", "rate_units_per_hour", "bytes")
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

func drop(v any, keys ...string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(x, k)
		}
		for _, e := range x {
			drop(e, keys...)
		}
	case []any:
		for _, e := range x {
			drop(e, keys...)
		}
	}
}

// With PostgreSQL and no Redis, the limiter is the database's own: a run
// spends through it, the ledger holds what the upstream charged, and check
// says which limiter it asked, the server's version and the schema step.
// No output shows the password.
func TestPostgresWithoutRedisAndHidesPassword(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dbURL := h.withPostgres()
	res := h.mustRun(0, "run", "--once", "--regions", "US")
	db := openPG(t, dbURL)
	charged := h.fake.Charged(testKey)
	if logged := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM quota_log`); logged != charged || charged == 0 {
		t.Errorf("the limiter's log holds %d units, the upstream charged %d", logged, charged)
	}
	check := h.mustRun(0, "check", "--offline")
	if !strings.Contains(check.stdout, "PostgreSQL 1") || !strings.Contains(check.stdout, fmt.Sprintf("schema step %d", store.PGSchemaVersion)) {
		t.Errorf("check does not give the server's version and the schema step:\n%s", check)
	}
	if !strings.Contains(check.stdout, "postgres (embedded in the database, shared by every host on it) answers") {
		t.Errorf("check does not say it asked the limiter in PostgreSQL:\n%s", check)
	}
	show := h.mustRun(0, "quota", "show")
	if !strings.Contains(show.stdout, "backend postgres") {
		t.Errorf("quota show does not name the postgres backend:\n%s", show)
	}
	closed, _ := url.Parse(dbURL)
	closed.Host = "127.0.0.1:1"
	bad := h.run("search", "x", "--db", closed.String())
	for _, r := range []result{res, check, show, bad} {
		if strings.Contains(r.stdout+r.stderr, pgPassword) {
			t.Errorf("the password is printed:\n%s", r)
		}
	}
	if bad.code == 0 {
		t.Errorf("a URL with a bad port: exit 0\n%s", bad)
	}
}

// Two daemons on two hosts share one PostgreSQL and no Redis, on a pool
// far smaller than the charts: between them they spend the pool exactly,
// never more, and the upstream charged what the ledger and the limiter's
// log hold.
func TestTwoHostsOnePostgresNoRedis(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const limit = 20
	h.tightCosts(limit)
	dbURL := h.withPostgres()
	hosts := []string{"host-a", "host-b"}
	var ps []*proc
	for _, host := range hosts {
		// Unpaced: the test is about the limiter's exactness, so every
		// region asks, and those past the pool are refused.
		ps = append(ps, h.startOn(host, "run", "--every", "1h", "--pace=false"))
	}
	db := openPG(t, dbURL)
	deadline := time.Now().Add(cmdTimeout)
	for {
		var n int // an error: the hosts have not made the schema yet
		err := db.QueryRow(`SELECT count(DISTINCT region) FROM runs WHERE kind = 'trending' AND status IN ('completed', 'stopped')`).Scan(&n)
		if err == nil && n == len(allRegions) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every region ran within %s:\n%s\n---\n%s", cmdTimeout, ps[0].out, ps[1].out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var out strings.Builder
	for i, p := range ps {
		p.signal(t, syscall.SIGTERM)
		code, ok := p.wait(cmdTimeout)
		out.WriteString(p.out.String())
		if !ok || code != 0 {
			t.Fatalf("%s: exited %v, code %d, want 0\n%s", hosts[i], ok, code, p.out)
		}
	}
	charged, inDefault := h.fake.Charged(testKey), h.chargedDefault()
	ledger := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE NOT EXISTS
		(SELECT 1 FROM ledger_given_back g WHERE g.call_id = ledger.call_id)`)
	logged := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM quota_log WHERE pool = 'default'`)
	stopped := queryInt(t, db, `SELECT count(*) FROM runs WHERE kind = 'trending' AND status = 'stopped'`)
	t.Logf("two hosts, one PostgreSQL, no Redis, a pool of %d: upstream charged %d, ledger %d, limiter's log %d; %d passes stopped by the quota",
		limit, charged, ledger, logged, stopped)
	if charged != ledger || inDefault != logged || inDefault > limit {
		t.Errorf("charged %d in all pools, ledger %d; charged %d in the default pool, its log %d; want each pair equal and the default pool's at most %d",
			charged, ledger, inDefault, logged, limit)
	}
	if stopped == 0 || charged != limit {
		t.Errorf("charged %d with %d passes stopped: want the pool spent exactly (%d) by demand above it", charged, stopped, limit)
	}
	if strings.Contains(out.String(), "REDIS_URL") && strings.Contains(out.String(), "required") {
		t.Errorf("a host asked for Redis:\n%s", out.String())
	}
	sameOnEveryHost(t, h, hosts, []string{"report", "--json"})
}

// Every command on a PostgreSQL store, after one run: each exits 0 and
// says what it says on SQLite.
func TestPostgresCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	dbURL := h.withPostgres()
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	var id string
	if err := openPG(t, dbURL).QueryRow(`SELECT v.id FROM videos v JOIN trending_entries e USING (vid) WHERE e.rank = 1 LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Format(time.DateOnly)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--json", "video"}, `"regions"`},
		{[]string{"history", id}, id},
		{[]string{"export", "--since", day, "--format", "jsonl"}, id},
		{[]string{"export", "--since", day, "--format", "csv", "--per", "day"}, id},
		{[]string{"report", "--json"}, `"completed"`},
		{[]string{"tokens", "add", "acme", "--plan", "standard"}, "ingest_"},
		{[]string{"tokens", "list"}, "acme"},
		{[]string{"tokens", "revoke", "acme"}, ""},
		{[]string{"quota", "show"}, "default"},
		{[]string{"prune", "--keep", "30d"}, ""},
		{[]string{"run", "--once", "--regions", "FR"}, ""},
	} {
		res := h.run(tc.args...)
		if res.code != 0 || !strings.Contains(res.stdout+res.stderr, tc.want) {
			t.Errorf("want exit 0 and %q:\n%s", tc.want, res)
		}
		if strings.Contains(res.stdout+res.stderr, pgPassword) {
			t.Errorf("the password is printed:\n%s", res)
		}
	}
}

// serve on PostgreSQL answers the API and the pages from the shared
// database.
func TestPostgresServe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.withPostgres()
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	var id string
	res := h.mustRun(0, "search", "--json", "--limit", "1", "video")
	var hits []struct{ ID string }
	if err := json.Unmarshal([]byte(res.stdout), &hits); err != nil || len(hits) != 1 {
		t.Fatalf("search: %v\n%s", err, res)
	}
	id = hits[0].ID
	addr := closedAddr(t)
	h.set("INGEST_UI_TOKEN", uiToken)
	d := &dashboard{h: h, base: "http://" + addr, proc: h.start("serve", "--listen", addr, "--regions", "US,GB")}
	if !waitFor(30*time.Second, func() bool { code, _ := d.get(t, "/readyz", false); return code == 200 }) {
		t.Fatalf("ingest serve on PostgreSQL never became ready on %s\n%s", addr, d.proc.out)
	}
	for _, path := range []string{"/api/v1/runs", "/api/v1/search?q=video", "/api/v1/videos/" + id, "/api/v1/quota", "/"} {
		if code, body := d.get(t, path, true); code != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d\n%s", path, code, body)
		}
	}
	if strings.Contains(d.proc.out.String(), pgPassword) {
		t.Errorf("serve printed the password:\n%s", d.proc.out)
	}
}

// TestServeSays503WhileItsDatabaseIsDown: a replica whose PostgreSQL
// stops answers what it has not kept with 503 and Retry-After, the API
// and the pages alike, never 500: a reader, and the cache in front, ask
// again later.
func TestServeSays503WhileItsDatabaseIsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := pgtest.Start(t) // of its own: stopping the shared one would stop every test
	h.set("INGEST_DB", srv.URL(t))
	h.mustRun(0, "run", "--once", "--regions", "US")
	base := startServe(t, h)
	if code, _ := getWithHeader(t, base+"/api/v1/search?q=video"); code != 200 {
		t.Fatalf("GET /api/v1/search with the database up: %d", code)
	}
	if err := srv.Signal(syscall.SIGINT); err != nil { // PostgreSQL's fast shutdown
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/search?q=football", "/search?q=football"} {
		var code int
		var retry string
		waitFor(30*time.Second, func() bool { code, retry = getWithHeader(t, base+path); return code != 200 })
		if code != 503 || retry == "" {
			t.Errorf("GET %s with the database stopped: %d, Retry-After %q; want 503 with Retry-After", path, code, retry)
		}
	}
}

// getWithHeader is a GET's status and its Retry-After.
func getWithHeader(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}
