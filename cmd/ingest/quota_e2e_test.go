package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// writeCosts writes a costs file for the 2026 model whose default pool has
// the given window, and returns its path.
func writeCosts(t *testing.T, dir, name, window string) string {
	t.Helper()
	return writeCostsWith(t, dir, name, "{limit: 10000, reserve: 500, window: "+window+", day: America/Los_Angeles}")
}

// writeCostsWith is the shipped costs file with the default pool as given.
func writeCostsWith(t *testing.T, dir, name, defaultPool string) string {
	t.Helper()
	body := `pools:
  default: ` + defaultPool + `
  search:  {limit: 100, reserve: 5, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Promise 10: two workers of one quota key with different windows. The
// second exits 2 before spending, naming pool, field and both values;
// `ingest quota apply` puts the new window in force for both.
func TestQuotaConfigDisagreementExits2UntilApplied(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if backend == "redis" {
				h.withRedis()
			}
			day := writeCosts(t, h.dir, "day.yaml", "24h")
			half := writeCosts(t, h.dir, "half.yaml", "12h")
			h.mustRun(0, "run", "--once", "--regions", "GB", "--costs", day)
			before := h.fake.Requests()
			res := h.mustRun(2, "run", "--once", "--regions", "GB", "--costs", half)
			for _, want := range []string{"pool default", "window", "24h0m0s", "12h0m0s", "ingest quota apply"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr does not name %q:\n%s", want, res.stderr)
				}
			}
			if got := h.fake.Requests(); got != before {
				t.Errorf("the disagreeing worker sent %d requests upstream, want 0", got-before)
			}
			show := h.mustRun(0, "quota", "show", "--costs", half)
			if !strings.Contains(show.stdout, "DIFFERS") || !strings.Contains(show.stdout, "window 24h") {
				t.Errorf("quota show does not say the default pool differs:\n%s", show)
			}
			apply := h.mustRun(0, "quota", "apply", "--costs", half)
			if !strings.Contains(apply.stdout, "pool default: limit 10000, reserve 500, window 24h0m0s") ||
				!strings.Contains(apply.stdout, "window 12h0m0s") {
				t.Errorf("quota apply does not say what changed:\n%s", apply)
			}
			h.mustRun(0, "run", "--once", "--regions", "GB", "--costs", half)
			res = h.mustRun(2, "run", "--once", "--regions", "GB", "--costs", day)
			if !strings.Contains(res.stderr, "window is 12h0m0s in the limiter but 24h0m0s in this costs file") {
				t.Errorf("the old file after apply: stderr does not name both windows:\n%s", res.stderr)
			}
		})
	}
}

// A costs file that does not price an operation the worker calls is a
// configuration error found at load: exit 2, nothing sent upstream.
func TestCostsWithoutVideosListExits2(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := filepath.Join(h.dir, "partial.yaml")
	body := "pools:\n  default: {limit: 100, window: 24h}\n  search: {limit: 10, window: 24h}\n  stats: {limit: 10, window: 24h}\n" +
		"operations:\n  videoCategories.list: {default: 1}\n  i18nRegions.list: {default: 1}\n  search.list: {search: 1}\n  videos.batchGetStats: {stats: 1}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.mustRun(2, "run", "--once", "--costs", path)
	if !strings.Contains(res.stderr, "partial.yaml:5: operations.videos.list: missing") {
		t.Errorf("stderr does not name the file, line and operation:\n%s", res.stderr)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("the database %s was created by a command that exited on a configuration error", h.db())
	}
}

// TestCronHostsRecoverAfterFlushall: two hosts, each its own database,
// each having run twice,
// running `run --once` (a cron deployment: no daemon, no heartbeat) share
// one Redis, which loses everything. A new host with an empty database
// exits 2 naming `quota apply` and spends nothing; host A's next run finds
// the loss, puts its calls back and waits for B; B's next run puts its
// calls back and the pools resume; the upstream is never charged more than
// the limit, and each ledger says what the upstream charged.
func TestCronHostsRecoverAfterFlushall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 20
	h.tightCosts(limit)
	a, b, c := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db"), filepath.Join(h.dir, "c.db")
	fleet := cronFleet{h: h}
	runOn := fleet.run
	for range 2 { // each host's copy of the limiter's ledgers now names the other
		runOn(a, 0, "US")
		runOn(b, 0, "GB")
	}
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	res := runOn(c, 2, "DE")
	if !strings.Contains(res.stderr, "ingest quota apply") || h.fake.Charged(testKey) != before {
		t.Fatalf("a new host after the loss: want exit 2 naming `ingest quota apply` and nothing charged (%d -> %d):\n%s",
			before, h.fake.Charged(testKey), res)
	}
	ra := runOn(a, 0, "US")
	if got := h.fake.Charged(testKey); got != before {
		t.Log(ra)
		t.Fatalf("host A's run after the loss was charged %d units before host B put its calls back", got-before)
	}
	runs := 2 + fleet.untilResumed(limit, func() { runOn(b, 0, "GB,FR") }, func() { runOn(a, 0, "US,DE") })
	charged := h.fake.Charged(testKey)
	units := ledgerUnits(t, a, "default") + ledgerUnits(t, b, "default")
	t.Logf("cron, two hosts, FLUSHALL: %d units before the loss; a newcomer spent nothing; resumed after each host ran once (B's first run); upstream charged %d / %d in %d runs after the loss; ledgers %d",
		before, charged, limit, runs, units)
	if charged > limit || units != charged {
		t.Fatalf("upstream charged %d, the ledgers hold %d; want at most %d and equal", charged, units, limit)
	}
	if charged <= before {
		t.Fatalf("the pools never resumed after both hosts ran: charged %d, as before the loss", charged)
	}
}

// TestFailOpenBudgetIsTheLedgers: the fail_open budget is counted from
// the ledger over the pool's window, so that a cron job whose Redis stays
// unreachable (a wrong REDIS_URL) stops spending unmetered once it is
// used, run after run, and the report says how much of it is used.
func TestFailOpenBudgetIsTheLedgers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	h.set("INGEST_RUN_LIMITER_UNREACHED_OK", "true") // the operator's word: an outage, not a mistyped URL
	const budget = 5
	path := writeCostsWith(t, h.dir, "budget.yaml",
		"{limit: 10000, reserve: 500, window: 24h, day: America/Los_Angeles, fail_open: {max_cost: 1, budget: 5}}")
	h.set("INGEST_COSTS", path)
	for _, regions := range []string{"US", "GB", "DE", "FR"} {
		h.run("run", "--once", "--regions", regions)
	}
	charged := h.fake.Charged(testKey)
	unmetered := ledgerUnits(t, h.db(), "default")
	rep := h.report()
	t.Logf("Redis unreachable for four cron runs, fail_open budget %d: upstream charged %d, ledger %d unmetered; report %d of %d",
		budget, charged, unmetered, rep.Pools[0].Unmetered, rep.Pools[0].FailOpen)
	if charged > budget || unmetered != charged {
		t.Fatalf("four runs while Redis is down: upstream charged %d, ledger %d; want at most the budget, %d, and equal", charged, unmetered, budget)
	}
	if charged < budget-1 || rep.Pools[0].Unmetered != unmetered || rep.Pools[0].FailOpen != budget {
		t.Fatalf("report: %d unmetered of a budget of %d; want %d of %d (and the budget used)", rep.Pools[0].Unmetered, rep.Pools[0].FailOpen, unmetered, budget)
	}
}

// TestRunOnceAgainstAHungRedis: a SIGSTOPped Redis accepts connections and
// never answers. That is an outage, as a refused connection is: the cheap
// chart pages go ahead unmetered within the fail_open budget, and the run
// completes instead of failing every chart.
func TestRunOnceAgainstAHungRedis(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	// What the fault is measured against: a loaded machine may have let a
	// call of the run before it go unmetered past the limiter's timeout.
	unmeteredUnits := func() int64 {
		return queryInt(t, openDB(t, h.db()), `SELECT coalesce(sum(units), 0) FROM ledger WHERE unmetered = 1`)
	}
	base := unmeteredUnits()
	if err := rs.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer rs.Signal(syscall.SIGCONT)
	before := h.fake.Charged(testKey)
	h.mustRun(0, "run", "--once", "--regions", "GB,DE")
	checkChartsComplete(t, h, "GB", "DE")
	charged := h.fake.Charged(testKey) - before
	unmetered := unmeteredUnits() - base
	t.Logf("hung Redis: run --once completed GB and DE, %d units charged, %d unmetered in the ledger", charged, unmetered)
	if unmetered != charged || charged == 0 {
		t.Fatalf("upstream charged %d while Redis hung, the ledger holds %d unmetered: want them equal", charged, unmetered)
	}
}

// noApply keeps the harness from creating the quota key before the first
// command, as an operator who has not run `quota apply` yet.
func (h *harness) noApply() {
	if h.applied == nil {
		h.applied = map[string]bool{}
	}
	h.applied[h.env["REDIS_URL"]] = true
}

// TestKeyNobodyCreated: on a Redis that holds nothing for the quota key,
// check (and check --offline) fails naming `ingest quota apply --new`, and
// run --once exits 2 before spending and leaves no database file behind;
// apply without --new asks for that intent; with it, all is well.
func TestKeyNobodyCreated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.noApply()
	for _, args := range [][]string{{"check"}, {"check", "--offline"}} {
		res := h.mustRun(2, args...)
		if !strings.Contains(res.stdout+res.stderr, "ingest quota apply --new") || !strings.Contains(res.stdout, "FAIL") {
			t.Fatalf("a key nobody created: want a FAIL naming `ingest quota apply --new`:\n%s", res)
		}
	}
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	if !strings.Contains(res.stderr, "ingest quota apply --new") {
		t.Errorf("run --once on a key nobody created does not name `ingest quota apply --new`:\n%s", res)
	}
	files, _ := filepath.Glob(h.db() + "*")
	if len(files) != 0 || h.fake.Requests() != 0 {
		t.Fatalf("run --once exited 2 and left %v behind, %d requests upstream; want no file, none", files, h.fake.Requests())
	}
	res = h.mustRun(2, "quota", "apply")
	if !strings.Contains(res.stderr, "ingest quota apply --new") || !strings.Contains(res.stderr, "ingest quota restore") {
		t.Fatalf("apply without --new on a key with no configuration: want exit 2 naming --new and restore:\n%s", res)
	}
	h.mustRun(0, "quota", "apply", h.newFlag())
	h.mustRun(0, "check", "--offline")
	h.mustRun(0, "run", "--once", "--regions", "US")
}

// TestApplyAfterAWipe (issue 31's second row): host A spends, Redis loses
// everything, and a newcomer exits 2. An operator who follows the messages
// cannot create the key anew while a ledger at hand shows it was used,
// --new or not; restoring with A's ledger lets the newcomer, running
// first, spend what is left and no more.
func TestApplyAfterAWipe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 20
	h.tightCosts(limit)
	a, c := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "c.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	h.set("INGEST_DB", c)
	res := h.mustRun(2, "run", "--once", "--regions", "DE")
	for _, want := range []string{"ingest quota apply --new", "ingest quota restore --ledger"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the newcomer's exit 2 does not name %q:\n%s", want, res.stderr)
		}
	}
	for _, tc := range []struct {
		db   string
		args []string
		want string
	}{
		{c, []string{"quota", "apply"}, "ingest quota apply --new"},
		{c, []string{"quota", "apply", "--ledger", a}, "ingest quota restore"},
		{c, []string{"quota", "apply", h.newFlag(), "--ledger", a}, "ingest quota restore"},
		{a, []string{"quota", "apply", h.newFlag()}, "this database's ledger holds"},
	} {
		h.set("INGEST_DB", tc.db)
		if res := h.mustRun(2, tc.args...); !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s on a wiped key: stderr does not name %q:\n%s", strings.Join(tc.args, " "), tc.want, res.stderr)
		}
	}
	h.set("INGEST_DB", c)
	h.mustRun(0, "quota", "restore", "--ledger", a)
	for range 3 {
		h.mustRun(0, "run", "--once", "--regions", "DE,FR,IN,BR")
	}
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "AU,CA,US")
	charged := h.fake.Charged(testKey)
	units := ledgerUnits(t, a, "default") + ledgerUnits(t, c, "default")
	t.Logf("wiped after A spent %d / %d; the newcomer exited 2, apply refused, the operator restored from A's ledger: upstream charged %d / %d, ledgers %d",
		before, limit, charged, limit, units)
	if charged > limit || units != charged || charged <= before {
		t.Fatalf("upstream charged %d, the ledgers hold %d: want more than %d, at most %d, and equal", charged, units, before, limit)
	}
}

// TestNewAfterAWipeTakenByMistake: hosts A and B spend, Redis loses
// everything, and newcomer N, whose ledger is empty, exits 2: nothing N can
// see tells the wipe from a new key. Its message leads with restore and the
// wait; --new without the quota key typed again, or with another key, is
// refused (exit 2) and creates nothing. An operator who types the key
// anyway creates it, and N spends up to the limit again: on top of what A
// and B spent, which nothing N or the limiter holds can show. A's and B's
// next runs find their calls missing and put them back: the limiter counts
// every unit the upstream charged, and admits nothing more.
func TestNewAfterAWipeTakenByMistake(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 20
	h.tightCosts(limit)
	a, b, n := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db"), filepath.Join(h.dir, "n.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once", "--regions", "DE,FR")
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	h.set("INGEST_DB", n)
	res := h.mustRun(2, "run", "--once", "--regions", "IN")
	restore, create := strings.Index(res.stderr, "ingest quota restore"), strings.Index(res.stderr, "ingest quota apply --new")
	if restore < 0 || create < 0 || restore > create {
		t.Errorf("the newcomer's exit 2 must name `ingest quota restore` before `ingest quota apply --new`:\n%s", res.stderr)
	}
	typed := h.newFlag()
	for _, tc := range []struct{ flag, then string }{
		{"--new", "--new=KEY"},
		{"--new=not-" + strings.TrimPrefix(typed, "--new="), "ingest quota apply " + typed},
	} {
		res := h.run("quota", "apply", tc.flag)
		restore, create := strings.Index(res.stderr, "ingest quota restore"), strings.Index(res.stderr, tc.then)
		if res.code != 2 || restore < 0 || create < restore {
			t.Errorf("quota apply %s after a wipe: want exit 2 naming restore, then %q:\n%s", tc.flag, tc.then, res)
		}
	}
	h.run("quota", "apply", typed) // the operator's mistake
	for range 3 {
		h.run("run", "--once", "--regions", "IN,BR,AU,CA,US,GB,DE,FR")
	}
	byN := h.fake.Charged(testKey) - before
	for _, db := range []string{a, b, n, a, b} {
		h.set("INGEST_DB", db)
		h.mustRun(0, "run", "--once", "--regions", "IN,BR,AU,CA,US,GB,DE,FR")
	}
	charged := h.fake.Charged(testKey)
	units := ledgerUnits(t, a, "default") + ledgerUnits(t, b, "default") + ledgerUnits(t, n, "default")
	used, _, _, _, _, _ := h.report().pool(t, "default")
	t.Logf("A and B spent %d / %d, FLUSHALL, N exited 2, bare --new and a wrong key refused, --new=KEY taken: N was charged %d; after A, B and N ran again, upstream charged %d / %d in all, ledgers %d, the limiter counts %d",
		before, limit, byN, charged, limit, units, used)
	if units != charged || used != charged || charged != before+byN {
		t.Fatalf("upstream charged %d (%d before the apply, %d by N), ledgers %d, limiter %d: want all equal, nothing after A and B put their calls back", charged, before, byN, units, used)
	}
}

// TestReportFullPoolWhileTheLimiterIsDown: a pool the ledger shows full
// must not read as one with room (free_at null) because Redis is down:
// free_at comes from the ledger, when its oldest calls leave the window.
func TestReportFullPoolWhileTheLimiterIsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 5
	h.tightCosts(limit)
	for _, r := range []string{"US", "GB", "DE"} {
		h.mustRun(0, "run", "--once", "--regions", r)
	}
	if u := ledgerUnits(t, h.db(), "default"); u != limit {
		t.Fatalf("the ledger holds %d units, want the pool full, %d", u, limit)
	}
	_, _, _, _, up, _ := h.report().pool(t, "default")
	rs.Stop()
	rep := h.report()
	used, _, _, remaining, down, _ := rep.pool(t, "default")
	t.Logf("a full pool of %d: free_at %v with Redis up, %v with Redis down (used %d, remaining %d, from the ledger)", limit, deref(up), deref(down), used, remaining)
	if up == nil || down == nil || remaining != 0 {
		t.Fatalf("a full pool: free_at %v with Redis up, %v with it down, remaining %d; want a time both times, and none left", deref(up), deref(down), remaining)
	}
	at, err := time.Parse(time.RFC3339, *down)
	if err != nil || at.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("free_at with Redis down is %q (%v); want about a day on, when the first call leaves the window", *down, err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// TestRunOnceHungToTheEndSmallBudget: Redis hangs for the whole run and the
// fail_open budget is 5. A chart that completes within the budget exits 0;
// a run whose next chart meets the spent budget exits 1 and says why.
func TestRunOnceHungToTheEndSmallBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	path := writeCostsWith(t, h.dir, "budget.yaml",
		"{limit: 10000, reserve: 500, window: 24h, day: America/Los_Angeles, fail_open: {max_cost: 1, budget: 5}}")
	h.set("INGEST_COSTS", path)
	h.mustRun(0, "run", "--once", "--regions", "US")
	if err := rs.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer rs.Signal(syscall.SIGCONT)
	h.mustRun(0, "run", "--once", "--regions", "GB")
	checkChartsComplete(t, h, "GB")
	res := h.mustRun(1, "run", "--once", "--regions", "DE")
	unmetered := queryInt(t, openDB(t, h.db()), `SELECT coalesce(sum(units), 0) FROM ledger WHERE unmetered = 1`)
	t.Logf("Redis hung to the end, budget 5: GB completed (exit 0); DE exit 1; %d units unmetered in the ledger", unmetered)
	for _, want := range []string{"fail_open.budget of 5", "The limiter did not answer", "carry on once the limiter answers"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the run that met the spent budget does not say %q:\n%s", want, res.stderr)
		}
	}
	if unmetered != 5 {
		t.Fatalf("%d units unmetered, want the budget, 5", unmetered)
	}
}

// Redis loses everything after hosts A and B spent, and the operator runs
// `quota restore` with both ledgers before either host runs again: each
// host's next run spends at once, with no new recovery, and the upstream
// is charged the pool's limit at most however often they run.
func TestRestoreLeavesEveryHostReady(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 40
	h.tightCosts(limit)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once", "--regions", "DE,FR")
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	h.mustRun(0, "quota", "restore", "--ledger", a, "--ledger", b)
	for _, host := range []struct{ db, regions string }{{a, "IN"}, {b, "BR"}} {
		h.set("INGEST_DB", host.db)
		was := h.fake.Charged(testKey)
		res := h.mustRun(0, "run", "--once", "--regions", host.regions)
		if h.fake.Charged(testKey) == was || strings.Contains(res.stderr, "lost data") {
			t.Errorf("%s's first run after the restore spent %d units: want it to spend at once, with no new recovery\n%s",
				filepath.Base(host.db), h.fake.Charged(testKey)-was, res.stderr)
		}
	}
	for range 2 {
		for _, db := range []string{a, b} {
			h.set("INGEST_DB", db)
			h.mustRun(0, "run", "--once")
		}
	}
	charged := h.fake.Charged(testKey)
	t.Logf("%d of %d spent before the wipe; restored from both ledgers before either ran: %d charged", before, limit, charged)
	if charged > limit {
		t.Errorf("the upstream charged %d units, over the pool's %d", charged, limit)
	}
}

// quota apply --new on a key that already holds another configuration is
// refused and changes nothing; the same configuration again changes
// nothing; without --new the change is made.
func TestQuotaApplyNewReplacesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US") // the harness applies --new first
	h.tightCosts(9000)
	res := h.mustRun(2, "quota", "apply", h.newFlag())
	if !strings.Contains(res.stderr, "is not new") || !strings.Contains(res.stderr, "without --new") {
		t.Errorf("apply --new on a used key with another costs file: want it refused naming apply without --new, got %s", res)
	}
	if show := h.mustRun(0, "quota", "show"); !strings.Contains(show.stdout, "limiter:    limit 10000") {
		t.Errorf("a refused apply --new changed the limiter:\n%s", show.stdout)
	}
	h.unset("INGEST_COSTS")
	if res := h.mustRun(0, "quota", "apply", h.newFlag()); !strings.Contains(res.stdout, "nothing changed") {
		t.Errorf("apply --new with the configuration the limiter holds: want nothing changed, got %s", res)
	}
	h.tightCosts(9000)
	if res := h.mustRun(0, "quota", "apply"); !strings.Contains(res.stdout, "limit 10000, reserve 500, window 24h0m0s, day America/Los_Angeles -> limit 9000") {
		t.Errorf("apply without --new: want the change made, got %s", res)
	}
}

// TestRestoreRefusesWithoutALedgerTheWaitNames: hosts A and B spend,
// Redis loses everything and A's next run starts the wait for both.
// `quota restore` with A's database alone exits 2 naming B's ledger and
// --ledger, and the wait goes on; with --accept-missing it ends, saying
// what each pool may hold uncounted; after another loss, both databases
// end it with no warning.
func TestRestoreRefusesWithoutALedgerTheWaitNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	h.tightCosts(40)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	fleet := cronFleet{h: h}
	for range 2 { // each host's copy of the limiter's ledgers now names the other
		fleet.run(a, 0, "US")
		fleet.run(b, 0, "GB")
	}
	peer := queryString(t, openDB(t, b), `SELECT value FROM ledger_notes WHERE name = 'ledger_id'`)
	lose := func() {
		t.Helper()
		if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
			t.Fatalf("FLUSHALL: %q %v", r, err)
		}
		fleet.run(a, 0, "US")
		if show := h.mustRun(0, "quota", "show"); !strings.Contains(show.stdout, "waiting for the ledgers") || !strings.Contains(show.stdout, peer) {
			t.Fatalf("after the loss and A's run, quota show does not name B's ledger %s among those the wait needs:\n%s", peer, show)
		}
	}
	lose()
	h.set("INGEST_DB", a)
	res := h.mustRun(2, "quota", "restore")
	for _, want := range []string{peer, "--ledger DB", "--accept-missing"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("restore without B's ledger: stderr does not name %q:\n%s", want, res.stderr)
		}
	}
	if show := h.mustRun(0, "quota", "show"); !strings.Contains(show.stdout, "waiting for the ledgers") {
		t.Errorf("a refused restore ended the wait:\n%s", show)
	}
	res = h.mustRun(0, "quota", "restore", "--ledger", a, "--accept-missing")
	if !strings.Contains(res.stderr, peer) || !strings.Contains(res.stderr, "default up to") {
		t.Errorf("restore --accept-missing does not name B's ledger and what the default pool may hold uncounted:\n%s", res)
	}
	if show := h.mustRun(0, "quota", "show"); strings.Contains(show.stdout, "recovering") {
		t.Errorf("restore --accept-missing left the wait on:\n%s", show)
	}
	fleet.run(b, 0, "GB")
	lose()
	h.set("INGEST_DB", a)
	res = h.mustRun(0, "quota", "restore", "--ledger", a, "--ledger", b)
	if strings.Contains(res.stderr, "warning") {
		t.Errorf("restore with both ledgers warns:\n%s", res)
	}
	if show := h.mustRun(0, "quota", "show"); strings.Contains(show.stdout, "recovering") {
		t.Errorf("restore with both ledgers left the wait on:\n%s", show)
	}
}
