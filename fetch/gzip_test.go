package fetch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// onWire records what a client asked of the upstream and how each answer
// came. With plain set it sends the Google client's User-Agent alone, as
// the worker did before it asked for gzip: the upstream answers plain.
type onWire struct {
	plain     bool
	mu        sync.Mutex
	agents    []string
	encodings []string // each answer's Content-Encoding
}

func (w *onWire) RoundTrip(r *http.Request) (*http.Response, error) {
	if w.plain {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", "google-api-go-client/0.5")
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.agents = append(w.agents, r.Header.Get("User-Agent"))
	w.encodings = append(w.encodings, res.Header.Get("Content-Encoding"))
	w.mu.Unlock()
	return res, nil
}

func (w *onWire) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.encodings[len(w.encodings)-1]
}

// TestAnswersComeGzippedAndReadAsPlain: every call asks for gzip as the
// upstream wants it asked (Accept-Encoding, and "gzip" in a User-Agent
// that names ingest and its release), every answer comes gzipped, errors
// too, and what the worker reads of each is what it reads of the plain
// answer.
func TestAnswersComeGzippedAndReadAsPlain(t *testing.T) {
	t.Parallel()
	gz, plain := &onWire{}, &onWire{plain: true}
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = &http.Client{Transport: gz} })
	pc, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: e.srv.URL + "/", APIKey: key,
		HTTPClient: &http.Client{Transport: plain}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for _, region := range []string{"US", "JP"} {
		var got, want []ingest.Page
		if err := chart(e.client, nil, region, func(p ingest.Page) error { got = append(got, p); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := chart(pc, nil, region, func(p ingest.Page) error { want = append(want, p); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			got[i].Fetched, want[i].Fetched = time.Time{}, time.Time{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chart %s: the pages read gzipped differ from the plain ones: %s", region, firstDiff(got, want))
		}
		for _, v := range want[0].Videos[:10] {
			ids = append(ids, v.ID)
		}
	}
	calls := map[string]func(*fetch.Client) (any, error){
		"videos.list id=": func(c *fetch.Client) (any, error) { return c.Videos(ctx, nil, ids) },
		"videos.batchGetStats": func(c *fetch.Client) (any, error) {
			s, err := c.Stats(ctx, nil, ids)
			for i := range s {
				s[i].At = time.Time{}
			}
			return s, err
		},
		"search.list": func(c *fetch.Client) (any, error) {
			ids, next, err := c.SearchPage(ctx, nil, ingest.SearchQuery{Region: "US", After: fakeyt.Anchor.AddDate(0, -6, 0)}, "")
			return []any{ids, next}, err
		},
		"videoCategories.list": func(c *fetch.Client) (any, error) { return c.Categories(ctx, nil, "FR", "fr") },
		"i18nRegions.list":     func(c *fetch.Client) (any, error) { return c.Regions(ctx, nil) },
	}
	for name, call := range calls {
		got, gerr := call(e.client)
		want, werr := call(pc)
		if gerr != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read gzipped %v (%v), plain %v (%v)", name, got, gerr, want, werr)
		}
	}
	e.fake.NoChart("DE")
	if _, err := e.client.Trending(ctx, nil, "DE", ""); !errors.Is(err, ingest.ErrNoChart) || gz.last() != "gzip" {
		t.Errorf("a chart the upstream has not, answered %q: %v, want ErrNoChart", gz.last(), err)
	}
	e.fake.ExhaustQuota(fakeyt.QuotaExceeded)
	var qe *ingest.QuotaExhaustedError
	if _, err := e.client.Trending(ctx, nil, "US", ""); !errors.As(err, &qe) || gz.last() != "gzip" {
		t.Errorf("a spent quota, answered %q: %v, want a QuotaExhaustedError", gz.last(), err)
	}
	for i, ua := range gz.agents {
		if !strings.Contains(ua, "(gzip)") || !strings.Contains(ua, "ingest/"+ingest.Release()) || gz.encodings[i] != "gzip" {
			t.Errorf("call %d: User-Agent %q, answered %q; want ingest/%s and (gzip) in it, and gzip", i, ua, gz.encodings[i], ingest.Release())
		}
	}
	for i, enc := range plain.encodings {
		if enc != "" {
			t.Errorf("the plain client's call %d answered %q", i, enc)
		}
	}
}

// notGzip answers every request 200 saying gzip, with a body that is not.
func notGzip(body string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Request: r,
			Header: http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}},
			Body:   io.NopCloser(strings.NewReader(body))}, nil
	}
}

