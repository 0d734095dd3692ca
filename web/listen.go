package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
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
