package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/transport"
)

// cachedServer serves a database holding one US chart, on a clock the
// test moves.
func cachedServer(t *testing.T, now *time.Time) (*Server, *httptest.Server, *store.DB) {
	t.Helper()
	db := storetest.Open(t)
	chartRun(t, db, "", now.Add(-10*time.Minute), ingest.Video{ID: "vid-a", Title: "Alpha"}, ingest.Video{ID: "vid-b", Title: "Beta"})
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return *now })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv, db
}

// ask gets path with header's name/value pairs, and returns the answer
// with its body as sent (gzip not undone).
func ask(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadersAnswersAreBuiltOncePerChange: a reader's page and JSON are
// built once, served from memory (gzip or not) with an ETag, and a
// conditional request is a 304 that builds nothing; a run that lands
// builds them again, once, and the first request a mark's read after it
// gets the new copy; time alone builds nothing (no page shows an age).
func TestReadersAnswersAreBuiltOncePerChange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	s, srv, db := cachedServer(t, &now)
	for _, path := range []string{"/charts/US", "/api/v1/charts/US", "/", "/search?q=alpha", "/api/v1/search?q=alpha", "/videos/vid-a", "/api/v1/videos/vid-a",
		"/worldwide", "/api/v1/worldwide", "/worldwide/feed", "/charts/US/feed"} {
		t.Run(path, func(t *testing.T) {
			before := s.answers.builds.Load()
			plain, body := ask(t, srv.URL+path)
			if plain.StatusCode != 200 || plain.Header.Get("ETag") == "" {
				t.Fatalf("got %d, ETag %q; want 200 with an ETag", plain.StatusCode, plain.Header.Get("ETag"))
			}
			zipped, zbody := ask(t, srv.URL+path, "Accept-Encoding", "gzip")
			if zipped.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, zbody), body) {
				t.Errorf("gzip asked: Content-Encoding %q, or the bytes differ from the plain answer", zipped.Header.Get("Content-Encoding"))
			}
			tag := plain.Header.Get("ETag")
			for _, cond := range [][]string{{"If-None-Match", tag}, {"If-Modified-Since", plain.Header.Get("Last-Modified")}} {
				if res, _ := ask(t, srv.URL+path, cond...); res.StatusCode != http.StatusNotModified {
					t.Errorf("%s: got %d, want 304", cond[0], res.StatusCode)
				}
			}
			if n := s.answers.builds.Load() - before; n != 1 {
				t.Errorf("four requests and two conditional ones built it %d times, want once", n)
			}
		})
	}

	before := s.answers.builds.Load()
	tag := func() string { res, _ := ask(t, srv.URL+"/charts/US"); return res.Header.Get("ETag") }
	old := tag()
	chartRun(t, db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(markEvery)
	res, body := ask(t, srv.URL+"/charts/US", "If-None-Match", old)
	if res.StatusCode != 200 || !strings.Contains(string(body), "Gamma") || res.Header.Get("ETag") == old {
		t.Errorf("after a run landed: got %d, ETag %s (was %s); want 200 with the new run", res.StatusCode, res.Header.Get("ETag"), old)
	}
	if n := s.answers.builds.Load() - before; n != 1 {
		t.Errorf("a run landed: built %d times, want once", n)
	}

	before = s.answers.builds.Load()
	now = now.Add(2 * time.Hour)
	res, _ = ask(t, srv.URL+"/charts/US", "If-None-Match", res.Header.Get("ETag"))
	if n := s.answers.builds.Load() - before; res.StatusCode != http.StatusNotModified || n != 0 {
		t.Errorf("two hours on, no run: got %d after %d builds; want 304 from the copy, none built", res.StatusCode, n)
	}
}

// settle asks for each path once, so that a kept copy out of date
// starts its build beside the requests, and waits for those builds: the
// next requests get what the pages show now.
func settle(t *testing.T, s *Server, base string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		ask(t, base+p)
		awaitBuild(s, p)
	}
}

// awaitBuild waits for the build of key under way, when there is one
// (a build beside the requests is joined before the request that started
// it is answered, and its answer kept before it ends).
func awaitBuild(s *Server, key string) {
	s.answers.mu.Lock()
	f := s.answers.building[key]
	s.answers.mu.Unlock()
	if f != nil {
		<-f.done
	}
}

// TestManyAskingBuildOnce: requests that arrive together for an answer
// not yet built wait for one build.
func TestManyAskingBuildOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	s, srv, _ := cachedServer(t, &now)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, _ := ask(t, srv.URL+"/charts/US"); res.StatusCode != 200 {
				t.Errorf("got %d", res.StatusCode)
			}
		}()
	}
	wg.Wait()
	if n := s.answers.builds.Load(); n != 1 {
		t.Errorf("16 requests together built the page %d times, want once", n)
	}
}

// TestKeptLastModifiedIsTheContents: a kept answer's Last-Modified is when
// its data last changed (its mark's time), or the content's own time when
// the handler says one; never the time it was built, and the same whether
// a copy was built before or not, as two servers on one database are.
func TestKeptLastModifiedIsTheContents(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 9, 0, 10, 400e6, time.UTC)
	built := func(body string, lm ...time.Time) *transport.Answer {
		b := transport.NewAnswer(http.Header{"Content-Type": {"application/json"}}, 200)
		for _, t := range lm {
			setModified(b.Header(), t)
		}
		b.Write([]byte(body))
		return b
	}
	old := newAnswer(built(`{"a":1}`), "m1", at, nil)
	if want := at.Truncate(time.Second); !old.modified.Equal(want) {
		t.Errorf("first built: Last-Modified %v, want the data's change %v", old.modified, want)
	}
	later := at.Add(time.Hour)
	same := newAnswer(built(`{"a":1}`), "m2", later, old)
	fresh := newAnswer(built(`{"a":1}`), "m2", later, nil)
	if !same.modified.Equal(fresh.modified) || !same.modified.Equal(later.Truncate(time.Second)) {
		t.Errorf("the same bytes under a later mark: Last-Modified %v with a copy before, %v without; want both %v",
			same.modified, fresh.modified, later.Truncate(time.Second))
	}
	content := at.Add(-time.Hour).Truncate(time.Second)
	if own := newAnswer(built(`{"a":2}`, content), "m3", later, old); !own.modified.Equal(content) {
		t.Errorf("the handler said its content's time %v: Last-Modified %v", content, own.modified)
	}
}

// TestKeptAnswersHoldNoCredential: the request a kept answer is built
// again from holds neither the token nor the session it came with.
func TestKeptAnswersHoldNoCredential(t *testing.T) {
	t.Parallel()
	r, _ := http.NewRequest("GET", "/charts/US", nil)
	r.Header.Set("Authorization", "Bearer secret-token")
	r.AddCookie(&http.Cookie{Name: signin.CookieName, Value: "secret-session"})
	r.AddCookie(&http.Cookie{Name: regionCookie, Value: "JP"})
	d := detached(r)
	if got := d.Header.Get("Authorization") + d.Header.Get("Cookie"); strings.Contains(got, "secret") || !strings.Contains(got, regionCookie+"=JP") {
		t.Errorf("the request kept: Authorization and Cookie %q; want no secret, the region kept", got)
	}
}
