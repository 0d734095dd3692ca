package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// TestAQueryARouteDoesNotReadMakesNoNewAnswer: a campaign tag, a
// cache-buster or the same parameters in another order are answered from
// the copy the page already has, built once; a parameter the route reads
// is still read.
func TestAQueryARouteDoesNotReadMakesNoNewAnswer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	s, srv, _ := cachedServer(t, &now)
	for _, c := range []struct{ first, again string }{
		{"/charts/US", "/charts/US?utm_source=news&x=1"},
		{"/api/v1/charts/US?limit=1&category=0", "/api/v1/charts/US?category=0&fbclid=z&limit=1"},
		{"/videos/vid-a", "/videos/vid-a?t=42"},
		{"/search?q=alpha&sort=views", "/search?sort=views&ref=home&q=alpha"},
	} {
		res, body := ask(t, srv.URL+c.first)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", c.first, res.StatusCode)
		}
		before := s.answers.builds.Load()
		res, again := ask(t, srv.URL+c.again)
		if n := s.answers.builds.Load() - before; n != 0 || res.StatusCode != http.StatusOK || string(again) != string(body) {
			t.Errorf("%s after %s: %d, %d builds, same bytes %v; want its copy, nothing built", c.again, c.first, res.StatusCode, n, string(again) == string(body))
		}
	}
	res, limited := ask(t, srv.URL+"/api/v1/charts/US?limit=1&utm_source=x")
	_, whole := ask(t, srv.URL+"/api/v1/charts/US")
	if res.StatusCode != http.StatusOK || len(limited) >= len(whole) {
		t.Errorf("?limit=1 beside an unknown parameter: %d, %d bytes against the whole chart's %d: the limit was not read", res.StatusCode, len(limited), len(whole))
	}
}

// TestEveryReadersRouteSaysWhatQueryItReads: a route a shared cache may
// keep is in readerQuery, so that a new one cannot be added without
// saying what varies it; nothing is listed that the table lacks.
func TestEveryReadersRouteSaysWhatQueryItReads(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, Listen: ":8080", Public: true, Meter: anyMeter()})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, rt := range s.table() {
		have[rt.Pattern] = true
		if _, ok := readerQuery[rt.Pattern]; rt.shared() && rt.Pattern != "/" && rt.Pattern != apiFallback && !ok {
			t.Errorf("%s is a reader's route a cache may keep, and readerQuery does not say which query parameters it reads", rt.Pattern)
		}
	}
	for p := range readerQuery {
		if !have[p] {
			t.Errorf("readerQuery lists %s, which the route table lacks", p)
		}
	}
}

// TestARegionInSmallLettersRedirectsToItsPage: /charts/us is a permanent
// redirect to /charts/US, with the query the page reads, that any cache
// may keep; the page in capitals is the page.
func TestARegionInSmallLettersRedirectsToItsPage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	_, srv, _ := cachedServer(t, &now)
	for path, want := range map[string]string{
		"/charts/us":                         "/charts/US",
		"/charts/Us?utm_source=x&sort=views": "/charts/US?sort=views",
		"/charts/uS/feed":                    "/charts/US/feed",
	} {
		res, _ := ask(t, srv.URL+path)
		if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != want || !strings.HasPrefix(res.Header.Get("Cache-Control"), "public") {
			t.Errorf("%s: %d to %q, Cache-Control %q; want 301 to %s that a cache may keep", path, res.StatusCode, res.Header.Get("Location"), res.Header.Get("Cache-Control"), want)
		}
	}
	if res, _ := ask(t, srv.URL+"/charts/US"); res.StatusCode != http.StatusOK {
		t.Errorf("/charts/US: %d, want the page", res.StatusCode)
	}
}
