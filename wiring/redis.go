package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/dsn"
	"github.com/ingestworks/ingest/quota"
)

// redisLogger sends go-redis's own messages through slog, so that
// --log-format json stays JSON.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// RedisClient parses RedisURL: one server, or a cluster when addr= lists
// more nodes; the limiter's timeouts reach the socket. No error quotes any
// part of the password (internal/dsn).
func (h *Host) RedisClient() (redis.UniversalClient, error) {
	raw := h.RedisURL
	if err := redisScheme(raw); err != nil {
		return nil, err
	}
	if err := dsn.Check(raw); err != nil {
		return nil, configErrorf("--redis / REDIS_URL: %s: %w", dsn.Redact(raw), err)
	}
	c, err := quota.NewClient(raw, quota.DefaultTimeout)
	if err != nil {
		return nil, configErrorf("--redis / REDIS_URL: %s: %s", dsn.Redact(raw), dsn.Scrub(err.Error(), raw))
	}
	return c, nil
}

// RedisAccess is a configuration error when Redis refuses this URL's
// credentials or database (quota.AccessError), found by one round trip
// before anything is spent or written. A Redis that does not answer is
// not one: the limiter's fail policy decides then.
func (h *Host) RedisAccess(ctx context.Context, c redis.UniversalClient) error {
	redis.SetLogger(redisLogger{h.Logger}) // its words on a failed dial, in --log-format
	var ae *quota.AccessError
	if err := quota.CheckAccess(ctx, c); errors.As(err, &ae) {
		return configErrorf("--redis / REDIS_URL: %s: %w", dsn.Redact(h.RedisURL), ae)
	}
	return nil
}

// redisScheme refuses a --redis that is not a Redis URL by its scheme,
// before go-redis says "invalid URL scheme: " with nothing after it. The
// value itself is not repeated: it may hold a password.
func redisScheme(raw string) error {
	scheme, _, found := strings.Cut(raw, "://")
	switch {
	case found && (scheme == "redis" || scheme == "rediss" || scheme == "unix"):
		return nil
	case !found || scheme == "":
		return configErrorf("--redis / REDIS_URL: not a URL: want redis://[:PASSWORD@]HOST:6379/0 (rediss:// for TLS, unix:///PATH for a socket)")
	}
	return configErrorf("--redis / REDIS_URL: the scheme %q is not Redis's: want redis://[:PASSWORD@]HOST:6379/0 (rediss:// for TLS, unix:///PATH for a socket)", scheme)
}
