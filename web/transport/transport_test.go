package transport

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ingestworks/ingest/web/edge"
)

// answered is a kept answer of body sent to r, with the Cache-Control the
// site's rules would set; keepers saw the status.
func answered(t *testing.T, r *http.Request, ct, body string) (*httptest.ResponseRecorder, int) {
	t.Helper()
	a := NewAnswer(http.Header{}, http.StatusOK)
	a.Header().Set("Content-Type", ct)
	a.Header().Set("Cache-Control", CacheFor(http.StatusOK))
	io.WriteString(a, body)
	w, seen := httptest.NewRecorder(), 0
	Send(w, r, a, func(h http.Header, status int) { seen = status; h.Set("Cache-Control", "public, s-maxage=10") })
	return w, seen
}

// TestAKeptAnswerIsTaggedAndComparedByItsBytes: a 200 marked to be kept
// carries an ETag made from its bytes, the keepers decide its
// Cache-Control, and a request naming that tag is answered 304 with no
// body; another tag gets the whole answer.
func TestAKeptAnswerIsTaggedAndComparedByItsBytes(t *testing.T) {
	t.Parallel()
	w, seen := answered(t, httptest.NewRequest("GET", "/charts/US", nil), "text/html; charset=utf-8", "<p>US</p>")
	tag := w.Header().Get("ETag")
	if w.Code != 200 || tag != Tag([]byte("<p>US</p>")) || seen != 200 || w.Header().Get("Cache-Control") != "public, s-maxage=10" {
		t.Fatalf("first ask: %d, ETag %q, keepers saw %d, Cache-Control %q; want 200 tagged by its bytes, the keepers' header",
			w.Code, tag, seen, w.Header().Get("Cache-Control"))
	}
	again := httptest.NewRequest("GET", "/charts/US", nil)
	again.Header.Set("If-None-Match", tag)
	if w, _ := answered(t, again, "text/html; charset=utf-8", "<p>US</p>"); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("asked again with its tag: %d with %d bytes, want 304 with none", w.Code, w.Body.Len())
	}
	again.Header.Set("If-None-Match", `W/"another"`)
	if w, _ := answered(t, again, "text/html; charset=utf-8", "<p>US</p>"); w.Code != 200 || w.Body.String() != "<p>US</p>" {
		t.Errorf("asked with another tag: %d %q, want the whole answer", w.Code, w.Body.String())
	}
}

// TestWhatIsWorthItIsCompressed: a page past CompressMin goes gzipped to a
// client that takes gzip, and as it is to one that refuses it (q=0) or
// when it is short; every compressible answer varies on Accept-Encoding.
func TestWhatIsWorthItIsCompressed(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<p>a trending video</p>", CompressMin)
	for _, c := range []struct {
		name, accept, body string
		gzipped            bool
	}{
		{"gzip taken", "br, gzip", long, true},
		{"gzip refused", "gzip;q=0", long, false},
		{"no encoding named", "", long, false},
		{"a short page", "gzip", "<p>short</p>", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", c.accept)
		w, _ := answered(t, r, "text/html; charset=utf-8", c.body)
		got := w.Body.Bytes()
		if c.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, _ = io.ReadAll(zr)
		}
		if (w.Header().Get("Content-Encoding") == "gzip") != c.gzipped || string(got) != c.body || w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: Content-Encoding %q, Vary %q, body intact %v; want gzip %v, Vary Accept-Encoding",
				c.name, w.Header().Get("Content-Encoding"), w.Header().Get("Vary"), string(got) == c.body, c.gzipped)
		}
	}
}

