package wiring

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/quota"
)

// redisFlag is how a message names RedisURL.
const redisFlag = "--redis / REDIS_URL"

// RedisClient is the client of RedisURL (quota.Dial).
func (h *Host) RedisClient() (redis.UniversalClient, error) {
	c, err := quota.Dial(h.RedisURL, redisFlag)
	if err == nil && h.RedisHook != nil {
		c.AddHook(h.RedisHook)
	}
	return c, err
}

// RedisAccess is a configuration error when the Redis of RedisURL refuses
// this client or is not Redis (quota.Admitted).
func (h *Host) RedisAccess(ctx context.Context, c redis.UniversalClient) error {
	return quota.Admitted(ctx, c, h.RedisURL, redisFlag, h.Logger)
}
