package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
)

// QuotaReport answers the daemon's /quota: the report as JSON, or 500
// with the error when it cannot be built.
func QuotaReport(build func(context.Context) (*report.Report, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep, err := build(r.Context())
		if err != nil {
			replyReport(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		replyReport(w, http.StatusOK, rep.JSON())
	})
}

// replyReport writes the report as ingest report --json prints it: no
// escaping of <, > and &, which only matter inside HTML.
func replyReport(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the status is sent: a failure here is the client gone
}

// LimiterCheck is /readyz's check that the limiter answers.
func LimiterCheck(l report.StateReader) Check {
	return Check{Name: "limiter", Passed: l.Backend() + " answers",
		Probe: func(ctx context.Context) error { _, err := l.State(ctx); return err }}
}

// Start serves h on ln in the background, logging a failure of the
// listener; the func it returns shuts the server down, giving requests
// in flight two seconds.
func Start(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) (shutdown func()) {
	srv := NewHTTPServer(ln.Addr().String(), h)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", ingest.LogErr, err)
		}
	}()
	log.Debug("listening", "addr", ln.Addr().String())
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}
}

// Listen opens --listen's address. A port another process holds, or an
// address this host does not have, is a setting to change, a ConfigError
// (exit 2), so that a supervisor does not restart into it again and again.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		_, port, _ := net.SplitHostPort(addr)
		return nil, ingest.ConfigErrorf("--listen %s: address already in use: another process holds the port (ss -ltnp 'sport = :%s' names it); stop it or choose another port", addr, port)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, ingest.ConfigErrorf("--listen %s: this host has no such address: listen on one of its own, or on :PORT for every address", addr)
	case errors.Is(err, syscall.EACCES):
		return nil, ingest.ConfigErrorf("--listen %s: a port below 1024 needs a privilege this process lacks: use a port of 1024 or more", addr)
	case err != nil:
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves ui on addr (Listen) until ctx ends, then gives the requests
// in flight five seconds; attrs are what its log lines say of the site.
func Serve(ctx context.Context, addr string, ui http.Handler, log *slog.Logger, attrs ...any) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	srv := NewHTTPServer(addr, ui)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	url := "http://" + ln.Addr().String() + "/"
	log.Info("serving", append([]any{"url", url}, attrs...)...)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Serve returns as Shutdown begins; the requests in flight end first.
	<-drained
	log.Info("stopped serving: the requests in flight answered", "url", url)
	return nil
}

// UITokenEnv holds the dashboard's access token; an environment variable
// only, so that it never shows in a process list.
const UITokenEnv = "INGEST_UI_TOKEN"

// SayServing logs, once s serves at url, what it serves there. A listener
// on addr that serves the operational routes alone (not a loopback
// address, no token) is warned of first: the dashboard, the API and
// /quota would be public, so they are not served.
func (s *Server) SayServing(log *slog.Logger, url, addr string) {
	serves := "/metrics, /healthz, /readyz, /quota, the API and the dashboard"
	if s.Access() == OperationalOnly {
		serves = "/metrics, /healthz and /readyz"
		log.Warn("--listen serves only /healthz, /readyz and /metrics: it is not a loopback address and "+UITokenEnv+" is not set, so the dashboard, the API and /quota would be public",
			"addr", addr)
	}
	log.Info("serving", "url", url, "serves", serves)
}
