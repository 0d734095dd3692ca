package main

// End-to-end tests of a deployment that grows (docs/operations/growing.md): a database moved with `ingest db copy`, the limiter's window
// carried across the move, with the fake upstream's count of the units it
// charged as the oracle.

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// copyAgrees checks a db copy's output: a line per table, each ok.
func copyAgrees(t *testing.T, res result) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) < 20 {
		t.Fatalf("db copy printed %d lines, want a line per table:\n%s", len(lines), res)
	}
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l, " ok") {
			t.Errorf("db copy: a table differs: %s", l)
		}
	}
	if strings.Contains(res.stdout+res.stderr, pgPassword) {
		t.Errorf("db copy printed the database's password:\n%s", res)
	}
}

// A 40-unit pool, most of it spent on the SQLite host, then the host moves
// to PostgreSQL and back. The embedded limiter on each side knows the
// window's spend: the upstream is charged 40 at most across the moves.
func TestMoveToPostgresKeepsTheWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	file := h.db()
	h.mustRun(0, "run", "--once", "--regions", "US,GB,DE,FR,IN,BR")
	before := h.chargedDefault()
	if before == 0 || before > 40 {
		t.Fatalf("the first run on SQLite was charged %d units, want some, at most 40", before)
	}
	pgURL := h.withPostgres()
	copyAgrees(t, h.mustRun(0, "db", "copy", "--db", file, "--to", pgURL))
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	charged := h.chargedDefault()
	if charged > 40 {
		t.Errorf("the upstream charged %d units across the move, over the pool's 40 (%d before it)", charged, before)
	}
	if charged == before {
		t.Errorf("nothing ran on PostgreSQL after the move: the window had %d units left", 40-before)
	}
	used, _, _, _, _, _ := h.report("--json").pool(t, "default")
	if used != charged {
		t.Errorf("report on PostgreSQL says %d used in the window, the upstream charged %d", used, charged)
	}
	back := filepath.Join(h.dir, "back.db")
	copyAgrees(t, h.mustRun(0, "db", "copy", "--db", pgURL, "--to", back))
	h.set("INGEST_DB", back)
	h.mustRun(0, "run", "--once")
	if again := h.fake.Charged(testKey); again != charged {
		t.Errorf("back on SQLite, a run with the window full was charged %d units", again-charged)
	}
	used, _, _, _, _, _ = h.report("--json").pool(t, "default")
	if used != charged {
		t.Errorf("report back on SQLite says %d used in the window, the upstream charged %d", used, charged)
	}
	t.Logf("moved with %d of 40 units spent: %d charged across the move and back", before, charged)
}

// A copy killed halfway (SIGKILL) and run again ends with every row of
// the source on the target, and the sums of both equal.
func TestDBCopyKilledGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := filepath.Join(h.dir, "src.db")
	buildHistory(t, src, 2, "US", "GB", "DE", "FR")
	pgURL := h.withPostgres()
	p := h.start("db", "copy", "--db", src, "--to", pgURL)
	target := openPG(t, pgURL)
	copying := func() bool {
		var n int64
		err := target.QueryRow(`SELECT count(*) FROM trending_entries`).Scan(&n)
		return (err == nil && n > 0) || p.exited()
	}
	if !waitFor(cmdTimeout, copying) {
		t.Fatalf("db copy wrote no chart entry within %s:\n%s", cmdTimeout, p.out)
	}
	p.signal(t, syscall.SIGKILL)
	if code, ok := p.wait(cmdTimeout); !ok || code == 0 {
		t.Fatalf("db copy ended with %d (exited %v) before the kill: nothing to go on from\n%s", code, ok, p.out)
	}
	var half int64
	_ = target.QueryRow(`SELECT count(*) FROM trending_entries`).Scan(&half)
	res := h.mustRunGrowing(0, "db", "copy", "--db", src, "--to", pgURL)
	copyAgrees(t, res)
	t.Logf("killed with %d chart entries copied; the second run ended whole:\n%s", half, res.stdout)
	word := strings.Fields(queryString(t, openDB(t, src), `SELECT title FROM videos ORDER BY vid LIMIT 1`))[0]
	if hits := h.searchJSON("--limit", "5", word); len(hits) == 0 {
		t.Errorf("search on the copy for %q, a word of a title, finds nothing", word)
	}
}

