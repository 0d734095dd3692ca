package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/web/signin"
)

const testToken = "a-token-for-tests"

// authServer is a server that asks for testToken, on a clock the test moves.
func authServer(t *testing.T, now *time.Time) *Server {
	t.Helper()
	s, err := New(Config{Token: testToken, Listen: "0.0.0.0:8080", SessionTTL: time.Hour,
		Clock: clock.Func(func() time.Time { return *now })})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func send(s *Server, method, target string, form url.Values, header map[string]string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, target, body)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8") // as a browser asks
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

var sameOrigin = map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}

func sessionCookie(t *testing.T, w *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == signin.CookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie set; headers %v", signin.CookieName, w.Header())
	return nil
}

// TestSignInReturnsToThePageAskedFor: a page asked for without a session
// goes to the sign-in and, once signed in, back to that page; the cookie
// is a random session id, never the token.
func TestSignInReturnsToThePageAskedFor(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	w := send(s, "GET", "/charts/US?category=10", nil, nil)
	loc := w.Header().Get("Location")
	if w.Code != http.StatusSeeOther || loc != "/login?next="+url.QueryEscape("/charts/US?category=10") {
		t.Fatalf("a page without a session: %d to %q, want 303 to the sign-in with next", w.Code, loc)
	}
	w = send(s, "GET", loc, nil, nil)
	if !strings.Contains(w.Body.String(), `name="next" value="/charts/US?category=10"`) {
		t.Errorf("the sign-in form does not carry the page asked for:\n%s", w.Body)
	}
	w = send(s, "POST", "/login", url.Values{"token": {testToken}, "next": {"/charts/US?category=10"}}, sameOrigin)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/charts/US?category=10" {
		t.Fatalf("signed in: %d to %q, want 303 to /charts/US?category=10", w.Code, w.Header().Get("Location"))
	}
	c := sessionCookie(t, w)
	if c.Value == testToken || strings.Contains(c.Value, testToken) || len(c.Value) < 40 {
		t.Errorf("the cookie holds %q: want a long random session id, not the token", c.Value)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.MaxAge != 3600 {
		t.Errorf("cookie HttpOnly %v SameSite %v MaxAge %d; want HttpOnly, Strict, the session's hour", c.HttpOnly, c.SameSite, c.MaxAge)
	}
	w2 := send(s, "POST", "/login", url.Values{"token": {testToken}}, sameOrigin)
	if c2 := sessionCookie(t, w2); c2.Value == c.Value {
		t.Errorf("two sign-ins got the same session id %q", c.Value)
	}
	if w := send(s, "GET", "/api/v1/nothing", nil, nil, c); w.Code != http.StatusNotFound {
		t.Errorf("with the session: %d, want through to the 404", w.Code)
	}
	if w := send(s, "GET", "/api/v1/nothing", nil, nil, &http.Cookie{Name: signin.CookieName, Value: testToken}); w.Code != http.StatusUnauthorized {
		t.Errorf("a cookie holding the token itself: %d, want 401", w.Code)
	}
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "javascript:alert(1)", ""} {
		w := send(s, "POST", "/login", url.Values{"token": {testToken}, "next": {next}}, sameOrigin)
		if got := w.Header().Get("Location"); got != "/" {
			t.Errorf("next %q: sent to %q, want /", next, got)
		}
	}
}

// TestSessionExpiresAndSignsOut: a session ends when its time is up, and
// signing out ends it at once.
func TestSessionExpiresAndSignsOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	signIn := func() *http.Cookie {
		return sessionCookie(t, send(s, "POST", "/login", url.Values{"token": {testToken}}, sameOrigin))
	}
	ok := func(c *http.Cookie) bool {
		return send(s, "GET", "/api/v1/nothing", nil, nil, c).Code == http.StatusNotFound
	}
	c := signIn()
	now = now.Add(59 * time.Minute)
	if !ok(c) {
		t.Fatalf("a session refused before its hour is up")
	}
	now = now.Add(time.Minute)
	if ok(c) {
		t.Errorf("a session still served after its hour")
	}
	c = signIn()
	w := send(s, "POST", "/logout", url.Values{}, sameOrigin, c)
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/login") {
		t.Errorf("sign-out: %d to %q, want 303 to the sign-in", w.Code, w.Header().Get("Location"))
	}
	if cleared := sessionCookie(t, w); cleared.MaxAge >= 0 || cleared.Value != "" {
		t.Errorf("sign-out left the cookie %+v", cleared)
	}
	if ok(c) {
		t.Errorf("the session still works after signing out")
	}
}

// TestSignInRefusesCrossSitePosts: a form posted from another site neither
// signs in nor out.
func TestSignInRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s := authServer(t, &now)
	good := sessionCookie(t, send(s, "POST", "/login", url.Values{"token": {testToken}}, sameOrigin))
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
	} {
		w := send(s, "POST", "/login", url.Values{"token": {testToken}}, h)
		if w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
			t.Errorf("login posted with %v: %d, cookies %v; want 403 and no session", h, w.Code, w.Result().Cookies())
		}
		if w := send(s, "POST", "/logout", url.Values{}, h, good); w.Code != http.StatusForbidden {
			t.Errorf("logout posted with %v: %d, want 403", h, w.Code)
		}
	}
	if send(s, "GET", "/api/v1/nothing", nil, nil, good).Code != http.StatusNotFound {
		t.Errorf("a cross-site sign-out ended the session")
	}
}
