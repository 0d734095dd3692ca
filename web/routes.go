package web

import (
	"context"
	"net"
	"net/http"

	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web/listener"
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
	// Operational is health, readiness and metrics: served on every
	// listener without the token, so probes and scrapers need no secret;
	// but an operator's one (metrics: the quota's numbers) asks for the
	// token on a --public listener, and is absent there without one.
	Operational
)

// Audience says whose a route is: the readers' (the front page, charts,
// search, videos, their JSON, the stylesheet and images) or the
// operator's (the quota, the runs, the plan, the quota key, and their
// JSON). The zero value is the operator's, so a route added without a
// thought stays behind the token.
type Audience int

const (
	// Operator routes always ask for the access token when there is one,
	// and are absent from a --public listener without one.
	Operator Audience = iota
	// Reader routes are what --public opens to anyone.
	Reader
)

// String is the audience as docs/api.md names it: public or operator.
func (a Audience) String() string {
	if a == Reader {
		return "public"
	}
	return "operator"
}

// Route is one entry of the route table: a ServeMux pattern, who may reach
// it, and its handler.
type Route struct {
	Pattern  string
	Kind     Kind
	Audience Audience
	Handler  http.Handler
}

// Access is what a listener serves, decided once from the token, the
// address and --public.
type Access int

const (
	// Open serves everything without a token: a loopback listener with no
	// token, where only this host can reach it.
	Open Access = iota
	// TokenRequired serves everything; the data asks for the token.
	TokenRequired
	// Public serves the readers' routes to anyone, metered by the
	// anonymous plan; the operator's ask for the token, and are absent
	// when there is none (--public).
	Public
	// OperationalOnly serves the operational routes alone: a non-loopback
	// listener with no token, where the data would be published to anyone.
	OperationalOnly
)

// AccessFor decides what a listener on addr serves.
func AccessFor(token, addr string, public bool) Access {
	switch {
	case public:
		return Public
	case token != "":
		return TokenRequired
	case Loopback(addr):
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
		{"GET /healthz", Operational, Reader, http.HandlerFunc(healthz)},
		{staticPattern, SignIn, Reader, s.static},
		{"GET /login", SignIn, Reader, http.HandlerFunc(s.loginPage)},
		{"POST /login", SignIn, Reader, http.HandlerFunc(s.login)},
		{"POST /logout", SignIn, Reader, http.HandlerFunc(s.logout)},
		{"GET /api/v1", API, Reader, http.HandlerFunc(s.apiIndex)},
		{"GET /api/v1/{$}", API, Reader, http.HandlerFunc(s.apiIndex)},
		{"GET /api/v1/search", API, Reader, s.kept(s.apiSearch)},
		{"GET /api/v1/charts/{region}", API, Reader, s.kept(s.apiChart)},
		{"GET /api/v1/videos/{id}", API, Reader, s.kept(s.apiVideo)},
		{"GET /api/v1/worldwide", API, Reader, s.kept(s.apiWorldwide)},
		{"GET /api/v1/quota", API, Operator, s.deadline(s.apiQuota)},
		{"GET /api/v1/runs", API, Operator, s.deadline(s.apiRuns)},
		{apiFallback, API, Reader, http.HandlerFunc(s.apiNotFound)},
		{"GET /{$}", Page, Reader, s.keptVariants(s.frontPage, s.frontVariant)},
		{"GET /operator", Page, Operator, s.deadline(s.overviewPage)},
		{"GET /charts", Page, Reader, s.deadline(s.chartsRedirect)},
		{"GET /charts/{region}", Page, Reader, s.kept(s.chartPage)},
		{"GET /charts/{region}/feed", Page, Reader, s.kept(s.chartFeed)},
		{"GET /worldwide", Page, Reader, s.kept(s.worldwidePage)},
		{"GET /worldwide/feed", Page, Reader, s.kept(s.worldwideFeed)},
		{"GET /videos/{id}", Page, Reader, s.kept(s.videoPage)},
		{"GET /search", Page, Reader, s.kept(s.searchPage)},
		{"GET /robots.txt", Page, Reader, s.kept(s.robotsTxt)},
		{"GET /sitemap.xml", Page, Reader, s.kept(s.sitemap)},
		{"GET /sitemaps/{file}", Page, Reader, s.kept(s.sitemapPart)},
		{"/", Page, Reader, http.HandlerFunc(s.pageNotFound)},
	}
	return append(own, s.cfg.Routes...)
}

