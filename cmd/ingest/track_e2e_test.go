package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

func TestRunOnceTracksTheChartsVideos(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--regions", "GB,AU", "--track-for", "7d")
	db := openDB(t, h.db())
	n := queryInt(t, db, `SELECT count(DISTINCT vid) FROM trending_entries`) // the charts share global hits
	calls := (n + 49) / 50
	if got := queryInt(t, db, `SELECT count(*) FROM video_stats`); got != n || n < 100 {
		t.Errorf("video_stats rows = %d, want %d (every video of both charts)\n%s", got, n, res)
	}
	if got := h.fake.ChargedBuckets(testKey)[fakeyt.BucketStats]; got != calls {
		t.Errorf("upstream charged %d stats units, want %d (50 ids a call)", got, calls)
	}
	if got := queryInt(t, db, `SELECT sum(units) FROM ledger WHERE op = ? AND pool = 'stats'`, ingest.OpBatchGetStats); got != calls {
		t.Errorf("ledger has %d stats units, want %d", got, calls)
	}
	// Without the flags, run --once does not track (cron pays only for charts).
	h.mustRun(0, "run", "--once", "--regions", "GB")
	if got := h.fake.ChargedBuckets(testKey)[fakeyt.BucketStats]; got != calls {
		t.Errorf("run --once without --track-for tracked: %d stats units", got)
	}
}

func TestTrackingStopsCleanlyWhenTheStatsPoolSaysNo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	costs := filepath.Join(h.dir, "costs.yaml")
	body := `pools:
  default: {limit: 10000, reserve: 0, window: 24h}
  search:  {limit: 100, reserve: 0, window: 24h}
  stats:   {limit: 1, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`
	if err := os.WriteFile(costs, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_COSTS", costs)
	// A budget above what the pool holds: the limiter, not the plan, says no.
	res := h.mustRun(0, "run", "--once", "--regions", "GB,AU", "--track-for", "7d", "--track-budget", "10000")
	if !strings.Contains(res.stderr, "tracking stopped") {
		t.Errorf("no clean stop logged:\n%s", res)
	}
	db := openDB(t, h.db())
	if got := queryInt(t, db, `SELECT count(*) FROM video_stats`); got != 50 {
		t.Errorf("video_stats rows = %d, want the one batch the pool allowed (50)", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM runs WHERE status = 'completed'`); got != 2 {
		t.Errorf("%d completed chart runs, want 2: tracking's stop is not the charts'", got)
	}
	// The upstream's own stats quota spent: a clean stop too, the pool blocked.
	h = newHarness(t)
	h.fake.ExhaustQuota(fakeyt.StatsPerDay)
	res = h.mustRun(0, "run", "--once", "--regions", "AU", "--track-for", "7d")
	if !strings.Contains(res.stderr, "tracking stopped") {
		t.Errorf("upstream stats quota spent: no clean stop logged:\n%s", res)
	}
	db = openDB(t, h.db())
	if got := queryInt(t, db, `SELECT count(*) FROM runs WHERE status = 'completed'`); got != 1 {
		t.Errorf("%d completed chart runs, want AU's", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM ledger_blocks WHERE pool = 'stats'`); got != 1 {
		t.Errorf("stats pool blocks in the ledger = %d, want 1", got)
	}
}

func TestTrackFlagsAreChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{{"--track-for", "soon"}, {"--track-every", "1s"}, {"--track-budget", "-5"}} {
		res := h.mustRun(2, append([]string{"run", "--once"}, args...)...)
		if !strings.Contains(res.stderr, args[0]) {
			t.Errorf("%v: stderr %q does not name %s", args, res.stderr, args[0])
		}
	}
	h.set("INGEST_RUN_TRACK_BUDGET", "lots")
	if res := h.run("run", "--once"); res.code != 2 || !strings.Contains(res.stderr, "INGEST_RUN_TRACK_BUDGET") {
		t.Errorf("a bad INGEST_RUN_TRACK_BUDGET: want exit 2 naming it, got %s", res)
	}
}

// A daemon whose tracking passes last longer than a step of its stagger
// (an upstream slow to answer) still tracks at every slot of
// --track-every: each pass is credited to the slot it ran for, not to
// the one its last call fell in.
func TestDaemonTracksAtEverySlotWithLongPasses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(200, 50) // four batches of counts a pass
	h.fake.SetLatency(5 * time.Second)
	p := h.startFor(longTimeout, "run", "--every", "1m", "--regions", "US", "--track-for", "7d", "--track-every", "1m")
	db := openDB(t, h.db())
	slots := func() []int64 {
		rows, err := db.Query(`SELECT slot_ms FROM passes WHERE entry = 'track' AND slot_ms IS NOT NULL ORDER BY slot_ms`)
		if err != nil {
			return nil
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var ms int64
			if rows.Scan(&ms) == nil {
				out = append(out, ms)
			}
		}
		return out
	}
	if !waitFor(longTimeout, func() bool { return len(slots()) > 0 }) {
		t.Fatalf("no tracking pass credited to a slot within %s\n%s", longTimeout, p.out)
	}
	// Four slots of --track-every from the first, or a slot more for a
	// tracking that skips every other one to show it.
	const want = 4
	waitFor(want*time.Minute+30*time.Second, func() bool { return len(slots()) >= want })
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("daemon after SIGTERM: exited %v, code %d\n%s", ok, code, p.out)
	}
	var took []string
	rows, err := db.Query(`SELECT finished_ms - started_ms FROM passes WHERE entry = 'track'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ms int64
		if rows.Scan(&ms) == nil {
			took = append(took, (time.Duration(ms) * time.Millisecond).String())
		}
	}
	rows.Close()
	s := slots()
	if len(s) < 3 {
		t.Errorf("%d tracking passes credited to a slot in %s, want one a minute (passes took %v)", len(s), want*time.Minute, took)
	}
	for i := 1; i < len(s); i++ {
		if gap := time.Duration(s[i]-s[i-1]) * time.Millisecond; gap != time.Minute {
			t.Errorf("tracking's slots %s and %s are %s apart, want every slot of --track-every 1m (passes took %v)",
				time.UnixMilli(s[i-1]).UTC().Format(time.TimeOnly), time.UnixMilli(s[i]).UTC().Format(time.TimeOnly), gap, took)
		}
	}
}
