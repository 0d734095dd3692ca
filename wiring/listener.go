package wiring

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/ingestworks/ingest/web"
)

// Listener is run --listen's port, served from the moment it opens: until
// the daemon has read what its start waits on (the region catalogue, the
// upstream's clock, the day's plan) /healthz answers and /readyz says
// "starting", so that a slow upstream never reads as a dead process.
type Listener struct {
	url      string
	starting *web.Starting
	close    func()
}

// startingFor is what /readyz says the start waits on.
const startingFor = "reading the region catalogue and making the day's plan"

// OpenListener opens addr (Listen: a port in use is a ConfigError) and
// serves it at once.
func (h *Host) OpenListener(ctx context.Context, addr string) (*Listener, error) {
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	return h.ServeListener(ctx, ln), nil
}

// ServeListener serves ln at once, as OpenListener does the port it opens:
// the edge a simulation swaps for a listener of its own.
func (h *Host) ServeListener(ctx context.Context, ln net.Listener) *Listener {
	st := web.NewStarting(startingFor)
	shutdown := web.Start(ctx, ln, st, h.Logger)
	l := &Listener{url: "http://" + ln.Addr().String() + "/", starting: st}
	l.close = sync.OnceFunc(shutdown)
	h.Logger.Info("listening", "url", l.url, "serves", "/healthz; /readyz says starting until the day's plan is made")
	return l
}

// Serve hands every request from now on to site.
func (l *Listener) Serve(site http.Handler) { l.starting.Serve(site) }

// Close shuts the listener down, giving requests in flight two seconds;
// a second Close does nothing.
func (l *Listener) Close() { l.close() }
