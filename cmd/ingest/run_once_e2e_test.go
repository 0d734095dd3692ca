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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	_ "time/tzdata" // upstream_reset is midnight America/Los_Angeles

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/fakeyt"
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
			charged := h.fake.Charged(testKey)
			if charged > limit {
				t.Errorf("upstream charged %d units, over the limit of %d (%v)", charged, limit, h.fake.ChargedByOp(testKey))
			}
			// Every region runs somewhere (30 units wanted), so the limiter
			// admits exactly its limit.
			if charged != limit {
				t.Errorf("upstream charged %d units, want exactly the limit %d", charged, limit)
			}
			slices.Sort(dbs)
			dbs = slices.Compact(dbs)
			var ledger int64
			for _, db := range dbs {
				ledger += ledgerUnits(t, db, "default")
			}
			if ledger != charged {
				t.Errorf("ledgers hold %d units, upstream charged %d", ledger, charged)
			}
			if charged != limit {
				var unmetered int64
				for _, db := range dbs {
					unmetered += queryInt(t, openDB(t, db), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`)
				}
				t.Logf("of which the ledgers mark %d units unmetered (admitted while the limiter did not answer)", unmetered)
				for i, p := range ps {
					for _, line := range strings.Split(p.out.String(), "\n") {
						if strings.Contains(line, "unreachable") || strings.Contains(line, "unmetered") {
							t.Logf("process %d: %s", i, line)
						}
					}
				}
			}
			rep := h.report("--db", dbs[0])
			if used, _, _, remaining, freeAt, _ := rep.pool(t, "default"); used != limit || remaining != 0 || freeAt == nil {
				t.Errorf("report pool default: used %d remaining %d free_at %v; want %d, 0, a time", used, remaining, freeAt, limit)
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

// 4. The daemon under SIGTERM: the page in flight is stored, nothing is
// left running, exit 0; a second signal stops at once.
func TestDaemonDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(200 * time.Millisecond)
	p := h.start("run", "--every", "1m", "--regions", "US,IN")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 50 }) {
		t.Fatalf("no page stored within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	code, ok := p.wait(10 * time.Second)
	if !ok {
		t.Fatalf("daemon still running 10s after SIGTERM\n%s", p.out)
	}
	if code != 0 {
		t.Errorf("daemon exited %d after SIGTERM, want 0\n%s", code, p.out)
	}
	var pages int64
	for _, r := range runRows(t, openDB(t, h.db())) {
		n := h.fake.ChartLength(r.Region)
		if r.Status == "running" {
			t.Errorf("run %d (%s) left %q after a clean shutdown", r.ID, r.Region, r.Status)
		}
		if r.Entries != min(50*r.Pages, n) || r.Videos != r.Entries {
			t.Errorf("run %d (%s): %d pages, %d videos, %d entries: want whole pages of 50", r.ID, r.Region, r.Pages, r.Videos, r.Entries)
		}
		pages += int64(r.Pages)
	}
	// The page in flight when the signal came was stored, not dropped.
	if charged := h.fake.ChargedByOp(testKey)[ingest.OpVideosList]; charged != pages {
		t.Errorf("upstream served %d chart pages, %d were stored", charged, pages)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}

func TestDaemonSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const latency = 10 * time.Second
	h.fake.SetLatency(latency)
	p := h.start("run", "--every", "1m", "--regions", "US,IN")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	if p.exited() {
		t.Fatalf("exited within 300ms of one SIGTERM with a %s call in flight: the first signal must let it finish\n%s", latency, p.out)
	}
	p.signal(t, syscall.SIGINT)
	sent := time.Now()
	code, ok := p.wait(latency / 2)
	if !ok {
		t.Fatalf("still running %s after a second signal, with a %s call in flight\n%s", latency/2, latency, p.out)
	}
	t.Logf("exited %d after %s", code, time.Since(sent).Round(time.Millisecond))
	for _, r := range runRows(t, openDB(t, h.db())) {
		if r.Status == "running" {
			t.Errorf("run %d (%s) left %q after a second signal", r.ID, r.Region, r.Status)
		}
	}
}

// 5. kill -9 in the middle of a pass leaves the database whole, and a
// rerun completes.
func TestKillMidPassLeavesTheDatabaseWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(50 * time.Millisecond)
	p := h.start("run", "--once")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 100 }) {
		t.Fatalf("no pages stored within 60s\n%s", p.out)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.wait(10 * time.Second); !ok {
		t.Fatal("process did not die after SIGKILL")
	}

	rw := openRW(t, h.db())
	if got := queryString(t, rw, `PRAGMA integrity_check`); got != "ok" {
		t.Fatalf("PRAGMA integrity_check: %s", got)
	}
	if _, err := rw.Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("FTS5 integrity-check: %v", err)
	}
	victim := ""
	for _, r := range runRows(t, rw) {
		n := h.fake.ChartLength(r.Region)
		if r.Entries != min(50*r.Pages, n) {
			t.Errorf("run %d (%s, %s): %d pages but %d entries: a page is in entirely or not at all", r.ID, r.Region, r.Status, r.Pages, r.Entries)
		}
		if r.Status == "running" {
			victim = r.Region
		}
	}
	rw.Close()
	t.Logf("killed during the pass of %q", victim)

	res := h.mustRun(0, "run", "--once")
	var others []string
	for _, r := range regions.Default {
		if r != victim {
			others = append(others, r)
		}
	}
	checkChartsComplete(t, h, others...)
	if victim != "" {
		last := lastRuns(t, openDB(t, h.db()), "trending")[victim]
		// The dead process's lease may hold the region until it expires;
		// then the rerun must say so rather than pretend.
		if last.Status != "completed" && !strings.Contains(res.stderr, "already running") {
			t.Errorf("rerun neither completed %s (last run %q) nor said why it skipped it\n%s", victim, last.Status, res)
		}
	}
	rep := h.report()
	for _, r := range rep.Regions {
		if !slices.Contains([]string{"completed", "stopped", "failed", "never"}, r.Status) {
			t.Errorf("report region %s: status %q, want one of completed, stopped, failed, never", r.Code, r.Status)
		}
	}
}

// 6. The API key is never printed, logged, stored or used in Redis.
func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	var outputs []result
	run := func(want int, args ...string) {
		t.Helper()
		outputs = append(outputs, h.mustRun(want, args...))
	}
	run(0, "run", "--once", "--regions", "US,GB")
	run(0, "run", "--once", "--regions", "AU", "--log-format", "json")
	run(0, "backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-11-01", "--max-units", "202")
	run(0, "backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-11-01", "--dry-run")
	run(0, "report")
	run(0, "report", "--json")
	run(0, "search", "football")
	run(0, "search", "--json", "football")

	// Error paths: a rejected key, an unreachable upstream.
	h.fake.BadKey(fakeyt.KeyInvalid)
	run(1, "run", "--once", "--regions", "DE")
	run(1, "run", "--once", "--regions", "DE", "--log-format", "json")
	run(1, "backfill", "--region", "DE", "--since", "2026-10-01", "--until", "2026-11-01")
	h.fake.BadKey(fakeyt.KeyOK)
	h.set("YOUTUBE_ENDPOINT", "http://"+closedAddr(t)+"/")
	run(1, "run", "--once", "--regions", "FR")
	run(1, "backfill", "--region", "FR", "--since", "2026-10-01", "--until", "2026-11-01")

	// And the embedded limiter's tables, in a database of their own.
	h.set("YOUTUBE_ENDPOINT", h.srv.URL+"/")
	h.unset("REDIS_URL")
	h.set("INGEST_DB", filepath.Join(h.dir, "embedded.db"))
	run(0, "run", "--once", "--regions", "CA")
	run(0, "report", "--json")

	// The daemon's /metrics, /quota and /healthz.
	listen := closedAddr(t)
	d := h.start("run", "--every", "1m", "--regions", "BR", "--listen", listen)
	served := ""
	if !waitFor(30*time.Second, func() bool { return strings.Contains(httpGet("http://"+listen+"/healthz"), "ok") }) {
		t.Errorf("daemon --listen %s: /healthz never answered\n%s", listen, d.out)
	}
	waitFor(30*time.Second, func() bool { return trendingEntries(h.db()) >= int64(h.fake.ChartLength("BR")) })
	for _, path := range []string{"/metrics", "/quota", "/healthz"} {
		body := httpGet("http://" + listen + path)
		if body == "" {
			t.Errorf("daemon %s answered nothing", path)
		}
		served += body
	}
	d.signal(t, syscall.SIGTERM)
	if _, ok := d.wait(10 * time.Second); !ok {
		t.Errorf("daemon still running 10s after SIGTERM")
	}
	if strings.Contains(served, testKey) || strings.Contains(d.out.String(), testKey) {
		t.Errorf("the API key appears in what the daemon served or logged:\n%s\n%s", served, d.out)
	}

	for _, res := range outputs {
		if strings.Contains(res.stdout+res.stderr, testKey) {
			t.Errorf("the API key appears in the output of %s", res)
		}
	}
	files, _ := filepath.Glob(filepath.Join(h.dir, "*"))
	for _, f := range files {
		if b := fileBytes(t, f); bytes.Contains(b, []byte(testKey)) {
			t.Errorf("the API key is stored in %s", filepath.Base(f))
		}
	}
	dump := redisDump(t, rs.Addr)
	if len(dump) == 0 {
		t.Error("Redis holds no keys after runs that used it")
	}
	for k, v := range dump {
		if strings.Contains(k, testKey) || strings.Contains(v, testKey) {
			t.Errorf("the API key is in Redis key %q (value %.200s)", k, v)
		}
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// 7. Usage and configuration errors exit 2 before anything is written or
// sent upstream.
func TestUsageErrorsExit2BeforeAnythingIsWritten(t *testing.T) {
	t.Parallel()
	badCosts := `pools:
  default: {limit: 10000, reserve: 500, window: 24h}
  search:  {limit: 100,   reserve: 0,   window: 24h}
  stats:   {limit: 10000, reserve: 0,   window: 24h}
operations:
  videos.list:          {default: 0}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`
	for _, tc := range []struct {
		name  string
		setup func(h *harness)
		args  []string
		want  *regexp.Regexp // what the message must name
	}{
		{"missing API key", func(h *harness) { h.unset("YOUTUBE_API_KEY") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"blank API key", func(h *harness) { h.set("YOUTUBE_API_KEY", "  ") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"backfill missing API key", func(h *harness) { h.unset("YOUTUBE_API_KEY") }, []string{"backfill", "--region", "US", "--since", "2026-10-01"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"unknown region", nil, []string{"run", "--once", "--regions", "US,XX"}, regexp.MustCompile(`--regions.*XX`)},
		{"empty regions", nil, []string{"run", "--once", "--regions", ""}, regexp.MustCompile(`--regions: is empty`)},
		{"empty regions env", func(h *harness) { h.set("INGEST_RUN_REGIONS", " ") }, []string{"run", "--once"}, regexp.MustCompile(`--regions: is empty`)},
		{"report empty regions", nil, []string{"report", "--regions", ","}, regexp.MustCompile(`--regions: is empty`)},
		{"unknown quota subcommand", nil, []string{"quota", "bogus"}, regexp.MustCompile(`unknown command "bogus" for "ingest quota"`)},
		{"quota apply with an argument", nil, []string{"quota", "apply", "extra"}, regexp.MustCompile(`extra`)},
		{"every below a minute", nil, []string{"run", "--every", "30s"}, regexp.MustCompile(`--every`)},
		{"max-stale below every", nil, []string{"run", "--every", "2h", "--max-stale", "1h"}, regexp.MustCompile(`--max-stale: must be at least --every \(2h0m0s\), got 1h0m0s`)},
		{"max-stale env below every", func(h *harness) { h.set("INGEST_RUN_MAX_STALE", "30m") }, []string{"run"}, regexp.MustCompile(`--max-stale`)},
		{"bad costs file", func(h *harness) {
			path := filepath.Join(h.dir, "costs-bad.yaml")
			if err := os.WriteFile(path, []byte(badCosts), 0o644); err != nil {
				h.t.Fatal(err)
			}
			h.set("INGEST_COSTS", path)
		}, []string{"run", "--once"}, regexp.MustCompile(`costs-bad\.yaml(:6\b|.*line 6\b).*videos\.list`)},
		{"missing costs file", func(h *harness) { h.set("INGEST_COSTS", filepath.Join(h.dir, "nope.yaml")) }, []string{"run", "--once"}, regexp.MustCompile(`nope\.yaml`)},
		{"unknown flag", nil, []string{"run", "--once", "--bogus"}, regexp.MustCompile(`--bogus`)},
		{"stray argument", nil, []string{"run", "--once", "US"}, regexp.MustCompile(`US`)},
		{"log format xml", nil, []string{"run", "--once", "--log-format", "xml"}, regexp.MustCompile(`--log-format.*xml`)},
		{"log format env", func(h *harness) { h.set("INGEST_LOG_FORMAT", "xml") }, []string{"run", "--once"}, regexp.MustCompile(`INGEST_LOG_FORMAT`)},
		{"backfill since not a date", nil, []string{"backfill", "--region", "US", "--since", "notadate"}, regexp.MustCompile(`--since.*notadate`)},
		{"backfill missing since", nil, []string{"backfill", "--region", "US"}, regexp.MustCompile(`--since`)},
		{"backfill until before since", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-09-01"}, regexp.MustCompile(`--until`)},
		{"backfill unknown region", nil, []string{"backfill", "--region", "ZZ", "--since", "2026-10-01"}, regexp.MustCompile(`--region.*ZZ`)},
		{"backfill max-units below a page", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--max-units", "1"}, regexp.MustCompile(`--max-units: one search page costs 2 units`)},
		{"backfill negative max-units", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--max-units", "-5"}, regexp.MustCompile(`--max-units`)},
		{"search without a query", nil, []string{"search"}, regexp.MustCompile(`QUERY`)},
		{"search blank query", nil, []string{"search", "  "}, regexp.MustCompile(`QUERY`)},
		{"search limit 0", nil, []string{"search", "football", "--limit", "0"}, regexp.MustCompile(`--limit`)},
		{"search unknown region", nil, []string{"search", "football", "--region", "ZZ"}, regexp.MustCompile(`--region`)},
		{"report every below a minute", nil, []string{"report", "--every", "30s"}, regexp.MustCompile(`--every`)},
		{"bad quota key", func(h *harness) { h.set("INGEST_QUOTA_KEY", "a b") }, []string{"run", "--once"}, regexp.MustCompile(`INGEST_QUOTA_KEY`)},
		{"bad listen address", nil, []string{"run", "--listen", "nope"}, regexp.MustCompile(`--listen`)},
		{"bad redis URL", func(h *harness) { h.set("REDIS_URL", "notredis://x") }, []string{"run", "--once"}, regexp.MustCompile(`REDIS_URL`)},
		{"backfill bad redis URL", func(h *harness) { h.set("REDIS_URL", "notredis://x") }, []string{"backfill", "--region", "US", "--since", "2026-10-01"}, regexp.MustCompile(`REDIS_URL`)},
		{"bad endpoint", func(h *harness) { h.set("YOUTUBE_ENDPOINT", "http://[::1") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_ENDPOINT|--youtube-endpoint`)},
		{"endpoint with the API's path", func(h *harness) { h.set("YOUTUBE_ENDPOINT", h.srv.URL+"/youtube/v3/") }, []string{"run", "--once"},
			regexp.MustCompile(`YOUTUBE_ENDPOINT: give the API's base URL without youtube/v3/, which the client adds: http://127\.0\.0\.1:\d+/, not`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			res := h.run(tc.args...)
			if res.code != 2 {
				t.Errorf("want exit 2, got %s", res)
			}
			if !tc.want.MatchString(res.stderr) {
				t.Errorf("stderr does not match %q:\n%s", tc.want, res.stderr)
			}
			if _, err := os.Stat(h.db()); err == nil {
				t.Errorf("database %s was created by a command that exited on a usage error", h.db())
			}
			if n := h.fake.Requests(); n != 0 {
				t.Errorf("upstream saw %d requests, want 0", n)
			}
		})
	}
}

