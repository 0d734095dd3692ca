package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteFollowsTheListenerRules sends a request to every entry of
// the route table under each access: a new route is guarded by being in
// the table, with nothing else to remember.
func TestEveryRouteFollowsTheListenerRules(t *testing.T) {
	t.Parallel()
	ops := Route{Pattern: "GET /readyz", Kind: Operational, Handler: http.HandlerFunc(healthz)}
	for _, tc := range []struct {
		name           string
		token, listen  string
		public         bool
		access         Access
		api, page, ops int // status of an API route, a page, an operational route
	}{
		{"token", "t", "0.0.0.0:8080", false, TokenRequired, 401, 303, 200},
		{"no token, public", "", ":8080", false, OperationalOnly, 404, 404, 200},
		{"no token, --public", "", ":8080", true, Open, 0, 0, 200},
		{"no token, loopback", "", "127.0.0.1:8080", false, Open, 0, 0, 200},
		{"no token, localhost", "", "localhost:8080", false, Open, 0, 0, 200},
		{"no token, ::1", "", "[::1]:8080", false, Open, 0, 0, 200},
		{"no token, a name", "", "example.org:8080", false, OperationalOnly, 404, 404, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Token: tc.token, Listen: tc.listen, Public: tc.public, Routes: []Route{ops}})
			if err != nil {
				t.Fatal(err)
			}
			if s.Access() != tc.access {
				t.Fatalf("access %v, want %v", s.Access(), tc.access)
			}
			if tc.access == Open {
				return // handlers run: the API and page tests cover them
			}
			for _, rt := range s.table() {
				method, path := requestFor(rt.Pattern)
				want := map[Kind]int{API: tc.api, Page: tc.page, Operational: tc.ops, SignIn: 200}[rt.Kind]
				if rt.Kind == SignIn && tc.access == OperationalOnly {
					want = 404
				}
				if rt.Pattern == "POST /login" && want == 200 {
					want = 401 // no form, no token: the form again
				}
				if rt.Pattern == "POST /logout" && want == 200 {
					want = 303 // signed out: back to the sign-in
				}
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
				if rec.Code != want {
					t.Errorf("%s (%s): got %d, want %d", rt.Pattern, path, rec.Code, want)
				}
			}
		})
	}
}

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
