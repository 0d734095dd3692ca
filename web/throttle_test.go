package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web/throttle"
)

// client is one address sending requests to a server, on the clock the
// test moves.
type client struct {
	s    *Server
	addr string // RemoteAddr, host:port
	xff  string // X-Forwarded-For, when not empty
}

func (c client) do(method, target string, form url.Values, header map[string]string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	body := ""
	if form != nil {
		body = form.Encode()
	}
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.RemoteAddr = c.addr
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.xff != "" {
		req.Header.Set("X-Forwarded-For", c.xff)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	c.s.ServeHTTP(w, req)
	return w
}

// signIn posts the sign-in form with tok.
func (c client) signIn(tok string) *httptest.ResponseRecorder {
	return c.do("POST", "/login", url.Values{"token": {tok}}, sameOrigin)
}

// api asks an API route with tok as the bearer.
func (c client) api(tok string) *httptest.ResponseRecorder {
	return c.do("GET", "/api/v1/nothing", nil, map[string]string{"Authorization": "Bearer " + tok})
}

// wrong sends n wrong tokens through try (a sign-in or an API request)
// and wants each refused as wrong (401), not yet held back.
func wrong(t *testing.T, n int, try func(string) *httptest.ResponseRecorder) {
	t.Helper()
	for i := range n {
		if w := try(fmt.Sprintf("wrong-token-%02d-for-tests", i)); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d of %d: got %d, want 401\n%.300s", i+1, n, w.Code, w.Body)
		}
	}
}

// held wants w to be a 429 with Retry-After secs.
func held(t *testing.T, what string, w *httptest.ResponseRecorder, secs string) {
	t.Helper()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != secs {
		t.Fatalf("%s: got %d Retry-After %q, want 429 Retry-After %s\n%.400s", what, w.Code, w.Header().Get("Retry-After"), secs, w.Body)
	}
}

// TestWrongSignInsWait: after ten wrong sign-ins from one address within a
// minute, its attempts answer 429 with Retry-After, the right token
// included (it is not compared); the wait doubles while the address keeps
// failing; a browser signed in before, and another address, go on as
// before.
func TestWrongSignInsWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	a, b := client{s, "198.51.100.7:40000", ""}, client{s, "203.0.113.9:50000", ""}
	session := sessionCookie(t, a.signIn(testToken))

	wrong(t, 10, a.signIn)
	w := a.signIn("wrong-token-11-for-tests")
	held(t, "the 11th wrong sign-in", w, "60")
	if body := w.Body.String(); !strings.Contains(body, "Try again in 60 seconds, after 09:01:00 UTC") || !strings.Contains(body, "your address") {
		t.Errorf("the sign-in does not say when to try again:\n%s", body)
	}
	held(t, "the right token while the address waits", a.signIn(testToken), "60")
	held(t, "the sign-in page while the address waits", a.do("GET", "/login", nil, nil), "60")
	if w := a.do("GET", "/api/v1/nothing", nil, nil, session); w.Code != http.StatusNotFound {
		t.Errorf("a browser signed in before: got %d, want through to the 404", w.Code)
	}
	if w := b.signIn(testToken); w.Code != http.StatusSeeOther {
		t.Errorf("another address with the right token: got %d, want 303 signed in", w.Code)
	}

	now = now.Add(59 * time.Second)
	held(t, "a second before the wait is over", a.signIn(testToken), "1")
	now = now.Add(time.Second)
	if w := a.signIn(testToken); w.Code != http.StatusSeeOther {
		t.Fatalf("the right token after the wait: got %d, want 303", w.Code)
	}
	wrong(t, 10, a.signIn)
	held(t, "ten more wrong sign-ins", a.signIn(testToken), "120")
	now = now.Add(2 * time.Minute)
	wrong(t, 10, a.signIn)
	held(t, "ten more again", a.signIn(testToken), "240")
}

// TestWrongBearerTokensWait: the API's bearer tokens count as the
// sign-ins do, and a held-back request is a 429 in JSON.
func TestWrongBearerTokensWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	a := client{s, "198.51.100.7:40000", ""}
	wrong(t, 10, a.api)
	w := a.api(testToken)
	held(t, "the right bearer after ten wrong ones", w, "60")
	var e errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code != "too_many_failures" {
		t.Errorf("the 429 is not JSON with code too_many_failures (%v):\n%s", err, w.Body)
	}
	held(t, "a sign-in from the same address", a.signIn(testToken), "60")
	w = a.do("GET", "/charts/US", nil, map[string]string{"Authorization": "Bearer " + testToken})
	held(t, "a page with the bearer", w, "60")
}