// 8. report: what it shows, and that it changes nothing.
func TestReportWithoutADatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// report works on a host with no database yet (docs/contract.md):
	// every region never, the pools whole, and no file created.
	rep := h.report()
	for _, r := range rep.Regions {
		if r.Status != "never" {
			t.Errorf("region %s: status %q without a database, want never", r.Code, r.Status)
		}
	}
	if used, _, _, remaining, _, _ := rep.pool(t, "default"); used != 0 || remaining != 9500 {
		t.Errorf("pool default without a database: used %d remaining %d, want 0 and 9500", used, remaining)
	}
	h.mustRun(0, "report")
	// As report, the other read-only commands read a database that does not
	// exist yet as an empty one, exit 0, and say so (docs/contract.md).
	res := h.mustRun(0, "search", "football")
	if !strings.Contains(res.stderr, "no database at "+h.db()+" yet") || !strings.Contains(res.stderr, "ingest run") || res.stdout != "no matches\n" {
		t.Errorf("search: want no matches, and stderr saying there is no database and how to create one (ingest run):\n%s", res)
	}
	if res := h.mustRun(0, "search", "--json", "football"); strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("search --json without a database: want [], got %s", res)
	}
	if res := h.mustRun(0, "export", "--since", "2026-01-01"); !strings.HasPrefix(res.stdout, "video_id,") || strings.Count(res.stdout, "\n") != 1 {
		t.Errorf("export without a database: want the CSV header alone, got %s", res)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("report created %s", h.db())
	}
}