// TestAnAnswerKeepsItsFirstStatus: a handler's second WriteHeader changes
// nothing, an error is never kept, and a clone sent does not touch the
// answer it was made from.
func TestAnAnswerKeepsItsFirstStatus(t *testing.T) {
	t.Parallel()
	a := NewAnswer(http.Header{}, http.StatusOK)
	a.Header().Set("Cache-Control", CacheFor(http.StatusNotFound))
	a.WriteHeader(http.StatusNotFound)
	a.WriteHeader(http.StatusOK)
	io.WriteString(a, "none")
	if a.Status() != http.StatusNotFound || a.Keepable() {
		t.Errorf("status %d, keepable %v; want 404, not kept", a.Status(), a.Keepable())
	}
	c := a.Clone()
	c.Header().Set("X-Sent", "1")
	io.WriteString(c, " more")
	if a.Header().Get("X-Sent") != "" || string(a.Body()) != "none" {
		t.Errorf("the clone's changes reached the answer: header %v, body %q", a.Header(), a.Body())
	}
	k := NewAnswer(http.Header{"Cache-Control": {CacheFor(http.StatusOK)}}, http.StatusOK)
	if !k.Keepable() {
		t.Error("a 200 marked to be revalidated is not keepable")
	}
}

// TestAStaticFileUnderItsHash: a file is named by its content's hash and
// kept for a year under it, revalidated and keyed "static" under its
// plain name; a name not at the top is not found.
func TestAStaticFileUnderItsHash(t *testing.T) {
	t.Parallel()
	sf, err := NewStatic(fstest.MapFS{"style.css": {Data: []byte("body{}")}, "dir/x.css": {Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	hashed := sf.Path("style.css")
	if hashed == "/static/style.css" || !strings.HasSuffix(hashed, ".css") {
		t.Fatalf("Path(style.css) = %q, want a name with its hash", hashed)
	}
	ask := func(p string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		sf.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		return w
	}
	if w := ask(hashed); w.Code != 200 || w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || w.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("%s: %d, Cache-Control %q, Content-Type %q; want a year, immutable, CSS", hashed, w.Code,
			w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
	}
	if w := ask("/static/style.css"); w.Code != 200 || w.Header().Get("Cache-Control") != Revalidate || w.Header().Get(edge.SurrogateKey) != "static" {
		t.Errorf("plain name: %d, Cache-Control %q, keys %q; want revalidated under the key static", w.Code,
			w.Header().Get("Cache-Control"), w.Header().Get(edge.SurrogateKey))
	}
	if w := ask("/static/dir/x.css"); w.Code != http.StatusNotFound {
		t.Errorf("a file below the top: %d, want 404", w.Code)
	}
}

// TestGzipIsANewWritersGzip holds the reused gzip writers to what a new
// writer at the level writes, body after body, each read back whole.
func TestGzipIsANewWritersGzip(t *testing.T) {
	t.Parallel()
	bodies := [][]byte{bytes.Repeat([]byte("<tr><td>a chart's row</td></tr>\n"), 4000), []byte("short"), {},
		bytes.Repeat([]byte(`{"rank":1,"title":"x"},`), 900)}
	for round := range 3 {
		for i, body := range bodies {
			var want bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&want, gzip.DefaultCompression)
			zw.Write(body)
			zw.Close()
			got := Gzip(body)
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("round %d body %d: Gzip is %d bytes, a new writer's %d", round, i, len(got), want.Len())
			}
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if back, err := io.ReadAll(zr); err != nil || !bytes.Equal(back, body) {
				t.Fatalf("round %d body %d: read back %d bytes (%v), want %d", round, i, len(back), err, len(body))
			}
		}
	}
}

// BenchmarkGzip compresses a chart page's bytes with a reused writer
// and, in the same loop, with a new writer each time as before:
// "alloc-new/reused" is how many more bytes the new writers allocated,
// "new/reused" how many times longer they took.
func BenchmarkGzip(b *testing.B) {
	body := bytes.Repeat([]byte("<tr><td>1</td><td><a href=\"/v/abc\">a video's title</a></td><td>12,345</td></tr>\n"), 1500)
	var took [2]time.Duration
	var alloc [2]uint64
	measure := func(i int, f func()) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		f()
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		measure(0, func() { Gzip(body) })
		measure(1, func() {
			var z bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&z, gzip.DefaultCompression)
			zw.Write(body)
			zw.Close()
		})
	}
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-new/reused")
	b.ReportMetric(float64(took[1])/float64(took[0]), "new/reused")
}
