package quota_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/redistest"
	"github.com/ingestworks/ingest/quota"
)

// TestRedisFunctionReloaded: window.lua runs as a Redis Function (FCALL);
// a server that lost it (FUNCTION FLUSH, a restart without persistence)
// gets it back by itself, and no call is lost or counted twice on the way.
func TestRedisFunctionReloaded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	l, _ := quota.NewRedis(c, quota.Options{QuotaKey: "fn", Costs: testCosts(t, 1000, 0, 5, time.Minute), Logger: quiet})
	ctx := context.Background()
	for i := range 20 {
		if i == 10 {
			if err := c.FunctionFlush(ctx).Err(); err != nil {
				t.Fatalf("FUNCTION FLUSH: %v", err)
			}
		}
		if d, err := l.Take(ctx, "videos.list"); err != nil || !d.Allowed || d.Unmetered {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
	if s, err := l.State(ctx); err != nil || s[0].Used != 20 {
		t.Fatalf("state: %+v, %v; want 20 used", s, err)
	}
	if calls := fcalls(t, c); calls < 20 {
		t.Fatalf("FCALL ran %d times, want every spend (20)", calls)
	}
}

// TestRedisClusterFunctionOnEveryMaster: in a cluster the library is
// loaded on every master, and loaded again when the masters lost it.
func TestRedisClusterFunctionOnEveryMaster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	var ls []*quota.Redis
	for _, key := range []string{"a", "b", "c", "d", "e", "f"} { // keys on more than one master
		l, err := quota.NewRedis(client, quota.Options{QuotaKey: key, Costs: testCosts(t, 100, 0, 5, time.Minute), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	take := func(round int) {
		for i, l := range ls {
			if d, err := l.Take(ctx, "videos.list"); err != nil || !d.Allowed {
				t.Fatalf("round %d, limiter %d: %+v, %v", round, i, d, err)
			}
		}
	}
	take(1)
	err := client.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		libs, err := c.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		if err == nil && len(libs) != 1 {
			t.Errorf("master %s holds %d libraries, want 1", c.Options().Addr, len(libs))
		}
		if err == nil {
			err = c.FunctionFlush(ctx).Err()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	take(2)
	for i, l := range ls {
		if s, err := l.State(ctx); err != nil || s[0].Used != 2 {
			t.Fatalf("limiter %d: %+v, %v; want 2 used", i, s, err)
		}
	}
}

// fcalls reads how many FCALLs the server ran.
func fcalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_fcall:calls="); ok {
			n := 0
			for _, ch := range rest {
				if ch < '0' || ch > '9' {
					break
				}
				n = n*10 + int(ch-'0')
			}
			return n
		}
	}
	return 0
}
