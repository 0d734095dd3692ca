// Package web is the read side of ingest for people: a versioned JSON API
// (/api/v1/...) and a server-rendered dashboard at / over the store, with
// its templates, stylesheet and charts (SVG drawn by the templates)
// embedded, so the binary serves it with no build step and no script.
//
// Each route is the readers' or the operator's (routes.go): --public opens
// the readers' to anyone, the operator's always ask for the access token.
// The readers' answers are built once per change of the store's data and
// served from memory (cache.go); on a --public listener an anonymous
// reader's is one the caches in front may keep, naming what it shows, and
// anything else is kept by nobody (shared.go). What varies an answer is
// said once (key.go): the query parameters each reader's route reads, and
// a region's code in capitals; the shipped Varnish VCL keys by the same.
//
// It only reads: the database is opened read-only by the caller, and the
// quota report comes from a function the caller wires (the report package
// over the limiter and the ledger). Every upstream string reaches a page
// through html/template, which escapes it for where it lands.
//
// What is where: the read side: the JSON API (/api/v1) and the
// server-rendered dashboard, templates and stylesheet embedded, charts as
// SVG; read-only over the store (docs/api.md); /readyz over the checks the
// command gives it; the /healthz ask of ingest probe; a chart and search
// results as a terminal shows them (ChartJSON.WriteText, WriteHits); regions
// by name and by area from the catalogue it is handed (Config.Regions,
// regions.Builtin by default: places.go), the front page led by the reader's
// region (lead.go, front.go). Arranged by resource, each file holding its
// JSON shape, its read and its handlers (API and page): the chart, the ways
// between charts and a chart with no run (chart.go), the video (video.go),
// search (search.go), the front page (front.go, lead.go), what trends
// worldwide (worldwide.go, over store.LatestCharts), the Atom feeds of a
// region's chart and of the worldwide page (feed.go), the video every
// reader's output shows (card.go); the operator's page with /api/v1/quota
// (operator.go) apart from the runs (runs.go); around them the kept answers
// (cache.go, bounded by package kept), built again by a watcher when the
// store's data moves, who may keep each answer and the keys it names
// (shared.go), the answer of a request over the budget of anonymous
// readers' builds (budget.go, the budget in package throttle), the
// language each upstream string is marked with, from its script and
// region (lang.go), the sign-in's pages and who each route answers
// (auth.go, personal.go; the token's strength and the sessions in package
// signin), the API metered (ratelimit.go, the meter in package throttle),
// the listener's quota report and the line it says (listen.go; the port and
// the probes in package listener), the
// route table (routes.go), the templates and how a page is sent (pages.go,
// their functions assembled beside the server in funcs.go), the API's errors
// and index (api.go), the parameters (params.go) and the words a page uses
// (words.go).
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/kept"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/throttle"
	"github.com/ingestworks/ingest/web/transport"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Config is what the handlers read from.
