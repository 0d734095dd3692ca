package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/dsn"
	"github.com/ingestworks/ingest/internal/protocol"
	"github.com/ingestworks/ingest/quota"
)

// redisLogger sends go-redis's own messages through slog at debug, so
// that --log-format json stays JSON and an unreachable Redis is said once,
// by the limiter's own line, not once per dial by the client library.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// RedisClient parses RedisURL: one server, or a cluster when addr= lists
// more nodes; the limiter's timeouts reach the socket. No error quotes any
// part of the password (internal/dsn).
func (h *Host) RedisClient() (redis.UniversalClient, error) {
	return redisClient(h.RedisURL, redisFlag)
}

// redisFlag is how a message names RedisURL.
const redisFlag = "--redis / REDIS_URL"

// redisClient parses raw, a Redis URL given as flag (which its errors
// name).
func redisClient(raw, flag string) (redis.UniversalClient, error) {
	if err := redisScheme(raw, flag); err != nil {
		return nil, err
	}
	if err := dsn.Check(raw); err != nil {
		return nil, configErrorf("%s: %s: %w", flag, dsn.Redact(raw), err)
	}
	c, err := quota.NewClient(raw, quota.DefaultTimeout)
	if err != nil {
		return nil, configErrorf("%s: %s: %s", flag, dsn.Redact(raw), dsn.Scrub(err.Error(), raw))
	}
	return c, nil
}

// RedisAccess is a configuration error when Redis refuses this URL's
// credentials or database (accessError), or when the server at the URL
// answers as another server (a port typo onto HTTP or PostgreSQL), found
// before anything is spent or written. A Redis that does not answer
// (refused, silent, closed without a word) is not one: the limiter's fail
// policy decides then.
func (h *Host) RedisAccess(ctx context.Context, c redis.UniversalClient) error {
	redis.SetLogger(redisLogger{h.Logger}) // its words on a failed dial, in --log-format
	var ae *quota.AccessError
	err := quota.CheckAccess(ctx, c)
	if errors.As(err, &ae) {
		return configErrorf("--redis / REDIS_URL: %s: %w", dsn.Redact(h.RedisURL), ae)
	}
	if err != nil && !quota.Unreached(err) {
		return wrongServer(ctx, h.RedisURL)
	}
	return nil
}

// wrongServer is a configuration error when the server at the Redis URL
// answers as something other than Redis; nil when it said nothing that
// names it, which stays an outage.
func wrongServer(ctx context.Context, raw string) error {
	network, addr := quota.Address(raw)
	if addr == "" {
		return nil
	}
	p := protocol.Identify(ctx, network, addr)
	if p == protocol.Unknown || p == protocol.Redis {
		return nil
	}
	return configErrorf("--redis / REDIS_URL: the server at %s %s, not Redis: "+
		"point it at Redis's address and port (6379 unless changed), as redis://[:PASSWORD@]HOST:6379/0", addr, p.Answered())
}

// redisScheme refuses a --redis that is not a Redis URL by its scheme,
// before go-redis says "invalid URL scheme: " with nothing after it. The
// value is shown only with its user information masked: it may hold a
// password.
func redisScheme(raw, flag string) error {
	const want = "want redis://[:PASSWORD@]HOST:6379/0 (rediss:// for TLS, unix:///PATH for a socket)"
	scheme, found := dsn.Scheme(raw)
	known := scheme == "redis" || scheme == "rediss" || scheme == "unix"
	switch {
	case !found:
		return configErrorf("%s: not a URL: %s", flag, want)
	case known && strings.HasPrefix(raw, scheme+"://"):
		return nil
	case known && dsn.Colonless(raw):
		return configErrorf("%s: %s: the scheme lacks its colon: %s", flag, dsn.Redact(raw), want)
	case known:
		return configErrorf("%s: %s: the scheme takes two slashes: %s", flag, dsn.Redact(raw), want)
	}
	return configErrorf("%s: %s: the scheme %q is not Redis's: %s", flag, dsn.Redact(raw), scheme, want)
}

// RedisHost is the host part of a Redis URL, never its password.
func RedisHost(raw string) string {
	raw = dsn.Redact(raw)
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		raw = raw[i+1:]
	} else if j := strings.Index(raw, "://"); j >= 0 {
		raw = raw[j+3:]
	}
	if i := strings.IndexAny(raw, "/?"); i >= 0 {
		raw = raw[:i]
	}
	return raw
}
