package pace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// cotenantCosts: a default pool of a few units over two minutes, so that
// a co-tenant's unpaced runs and the daemon's charts fill it many times
// over.
const cotenantCosts = `pools:
  default: {limit: 40, reserve: 0, window: 2m}
  search:  {limit: 100, reserve: 0, window: 24h}
  stats:   {limit: 10000, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`

// cotenant is a database's daemon of regions' own charts on their
// staggered slots beside an unpaced co-tenant on the same database (a cron's
// run --once of charts the daemon does not run): real passes against the
// fake upstream, the embedded limiter, the ledger and runs on a file, on a
// clock the test moves.
type cotenant struct {
	w       *world
	fake    *fakeyt.Fake
	pc      *pace.Pacer
	passes  []*jobs.Pass
	slots   []regions.Slots
	load    []*jobs.Pass // the co-tenant's charts
	every   time.Duration
	loadAt  time.Duration // the co-tenant's cadence
	done    map[string][]time.Time
	plans   []pace.Status
	loadRan []time.Time
}

func newCotenant(t *testing.T, codes, load []string, every, loadEvery time.Duration) *cotenant {
	t.Helper()
	w, fake := newWorldOf(t, cotenantCosts, start)
	c := &cotenant{w: w, fake: fake, every: every, loadAt: loadEvery, done: map[string][]time.Time{}}
	pass := func(ch regions.Chart) *jobs.Pass {
		return &jobs.Pass{Region: ch.Code, Tier: ch.Tier, Pages: ch.Pages(), QuotaKey: "q", Costs: w.costs, Limiter: w,
			Source: w.client, Sink: w.db, Categories: w.db, Logger: quiet(), Clock: clock.Func(w.clock)}
	}
	var entries []jobs.Entry
	for i, ch := range regions.Charts(codes...) {
		p := pass(ch)
		sl, err := ch.Stagger(every, i, len(codes))
		if err != nil {
			t.Fatal(err)
		}
		e := p.Entry()
		e.Slots = sl
		c.passes, c.slots, entries = append(c.passes, p), append(c.slots, sl), append(entries, e)
	}
	for _, ch := range regions.Charts(load...) {
		c.load = append(c.load, pass(ch))
	}
	c.pc = newPacer(t, pace.Config{Pools: w.costs.Pools, State: w.limiter.State, Entries: jobs.PaceEntries(entries, w.costs),
		History: pace.FromRecords(ledger.New(w.db), "q", w.costs.Pools), LastPass: w.db.LastCompletedStart,
		Daily: jobs.DailyCost(w.costs, codes), Clock: clock.Func(w.clock), Logger: quiet(), Refresh: every,
		Publish: func(_ context.Context, st pace.Status) { c.plans = append(c.plans, st) }})
	return c
}

// run walks the clock from from to to on the stagger's grain: the
// co-tenant's charts every loadAt, spread over it, whatever the pool
// holds; the daemon's look once a period; each chart at its slots when
// the pacer says it is due.
func (c *cotenant) run(t *testing.T, from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	for now := from; now.Before(to); now = c.next(now) {
		c.w.set(now)
		for k, p := range c.load {
			if now.Sub(start)%c.loadAt == time.Duration(k)*c.loadAt/time.Duration(len(c.load)) {
				p.RunFor(ctx, time.Time{})
				c.loadRan = append(c.loadRan, now)
			}
		}
		if now.Sub(start)%c.every == c.every/2 {
			c.pc.Look(ctx)
		}
		for i, p := range c.passes {
			if !c.slots[i].Prev(now).Equal(now) || !c.pc.Due(ctx, p.Chart(), now) {
				continue
			}
			res := p.RunFor(ctx, now)
			if res.Status == ingest.StatusFailed {
				t.Fatalf("%s at %s: %v", p.Chart(), now.Sub(start), res.Err)
			}
			c.pc.Ran(p.Chart(), res.Units, res.Daily, res.Status)
			if res.Status == ingest.StatusCompleted {
				c.done[p.Chart()] = append(c.done[p.Chart()], now)
			}
		}
	}
}