// db copy refuses a target holding data (exit 2, naming it), and a
// target that no longer matches its source is a difference (exit 1).
func TestDBCopyRefusesAndDiffers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	file := h.db()
	h.mustRun(0, "run", "--once", "--regions", "US")
	res := h.mustRun(2, "db", "copy")
	if !strings.Contains(res.stderr, "--to") {
		t.Errorf("db copy without --to: want the flag named\n%s", res)
	}
	used := filepath.Join(h.dir, "used.db")
	h.set("INGEST_DB", used)
	h.mustRun(0, "run", "--once", "--regions", "GB")
	h.set("INGEST_DB", file)
	res = h.mustRun(2, "db", "copy", "--to", used)
	if !strings.Contains(res.stderr, used) || !strings.Contains(res.stderr, "holds data") {
		t.Errorf("db copy into a database with data: want it named, and why\n%s", res)
	}
	copyAgrees(t, h.mustRun(0, "db", "copy", "--db", file, "--to", filepath.Join(h.dir, "compact.db")))
	pgURL := h.withPostgres()
	copyAgrees(t, h.mustRun(0, "db", "copy", "--db", file, "--to", pgURL))
	res = h.mustRun(2, "db", "copy", "--db", file, "--to", pgURL)
	if !strings.Contains(res.stderr, "holds a copy") {
		t.Errorf("a second copy of the file into its finished copy: want it refused\n%s", res)
	}
	back := filepath.Join(h.dir, "back.db")
	copyAgrees(t, h.mustRun(0, "db", "copy", "--db", pgURL, "--to", back))
	w, err := sql.Open("sqlite", "file:"+back+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE videos SET view_count = view_count + 1 WHERE vid = (SELECT min(vid) FROM videos)`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	res = h.mustRun(1, "db", "copy", "--db", pgURL, "--to", back)
	if !strings.Contains(res.stdout, "DIFFERS") || !strings.Contains(res.stderr, "differ") {
		t.Errorf("a copy whose target changed: want the table named as differing\n%s", res)
	}
}

// A host moves from the embedded limiter to a new Redis with one step,
// `quota seed`, and back with the same step: the first run on Redis
// fetches at once, and the upstream is charged the pool's 40 units at most
// across both moves.
func TestMoveToRedisAndBackKeepsTheWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	file := h.db()
	h.mustRun(0, "run", "--once", "--regions", "US,GB,DE,FR,IN,BR")
	onSQLite := h.chargedDefault()
	h.withRedis()
	h.mustRun(0, "quota", "seed", "--ledger", file)
	res := h.mustRun(0, "run", "--once", "--regions", "CA")
	onRedis := h.chargedDefault()
	if onRedis == onSQLite || strings.Contains(res.stderr, "lost data") {
		t.Errorf("the first run on the seeded Redis fetched %d units: want it to fetch at once\n%s", onRedis-onSQLite, res)
	}
	if ca := lastRuns(t, openDB(t, file), "trending")["CA"]; ca.Status != "completed" {
		t.Errorf("the first run on the seeded Redis left CA %s, want its chart fetched at once", ca.Status)
	}
	left := h.env["REDIS_URL"]
	h.unset("REDIS_URL")
	h.mustRun(0, "quota", "seed", "--ledger", file, "--leaving-redis", left)
	h.mustRun(0, "run", "--once")
	back := h.chargedDefault()
	if back > 40 {
		t.Errorf("the upstream charged %d units across the moves (%d on SQLite, %d on Redis), over the pool's 40",
			back, onSQLite, onRedis-onSQLite)
	}
	t.Logf("charged %d on SQLite, %d on Redis, %d back on SQLite: %d of 40", onSQLite, onRedis-onSQLite, back-onRedis, back)
}

// A host that meets a Redis holding none of its calls of the window
// cannot tell a new Redis from one that lost its data: its log, report,
// /readyz and a metric say so and name the command for each case, and the
// seed ends the wait at once. The wipe stays a loss: nothing metered is
// spent until then. The database is one from before databases recorded
// which limiter holds their window (which refuses such a run outright).
func TestNewRedisWithoutSeedSaysWhatToRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	file := h.db()
	h.mustRun(0, "run", "--once", "--regions", "US")
	before := h.fake.Charged(testKey)
	if _, err := openRW(t, file).Exec(`DELETE FROM ledger_notes WHERE name LIKE 'limiter_holder:%'`); err != nil {
		t.Fatal(err)
	}
	h.withRedis()
	commands := []string{"ingest quota seed --ledger DB...", "ingest quota restore --ledger DB..."}
	says := func(where, text string) {
		t.Helper()
		for _, c := range commands {
			if !strings.Contains(text, c) {
				t.Errorf("%s does not name `%s`:\n%s", where, c, text)
			}
		}
	}
	res := h.mustRun(0, "run", "--once", "--regions", "GB")
	says("run's log", res.stderr)
	if h.fake.Charged(testKey) != before {
		t.Errorf("a run on a Redis holding none of the window spent %d units before it was told which case it is", h.fake.Charged(testKey)-before)
	}
	says("report", h.mustRun(0, "report").stdout)
	says("report --json", h.mustRun(0, "report", "--json").stdout)
	_, reach := anyAddr(t)
	p := h.start("run", "--regions", "GB", "--listen", reach)
	base := "http://" + reach
	var ready, metrics string
	if !waitFor(cmdTimeout, func() bool {
		ready = httpGet(base + "/readyz")
		metrics = httpGet(base + "/metrics")
		return strings.Contains(ready, "limiter_window") && strings.Contains(metrics, "ingest_limiter_undecided")
	}) {
		t.Fatalf("the daemon's /readyz and /metrics never showed the limiter's window:\n%s\n%s\n%s", ready, metrics, p.out)
	}
	says("/readyz", ready)
	if !strings.Contains(metrics, `ingest_limiter_undecided{lost_data="ingest quota restore --ledger DB...",new_redis="ingest quota seed --ledger DB..."} 1`) {
		t.Errorf("/metrics has no ingest_limiter_undecided 1 naming both commands:\n%s", grepLines(metrics, "undecided"))
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(cmdTimeout)
	h.mustRun(0, "quota", "seed", "--ledger", file)
	if out := h.mustRun(0, "report", "--json").stdout; strings.Contains(out, "limiter_undecided") {
		t.Errorf("after the seed the report still says the limiter cannot tell:\n%s", out)
	}
	h.mustRun(0, "run", "--once", "--regions", "GB")
	if h.fake.Charged(testKey) == before {
		t.Errorf("the first run after the seed fetched nothing")
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A rolling upgrade on a shared PostgreSQL: once another host migrated the
// database past this binary's schema, a daemon of this version stops at
// its next run, and `run --once` at once, with exit 2 naming the upgrade,
// writing nothing and spending nothing after it.
func TestOlderHostStopsAtANewerSchema(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pgURL := h.withPostgres()
	h.mustRun(0, "run", "--once", "--regions", "US")
	db := openPG(t, pgURL)
	p := h.start("run", "--every", "1m", "--regions", "US,GB")
	runs := queryInt(t, db, `SELECT count(*) FROM runs`)
	if !waitFor(cmdTimeout, func() bool { return queryInt(t, db, `SELECT count(*) FROM runs`) > runs || p.exited() }) {
		t.Fatalf("the daemon started no run:\n%s", p.out)
	}
	migrated := time.Now().UnixMilli()
	if _, err := db.Exec(`INSERT INTO schema_version (step, applied_ms) SELECT max(step) + 1, $1 FROM schema_version`, migrated); err != nil {
		t.Fatal(err)
	}
	code, ok := p.wait(cmdTimeout)
	if !ok || code != 2 || !strings.Contains(p.out.String(), "upgrade ingest") {
		t.Fatalf("the daemon after a newer host's migration: exited %v with %d, want 2 naming the upgrade\n%s", ok, code, p.out)
	}
	charged := h.fake.Charged(testKey)
	res := h.mustRun(2, "run", "--once", "--regions", "GB")
	if !strings.Contains(res.stderr, "upgrade ingest") {
		t.Errorf("run --once on a newer schema: want the upgrade named\n%s", res)
	}
	if after := queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms > $1`, migrated); after != 0 {
		t.Errorf("%d runs were written after the migration", after)
	}
	if h.fake.Charged(testKey) != charged {
		t.Errorf("run --once on a newer schema spent %d units", h.fake.Charged(testKey)-charged)
	}
}