// TestOnlyFailuresCount: right tokens between wrong ones take nothing from
// the address's ten, and the ten are over any trailing minute, exactly.
func TestOnlyFailuresCount(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	a := client{s, "198.51.100.7:40000", ""}
	wrong(t, 1, a.api)
	now = now.Add(30 * time.Second)
	wrong(t, 8, a.api)
	for i := range 50 {
		if w := a.api(testToken); w.Code != http.StatusNotFound {
			t.Fatalf("right bearer %d after nine wrong ones: got %d, want through to the 404", i+1, w.Code)
		}
	}
	now = now.Add(30 * time.Second) // the first failure is a minute old
	wrong(t, 1, a.api)
	if w := a.api(testToken); w.Code != http.StatusNotFound {
		t.Fatalf("nine wrong tokens within the last minute: got %d, want through", w.Code)
	}
	now = now.Add(29 * time.Second)
	wrong(t, 1, a.api)
	held(t, "ten wrong tokens within the last minute", a.api(testToken), "60")
}

// TestWrongTokensFromEveryAddress: a guess spread over many addresses
// makes each of them wait its own wait, never an address that sent no
// wrong token: the right token from a fresh one is compared and served.
func TestWrongTokensFromEveryAddress(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	for i := range 300 {
		c := client{s, fmt.Sprintf("198.51.%d.%d:40000", i/250, i%250+1), ""}
		wrong(t, 1, c.signIn)
	}
	fresh := client{s, "203.0.113.9:50000", ""}
	if w := fresh.signIn(testToken); w.Code != http.StatusSeeOther {
		t.Errorf("the right token from a new address after 300 failures from 300 others: got %d, want 303\n%.300s", w.Code, w.Body)
	}
}

// TestThrottleAddresses: X-Forwarded-For names the client only behind a
// proxy the operator named; an IPv6 /64 is one client.
func TestThrottleAddresses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		proxies string
		a, b    client // b's wait after ten failures of a's: "" none
		want    string
	}{
		{"X-Forwarded-For without a trusted proxy", "",
			client{addr: "10.0.0.5:1", xff: "198.51.100.7"}, client{addr: "10.0.0.5:2", xff: "203.0.113.9"}, "60"},
		{"X-Forwarded-For from a trusted proxy", "10.0.0.0/8",
			client{addr: "10.0.0.5:1", xff: "198.51.100.7"}, client{addr: "10.0.0.5:2", xff: "203.0.113.9"}, ""},
		{"an X-Forwarded-For a trusted proxy passed on", "10.0.0.0/8",
			client{addr: "10.0.0.5:1", xff: "203.0.113.9, 198.51.100.7"}, client{addr: "10.0.0.5:2", xff: "192.0.2.1, 198.51.100.7"}, "60"},
		{"one IPv6 /64", "",
			client{addr: "[2001:db8:1:2::1]:1"}, client{addr: "[2001:db8:1:2:ffff::9]:1"}, "60"},
		{"two IPv6 /64s", "",
			client{addr: "[2001:db8:1:2::1]:1"}, client{addr: "[2001:db8:1:3::1]:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
			cfg := Config{Token: testToken, Listen: "0.0.0.0:8080", Clock: clock.Func(func() time.Time { return now })}
			for _, p := range strings.Split(tc.proxies, ",") {
				if p != "" {
					cfg.TrustedProxies = append(cfg.TrustedProxies, netip.MustParsePrefix(p))
				}
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tc.a.s, tc.b.s = s, s
			wrong(t, 10, tc.a.signIn)
			w := tc.b.signIn(testToken)
			if tc.want == "" && w.Code != http.StatusSeeOther {
				t.Errorf("the other client: got %d, want 303 (counted apart)", w.Code)
			}
			if tc.want != "" {
				held(t, "the other client", w, tc.want)
			}
		})
	}
}

// oneToken knows one client's token, on the standard plan.
type oneToken string

func (o oneToken) TokenPlan(_ context.Context, hash string) (string, bool, error) {
	if hash == clients.TokenHash(string(o)) {
		return "standard", true, nil
	}
	return "", false, nil
}
func (oneToken) TokenUsed(context.Context, string, time.Time) error { return nil }

