package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web/signin"
)

// readerPages are the pages a --public listener keeps and shares by URL.
var readerPages = []string{"/", "/charts/US", "/videos/vid-a", "/search?q=alpha"}

// operatorHeaderServer is a --public listener with a token, on a clock
// that stands still.
func operatorHeaderServer(t *testing.T) *Server {
	t.Helper()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	s, err := New(Config{DB: audienceDB(t), Token: testToken, Listen: ":8080", Public: true, Report: noReport,
		Routes: daemonRoutes(), SessionTTL: time.Hour, Clock: clock.Func(func() time.Time { return now }), Meter: anyMeter()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// operatorSignIn signs the operator in and is the session's cookie.
func operatorSignIn(t *testing.T, s *Server) *http.Cookie {
	t.Helper()
	w := send(s, "POST", "/login", url.Values{"token": {testToken}}, sameOrigin)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d, want 303", w.Code)
	}
	return sessionCookie(t, w)
}

// headerParts reports which of the signed-in header's parts a page
// shows: Sign out, the Operator link.
func headerParts(body string) (signOut, operator bool) {
	_, head, _ := strings.Cut(body, "<header>")
	head, _, _ = strings.Cut(head, "</header>")
	return strings.Contains(head, `action="/logout"`), strings.Contains(head, `href="/operator"`)
}

// TestOperatorHeaderIsTheOperatorsAlone: on a --public listener a
// signed-in operator sees Sign out and the Operator link on every reader
// page, whether a stranger asked for it first (it is then kept) or not,
// and a stranger never does, whether the operator asked first or at the
// same time; the operator's page is sent for no one to keep, a kept
// answer's tag never passes for it, and a signed-out or forged session
// gets the readers' page.
func TestOperatorHeaderIsTheOperatorsAlone(t *testing.T) {
	t.Parallel()
	stranger := func(t *testing.T, s *Server, path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		t.Helper()
		w := send(s, "GET", path, nil, nil, cookies...)
		if w.Code != http.StatusOK {
			t.Fatalf("a stranger's %s: %d, want 200", path, w.Code)
		}
		if out, op := headerParts(w.Body.String()); out || op {
			t.Errorf("a stranger's %s shows Sign out %v, the Operator link %v: want neither", path, out, op)
		}
		if !strings.Contains(w.Header().Get("Vary"), "Cookie") {
			t.Errorf("a stranger's %s: Vary %q, want Cookie in it", path, w.Header().Get("Vary"))
		}
		return w
	}
	operator := func(t *testing.T, s *Server, c *http.Cookie, path string, header map[string]string) {
		t.Helper()
		w := send(s, "GET", path, nil, header, c)
		if w.Code != http.StatusOK {
			t.Fatalf("the operator's %s: %d, want 200", path, w.Code)
		}
		if out, op := headerParts(w.Body.String()); !out || !op {
			t.Errorf("the operator's %s shows Sign out %v, the Operator link %v: want both", path, out, op)
		}
		if cc := w.Header().Get("Cache-Control"); cc != personal || w.Header().Get("ETag") != "" {
			t.Errorf("the operator's %s: Cache-Control %q, ETag %q; want %q and no tag", path, cc, w.Header().Get("ETag"), personal)
		}
	}

	t.Run("stranger first", func(t *testing.T) {
		s := operatorHeaderServer(t)
		c := operatorSignIn(t, s)
		for _, path := range readerPages {
			kept := stranger(t, s, path)
			operator(t, s, c, path, nil)
			operator(t, s, c, path, map[string]string{"If-None-Match": kept.Header().Get("ETag")})
			stranger(t, s, path)
		}
	})
	t.Run("operator first", func(t *testing.T) {
		s := operatorHeaderServer(t)
		c := operatorSignIn(t, s)
		for _, path := range readerPages {
			operator(t, s, c, path, nil)
			stranger(t, s, path)
			stranger(t, s, path, &http.Cookie{Name: signin.CookieName, Value: strings.Repeat("f", len(c.Value))})
		}
		if w := send(s, "POST", "/logout", nil, sameOrigin, c); w.Code != http.StatusSeeOther {
			t.Fatalf("sign out: %d, want 303", w.Code)
		}
		for _, path := range readerPages {
			stranger(t, s, path, c)
		}
	})
	t.Run("at the same time", func(t *testing.T) {
		s := operatorHeaderServer(t)
		c := operatorSignIn(t, s)
		var wg sync.WaitGroup
		for range 8 {
			for _, path := range readerPages {
				wg.Go(func() { operator(t, s, c, path, nil) })
				wg.Go(func() { stranger(t, s, path) })
			}
		}
		wg.Wait()
	})
}
