package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web/listener"
)

// requestFor turns a ServeMux pattern into a request that matches it.
func requestFor(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "GET", pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(path, "x")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "style.css"
	}
	return method, path
}

// undecidedPools is a limiter with a window it cannot vouch for.
type undecidedPools struct{ pools }

func (undecidedPools) Undecided(context.Context) (string, error) { return "", nil }

// TestSiteRoutes: a command's site adds /readyz to readers, /metrics to
// the operator and /quota as the API, as the tests' servers take them
// (daemonRoutes) and docs/api.md lists them; /readyz asks the limiter
// first, then the command's own checks, then the limiter's window, and
// /quota answers the report the command builds.
func TestSiteRoutes(t *testing.T) {
	t.Parallel()
	scrape := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ingest_up 1\n")) })
	quota := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	own := []listener.Check{{Name: "database", Passed: "writable", Probe: func(context.Context) error { return nil }}}
	got := SiteRoutes(WriterReady(undecidedPools{}, own...), scrape, quota)
	want := daemonRoutes()
	if len(got) != len(want) {
		t.Fatalf("%d routes, want %d", len(got), len(want))
	}
	for i, rt := range got {
		if w := want[i]; rt.Pattern != w.Pattern || rt.Kind != w.Kind || rt.Audience != w.Audience {
			t.Errorf("route %d: %s kind %v audience %v, want %s kind %v audience %v", i, rt.Pattern, rt.Kind, rt.Audience, w.Pattern, w.Kind, w.Audience)
		}
	}
	ask := func(h http.Handler) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Code, rec.Body.String()
	}
	code, body := ask(got[0].Handler)
	var st listener.ReadyState
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusOK {
		t.Fatalf("/readyz: %d %s (%v)", code, body, err)
	}
	var names []string
	for _, c := range st.Checks {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"limiter", "database", "limiter_window"}) {
		t.Errorf("/readyz checks %v, want the limiter, the command's, then the window", names)
	}
	if code, body := ask(got[1].Handler); code != http.StatusOK || body != "ingest_up 1\n" {
		t.Errorf("/metrics: %d %q, want the command's registry", code, body)
	}
	if code, body := ask(got[2].Handler); code != http.StatusInternalServerError || !strings.Contains(body, "no report in this test") {
		t.Errorf("/quota: %d %q, want the report's error", code, body)
	}
}