// SiteRoutes are the entries a command's site adds to the table, those
// whose handlers the command holds: /readyz, asking the command's checks
// (ready: a reader's its database, ReadersReady; the writer's its
// limiter's too, WriterReady); /metrics, serving scrape to the operator;
// and /quota, the report as quota builds it.
func SiteRoutes(ready []listener.Check, scrape http.Handler, quota func(context.Context) (*report.Report, error)) []Route {
	return []Route{
		{Pattern: "GET /readyz", Kind: Operational, Audience: Reader, Handler: listener.Readyz(ready...)},
		{Pattern: "GET /metrics", Kind: Operational, Audience: Operator, Handler: scrape},
		{Pattern: "GET /quota", Kind: API, Handler: QuotaReport(quota)},
	}
}

// WriterReady are the checks of a process that spends the quota (run
// --listen): that the limiter l answers, then the process's own, then the
// limiter's windows (listener.WindowChecks). Without its limiter it takes no
// decision, so it is not ready.
func WriterReady(l report.StateReader, own ...listener.Check) []listener.Check {
	return append(append([]listener.Check{LimiterCheck(l)}, own...), listener.WindowChecks(l)...)
}

// ReadersReady are the checks of a process that serves readers (serve):
// its own, its database's, and not the limiter's. Its pages need only the
// database, and its metered API takes a limiter that does not answer as
// docs/api.md says (fail-open), so a limiter down must not take every
// reader replica out of its Service at once.
func ReadersReady(own ...listener.Check) []listener.Check { return own }

// routes registers the table under the listener's access, each answer
// sent by transport but the kept ones (cache.go), which send their own.
func (s *Server) routes() {
	for _, rt := range s.table() {
		k, self := rt.Handler.(*keptHandler)
		if self {
			k.shared = rt.shared()
		}
		h := s.guard(rt)
		if h != nil && !self {
			h = s.transported(h, rt.shared())
		}
		if h != nil && s.access == Public && rt.Kind == API && rt.Audience == Reader {
			h = anyOrigin(h)
		}
		if h != nil && regionPages[rt.Pattern] {
			h = canonicalRegion(h)
		}
		if keep, ok := readerQuery[rt.Pattern]; ok && h != nil && rt.Audience == Reader {
			h = onlyQuery(h, keep)
		}
		if h != nil {
			s.mux.Handle(rt.Pattern, h)
		}
	}
	if s.access == OperationalOnly {
		s.mux.Handle("/", s.transported(http.HandlerFunc(notServed), false))
	}
}

// anyOrigin lets any site's page read a public JSON route
// (Access-Control-Allow-Origin: *): its data is anyone's, and a browser
// sends no cookie with such a request, nor, without a preflight this
// server never answers, a token. The operator's routes never say it.
func anyOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "RateLimit, RateLimit-Policy, Retry-After, ETag")
		h.ServeHTTP(w, r)
	})
}

// reach is how a route may be reached on this listener.
type reach int

const (
	absent    reach = iota // not served
	open                   // by anyone
	withToken              // with the access token (or a session)
)

// reach applies the listener rules to one route.
func (s *Server) reach(rt Route) reach {
	switch {
	case rt.Kind == Operational && (s.access != Public || rt.Audience == Reader):
		return open
	case rt.Kind == Operational:
		return s.withToken()
	case s.access == OperationalOnly:
		return absent
	case rt.Kind == SignIn || s.access == Open:
		return open
	case s.access == Public && rt.Audience == Reader:
		return open
	}
	return s.withToken()
}

// withToken is how an operator's route is reached when it asks for the
// token: absent without one (a --public listener without a token).
func (s *Server) withToken() reach {
	if s.cfg.Token == "" {
		return absent
	}
	return withToken
}

// staticPattern is the route of the stylesheet and the images.
const staticPattern = "GET /static/"

// apiFallback answers the paths under /api/ no route has: not metered
// where it is open to anyone, so that an operator's route absent from a
// --public listener is a 404 whatever token comes with it.
const apiFallback = "/api/"

// guard is the listener rules: the handler a route gets under the
// server's access, nil when the route is not served. A reader's API
// route is metered by the plans; an operator's route is the operator's
// alone, whatever a client's token.
func (s *Server) guard(rt Route) http.Handler {
	how := s.reach(rt)
	metered := rt.Kind == API && s.cfg.Meter != nil && (rt.Audience == Reader || how == open) &&
		!(rt.Pattern == apiFallback && how == open)
	switch {
	case how == absent:
		return nil
	case metered:
		return s.metered(rt, how == open)
	case how == open:
		return rt.Handler
	case rt.Kind == API || rt.Kind == Operational:
		return s.authorized(rt.Handler, apiRefused)
	}
	return s.authorized(rt.Handler, s.pageRefused)
}

// Routes are the routes this server registered, with what each answers to:
// the table under the listener's rules.
func (s *Server) Routes() []Route {
	var out []Route
	for _, rt := range s.table() {
		if s.reach(rt) != absent {
			out = append(out, rt)
		}
	}
	return out
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
