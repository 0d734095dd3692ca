package main

// End-to-end tests of the ingest binary: each runs the real binary as a
// subprocess against the fake upstream (fakeyt), a SQLite file of its own
// and, where the test needs one, a real redis-server, and checks what it
// printed, what it left in the database and Redis, and what the upstream
// was charged. The numbers asserted follow from the fixtures: charts of
// US 200, GB 77, DE 143, FR 118, IN 200, BR 96, AU 64, CA 84 videos, pages
// of 50, one categories call per region: a full pass of these default
// regions is 22 pages + 8 category lists = 30 units.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // upstream_reset is midnight America/Los_Angeles

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/regions"
)

// fullPassUnits is what one run of the regions (default: every default
// region) costs: a page per 50
// videos of each chart, and one videoCategories.list per region.
func fullPassUnits(f *fakeyt.Fake, codes ...string) (pages, units int64) {
	if len(codes) == 0 {
		codes = regions.Default
	}
	for _, r := range codes {
		pages += int64(pagesFor(f.ChartLength(r)))
	}
	return pages, pages + int64(len(codes))
}

// checkChartsComplete checks that every region's latest trending run
// completed and stored its whole chart: status, pages, videos and the
// trending entries themselves.
func checkChartsComplete(t *testing.T, h *harness, regions ...string) {
	t.Helper()
	db := openDB(t, h.db())
	last := lastRuns(t, db, "trending")
	for _, region := range regions {
		n := h.fake.ChartLength(region)
		r, ok := last[region]
		if !ok {
			t.Errorf("%s: no trending run stored", region)
			continue
		}
		if r.Status != "completed" || r.Pages != pagesFor(n) || r.Videos != n || r.Entries != n {
			t.Errorf("%s: got run status %q, pages %d, videos %d, entries %d; want completed, %d pages, %d videos, %d entries",
				region, r.Status, r.Pages, r.Videos, r.Entries, pagesFor(n), n, n)
		}
		ranks := queryInt(t, db, `SELECT count(DISTINCT rank) FROM trending_entries WHERE run_id = ?`, r.ID)
		if ranks != int64(n) {
			t.Errorf("%s: got %d distinct ranks in run %d, want %d", region, ranks, r.ID, n)
		}
	}
}

// 1. A full run, embedded limiter and Redis: every chart paged to the end,
// and the upstream's bill, the ledger and the limiter agree to the unit.
func TestRunOnceIngestsEveryRegionAndAccountsEveryUnit(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var addr string
			if backend == "redis" {
				addr = h.withRedis().Addr
			}
			h.mustRun(0, "run", "--once")
			checkChartsComplete(t, h, regions.Default...)
			if addr != "" {
				checkRedisKeysTidy(t, addr)
			}

			pages, units := fullPassUnits(h.fake)
			if regions := int64(len(regions.Default)); pages < regions || units != pages+regions {
				t.Fatalf("a full pass of the fixtures: %d pages, %d units; want a page or more a region, and a categories call each", pages, units)
			}
			byOp := h.fake.ChargedByOp(testKey)
			if got := h.fake.Charged(testKey); got != units {
				t.Errorf("upstream charged %d units (%v), want %d", got, byOp, units)
			}
			if n := int64(len(regions.Default)); byOp[ingest.OpVideosList] != pages || byOp[ingest.OpCategoriesList] != n {
				t.Errorf("upstream charged by op %v, want videos.list %d, videoCategories.list %d", byOp, pages, n)
			}
			if got := ledgerUnits(t, h.db(), "default"); got != units {
				t.Errorf("ledger holds %d units in pool default, want %d (what the upstream charged)", got, units)
			}
			rep := h.report()
			used, _, _, _, _, _ := rep.pool(t, "default")
			if rep.Backend != backend || rep.UsedFrom != "limiter" {
				t.Errorf("report backend %q used_from %q, want %q and the limiter's own count", rep.Backend, rep.UsedFrom, backend)
			}
			if used != units {
				t.Errorf("limiter reports %d units used in pool default, want %d", used, units)
			}
			for _, r := range rep.Regions {
				if r.Code == "US" && (r.Status != "completed" || r.Videos != 200 || r.Units != 5) {
					t.Errorf("report region US: status %q videos %d units %d, want completed, 200, 5 (4 pages + categories)", r.Status, r.Videos, r.Units)
				}
			}
		})
	}
}

