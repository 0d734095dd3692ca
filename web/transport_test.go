package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/web/transport"
)

// get asks srv for path with the headers given as name, value pairs; the
// client leaves the answer's encoding as it came.
func get(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// TestConditionalAnswersFollowTheData: every page and JSON answer carries
// an ETag and a Last-Modified; asked again with them, it is a 304 while
// nothing shown changed, and a full answer once a run, tracking, a
// refresh or a deletion changed what it shows and the page was built
// again; a video deleted as gone is a 410, never a 304 of its old page.
// The Last-Modified is when the store's data changed, so that every
// server says the same: asked by it alone, a page the change did not
// touch is sent again rather than ever a wrong 304.
func TestConditionalAnswersFollowTheData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	views := int64(100)
	a := ingest.Video{ID: "vid-a", Title: "A", CategoryID: "10", ViewCount: &views, PublishedAt: t0.Add(-48 * time.Hour)}
	b := ingest.Video{ID: "vid-b", Title: "B", CategoryID: "10", ViewCount: &views, PublishedAt: t0.Add(-48 * time.Hour)}
	chartRun(t, db, "", t0, a, b)
	clock := &movedClock{t: t0.Add(time.Hour)}
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	paths := []string{"/charts/US", "/api/v1/charts/US", "/videos/vid-b", "/api/v1/videos/vid-b", "/search?q=B", "/api/v1/search?q=B"}
	type copyOf struct{ etag, lm string }
	held := map[string]copyOf{}
	keep := func(step string) {
		t.Helper()
		for _, p := range paths {
			res, _ := get(t, srv.URL+p)
			c := copyOf{res.Header.Get("ETag"), res.Header.Get("Last-Modified")}
			if res.StatusCode != 200 || c.etag == "" || c.lm == "" || res.Header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("%s: GET %s: %d, ETag %q, Last-Modified %q, Cache-Control %q; want 200 with both, no-cache",
					step, p, res.StatusCode, c.etag, c.lm, res.Header.Get("Cache-Control"))
			}
			held[p] = c
		}
	}
	// ask sends each held copy's validators, one at a time, and wants
	// status for each path the change touched, and 304 for the others.
	ask := func(step string, want map[string]int) {
		t.Helper()
		for _, p := range paths {
			w, ok := want[p]
			if !ok {
				w = http.StatusNotModified
			}
			byTime := w
			if w == http.StatusNotModified && want != nil {
				byTime = http.StatusOK
			}
			for _, v := range [][]string{{"If-None-Match", held[p].etag}, {"If-Modified-Since", held[p].lm}} {
				res, body := get(t, srv.URL+p, v...)
				if v[0] == "If-Modified-Since" && res.StatusCode != byTime {
					t.Errorf("%s: GET %s with %s: %d, want %d", step, p, v[0], res.StatusCode, byTime)
				}
				if v[0] == "If-None-Match" && res.StatusCode != w {
					t.Errorf("%s: GET %s with %s: %d, want %d", step, p, v[0], res.StatusCode, w)
				}
				if res.StatusCode == http.StatusNotModified && len(body) != 0 {
					t.Errorf("%s: GET %s: a 304 with %d bytes", step, p, len(body))
				}
			}
		}
	}
	keep("first")
	ask("nothing changed", nil)

	more := int64(900)
	if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: "vid-b", ViewCount: more, At: t0.Add(90 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	clock.add(rebuildEvery)
	settle(t, s, srv.URL, paths...)
	ask("tracking read vid-b's views", map[string]int{"/videos/vid-b": 200, "/api/v1/videos/vid-b": 200})
	keep("after tracking")

	b.Title = "B, retitled"
	if err := db.Refreshed(ctx, []ingest.Video{b}, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock.add(rebuildEvery)
	settle(t, s, srv.URL, paths...)
	ask("a refresh retitled vid-b", map[string]int{"/charts/US": 200, "/api/v1/charts/US": 200, "/videos/vid-b": 200,
		"/api/v1/videos/vid-b": 200, "/search?q=B": 200, "/api/v1/search?q=B": 200})
	keep("after the refresh")

	chartRun(t, db, "", t0.Add(3*time.Hour), b, a)
	clock.add(rebuildEvery)
	settle(t, s, srv.URL, paths...)
	ask("a new run", map[string]int{"/charts/US": 200, "/api/v1/charts/US": 200, "/videos/vid-b": 200,
		"/api/v1/videos/vid-b": 200, "/search?q=B": 200, "/api/v1/search?q=B": 200})
	keep("after the run")

	if _, err := retention.Gone(ctx, db, []string{"vid-b"}, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock.add(rebuildEvery)
	settle(t, s, srv.URL, paths...)
	ask("vid-b deleted as gone", map[string]int{"/charts/US": 200, "/api/v1/charts/US": 200, "/videos/vid-b": 410,
		"/api/v1/videos/vid-b": 410, "/search?q=B": 200, "/api/v1/search?q=B": 200})

	// No page shows an age: time alone changes no page, nor its tag.
	for _, p := range []string{"/charts/US", "/videos/vid-a"} {
		res, _ := get(t, srv.URL+p)
		clock.add(72 * time.Hour)
		settle(t, s, srv.URL, p)
		if again, _ := get(t, srv.URL+p, "If-None-Match", res.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: three days on, nothing changed but it answered %d", p, again.StatusCode)
		}
	}
}

// TestAnswersAreCompressed: pages, JSON and the stylesheet come gzipped to
// a client that takes gzip, whole and readable, and plain to one that
// does not.
func TestAnswersAreCompressed(t *testing.T) {
	t.Parallel()
	srv, _ := languageServer(t)
	for _, p := range []string{"/charts/US", "/api/v1/charts/US", "/static/style.css"} {
		plainRes, plain := get(t, srv.URL+p)
		if plainRes.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s without Accept-Encoding: encoded %q", p, plainRes.Header.Get("Content-Encoding"))
		}
		res, body := get(t, srv.URL+p, "Accept-Encoding", "gzip, br")
		if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s: Content-Encoding %q, Vary %q; want gzip, varying by Accept-Encoding", p, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		unz, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(unz, plain) {
			t.Errorf("%s: the gzipped answer (%d bytes) is not the plain one (%d bytes): %v", p, len(body), len(plain), err)
		}
		if len(body) >= len(plain) {
			t.Errorf("%s: gzipped %d bytes, plain %d", p, len(body), len(plain))
		}
		if refused, _ := get(t, srv.URL+p, "Accept-Encoding", "gzip;q=0"); refused.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: gzip sent to a client that refused it", p)
		}
	}
}

