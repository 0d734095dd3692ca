// Package web is the read side of ingest for people: a versioned JSON API
// (/api/v1/...) and a server-rendered dashboard at / over the store, with
// its templates, stylesheet and charts (SVG drawn by the templates)
// embedded, so the binary serves it with no build step and no script.
//
// It only reads: the database is opened read-only by the caller, and the
// quota report comes from a function the caller wires (the report package
// over the limiter and the ledger). Every upstream string reaches a page
// through html/template, which escapes it for where it lands.
package web

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
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
	// Token, when set, is asked of every request (INGEST_UI_TOKEN).
	Token string
	// Timeout bounds each request's work; 5s when zero.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Server serves the API and the dashboard.
type Server struct {
	cfg   Config
	pages *pages
	mux   *http.ServeMux
	daily dailyCache
}

// New returns the handler of the API and the dashboard.
func New(cfg Config) (*Server, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, pages: p, mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(assets, "static") // the directory is embedded
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.handle("GET /api/v1/search", s.apiSearch)
	s.handle("GET /api/v1/charts/{region}", s.apiChart)
	s.handle("GET /api/v1/videos/{id}", s.apiVideo)
	s.handle("GET /api/v1/quota", s.apiQuota)
	s.handle("GET /api/v1/runs", s.apiRuns)
	s.handle("/api/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "not_found", "", "no such route: "+r.URL.Path)
	})
	s.handle("GET /{$}", s.overviewPage)
	s.handle("GET /charts/{region}", s.chartPage)
	s.handle("GET /videos/{id}", s.videoPage)
	s.handle("GET /search", s.searchPage)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		s.pageError(w, r, http.StatusNotFound, "No such page: "+r.URL.Path)
	})
}

// handle registers h behind the access token and the request deadline.
func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.mux.Handle(pattern, s.authorized(s.deadline(h)))
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
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// Register adds the API and the dashboard to mux beside what it already
// serves (ingest run --listen: /metrics, /healthz, /quota).
func (s *Server) Register(mux *http.ServeMux) {
	mux.Handle("/api/", s)
	mux.Handle("/static/", s)
	mux.Handle("/login", s)
	mux.Handle("/charts/", s)
	mux.Handle("/videos/", s)
	mux.Handle("/search", s)
	mux.Handle("/{$}", s)
}

// NewHTTPServer returns an http.Server for h with timeouts on every phase
// of a request, so a slow client cannot hold a connection.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
}
