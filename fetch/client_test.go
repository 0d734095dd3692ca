package fetch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/regions"
)

// key looks like a real key and has characters that URL encoding changes,
// so a leak in either form is caught.
const key = "AIzaSyTEST-s3cr3t+key/9Z"

type env struct {
	fake   *fakeyt.Fake
	srv    *httptest.Server
	client *fetch.Client
	gate   *gateRec
	logs   *syncBuffer
}

func newEnv(t *testing.T, mutate ...func(*fetch.Options)) *env {
	t.Helper()
	fake := fakeyt.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	logs := &syncBuffer{}
	opts := fetch.Options{Now: time.Now, Endpoint: srv.URL + "/", APIKey: key, Backoff: 2 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, m := range mutate {
		m(&opts)
	}
	c, err := fetch.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{fake: fake, srv: srv, client: c, gate: &gateRec{}, logs: logs}
	t.Cleanup(func() { e.noKey(t, "logs", logs.String()) })
	return e
}

// noKey fails the test if s holds the key in any form.
func (e *env) noKey(t *testing.T, what, s string) {
	t.Helper()
	for _, k := range []string{key, url.QueryEscape(key), "s3cr3t"} {
		if strings.Contains(s, k) {
			t.Errorf("%s hold the API key: %s", what, s)
		}
	}
}

// gateRec records the gate's calls and refuses when told to.
type gateRec struct {
	mu        sync.Mutex
	ops       []string
	givenBack []int // the attempts given back, numbered from 1
	refuse    func(n int, op string) error
}

func (g *gateRec) Gate(ctx context.Context, op string) (func(context.Context) error, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ops = append(g.ops, op)
	n := len(g.ops)
	giveBack := func(context.Context) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.givenBack = append(g.givenBack, n)
		return nil
	}
	if g.refuse != nil {
		return giveBack, g.refuse(n, op)
	}
	return giveBack, nil
}

func (g *gateRec) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ops)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// chart follows region's chart from its first page to its last, calling fn
// with each page numbered from 1, as a pass does.
func chart(c *fetch.Client, gate ingest.Gate, region string, fn func(ingest.Page) error) error {
	token := ""
	for n := 1; n <= 20; n++ {
		page, err := c.Trending(context.Background(), gate, region, token)
		if err != nil {
			return err
		}
		page.Number = n
		if err := fn(page); err != nil {
			return err
		}
		if token = page.NextToken; token == "" {
			return nil
		}
	}
	return fmt.Errorf("chart %s longer than 20 pages", region)
}

func TestTrendingEveryRegion(t *testing.T) {
	t.Parallel()
	for _, region := range regions.Default {
		t.Run(region, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var videos, pages int
			ids := map[string]bool{}
			err := chart(e.client, e.gate.Gate, region, func(p ingest.Page) error {
				pages++
				if p.Number != pages || p.Kind != ingest.Trending || p.Region != region || p.Fetched.IsZero() {
					t.Errorf("page %d: Number %d Kind %q Region %q Fetched %v", pages, p.Number, p.Kind, p.Region, p.Fetched)
				}
				if len(p.Videos) > 50 {
					t.Errorf("page %d has %d videos", pages, len(p.Videos))
				}
				for _, v := range p.Videos {
					ids[v.ID] = true
				}
				videos += len(p.Videos)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := fakeyt.ChartLengths[region]
			if videos != want || len(ids) != want {
				t.Errorf("videos = %d (%d distinct), want %d", videos, len(ids), want)
			}
			if wantPages := (want + 49) / 50; pages != wantPages {
				t.Errorf("pages = %d, want %d", pages, wantPages)
			}
			if g := e.gate.calls(); g != pages || e.fake.Charged(key) != int64(pages) || e.fake.Requests() != int64(pages) {
				t.Errorf("gate %d, charged %d, requests %d, want %d each", g, e.fake.Charged(key), e.fake.Requests(), pages)
			}
		})
	}
}

func TestTrendingFollowsTokensToTheEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	token, total := "", 0
	for n := 1; ; n++ {
		p, err := e.client.Trending(context.Background(), e.gate.Gate, "GB", token)
		if err != nil {
			t.Fatal(err)
		}
		total += len(p.Videos)
		if token = p.NextToken; token == "" {
			break
		}
		if n > 5 {
			t.Fatal("chart does not end")
		}
	}
	if total != 77 {
		t.Errorf("GB videos = %d, want 77", total)
	}
	if ops := e.fake.ChargedByOp(key); ops[ingest.OpVideosList] != 2 || len(ops) != 1 {
		t.Errorf("charged by op = %v, want videos.list 2", ops)
	}
}

