package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web/listener"
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
func LimiterCheck(l report.StateReader) listener.Check {
	return listener.Check{Name: "limiter", Passed: l.Backend() + " answers",
		Probe: func(ctx context.Context) error { _, err := l.State(ctx); return err }}
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
