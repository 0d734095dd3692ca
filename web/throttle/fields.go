package throttle

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// SetPolicy writes the RateLimit-Policy field of a budget named name that
// allows limit units per window: one writer of the fields for every answer
// that is metered, the read API's and the proxy's, so that a client reads
// them alike.
func SetPolicy(h http.Header, name string, limit int64, window time.Duration) {
	h.Set("RateLimit-Policy", fmt.Sprintf(`"%s";q=%d;w=%d`, name, limit, Seconds(window)))
}

// SetRemaining writes the RateLimit field of the budget named name: what it
// has left, and in how many seconds it frees (wait rounded up). A refusal
// also carries Retry-After, the same seconds. It returns them.
func SetRemaining(h http.Header, name string, remaining int64, wait time.Duration, refused bool) int64 {
	retry := Seconds(wait)
	h.Set("RateLimit", fmt.Sprintf(`"%s";r=%d;t=%d`, name, remaining, retry))
	if refused {
		h.Set("Retry-After", strconv.FormatInt(retry, 10))
	}
	return retry
}
