package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web/throttle"
)

// askFrom sends a GET of path from addr with the header's name/value
// pairs.
func askFrom(s *Server, addr, path string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = addr
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// TestPublicJSONAnyOrigin: a --public listener's public JSON routes say
// Access-Control-Allow-Origin: *, so another site's page can read them;
// the operator's routes, the pages, and every route of a listener that is
// not --public never do.
func TestPublicJSONAnyOrigin(t *testing.T) {
	t.Parallel()
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	db := audienceDB(t)
	for _, public := range []bool{true, false} {
		s, err := New(Config{Clock: clock.System, DB: db, Token: testToken, Listen: ":8080", Public: public, Report: noReport, Routes: daemonRoutes(), Meter: anyMeter()})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			path string
			want string
		}{
			{"/api/v1/charts/US", "*"},
			{"/api/v1/search?q=alpha", "*"},
			{"/api/v1/videos/vid-a", "*"},
			{"/api/v1/worldwide", "*"},
			{"/api/v1", "*"},
			{"/api/v1/quota", ""},
			{"/api/v1/runs", ""},
			{"/quota", ""},
			{"/metrics", ""},
			{"/charts/US", ""},
		} {
			if !public {
				tc.want = ""
			}
			rec := askFrom(s, "192.0.2.1:4000", tc.path, "Authorization", "Bearer "+testToken, "Origin", "https://other.example")
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tc.want || rec.Code == 401 || rec.Code == 404 {
				t.Errorf("--public %v, %s: got %d, Access-Control-Allow-Origin %q; want served, %q", public, tc.path, rec.Code, got, tc.want)
			}
		}
	}
}

// TestAnonymousBudgetPerSlash64: the addresses of one IPv6 /64 share one
// anonymous budget, as one host's; another /64 has its own.
func TestAnonymousBudgetPerSlash64(t *testing.T) {
	t.Parallel()
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte("plans:\n  anonymous: {limit: 2, window: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: noTokens{}}
	s, err := New(Config{Clock: clock.System, DB: audienceDB(t), Listen: ":8080", Public: true, Meter: m})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; n < 100 && askFrom(s, "[2001:db8:1:2::1]:4000", "/api/v1/charts/US").Code == 200; n++ {
	}
	if n == 0 || n == 100 {
		t.Fatalf("one address's anonymous budget: %d requests served, want some and then 429", n)
	}
	for _, tc := range []struct {
		addr string
		want int
	}{
		{"[2001:db8:1:2::2]:4000", http.StatusTooManyRequests},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:4000", http.StatusTooManyRequests},
		{"[2001:db8:1:3::1]:4000", 200},
		{"192.0.2.1:4000", 200},
	} {
		if rec := askFrom(s, tc.addr, "/api/v1/charts/US"); rec.Code != tc.want {
			t.Errorf("after 2001:db8:1:2::1 spent its budget, from %s: got %d, want %d", tc.addr, rec.Code, tc.want)
		}
	}
}

// countingTokens knows one client token until it is revoked, counting
// the look-ups.
type countingTokens struct {
	mu      sync.Mutex
	hash    string
	revoked bool
	reads   int
}

func (c *countingTokens) TokenPlan(_ context.Context, hash string) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return "standard", hash == c.hash && !c.revoked, nil
}
func (*countingTokens) TokenUsed(context.Context, string, time.Time) error { return nil }

// TestTokenLookupsAreCached: a client's requests, and the operator's,
// read the token's plan at most once per throttle.LookupFor; a revoked token is
// refused once that much time has passed, never later.
func TestTokenLookupsAreCached(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	const client = "ingest_a-client-token-for-the-cache"
	tokens := &countingTokens{hash: clients.TokenHash(client)}
	m := &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: ratelimit.NewMemory(), Tokens: tokens}
	s, err := New(Config{DB: audienceDB(t), Token: testToken, Listen: ":8080", Public: true, Meter: m, Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		for _, tok := range []string{client, testToken} {
			if rec := askFrom(s, "192.0.2.1:4000", "/api/v1/charts/US", "Authorization", "Bearer "+tok); rec.Code != 200 {
				t.Fatalf("got %d", rec.Code)
			}
		}
	}
	if tokens.reads != 2 {
		t.Errorf("20 requests of a client and 20 of the operator read the tokens %d times, want 2", tokens.reads)
	}
	tokens.mu.Lock()
	tokens.revoked = true
	tokens.mu.Unlock()
	now = now.Add(throttle.LookupFor - time.Millisecond)
	if rec := askFrom(s, "192.0.2.1:4000", "/api/v1/charts/US", "Authorization", "Bearer "+client); rec.Code != 200 {
		t.Errorf("a revoked token within the look-up's life: got %d, want 200 (the plan as read)", rec.Code)
	}
	now = now.Add(time.Millisecond)
	if rec := askFrom(s, "192.0.2.1:4000", "/api/v1/charts/US", "Authorization", "Bearer "+client); rec.Code != http.StatusUnauthorized {
		t.Errorf("a revoked token %s after it was read: got %d, want 401", throttle.LookupFor, rec.Code)
	}
}

// TestSecureCookieBehindTrustedProxy: the session cookie is Secure when a
// trusted proxy says the browser came over https (X-Forwarded-Proto), and
// not when any other peer says so.
func TestSecureCookieBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, Token: testToken, Listen: ":8080", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		peer, proto string
		secure      bool
	}{
		{"10.0.0.5:1", "https", true},
		{"10.0.0.5:1", "http", false},
		{"198.51.100.7:1", "https", false},
	} {
		c := client{s, tc.peer, "203.0.113.9"}
		w := c.do("POST", "/login", url.Values{"token": {testToken}}, map[string]string{"Sec-Fetch-Site": "same-origin", "X-Forwarded-Proto": tc.proto})
		if ck := sessionCookie(t, w); ck.Secure != tc.secure {
			t.Errorf("from %s saying %s: Secure %v, want %v", tc.peer, tc.proto, ck.Secure, tc.secure)
		}
	}
}
