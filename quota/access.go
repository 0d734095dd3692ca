package quota

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// AccessError says that Redis refused the connection's credentials or its
// database: a configuration error (a wrong or missing password, a user
// without rights, a database index the server does not have), never an
// outage that the fail policy may ride out.
type AccessError struct {
	Reply string // Redis's own words, which hold no password
	Fix   string
}

func (e *AccessError) Error() string { return "Redis refused it (" + e.Reply + "): " + e.Fix }

// accessReplies are the replies of a refused AUTH, HELLO or SELECT, by
// their first words, with the fix.
var accessReplies = []struct{ prefix, fix string }{
	{"WRONGPASS", "the user or password is wrong (a password holding @ : / ? # % is percent-encoded in the URL)"},
	{"ERR invalid password", "the password is wrong (a password holding @ : / ? # % is percent-encoded in the URL)"},
	{"ERR AUTH", "the server has no password: leave it out of the URL, or set requirepass on the server"},
	{"NOAUTH", "the server requires a password: give it as redis://:PASSWORD@HOST:6379/0 (or USER:PASSWORD for an ACL user)"},
	{"NOPERM", "the URL's user lacks rights the limiter needs: grant it +@all on the ingest:* keys, or use another user"},
	{"ERR DB index is out of range", "the server has fewer databases: use /0 (or raise `databases` in redis.conf)"},
	{"ERR invalid DB index", "the database is not a number the server takes: use /0"},
	{"ERR SELECT is not allowed in cluster mode", "a cluster has only database 0: end the URL with /0"},
}

// CheckAccess makes one round trip to find whether Redis lets this client
// in. It returns an *AccessError when Redis refused the credentials or the
// database, the error of the round trip otherwise (an unreachable server),
// nil when Redis answered.
func CheckAccess(ctx context.Context, c redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, max(DefaultTimeout, time.Second))
	defer cancel()
	err := c.Ping(ctx).Err()
	var reply redis.Error
	if err == nil || !errors.As(err, &reply) {
		return err
	}
	msg := reply.Error()
	for _, r := range accessReplies {
		if strings.HasPrefix(msg, r.prefix) {
			return &AccessError{Reply: firstLine(msg), Fix: r.fix}
		}
	}
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// NewClient opens a Redis client for the limiter from a URL: one server
// (redis://...), or a cluster when the URL lists nodes with addr=. Its
// timeouts are the limiter's, and a context's deadline reaches the socket
// (go-redis ignores it on reads otherwise), so that a hung Redis costs a
// call timeout, not the client's default of seconds. Commands are never
// retried by the client: a spend sent twice would count twice.
func NewClient(raw string, timeout time.Duration) (redis.UniversalClient, error) {
	timeout = max(timeout, 50*time.Millisecond)
	if strings.Contains(raw, "addr=") {
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
	return redis.NewClient(o), nil
}
