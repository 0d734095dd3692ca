package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/throttle"
)

// daemonRoutes stand for the routes the callers add (wiring: serve's and
// run --listen's), under the same names, kinds and audiences.
func daemonRoutes() []Route {
	ok := http.HandlerFunc(healthz)
	return []Route{
		{Pattern: "GET /readyz", Kind: Operational, Audience: Reader, Handler: ok},
		{Pattern: "GET /metrics", Kind: Operational, Audience: Operator, Handler: ok},
		{Pattern: "GET /quota", Kind: API, Handler: ok},
	}
}

// audienceDB is a database holding one US chart.
func audienceDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	chartRun(t, db, "", time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), ingest.Video{ID: "vid-a", Title: "Alpha"})
	return db
}

// documentedRoutes reads the table of docs/api.md's "Who may reach each
// route": each route's pattern and its audience, public or operator.
func documentedRoutes(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Who may reach each route\n")
	if !ok {
		t.Fatal(`docs/api.md has no section "Who may reach each route"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, sec, ok = strings.Cut(sec, "\n| Route | Audience |")
	if !ok {
		t.Fatal(`docs/api.md's "Who may reach each route" has no table of Route and Audience`)
	}
	out := map[string]string{}
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		out[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.TrimSpace(cells[2])
	}
	return out
}

// TestEveryRouteIsDocumentedPublicOrOperator walks every route of a
// server with the callers' routes and fails on one docs/api.md does not
// mark public or operator, or marks otherwise than the table says.
func TestEveryRouteIsDocumentedPublicOrOperator(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, Token: testToken, Listen: ":8080", Public: true, Routes: daemonRoutes(), Meter: anyMeter()})
	if err != nil {
		t.Fatal(err)
	}
	docs := documentedRoutes(t)
	for _, rt := range s.table() {
		want := rt.Audience.String()
		if rt.Kind == SignIn {
			want = "public" // reachable without a token by design
		}
		switch got, ok := docs[rt.Pattern]; {
		case !ok:
			t.Errorf("route %q is not in docs/api.md's table of who may reach each route", rt.Pattern)
		case got != "public" && got != "operator":
			t.Errorf("route %q: docs/api.md says %q, want public or operator", rt.Pattern, got)
		case got != want:
			t.Errorf("route %q: docs/api.md says %s, the route table %s", rt.Pattern, got, want)
		}
		delete(docs, rt.Pattern)
	}
	for p := range docs {
		t.Errorf("docs/api.md lists %q, which no server registers", p)
	}
}

// TestTwoAudiences sends every route of the table, under each listener,
// without a token (as a browser and as a script), with a wrong one and
// with the right one, and checks each answer against whose the route is:
// a handler's own answer (as a loopback listener gives it), the sign-in,
// a 401 in JSON, or absent (404).
func TestTwoAudiences(t *testing.T) {
	t.Parallel()
	db := audienceDB(t)
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte("plans:\n  anonymous: {limit: 1000000, window: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	build := func(token, listen string, public bool) *Server {
		m := &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: noTokens{}}
		s, err := New(Config{Clock: clock.System, DB: db, Report: noReport, Token: token, Listen: listen, Public: public, Routes: daemonRoutes(), Meter: m})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// What each route answers when it is served to anyone: the handler's
	// own status.
	local := build("", "127.0.0.1:8080", false)
	const (
		absent = "absent"
		open   = "open"
		token  = "token"
	)
	for _, tc := range []struct {
		name          string
		token, listen string
		public        bool
		// reach of a reader's and an operator's data route
		reader, operator string
	}{
		{"--public with a token", testToken, ":8080", true, open, token},
		{"--public without a token", "", ":8080", true, open, absent},
		{"--public on loopback without a token", "", "127.0.0.1:8080", true, open, absent},
		{"a token, not --public", testToken, ":8080", false, token, token},
		{"loopback, nothing", "", "127.0.0.1:8080", false, open, open},
		{"no token, not loopback", "", ":8080", false, absent, absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(tc.token, tc.listen, tc.public)
			for i, rt := range s.table() {
				method, path := requestFor(rt.Pattern)
				if method != "GET" {
					continue // the sign-in's forms: auth_test.go
				}
				reach := map[Audience]string{Reader: tc.reader, Operator: tc.operator}[rt.Audience]
				switch {
				case rt.Kind == Operational && (rt.Audience == Reader || !tc.public):
					reach = open
				case rt.Kind == SignIn && tc.reader != absent:
					reach = open
				case rt.Kind == SignIn:
					reach = absent
				}
				// Each route's wrong token from an address of its own, so
				// that the throttle of wrong tokens holds none back.
				ask := func(s *Server, hdr ...string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(method, path, nil)
					req.RemoteAddr = fmt.Sprintf("192.0.2.%d:4000", i+1)
					for i := 0; i+1 < len(hdr); i += 2 {
						req.Header.Set(hdr[i], hdr[i+1])
					}
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, req)
					return rec
				}
				own := ask(local).Code
				browser, script := ask(s, "Accept", "text/html,*/*;q=0.8"), ask(s, "Accept", "*/*")
				wrongTok := ask(s, "Authorization", "Bearer not-the-token-at-all")
				right := ask(s, "Authorization", "bearer "+testToken)
				where := rt.Pattern + " (" + path + ")"
				switch reach {
				case absent:
					for _, rec := range []*httptest.ResponseRecorder{browser, script, wrongTok, right} {
						if rec.Code != http.StatusNotFound {
							t.Errorf("%s: got %d, want 404 (absent)", where, rec.Code)
						}
					}
				case open:
					for _, rec := range []*httptest.ResponseRecorder{browser, script} {
						if rec.Code != own {
							t.Errorf("%s without a token: got %d, want %d (its handler's)", where, rec.Code, own)
						}
					}
				case token:
					if script.Code != http.StatusUnauthorized || !strings.HasPrefix(script.Header().Get("Content-Type"), "application/json") {
						t.Errorf("%s, a script without a token: got %d %s, want 401 JSON", where, script.Code, script.Header().Get("Content-Type"))
					}
					wantBrowser := http.StatusUnauthorized
					if rt.Kind == Page {
						wantBrowser = http.StatusSeeOther
					}
					if browser.Code != wantBrowser {
						t.Errorf("%s, a browser without a token: got %d, want %d", where, browser.Code, wantBrowser)
					}
					if wrongTok.Code != http.StatusUnauthorized {
						t.Errorf("%s, a wrong token: got %d, want 401", where, wrongTok.Code)
					}
					if right.Code != own {
						t.Errorf("%s, the right token: got %d, want %d (its handler's)", where, right.Code, own)
					}
				}
			}
		})
	}
}

