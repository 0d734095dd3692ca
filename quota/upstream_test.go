package quota_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

const upstreamKey = "upstream-clock-test-key"

// fakeUpstream serves the fake YouTube Data API over HTTP and returns the
// real client on it.
func fakeUpstream(t *testing.T) (*fakeyt.Fake, *fetch.Client) {
	t.Helper()
	fake := fakeyt.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: srv.URL, APIKey: upstreamKey, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// bootAt is a boot clock of boot id, up for an hour when the test began.
func bootAt(id string) func() (string, time.Duration, bool) {
	start := time.Now()
	return func() (string, time.Duration, bool) { return id, time.Since(start) + time.Hour, true }
}

// worker is a host's clock, its boot and the upstream's clock as it keeps it.
type worker struct {
	off  time.Duration
	boot func() (string, time.Duration, bool)
	up   *quota.UpstreamClock
}

func newWorker(c *fetch.Client, off time.Duration, boot string) worker {
	w := worker{off: off, boot: bootAt(boot)}
	w.up = quota.NewUpstreamClock(clock.Func(func() time.Time { return time.Now().Add(off) }),
		quota.UpstreamOptions{Ask: c.UpstreamTime, Uptime: w.boot})
	return w
}

// options are a limiter's on the worker: its clock, and its Redis's or
// PostgreSQL's, off by w.off.
func (w worker) options(t *testing.T, key string) limOpts {
	return limOpts{QuotaKey: key, Costs: faultCosts(t, true), Logger: quiet, Timeout: 2 * time.Second,
		ClockOffset: w.off, Clock: clock.Func(func() time.Time { return time.Now().Add(w.off) }), Uptime: w.boot, Upstream: w.up}
}

// takeAll takes n calls and counts those admitted and those refused as
// ErrClockSkew; any other error fails.
func takeAll(t *testing.T, l limiter, n int) (admitted, skewed int) {
	t.Helper()
	for range n {
		d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
		switch {
		case errors.Is(err, quota.ErrClockSkew):
			if !errors.Is(err, quota.ErrUnavailable) {
				t.Fatalf("a clock refusal that is not ErrUnavailable: %v", err)
			}
			skewed++
		case err != nil:
			t.Fatalf("take: %v", err)
		case d.Allowed:
			admitted++
		}
	}
	return admitted, skewed
}

// testUpstreamClock: a host on time spends 60 of 100; then a new host (a
// boot no reference knows) whose clock, and its limiter's, is 25 hours
// ahead decides first. It asks the upstream's time (a request that carries
// no key and is charged nothing), finds its clock a day off, and decides
// nothing; the host on time then spends the 40 left, no more. When the
// upstream's own clock (its Date header) reads 25 hours ahead too, the same
// host is believed: the upstream's day is the upstream's clock's day.
func testUpstreamClock(t *testing.T, open func(t *testing.T, o limOpts) limiter) {
	key := quotaKey(t)
	fake, client := fakeUpstream(t)
	good := open(t, newWorker(client, 0, "boot-good").options(t, key))
	before, _ := takeAll(t, good, 60)
	ahead := newWorker(client, 25*time.Hour, "boot-new")
	during, refused := takeAll(t, open(t, ahead.options(t, key)), 100)
	seen, ok, err := ahead.up.Last(context.Background())
	if err != nil || !ok {
		t.Fatalf("the new host's reading of the upstream's clock: %v, %v", ok, err)
	}
	after, _ := takeAll(t, good, 100)
	t.Logf("a new host 25 h ahead decides first: %d before, %d admitted and %d refused by the upstream's clock (skew %s) during, %d after: %d/100; the upstream charged %d",
		before, during, refused, seen.Skew().Round(time.Second), after, before+during+after, fake.Charged(upstreamKey))
	switch {
	case during != 0 || refused != 100:
		t.Fatalf("the host 25 h ahead: %d admitted, %d refused as a clock that disagrees; want 0 and 100", during, refused)
	case before+during+after != 100:
		t.Fatalf("admitted %d in all, want 100", before+during+after)
	case seen.Skew() > -25*time.Hour+time.Minute || seen.Skew() < -25*time.Hour-time.Minute:
		t.Fatalf("skew of the host 25 h ahead against the upstream: %s, want about -25h", seen.Skew())
	case fake.Charged(upstreamKey) != 0:
		t.Fatalf("asking the upstream's time was charged %d units to the key; want 0", fake.Charged(upstreamKey))
	}
	fake.SetClock(func() time.Time { return time.Now().Add(25 * time.Hour) })
	believed, refused := takeAll(t, open(t, newWorker(client, 25*time.Hour, "boot-third").options(t, key)), 10)
	t.Logf("the upstream's Date 25 h ahead too: a host 25 h ahead admitted %d, refused %d", believed, refused)
	if believed == 0 || refused != 0 {
		t.Fatalf("with the upstream's clock 25 h ahead as well, the host 25 h ahead: %d admitted, %d refused; want it believed", believed, refused)
	}
}

func TestFaultUpstreamClockRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testUpstreamClock(t, func(t *testing.T, o limOpts) limiter {
		l, err := openRedis(t, redis.UniversalClient(newClient(t, srv.Addr)), o)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func TestFaultUpstreamClockSQLite(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/ledger.db"
	testUpstreamClock(t, func(t *testing.T, o limOpts) limiter {
		l, err := newSQLite(openDB(t, path, false), o)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func TestFaultUpstreamClockPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	testUpstreamClock(t, func(t *testing.T, o limOpts) limiter { return pgLimiter(t, url, o) })
}
