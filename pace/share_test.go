package pace_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
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
	"github.com/ingestworks/ingest/wiring"
)

// inFlight is the ledger's recorder with a hook run before each call is
// written: the moment a call the limiter has counted is not yet in the
// ledger, as every call of a pass under way is for an instant.
type inFlight struct {
	quota.Recorder
	hook func(ingest.Call)
}

func (r inFlight) RecordCall(ctx context.Context, c ingest.Call) error {
	if r.hook != nil {
		r.hook(c)
	}
	return r.Recorder.RecordCall(ctx, c)
}

// A worker alone on its key never takes itself for two: with its tracking
// under way across 00:00 PT on two days running (a plan made while each of
// its calls is counted by the limiter and not yet in the ledger, the first
// day's calls leaving the window as the second day's are made, the
// limiter's clock a few seconds behind the worker's) and a restart in the
// middle of the second, no plan counts on half a pool, no line says
// another worker spends, and each region's own chart runs at every slot.
func TestLoneWorkerNeverHalves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := &world{now: time.Date(2026, 10, 30, 23, 0, 0, 0, pacific)}
	var err error
	if w.costs, err = costs.Load("costs.yaml", []byte(tightCosts)); err != nil {
		t.Fatal(err)
	}
	fake := fakeyt.New()
	fake.SetClock(w.clock)
	fake.SetChartShape(4, 1)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	w.db = storetest.Open(t)
	led, err := wiring.On(w.db, "test").QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := &inFlight{Recorder: led.Record}
	led.Record = rec
	behind := func() time.Time { return w.clock().Add(-3 * time.Second) }
	if w.limiter, err = quota.NewSQLite(wiring.Tables(ledger.New(w.db).Tables()), "q", w.costs, led, quota.NoUpstreamClock,
		clock.Func(behind), quota.Options{Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	if w.client, err = fetch.New(ctx, fetch.Options{Now: time.Now, Endpoint: srv.URL + "/", APIKey: "k", Backoff: time.Millisecond, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}

	codes := []string{"US", "GB"}
	var passes []*jobs.Pass
	var entries []jobs.Entry
	for i, c := range regions.Charts(codes...) {
		p := &jobs.Pass{Region: c.Code, Tier: c.Tier, Pages: c.Pages(), QuotaKey: "q", Costs: w.costs,
			Limiter: w, Source: w.client, Sink: w.db, Categories: w.db, Logger: quiet(), Clock: clock.Func(w.clock)}
		sl, err := c.Stagger(time.Hour, i, len(codes))
		if err != nil {
			t.Fatal(err)
		}
		e := p.Entry()
		e.Slots = sl
		passes, entries = append(passes, p), append(entries, e)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	newWorker := func() *pace.Pacer {
		return newPacer(t, pace.Config{Pools: w.costs.Pools, State: w.limiter.State, Entries: jobs.PaceEntries(entries, w.costs),
			Clock: clock.Func(w.clock), Logger: logger, Refresh: time.Hour, LastPass: w.db.LastStart,
			History: pace.FromRecords(ledger.New(w.db), "q", w.costs.Pools)})
	}
	pc := newWorker()
	var halved []string
	plan := func(why string) {
		st, err := pc.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range st.Pools {
			if st.Shared || ps.Share != 1 {
				halved = append(halved, fmt.Sprintf("%s at %s (%s's share %v)", why, w.clock().In(pacific).Format("Jan 2 15:04:05"), ps.Pool, ps.Share))
			}
		}
	}
	rec.hook = func(c ingest.Call) {
		if c.Op == "videos.batchGetStats" {
			plan("a plan with a tracking call in flight")
		}
	}
	// tracking: a call a second from 23:59:30 PT, across the day's turn
	track := func(day int, restartAt int) {
		from := time.Date(2026, 10, 30+day, 23, 59, 30, 0, pacific)
		for i := range 60 {
			w.set(from.Add(time.Duration(i) * time.Second))
			if i == restartAt {
				pc = newWorker()
			}
			if _, err := w.Take(ctx, ingest.Caller{}, "videos.batchGetStats"); err != nil {
				t.Fatal(err)
			}
		}
	}
	skipped := 0
	slots := func(from, to time.Time) {
		for now := from; now.Before(to); now = now.Add(time.Minute) {
			w.set(now)
			for i, p := range passes {
				if !entries[i].Slots.Next(now.Add(-time.Nanosecond)).Equal(now) {
					continue
				}
				if !pc.Due(ctx, p.Chart(), now) {
					skipped++
					continue
				}
				res := p.RunFor(ctx, now)
				pc.Ran(p.Chart(), res.Units, res.Daily, res.Status)
			}
		}
	}
	base := time.Date(2026, 10, 30, 23, 0, 0, 0, pacific)
	slots(base, base.Add(59*time.Minute))
	track(0, -1)
	slots(base.Add(61*time.Minute), base.Add(24*time.Hour+59*time.Minute))
	track(1, 30)
	slots(base.Add(24*time.Hour+61*time.Minute), base.Add(27*time.Hour))
	plan("the last plan")
	if len(halved) > 0 {
		t.Errorf("a lone worker counted on half of a pool %d times, first: %s", len(halved), halved[0])
	}
	if strings.Contains(logs.String(), "other databases spend") {
		t.Errorf("the log says another worker spends:\n%s", logs.String())
	}
	if skipped > 0 {
		t.Errorf("%d slots of the regions' own charts skipped, want none", skipped)
	}
}

// Workers of other databases that spend in a pool's window, as the
// limiter counts them, share it with this one: each plan counts on 1/N of
// the pool, N this worker and the others, from the plan that sees them to
// the plan that no longer does, and one line says each change: the pool,
// the workers and the share.
func TestOtherWorkersShareThePool(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: 24 * time.Hour}
	now, others := t0, 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Limit: 1000, Used: 100, Remaining: 900, Others: others}}, nil
	}
	var logs bytes.Buffer
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, time.Hour, 4)},
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var shares []float64
	for i, n := range []int{0, 2, 2, 1, 0} {
		now, others = t0.Add(time.Duration(i)*time.Minute), n
		st, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Pools) != 1 || st.Pools[0].Workers != n+1 || st.Shared != (n > 0) {
			t.Errorf("plan %d: pools %+v, shared %v; want %d workers", i, st.Pools, st.Shared, n+1)
		}
		shares = append(shares, st.Pools[0].Share)
	}
	if want := []float64{1, 1.0 / 3, 1.0 / 3, 0.5, 1}; !slices.Equal(shares, want) {
		t.Errorf("shares at each plan %v, want %v", shares, want)
	}
	for _, line := range []string{"pool=default workers=3 share=0.3333333333333333", "pool=default workers=2 share=0.5", "counting on the whole pool"} {
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("%d lines with %q, want one:\n%s", n, line, logs.String())
		}
	}
}