// TestStylesheetUnderItsHash: pages link the stylesheet by a name with its
// content's hash, served cacheable for a year; the plain name stays, to be
// revalidated.
func TestStylesheetUnderItsHash(t *testing.T) {
	t.Parallel()
	srv, _ := languageServer(t)
	_, page := get(t, srv.URL+"/charts/US")
	m := regexp.MustCompile(`<link rel="stylesheet" href="(/static/style\.[0-9a-f]{10}\.css)">`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the page links no hashed stylesheet:\n%s", page[:min(len(page), 600)])
	}
	res, css := get(t, srv.URL+string(m[1]))
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !bytes.Contains(css, []byte("body")) {
		t.Errorf("%s: %d, Cache-Control %q", m[1], res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if res, _ := get(t, srv.URL+"/static/style.css"); res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("/static/style.css: %d, Cache-Control %q; want 200, no-cache", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if res, _ := get(t, srv.URL+"/static/style.0000000000.css"); res.StatusCode != 404 {
		t.Errorf("a stylesheet under a wrong hash: %d, want 404", res.StatusCode)
	}
}

// TestKeptAnswersArePrivateWithAToken: with a sign-in token asked of every
// request, nobody keeps an answer.
func TestKeptAnswersArePrivateWithAToken(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, Token: testToken, Listen: "0.0.0.0:8080"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	res, _ := get(t, srv.URL+"/login")
	if got := res.Header.Get("Cache-Control"); got != personal {
		t.Errorf("a page with a token set: Cache-Control %q, want %s", got, personal)
	}
}

// TestKeptAnswerOutlivesItsBuildsBytes: a build's bytes go back to be
// reused once its answer is kept, and a later build written into them
// changes nothing of the answer kept, plain or compressed.
func TestKeptAnswerOutlivesItsBuildsBytes(t *testing.T) {
	var kept []*answer
	for i := range 20 {
		b := transport.NewReused(http.Header{"Content-Type": {"text/html"}}, http.StatusOK)
		b.Write(bytes.Repeat([]byte{byte('a' + i)}, 4096))
		kept = append(kept, newAnswer(b, "m", time.Unix(0, 0), nil))
		b.Release()
	}
	for i, a := range kept {
		want := bytes.Repeat([]byte{byte('a' + i)}, 4096)
		if !bytes.Equal(a.body, want) {
			t.Errorf("answer %d: its body changed after its build's bytes were reused: %.20q...", i, a.body)
		}
		if !bytes.Equal(a.gz, transport.Gzip(want)) {
			t.Errorf("answer %d: its gzip changed after its build's bytes were reused", i)
		}
	}
}