// db copy leaves out what the key's standing no longer allows: a file
// holding chart runs older than the standard standing's 30 days is copied
// without them, says so, and is itself left as it was.
func TestDBCopyLeavesOutWhatTheStandingDoesNotAllow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := filepath.Join(h.dir, "old.db")
	// a run every six hours: what is left out is what lies past the
	// standing's bound, whatever the runs' density
	buildHistory(t, src, 31, "US:tier=6")
	cut := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	old := `SELECT count(*) FROM runs WHERE kind = 'trending' AND started_ms < $1`
	held := queryInt(t, openDB(t, src), strings.ReplaceAll(old, "$1", "?"), cut)
	if held == 0 {
		t.Fatalf("the source holds no chart run older than 30 days: nothing to leave out")
	}
	pgURL := h.withPostgres()
	res := h.runWithin(longTimeout, "db", "copy", "--db", src, "--to", pgURL)
	if res.code != 0 {
		t.Fatalf("want exit 0, got %s", res)
	}
	copyAgrees(t, res)
	if !strings.Contains(res.stderr, "not copied, beyond what the standard standing allows") {
		t.Errorf("db copy did not say what it left out\n%s", res)
	}
	if n := queryInt(t, openPG(t, pgURL), old, cut); n != 0 {
		t.Errorf("the copy holds %d chart runs older than the standing allows", n)
	}
	if n := queryInt(t, openDB(t, src), strings.ReplaceAll(old, "$1", "?"), cut); n != held {
		t.Errorf("the source holds %d old chart runs after the copy, %d before: db copy changed it", n, held)
	}
}