// A look (the daemon's, once a period between the slots) reads the
// limiter once and makes the plan again only when a pool's workers are
// not those the plan counted: a worker joining is counted at the look
// after its first spend, one leaving at the look after its last left the
// window, each said in one line, and a look that finds the same workers
// makes no plan. Before the first plan a look reads nothing.
func TestLookReplansWhenTheWorkersChange(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: 24 * time.Hour}
	now, others, reads, plans := t0, 0, 0, 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		reads++
		return []ingest.PoolState{{Pool: "default", Limit: 1000, Used: 100, Remaining: 900, Others: others}}, nil
	}
	var logs bytes.Buffer
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, time.Hour, 4)},
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Refresh: time.Hour, Publish: func(context.Context, pace.Status) { plans++ }})
	ctx := context.Background()
	p.Look(ctx)
	if reads != 0 || plans != 0 {
		t.Fatalf("a look before the first plan read the limiter %d times and planned %d, want neither", reads, plans)
	}
	p.Due(ctx, "US", t0)
	for i, step := range []struct {
		others int
		plans  int
		share  float64
	}{{0, 1, 1}, {1, 2, 0.5}, {1, 2, 0.5}, {2, 3, 1.0 / 3}, {0, 4, 1}, {0, 4, 1}} {
		now, others = t0.Add(time.Duration(i+1)*time.Minute), step.others
		reads = 0
		p.Look(ctx)
		st := p.Status()
		if reads != 1 || plans != step.plans || st.Pools[0].Share != step.share {
			t.Errorf("look %d (%d others): %d reads, %d plans in all, share %.3f; want 1 read, %d plans, share %.3f",
				i, step.others, reads, plans, st.Pools[0].Share, step.plans, step.share)
		}
	}
	for _, line := range []string{"pool=default workers=2 share=0.5", "pool=default workers=3 share=0.3333333333333333", "counting on the whole pool"} {
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("%d lines with %q, want one:\n%s", n, line, logs.String())
		}
	}
}
