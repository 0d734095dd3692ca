package sim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

// A proxy in front of the upstream (YOUTUBE_ENDPOINT names one: a cache, a
// gateway) answers for it when it fails, with its own status and an HTML
// page of its own, not the API's JSON error: a 502 or a 504 for an upstream
// it could not read in time, its own 429 when it limits the rate, its own
// 408, a 500 of its own. The client has only the status to go by, and
// docs/operations/faults.md says what it makes of each: a 5xx, a rate limit
// not "per day" and a 408 are tried again with the same waits as the API's
// own 503. The nemesis's bursts of failures pass through it, every other
// one: so a shape that meets failures meets each status, and a client that
// reads one of them as final, or retries it otherwise, is seen.

// proxyStatuses are the statuses the proxy answers with, in turn.
var proxyStatuses = []int{
	http.StatusInternalServerError, http.StatusBadGateway, http.StatusTooManyRequests,
	http.StatusGatewayTimeout, http.StatusRequestTimeout,
}

// Front has the next n failed answers of the fake pass through the proxy,
// every other one answered by it.
func (u *Upstream) Front(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fronted = n
}

// front is the answer the client gets for rec, the fake's: its own, or the
// proxy's in its stead (proxy true), once the fake has charged the call.
func (u *Upstream) front(rec *httptest.ResponseRecorder) (*httptest.ResponseRecorder, bool) {
	if rec.Code != http.StatusServiceUnavailable {
		return rec, false
	}
	u.mu.Lock()
	n := u.fronted
	if n > 0 {
		u.fronted--
	}
	status := proxyStatuses[u.proxied%len(proxyStatuses)]
	if n%2 == 1 {
		u.proxied++
	}
	u.mu.Unlock()
	if n%2 == 0 {
		return rec, false
	}
	out := httptest.NewRecorder()
	out.Header().Set("Content-Type", "text/html")
	out.Header().Set("Date", rec.Result().Header.Get("Date"))
	out.WriteHeader(status)
	fmt.Fprintf(out, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
		status, http.StatusText(status), status, http.StatusText(status))
	return out, true
}

// proxied says a proxy's status of c is one the client tries again: its
// 429 and 408 (the upstream's own 429 is its day's quota in every shape
// of the simulation, refusedPool).
func proxied(c Call) bool {
	return c.Proxy && (c.Status == http.StatusTooManyRequests || c.Status == http.StatusRequestTimeout)
}
