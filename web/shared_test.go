package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/transport"
)

// testPolicy is a policy other than the default, so that a test sees the
// one it was given reach the header.
var testPolicy = edge.Policy{MaxAge: 30 * time.Second, SMaxAge: 10 * time.Minute,
	StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}

const testPolicyHeader = "public, max-age=30, s-maxage=600, stale-while-revalidate=60, stale-if-error=3600"

// sharedServer is a --public listener with a token and a public address,
// over db, on the clock now: every route is served.
func sharedServer(t *testing.T, db *store.DB, now func() time.Time) *Server {
	t.Helper()
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	pub, _ := url.Parse("https://charts.example.org/")
	policy := testPolicy
	s, err := New(Config{DB: db, Token: testToken, Listen: ":8080", Public: true, Report: noReport, Routes: daemonRoutes(),
		Clock: clock.Func(now), Meter: anyMeter(), PublicURL: pub, Cache: &policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// addresses gives each request of these tests an address of its own, so
// that the anonymous plan never refuses one.
var addresses atomic.Int64

// askAs asks s for path with the headers given as name, value pairs.
func askAs(s *Server, path string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	n := addresses.Add(1)
	req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1234", n>>16&255, n>>8&255, n&255)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// readerRoutes are the readers' answers a shared cache may keep on
// worldDB, each with the keys it must carry.
var readerRoutes = []struct {
	path string
	keys []string
}{
	{"/", []string{"front", "chart:US", "video:local", "video:hit"}},
	{"/charts/US", []string{"chart:US", "video:local", "video:hit"}},
	{"/charts/US?category=10", []string{"chart:US:10", "video:music"}},
	{"/api/v1/charts/US", []string{"chart:US", "video:local", "video:hit"}},
	{"/api/v1/charts/GB", []string{"chart:GB", "video:hit", "video:duo"}},
	{"/charts/JP/feed", []string{"feed:JP", "chart:JP", "video:duo", "video:jp2", "video:hit"}},
	{"/worldwide", []string{"worldwide", "video:hit", "video:duo", "video:local", "video:jp2"}},
	{"/api/v1/worldwide", []string{"worldwide", "video:hit", "video:duo", "video:local", "video:jp2"}},
	{"/worldwide/feed", []string{"worldwide", "feed:worldwide", "video:hit"}},
	{"/videos/hit", []string{"video:hit"}},
	{"/api/v1/videos/duo", []string{"video:duo"}},
	{"/search?q=hit", []string{"search", "video:hit"}},
	{"/api/v1/search?q=duo", []string{"search", "video:duo"}},
	{"/search", []string{"search"}},
	{"/sitemap.xml", []string{"sitemap"}},
	{"/robots.txt", []string{"robots"}},
	{"/static/nopic.svg", []string{"static"}},
}

// TestWhoKeepsEachAnswer: on a --public listener an anonymous reader's
// answer is public with the lifetimes configured and names what it
// shows; the same route asked with a token, a session or any cookie, the
// operator's routes, sign-in, the probes, the metrics and every error are
// private, no-store, with no key; Vary names only what the bytes depend
// on.
func TestWhoKeepsEachAnswer(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s := sharedServer(t, worldDB(t, t0), func() time.Time { return t0.Add(time.Hour) })
	session := operatorSignIn(t, s)
	private := func(t *testing.T, what string, w *httptest.ResponseRecorder) {
		t.Helper()
		if cc, key := w.Header().Get("Cache-Control"), w.Header().Get(edge.SurrogateKey); cc != personal || key != "" {
			t.Errorf("%s: %d, Cache-Control %q, %s %q; want %q and no key", what, w.Code, cc, edge.SurrogateKey, key, personal)
		}
	}
	for _, rt := range readerRoutes {
		w := askAs(s, rt.path, "Accept-Encoding", "gzip")
		keys := strings.Fields(w.Header().Get(edge.SurrogateKey))
		if w.Code != 200 || w.Header().Get("Cache-Control") != testPolicyHeader {
			t.Errorf("anonymous %s: %d, Cache-Control %q; want 200, %q", rt.path, w.Code, w.Header().Get("Cache-Control"), testPolicyHeader)
		}
		if len(keys) == 0 || keys[0] != edge.SiteKey {
			t.Errorf("anonymous %s: keys %q, want %q first", rt.path, keys, edge.SiteKey)
		}
		for _, k := range rt.keys {
			if !slices.Contains(keys, k) {
				t.Errorf("anonymous %s: keys %q, want %q among them", rt.path, keys, k)
			}
		}
		vary := map[string]bool{}
		for _, v := range strings.Split(w.Header().Get("Vary"), ",") {
			vary[strings.TrimSpace(v)] = true
		}
		html := strings.HasPrefix(w.Header().Get("Content-Type"), "text/html")
		if !vary["Accept-Encoding"] || vary["Authorization"] || vary["User-Agent"] || vary["Accept-Language"] != (rt.path == "/") ||
			vary["Cookie"] != html {
			t.Errorf("anonymous %s: Vary %q; want Accept-Encoding, Cookie on a page (a session draws its header), Accept-Language on the front page alone",
				rt.path, w.Header().Get("Vary"))
		}
		if again := askAs(s, rt.path, "If-None-Match", w.Header().Get("ETag")); again.Code != http.StatusNotModified ||
			again.Header().Get("Cache-Control") != testPolicyHeader || again.Header().Get(edge.SurrogateKey) != w.Header().Get(edge.SurrogateKey) {
			t.Errorf("anonymous %s revalidated: %d, Cache-Control %q, keys %q; want 304 with the 200's", rt.path, again.Code,
				again.Header().Get("Cache-Control"), again.Header().Get(edge.SurrogateKey))
		}
		private(t, rt.path+" with a token", askAs(s, rt.path, "Authorization", "Bearer "+testToken))
		private(t, rt.path+" with a session", askAs(s, rt.path, "Cookie", signin.CookieName+"="+session.Value))
		private(t, rt.path+" with a cookie", askAs(s, rt.path, "Cookie", regionCookie+"=JP"))
	}
	for _, path := range []string{"/operator", "/api/v1/quota", "/api/v1/runs", "/quota", "/metrics"} {
		private(t, "the operator's "+path, askAs(s, path, "Authorization", "Bearer "+testToken))
		private(t, "the operator's "+path+" signed in", askAs(s, path, "Cookie", signin.CookieName+"="+session.Value))
		private(t, "the operator's "+path+" without the token", askAs(s, path))
	}
	for _, path := range []string{"/readyz", "/healthz", "/login", "/charts/ZZ", "/api/v1/charts/ZZ", "/videos/none",
		"/api/v1/videos/none", "/charts/QQ/feed", "/sitemaps/9.xml", "/nowhere", "/api/v1/nowhere", "/charts"} {
		private(t, path, askAs(s, path))
	}
	hashed := askAs(s, s.static.Path("style.css"))
	if cc := hashed.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("the stylesheet under its hash: Cache-Control %q, want it kept a year", cc)
	}
}

// TestAReaderBeyondAPublicListener: a listener that is not --public keeps
// nothing for a shared cache: with no token its readers' answers are
// revalidated by the one browser that keeps them, with no key.
func TestAReaderBeyondAPublicListener(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	s, err := New(Config{DB: worldDB(t, t0), Listen: "127.0.0.1:0", Report: noReport, Clock: clock.Func(func() time.Time { return t0 })})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{"/charts/US", "/api/v1/worldwide", "/videos/hit"} {
		w := askAs(s, path)
		if cc, key := w.Header().Get("Cache-Control"), w.Header().Get(edge.SurrogateKey); w.Code != 200 || cc != transport.Revalidate || key != "" {
			t.Errorf("%s on loopback: %d, Cache-Control %q, keys %q; want 200, %q, no key", path, w.Code, cc, key, transport.Revalidate)
		}
	}
	if cc := askAs(s, "/operator").Header().Get("Cache-Control"); cc != personal {
		t.Errorf("the operator's page on loopback: Cache-Control %q, want %q", cc, personal)
	}
}

// TestTwoServersOneDatabaseSendTheSame: two --public servers on one
// database, one that kept every answer before a run landed and built each
// again after it, one started after it on another clock, send the same
// status, bytes, ETag, Last-Modified, Cache-Control and keys for every
// reader's route; and the Last-Modified is the data's, not a build's.
func TestTwoServersOneDatabaseSendTheSame(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := worldDB(t, t0)
	moved := &movedClock{t: t0.Add(time.Hour + 300*time.Millisecond)}
	early := sharedServer(t, db, moved.now)
	for _, rt := range readerRoutes {
		askAs(early, rt.path)
	}
	landed := t0.Add(2 * time.Hour)
	regionRun(t, db, "GB", "", landed, worldVideos(t0, "duo", "new", "hit")...)
	late := sharedServer(t, db, func() time.Time { return t0.Add(7*time.Hour + 700*time.Millisecond) })
	moved.add(rebuildEvery)
	early.answers.wait = time.Minute // each request waits for its page's build, however slow the machine
	for _, rt := range readerRoutes {
		askAs(early, rt.path)
		awaitBuild(early, rt.path)
	}
	headers := []string{"ETag", "Last-Modified", "Cache-Control", edge.SurrogateKey, "Content-Type", "Vary"}
	for _, rt := range readerRoutes {
		a, b := askAs(early, rt.path, "Accept-Encoding", "gzip"), askAs(late, rt.path, "Accept-Encoding", "gzip")
		if a.Code != b.Code || a.Body.String() != b.Body.String() {
			t.Errorf("%s: %d and %d, bytes equal %v; want one answer", rt.path, a.Code, b.Code, a.Body.String() == b.Body.String())
		}
		for _, h := range headers {
			if a.Header().Get(h) != b.Header().Get(h) {
				t.Errorf("%s: %s %q from the server that kept it, %q from the one started after; want the same", rt.path, h,
					a.Header().Get(h), b.Header().Get(h))
			}
		}
		if rt.path == "/static/nopic.svg" || rt.path == "/robots.txt" || rt.path == "/search" {
			continue // what no run changes
		}
		if lm, err := http.ParseTime(a.Header().Get("Last-Modified")); err != nil || lm.After(landed.Add(time.Second)) {
			t.Errorf("%s: Last-Modified %q, want the data's time, at most the landing's end %s", rt.path, a.Header().Get("Last-Modified"), landed.Add(time.Second))
		}
	}
	if lm := askAs(late, "/worldwide").Header().Get("Last-Modified"); lm != landed.Add(time.Second).Format(http.TimeFormat) {
		t.Errorf("/worldwide: Last-Modified %q, want the landed run's end, %s", lm, landed.Add(time.Second).Format(http.TimeFormat))
	}
}

// TestShowKeysNamesEachKeyOnceInOrder: the keys an answer already
// names stay first, each new one is added once in the order given, and
// an empty one names nothing.
func TestShowKeysNamesEachKeyOnceInOrder(t *testing.T) {
	h := http.Header{}
	h.Set(edge.SurrogateKey, "chart:US video:a")
	edge.Show(h, "video:b", "", "video:a", "video:c", "video:b")
	showCards(h, []string{"chart:US", "feed:US"}, VideoCard{ID: "c"}, VideoCard{ID: "d"})
	if got, want := h.Get(edge.SurrogateKey), "chart:US video:a video:b video:c feed:US video:d"; got != want {
		t.Errorf("Surrogate-Key = %q, want %q", got, want)
	}
}