// TestClientTokensAreNotHeldBack: on a metered API, a client's own token
// is served while its address waits (it is random, beyond guessing); the
// access token and unknown ones wait.
func TestClientTokensAreNotHeldBack(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	const clientToken = "ingest_a-client-token-for-tests"
	m := &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: ratelimit.NewMemory(), Tokens: oneToken(clientToken)}
	s, err := New(Config{Token: testToken, Listen: "0.0.0.0:8080", Meter: m, Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	a := client{s, "198.51.100.7:40000", ""}
	wrong(t, 10, a.api)
	if w := a.api(clientToken); w.Code != http.StatusNotFound || w.Header().Get("RateLimit-Policy") == "" {
		t.Errorf("a client's token while its address waits: got %d %v, want through to the 404, metered", w.Code, w.Header())
	}
	held(t, "the access token while the address waits", a.api(testToken), "60")
	held(t, "an unknown token while the address waits", a.api("ingest_not-a-token-of-anyone"), "60")
	now = now.Add(time.Minute)
	if w := a.api(testToken); w.Code != http.StatusNotFound || w.Header().Get("RateLimit-Policy") != "" {
		t.Errorf("the access token after the wait: got %d %v, want through, not metered", w.Code, w.Header())
	}
}

// TestAuthFailuresSeen: each failure is counted by outcome, and logged at
// most once a minute per address, never with the token tried.
func TestAuthFailuresSeen(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	var log strings.Builder
	counted := map[string]int{}
	s, err := New(Config{Token: testToken, Listen: "0.0.0.0:8080", Clock: clock.Func(func() time.Time { return now }),
		Logger:     slog.New(slog.NewTextHandler(&log, nil)),
		AuthFailed: func(outcome string) { counted[outcome]++ }})
	if err != nil {
		t.Fatal(err)
	}
	a, b := client{s, "198.51.100.7:40000", ""}, client{s, "203.0.113.9:50000", ""}
	wrong(t, 10, a.signIn)
	for range 5 {
		a.api("wrong-token-for-tests-again")
	}
	a.signIn(testToken)
	wrong(t, 1, b.api)
	if want := map[string]int{"rejected": 11, "throttled": 6}; fmt.Sprint(counted) != fmt.Sprint(want) {
		t.Errorf("counted %v, want %v", counted, want)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "addr=198.51.100.7") || !strings.Contains(lines[1], "addr=203.0.113.9") {
		t.Errorf("want one line for each address, got:\n%s", log.String())
	}
	now = now.Add(59 * time.Second)
	a.signIn(testToken)
	if n := strings.Count(log.String(), "198.51.100.7"); n != 1 {
		t.Errorf("a second line for the same address within the minute:\n%s", log.String())
	}
	now = now.Add(time.Second)
	a.signIn("wrong-token-for-tests-after")
	if all := strings.Split(strings.TrimSpace(log.String()), "\n"); len(all) != 3 {
		t.Errorf("a minute on, want the address's next line, got:\n%s", log.String())
	} else if last := all[2]; !strings.Contains(last, "rejected=10") || !strings.Contains(last, "throttled=7") {
		t.Errorf("the next line does not sum up what was refused since: %s", last)
	}
	if strings.Contains(log.String(), "wrong-token") || strings.Contains(log.String(), testToken) {
		t.Errorf("the log holds a token tried:\n%s", log.String())
	}
}

// TestWaitsGrowToAnHourAndAreForgiven: each wait in a row doubles, up to
// an hour; an hour without a failure after the last wait forgives them.
func TestWaitsGrowToAnHourAndAreForgiven(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	a := client{s, "198.51.100.7:40000", ""}
	for i, secs := range []int{60, 120, 240, 480, 960, 1920, 3600, 3600} {
		wrong(t, 10, a.api)
		held(t, fmt.Sprintf("wait %d in a row", i+1), a.api(testToken), fmt.Sprint(secs))
		now = now.Add(time.Duration(secs) * time.Second)
	}
	now = now.Add(59 * time.Minute)
	wrong(t, 10, a.api)
	held(t, "after 59 quiet minutes", a.api(testToken), "3600")
	now = now.Add(2 * time.Hour)
	wrong(t, 10, a.api)
	held(t, "after an hour's wait and an hour without a failure", a.api(testToken), "60")
}
