package jobs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// testKey is the API key the passes send (the fake counts its charges by
// it).
const testKey = passtest.Key

// rig is one pass's real parts (internal/rig/passtest): the fake upstream over
// HTTP, the real YouTube client, the embedded limiter and the store on a
// file.
type rig struct {
	up      *passtest.Upstream
	fake    *fakeyt.Fake
	db      *store.DB
	limiter *quota.SQLite
	client  *fetch.Client
	costs   *ingest.Costs
}

func newRig(t testing.TB, costsYAML string) *rig {
	t.Helper()
	c := costs.Default()
	if costsYAML != "" {
		var err error
		if c, err = costs.Parse("test-costs.yaml", []byte(costsYAML)); err != nil {
			t.Fatal(err)
		}
	}
	return rigOf(passtest.NewWith(t, storetest.Open(t), passtest.Options{Costs: c}))
}

// rigOf names up's parts as the tests use them.
func rigOf(up *passtest.Upstream) *rig {
	return &rig{up: up, fake: up.Fake, db: up.DB, limiter: up.Limiter, client: up.Client, costs: up.Costs}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func (r *rig) pass(region string) *jobs.Pass { return r.up.NewPass(region) }

// ledgerUnits sums the default pool over the ledger.
func (r *rig) ledgerUnits(t testing.TB) int64 {
	t.Helper()
	calls, err := ledger.New(r.db).Calls(context.Background(), "q", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range calls {
		n += c.Charges[0].Units
	}
	return n
}

func TestPassCompletesARegion(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	res := r.pass("GB").Run(context.Background())
	want := r.fake.ChartLength("GB")
	pages := (want + 49) / 50
	if res.Status != ingest.StatusCompleted || res.Videos != want || res.Pages != pages {
		t.Fatalf("got %s, %d videos in %d pages (%v); want completed, %d in %d", res.Status, res.Videos, res.Pages, res.Err, want, pages)
	}
	// One categories call and one call a page, and the upstream, the
	// ledger and the run agree on it.
	if got := r.fake.Charged(testKey); got != int64(pages+1) || res.TotalUnits() != got || r.ledgerUnits(t) != got {
		t.Fatalf("charged %d, run units %d, ledger %d; want all %d", got, res.TotalUnits(), r.ledgerUnits(t), pages+1)
	}
	// The categories call is the part of the units outside the pass's own
	// cost, as pacing measures a pass.
	if res.Daily[ingest.DefaultPool] != 1 || jobs.Sum(res.Daily) != 1 {
		t.Errorf("daily units %v, want the categories call's 1 in %s", res.Daily, ingest.DefaultPool)
	}
	// Categories are fetched at most once a day: a second pass skips them.
	res2 := r.pass("GB").Run(context.Background())
	if res2.TotalUnits() != int64(pages) || jobs.Sum(res2.Daily) != 0 {
		t.Fatalf("second pass units %d (daily %v), want %d (no categories call)", res2.TotalUnits(), res2.Daily, pages)
	}
}

func TestPassStopsWhenRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, `pools:
  default: {limit: 3, reserve: 0, window: 24h}
operations:
  videos.list: {default: 1}
  videoCategories.list: {default: 1}
`)
	res := r.pass("US").Run(context.Background())
	if res.Status != ingest.StatusStopped || res.RetryAt.IsZero() {
		t.Fatalf("got status %s retry %v (%v), want stopped with a retry time", res.Status, res.RetryAt, res.Err)
	}
	if res.Pages != 2 || res.Videos != 100 || r.fake.Charged(testKey) != 3 || r.ledgerUnits(t) != 3 {
		t.Fatalf("got %d pages %d videos, charged %d, ledger %d; want 2, 100, 3, 3",
			res.Pages, res.Videos, r.fake.Charged(testKey), r.ledgerUnits(t))
	}
}

func TestPassQuotaExhaustedBlocksEveryone(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		name  string
		shape fakeyt.QuotaShape
	}{
		{"quotaExceeded", fakeyt.QuotaExceeded},
		{"dailyLimitExceeded", fakeyt.DailyLimitExceeded},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, "")
			r.fake.ExhaustQuota(sh.shape)
			res := r.pass("DE").Run(context.Background())
			reset := ingest.UpstreamReset(time.Now())
			if res.Status != ingest.StatusStopped || !res.RetryAt.Equal(reset) {
				t.Fatalf("got %s retry %v (%v), want stopped until %v", res.Status, res.RetryAt, res.Err, reset)
			}
			before := r.fake.Requests()
			res = r.pass("FR").Run(context.Background())
			if res.Status != ingest.StatusStopped || r.fake.Requests() != before {
				t.Fatalf("second pass: %s with %d upstream requests, want stopped with none", res.Status, r.fake.Requests()-before)
			}
		})
	}
}

func TestPassRetriesA5xxBurst(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	r.fake.FailNext(3, 503)
	res := r.pass("AU").Run(context.Background())
	pages := (r.fake.ChartLength("AU") + 49) / 50
	if res.Status != ingest.StatusCompleted || res.Pages != pages {
		t.Fatalf("got %s with %d pages (%v), want completed with %d", res.Status, res.Pages, res.Err, pages)
	}
	if got := r.fake.Charged(testKey); got != int64(pages+1+3) || r.ledgerUnits(t) != got {
		t.Fatalf("charged %d, ledger %d; want both %d (failed attempts are charged too)", got, r.ledgerUnits(t), pages+4)
	}
}

