package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/store"
)

// wire counts the bytes of the answers a client reads, and with whole set
// takes fields= off every request: the client as it was before it asked
// for less.
type wire struct {
	whole  bool
	mu     sync.Mutex
	bytes  map[string]int64 // by the operation's path (ingest.Operation)
	calls  map[string]int64
	fields map[string]string // the fields= each path was asked with
}

func newWire(whole bool) *wire {
	return &wire{whole: whole, bytes: map[string]int64{}, calls: map[string]int64{}, fields: map[string]string{}}
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	q := r.URL.Query()
	w.mu.Lock()
	w.fields[path.Base(r.URL.Path)] = q.Get("fields")
	w.mu.Unlock()
	if w.whole {
		q.Del("fields")
		r.URL.RawQuery = q.Encode()
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = &counted{ReadCloser: res.Body, w: w, path: path.Base(r.URL.Path)}
	w.mu.Lock()
	w.calls[path.Base(r.URL.Path)]++
	w.mu.Unlock()
	return res, nil
}

type counted struct {
	io.ReadCloser
	w    *wire
	path string
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.w.mu.Lock()
	c.w.bytes[c.path] += int64(n)
	c.w.mu.Unlock()
	return n, err
}

// wholeClient is a second client on e's fake whose requests go without
// fields=.
func wholeClient(t *testing.T, e *env, w *wire) *fetch.Client {
	t.Helper()
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: e.srv.URL + "/", APIKey: key,
		HTTPClient: &http.Client{Transport: w}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAnswersCutToWhatIsKept: every call asks for part of its answer, and
// what the worker makes of the part is what it made of the whole answer.
// A field read from an answer without being named in what the call keeps
// (ingest.Keeps) reads as absent from the part, and fails here.
func TestAnswersCutToWhatIsKept(t *testing.T) {
	t.Parallel()
	cut, whole := newWire(false), newWire(true)
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = &http.Client{Transport: cut} })
	all := wholeClient(t, e, whole)
	ctx := context.Background()
	var kept []ingest.Video
	for _, region := range []string{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"} {
		var got, want []ingest.Page
		if err := chart(e.client, nil, region, func(p ingest.Page) error { got = append(got, p); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := chart(all, nil, region, func(p ingest.Page) error { want = append(want, p); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			got[i].Fetched, want[i].Fetched = time.Time{}, time.Time{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chart %s: the pages read from the part differ from the whole answer's: %s", region, firstDiff(got, want))
		}
		for _, p := range want {
			kept = append(kept, p.Videos...)
		}
	}
	everyStoredFieldRead(t, kept)

	ids := make([]string, 0, fetch.MaxStatsIDs)
	for _, v := range kept[:fetch.MaxStatsIDs] {
		ids = append(ids, v.ID)
	}
	same(t, "videos.list id=", func(c *fetch.Client) (any, error) { return c.Videos(ctx, nil, ids) }, e.client, all)
	same(t, "videos.batchGetStats", func(c *fetch.Client) (any, error) {
		s, err := c.Stats(ctx, nil, ids)
		for i := range s {
			s[i].At = time.Time{}
		}
		return s, err
	}, e.client, all)
	same(t, "search.list", func(c *fetch.Client) (any, error) {
		q := ingest.SearchQuery{Region: "US", After: fakeyt.Anchor.AddDate(0, -6, 0), Before: fakeyt.Anchor}
		ids, next, err := c.SearchPage(ctx, nil, q, "")
		return []any{ids, next}, err
	}, e.client, all)
	same(t, "videoCategories.list", func(c *fetch.Client) (any, error) { return c.Categories(ctx, nil, "DE", "de") }, e.client, all)
	same(t, "i18nRegions.list", func(c *fetch.Client) (any, error) { return c.Regions(ctx, nil) }, e.client, all)

	for _, o := range ingest.Operations {
		if got, want := cut.fields[o.Path], ingest.Fields(ingest.Keeps(o.Name)); got != want {
			t.Errorf("%s asked with fields=%q, want %q", o.Name, got, want)
		}
	}
	for _, o := range ingest.Operations {
		p := o.Path
		if cut.bytes[p] >= whole.bytes[p] {
			t.Errorf("%s: %d bytes read of the part, %d of the whole: the part is no smaller", o.Name, cut.bytes[p], whole.bytes[p])
		}
	}
	t.Logf("a chart call read %d bytes with fields=, %d without: %.2fx",
		cut.bytes["videos"]/cut.calls["videos"], whole.bytes["videos"]/whole.calls["videos"],
		float64(cut.bytes["videos"])/float64(whole.bytes["videos"]))
}

// same fails the test when call gives one thing through c and another
// through the client of whole answers.
func same(t *testing.T, what string, call func(*fetch.Client) (any, error), c, whole *fetch.Client) {
	t.Helper()
	got, err := call(c)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want, err := call(whole)
	if err != nil {
		t.Fatalf("%s without fields=: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: read from the part\n%v\nfrom the whole answer\n%v", what, got, want)
	}
}

// everyStoredFieldRead fails the test when a field the store writes is
// empty in every video: the comparison above would then hold it to
// nothing.
func everyStoredFieldRead(t *testing.T, vids []ingest.Video) {
	t.Helper()
	for _, f := range store.VideoFields() {
		set := false
		for i := range vids {
			if !reflect.ValueOf(f.Value(&vids[i])).IsZero() {
				set = true
				break
			}
		}
		if !set {
			t.Errorf("store column %s (Video.%s) is empty in every video of the charts", f.Column, f.Go)
		}
	}
}

// firstDiff names the first field of a video that two charts' pages read
// differently.
func firstDiff(got, want []ingest.Page) string {
	for i := range min(len(got), len(want)) {
		for j := range min(len(got[i].Videos), len(want[i].Videos)) {
			g, w := reflect.ValueOf(got[i].Videos[j]), reflect.ValueOf(want[i].Videos[j])
			for k := range g.NumField() {
				if !reflect.DeepEqual(g.Field(k).Interface(), w.Field(k).Interface()) {
					return fmt.Sprintf("page %d video %s: %s %v, want %v", i+1, want[i].Videos[j].ID,
						g.Type().Field(k).Name, g.Field(k).Interface(), w.Field(k).Interface())
				}
			}
		}
	}
	return "the pages' lengths or tokens"
}

// TestAnswerDecodedOnce: a chart page's answer is decoded once, for what
// is kept of it; what the worker does not read is not decoded at all, so
// a field of it that the Google client's types could not hold (a number
// where they hold a string) costs nothing and breaks nothing.
func TestAnswerDecodedOnce(t *testing.T) {
	t.Parallel()
	body := []byte(`{"kind":1,"etag":2,"pageInfo":"many","nextPageToken":"T2","items":[` +
		`{"kind":3,"etag":4,"id":"a","snippet":{"title":"A"},"statistics":{"viewCount":"7","favoriteCount":6}},` +
		`{"id":"b","statistics":{"viewCount":"0","likeCount":"1","commentCount":"2"}}]}`)
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: key,
		HTTPClient: &http.Client{Transport: replay(body)}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Trending(context.Background(), nil, "US", "")
	if err != nil {
		t.Fatalf("a page whose unread fields are not the client's types: %v", err)
	}
	if len(p.Videos) != 2 || p.NextToken != "T2" || p.Videos[0].Title != "A" {
		t.Fatalf("page: %d videos, token %q: %+v", len(p.Videos), p.NextToken, p.Videos)
	}
	a, b := p.Videos[0], p.Videos[1]
	if a.ViewCount == nil || *a.ViewCount != 7 || a.LikeCount != nil || a.CommentCount != nil {
		t.Errorf("a: views %v likes %v comments %v, want 7 and two hidden", a.ViewCount, a.LikeCount, a.CommentCount)
	}
	if b.ViewCount == nil || *b.ViewCount != 0 || b.LikeCount == nil || *b.LikeCount != 1 || b.CommentCount == nil || *b.CommentCount != 2 {
		t.Errorf("b: views %v likes %v comments %v, want 0, 1 and 2", b.ViewCount, b.LikeCount, b.CommentCount)
	}
}
