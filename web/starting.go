package web

import (
	"net/http"
	"sync/atomic"
)

// Starting is a listener's handler from the moment its port opens until
// the site it serves is built: a process whose start waits on a slow
// upstream (the region catalogue, the day's plan) is alive, and says so on
// /healthz at once, so that a supervisor's liveness probe does not restart
// it into the same wait; /readyz says "starting", and every other path is
// 503, until Serve hands it the site, which then answers everything.
type Starting struct {
	site atomic.Pointer[http.Handler]
	// doing is what the start waits on, /readyz's detail.
	doing string
}

// NewStarting returns a handler for a start that waits on doing ("reading
// the region catalogue and making the day's plan").
func NewStarting(doing string) *Starting { return &Starting{doing: doing} }

// StatusStarting is /readyz's status while the process starts.
const StatusStarting = "starting"

// Serve hands every request from now on to site.
func (s *Starting) Serve(site http.Handler) { s.site.Store(&site) }

func (s *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if site := s.site.Load(); site != nil {
		(*site).ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/healthz" {
		healthz(w, r)
		return
	}
	w.Header().Set("Retry-After", "5")
	switch r.URL.Path {
	case "/readyz":
		replyJSON(w, http.StatusServiceUnavailable, ReadyState{Status: StatusStarting,
			Checks: []CheckState{{Name: "start", Detail: s.doing}}})
	default:
		apiError(w, http.StatusServiceUnavailable, "starting", "", "ingest is starting ("+s.doing+"): ask again shortly")
	}
}
