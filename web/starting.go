package web

import (
	"crypto/subtle"
	"net/http"
	"sync/atomic"

	"github.com/ingestworks/ingest/web/listener"
)

// Starting is a listener's handler from the moment its port opens until
// the site it serves is built: a process whose start waits on a slow
// upstream (the region catalogue, the day's plan) is alive, and says so on
// /healthz at once, so that a supervisor's liveness probe does not restart
// it into the same wait; /readyz says "starting", /metrics serves the
// start's series (a scraper marks a target that answers anything else
// down, and loses what the process could say of its start), and every
// other path is 503, until Serve hands it the site, which then answers
// everything.
type Starting struct {
	site atomic.Pointer[http.Handler]
	// doing is what the start waits on now, /readyz's detail.
	doing func() string
	// metrics serves /metrics meanwhile; nil: 503 as any other path.
	metrics http.Handler
	// token, when set, is the bearer /metrics asks for, as the site's
	// /metrics does on a --public listener.
	token string
}

// NewStarting returns a handler for a start of the listener cfg; doing
// says what it waits on now ("reading the region catalogue"). metrics,
// when set, serves /metrics until the site does, asking what the site's
// will: on a --public listener the access token as a bearer, and none
// served without one.
func NewStarting(doing func() string, metrics http.Handler, cfg Config) *Starting {
	token := ""
	if cfg.Public {
		if token = cfg.Token; token == "" {
			metrics = nil
		}
	}
	return &Starting{doing: doing, metrics: metrics, token: token}
}

// StatusStarting is /readyz's status while the process starts.
const StatusStarting = "starting"

// Serve hands every request from now on to site.
func (s *Starting) Serve(site http.Handler) { s.site.Store(&site) }

// Again answers as a start does from now on, until Serve hands it a site
// again: a daemon that plans again on a catalogue it read late builds its
// site anew.
func (s *Starting) Again() { s.site.Store(nil) }

func (s *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if site := s.site.Load(); site != nil {
		(*site).ServeHTTP(w, r)
		return
	}
	switch {
	case r.URL.Path == "/healthz":
		healthz(w, r)
		return
	case r.URL.Path == "/metrics" && s.metrics != nil:
		s.scrape(w, r)
		return
	}
	w.Header().Set("Retry-After", "5")
	switch r.URL.Path {
	case "/readyz":
		replyJSON(w, http.StatusServiceUnavailable, listener.ReadyState{Status: StatusStarting,
			Checks: []listener.CheckState{{Name: "start", Detail: s.doing()}}})
	default:
		apiError(w, http.StatusServiceUnavailable, "starting", "", "ingest is starting ("+s.doing()+"): ask again shortly")
	}
}

// scrape serves the start's /metrics, to the bearer of the token when
// one is asked for.
func (s *Starting) scrape(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "private, no-store")
	if s.token != "" {
		got, ok := bearer(r)
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
			apiUnauthorized(w, r)
			return
		}
	}
	s.metrics.ServeHTTP(w, r)
}
