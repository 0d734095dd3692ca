package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// While the process starts, /healthz answers 200, /readyz 503 "starting"
// with what the start waits on, and every other path 503; once the site is
// handed over, it answers everything.
func TestStartingAnswersUntilTheSiteServes(t *testing.T) {
	s := NewStarting("reading the catalogue")
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var st ReadyState
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
}