// TestAnswerNotGzipIsMalformed: an answer that says gzip and is not is
// the upstream's malformed answer, named so, retried as one, through
// every way an answer is read: decoded once, decoded by the Google
// client, handed on by Forward.
func TestAnswerNotGzipIsMalformed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"items":[]}`, "", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xffnot deflate at all"} {
		e := newEnv(t, func(o *fetch.Options) {
			o.Endpoint = "http://upstream.invalid/"
			o.HTTPClient = &http.Client{Transport: notGzip(body)}
		})
		ctx := context.Background()
		_, err := e.client.Trending(ctx, e.gate.Gate, "US", "")
		if !errors.Is(err, fetch.ErrNotGzip) || !errors.Is(err, fetch.ErrMalformed) {
			t.Errorf("%q: a chart page: %v, want ErrNotGzip and ErrMalformed", body, err)
		}
		if g := e.gate.calls(); g != 4 {
			t.Errorf("%q: gate calls %d, want 4: retried as a malformed answer is", body, g)
		}
		if _, err := e.client.Categories(ctx, nil, "US", ""); !errors.Is(err, fetch.ErrNotGzip) {
			t.Errorf("%q: categories: %v, want ErrNotGzip", body, err)
		}
		if _, err := e.client.Forward(ctx, e.gate.Gate, ingest.OpVideosList, url.Values{}); !errors.Is(err, fetch.ErrNotGzip) {
			t.Errorf("%q: forwarded: %v, want ErrNotGzip", body, err)
		}
	}
}

// TestForwardHandsOnThePlainAnswer: the proxy's call is answered gzipped
// and handed on decoded, saying no encoding, with the key scrubbed from
// the answer the upstream echoed: a proxy that passed the gzip through
// could not scrub it, nor read an error's reason.
func TestForwardHandsOnThePlainAnswer(t *testing.T) {
	t.Parallel()
	gz := &onWire{}
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = &http.Client{Transport: gz} })
	ans, err := e.client.Forward(context.Background(), e.gate.Gate, ingest.OpVideosList,
		url.Values{"part": {"id"}, "chart": {"mostPopular"}, "regionCode": {"US"}})
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ Items []struct{ ID string } }
	if gz.last() != "gzip" || ans.Status != http.StatusOK || ans.Header.Get("Content-Encoding") != "" || json.Unmarshal(ans.Body, &page) != nil || len(page.Items) == 0 {
		t.Errorf("answered %q, handed on HTTP %d, Content-Encoding %q: %.100s", gz.last(), ans.Status, ans.Header.Get("Content-Encoding"), ans.Body)
	}
}

// TestAnInflaterIsReused: reading a gzipped page allocates about what
// reading the plain page does, not an inflater an answer, as Go's
// transport would: one inflater's window alone is 32 KB.
func TestAnInflaterIsReused(t *testing.T) {
	if raceEnabled {
		// The race detector's sync.Pool drops a share of what is put in it
		// on purpose, so reuse is what a build without it shows.
		t.Skip("a pool under the race detector drops what it is given at random")
	}
	fake := fakeyt.New()
	q := url.Values{"key": {key}, "part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"}, "regionCode": {"US"},
		"maxResults": {"50"}, "fields": {ingest.Fields(ingest.Keeps(ingest.OpVideosList))}}
	page := serve(t, fake, "/youtube/v3/videos?"+q.Encode(), "")
	zipped := serve(t, fake, "/youtube/v3/videos?"+q.Encode(), "ingest (gzip)")
	perCall := func(body []byte, enc string) uint64 {
		c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: key,
			HTTPClient: &http.Client{Transport: replayAs(body, enc)}})
		if err != nil {
			t.Fatal(err)
		}
		const n = 50
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			if _, err := c.Trending(context.Background(), nil, "US", ""); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	p, z := perCall(page, ""), perCall(zipped, "gzip")
	t.Logf("bytes allocated a call: %d gzipped, %d plain", z, p)
	if z > p+16<<10 {
		t.Errorf("a gzipped page allocates %d bytes a call, a plain one %d: an inflater an answer", z, p)
	}
}

// serve is the fake's answer to path, as sent to a client with ua that
// allows gzip.
func serve(t testing.TB, fake *fakeyt.Fake, path, ua string) []byte {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Accept-Encoding", "gzip")
	r.Header.Set("User-Agent", ua)
	var rec recorder
	fake.ServeAnswer(&rec, r)
	if rec.status != http.StatusOK || (ua != "") != (rec.Header().Get("Content-Encoding") == "gzip") {
		t.Fatalf("GET %s as %q: %d %q", path, ua, rec.status, rec.Header().Get("Content-Encoding"))
	}
	return rec.body.Bytes()
}

type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// replayAs answers every request with body, its Content-Encoding enc.
func replayAs(body []byte, enc string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Type": {"application/json; charset=UTF-8"}}
		if enc != "" {
			h.Set("Content-Encoding", enc)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	}
}