// clientTokens knows one client token, on the standard plan.
type clientTokens struct{ hash string }

func (c clientTokens) TokenPlan(_ context.Context, hash string) (string, bool, error) {
	return "standard", hash == c.hash, nil
}
func (clientTokens) TokenUsed(context.Context, string, time.Time) error { return nil }

// TestPublicReadersAreMetered: on a --public listener with a token, a
// reader without one is metered by the anonymous plan, a client's token by
// its plan, the operator's not at all; a client's token never opens an
// operator's route.
func TestPublicReadersAreMetered(t *testing.T) {
	t.Parallel()
	const client = "a-client-token-of-the-standard-plan"
	m := &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: ratelimit.NewMemory(), Tokens: clientTokens{clients.TokenHash(client)}}
	s, err := New(Config{Clock: clock.System, DB: audienceDB(t), Token: testToken, Listen: ":8080", Public: true, Meter: m,
		Report: func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, auth string
		code       int
		plan       string // the RateLimit-Policy's plan, "" for none
	}{
		{"/api/v1/charts/US", "", 200, "anonymous"},
		{"/api/v1/charts/US", "Bearer " + client, 200, "standard"},
		{"/api/v1/charts/US", "Bearer " + testToken, 200, ""},
		{"/api/v1/runs", "", 401, ""},
		{"/api/v1/runs", "Bearer " + client, 401, ""},
		{"/api/v1/runs", "BEARER " + testToken, 200, ""},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		policy := rec.Header().Get("RateLimit-Policy")
		if rec.Code != tc.code || (tc.plan == "" && policy != "") || (tc.plan != "" && !strings.HasPrefix(policy, `"`+tc.plan+`"`)) {
			t.Errorf("%s with %q: got %d, policy %q; want %d, plan %q", tc.path, tc.auth, rec.Code, policy, tc.code, tc.plan)
		}
	}
}

// TestSmallThingsOfAPublicSite: /api/v1 and /api/v1/ answer the API's
// index; /charts without a region goes to the front page, which lists the
// charts; the auth scheme is read in any case; a script asking a page
// without a token gets a 401 in JSON, a browser the sign-in.
func TestSmallThingsOfAPublicSite(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, DB: audienceDB(t), Token: testToken, Listen: ":8080", Public: true, Meter: anyMeter(),
		Report: func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for _, path := range []string{"/api/v1", "/api/v1/"} {
		rec := get(path)
		var idx apiIndexJSON
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &idx) != nil || !slices.Contains(idx.Routes, apiIndexRoute{"GET /api/v1/search", "public"}) ||
			!slices.Contains(idx.Routes, apiIndexRoute{"GET /api/v1/runs", "operator"}) {
			t.Errorf("%s: got %d\n%s\nwant the index, public and operator routes", path, rec.Code, rec.Body)
		}
	}
	if rec := get("/charts"); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Errorf("/charts without a region: got %d to %q, want 303 to /", rec.Code, rec.Header().Get("Location"))
	}
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		if rec := get("/api/v1/runs", "Authorization", scheme+" "+testToken); rec.Code != 200 {
			t.Errorf("scheme %q: got %d, want 200", scheme, rec.Code)
		}
	}
	if rec := get("/operator", "Accept", "*/*"); rec.Code != http.StatusUnauthorized || !json.Valid(rec.Body.Bytes()) {
		t.Errorf("a script asking /operator without a token: got %d %s, want 401 JSON", rec.Code, rec.Body)
	}
	if rec := get("/operator", "Accept", "text/html,*/*;q=0.8"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
		t.Errorf("a browser asking /operator without a token: got %d to %q, want 303 to the sign-in", rec.Code, rec.Header().Get("Location"))
	}
}
