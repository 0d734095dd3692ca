package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
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