// next is the first moment after now that run acts at: a slot of one of
// the daemon's charts, a run of the co-tenant's, or the daemon's look.
func (c *cotenant) next(now time.Time) time.Time {
	after := func(period, offset time.Duration) time.Time {
		d := now.Sub(start) - offset
		k := d / period
		if d < 0 && d%period != 0 {
			k--
		}
		return start.Add((k+1)*period + offset)
	}
	next := after(c.every, c.every/2)
	for k := range c.load {
		next = earliest(next, after(c.loadAt, time.Duration(k)*c.loadAt/time.Duration(len(c.load))))
	}
	for _, sl := range c.slots {
		next = earliest(next, sl.Next(now))
	}
	return next
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// spent is the default pool's units the ledger admitted in [from, to),
// for the daemon's charts and for the co-tenant's.
func (c *cotenant) spent(t *testing.T, from, to time.Time) (daemon, load int64) {
	t.Helper()
	calls, err := ledger.New(c.w.db).Calls(context.Background(), "q", from.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	loads := map[string]bool{}
	for _, p := range c.load {
		loads[p.Region] = true
	}
	for _, call := range calls {
		if call.At.Before(from) || !call.At.Before(to) {
			continue
		}
		for _, ch := range call.Charges {
			if ch.Pool != ingest.DefaultPool {
				continue
			}
			if loads[call.Region] {
				load += ch.Units
			} else {
				daemon += ch.Units
			}
		}
	}
	return daemon, load
}

// A co-tenant on the daemon's database that spends, unpaced, a fixed
// share of a short-window pool every window (as the partition lab's load
// does) leaves the rest to the daemon's charts: once the co-tenant has
// spent a window, every plan runs them at the cadence that rest sustains
// (their round's cost over what the co-tenant leaves a window), never
// faster (the co-tenant's share is not the charts') and never more than a
// slot slower, let alone at the staleness bound because the window is full
// the moment the plan is made; and no chart waits longer than that cadence
// and a window for a pass.
func TestCotenantLeavesTheRestToThePlan(t *testing.T) {
	t.Parallel()
	const every = time.Minute
	c := newCotenant(t, []string{"NL", "SE", "PL", "TR", "MX", "JP", "KR", "ES"}, []string{"US", "IN"}, every, time.Minute)
	settled, end := start.Add(2*window2m), start.Add(30*time.Minute)
	c.run(t, start, end)

	daemon, load := c.spent(t, settled, end)
	windows := float64(end.Sub(settled)) / float64(window2m)
	capacity := float64(c.w.costs.Pools[0].Capacity())
	perWindow := float64(load) / windows
	if perWindow < 0.4*capacity || perWindow > 0.6*capacity {
		t.Fatalf("the co-tenant spent %.1f units a window of a pool of %.0f: the rig does not take 40-60%% of it", perWindow, capacity)
	}
	var round float64
	for _, p := range c.passes {
		round += float64(c.pages(t, p.Region))
	}
	sustains := time.Duration(round / (capacity - perWindow) * float64(window2m))
	type planned struct {
		at    time.Duration
		chart string
		every time.Duration
	}
	var slowest, fastest *planned
	for _, st := range c.plans {
		for _, e := range st.Entries {
			if st.At.Before(settled) {
				continue
			}
			p := &planned{st.At.Sub(start), e.Name, e.Every}
			if slowest == nil || e.Every > slowest.every {
				slowest = p
			}
			if fastest == nil || e.Every < fastest.every {
				fastest = p
			}
		}
	}
	if slowest == nil {
		t.Fatal("no plan once the co-tenant had spent a window")
	}
	if slowest.every > sustains+every {
		t.Errorf("the plan at %s runs %s every %s, where what the co-tenant leaves of the pool sustains every %s (a slot of %s more allowed)",
			slowest.at, slowest.chart, fmtEvery(slowest.every), sustains.Round(time.Second), every)
	}
	if fastest.every < sustains {
		t.Errorf("the plan at %s runs %s every %s, where what the co-tenant leaves of the pool sustains every %s: it counts on the co-tenant's share",
			fastest.at, fastest.chart, fmtEvery(fastest.every), sustains.Round(time.Second))
	}
	var worst time.Duration
	for _, p := range c.passes {
		at := []time.Time{settled}
		for _, x := range c.done[p.Chart()] {
			if x.After(settled) {
				at = append(at, x)
			}
		}
		for k := 1; k <= len(at); k++ {
			to := end
			if k < len(at) {
				to = at[k]
			}
			if gap := to.Sub(at[k-1]); gap > worst {
				worst = gap
				if gap > sustains+window2m {
					t.Errorf("%s went %s without a pass from %s, over the cadence the rest of the pool sustains (%s) and a window (a pass that finds no room waits for it)",
						p.Chart(), gap, at[k-1].Sub(start), sustains.Round(time.Second))
				}
			}
		}
	}
	t.Logf("beside the co-tenant's %.1f units a window the daemon's charts (a round of %.0f units) spent %.1f a window, the rest sustaining a round every %s: plans every %s to %s, the longest gap between a chart's passes since %s: %s",
		perWindow, round, float64(daemon)/windows, sustains.Round(time.Second), fmtEvery(fastest.every), fmtEvery(slowest.every), settled.Sub(start), worst)
}

// pages is how many pages of the fake upstream's chart of region a pass
// reads, a unit each, asked under a key of the test's own.
func (c *cotenant) pages(t *testing.T, region string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	c.fake.ServeHTTP(rec, httptest.NewRequest("GET", "/youtube/v3/videos?part=id&chart=mostPopular&maxResults=50&key=pages&regionCode="+region, nil))
	var page struct {
		PageInfo struct{ TotalResults int } `json:"pageInfo"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.PageInfo.TotalResults == 0 {
		t.Fatalf("the upstream's chart of %s: %v: %s", region, err, rec.Body.String())
	}
	return min((page.PageInfo.TotalResults+regions.PageSize-1)/regions.PageSize, regions.MaxDepth/regions.PageSize)
}

// window2m is cotenantCosts's default window.
const window2m = 2 * time.Minute

func fmtEvery(d time.Duration) string {
	if d == pace.Never {
		return "never"
	}
	return fmt.Sprint(d.Round(time.Second))
}
