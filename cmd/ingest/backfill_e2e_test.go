package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

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

// backfill --help prices a page as the shipped costs.yaml does, the same
// words --dry-run prints for a page.
func TestBackfillHelpPricesAPageAsDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plan := h.mustRun(0, "backfill", "--region", "US", "--since", "2026-01-01", "--dry-run")
	m := regexp.MustCompile(`\(a page: ([^)]+)\)`).FindStringSubmatch(plan.stdout)
	if m == nil {
		t.Fatalf("--dry-run prints no page cost:\n%s", plan)
	}
	help := h.mustRun(0, "backfill", "--help")
	text := strings.Join(strings.Fields(help.stdout), " ")
	if !strings.Contains(text, m[1]) || strings.Contains(text, "100 units") {
		t.Errorf("backfill --help does not price a page as --dry-run does (%q):\n%s", m[1], help.stdout)
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

// 1. The same open-ended backfill run again resumes: no search page is
// fetched twice (the fake upstream's request log says so), the searches
// keep one publishedBefore, and there is one cursor; --restart starts over.
func TestBackfillOpenEndedRerunFetchesNoPageTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A page is a search (1 search unit) and its details (1 default unit).
	args := []string{"backfill", "--region", "US", "--since", "2025-11-01", "--max-units", "4"}
	h.mustRun(0, args...)
	// The second run's clock reads two seconds on (the old key held "now"
	// to the second).
	offset := filepath.Join(t.TempDir(), "clock-offset")
	if err := os.WriteFile(offset, []byte("2s"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set(clock.RehearseEnv, offset)
	second := h.mustRun(0, args...)
	if !strings.Contains(second.stdout, "resumed") {
		t.Errorf("the same command did not resume:\n%s", second)
	}
	searches := h.reqs.requests("/search")
	seen := map[string]int{}
	befores := map[string]bool{}
	for _, u := range searches {
		seen[u.Query().Get("pageToken")]++
		befores[u.Query().Get("publishedBefore")] = true
	}
	for tok, n := range seen {
		if n > 1 {
			t.Errorf("search page with token %q fetched %d times: paid twice", tok, n)
		}
	}
	if len(searches) != 4 || len(befores) != 1 {
		t.Errorf("%d searches with %d distinct publishedBefore; want 4 pages under one window", len(searches), len(befores))
	}
	if n := queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM backfill_cursors`); n != 1 {
		t.Errorf("%d cursors after running one command twice, want 1", n)
	}
	list := h.mustRun(0, "backfill", "--list")
	if !strings.Contains(list.stdout, "open-ended") || !strings.Contains(list.stdout, "resumes at page 5") {
		t.Errorf("--list does not show the open-ended backfill at page 5:\n%s", list)
	}
	h.mustRun(0, append(args, "--restart", "--max-units", "2")...)
	if got := h.reqs.requests("/search"); len(got) != 5 || got[4].Query().Get("pageToken") != "" {
		t.Errorf("--restart did not fetch the first page again: %d searches", len(got))
	}
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

// Each page line of a backfill says the units the upstream charged for it,
// in every pool, and what the pools drawn from have left: the sum of its
// lines' units is what the fake charged.
func TestBackfillPageLineCountsEveryPool(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "backfill", "--region", "US", "--since", "2025-11-01", "--until", "2026-11-01", "--max-units", "6", "--log-format", "json")
	var last struct {
		Units int64  `json:"units"`
		Pools string `json:"units_by_pool"`
		Left  string `json:"left"`
	}
	lines := 0
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.Contains(l, `"msg":"backfill page"`) {
			lines++
			if err := json.Unmarshal([]byte(l), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if lines == 0 {
		t.Fatalf("no backfill page line\n%s", res)
	}
	if charged := h.fake.Charged(testKey); last.Units != charged || !strings.Contains(last.Pools, "search") ||
		!strings.Contains(last.Left, "search ") || strings.Contains(last.Left, "-1") {
		t.Errorf("last page line: units=%d units_by_pool=%q left=%q; the upstream charged %d in all\n%s", last.Units, last.Pools, last.Left, charged, res)
	}
}

// A backfill's dry run plans by its cursor as its run does: resumed at
// page 4, it says at most 7 pages, and the run then fetches no more than
// those (the search may end sooner); complete, it says a run calls
// nothing, and the run calls nothing.
func TestBackfillDryRunPlansByItsCursor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := []string{"backfill", "--region", "US", "--since", "2025-11-01", "--until", "2026-11-01"}
	h.mustRun(0, append(args, "--max-units", "6")...)
	plan := h.mustRun(0, append(args, "--max-units", "100", "--dry-run")...)
	if !strings.Contains(plan.stdout, "resumes at page 4 of at most 10") || !strings.Contains(plan.stdout, "at most 7 pages") {
		t.Errorf("the dry run of a backfill 3 pages in does not plan its last 7:\n%s", plan)
	}
	before := len(h.reqs.requests("/search"))
	h.mustRun(0, append(args, "--max-units", "100")...)
	if n := len(h.reqs.requests("/search")) - before; n < 1 || n > 7 {
		t.Errorf("the run fetched %d search pages, its dry run said at most 7", n)
	}
	done := h.mustRun(0, append(args, "--dry-run")...)
	if !strings.Contains(done.stdout, "already complete: a run calls nothing") || !strings.Contains(done.stdout, "at most 0 pages") {
		t.Errorf("the dry run of a complete backfill plans pages:\n%s", done)
	}
	before = len(h.reqs.requests(""))
	h.mustRun(0, args...)
	if n := len(h.reqs.requests("")) - before; n != 0 {
		t.Errorf("a complete backfill's run sent %d requests", n)
	}
}

// A signal stops a backfill between pages: the search on the wire when it
// came is kept with the cursor (its videos' details are not asked for
// after the signal), the backfill exits 0, and the same command resumes
// with that page's details, paying for no search page twice.
func TestBackfillStopsAtASignalWithThePageInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(2 * time.Second)
	args := []string{"backfill", "--region", "US", "--since", "2025-11-01", "--until", "2026-11-01", "--max-units", "20"}
	p := h.start(args...)
	// The first page's search and details, then the second page's search.
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 3 }) {
		t.Fatalf("the backfill made no third call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	code, ok := p.wait(cmdTimeout)
	if !ok || code != 0 {
		t.Fatalf("backfill after SIGTERM: exited %v with %d, want exit 0\n%s", ok, code, p.out)
	}
	searched := h.fake.ChargedBuckets(testKey)["search"]
	db := openDB(t, h.db())
	pages := queryInt(t, db, `SELECT max(pages) FROM backfill_cursors`)
	pending := queryInt(t, db, `SELECT count(*) FROM backfill_cursors WHERE pending <> ''`)
	if pages < 1 || pages+pending != searched {
		t.Errorf("after the signal the cursor holds %d pages and %d waiting for details, the upstream charged %d searches: want every charged search kept", pages, pending, searched)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM search_results`); n != 50*pages {
		t.Errorf("%d search results for %d pages, want 50 a page", n, pages)
	}
	h.fake.SetLatency(0)
	h.mustRun(0, args...)
	if again := h.fake.ChargedBuckets(testKey)["search"]; again != queryInt(t, openDB(t, h.db()), `SELECT max(pages) FROM backfill_cursors`) {
		t.Errorf("after resuming the upstream charged %d searches for %d pages: a page paid twice", again, queryInt(t, openDB(t, h.db()), `SELECT max(pages) FROM backfill_cursors`))
	}
}

// The upstream refusing a page's details for its daily quota after it
// answered (and charged) the page's search: the search is kept with the
// cursor, for the backfill run after the reset to detail without paying
// for it again.
func TestBackfillKeepsTheSearchWhoseDetailsWereRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetDailyQuota(2) // two pages' details
	res := h.mustRun(0, "backfill", "--region", "US", "--since", "2025-11-01", "--until", "2026-11-01", "--max-units", "20")
	searched := h.fake.ChargedBuckets(testKey)["search"]
	db := openDB(t, h.db())
	pages := queryInt(t, db, `SELECT max(pages) FROM backfill_cursors`)
	pending := queryInt(t, db, `SELECT count(*) FROM backfill_cursors WHERE pending <> ''`)
	if searched != 3 || pages != 2 || pending != 1 {
		t.Errorf("after the third page's details were refused: %d searches charged, %d pages stored, %d waiting for details; want 3, 2, 1\n%s",
			searched, pages, pending, res)
	}
}
