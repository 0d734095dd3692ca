package web

import (
	"net"
	"net/http"
)

// Kind says who may reach a route; the listener rules follow from it in
// one place (Server.guard), so a new route is one entry of the table.
type Kind int

const (
	// API is data as JSON: behind the token when one is set (a refusal is
	// a 401 in JSON), and not served on an open non-loopback listener.
	API Kind = iota
	// Page is data as a page: as API, but a refusal is the sign-in.
	Page
	// SignIn is what signing in needs (the form and the stylesheet): served
	// with the data, never behind the token.
	SignIn
	// Operational is health, readiness and metrics: always served, never
	// behind the token, so probes and scrapers need no secret.
	Operational
)

// Route is one entry of the route table: a ServeMux pattern, who may reach
// it, and its handler.
type Route struct {
	Pattern string
	Kind    Kind
	Handler http.Handler
}

// Access is what a listener serves, decided once from the token, the
// address and --public.
type Access int

const (
	// Open serves everything without a token: a loopback listener, or one
	// the operator declared public.
	Open Access = iota
	// TokenRequired serves everything; the data asks for the token.
	TokenRequired
	// OperationalOnly serves the operational routes alone: a non-loopback
	// listener with no token, where the data would be published to anyone.
	OperationalOnly
)

// AccessFor decides what a listener on addr serves.
func AccessFor(token, addr string, public bool) Access {
	switch {
	case token != "":
		return TokenRequired
	case public || Loopback(addr):
		return Open
	}
	return OperationalOnly
}

// Loopback reports whether addr (host:port) can only be reached from this
// host. An empty host listens on every interface, and a name other than
// localhost may resolve to anything: neither is loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// table is every route the server has, the caller's (Config.Routes) after
// its own.
func (s *Server) table() []Route {
	own := []Route{
		{"GET /healthz", Operational, http.HandlerFunc(healthz)},
		{"GET /static/", SignIn, s.static},
		{"GET /login", SignIn, http.HandlerFunc(s.loginPage)},
		{"POST /login", SignIn, http.HandlerFunc(s.login)},
		{"POST /logout", SignIn, http.HandlerFunc(s.logout)},
		{"GET /api/v1/search", API, s.deadline(s.apiSearch)},
		{"GET /api/v1/charts/{region}", API, s.deadline(s.apiChart)},
		{"GET /api/v1/videos/{id}", API, s.deadline(s.apiVideo)},
		{"GET /api/v1/quota", API, s.deadline(s.apiQuota)},
		{"GET /api/v1/runs", API, s.deadline(s.apiRuns)},
		{"/api/", API, http.HandlerFunc(s.apiNotFound)},
		{"GET /{$}", Page, s.deadline(s.frontPage)},
		{"GET /operator", Page, s.deadline(s.overviewPage)},
		{"GET /charts", Page, s.deadline(s.chartsRedirect)},
		{"GET /charts/{region}", Page, s.deadline(s.chartPage)},
		{"GET /videos/{id}", Page, s.deadline(s.videoPage)},
		{"GET /search", Page, s.deadline(s.searchPage)},
		{"/", Page, http.HandlerFunc(s.pageNotFound)},
	}
	return append(own, s.cfg.Routes...)
}

// routes registers the table under the listener's access.
func (s *Server) routes() {
	for _, rt := range s.table() {
		if h := s.guard(rt); h != nil {
			s.mux.Handle(rt.Pattern, h)
		}
	}
	if s.access == OperationalOnly {
		s.mux.HandleFunc("/", notServed)
	}
}

// guard is the listener rules: the handler a route gets under the
// server's access, nil when the route is not served.
func (s *Server) guard(rt Route) http.Handler {
	switch {
	case rt.Kind == Operational:
		return rt.Handler
	case s.access == OperationalOnly:
		return nil
	case rt.Kind == API && s.cfg.Meter != nil:
		return s.metered(rt)
	case rt.Kind == API && s.access == TokenRequired:
		return s.authorized(rt.Handler, apiRefused)
	case rt.Kind == Page && s.access == TokenRequired:
		return s.authorized(rt.Handler, s.pageRefused)
	}
	return rt.Handler
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	replyJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) apiNotFound(w http.ResponseWriter, r *http.Request) {
	apiError(w, http.StatusNotFound, "not_found", "", "no such route: "+r.URL.Path)
}

func (s *Server) pageNotFound(w http.ResponseWriter, r *http.Request) {
	s.pageError(w, r, http.StatusNotFound, "No such page: "+r.URL.Path)
}

// notServed answers every path but the operational ones on a listener
// that serves only those.
func notServed(w http.ResponseWriter, _ *http.Request) {
	apiError(w, http.StatusNotFound, "not_served", "",
		"this listener serves only /healthz, /readyz and /metrics: it is not on a loopback address and INGEST_UI_TOKEN is not set")
}