// checkRedisKeysTidy: every key the limiter left shares one cluster hash
// slot ({quota key}) and expires when idle; no lease outlives its run.
func checkRedisKeysTidy(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis KEYS *: %v %v", keys, err)
	}
	tag := regexp.MustCompile(`\{[^}]+\}`)
	slot := ""
	for _, k := range keys {
		if m := tag.FindString(k); m == "" || (slot != "" && m != slot) {
			t.Errorf("redis key %q: want every key under one {hash tag}, got %q after %q", k, m, slot)
		} else {
			slot = m
		}
		ttl, err := c.PTTL(ctx, k).Result()
		switch {
		case strings.HasSuffix(k, ":conf"): // made by `quota apply`, on purpose
			if err != nil || ttl != -1 {
				t.Errorf("redis key %q: PTTL %v, %v; the configuration must not expire", k, ttl, err)
			}
		case err != nil || ttl <= 0:
			t.Errorf("redis key %q has no expiry (PTTL %v, %v): keys must expire when idle", k, ttl, err)
		}
		if strings.Contains(k, ":lock:") {
			t.Errorf("redis key %q: a region's lease outlived the run", k)
		}
	}
}

// 2. Several processes at once on a tight limit: the limiter admits exactly
// the limit, never more, and every admitted call is in a ledger.
func TestRunOnceConcurrentProcessesNeverExceedTheLimit(t *testing.T) {
	t.Parallel()
	const procs, limit = 4, 20
	for _, tc := range []struct {
		name     string
		redis    bool
		sharedDB bool
	}{
		{"redis-separate-databases", true, false},
		{"sqlite-one-database", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.redis {
				h.withRedis()
			}
			h.tightCosts(limit)
			h.set("INGEST_QUOTA_KEY", "e2e-shared")
			var dbs []string
			var ps []*proc
			for i := range procs {
				db := h.db()
				if !tc.sharedDB {
					db = filepath.Join(h.dir, fmt.Sprintf("host%d.db", i))
				}
				dbs = append(dbs, db)
				ps = append(ps, h.start("run", "--once", "--db", db))
			}
			for i, p := range ps {
				code, ok := p.wait(cmdTimeout)
				if !ok || code != 0 {
					t.Errorf("process %d: exited %v, code %d, want 0\n%s", i, ok, code, p.out)
				}
			}
			charged := h.chargedDefault()
			slices.Sort(dbs)
			dbs = slices.Compact(dbs)
			var ledger, unmetered int64
			for _, db := range dbs {
				ledger += ledgerUnits(t, db, "default")
				unmetered += queryInt(t, openDB(t, db), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`)
			}
			if ledger != charged {
				t.Errorf("ledgers hold %d units, upstream charged %d", ledger, charged)
			}
			// Every region runs somewhere (30 units wanted), so the limiter
			// admits exactly its limit. A decision that outlives the limiter's
			// timeout on a busy machine goes ahead unmetered, as the pool's
			// fail-open allows: such a call is the ledger's, never the window's.
			if metered := charged - unmetered; metered != limit {
				t.Errorf("upstream charged %d units, %d of them metered; want exactly the limit %d metered (%v)", charged, metered, limit, h.fake.ChargedByOp(testKey))
			}
			if unmetered > 0 {
				t.Logf("the ledgers mark %d units unmetered (admitted while the limiter did not answer in time)", unmetered)
			}
			rep := h.report("--db", dbs[0])
			// The unmetered calls reach the window once the limiter answers again.
			if used, _, _, remaining, freeAt, _ := rep.pool(t, "default"); used < limit || used > limit+unmetered || remaining != 0 || freeAt == nil {
				t.Errorf("report pool default: used %d remaining %d free_at %v; want %d (up to %d with the unmetered), 0, a time", used, remaining, freeAt, limit, limit+unmetered)
			}
			stopped := 0
			for _, db := range dbs {
				for _, r := range runRows(t, openDB(t, db)) {
					if r.Status == "stopped" {
						stopped++
					}
					if r.Status == "failed" || r.Status == "running" {
						t.Errorf("%s: run %d of %s is %q: %s", filepath.Base(db), r.ID, r.Region, r.Status, r.Message)
					}
				}
			}
			if stopped == 0 {
				t.Errorf("no run stopped on the limit, yet only %d of 30 units were admitted", limit)
			}
		})
	}
}

// 3. Error classes: the three ways the upstream says its quota is spent, a
// 5xx burst, a rejected key, a region without a chart.
func TestRunUpstreamQuotaExhaustionBlocksThePool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		shape   fakeyt.QuotaShape
		args    []string
		kind    string
		blocked string // the pool the upstream's answer blocks
		free    string // a pool it must leave alone
		charged int64  // the one failed call
	}{
		{"quotaExceeded", fakeyt.QuotaExceeded, []string{"run", "--once", "--regions", "US,GB"}, "trending", "default", "search", 1},
		{"dailyLimitExceeded", fakeyt.DailyLimitExceeded, []string{"run", "--once", "--regions", "US,GB"}, "trending", "default", "search", 1},
		{"searchPerDay", fakeyt.SearchPerDay, []string{"backfill", "--region", "US", "--since", "2026-01-01", "--until", "2026-11-01"}, "search", "search", "default", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.fake.ExhaustQuota(tc.shape)
			h.mustRun(0, tc.args...)
			runs := runRows(t, openDB(t, h.db()))
			if len(runs) == 0 {
				t.Fatal("no run stored")
			}
			for _, r := range runs {
				if r.Kind != tc.kind || r.Status != "stopped" {
					t.Errorf("run %d (%s %s): status %q, want a %s run stopped: %s", r.ID, r.Kind, r.Region, r.Status, tc.kind, r.Message)
				}
			}
			if got := h.fake.Charged(testKey); got != tc.charged {
				t.Errorf("upstream charged %d units, want %d (one refused call, no retry)", got, tc.charged)
			}
			for pool, charged := range h.fake.ChargedBuckets(testKey) {
				if got := ledgerUnits(t, h.db(), pool); got != charged {
					t.Errorf("pool %s: ledger holds %d units, upstream charged %d", pool, got, charged)
				}
			}

			before := h.fake.Requests()
			h.mustRun(0, tc.args...)
			if got := h.fake.Requests(); got != before {
				t.Errorf("second run sent %d requests to an upstream that said its quota is spent, want 0", got-before)
			}

			rep := h.report()
			_, _, _, _, _, blocked := rep.pool(t, tc.blocked)
			if blocked == nil {
				t.Errorf("report: pool %s blocked_until is null, want the upstream reset %s", tc.blocked, rep.UpstreamReset)
			} else if *blocked != rep.UpstreamReset {
				t.Errorf("report: pool %s blocked_until %s, want the upstream reset %s", tc.blocked, *blocked, rep.UpstreamReset)
			}
			if _, _, _, _, _, other := rep.pool(t, tc.free); other != nil {
				t.Errorf("report: pool %s blocked_until %s, want null: the upstream did not say it was spent", tc.free, *other)
			}
			if tc.shape == fakeyt.SearchPerDay {
				// The search bucket is spent, not the project's quota: charts still run.
				h.mustRun(0, "run", "--once", "--regions", "GB")
				checkChartsComplete(t, h, "GB")
			}
		})
	}
}

func TestRunRetries5xxAndChargesEveryAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.FailNext(3, 503)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	checkChartsComplete(t, h, "US", "GB")
	_, units := fullPassUnits(h.fake, "US", "GB") // 8
	want := units + 3                             // the three failed attempts are charged too
	if got := h.fake.Charged(testKey); got != want {
		t.Errorf("upstream charged %d units, want %d (%d calls + 3 failed attempts)", got, want, units)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d: every attempt passes the limiter", got, h.fake.Charged(testKey))
	}
	if used, _, _, _, _, _ := h.report().pool(t, "default"); used != want {
		t.Errorf("limiter used %d, want %d", used, want)
	}
}

// A region that fails for another reason (the upstream's 5xx outlasts the
// retries) fails alone: the others run on, and the exit status says 1.
func TestRunRegionFailureExits1WhileOthersRunOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.FailNext(4, 500) // every attempt of US's first call
	res := h.mustRun(1, "run", "--once", "--regions", "US,GB")
	if !strings.Contains(res.stderr, "US") {
		t.Errorf("stderr does not name the failed region US:\n%s", res.stderr)
	}
	checkChartsComplete(t, h, "GB")
	if us := lastRunsAll(t, h, "US"); us.Status != "failed" {
		t.Errorf("US run status %q, want failed", us.Status)
	}
	if got, want := h.fake.Charged(testKey), int64(4+3); got != want {
		t.Errorf("upstream charged %d, want %d (4 failed attempts, GB's 3 calls)", got, want)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}

// lastRunsAll is region's latest trending run, whatever its status.
func lastRunsAll(t *testing.T, h *harness, region string) runRow {
	t.Helper()
	r, ok := lastRuns(t, openDB(t, h.db()), "trending")[region]
	if !ok {
		t.Fatalf("no trending run of %s", region)
	}
	return r
}

func TestRunBadKeyFailsLoudlyWithoutRetrying(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault fakeyt.KeyFault
	}{
		{"API_KEY_INVALID", fakeyt.KeyInvalid},
		{"keyInvalid", fakeyt.KeyInvalidLegacy},
		{"API_KEY_SERVICE_BLOCKED", fakeyt.KeyBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.fake.BadKey(tc.fault)
			res := h.mustRun(1, "run", "--once")
			if !strings.Contains(res.stderr, "YOUTUBE_API_KEY") {
				t.Errorf("stderr does not name YOUTUBE_API_KEY:\n%s", res.stderr)
			}
			if n := h.fake.Requests(); n < 1 || n > 2 {
				t.Errorf("upstream saw %d requests, want 1 or 2: a rejected key must stop every region, not retry", n)
			}
			for pool, charged := range h.fake.ChargedBuckets(testKey) {
				if got := ledgerUnits(t, h.db(), pool); got != charged {
					t.Errorf("pool %s: ledger holds %d units, upstream charged %d", pool, got, charged)
				}
			}
		})
	}
}

func TestRunSkipsARegionWithoutAChart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.NoChart("GB")
	h.mustRun(0, "run", "--once")
	others := slices.DeleteFunc(slices.Clone(regions.Default), func(r string) bool { return r == "GB" })
	checkChartsComplete(t, h, others...)
	db := openDB(t, h.db())
	if n := queryInt(t, db, `SELECT count(*) FROM trending_entries WHERE region = 'GB'`); n != 0 {
		t.Errorf("GB has %d trending entries, want 0", n)
	}
	gb, ok := lastRuns(t, db, "trending")["GB"]
	if ok && (gb.Status == "failed" || gb.Status == "running") {
		t.Errorf("GB run is %q (%s), want it skipped, not failed", gb.Status, gb.Message)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}

// closedAddr is a loopback address nothing listens on now. Its port is
// drawn below the kernel's ephemeral range, where the outgoing connections
// of the tests' many processes take theirs, so a listener started on it
// is not beaten to the port by one of them.
func closedAddr(t *testing.T) string {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return fmt.Sprintf("127.0.0.1:%d", port)
	}
	t.Fatal("no free port between 20000 and 32000")
	return ""
}

// httpGet returns the body of a GET, or "" on any error.
func httpGet(url string) string {
	c := &http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// A run's log counts what the database holds: a video on several regions'
// charts is one video (and one entry per chart), as the tables count it.
func TestRunOnceLogsStoredCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--log-format", "json", "--log-level", "debug")
	db := openDB(t, h.db())
	runs := lastRuns(t, db, "trending")
	var summary map[string]any
	for _, l := range jsonLines(t, res.stderr) {
		switch l["msg"] {
		case "run --once":
			summary = l
		case "pass":
			region, _ := l["region"].(string)
			if got, want := l["videos"], float64(runs[region].Videos); got != want {
				t.Errorf("pass %s logged videos=%v, its run stored %v", region, got, want)
			}
		}
	}
	if summary == nil {
		t.Fatalf("no run --once line:\n%s", res)
	}
	videos := queryInt(t, db, `SELECT count(*) FROM videos`)
	entries := queryInt(t, db, `SELECT count(*) FROM trending_entries`)
	if videos == entries {
		t.Fatalf("the fake's charts share no video (%d videos, %d entries): the test shows nothing", videos, entries)
	}
	if got := summary["videos"]; got != float64(videos) {
		t.Errorf("run --once logged videos=%v, the database holds %d videos", got, videos)
	}
	if got := summary["entries"]; got != float64(entries) {
		t.Errorf("run --once logged entries=%v, the database holds %d trending entries", got, entries)
	}
}

// 4c. A dead endpoint fails the run at the first region, with one line
// that says so; a rejected key counts the regions right.
func TestDeadEndpointFailsFast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("YOUTUBE_ENDPOINT", "http://"+closedAddr(t)+"/")
	start := time.Now()
	res := h.mustRun(1, "run", "--once")
	took := time.Since(start)
	notRun := fmt.Sprintf("%d of %d regions not run", len(regions.Default)-1, len(regions.Default))
	if n := strings.Count(res.stderr, "ingest: "); n != 1 || !strings.Contains(res.stderr, "cannot be reached") ||
		!strings.Contains(res.stderr, notRun) || !strings.Contains(res.stderr, "YOUTUBE_ENDPOINT") {
		t.Errorf("dead endpoint: want one line saying it cannot be reached and %s:\n%s", notRun, res.stderr)
	}
	if took > 15*time.Second {
		t.Errorf("dead endpoint took %s; want the first region's retries only", took)
	}
	if runs := runRows(t, openDB(t, h.db())); len(runs) != 1 {
		t.Errorf("%d runs after a dead endpoint, want 1 (the first region)", len(runs))
	}
	// The upstream charged nothing: every attempt was given back, and the
	// ledger's count and the limiter's window say so.
	db := openDB(t, h.db())
	if given, calls := queryInt(t, db, `SELECT count(*) FROM ledger_given_back`), queryInt(t, db, `SELECT count(DISTINCT call_id) FROM ledger`); given == 0 || given != calls {
		t.Errorf("dead endpoint: %d calls in the ledger, %d given back; want every one given back", calls, given)
	}
	if used, _, _, _, _, _ := h.report().pool(t, "default"); used != 0 {
		t.Errorf("dead endpoint: the limiter counts %d units used, want 0 (nothing reached the upstream)", used)
	}
	h2 := newHarness(t)
	h2.fake.BadKey(fakeyt.KeyInvalid)
	res = h2.mustRun(1, "run", "--once")
	n := len(regions.Default)
	if !strings.Contains(res.stderr, fmt.Sprintf("%d of %d regions not run", n-1, n)) || strings.Contains(res.stderr, "1 of 1") {
		t.Errorf("bad key: want every default region counted:\n%s", res.stderr)
	}
}
