package main

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/web/signin"
)

// TestWeakUITokenRefused: serve and run --listen refuse a short token, one
// under the bits a token must have (a repeat, a word said twice, one kind
// of character), or one with spaces around it, with exit 2 naming
// INGEST_UI_TOKEN and how to make a strong one, before anything is opened;
// the token itself is never printed.
func TestWeakUITokenRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token string
		args        []string
		says        string
	}{
		{"serve, short", "s3cret", []string{"serve", "--listen", "127.0.0.1:0"}, "it has 6 characters, want at least 20"},
		{"serve, digits only", "12345678901234567890123456", []string{"serve", "--listen", "0.0.0.0:0"}, "bits of entropy, want at least 128"},
		{"serve, lower-case only", "correcthorsebatterystaple", []string{"serve", "--listen", "0.0.0.0:0"}, "bits of entropy, want at least 128"},
		{"serve --public, one letter", "aaaaaaaaaaaaaaaaaaa1", []string{"serve", "--public", "--listen", "0.0.0.0:0"}, "about 10 bits of entropy"},
		{"serve, a word twice", "Passwordpassword1234", []string{"serve", "--listen", "0.0.0.0:0"}, "about 65 bits of entropy"},
		{"run --listen, spaces around", " 3f9a1c27d84be605f1e2a9c3b7d6e048 ", []string{"run", "--listen", "127.0.0.1:0"}, "white space"},
		{"run --listen, short", "Short-Token-1", []string{"run", "--listen", "127.0.0.1:0"}, "it has 13 characters, want at least 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.set("INGEST_UI_TOKEN", tc.token)
			r := h.mustRun(2, tc.args...)
			for _, want := range []string{"INGEST_UI_TOKEN", tc.says, "ingest tokens new-ui-token", "openssl rand -base64 24"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr+r.stdout, tc.token) {
				t.Errorf("the token is printed:\n%s%s", r.stdout, r.stderr)
			}
			if _, err := os.Stat(h.db()); !os.IsNotExist(err) {
				t.Errorf("the database was opened before the token was checked (%v)", err)
			}
			if len(h.reqs.requests("")) != 0 {
				t.Errorf("the upstream was called before the token was checked")
			}
		})
	}
}

// TestNewUIToken: tokens new-ui-token prints a fresh token each time that
// the check takes, and opens no database.
func TestNewUIToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := strings.TrimSpace(h.mustRun(0, "tokens", "new-ui-token").stdout), strings.TrimSpace(h.mustRun(0, "tokens", "new-ui-token").stdout)
	if a == b || len(a) < 43 || strings.ContainsAny(a, "\n ") {
		t.Errorf("two tokens %q and %q: want two different lines of 43 characters or more", a, b)
	}
	if err := signin.CheckToken(a); err != nil {
		t.Errorf("the token made is refused: %v", err)
	}
	if _, err := os.Stat(h.db()); !os.IsNotExist(err) {
		t.Errorf("new-ui-token opened the database (%v)", err)
	}
}

// TestWrongTokensThrottled: over HTTP against serve and run --listen, the
// eleventh wrong token within a minute from one client is answered 429
// with Retry-After, the right one too, and /metrics and the log say so,
// never with a token tried.
func TestWrongTokensThrottled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path string
		args       []string
	}{
		{"serve", "/api/v1/runs", []string{"serve", "loopback"}},
		{"run --listen", "/quota", []string{"run", "--regions", "US", "loopback"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			tok := strings.TrimSpace(h.mustRun(0, "tokens", "new-ui-token").stdout)
			d, _ := startListener(t, tok, tc.args...)
			try := func(bearer string) (int, http.Header) {
				code, header, _ := d.getAs(t, tc.path, bearer)
				return code, header
			}
			for i := range 10 {
				if code, _ := try(fmt.Sprintf("wrong-Token-%02d-of-this-test", i)); code != http.StatusUnauthorized {
					t.Fatalf("wrong token %d: got %d, want 401", i+1, code)
				}
			}
			for _, bearer := range []string{"wrong-Token-11-of-this-test", tok} {
				code, header := try(bearer)
				retry, err := strconv.Atoi(header.Get("Retry-After"))
				if code != http.StatusTooManyRequests || err != nil || retry < 1 || retry > 60 {
					t.Errorf("after ten wrong tokens: got %d Retry-After %q, want 429 and at most a minute", code, header.Get("Retry-After"))
				}
			}
			if code := d.postLogin(t, tok); code != http.StatusTooManyRequests {
				t.Errorf("a sign-in from the same client: got %d, want 429", code)
			}
			_, metrics := d.get(t, "/metrics", false)
			for _, want := range []string{`ingest_ui_auth_failures_total{outcome="rejected"} 10`, `ingest_ui_auth_failures_total{outcome="throttled"} 3`} {
				if !strings.Contains(string(metrics), want) {
					t.Errorf("/metrics has no %s", want)
				}
			}
			log := d.proc.out.String()
			if n := len(regexp.MustCompile(`wrong access tokens tried.*addr=127\.0\.0\.1`).FindAllString(log, -1)); n != 1 {
				t.Errorf("want one log line for the client in the minute, got %d:\n%s", n, log)
			}
			if strings.Contains(log, "wrong-Token") || strings.Contains(log, tok) {
				t.Errorf("the log holds a token:\n%s", log)
			}
		})
	}
}

// postLogin posts the sign-in form with tok and returns the status.
func (d *dashboard) postLogin(t *testing.T, tok string) int {
	t.Helper()
	code, _ := signIn(t, d.base, tok)
	return code
}

// TestASignInHoldsOnEveryReplica: two serve --public processes on one
// database, SQLite's file or PostgreSQL: a session started on one opens
// the operator's page on both, and a sign-out on the other ends it on
// both.
func TestASignInHoldsOnEveryReplica(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if backend == "postgres" {
				h.withPostgres()
			}
			h.mustRun(0, "run", "--once", "--regions", "US")
			const token = "replica-operator-token-0123456789"
			h.set("INGEST_UI_TOKEN", token)
			one, other := startServe(t, h, "--public"), startServe(t, h, "--public")
			operator := func(base string, cookie *http.Cookie) int {
				t.Helper()
				return sendForm(t, http.MethodGet, base+"/operator", nil, cookie).StatusCode
			}
			code, session := signIn(t, one, token)
			if code != http.StatusSeeOther || session == nil {
				t.Fatalf("sign-in: %d, session cookie %v; want 303 and a session", code, session)
			}
			for i, base := range []string{one, other, one, other} {
				if code := operator(base, session); code != http.StatusOK {
					t.Errorf("/operator with the session, ask %d (replica %d): %d, want 200", i+1, i%2+1, code)
				}
			}
			if res := sendForm(t, http.MethodPost, other+"/logout", nil, session); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-out on the other replica: %d, want 303", res.StatusCode)
			}
			for i, base := range []string{one, other} {
				if code := operator(base, session); code == http.StatusOK {
					t.Errorf("/operator with the session signed out, replica %d: 200, want it refused", i+1)
				}
			}
		})
	}
}
