package quota_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// admission is one admitted call as the test saw it: the real time before
// the call was asked and after its answer came.
type admission struct{ from, to time.Time }

// mostInRealWindow is the largest number of admissions certainly within one
// trailing window of real time: those whose whole call, ask to answer, lies
// inside it. It never counts more than the limiter admitted, whatever the
// calls' latency.
func mostInRealWindow(as []admission, window time.Duration) int {
	sort.Slice(as, func(i, j int) bool { return as[i].from.Before(as[j].from) })
	most := 0
	for i, a := range as {
		n := 0
		for _, b := range as[i:] {
			if b.to.Sub(a.from) < window {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// smallCosts is a costs file of one pool, default, with the settings
// given, and one operation of one unit.
func smallCosts(t testing.TB, settings string) *ingest.Costs {
	t.Helper()
	c, err := costs.Parse("small costs", []byte("pools:\n  default: {"+settings+"}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testClockBehindRealTime: the limiter's clock (and the worker's) is an
// hour behind for three seconds, then corrected. The calls taken while it
// was behind were taken in real time, and must stay in the window a whole
// window of real time: counted by real time, no trailing 4 s holds more than
// the pool's 20.
func testClockBehindRealTime(t *testing.T, h harness) {
	const limit, window = 20, 4 * time.Second
	key, costs := quotaKey(t), smallCosts(t, "limit: 20, window: 4s")
	l := h.open(t, key, costs)
	back := h.at(t, key, costs, -time.Hour)
	var as []admission
	call := func(l limiter) {
		from := time.Now()
		d, err := l.Spend(context.Background(), ingest.Caller{}, "test", []ingest.Charge{{Pool: "default", Units: 1}})
		if err != nil {
			t.Fatalf("spend: %v", err)
		}
		if d.Allowed {
			as = append(as, admission{from, time.Now()})
		}
	}
	call(l)
	behind := time.Now()
	for time.Since(behind) < 3*time.Second { // the pool's room, spread over the three seconds
		call(back)
		time.Sleep(3 * time.Second / limit)
	}
	corrected := time.Now()
	for i := 0; i < 500 && time.Since(corrected) < 5*time.Second; i++ {
		call(l)
		time.Sleep(10 * time.Millisecond)
	}
	most := mostInRealWindow(as, window)
	t.Logf("clock an hour behind for 3 s, then corrected: %d admitted in 8 s; counted by real time, at most %d/%d in a %s window",
		len(as), most, limit, window)
	if most > limit {
		t.Fatalf("counted by real time, %d admitted within one %s window; want at most %d", most, window, limit)
	}
}

func TestFaultClockBehindRealTimeRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testClockBehindRealTime(t, redisHarness(func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr) }))
}

func TestFaultClockBehindRealTimeSQLite(t *testing.T) {
	t.Parallel()
	testClockBehindRealTime(t, sqliteHarness(t.TempDir()))
}

func TestFaultClockBehindRealTimePostgres(t *testing.T) {
	t.Parallel()
	testClockBehindRealTime(t, pgHarness())
}

// testClockBehindThenCorrected: a worker's (and its limiter's) clock is an
// hour behind for a few calls, then corrected. Every decision's time is at
// least the last one's, ids only grow, and the pool admits its capacity and
// no more.
func testClockBehindThenCorrected(t *testing.T, h harness) {
	key, costs := quotaKey(t), faultCosts(t, false)
	l := h.open(t, key, costs)
	back := h.at(t, key, costs, -time.Hour)
	var last ingest.Decision
	admitted := 0
	check := func(who string, d ingest.Decision) {
		t.Helper()
		if !d.Allowed {
			return
		}
		admitted++
		if last.ID != "" && (d.At.Before(last.At) || !idLess(last.ID, d.ID)) {
			t.Fatalf("%s decided %s at %s after %s at %s: the clock went back", who, d.ID, d.At, last.ID, last.At)
		}
		last = d
	}
	for range 50 {
		check("on time", spend(t, l, 1))
	}
	for range 20 {
		check("an hour behind", spend(t, back, 1))
	}
	for range 2 * capacity {
		check("corrected", spend(t, l, 1))
	}
	t.Logf("clock an hour behind for 20 calls, then corrected: admitted %d / %d, decision times never went back", admitted, capacity)
	if admitted != capacity {
		t.Fatalf("admitted %d, want %d", admitted, capacity)
	}
}

func TestFaultClockBehindThenCorrectedRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testClockBehindThenCorrected(t, redisHarness(func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr) }))
}

func TestFaultClockBehindThenCorrectedSQLite(t *testing.T) {
	t.Parallel()
	testClockBehindThenCorrected(t, sqliteHarness(t.TempDir()))
}

// TestFaultLedgerRowAhead: a worker whose clock runs 5 minutes ahead takes
// cheap calls unmetered during an outage; when Redis answers, they are
// written into the window stamped ahead of Redis's clock. Decisions from
// then on are never before them, each row counts once, and the pool fills
// to exactly its capacity.
func TestFaultLedgerRowAhead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	ahead := func(o *limOpts) { o.Clock = clock.Func(func() time.Time { return time.Now().Add(5 * time.Minute) }) }
	h := newHost(t, srv.Addr, key, costs, "a", ahead)
	h.spendN(40)
	good := h.client
	h.client = newClient(t, closedAddr(t))
	h.restart()
	var newest time.Time
	for range 3 {
		d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
		if err != nil || !d.Unmetered {
			t.Fatalf("a cheap call while Redis is down: %+v, %v; want unmetered", d, err)
		}
		h.record(d)
		newest = d.At
	}
	h.client = good
	h.restart()
	h.heartbeat() // the first answer writes the unmetered rows back
	n := 0
	for range 2 * capacity {
		d := h.take()
		if !d.Allowed {
			break
		}
		n++
		if d.At.Before(newest) {
			t.Fatalf("decided %s at %s, before the unmetered row at %s written back", d.ID, d.At, newest)
		}
		newest = d.At
	}
	t.Logf("ledger rows 5 min ahead of Redis's clock written back: %d metered + %d unmetered = %d / %d; Redis %d",
		h.admitted(), h.unmetered(), h.admitted()+h.unmetered(), capacity, used(t, h.l))
	if h.admitted()+h.unmetered() != capacity || used(t, h.l) != capacity {
		t.Fatalf("admitted %d metered + %d unmetered, Redis counts %d; want %d", h.admitted(), h.unmetered(), used(t, h.l), capacity)
	}
}

