package quota

import (
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

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