// rawStats fetches a chart page by hand: the oracle for counts.
func rawStats(t *testing.T, e *env, region string) map[string]map[string]string {
	t.Helper()
	res, err := http.Get(e.srv.URL + "/youtube/v3/videos?part=statistics&chart=mostPopular&maxResults=50&regionCode=" + region + "&key=k")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Items []struct {
			ID         string            `json:"id"`
			Statistics map[string]string `json:"statistics"`
		} `json:"items"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, it := range body.Items {
		out[it.ID] = it.Statistics
	}
	return out
}

func TestCountsParsedAndHiddenNil(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, region := range []string{"US", "IN"} {
		p, err := e.client.Trending(context.Background(), e.gate.Gate, region, "")
		if err != nil {
			t.Fatal(err)
		}
		raw := rawStats(t, e, region)
		var hidden, shown int
		for _, v := range p.Videos {
			st := raw[v.ID]
			if v.ViewCount == nil {
				t.Errorf("%s views = nil, want %s", v.ID, st["viewCount"])
			} else if got := strconv.FormatInt(*v.ViewCount, 10); got != st["viewCount"] || *v.ViewCount == 0 {
				t.Errorf("%s views = %s, want %s", v.ID, got, st["viewCount"])
			}
			for name, got := range map[string]*int64{"likeCount": v.LikeCount, "commentCount": v.CommentCount} {
				want, sent := st[name]
				switch {
				case !sent && got != nil:
					t.Errorf("%s %s = %d, want nil (hidden)", v.ID, name, *got)
				case sent && got == nil:
					t.Errorf("%s %s = nil, want %s", v.ID, name, want)
				case sent && strconv.FormatInt(*got, 10) != want:
					t.Errorf("%s %s = %d, want %s", v.ID, name, *got, want)
				}
				if sent {
					shown++
				} else {
					hidden++
				}
			}
			if v.Title == "" || v.ChannelID == "" || v.CategoryID == "" || v.PublishedAt.IsZero() || !strings.HasPrefix(v.Duration, "P") {
				t.Errorf("%s lacks snippet or contentDetails: %+v", v.ID, v)
			}
		}
		if hidden == 0 || shown == 0 {
			t.Errorf("%s: hidden %d shown %d, want both", region, hidden, shown)
		}
	}
}

func TestGateRefusalStopsBeforeUpstream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	retryAt := time.Now().Add(time.Hour)
	e.gate.refuse = func(int, string) error {
		return &ingest.RefusedError{Decision: ingest.Decision{Op: ingest.OpVideosList, RetryAt: retryAt}}
	}
	calls := []func() error{
		func() error { _, err := e.client.Trending(context.Background(), e.gate.Gate, "US", ""); return err },
		func() error { _, err := e.client.Categories(context.Background(), e.gate.Gate, "US", ""); return err },
		func() error {
			_, _, err := e.client.SearchPage(context.Background(), e.gate.Gate, ingest.SearchQuery{Region: "US"}, "")
			return err
		},
		func() error {
			_, err := e.client.Videos(context.Background(), e.gate.Gate, []string{"a", "b"})
			return err
		},
		func() error {
			_, err := e.client.Stats(context.Background(), e.gate.Gate, []string{"a", "b"})
			return err
		},
	}
	for i, call := range calls {
		err := call()
		var re *ingest.RefusedError
		if !errors.As(err, &re) || !re.Decision.RetryAt.Equal(retryAt) {
			t.Errorf("call %d: err = %v, want a *RefusedError", i, err)
		}
	}
	if r := e.fake.Requests(); r != 0 {
		t.Errorf("upstream got %d requests after refusals, want 0", r)
	}
	if g := e.gate.calls(); g != len(calls) {
		t.Errorf("gate calls = %d, want %d", g, len(calls))
	}
}

func TestGateRefusalMidRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.FailNext(5, 503)
	e.gate.refuse = func(n int, _ string) error {
		if n == 3 {
			return &ingest.RefusedError{}
		}
		return nil
	}
	_, err := e.client.Trending(context.Background(), e.gate.Gate, "US", "")
	var re *ingest.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a refusal on the third attempt", err)
	}
	if r := e.fake.Requests(); r != 2 {
		t.Errorf("requests = %d, want 2 (the third attempt was refused)", r)
	}
}

func TestQuotaExhausted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		shape     fakeyt.QuotaShape
		op        string
		perMethod bool
	}{
		{"quotaExceeded", fakeyt.QuotaExceeded, ingest.OpVideosList, false},
		{"dailyLimitExceeded", fakeyt.DailyLimitExceeded, ingest.OpVideosList, false},
		{"searchPerDay", fakeyt.SearchPerDay, ingest.OpSearchList, true},
		{"statsPerDay", fakeyt.StatsPerDay, ingest.OpBatchGetStats, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fake.ExhaustQuota(tc.shape)
			before := time.Now()
			err, op := callOp(e, tc.op), tc.op
			var qe *ingest.QuotaExhaustedError
			if !errors.As(err, &qe) || !errors.Is(err, ingest.ErrQuotaExhausted) {
				t.Fatalf("err = %v, want *QuotaExhaustedError", err)
			}
			if qe.PerMethod != tc.perMethod || qe.Op != op {
				t.Errorf("PerMethod %v Op %q, want %v %q", qe.PerMethod, qe.Op, tc.perMethod, op)
			}
			if want := ingest.UpstreamReset(before); !qe.Reset.Equal(want) && !qe.Reset.Equal(ingest.UpstreamReset(time.Now())) {
				t.Errorf("Reset = %s, want %s", qe.Reset, want)
			}
			if g, r := e.gate.calls(), e.fake.Requests(); g != 1 || r != 1 {
				t.Errorf("gate %d requests %d, want 1 each (no retry)", g, r)
			}
		})
	}
}

func TestTransientRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		fails  int
		ok     bool
		tries  int
	}{
		{"503 burst", 503, 3, true, 4},
		{"500 burst", 500, 1, true, 2},
		{"429 per minute", 429, 2, true, 3},
		{"too many", 503, 9, false, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fake.FailNext(tc.fails, tc.status)
			p, err := e.client.Trending(context.Background(), e.gate.Gate, "US", "")
			if tc.ok && (err != nil || len(p.Videos) != 50) {
				t.Fatalf("err = %v, %d videos; want a full page after retries", err, len(p.Videos))
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "4 attempts")) {
				t.Fatalf("err = %v, want giving up after 4 attempts", err)
			}
			g, charged := e.gate.calls(), e.fake.Charged(key)
			if g != tc.tries || charged != int64(tc.tries) || e.fake.Requests() != int64(tc.tries) {
				t.Errorf("gate %d charged %d requests %d, want %d each", g, charged, e.fake.Requests(), tc.tries)
			}
		})
	}
}

func TestRetryWaitHonoursContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *fetch.Options) { o.Backoff = time.Hour })
	e.fake.FailNext(5, 503)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.client.Trending(ctx, e.gate.Gate, "US", "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
	if g := e.gate.calls(); g != 1 {
		t.Errorf("gate calls = %d, want 1", g)
	}
}

func TestBadKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(*fakeyt.Fake)
	}{
		{"API_KEY_INVALID", func(f *fakeyt.Fake) { f.BadKey(fakeyt.KeyInvalid) }},
		{"keyInvalid", func(f *fakeyt.Fake) { f.BadKey(fakeyt.KeyInvalidLegacy) }},
		{"unknown key", func(f *fakeyt.Fake) { f.AllowKeys("another-key") }},
		{"API_KEY_SERVICE_BLOCKED", func(f *fakeyt.Fake) { f.BadKey(fakeyt.KeyBlocked) }},
		{"accessNotConfigured", func(f *fakeyt.Fake) { f.BadKey(fakeyt.KeyNotConfigured) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tc.setup(e.fake)
			_, err := e.client.Trending(context.Background(), e.gate.Gate, "US", "")
			if !errors.Is(err, ingest.ErrBadKey) {
				t.Fatalf("err = %v, want ErrBadKey", err)
			}
			if !strings.Contains(err.Error(), "YOUTUBE_API_KEY") {
				t.Errorf("error does not name YOUTUBE_API_KEY: %v", err)
			}
			e.noKey(t, "the error", err.Error())
			if g, r := e.gate.calls(), e.fake.Requests(); g != 1 || r != 1 {
				t.Errorf("gate %d requests %d, want 1 each (no retry)", g, r)
			}
		})
	}
}

func TestKeyIsSentAndCallerClientUntouched(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, r.URL.Query().Get("key"))
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	caller := &http.Client{Transport: base}
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = caller; o.Endpoint = strings.TrimSuffix(o.Endpoint, "/") })
	e.fake.AllowKeys(key)
	if _, err := e.client.Categories(context.Background(), e.gate.Gate, "FR", ""); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != key {
		t.Errorf("keys sent = %d %v, want the key once", len(seen), len(seen) == 1 && seen[0] == key)
	}
	if _, ok := caller.Transport.(roundTripFunc); !ok {
		t.Errorf("the caller's client was changed")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	logs := &syncBuffer{}
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: closed, APIKey: key, Backoff: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	g := &gateRec{}
	_, err = c.Trending(context.Background(), g.Gate, "US", "")
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	e := &env{}
	e.noKey(t, "the error", err.Error())
	e.noKey(t, "the logs", logs.String())
	if g.calls() != 4 {
		t.Errorf("gate calls = %d, want 4 (network errors are retried)", g.calls())
	}
	// The port refused every connection: the upstream never saw a request
	// and charged nothing, so every attempt's units are given back.
	g.mu.Lock()
	if len(g.givenBack) != 4 {
		t.Errorf("attempts given back: %v, want all 4 (a refused connection never reached the upstream)", g.givenBack)
	}
	g.mu.Unlock()
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("retries were not logged: %s", logs.String())
	}
	// A transport that puts the whole URL in its error must be redacted too.
	leaky := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("dial failed for " + r.URL.String())
	})
	c, _ = fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: closed, APIKey: key, Backoff: time.Millisecond,
		MaxAttempts: 1, HTTPClient: &http.Client{Transport: leaky}})
	_, err = c.Videos(context.Background(), nil, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "REDACTED") {
		t.Errorf("err = %v, want the key redacted", err)
	}
	e.noKey(t, "the error", err.Error())
}

func TestNoChart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.NoChart("FR")
	_, err := e.client.Trending(context.Background(), e.gate.Gate, "FR", "")
	if !errors.Is(err, ingest.ErrNoChart) {
		t.Fatalf("err = %v, want ErrNoChart", err)
	}
	_, err = e.client.Trending(context.Background(), e.gate.Gate, "XX", "")
	if !errors.Is(err, ingest.ErrNoChart) {
		t.Errorf("unknown region: err = %v, want ErrNoChart", err)
	}
	if g := e.gate.calls(); g != 2 {
		t.Errorf("gate calls = %d, want 2 (no retry)", g)
	}
}

func TestInvalidPageToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, err := e.client.Trending(context.Background(), e.gate.Gate, "US", "")
	if err != nil {
		t.Fatal(err)
	}
	e.fake.InvalidateTokens()
	_, err = e.client.Trending(context.Background(), e.gate.Gate, "US", p.NextToken)
	if !errors.Is(err, ingest.ErrInvalidPageToken) {
		t.Fatalf("err = %v, want ErrInvalidPageToken", err)
	}
	if g := e.gate.calls(); g != 2 {
		t.Errorf("gate calls = %d, want 2 (no retry)", g)
	}
}

func TestMalformedBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A cut body is retried as a 5xx is: the next answer is whole.
	e.fake.MalformNext(1)
	p, err := e.client.Trending(context.Background(), e.gate.Gate, "US", "")
	if err != nil || len(p.Videos) == 0 {
		t.Fatalf("err = %v, %d videos: want the page of the retry", err, len(p.Videos))
	}
	if g := e.gate.calls(); g != 2 {
		t.Errorf("gate calls = %d, want 2 (a malformed body is retried, through the gate)", g)
	}
	// Every attempt malformed: ErrMalformed, nothing of the page.
	e.fake.MalformNext(1 << 20)
	p, err = e.client.Trending(context.Background(), e.gate.Gate, "US", "")
	if !errors.Is(err, fetch.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	if len(p.Videos) != 0 || p.NextToken != "" {
		t.Errorf("a malformed page returned %d videos", len(p.Videos))
	}
	if _, err := e.client.Videos(context.Background(), e.gate.Gate, []string{"x"}); !errors.Is(err, fetch.ErrMalformed) {
		t.Errorf("videos by id: err = %v, want ErrMalformed", err)
	}
}

func TestBadCountIsMalformed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"kind":"youtube#videoListResponse","items":[{"id":"a","statistics":{"viewCount":"lots"}}]}`)
	}))
	defer srv.Close()
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: srv.URL, APIKey: key, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Trending(context.Background(), nil, "US", ""); !errors.Is(err, fetch.ErrMalformed) {
		t.Errorf("err = %v, want ErrMalformed", err)
	}
}