func TestReportJSONHasTheDesignFields(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	res := h.mustRun(0, "report", "--json")

	var raw map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &raw); err != nil {
		t.Fatalf("report --json: %v\n%s", err, res.stdout)
	}
	requireKeys(t, "report", raw, "quota_key", "backend", "pools", "operations", "regions", "upstream_reset")
	for _, p := range raw["pools"].([]any) {
		requireKeys(t, "pools[]", p.(map[string]any), "name", "limit", "reserve", "used", "remaining", "free_at", "blocked_until")
	}
	for _, o := range raw["operations"].([]any) {
		requireKeys(t, "operations[]", o.(map[string]any), "op", "calls", "units")
	}
	for _, r := range raw["regions"].([]any) {
		requireKeys(t, "regions[]", r.(map[string]any), "code", "name", "status", "last_run", "videos", "units", "next_run")
	}

	if text := h.mustRun(0, "report"); !strings.HasSuffix(text.stdout, "\n") {
		t.Errorf("report's text does not end with a newline (the shell prompt lands on its last line): ...%q", text.stdout[max(0, len(text.stdout)-60):])
	}

	rep := h.report()
	if rep.QuotaKey == "" || strings.Contains(rep.QuotaKey, testKey) || rep.Backend != "sqlite" {
		t.Errorf("quota_key %q backend %q: want a short hash of the key and sqlite", rep.QuotaKey, rep.Backend)
	}
	used, limit, reserve, remaining, freeAt, blocked := rep.pool(t, "default")
	if used != 8 || limit != 10000 || reserve != 500 || remaining != 9492 || freeAt != nil || blocked != nil {
		t.Errorf("pool default: used %d limit %d reserve %d remaining %d free_at %v blocked_until %v; want 8 10000 500 9492 null null",
			used, limit, reserve, remaining, freeAt, blocked)
	}
	ops := map[string][2]int64{}
	for _, o := range rep.Operations {
		ops[o.Op] = [2]int64{int64(o.Calls), o.Units}
	}
	if ops["videos.list"] != [2]int64{6, 6} || ops["videoCategories.list"] != [2]int64{2, 2} {
		t.Errorf("operations %v, want videos.list 6 calls 6 units, videoCategories.list 2 calls 2 units", ops)
	}
	want := map[string][3]int64{"US": {200, 5}, "GB": {77, 3}}
	var codes []string
	for _, r := range rep.Regions {
		codes = append(codes, r.Code)
		if w, ok := want[r.Code]; ok {
			if r.Status != "completed" || int64(r.Videos) != w[0] || r.Units != w[1] || r.LastRun == nil || r.NextRun == nil {
				t.Errorf("region %s: %+v, want completed, %d videos, %d units, last_run and next_run set", r.Code, r, w[0], w[1])
			}
		} else if r.Status != "never" || r.LastRun != nil {
			t.Errorf("region %s: status %q last_run %v, want never and null", r.Code, r.Status, r.LastRun)
		}
	}
	if want := []string{"GB", "US"}; !slices.Equal(codes, want) {
		t.Errorf("regions %v, want the regions the database holds, by code, %v (no daemon recorded a schedule)", codes, want)
	}
	reset, err := time.Parse(time.RFC3339, rep.UpstreamReset)
	la, _ := time.LoadLocation("America/Los_Angeles")
	if err != nil || !reset.After(time.Now()) || reset.After(time.Now().Add(25*time.Hour)) ||
		reset.In(la).Hour() != 0 || reset.In(la).Minute() != 0 {
		t.Errorf("upstream_reset %q: want the next midnight in America/Los_Angeles", rep.UpstreamReset)
	}
}

func requireKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no field %q: %v", what, k, m)
		}
	}
}

func TestReportIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var addr string
			if backend == "redis" {
				addr = h.withRedis().Addr
			}
			h.mustRun(0, "run", "--once", "--regions", "US,GB")
			files := []string{h.db(), h.db() + "-wal"}
			before := map[string][]byte{}
			for _, f := range files {
				before[f] = fileBytes(t, f)
			}
			var redisBefore map[string]string
			if addr != "" {
				redisBefore = redisDump(t, addr)
			}
			h.mustRun(0, "report")
			h.mustRun(0, "report", "--json")
			h.mustRun(0, "search", "football")
			for _, f := range files {
				if after := fileBytes(t, f); !bytes.Equal(before[f], after) {
					t.Errorf("%s changed under report/search: %d bytes before, %d after", filepath.Base(f), len(before[f]), len(after))
				}
			}
			if addr != "" {
				after := redisDump(t, addr)
				if len(after) != len(redisBefore) {
					t.Errorf("Redis DBSIZE %d before report, %d after", len(redisBefore), len(after))
				}
				for k, v := range redisBefore {
					if after[k] != v {
						t.Errorf("Redis key %s changed under report:\nbefore %.300s\nafter  %.300s", k, v, after[k])
					}
				}
			}
		})
	}
}

