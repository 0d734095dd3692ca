package sim

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// rollbackAge is how old the state is that the Redis goes back to at
// RedisRollback: long enough for the daemon's heartbeats and a pass or two
// to spend after it.
const rollbackAge = 40 * time.Minute

// snapshot is every key a Redis held at one moment, each with its value
// as DUMP gives it and its expiry (Unix ms on the server's clock, 0 for
// none), as an RDB file keeps them.
type snapshot []struct {
	key, value string
	expire     int64
}

// rigClient is a client of the simulation's Redis for the rig's own moves,
// its clock the bubble's.
func rigClient(s Shape) (*redis.Client, error) {
	o, err := redis.ParseURL(s.Redis)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(o)
	if rc, ok := s.RedisHook.(*RedisClock); ok {
		c.AddHook(rc)
	}
	return c, nil
}

// snapshotRedis takes s's Redis's every key now, as BGSAVE writes them.
func snapshotRedis(s Shape) (snapshot, error) {
	c, err := rigClient(s)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		return nil, fmt.Errorf("the keys of the simulation's Redis: %w", err)
	}
	var snap snapshot
	for _, k := range keys {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			return nil, fmt.Errorf("DUMP %s: %w", k, err)
		}
		exp, err := c.Do(ctx, "PEXPIRETIME", k).Int64()
		if err != nil {
			return nil, fmt.Errorf("PEXPIRETIME %s: %w", k, err)
		}
		snap = append(snap, struct {
			key, value string
			expire     int64
		}{k, v, max(exp, 0)})
	}
	return snap, nil
}

// restore puts s's Redis back to snap, as a restart from an older RDB file
// or a failover to a replica that lagged does: every key written since is
// gone, every key snap holds is as it was then, and what expired since
// stays gone.
func (snap snapshot) restore(s Shape) error {
	c, err := rigClient(s)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL on the simulation's Redis: %w", err)
	}
	now := time.Now().UnixMilli()
	for _, k := range snap {
		if k.expire > 0 && k.expire <= now {
			continue
		}
		if err := c.Do(ctx, "RESTORE", k.key, k.expire, k.value, "ABSTTL").Err(); err != nil {
			return fmt.Errorf("RESTORE %s: %w", k.key, err)
		}
	}
	return nil
}

// rollback takes the Redis's snapshot rollbackAge before RedisRollback,
// puts it back then, and reads the limiter's counts lossLook later, as
// after a loss.
func (h *History) rollback(log *slog.Logger) error {
	time.Sleep(time.Until(h.Start.Add(h.RedisRollback - rollbackAge)))
	snap, err := snapshotRedis(h.Shape)
	if err != nil {
		return err
	}
	time.Sleep(rollbackAge)
	if err := snap.restore(h.Shape); err != nil {
		return err
	}
	h.Losses = append(h.Losses, time.Now())
	time.Sleep(lossLook)
	lk, err := lookRedis(h.Shape, log)
	if err != nil {
		return err
	}
	h.Looks = append(h.Looks, lk)
	return nil
}
