package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

func TestAPI(t *testing.T) {
	m := NewAPI()
	m.Observe("free", "allowed")
	m.Observe("free", "allowed")
	m.Observe("anonymous", "refused")
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`ingest_api_requests_total{outcome="allowed",plan="free"} 2`,
		`ingest_api_requests_total{outcome="refused",plan="anonymous"} 1`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("no %s in\n%s", want, w.Body.String())
		}
	}
}

// TestAuthFailures: serve's and run's /metrics count failed attempts at
// the access token by outcome, every outcome from zero.
func TestAuthFailures(t *testing.T) {
	api, run := NewAPI(), New(Build{}, clock.System)
	for name, m := range map[string]struct {
		fail func(string)
		h    http.Handler
	}{"serve": {api.AuthFailed, api.Handler()}, "run": {run.Site().AuthFailed, run.Handler(downState{})}} {
		m.fail("rejected")
		m.fail("rejected")
		w := httptest.NewRecorder()
		m.h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		for _, want := range []string{`ingest_ui_auth_failures_total{outcome="rejected"} 2`,
			`ingest_ui_auth_failures_total{outcome="throttled"} 0`} {
			if !strings.Contains(w.Body.String(), want) {
				t.Errorf("%s: no %s in\n%.2000s", name, want, w.Body.String())
			}
		}
	}
}

// downState is a limiter that cannot be read.
type downState struct{}

func (downState) State(context.Context) ([]ingest.PoolState, error) { return nil, errors.New("down") }
func (downState) Backend() string                                   { return "redis" }