func TestPassErrorClasses(t *testing.T) {
	t.Parallel()
	t.Run("no chart skips the region", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "")
		r.fake.NoChart("BR")
		res := r.pass("BR").Run(context.Background())
		if res.Status != ingest.StatusSkipped || res.Pages != 0 || res.Message == "" {
			t.Fatalf("got %s, %d pages, %q; want skipped, 0 pages and a note", res.Status, res.Pages, res.Message)
		}
	})
	t.Run("bad key fails loudly and fatally", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "")
		r.fake.BadKey(fakeyt.KeyInvalid)
		res := r.pass("US").Run(context.Background())
		if res.Status != ingest.StatusFailed || !res.Fatal || !errors.Is(res.Err, ingest.ErrBadKey) {
			t.Fatalf("got %s fatal=%v err=%v; want failed, fatal, ErrBadKey", res.Status, res.Fatal, res.Err)
		}
		if n := r.fake.Requests(); n != 1 {
			t.Fatalf("upstream saw %d requests, want 1 (no retry storm)", n)
		}
	})
	t.Run("dead endpoint is fatal", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "")
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + l.Addr().String() + "/"
		l.Close()
		p := r.pass("US")
		if p.Source, err = fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: dead, APIKey: testKey,
			Backoff: time.Millisecond, Logger: quiet()}); err != nil {
			t.Fatal(err)
		}
		res := p.Run(context.Background())
		if res.Status != ingest.StatusFailed || !res.Fatal || !jobs.Unreachable(res.Err) {
			t.Fatalf("got %s fatal=%v err=%v; want failed, fatal, unreachable", res.Status, res.Fatal, res.Err)
		}
	})
	t.Run("a 5xx is not unreachable", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "")
		r.fake.FailNext(4, 500)
		res := r.pass("US").Run(context.Background())
		if res.Status != ingest.StatusFailed || res.Fatal {
			t.Fatalf("got %s fatal=%v err=%v; want failed, not fatal: the upstream answered", res.Status, res.Fatal, res.Err)
		}
	})
	t.Run("invalid page token restarts once", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "")
		src := &invalidatingSource{Client: r.client, fake: r.fake}
		p := r.pass("IN")
		p.Source = src
		res := p.Run(context.Background())
		if res.Status != ingest.StatusCompleted || res.Videos < r.fake.ChartLength("IN") {
			t.Fatalf("got %s with %d videos (%v), want completed with at least %d", res.Status, res.Videos, res.Err, r.fake.ChartLength("IN"))
		}
	})
}

// invalidatingSource invalidates the fake's page tokens once, after the
// first page, as if the chart had changed under the pass.
type invalidatingSource struct {
	*fetch.Client
	fake *fakeyt.Fake
	once sync.Once
}

func (s *invalidatingSource) Chart(ctx context.Context, gate ingest.Gate, region, category, token string) (ingest.Page, error) {
	p, err := s.Client.Chart(ctx, gate, region, category, token)
	if token == "" {
		s.once.Do(s.fake.InvalidateTokens)
	}
	return p, err
}

func TestPassDrainsBetweenPages(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	drain := make(chan struct{})
	src := &drainingSource{Client: r.client, drain: drain}
	p := r.pass("US")
	p.Source, p.Drain = src, drain
	res := p.Run(context.Background())
	if res.Pages != 1 || res.Videos != 50 || res.Status != ingest.StatusInterrupted {
		t.Fatalf("got %s with %d pages %d videos, want interrupted with the page in flight stored (1 page, 50 videos)", res.Status, res.Pages, res.Videos)
	}
}

// drainingSource closes drain while the first page is in flight.
type drainingSource struct {
	*fetch.Client
	drain chan struct{}
	once  sync.Once
}

func (s *drainingSource) Chart(ctx context.Context, gate ingest.Gate, region, category, token string) (ingest.Page, error) {
	s.once.Do(func() { close(s.drain) })
	return s.Client.Chart(ctx, gate, region, category, token)
}

func TestRunnerNeverRunsARegionTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	r.fake.SetLatency(30 * time.Millisecond)
	runners := []*jobs.Runner{
		{Clock: clock.System, Passes: []*jobs.Pass{r.pass("CA")}, Locker: r.limiter, Logger: quiet()},
		{Clock: clock.System, Passes: []*jobs.Pass{r.pass("CA")}, Locker: r.limiter, Logger: quiet()},
	}
	var wg sync.WaitGroup
	results := make([][]jobs.PassResult, 2)
	for i, run := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = run.Once(context.Background())
		}()
	}
	wg.Wait()
	if ran := len(results[0]) + len(results[1]); ran != 1 {
		t.Fatalf("region CA ran %d times at once, want 1 (the other skipped)", ran)
	}
}

// panicSource stands in for a bug in a source.
type panicSource struct{ *fetch.Client }

func (panicSource) Chart(context.Context, ingest.Gate, string, string, string) (ingest.Page, error) {
	panic("boom")
}

func TestRunnerRecoversPanics(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	p := r.pass("GB")
	p.Source = panicSource{r.client}
	run := &jobs.Runner{Clock: clock.System, Passes: []*jobs.Pass{p, r.pass("AU")}, Locker: r.limiter, Logger: quiet()}
	got := run.Once(context.Background())
	if len(got) != 2 || got[0].Status != ingest.StatusFailed || got[1].Status != ingest.StatusCompleted {
		t.Fatalf("got %+v, want GB failed by the panic and AU completed", got)
	}
}

func TestPassRecordsAPanicAsFailed(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	p := r.pass("GB")
	p.Source = panicSource{r.client}
	res := p.Run(context.Background())
	last, err := r.db.LastRuns(context.Background(), ingest.Trending)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != ingest.StatusFailed || last["GB"].Status != ingest.StatusFailed {
		t.Fatalf("result %s, stored run %s; want both failed (not left running)", res.Status, last["GB"].Status)
	}
}