// steadyBoot is a boot clock that a step of the wall clock does not move.
func steadyBoot() func() (string, time.Duration, bool) {
	start := time.Now()
	return func() (string, time.Duration, bool) { return "boot-1", time.Since(start) + time.Hour, true }
}

// TestFaultClockStepRedis: the Redis host's clock steps 25 hours ahead and
// the worker on that host steps with it (ClockOffset and Now together), then
// both come back. The worker's boot clock does not move: the limiter does
// not believe the step, and the pool never admits more than its capacity.
func TestFaultClockStepRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	boot := steadyBoot()
	h := newHost(t, srv.Addr, key, costs, "a", func(o *limOpts) { o.Uptime = boot; o.Clock = clock.System })
	h.spendN(60)
	step := func(off time.Duration) int {
		h.opts.ClockOffset = off
		h.opts.Clock = clock.Func(func() time.Time { return time.Now().Add(off) })
		h.restart()
		return fill(t, h)
	}
	ahead := step(25 * time.Hour)
	guarded := len(h.log.find("jumped ahead"))
	back := step(0)
	t.Logf("Redis's TIME and the worker's clock +25h, then back: 60 before, %d during (%d guarded warnings), %d after: %d / %d; Redis %d",
		ahead, guarded, back, h.admitted(), capacity, used(t, h.l))
	if h.admitted() != capacity {
		t.Fatalf("admitted %d across the step, want %d", h.admitted(), capacity)
	}
}

// TestFaultClockStepSQLite: the same step on the embedded limiter.
func TestFaultClockStepSQLite(t *testing.T) {
	t.Parallel()
	path, key, costs := t.TempDir()+"/ledger.db", quotaKey(t), faultCosts(t, false)
	boot := steadyBoot()
	open := func(off time.Duration) *quota.SQLite {
		l, err := newSQLite(openDB(t, path, false), limOpts{QuotaKey: key, Costs: costs, Logger: quiet,
			Uptime: boot, Clock: clock.Func(func() time.Time { return time.Now().Add(off) })})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := 0
	for range 60 {
		if take(t, open(0), "videos.list").Allowed {
			before++
		}
	}
	ahead := fillSQLite(t, open(25*time.Hour))
	back := fillSQLite(t, open(0))
	t.Logf("embedded: the clock +25h, then back: %d before, %d during, %d after: %d / %d", before, ahead, back, before+ahead+back, capacity)
	if before+ahead+back != capacity {
		t.Fatalf("admitted %d across the step, want %d", before+ahead+back, capacity)
	}
}
