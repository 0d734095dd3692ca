package pace_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// The short-window tests run real passes (the YouTube client against the
// fake upstream over HTTP, the embedded limiter, the store on a file) on
// a clock the test moves: the limiter, the passes and the pacer all read
// it, and the daemons' staggered slots are walked in order, so no figure
// depends on the machine's speed.

// windowCosts: a pool of 120 units over an hour, with no day, so that the
// window is the plan's horizon.
const windowCosts = `pools:
  default: {limit: 120, reserve: 0, window: 1h}
  search:  {limit: 100, reserve: 0, window: 1h}
  stats:   {limit: 100, reserve: 0, window: 1h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`

const (
	window = time.Hour
	floor  = 2 * time.Minute // --every
)

var start = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// world is what the daemons share: the clock, the upstream, the store, the
// limiter, and what the limiter refused.
type world struct {
	mu      sync.Mutex
	now     time.Time
	costs   *ingest.Costs
	db      *store.DB
	limiter *quota.SQLite
	client  *fetch.Client
	refused int
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) set(t time.Time) {
	w.mu.Lock()
	w.now = t
	w.mu.Unlock()
}

// Take counts the limiter's refusals.
func (w *world) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	d, err := w.limiter.Take(ctx, by, op)
	if err == nil && !d.Allowed {
		w.mu.Lock()
		w.refused++
		w.mu.Unlock()
	}
	return d, err
}

func (w *world) Block(ctx context.Context, pool, op string) (time.Time, error) {
	return w.limiter.Block(ctx, pool, op)
}

func (w *world) Refund(ctx context.Context, call ingest.Call) error {
	return w.limiter.Refund(ctx, call)
}

// newWorld is a world of the short window whose charts are one page of
// one video: a pass costs a unit (and the category names a second, once a
// day).
func newWorld(t *testing.T) *world {
	t.Helper()
	w, fake := newWorldOf(t, windowCosts, start)
	fake.SetChartShape(1, 1)
	return w
}

// newWorldOf is a world of the costs file text whose clock starts at at,
// with its fake upstream.
func newWorldOf(t *testing.T, costsFile string, at time.Time) (*world, *fakeyt.Fake) {
	t.Helper()
	return newWorldLog(t, costsFile, at, true)
}