// A host leaves Redis the way that comes to hand, by unsetting REDIS_URL
// with no `quota seed`: its database records that its window lives in
// that Redis, so the run is refused (exit 2, naming the Redis and the
// seed) before it spends, whether or not its own log held calls of the
// window before the host went to Redis; the report, which spends nothing,
// still says what the upstream charged. After the seed the embedded
// limiter holds the window, and the upstream is charged the pool's 40
// units at most across the move.
func TestLeavingRedisByUnsettingItIsRefusedUntilTheSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		embedded string // the regions run on the embedded limiter before Redis
		onRedis  string
	}{
		{"calls in the window", "US,GB", "DE,FR,IN,BR"},
		{"no calls in the window", "", "US,GB,DE,FR,IN,BR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.tightCosts(40)
			file := h.db()
			if tc.embedded != "" {
				h.mustRun(0, "run", "--once", "--regions", tc.embedded)
			}
			rs := h.withRedis()
			if tc.embedded != "" {
				h.mustRun(0, "quota", "seed", "--ledger", file)
			}
			h.mustRun(0, "run", "--once", "--regions", tc.onRedis)
			before := h.chargedDefault()
			if before <= 20 || before > 40 {
				t.Fatalf("before the move the upstream charged %d units, want most of the pool's 40", before)
			}
			h.unset("REDIS_URL")
			if used, _, _, _, _, _ := h.report().pool(t, "default"); used != before {
				t.Errorf("report after unsetting REDIS_URL says %d used, the upstream charged %d", used, before)
			}
			res := h.mustRun(2, "run", "--once")
			for _, want := range []string{"lives in the Redis at " + rs.Addr, "`ingest quota seed --ledger DB --ledger PEER_DB... --leaving-redis URL` without REDIS_URL"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("the run without REDIS_URL does not say %q:\n%s", want, res)
				}
			}
			if got := h.chargedDefault(); got != before {
				t.Errorf("the refused run spent %d units", got-before)
			}
			h.mustRun(0, "quota", "seed", "--ledger", file, "--leaving-redis", "redis://"+rs.Addr+"/0")
			h.mustRun(0, "run", "--once")
			h.mustRun(0, "run", "--once")
			charged := h.chargedDefault()
			if charged > 40 {
				t.Errorf("the upstream charged %d units across the move (%d before it), over the pool's 40", charged, before)
			}
			if used, _, _, _, _, _ := h.report().pool(t, "default"); used != charged {
				t.Errorf("report on the embedded limiter says %d used, the upstream charged %d", used, charged)
			}
			t.Logf("%d of 40 charged before the move, %d after", before, charged)
		})
	}
}

