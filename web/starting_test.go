package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingestworks/ingest/web/listener"
)

// While the process starts, /healthz answers 200, /readyz 503 "starting"
// with what the start waits on, and every other path 503; once the site is
// handed over, it answers everything.
func TestStartingAnswersUntilTheSiteServes(t *testing.T) {
	s := NewStarting(func() string { return "reading the catalogue" }, nil, Config{})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var st listener.ReadyState
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		return rec.Code, st.Status
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz while starting: %d, want 200", code)
	}
	if code, status := get("/readyz"); code != 503 || status != StatusStarting {
		t.Errorf("/readyz while starting: %d %q, want 503 %q", code, status, StatusStarting)
	}
	if code, _ := get("/api/v1/charts/US"); code != 503 {
		t.Errorf("/api/v1/charts/US while starting: %d, want 503", code)
	}
	s.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, path := range []string{"/healthz", "/readyz", "/api/v1/charts/US"} {
		if code, _ := get(path); code != http.StatusTeapot {
			t.Errorf("%s once the site serves: %d, want the site's answer", path, code)
		}
	}
	// Begun again (a daemon that plans again on a catalogue read late):
	// starting until a site serves again.
	s.Again()
	if code, status := get("/readyz"); code != 503 || status != StatusStarting {
		t.Errorf("/readyz begun again: %d %q, want 503 %q", code, status, StatusStarting)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz begun again: %d, want 200", code)
	}
}

// While the process starts, /metrics serves the start's series with 200,
// to the bearer of the token when one is asked for (a --public listener),
// and is 503 as any other path when there are none to serve or a --public
// listener has no token to ask for.
func TestStartingServesMetrics(t *testing.T) {
	series := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ingest_start_seconds 1\n")) })
	doing := func() string { return "reading the catalogue" }
	get := func(s *Starting, bearer string) int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/metrics", nil)
		if bearer != "" {
			r.Header.Set("Authorization", "Bearer "+bearer)
		}
		s.ServeHTTP(rec, r)
		return rec.Code
	}
	if code := get(NewStarting(doing, series, Config{Listen: "0.0.0.0:8080", Token: "a-token-of-twenty-characters"}), ""); code != 200 {
		t.Errorf("/metrics while starting: %d, want 200", code)
	}
	guarded := NewStarting(doing, series, Config{Public: true, Token: "a-token-of-twenty-characters"})
	if code := get(guarded, ""); code != 401 {
		t.Errorf("/metrics while starting, a token asked and none given: %d, want 401", code)
	}
	if code := get(guarded, "wrong"); code != 401 {
		t.Errorf("/metrics while starting, a wrong token: %d, want 401", code)
	}
	if code := get(guarded, "a-token-of-twenty-characters"); code != 200 {
		t.Errorf("/metrics while starting, the token: %d, want 200", code)
	}
	if code := get(NewStarting(doing, nil, Config{}), ""); code != 503 {
		t.Errorf("/metrics while starting with none to serve: %d, want 503", code)
	}
	// A --public listener without a token serves its /metrics to nobody,
	// as the site's does not, from its start on.
	if code := get(NewStarting(doing, series, Config{Public: true}), ""); code != 503 {
		t.Errorf("/metrics while a --public listener without a token starts: %d, want 503", code)
	}
}
