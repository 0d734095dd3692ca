package quota

import (
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient opens a Redis client for the limiter from a URL: one server
// (redis://...), or a cluster when the URL lists nodes with addr=. It
// connects within timeout. Each call's own context deadline reaches the
// socket (go-redis ignores it on reads otherwise) and is what bounds the
// call: a decision's is the limiter's timeout, so that a hung Redis costs a
// call timeout, not the client's default of seconds; an operator's read or
// a recovery's step waits longer. The sockets' own bound is the longest of
// those (SlowestCall), since the earlier of the two deadlines applies and a
// shorter one would cut those steps short on a busy server. Commands are
// never retried by the client: a spend sent twice would count twice.
func NewClient(raw string, timeout time.Duration) (redis.UniversalClient, error) {
	timeout = max(timeout, 50*time.Millisecond)
	if strings.Contains(raw, "addr=") {
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, max(timeout, SlowestCall), max(timeout, SlowestCall)
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, max(timeout, SlowestCall), max(timeout, SlowestCall)
	return redis.NewClient(o), nil
}