// `quota apply --new` on a key the embedded limiter spent, run against a
// new Redis, is refused (exit 2) naming both ways, and says this one is a
// move: `quota seed`, not `quota restore`.
func TestApplyNewOnAMovedKeyNamesTheSeed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.withRedis()
	res := h.mustRun(2, "quota", "apply", h.newFlag())
	for _, want := range []string{"ingest quota seed --ledger DB...", "ingest quota restore --ledger DB...", "This is a move"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("quota apply --new on a key spent on the embedded limiter does not say %q:\n%s", want, res.stderr)
		}
	}
}

// db copy beside a running daemon is refused (exit 2, naming the host, the
// process and the last pass). With --live it copies, and the daemon, which
// stops while the copy is taken, and another worker on the source go on
// spending there; the first run on the copy counts the calls the source
// gained after the copy, so the upstream is charged the pool's 40 units at
// most. Once no worker runs, a copy needs no --live.
func TestDBCopyBesideARunningWorker(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	src := h.db()
	p := h.start("run", "--every", "1m", "--regions", "US,GB")
	db := openDB(t, src)
	if !waitFor(cmdTimeout, func() bool {
		var n int64
		err := db.QueryRow(`SELECT count(*) FROM runs WHERE status = 'completed'`).Scan(&n)
		return (err == nil && n >= 2) || p.exited()
	}) {
		t.Fatalf("the daemon completed no pass:\n%s", p.out)
	}
	host, _ := os.Hostname()
	target := filepath.Join(h.dir, "copy.db")
	res := h.mustRun(2, "db", "copy", "--to", target)
	for _, want := range []string{"host " + host, fmt.Sprintf("pid %d", p.cmd.Process.Pid), "the last pass: ", "--live", "--two-step"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("db copy beside a running daemon does not name %q:\n%s", want, res.stderr)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the refused copy left %s behind", target)
	}
	copyAgrees(t, h.mustRun(0, "db", "copy", "--live", "--to", target))
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	h.mustRun(0, "run", "--once", "--regions", "DE,FR,IN")
	onSource := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault] // the daemon's hourly tracking spends the stats pool
	copyAgrees(t, h.mustRun(0, "db", "copy", "--to", filepath.Join(h.dir, "quiet.db")))
	h.set("INGEST_DB", target)
	res = h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]
	if charged > 40 {
		t.Errorf("the upstream charged %d units in the default pool (%d on the source), over its 40", charged, onSource)
	}
	if !strings.Contains(res.stderr, "its source's ledger holds calls made after the copy") {
		t.Errorf("the first run on the copy did not say it counted the source's calls after the copy:\n%s", res.stderr)
	}
	t.Logf("%d of 40 charged on the source, %d in all", onSource, charged)
}