// 9. search: the index, its folding, phrases, prefixes and hostile input.
func TestSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	db := openDB(t, h.db())
	// text is everything the index holds for a video, lower-cased.
	text := func(t *testing.T, id string) string {
		return strings.ToLower(queryString(t, db, `SELECT title || ' ' || description || ' ' || tags || ' ' || channel_title FROM videos WHERE id = ?`, id))
	}
	sub := func(t *testing.T) *harness { c := *h; c.t = t; return &c }

	t.Run("football", func(t *testing.T) {
		hits := sub(t).searchJSON("football")
		if len(hits) == 0 {
			t.Fatal("no hits for football")
		}
		for _, x := range hits {
			if len(x.ID) != 11 || x.Title == "" || x.Channel == "" || x.Snippet == "" || len(x.Regions) == 0 {
				t.Errorf("hit lacks a field: %+v", x)
			}
			for _, r := range x.Regions {
				if !slices.Contains(regions.Default, r) {
					t.Errorf("hit %s: region %q", x.ID, r)
				}
			}
			if !strings.Contains(text(t, x.ID), "football") {
				t.Errorf("hit %s %q has no football in its text", x.ID, x.Title)
			}
		}
		if !strings.Contains(strings.ToLower(hits[0].Title), "football") {
			t.Errorf("best match %q has no football in its title; a title match weighs most", hits[0].Title)
		}
	})
	t.Run("diacritics", func(t *testing.T) {
		hits := sub(t).searchJSON("muller")
		if len(hits) == 0 || !strings.Contains(hits[0].Title+hits[0].Channel, "Müller") {
			t.Errorf("muller: want Müller first, got %+v", hits)
		}
	})
	t.Run("phrase", func(t *testing.T) {
		phrase := sub(t).searchJSON("--limit", "1000", `"world cup"`)
		words := sub(t).searchJSON("--limit", "1000", "world", "cup")
		if len(phrase) == 0 || len(words) < len(phrase) {
			t.Fatalf(`"world cup": %d hits, world cup: %d; want some, and no more than the words`, len(phrase), len(words))
		}
		for _, x := range phrase {
			if !strings.Contains(text(t, x.ID), "world cup") {
				t.Errorf(`hit %s %q does not hold the phrase "world cup"`, x.ID, x.Title)
			}
		}
	})
	t.Run("prefix", func(t *testing.T) {
		prefix := sub(t).searchJSON("--limit", "1000", "foot*")
		word := sub(t).searchJSON("--limit", "1000", "football")
		if len(prefix) < len(word) || len(word) == 0 {
			t.Errorf("foot*: %d hits, football: %d; a prefix finds at least the word", len(prefix), len(word))
		}
		for _, x := range prefix {
			if !strings.Contains(text(t, x.ID), "foot") {
				t.Errorf("hit %s %q has no word starting foot", x.ID, x.Title)
			}
		}
	})
	t.Run("no match", func(t *testing.T) {
		res := sub(t).mustRun(0, "search", "--json", "zzqxjvwk")
		if strings.TrimSpace(res.stdout) != "[]" {
			t.Errorf("no match: want [], got %s", res)
		}
	})
	t.Run("region", func(t *testing.T) {
		all := sub(t).searchJSON("--limit", "1000", "football")
		gb := sub(t).searchJSON("--limit", "1000", "--region", "GB", "football")
		if len(gb) == 0 || len(gb) >= len(all) {
			t.Errorf("football: %d hits, in GB %d; want some, fewer than everywhere", len(all), len(gb))
		}
		for _, x := range gb {
			if !slices.Contains(x.Regions, "GB") {
				t.Errorf("--region GB returned %s seen in %v", x.ID, x.Regions)
			}
		}
	})
	leak := regexp.MustCompile(`(?i)sql logic|fts5|sqlite|no such column|unrecognized token|malformed match|near ".*": syntax`)
	for _, q := range []string{"COVID-19", "AC/DC", "don't", "c++", "NOT", `"unbalanced`, "*", ")(", "foot NOT", "OR", `""`, "NEAR(a b)", "title:football", "^football", "a:b:c", "-", "'", "\\", "%", "_"} {
		t.Run("hostile "+q, func(t *testing.T) {
			res := sub(t).run("search", "--json", q)
			switch res.code {
			case 0:
				var hits []hit
				if err := json.Unmarshal([]byte(res.stdout), &hits); err != nil {
					t.Errorf("exit 0 without a JSON array: %v\n%s", err, res)
				}
			case 2:
				if strings.TrimSpace(res.stderr) == "" {
					t.Errorf("exit 2 without a message:\n%s", res)
				}
			default:
				t.Errorf("want exit 0 or 2, got %s", res)
			}
			if leak.MatchString(res.stdout + res.stderr) {
				t.Errorf("the user sees SQL internals:\n%s", res)
			}
		})
	}
}