// newWorldLog is newWorldOf with the limiter's log on the file (onFile) or
// in memory (memLog).
func newWorldLog(t *testing.T, costsFile string, at time.Time, onFile bool) (*world, *fakeyt.Fake) {
	t.Helper()
	ctx := context.Background()
	w := &world{now: at}
	var err error
	if w.costs, err = costs.Load("costs.yaml", []byte(costsFile)); err != nil {
		t.Fatal(err)
	}
	fake := fakeyt.New()
	fake.SetClock(w.clock)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	w.db = storetest.Open(t)
	led, err := wiring.On(w.db, "test").QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tables := wiring.Tables(ledger.New(w.db).Tables())
	if !onFile {
		tables = memTables(tables)
	}
	if w.limiter, err = quota.NewSQLite(tables, "q", w.costs, led, quota.NoUpstreamClock, clock.Func(w.clock), quota.Options{Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	if w.client, err = fetch.New(ctx, fetch.Options{Now: time.Now, Endpoint: srv.URL + "/", APIKey: "k", Backoff: time.Millisecond, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	return w, fake
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// daemon is one worker's charts on their staggered slots, paced or fixed.
type daemon struct {
	passes []*jobs.Pass
	slots  []jobs.Schedule
	pacer  *pace.Pacer // nil: the fixed cadence
	runs   map[string][]time.Time
	done   map[string]int // completed passes
}

// newDaemon schedules each region's own chart (priority 0) and its music
// chart (priority 1), staggered as the daemon staggers them, every floor.
func newDaemon(t *testing.T, w *world, codes []string, paced bool) *daemon {
	return newDaemonEvery(t, w, codes, paced, floor, true)
}

// newDaemonEvery is newDaemon at floor; with history its pacer reads the
// ledger at every plan, without it counts only what it saw run.
func newDaemonEvery(t *testing.T, w *world, codes []string, paced bool, floor time.Duration, history bool) *daemon {
	t.Helper()
	d := &daemon{runs: map[string][]time.Time{}, done: map[string]int{}}
	var entries []pace.Entry
	for _, code := range codes {
		for prio, cat := range []string{"", "10"} {
			p := &jobs.Pass{Region: code, Category: cat, QuotaKey: "q", Costs: w.costs, Limiter: w,
				Source: w.client, Sink: w.db, Categories: w.db, Logger: quiet(), Clock: clock.Func(w.clock)}
			d.passes = append(d.passes, p)
			entries = append(entries, pace.Entry{Name: p.Chart(), Priority: prio, Floor: floor,
				Cost: map[string]float64{ingest.DefaultPool: 1}})
		}
	}
	for i := range d.passes {
		s, err := regions.Stagger(floor, i, len(d.passes))
		if err != nil {
			t.Fatal(err)
		}
		d.slots = append(d.slots, s)
	}
	if paced {
		c := pace.Config{Pools: w.costs.Pools, State: w.limiter.State, Entries: entries, Clock: clock.Func(w.clock), Logger: quiet(), Refresh: floor}
		if history {
			c.History = pace.FromRecords(ledger.New(w.db), "q", w.costs.Pools)
		}
		d.pacer = newPacer(t, c)
	}
	return d
}

// step is the stagger's grid: every slot of every chart falls on it.
func step(n int) time.Duration { return floor / time.Duration(max(n, len(regions.Default))) }

// run walks the clock from from to to (excluded), running each daemon's
// charts at their slots when the pacer (if any) says they are due.
func run(t *testing.T, w *world, from, to time.Time, ds ...*daemon) {
	t.Helper()
	ctx := context.Background()
	for now := from; now.Before(to); now = now.Add(step(6)) {
		w.set(now)
		for _, d := range ds {
			for i, p := range d.passes {
				if !d.slots[i].Prev(now).Equal(now) {
					continue
				}
				if d.pacer != nil && !d.pacer.Due(ctx, p.Chart(), now) {
					continue
				}
				res := p.Run(ctx)
				if res.Status == ingest.StatusFailed {
					t.Fatalf("%s at %s: %v", p.Chart(), now.Sub(start), res.Err)
				}
				if d.pacer != nil {
					d.pacer.Ran(p.Chart(), res.Units, res.Daily, res.Status)
				}
				d.runs[p.Chart()] = append(d.runs[p.Chart()], now)
				if res.Status == ingest.StatusCompleted {
					d.done[p.Chart()]++
				}
			}
		}
	}
}

// thirds is the default pool's units admitted in each third of the window
// from from, by the ledger.
func thirds(t *testing.T, w *world, from time.Time) [3]int64 {
	t.Helper()
	calls, err := ledger.New(w.db).Calls(context.Background(), "q", from.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out [3]int64
	for _, c := range calls {
		if k := int(c.At.Sub(from) / (window / 3)); k >= 0 && k < 3 {
			for _, ch := range c.Charges {
				if ch.Pool == ingest.DefaultPool {
					out[k] += ch.Units
				}
			}
		}
	}
	return out
}

// ran counts each chart's passes started in [from, to), completed or not.
func (d *daemon) ran(from, to time.Time) map[string]int {
	out := map[string]int{}
	for _, p := range d.passes {
		out[p.Chart()] = 0
		for _, at := range d.runs[p.Chart()] {
			if !at.Before(from) && at.Before(to) {
				out[p.Chart()]++
			}
		}
	}
	return out
}

func table(counts map[string]int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, counts[k])
	}
	return b.String()
}

var codes = []string{"US", "GB", "DE"}

// The fixed cadence (six charts every 2 minutes, 180 units an hour)
// empties the pool before the window's end and is refused until its calls
// leave the window; paced, the same charts spend each third's share, the
// limiter refuses nothing, every chart runs in every window, and the
// regions' own charts (90 units an hour, which the pool holds) run at
// every slot, more often than their category charts.
func TestShortWindow(t *testing.T) {
	t.Parallel()
	fixedW := newWorld(t)
	fixed := newDaemon(t, fixedW, codes, false)
	run(t, fixedW, start, start.Add(window), fixed)
	fixedThirds := thirds(t, fixedW, start)
	if fixedThirds[0]+fixedThirds[1] < fixedW.costs.Pools[0].Capacity() || fixedW.refused == 0 {
		t.Fatalf("fixed: thirds %v with %d refusals: the test's pool is not emptied in the first two thirds", fixedThirds, fixedW.refused)
	}

	w := newWorld(t)
	d := newDaemon(t, w, codes, true)
	run(t, w, start, start.Add(2*window), d)
	capacity := w.costs.Pools[0].Capacity()
	for k, from := range []time.Time{start, start.Add(window)} {
		got := thirds(t, w, from)
		for _, u := range got {
			if third := float64(capacity) / 3; float64(u) < 0.75*third || float64(u) > 1.25*third {
				t.Errorf("window %d: units by third %v, want each within 25%% of %.0f", k+1, got, third)
				break
			}
		}
		counts := d.ran(from, from.Add(window))
		for chart, n := range counts {
			if n == 0 {
				t.Errorf("window %d: %s never ran (%s)", k+1, chart, table(counts))
			}
		}
		minOwn, maxCat := 1<<30, 0
		for chart, n := range counts {
			if strings.Contains(chart, "/") {
				maxCat = max(maxCat, n)
			} else {
				minOwn = min(minOwn, n)
			}
		}
		if minOwn <= maxCat {
			t.Errorf("window %d: a region's own chart ran %d times, a category's %d: want the own charts most often (%s)", k+1, minOwn, maxCat, table(counts))
		}
		t.Logf("window %d paced: units by third %v; passes:%s", k+1, got, table(counts))
	}
	if w.refused != 0 {
		t.Errorf("paced: the limiter refused %d calls, want none", w.refused)
	}
	t.Logf("fixed: units by third %v, %d refusals; passes:%s; of them completed:%s", fixedThirds, fixedW.refused,
		table(fixed.ran(start, start.Add(window))), table(fixed.done))
}

// A second daemon on the same key, with charts of its own, joins halfway:
// both re-plan to share the pool, and the limiter still refuses nothing.
// The second daemon is another ledger: its pacer reads no history, so the
// first one's spend is another worker's to it, and its own to the first.
func TestShortWindowJoin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const every = 4 * time.Minute
	a := newDaemonEvery(t, w, codes, true, every, false)
	half := start.Add(window / 2)
	run(t, w, start, half, a)
	before := budget(a.pacer)
	b := newDaemonEvery(t, w, []string{"FR", "JP"}, true, every, false)
	run(t, w, half, start.Add(2*window), a, b)
	after := budget(a.pacer)
	if after >= before {
		t.Errorf("the first daemon's budget was %.1f before the second joined and %.1f after: it did not re-plan for the newcomer", before, after)
	}
	if got := budget(b.pacer); got <= 0 {
		t.Errorf("the newcomer's budget is %.1f: it was left nothing", got)
	}
	if w.refused != 0 {
		t.Errorf("the limiter refused %d calls, want none", w.refused)
	}
	for _, d := range []*daemon{a, b} {
		for chart, n := range d.ran(half, start.Add(2*window)) {
			if n == 0 {
				t.Errorf("%s never ran after the join", chart)
			}
		}
	}
	t.Logf("join: budget of the first %.1f -> %.1f, of the newcomer %.1f; units by third of window 2 %v; first:%s; newcomer:%s",
		before, after, budget(b.pacer), thirds(t, w, start.Add(window)),
		table(a.ran(half, start.Add(2*window))), table(b.ran(half, start.Add(2*window))))
}

func budget(p *pace.Pacer) float64 {
	for _, ps := range p.Status().Pools {
		if ps.Pool == ingest.DefaultPool {
			return ps.Budget
		}
	}
	return -1
}
