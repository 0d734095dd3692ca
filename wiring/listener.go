package wiring

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/listener"
)

// Listener is run --listen's port, served from the moment it opens: until
// the daemon has read what its start waits on (the region catalogue, the
// upstream's clock, the day's plan) /healthz answers, /readyz says
// "starting" and /metrics serves the process's series and the start's
// (which step it waits on, since when), so that a slow upstream never
// reads as a dead process nor as a target down.
type Listener struct {
	url      string
	starting *web.Starting
	start    *metrics.Start
	close    func()
}

// The steps of a start, as /readyz and ingest_start_step_seconds name
// them.
const (
	stepOpen      = "opening the database, the limiter and the upstream's clock"
	stepCatalogue = "reading the region catalogue"
	stepPlan      = "making the day's plan"
	stepSite      = "building the site"
)

// OpenListener opens cfg's address (Listen: a port in use is a
// ConfigError) and serves it at once, b on its /metrics meanwhile.
func (h *Host) OpenListener(ctx context.Context, cfg web.Config, b metrics.Build) (*Listener, error) {
	ln, err := listener.Listen(cfg.Listen)
	if err != nil {
		return nil, err
	}
	return h.ServeListener(ctx, ln, cfg, b), nil
}

// ServeListener serves ln at once, as OpenListener does the port it opens:
// the edge a simulation swaps for a listener of its own. Its /metrics asks
// for what the site's will (web.NewStarting).
func (h *Host) ServeListener(ctx context.Context, ln net.Listener, cfg web.Config, b metrics.Build) *Listener {
	start := metrics.NewStart(b, h.clock(), stepOpen)
	st := web.NewStarting(start.Doing, start.Handler(), cfg)
	shutdown := listener.Start(ctx, ln, st, h.Logger)
	l := &Listener{url: "http://" + ln.Addr().String() + "/", starting: st, start: start}
	l.close = sync.OnceFunc(shutdown)
	h.Logger.Info("listening", "url", l.url, "serves", "/healthz and /metrics; /readyz says starting until the day's plan is made")
	return l
}

// Step says the start waits on step from now on; a nil Listener (no
// --listen) has nobody to tell.
func (l *Listener) Step(step string) {
	if l != nil {
		l.start.Step(step)
	}
}

// Again says the daemon starts anew at step: /readyz says "starting" and
// /metrics serves the start's series until Serve hands it a site again;
// a nil Listener has nobody to tell.
func (l *Listener) Again(step string) {
	if l != nil {
		l.start.Again(step)
		l.starting.Again()
	}
}

// Serve hands every request from now on to site.
func (l *Listener) Serve(site http.Handler) { l.starting.Serve(site) }

// Close shuts the listener down, giving requests in flight two seconds;
// a second Close does nothing.
func (l *Listener) Close() { l.close() }
