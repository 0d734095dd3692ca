package ratelimit

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

//go:embed gcra.lua
var gcraSource string

var gcraScript = redis.NewScript(gcraSource)

// keyPrefix starts every key of the API's clients, apart from the
// upstream limiter's keys (ingest:{quota key}:...).
const keyPrefix = "ingest:api:"

// Redis keeps the counts in Redis, shared by every process on it; one
// script call, one round trip, decides by the server's clock.
type Redis struct {
	client redis.UniversalClient
}

// NewRedis returns a limiter on client. The script is sent with EVALSHA,
// and again whole when Redis does not know it (after a restart).
func NewRedis(client redis.UniversalClient) *Redis { return &Redis{client: client} }

// Backend is "redis".
func (r *Redis) Backend() string { return "redis" }

// Allow decides one request of client on plan.
func (r *Redis) Allow(ctx context.Context, plan ingest.APIPlan, client string, cost int64) (Result, error) {
	ru, err := ruleOf(plan, cost)
	if err != nil {
		return Result{}, err
	}
	v, err := gcraScript.Run(ctx, r.client, []string{keyPrefix + key(plan, client)}, ru.interval, ru.tolerance, cost).Int64Slice()
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	if len(v) != 3 {
		return Result{}, fmt.Errorf("ratelimit: redis: the script answered %v, want 3 numbers", v)
	}
	return ru.result(v[0] == 1, v[1], v[2], cost), nil
}
