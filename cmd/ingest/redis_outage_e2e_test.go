package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/web/listener"
)

// Promises 1 and 8: a Redis that lost its data still counts what the
// ledger says was spent in the window, so a restart cannot double the day.
func TestRedisRestartDoesNotForgetSpentUnits(t *testing.T) {
	t.Parallel()
	const limit = 20
	h := newHarness(t)
	rs := h.withRedis()
	h.tightCosts(limit)
	h.mustRun(0, "run", "--once")
	if got := h.fake.Charged(testKey); got != limit {
		t.Fatalf("first run: upstream charged %d, want the limit %d", got, limit)
	}
	rs.Restart(t) // empty
	h.mustRun(0, "run", "--once")
	if got := h.fake.Charged(testKey); got != limit {
		t.Errorf("after Redis restarted empty, the upstream was charged %d units within one window of %d: "+
			"the limiter forgot the %d units the ledger holds", got, limit, ledgerUnits(t, h.db(), "default"))
	}
	if used, _, _, _, _, _ := h.report().pool(t, "default"); used != limit {
		t.Errorf("limiter reports %d units used after the restart, want %d (refilled from the ledger)", used, limit)
	}
}

// fail_open_max_cost: while Redis cannot be reached, calls costing at most
// 1 unit go ahead unmetered (a chart is 1-unit calls only), and are in the
// ledger as such; the report says its numbers come from the ledger.
func TestRunFailsOpenForCheapCallsWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	h.set("INGEST_RUN_LIMITER_UNREACHED_OK", "true") // the operator's word: an outage, not a mistyped URL
	res := h.run("run", "--once", "--regions", "US,GB", "--log-format", "json")
	if res.code != 0 {
		t.Errorf("want exit 0 (1-unit calls fail open), got %s", res)
	}
	for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Errorf("--log-format json: stderr line is not JSON: %q", line)
			break
		}
	}
	checkChartsComplete(t, h, "US", "GB")
	_, units := fullPassUnits(h.fake, "US", "GB")
	if got := h.fake.Charged(testKey); got != units {
		t.Errorf("upstream charged %d, want %d", got, units)
	}
	db := openDB(t, h.db())
	if got := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`); got != units {
		t.Errorf("ledger holds %d unmetered units, want %d", got, units)
	}
	rep := h.report()
	if rep.UsedFrom != "ledger" {
		t.Errorf("report used_from %q while Redis is down, want ledger", rep.UsedFrom)
	}
}

// 2. /metrics answers 200 with Redis stopped, and says the limiter is down;
// /healthz and /readyz answer JSON; promtool accepts the exposition.
func TestMetricsSurviveRedisDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr)
	base := "http://" + addr
	if !waitFor(60*time.Second, func() bool {
		return strings.Contains(httpGet(base+"/metrics"), `ingest_region_last_success_timestamp_seconds{region="US"}`)
	}) {
		t.Fatalf("US never succeeded within 60s\n%s", p.out)
	}
	code, body := get(t, base+"/readyz")
	if code != 200 || !json.Valid([]byte(body)) || !strings.Contains(body, `"ready"`) {
		t.Errorf("/readyz with everything up: %d %s", code, body)
	}
	rs.Stop()
	code, body = get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics with Redis stopped answered %d:\n%s", code, body)
	}
	for _, want := range []string{`ingest_limiter_up{backend="redis"} 0`, `ingest_build_info{`, `ingest_run_duration_seconds_bucket{`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
	code, body = get(t, base+"/healthz")
	if code != 200 || strings.TrimSpace(body) != "{\n  \"status\": \"ok\"\n}" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	code, body = get(t, base+"/readyz")
	var rd listener.ReadyState
	if err := json.Unmarshal([]byte(body), &rd); err != nil || code != 503 || rd.Status != "not ready" {
		t.Errorf("/readyz with Redis stopped: %d %s (%v); want 503 not ready", code, body, err)
	}
	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(20 * time.Second); !ok || c != 0 {
		t.Errorf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}
}

// TestServeStaysReadyWhileRedisIsDown: a reader replica (serve --public)
// is ready while it can serve readers, whatever its Redis does: with Redis
// stopped its /readyz stays 200 and checks no limiter, its pages answer
// 200, and its metered API lets requests through unmetered, as
// docs/reference/api/limits.md says of outages. The writer's /readyz
// (run --listen) still fails on its limiter (TestMetricsSurviveRedisDown).
func TestServeStaysReadyWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	base := startServe(t, h, "--public")
	ready := func(step string) {
		t.Helper()
		code, body := get(t, base+"/readyz")
		var rd listener.ReadyState
		if err := json.Unmarshal([]byte(body), &rd); err != nil || code != 200 || rd.Status != "ready" {
			t.Errorf("%s: /readyz %d %s (%v); want 200 ready", step, code, body, err)
		}
		for _, c := range rd.Checks {
			if strings.HasPrefix(c.Name, "limiter") {
				t.Errorf("%s: /readyz checks %q, want only what serving readers needs", step, c.Name)
			}
		}
	}
	ready("with Redis up")
	rs.Stop()
	ready("with Redis stopped")
	for _, path := range []string{"/charts/US", "/api/v1/charts/US"} {
		if code, body := get(t, base+path); code != 200 {
			t.Errorf("%s with Redis stopped: %d %s, want 200", path, code, body)
		}
	}
}

// A Redis out of memory (maxmemory under noeviction) is named as the
// limiter's Redis, with its fix, in the run's last line: not as the lock
// of the job that met it last.
func TestRedisOutOfMemoryIsNamedAsTheLimiters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := redistest.Do(srv.Addr, args...); err != nil {
			t.Fatal(err)
		}
	}
	charged := h.fake.Charged(testKey)
	res := h.mustRun(1, "run", "--once", "--regions", "US")
	line := lastLine(res.stderr)
	if !strings.Contains(line, "the limiter's Redis (REDIS_URL) is out of memory") || !strings.Contains(line, "maxmemory") {
		t.Errorf("last line %q: want the limiter's Redis named out of memory, with the fix\n%s", line, res)
	}
	if got := h.fake.Charged(testKey); got != charged {
		t.Errorf("%d units spent while the limiter's Redis refused every write", got-charged)
	}
}

// TestNeverReachedRedisIsNotAnOutage: a REDIS_URL where nothing listens,
// on a host whose database never spent on it, is refused before anything
// is spent (exit 2, naming the address and the way on, never the
// password); with --limiter-unreached-ok the run rides it out as an
// outage, said as a limiter never reached. A database that spent on the
// Redis rides out its outage without the flag.
func TestNeverReachedRedisIsNotAnOutage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addr := closedAddr(t)
	h.set("REDIS_URL", "redis://:"+pgPassword+"@"+addr+"/0")
	if res := h.mustRun(1, "check", "--offline"); !strings.Contains(res.stdout, "nothing answers at "+addr) || !strings.Contains(res.stdout, "REDIS_URL") {
		t.Errorf("check with nothing at REDIS_URL's address: want the limiter line naming %s and REDIS_URL:\n%s", addr, res)
	}
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	for _, want := range []string{addr, "has not answered since this process started", "REDIS_URL", "--limiter-unreached-ok"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("a Redis never reached: stderr does not name %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, pgPassword) {
		t.Errorf("the refusal printed the URL's password:\n%s", res.stderr)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("the refused run sent %d requests upstream, want 0", n)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("the refused run created %s", h.db())
	}
	res = h.mustRun(0, "run", "--once", "--regions", "US", "--limiter-unreached-ok")
	if !strings.Contains(res.stderr, "never reached since this process started") || !strings.Contains(res.stderr, addr) {
		t.Errorf("a run riding out a Redis never reached does not say so with its address:\n%s", res)
	}
	listen := closedAddr(t)
	d := h.start("run", "--every", "1h", "--regions", "US", "--listen", listen, "--limiter-unreached-ok")
	if !waitFor(60*time.Second, func() bool {
		return strings.Contains(httpGet("http://"+listen+"/metrics"), "ingest_limiter_never_reached 1")
	}) {
		t.Errorf("/metrics of a daemon whose Redis never answered does not say ingest_limiter_never_reached 1\n%s", d.out)
	}

	h = newHarness(t)
	rs := h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	rs.Stop()
	h.mustRun(0, "run", "--once", "--regions", "GB")
}
