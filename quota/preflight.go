package quota

// A Redis URL checked before anything is spent or written: its scheme, its
// shape, whether the server lets this client in, and whether the server
// at its address is Redis at all. Each refusal is a configuration error
// naming the flag it came from and never the password.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

// redisLogger sends go-redis's own messages through slog at debug, so
// that --log-format json stays JSON and an unreachable Redis is said once,
// by the limiter's own line, not once per dial by the client library.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// Dial parses raw, a Redis URL given as flag (which its errors name): one
// server, or a cluster when addr= lists more nodes; the limiter's timeouts
// reach the socket. No error quotes any part of the password (ingest.Redact).
func Dial(raw, flag string) (redis.UniversalClient, error) {
	if err := redisScheme(raw, flag); err != nil {
		return nil, err
	}
	if err := ingest.CheckURL(raw); err != nil {
		return nil, ingest.ConfigErrorf("%s: %s: %w", flag, ingest.Redact(raw), err)
	}
	c, err := NewClient(raw, DefaultTimeout)
	if err != nil {
		return nil, ingest.ConfigErrorf("%s: %s: %s", flag, ingest.Redact(raw), ingest.Scrub(err.Error(), raw))
	}
	return c, nil
}

// Admitted is a configuration error when the Redis at raw (given as flag)
// refuses c's credentials or database (CheckAccess), or when the server
// at the URL answers as another server (a port typo onto HTTP or
// PostgreSQL), found before anything is spent or written. A Redis that
// does not answer (refused, silent, closed without a word) is not one: the
// limiter's fail policy decides then. go-redis's own words on a failed
// dial go to log, at debug.
func Admitted(ctx context.Context, c redis.UniversalClient, raw, flag string, log *slog.Logger) error {
	_, err := Reached(ctx, c, raw, flag, log)
	return err
}

// Reached is Admitted, and whether anything answered at the URL's address
// at all: false for a round trip that met no server (Unreached), which is
// an outage or a mistyped address, and only what the database knows of
// this Redis tells which.
func Reached(ctx context.Context, c redis.UniversalClient, raw, flag string, log *slog.Logger) (bool, error) {
	redis.SetLogger(redisLogger{log})
	var ae *AccessError
	err := CheckAccess(ctx, c)
	switch {
	case errors.As(err, &ae):
		return true, ingest.ConfigErrorf("%s: %s: %w", flag, ingest.Redact(raw), ae)
	case err != nil && Unreached(err):
		return false, nil
	case err != nil:
		return true, wrongServer(ctx, raw, flag)
	}
	return true, nil
}

// wrongServer is a configuration error when the server at the Redis URL
// answers as something other than Redis; nil when it said nothing that
// names it, which stays an outage.
func wrongServer(ctx context.Context, raw, flag string) error {
	network, addr := Address(raw)
	if addr == "" {
		return nil
	}
	p := ingest.IdentifyServer(ctx, network, addr)
	if p == ingest.ProtocolUnknown || p == ingest.ProtocolRedis {
		return nil
	}
	return ingest.ConfigErrorf("%s: the server at %s %s, not Redis: "+
		"point it at Redis's address and port (6379 unless changed), as redis://[:PASSWORD@]HOST:6379/0", flag, addr, p.Answered())
}

// redisScheme refuses a --redis that is not a Redis URL by its scheme,
// before go-redis says "invalid URL scheme: " with nothing after it. The
// value is shown only with its user information masked: it may hold a
// password.
func redisScheme(raw, flag string) error {
	const want = "want redis://[:PASSWORD@]HOST:6379/0 (rediss:// for TLS, unix:///PATH for a socket)"
	scheme, found := ingest.URLScheme(raw)
	known := scheme == "redis" || scheme == "rediss" || scheme == "unix"
	switch {
	case !found:
		return ingest.ConfigErrorf("%s: not a URL: %s", flag, want)
	case known && strings.HasPrefix(raw, scheme+"://"):
		return nil
	case known && ingest.ColonlessURL(raw):
		return ingest.ConfigErrorf("%s: %s: the scheme lacks its colon: %s", flag, ingest.Redact(raw), want)
	case known:
		return ingest.ConfigErrorf("%s: %s: the scheme takes two slashes: %s", flag, ingest.Redact(raw), want)
	}
	return ingest.ConfigErrorf("%s: %s: the scheme %q is not Redis's: %s", flag, ingest.Redact(raw), scheme, want)
}

// Host is the host part of a Redis URL, never its password.
func Host(raw string) string {
	raw = ingest.Redact(raw)
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