type Config struct {
	DB *store.DB
	// Report builds the quota report (pools, breakdowns, plan, regions).
	Report func(ctx context.Context) (*report.Report, error)
	// QuotaKey is the key whose ledger the usage charts read.
	QuotaKey string
	// Usage is the quota's ledger the operator's usage charts read (the
	// wiring hands it, as it hands every reader of the ledger); nil
	// charts nothing.
	Usage Usage
	// Token, when set, is asked of every request for the data
	// (INGEST_UI_TOKEN).
	Token string
	// Listen is the listener's address and Public says its data is meant to
	// be public: with Token they decide what is served (AccessFor).
	Listen string
	Public bool
	// Routes are the caller's own entries of the route table (the daemon's
	// /metrics and /readyz), under the same rules as the server's.
	Routes []Route
	// Meter puts every API request under the clients' plans
	// (ratelimit.go, package throttle); nil serves the API unmetered, which only a listener
	// that is not --public may do.
	Meter *throttle.Meter
	// TrustedProxies are the peers whose X-Forwarded-For names the client,
	// for the plans and for the throttle of wrong tokens; any other peer
	// is the client, whatever the header says.
	TrustedProxies []netip.Prefix
	// AuthFailed counts each failed attempt at the access token by
	// outcome: rejected (compared, wrong) or throttled (not compared: the
	// address or every address waits); nil counts nothing.
	AuthFailed func(outcome string)
	// SessionTTL is how long a sign-in lasts; signin.DefaultTTL when zero.
	SessionTTL time.Duration
	// Sessions keep the sign-ins: the database's (clients.Sessions), so
	// that every replica on it honours a sign-in and a sign-out ends it on
	// all. Nil keeps them in the process, for a server without a database.
	Sessions signin.Store
	// Clock is the house's, required: the sessions, the throttle of wrong
	// tokens, the meter's plans, the kept answers and the pages' ages are
	// read on it.
	Clock ingest.Clock
	// NoThumbnails leaves the videos' thumbnails out of the pages, and
	// their image host out of the policy (offline or private use).
	NoThumbnails bool
	// Kept bounds the readers' answers kept in memory (package kept); each
	// zero field takes its default.
	Kept kept.Bound
	// Timeout bounds each request's work; 5s when zero.
	Timeout time.Duration
	Logger  *slog.Logger
	// Regions names the regions the pages show and groups them by area;
	// regions.Builtin when nil.
	Regions regions.Catalogue
	// PublicURL is the site's address as its readers reach it, behind any
	// proxy (--public-url): the feeds' links, the pages' canonical
	// addresses and the sitemap are absolute under it. Nil leaves links
	// relative, no canonical address, and no sitemap; it is never taken
	// from a request's Host.
	PublicURL *url.URL
	// Search is where the pages' search form points: "" for this
	// server's own /search. A published site (docs/operations/readers.md,
	// "Publish") has no search of its own: SearchURL there, and with
	// NoSearch the form and the link are left out.
	SearchURL string
	NoSearch  bool
	// Directory says the site is built to be written into a directory
	// (Published): its API index lists only what a directory holds.
	Directory bool
	// Cache is how long the caches in front and browsers may keep a
	// public reader's answer (--cache-control); when nil,
	// edge.DefaultPolicy, or edge.PurgedPolicy with a Purge.
	Cache *edge.Policy
	// Purge, when set, is the caches in front, each told the keys
	// (Surrogate-Key) of the answers a move of the data mark changed since
	// the mark kept for it, for it to drop them (purge.go). Nil tells no
	// one.
	Purge Purger
	// Derived shows the figures ingest computes rather than receives
	// (movement, peak rank, days on chart, trends), labelled as computed:
	// the key's standing's --derived (docs/explanation/terms.md, III.E.4.h).
	Derived bool
}

// Server serves the API and the dashboard.
type Server struct {
	cfg    Config
	access Access
	pages  *pages
	// signedPages draw the header of a signed-in operator on a listener
	// whose pages anyone reads (personal.go); nil elsewhere.
	signedPages *pages
	mux         *http.ServeMux
	daily       dailyCache
	charts      chartsCache

	sessions *signin.Sessions
	throttle *throttle.Throttle
	csrf     *http.CrossOriginProtection
	policy   string
	static   *transport.Static
	cache    edge.Policy // the lifetimes of a shared answer (shared.go)
	answers  answers
	purging  purging          // the purge's watchers (purge.go)
	budget   *throttle.Budget // the builds anonymous readers may run at once (budget.go)
	places   places
	front    frontIndex
	// sitemapBound, when set, is the addresses of one sitemap file in
	// place of the protocol's bound (tests of the index).
	sitemapBound int
}