// liveCopyBesideADaemon starts a daemon on h's database (src) over
// regions on a pool of 40 units and, once it has caught up, copies the
// database --live to target beside it; the daemon runs on.
func liveCopyBesideADaemon(t *testing.T, h *harness, regions string) (src, target string, p *proc) {
	t.Helper()
	h.tightCosts(40)
	src = h.db()
	p = h.start("run", "--every", "1m", "--regions", regions)
	if !waitFor(cmdTimeout, func() bool { return strings.Contains(p.out.String(), "start: caught up") || p.exited() }) {
		t.Fatalf("the source's daemon did not catch up:\n%s", p.out)
	}
	target = filepath.Join(h.dir, "copy.db")
	copyAgrees(t, h.mustRun(0, "db", "copy", "--live", "--to", target))
	return src, target, p
}

// A live copy's worker holds its source for its whole life: after the
// copy (--live, beside the source's daemon), the source's daemon stops and
// a daemon starts on the copy, counting the source's calls; the source's
// daemon started again while the copy's runs, and a run --once there, are
// refused (exit 2), naming the copy's worker, so the pair spends within
// the pool's 40 units; and a run on the source after the copy's worker
// stopped counts the copy's calls, within the same 40.
func TestLiveCopysWorkerHoldsItsSource(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src, target, p := liveCopyBesideADaemon(t, h, "US,GB")
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the source's daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	onSource := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault] // the daemons' hourly tracking spends the stats pool
	h.set("INGEST_DB", target)
	c := h.start("run", "--every", "1m", "--pace=false")
	if !waitFor(cmdTimeout, func() bool { return strings.Contains(c.out.String(), "start: caught up") || c.exited() }) {
		t.Fatalf("the copy's daemon did not catch up:\n%s", c.out)
	}
	h.set("INGEST_DB", src)
	again := h.start("run", "--every", "1m", "--pace=false", "--regions", "US,GB,DE,FR,IN")
	if code, ok := again.wait(cmdTimeout); !ok || code != 2 {
		again.signal(t, syscall.SIGTERM)
		again.wait(cmdTimeout)
		t.Errorf("the source's daemon started again beside its copy's worker: exit %d (exited %v), want 2:\n%s", code, ok, again.out)
	}
	host, _ := os.Hostname()
	if want := fmt.Sprintf("a worker runs on its copy: host %s pid %d on %s", host, c.cmd.Process.Pid, target); !strings.Contains(again.out.String(), want) {
		t.Errorf("the source's daemon's refusal does not name the copy's worker (%q):\n%s", want, again.out)
	}
	if res := h.run("run", "--once", "--regions", "DE,FR,IN"); res.code != 2 {
		t.Errorf("run --once on the source beside its copy's worker: want exit 2, got %s", res)
	}
	if charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]; charged > 40 {
		t.Errorf("the upstream charged %d units in the default pool (%d on the source before the copy's worker), over its 40", charged, onSource)
	} else {
		t.Logf("%d of 40 charged on the source, %d in all", onSource, charged)
	}
	c.signal(t, syscall.SIGTERM)
	if code, ok := c.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the copy's daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, c.out)
	}
	// Going back: a worker started on the source once the copy's has
	// stopped counts the copy's calls, as the copy's counted the source's.
	before := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]
	back := h.run("run", "--once", "--pace=false", "--regions", "US,GB,DE,FR,IN,JP,BR")
	if back.code != 0 {
		t.Errorf("run --once on the source after its copy's worker stopped: want exit 0, got %s", back)
	}
	if !strings.Contains(back.stderr, "a worker ran on a copy of this database") {
		t.Errorf("the source's worker does not say it counted its copy's calls:\n%s", back)
	}
	if charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]; charged > 40 {
		t.Errorf("back on the source after its copy's worker: the upstream charged %d units in the default pool (%d before), over its 40", charged, before)
	} else {
		t.Logf("%d of 40 charged when the copy's worker stopped, %d after going back", before, charged)
	}
}

