package sim

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// virtualRedis starts a redis-server whose wall clock is the one the
// returned RedisClock sets; the test skips, saying why, where the shim
// cannot be built.
func virtualRedis(t *testing.T) (*redistest.Server, *RedisClock) {
	t.Helper()
	c, err := NewRedisClock(t.TempDir())
	if err != nil {
		t.Skipf("a Redis on virtual time: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return redistest.StartEnv(t, c.Env), c
}

// virtualClient is the product's own client of srv, its clock set by vc
// before each command, in a bubble moved to a day in October 2026; it is
// closed when the test ends.
func virtualClient(t *testing.T, srv *redistest.Server, vc *RedisClock) redis.UniversalClient {
	t.Helper()
	time.Sleep(time.Until(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC)))
	c, err := quota.Dial("redis://"+srv.Addr+"/0", "REDIS_URL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.AddHook(vc)
	return c
}

// TestRedisFollowsVirtualTime: through the product's own client, TIME
// answers the bubble's time, a key's TTL runs out on it, and a command in
// flight holds virtual time still, in a world before the wall clock.
func TestRedisFollowsVirtualTime(t *testing.T) {
	srv, vc := virtualRedis(t)
	synctest.Test(t, func(t *testing.T) {
		c := virtualClient(t, srv, vc)
		ctx := context.Background()
		sent := time.Now()
		got, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(sent) || !time.Now().Equal(sent) {
			t.Fatalf("TIME = %s, sent at %s, answered at %s", got.UTC(), sent.UTC(), time.Now().UTC())
		}
		if err := c.Set(ctx, "k", "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(59 * time.Minute)
		if err := c.Get(ctx, "k").Err(); err != nil {
			t.Fatalf("a key of an hour, 59 minutes on: %v", err)
		}
		time.Sleep(2 * time.Hour)
		if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("a key of an hour, 2 hours on: %v, want it gone", err)
		}
	})
}

// TestRedisStallsAreTheWorlds: a stall due stops the server at the next
// decision, which then meets its deadline, and a command the stopped server
// does not answer in time is a stall too; each is said at its moment, once.
func TestRedisStallsAreTheWorlds(t *testing.T) {
	srv, vc := virtualRedis(t)
	vc.Server = srv
	synctest.Test(t, func(t *testing.T) {
		c := virtualClient(t, srv, vc)
		bounded := func(args ...any) error {
			ctx, cancel := context.WithTimeout(context.Background(), quota.DefaultTimeout)
			defer cancel()
			return c.Do(ctx, args...).Err()
		}
		first := time.Now().Add(time.Minute)
		vc.stallAt([]time.Time{first})
		if err := bounded("PING"); err != nil {
			t.Fatalf("a command before the stall is due: %v", err)
		}
		time.Sleep(time.Minute)
		if err := bounded("ECHO", "busy"); err != nil {
			t.Fatalf("a command that is no decision, the stall due: %v", err)
		}
		if err := bounded("ECHO", "spend"); err == nil {
			t.Fatal("the decision the stall stopped was answered")
		}
		time.Sleep(time.Minute)
		for bounded("PING") != nil { // the server runs again stallFor later, in the kernel's time
		}
		if err := srv.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		second := time.Now()
		err := bounded("PING")
		srv.Signal(syscall.SIGCONT)
		if err == nil {
			t.Fatal("a stopped server answered")
		}
		if got := vc.stalls(); !slices.Equal(got, []time.Time{first, second}) {
			t.Errorf("stalls %v, want %v", got, []time.Time{first, second})
		}
	})
}

// TestRedisCutsLoseTheReplyAfterTheServerRanIt: a cut due loses the reply
// to the next decision the server ran, once, and is said at its moment; a
// client that sent the decision again would have it run twice.
func TestRedisCutsLoseTheReplyAfterTheServerRanIt(t *testing.T) {
	srv, vc := virtualRedis(t)
	synctest.Test(t, func(t *testing.T) {
		c := virtualClient(t, srv, vc)
		ctx := context.Background()
		at := time.Now().Add(time.Minute)
		vc.cutAt([]time.Time{at})
		if err := c.RPush(ctx, "k", "spend").Err(); err != nil {
			t.Fatalf("a decision before the cut is due: %v", err)
		}
		time.Sleep(time.Minute)
		if err := c.RPush(ctx, "k", "read").Err(); err != nil {
			t.Fatalf("no decision, the cut due: %v", err)
		}
		err := c.RPush(ctx, "k", "spend").Err()
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the decision the cut met: %v, want a reset", err)
		}
		if err := c.RPush(ctx, "k", "spend").Err(); err != nil {
			t.Fatalf("a decision after the cut: %v", err)
		}
		if got, _ := c.LRange(ctx, "k", 0, -1).Result(); !slices.Equal(got, []string{"spend", "read", "spend", "spend"}) {
			t.Errorf("the server holds %q, want the cut decision run once", got)
		}
		if got := vc.cuts(); !slices.Equal(got, []time.Time{at}) || !slices.Equal(vc.stalls(), got) {
			t.Errorf("cuts %v, stalls %v, want %v", got, vc.stalls(), []time.Time{at})
		}
	})
}

// TestSimRedis: TestSimDay's world with the daemon on the Redis limiter,
// as production's main shape runs, its quota key made by `quota apply
// --new` first, the Redis losing every key once in the first day and going
// back to an older snapshot of itself later that day, a worker of another
// database joining the key for hours in the second, the replies to a few
// decisions lost on the way back, and the daemon's database moving off
// Redis at the end.
func TestSimRedis(t *testing.T) {
	srv, vc := virtualRedis(t)
	vc.Server = srv
	s := shipped()
	s.Redis, s.RedisHook = "redis://"+srv.Addr+"/0", vc
	simulate(t, Config{Shape: s, Days: days(t, 2), Readers: true, RedisLoss: 20*time.Hour + 17*time.Minute, RedisRollback: 23*time.Hour + 40*time.Minute, PeerAt: 27*time.Hour + 25*time.Minute,
		RedisStalls: 24, RedisCuts: 8, LeaveRedis: true, Start: time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)})
}
