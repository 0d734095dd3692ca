package quota_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/redistest"
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
