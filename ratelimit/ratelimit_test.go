package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// backend opens limiters that share one count: open() is one more
// process on it (its own connections), except in memory, which one
// process owns.
type backend struct {
	name string
	open func(t *testing.T) ratelimit.Limiter
}

func backends(t *testing.T) []backend {
	mem := ratelimit.NewMemory()
	rs := redistest.Start(t)
	pgURL := pgtest.URL(t)
	return []backend{
		{"memory", func(*testing.T) ratelimit.Limiter { return mem }},
		{"redis", func(t *testing.T) ratelimit.Limiter {
			c, err := quota.NewClient("redis://"+rs.Addr+"/0", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			l := ratelimit.NewRedis(c, time.Second)
			t.Cleanup(func() { l.Close(); c.Close() })
			return l
		}},
		{"postgres", func(t *testing.T) ratelimit.Limiter {
			db, err := store.Open(context.Background(), pgURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			c, _ := clients.New(db).Counts()
			return ratelimit.NewPostgres(c)
		}},
	}
}

func plan(name string, limit int64, window time.Duration, burst int64) ratelimit.APIPlan {
	return ratelimit.APIPlan{Name: name, Limit: limit, Window: window, Burst: burst}
}

// TestConformance: every backend admits a burst and then refuses, says
// the units left and the wait exactly, charges a refusal nothing, keeps
// clients and plans apart, and refuses a cost above the burst as an
// error.
func TestConformance(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			l, ctx := b.open(t), context.Background()
			p := plan("small", 10, time.Hour, 4)
			interval := p.Interval()
			for i := range 5 {
				res, err := l.Allow(ctx, p, "a", 1)
				if err != nil {
					t.Fatal(err)
				}
				wantLeft, wantAllowed := int64(max(3-i, 0)), i < 4
				if res.Allowed != wantAllowed || res.Remaining != wantLeft || !waitIs(res.Wait, i >= 3, interval) {
					t.Fatalf("request %d: got %+v, want allowed %v, %d left, wait %v", i+1, res, wantAllowed, wantLeft, map[bool]time.Duration{true: interval}[i >= 3])
				}
			}
			expect(t, l, p, "b", 2, true, 2)  // another client, its own burst
			expect(t, l, p, "b", 3, false, 2) // refused...
			expect(t, l, p, "b", 2, true, 0)  // ...and charged nothing
			expect(t, l, plan("other", 10, time.Hour, 4), "a", 1, true, 3)
			if _, err := l.Allow(ctx, p, "c", 5); !errors.Is(err, ratelimit.ErrCost) {
				t.Fatalf("a cost above the burst: got %v, want ErrCost", err)
			}
		})
	}
}

// waitIs says whether a wait is 0 when none is due, else the interval less
// the little time the test's own requests took.
func waitIs(got time.Duration, due bool, interval time.Duration) bool {
	if !due {
		return got == 0
	}
	return got <= interval && got > interval-10*time.Second
}

func expect(t *testing.T, l ratelimit.Limiter, p ratelimit.APIPlan, client string, cost int64, allowed bool, left int64) {
	t.Helper()
	res, err := l.Allow(context.Background(), p, client, cost)
	if err != nil || res.Allowed != allowed || res.Remaining != left {
		t.Fatalf("%s cost %d on %s: got %+v %v, want allowed %v with %d left", client, cost, p.Name, res, err, allowed, left)
	}
}

// admission is one admitted request, by the limiter's own clock.
type admission struct {
	at   time.Time
	cost int64
}

// TestBoundOracle is the bound's property test: callers in several
// processes (memory: goroutines of one) send requests of random costs at
// random times, far more than the plan admits, busy for a window and idle
// for the next (an idle client must bank no more than its burst); an exact
// oracle then checks every trailing window of the admitted requests, by
// the limiter's clock, against the limit. It reports the worst window.
func TestBoundOracle(t *testing.T) {
	const limit, window = 24, 400 * time.Millisecond
	for _, b := range backends(t) {
		for _, burst := range []int64{1, 8, limit} {
			p := plan("oracle", limit, window, burst)
			t.Run(fmt.Sprintf("%s/burst%d", b.name, burst), func(t *testing.T) {
				adm := hammer(t, b, p, 6, 4*window)
				worst := worstWindow(adm, window)
				t.Logf("%s, limit %d a %s, burst %d: %d requests admitted over 4 windows; worst trailing window %d units (limit %d)",
					b.name, limit, window, burst, len(adm), worst, limit)
				if worst > limit {
					t.Fatalf("a trailing window of %s admitted %d units, above the limit %d", window, worst, limit)
				}
				// With a burst of 1 the plan spaces requests an interval
				// apart, so what a window admits also depends on how soon a
				// request follows each interval's end, which a loaded
				// machine stretches: the floor holds where a burst absorbs
				// that.
				if burst > 1 && worst < limit*3/4 {
					t.Fatalf("the worst window admitted %d units: a limiter this far under its limit of %d under load refuses what it owes", worst, limit)
				}
			})
		}
	}
}

// hammer runs callers processes of requests on p for span, every other
// window of it, and returns what was admitted.
func hammer(t *testing.T, b backend, p ratelimit.APIPlan, callers int, span time.Duration) []admission {
	var mu sync.Mutex
	var adm []admission
	var wg sync.WaitGroup
	client := t.Name()
	for w := range callers {
		l := b.open(t)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			start := time.Now()
			for i := 0; i < 5000 && time.Since(start) < span; i++ {
				if time.Since(start)/p.Window%2 == 1 {
					time.Sleep(time.Millisecond)
					continue
				}
				cost := 1 + rng.Int64N(min(3, p.Burst))
				res, err := l.Allow(context.Background(), p, client, cost)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					mu.Lock()
					adm = append(adm, admission{res.At, cost})
					mu.Unlock()
				}
				time.Sleep(time.Duration(rng.Int64N(2000)) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	return adm
}

// worstWindow is the most units admitted in any trailing window (t-w, t]
// of the admissions: the oracle, exact, one pass with two ends.
func worstWindow(adm []admission, w time.Duration) int64 {
	slices.SortFunc(adm, func(a, b admission) int { return a.at.Compare(b.at) })
	var worst, sum int64
	lo := 0
	for _, a := range adm {
		sum += a.cost
		for !adm[lo].at.After(a.at.Add(-w)) {
			sum -= adm[lo].cost
			lo++
		}
		worst = max(worst, sum)
	}
	return worst
}

// TestRedisScriptAndOutage: a Redis that forgot the script (a restart, a
// SCRIPT FLUSH) gets it again by itself; a Redis that does not answer is
// an error within the caller's deadline, which serve answers by serving
// the request unmetered.
func TestRedisScriptAndOutage(t *testing.T) {
	rs := redistest.Start(t)
	c, err := quota.NewClient("redis://"+rs.Addr+"/0", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := ratelimit.NewRedis(c, 200*time.Millisecond)
	defer l.Close()
	p := plan("p", 10, time.Hour, 5)
	expect(t, l, p, "a", 1, true, 4)
	if _, err := redistest.Do(rs.Addr, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	expect(t, l, p, "a", 1, true, 3)
	rs.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := l.Allow(ctx, p, "a", 1); err == nil {
		t.Fatal("Redis stopped: got a decision, want an error")
	}
}