func TestCategories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cats, err := e.client.Categories(context.Background(), e.gate.Gate, "DE", "")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, c := range cats {
		if c.Region != "DE" {
			t.Errorf("category %s region %q", c.ID, c.Region)
		}
		byID[c.ID] = c.Title
	}
	if byID["10"] != "Music" || byID["17"] != "Sports" {
		t.Errorf("categories = %v", byID)
	}
	if ops := e.fake.ChargedByOp(key); ops[ingest.OpCategoriesList] != 1 || e.gate.ops[0] != ingest.OpCategoriesList {
		t.Errorf("charged %v, gate ops %v", ops, e.gate.ops)
	}
	// hl asks the upstream for the names in a language: the same ids,
	// named in German, each saying the language it was asked in.
	de, err := e.client.Categories(context.Background(), e.gate.Gate, "DE", "de")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range de {
		if byID[c.ID] == "" || c.Language != "de" || c.ID == "10" && c.Title != "Musik" {
			t.Errorf("hl=de: category %+v, want the ids of the English call, titled in German", c)
		}
	}
	if len(de) != len(cats) {
		t.Errorf("hl=de: %d categories, want the English call's %d", len(de), len(cats))
	}
}

func TestSearchThenVideos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := ingest.SearchQuery{Region: "US", After: fakeyt.Anchor.AddDate(0, -6, 0), Before: fakeyt.Anchor}
	var ids []string
	pages := 0
	for token := ""; ; {
		got, next, err := e.client.SearchPage(context.Background(), e.gate.Gate, q, token)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		ids = append(ids, got...)
		if token = next; token == "" {
			break
		}
	}
	if len(ids) <= 50 {
		t.Fatalf("search found %d ids, want several pages", len(ids))
	}
	vids, err := e.client.Videos(context.Background(), e.gate.Gate, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(vids) != len(ids) {
		t.Fatalf("details for %d of %d ids", len(vids), len(ids))
	}
	var prev int64 = 1 << 62
	for i, v := range vids {
		if v.ID != ids[i] {
			t.Errorf("video %d = %s, want %s (order kept)", i, v.ID, ids[i])
		}
		if v.PublishedAt.Before(q.After) || !v.PublishedAt.Before(q.Before) {
			t.Errorf("%s published %s, outside the window", v.ID, v.PublishedAt)
		}
		if *v.ViewCount > prev {
			t.Errorf("%s: not in viewCount order", v.ID)
		}
		prev = *v.ViewCount
	}
	idCalls := (len(ids) + 49) / 50
	// 2026: a search.list call is one of the search bucket, none of default.
	want := map[string]int64{"search": int64(pages), "default": int64(idCalls)}
	if got := e.fake.ChargedBuckets(key); !maps.Equal(got, want) || !maps.Equal(e.gate.ledger(), want) {
		t.Errorf("charged %v, ledger %v, want %v", got, e.gate.ledger(), want)
	}
	if g := e.gate.calls(); g != pages+idCalls {
		t.Errorf("gate calls = %d, want %d", g, pages+idCalls)
	}

	football, _, err := e.client.SearchPage(context.Background(), e.gate.Gate, ingest.SearchQuery{Region: "GB", Query: "world cup"}, "")
	if err != nil || len(football) == 0 {
		t.Fatalf("q=world cup: %d ids, err %v", len(football), err)
	}
	vids, err = e.client.Videos(context.Background(), e.gate.Gate, football[:1])
	if err != nil || !strings.Contains(strings.ToLower(vids[0].Title+vids[0].Description+strings.Join(vids[0].Tags, " ")), "world cup") {
		t.Errorf("first hit for world cup: %+v, err %v", vids, err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	if _, err := fetch.New(context.Background(), fetch.Options{}); err == nil || !strings.Contains(err.Error(), "YOUTUBE_API_KEY") {
		t.Errorf("no key: err = %v, want one naming YOUTUBE_API_KEY", err)
	}
	if _, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, APIKey: key, Endpoint: "localhost:8080"}); err == nil {
		t.Errorf("endpoint without scheme accepted")
	}
	if _, err := fetch.New(context.Background(), fetch.Options{APIKey: key}); err == nil || !strings.Contains(err.Error(), "Options.Now") {
		t.Errorf("no clock: err = %v, want one naming Options.Now", err)
	}
}

func TestConcurrentRegionsShareOneClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.FailNext(3, 500)
	var wg sync.WaitGroup
	counts := make([]int, len(regions.Default))
	errs := make([]error, len(regions.Default))
	for i, region := range regions.Default {
		wg.Go(func() {
			errs[i] = chart(e.client, e.gate.Gate, region, func(p ingest.Page) error {
				counts[i] += len(p.Videos)
				return nil
			})
		})
	}
	wg.Wait()
	for i, region := range regions.Default {
		if errs[i] != nil || counts[i] != fakeyt.ChartLengths[region] {
			t.Errorf("%s: %d videos, err %v; want %d", region, counts[i], errs[i], fakeyt.ChartLengths[region])
		}
	}
	if g, c := e.gate.calls(), e.fake.Charged(key); int64(g) != c || e.fake.Requests() != c {
		t.Errorf("gate %d, charged %d, requests %d: want equal", g, c, e.fake.Requests())
	}
}

func TestAttemptTimeoutRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = &http.Client{Timeout: time.Second} })
	e.fake.SetLatency(time.Hour)
	e.gate.refuse = func(n int, _ string) error {
		if n == 2 {
			e.fake.SetLatency(0)
		}
		return nil
	}
	p, err := e.client.Trending(context.Background(), e.gate.Gate, "CA", "")
	if err != nil || len(p.Videos) != 50 {
		t.Fatalf("err = %v, %d videos; want the second attempt to succeed", err, len(p.Videos))
	}
	if g := e.gate.calls(); g != 2 {
		t.Errorf("gate calls = %d, want 2", g)
	}
}