// Host A (a.db, a daemon) and host B (b.db) share a Redis key; A is
// restarted without REDIS_URL while B carries on. A refuses to run on the embedded
// limiter (exit 2, naming B's ledger and the seed), so the upstream is
// charged the pool's 40 units at most; `quota seed` with every host's
// ledger is the documented way on, and --forget-peers takes only the
// ledger ids the refusal names.
func TestHostLeavingItsPeersOnRedisIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	h.withRedis()
	redisURL := h.env["REDIS_URL"]
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	h.set("INGEST_DB", a)
	p := h.start("run", "--every", "1h", "--regions", "US,GB,DE")
	if !waitFor(cmdTimeout, func() bool { return strings.Contains(p.out.String(), "start: caught up") || p.exited() }) {
		t.Fatalf("host A's daemon did not catch up\n%s", p.out)
	}
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once", "--regions", "FR,IN,BR")
	// A is restarted without REDIS_URL, as an operator does it.
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("host A's daemon after SIGTERM: exited %v, code %d\n%s", ok, code, p.out)
	}
	shared := h.chargedDefault()
	peer := queryString(t, openDB(t, b), `SELECT value FROM ledger_notes WHERE name = 'ledger_id'`)

	h.set("INGEST_DB", a)
	h.unset("REDIS_URL")
	res := h.mustRun(2, "run", "--once")
	for _, want := range []string{"shared with other hosts that spent in the window (ledger " + peer + " at ",
		"ingest quota seed --ledger DB --ledger PEER_DB... --leaving-redis URL", "ingest quota seed --forget-peers=" + peer + " --leaving-redis URL"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("host A leaving the shared key: the refusal does not say %q\n%s", want, res)
		}
	}
	if strings.Contains(res.stderr, redisURL) {
		t.Errorf("the refusal prints the Redis URL\n%s", res)
	}
	h.mustRun(2, "quota", "seed", "--forget-peers=not-a-peer", "--leaving-redis", redisURL)
	h.set("INGEST_DB", b)
	h.set("REDIS_URL", redisURL)
	h.mustRun(0, "run", "--once")
	if charged := h.chargedDefault(); charged > 40 {
		t.Errorf("the upstream charged %d units (%d while shared), over the pool's 40", charged, shared)
	}

	// Both hosts leave together, as docs/operations/growing.md says: A is given
	// B's ledger, and runs.
	h.unset("REDIS_URL")
	h.set("INGEST_DB", a)
	h.mustRun(0, "quota", "seed", "--ledger", a, "--ledger", b, "--leaving-redis", redisURL)
	h.mustRun(0, "run", "--once")
	if charged := h.chargedDefault(); charged > 40 {
		t.Errorf("after the seed from both ledgers the upstream charged %d units, over the pool's 40", charged)
	} else {
		t.Logf("%d of 40 charged while shared, %d in all", shared, charged)
	}
}

// A worker on a --live copy of a SQLite file whose source's daemon runs on
// refuses to start (exit 2, naming the source's worker): both would spend
// one window, and a read of the source's ledger at its start cannot count
// what the source spends after. Once the source's worker stops, it starts,
// counting the source's calls after the copy, and the upstream is charged
// the pool's 40 units at most.
func TestWorkerOnALiveCopyRefusesWhileItsSourceRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src, target, p := liveCopyBesideADaemon(t, h, "US,GB,DE,FR")
	h.set("INGEST_DB", target)
	before := h.fake.Charged(testKey)
	for _, args := range [][]string{{"run", "--once"}, {"run", "--every", "1m"}} {
		res := h.mustRun(2, args...)
		want := "this database is a copy of " + src + " taken "
		if line := lastLine(res.stderr); !strings.Contains(line, want) || !strings.Contains(line, fmt.Sprintf("pid %d", p.cmd.Process.Pid)) {
			t.Errorf("ingest %s on the copy while the source's daemon runs: last line %q, want %q and the daemon's pid", strings.Join(args, " "), line, want)
		}
	}
	if spent := h.fake.Charged(testKey) - before; spent > 0 {
		t.Errorf("the refused workers on the copy spent %d units", spent)
	}
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the source's daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	onSource := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault] // the daemon's hourly tracking spends the stats pool
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	if charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]; charged > 40 {
		t.Errorf("the upstream charged %d units in the default pool (%d on the source), over its 40", charged, onSource)
	} else {
		t.Logf("%d of 40 charged on the source, %d in all", onSource, charged)
	}
}
