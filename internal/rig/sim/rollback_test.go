package sim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisRollsBackToItsSnapshot: a Redis put back to its snapshot holds
// every key as it was then, a key's expiry where it was on the virtual
// clock, and none of the keys written since.
func TestRedisRollsBackToItsSnapshot(t *testing.T) {
	srv, vc := virtualRedis(t)
	synctest.Test(t, func(t *testing.T) {
		c := virtualClient(t, srv, vc)
		s := Shape{Redis: "redis://" + srv.Addr + "/0", RedisHook: vc}
		ctx := context.Background()
		for k, ttl := range map[string]time.Duration{"kept": 0, "hour": time.Hour, "minute": time.Minute} {
			if err := c.Set(ctx, k, "then", ttl).Err(); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := snapshotRedis(s)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Minute)
		if err := c.Set(ctx, "kept", "now", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(ctx, "since", "now", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := snap.restore(s); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"kept": "then", "hour": "then"} {
			if got, err := c.Get(ctx, k).Result(); got != want {
				t.Errorf("%s = %q, %v; want %q", k, got, err, want)
			}
		}
		for _, k := range []string{"since", "minute"} {
			if err := c.Get(ctx, k).Err(); !errors.Is(err, redis.Nil) {
				t.Errorf("%s after the rollback: %v, want it gone", k, err)
			}
		}
		time.Sleep(31 * time.Minute)
		if err := c.Get(ctx, "hour").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("a key of an hour, an hour and a minute after its write: %v, want it gone", err)
		}
	})
}