// 10. backfill: a plan that calls nothing, a cap, resuming, and a limiter
// that cannot be reached.
func TestBackfillDryRunCallsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		args  []string
		pages string
		units string
	}{
		{nil, "10 pages", "default 10, search 10"},
		{[]string{"--max-units", "6"}, "3 pages", "default 3, search 3"},
	} {
		args := append([]string{"backfill", "--region", "US", "--since", "2026-01-01", "--until", "2026-11-01", "--dry-run"}, tc.args...)
		res := h.mustRun(0, args...)
		if !strings.Contains(res.stdout, tc.pages) || !strings.Contains(res.stdout, tc.units) {
			t.Errorf("plan does not say %q and %q:\n%s", tc.pages, tc.units, res)
		}
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("--dry-run sent %d requests upstream, want 0", n)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("--dry-run created the database %s", h.db())
	}
}

func TestBackfillMaxUnitsStopsAndResumes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := []string{"backfill", "--region", "US", "--since", "2025-11-01", "--until", "2026-11-01", "--max-units", "6"}
	first := h.mustRun(0, args...)
	// A page is a search (1 of the search pool) and its details (1 of
	// default): 6 units in all buy three pages.
	check := func(res result, pages, runs int64) {
		t.Helper()
		db := openDB(t, h.db())
		if got := queryInt(t, db, `SELECT max(pages) FROM backfill_cursors`); got != pages {
			t.Errorf("cursor at %d pages, want %d\n%s", got, pages, res)
		}
		total, distinct := queryInt(t, db, `SELECT count(*) FROM search_results`), queryInt(t, db, `SELECT count(DISTINCT vid) FROM search_results`)
		if total != 50*pages || distinct != total {
			t.Errorf("search results: %d rows, %d videos; want %d of each: no page stored twice", total, distinct, 50*pages)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM trending_entries`); n != 0 {
			t.Errorf("a backfill stored %d trending entries, want 0", n)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM runs WHERE kind = 'search' AND status = 'stopped'`); got != runs {
			t.Errorf("%d stopped search runs, want %d", got, runs)
		}
		// The 2026 model: the search bucket pays for searches, the shared
		// 10,000 only for the details.
		charged := h.fake.ChargedBuckets(testKey)
		for _, pool := range []string{"default", "search"} {
			if got := ledgerUnits(t, h.db(), pool); got != pages || charged[pool] != pages {
				t.Errorf("pool %s: ledger %d, upstream charged %d; want %d each (one per page)", pool, got, charged[pool], pages)
			}
		}
	}
	check(first, 3, 1)
	if !strings.Contains(first.stdout, "stopped") {
		t.Errorf("first backfill does not say it stopped:\n%s", first)
	}
	second := h.mustRun(0, args...)
	if !strings.Contains(strings.ToLower(second.stdout), "resumed") {
		t.Errorf("second backfill does not say it resumed:\n%s", second)
	}
	check(second, 6, 2)
}

func TestBackfillRefusesSearchesWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	res := h.mustRun(1, "backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-11-01")
	if !regexp.MustCompile(`(?i)limiter.*(unreachable|cannot be reached|can't be reached|not reachable)`).MatchString(res.stderr) {
		t.Errorf("stderr does not say the limiter is unreachable:\n%s", res.stderr)
	}
	if got := h.fake.ChargedByOp(testKey)[ingest.OpSearchList]; got != 0 {
		t.Errorf("upstream charged %d units of search.list while the limiter was down, want 0", got)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
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