// New returns the handler of the API and the dashboard.
func New(cfg Config) (*Server, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		return nil, errors.New("web: Config.Clock is required: the house's clock")
	}
	if cfg.Regions == nil {
		cfg.Regions = regions.Builtin
	}
	names := places{cat: cfg.Regions}
	access := AccessFor(cfg.Token, cfg.Listen, cfg.Public)
	if access == Public && cfg.Meter == nil {
		// The anonymous plan is what opens the readers' API to anyone, and a
		// client's token is read only by the meter: without it a wrong token
		// would be served as anyone.
		return nil, fmt.Errorf("web: a --public listener needs the API's meter")
	}
	dir, _ := fs.Sub(assets, "static") // the directory is embedded
	static, err := transport.NewStatic(dir)
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	p, err := parsePages(templateFuncs(access == TokenRequired, access != Public, static.Path, names, cfg.searchAt()))
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, access: access, pages: p, mux: http.NewServeMux(), static: static, places: names,
		sessions: signin.NewSessions(cfg.SessionTTL, cfg.Clock, cfg.Sessions), throttle: throttle.New(cfg.Clock), csrf: http.NewCrossOriginProtection(), policy: policy(!cfg.NoThumbnails, cfg.SearchURL)}
	if access == Public && cfg.Token != "" {
		if s.signedPages, err = parsePages(templateFuncs(true, true, static.Path, names, cfg.searchAt())); err != nil {
			return nil, err
		}
	}
	if access == Public && cfg.PublicURL == nil {
		cfg.Logger.Warn("no --public-url: the feeds' links stay relative, the pages name no canonical address, and there is no sitemap; set it to the site's address as readers reach it (docs/operations/readers.md)")
	}
	s.cache = edge.DefaultPolicy
	if cfg.Purge != nil {
		s.cache = edge.PurgedPolicy
	}
	if cfg.Cache != nil {
		s.cache = *cfg.Cache
	}
	s.answers.set = kept.NewSet[*answer](cfg.Kept)
	s.answers.closed = make(chan struct{})
	s.budget = throttle.DefaultBudget()
	s.routes()
	if cfg.Purge != nil && cfg.DB != nil {
		s.purgeWatchers()
	}
	return s, nil
}

// deadline gives each request's reads a context deadline.
func (s *Server) deadline(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
		defer cancel()
		h(w, r.WithContext(ctx))
	}
}

// ServeHTTP sets the headers every answer carries and serves the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No page runs a script: the policy says so, as a second wall behind
	// the templates' escaping.
	h.Set("Content-Security-Policy", s.policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(keptByNobody{w}, r)
}

// keptByNobody gives an answer the mux writes itself (the redirect to a
// cleaned path, a method not allowed) the Cache-Control of every answer
// but a reader's 200 (shared.go), which the transport sets on the rest:
// without one, a cache in front keeps it by its own heuristics.
type keptByNobody struct{ http.ResponseWriter }

func (w keptByNobody) WriteHeader(code int) {
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", personal)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap is the writer underneath, for http.ResponseController.
func (w keptByNobody) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Kept is how many readers' answers, and how many bytes, are kept in
// memory now (cache.go).
func (s *Server) Kept() (answers, bytes int) { return s.answers.set.Held() }

// Builds is how many readers' answers were built to be kept: first (a
// page with no copy), beside the requests (a copy out of date, served
// meanwhile), and how many requests waited for a first build (cache.go).
func (s *Server) Builds() (first, beside, waited int64) {
	beside = s.answers.rebuilds.Load()
	return s.answers.builds.Load() - beside, beside, s.answers.waited.Load()
}

// Budget is what the budget of anonymous readers' builds did and holds
// now (budget.go).
func (s *Server) Budget() throttle.BudgetFigures { return s.budget.Figures() }

// Access is what this server serves.
func (s *Server) Access() Access { return s.access }

// ThumbnailHost is the one image host the pages load from: YouTube's,
// where the upstream's default thumbnails live.
const ThumbnailHost = "i.ytimg.com"

// policy is the Content-Security-Policy: no script at all; images from
// this server and, with thumbnails, from ThumbnailHost alone.
func policy(thumbnails bool, searchURL string) string {
	img := "img-src 'self' data:"
	if thumbnails {
		img += " https://" + ThumbnailHost
	}
	form := "form-action 'self'"
	if u, err := url.Parse(searchURL); err == nil && u.Host != "" {
		form += " " + u.Scheme + "://" + u.Host // the search another host answers
	}
	return "default-src 'none'; style-src 'self'; " + img + "; " + form + "; frame-ancestors 'none'; base-uri 'none'"
}

// searchAt is where the search form points, "" for none.
func (c Config) searchAt() string {
	switch {
	case c.NoSearch:
		return ""
	case c.SearchURL != "":
		return c.SearchURL
	}
	return "/search"
}
