package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// rebuilding is a server over a database holding one US chart, on a
// clock the test moves, whose builds of kept answers run hold (when set,
// and hold is armed) before they read the store, and which tells landed
// of each build beside the requests that is over.
type rebuilding struct {
	s      *Server
	srv    *httptest.Server
	db     *store.DB
	now    *time.Time
	armed  atomic.Bool
	landed chan string
}

func newRebuilding(t *testing.T, now *time.Time, timeout time.Duration, hold func(r *http.Request)) *rebuilding {
	t.Helper()
	rb := &rebuilding{db: storetest.Open(t), now: now, landed: make(chan string, 64)}
	chartRun(t, rb.db, "", now.Add(-10*time.Minute), ingest.Video{ID: "vid-a", Title: "Alpha"}, ingest.Video{ID: "vid-b", Title: "Beta"})
	s, err := New(Config{DB: rb.db, Listen: "127.0.0.1:0", Timeout: timeout, Clock: clock.Func(func() time.Time { return *now })})
	if err != nil {
		t.Fatal(err)
	}
	// Set before the server serves, so that no request reads them while
	// they are written. A reader waits for a page's new copy a short
	// while here: the tests that hold a build would wait freshWait per
	// request.
	s.answers.wait = 50 * time.Millisecond
	s.answers.slow = func(r *http.Request) {
		if hold != nil && rb.armed.Load() {
			hold(r)
		}
	}
	s.answers.rebuilt = func(key string) { rb.landed <- key }
	rb.s, rb.srv = s, httptest.NewServer(s)
	t.Cleanup(rb.srv.Close)
	return rb
}

// await is the key of the next build beside the requests to land; one
// that never lands fails the test rather than hang it.
func (rb *rebuilding) await(t *testing.T) string {
	t.Helper()
	select {
	case key := <-rb.landed:
		return key
	case <-time.After(time.Minute):
		t.Fatal("no build beside the requests landed")
		return ""
	}
}

// get asks for path with header's pairs; a request that is not answered
// in time is the test's failure (the server waited for a build), never
// its measure.
func (rb *rebuilding) get(t *testing.T, path string, header ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", rb.srv.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{Timeout: 20 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v (the request waited for a build)", path, err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.StatusCode, res.Header.Get("ETag"), b.String()
}

// TestKeptPageServedWhileItsRebuildIsSlow: a run lands while a chart page
// is kept; the page is then built again beside the requests, slowly (the
// build is held before it reads the store), and every request meanwhile
// gets the copy kept at once (a conditional one a 304), with one build
// under way however many ask and however long it takes; when it is over
// the new copy takes its place.
func TestKeptPageServedWhileItsRebuildIsSlow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	entered, release := make(chan struct{}, 8), make(chan struct{})
	rb := newRebuilding(t, &now, 0, func(r *http.Request) {
		entered <- struct{}{}
		select { // held past its deadline: only the test lets it go
		case <-release:
		case <-t.Context().Done():
		}
	})
	code, old, _ := rb.get(t, "/charts/US")
	if code != 200 || old == "" {
		t.Fatalf("first build: got %d, ETag %q", code, old)
	}

	chartRun(t, rb.db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(rebuildEvery)
	rb.armed.Store(true)
	for i := range 12 {
		if i == 6 { // a whole bound later, the build still under way
			now = now.Add(rebuildEvery)
		}
		code, tag, body := rb.get(t, "/charts/US")
		if code != 200 || tag != old || strings.Contains(body, "Gamma") {
			t.Fatalf("request %d while the page is built again: got %d, ETag %s (kept %s), new run shown %v; want the copy kept",
				i, code, tag, old, strings.Contains(body, "Gamma"))
		}
		if code, _, _ := rb.get(t, "/charts/US", "If-None-Match", old); code != http.StatusNotModified {
			t.Errorf("request %d, conditional on the copy kept: got %d, want 304", i, code)
		}
		if i == 0 {
			<-entered // the build has begun, and is held
		}
	}
	if n := rb.s.answers.rebuilds.Load(); n != 1 {
		t.Errorf("24 requests while a build was under way started %d builds, want 1", n)
	}
	if n := len(entered); n != 0 {
		t.Errorf("%d more builds entered while one was under way, want none", n)
	}

	close(release)
	if key := rb.await(t); key != "/charts/US" {
		t.Errorf("the build that landed is %q's, want /charts/US's", key)
	}
	code, tag, body := rb.get(t, "/charts/US")
	if code != 200 || tag == old || !strings.Contains(body, "Gamma") {
		t.Errorf("after the build landed: got %d, ETag %s (was %s), new run shown %v; want the new copy", code, tag, old, strings.Contains(body, "Gamma"))
	}
	if n := rb.s.answers.waited.Load(); n != 1 {
		t.Errorf("%d requests waited for a build, want 1 (the first, with no copy)", n)
	}
}

// TestEveryRunShowsOnTheFirstRequestAfterIt: with a run landing every
// second, the first request a mark's read after each (markEvery) shows
// that run, from one build per run however many ask.
func TestEveryRunShowsOnTheFirstRequestAfterIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	rb := newRebuilding(t, &now, 0, nil)
	rb.s.answers.wait = time.Minute // a reader waits for its page however slow the machine
	if code, _, _ := rb.get(t, "/api/v1/charts/US"); code != 200 {
		t.Fatalf("first build: got %d", code)
	}
	const runs = 20
	for i := range runs {
		title := "Run " + now.Format(time.TimeOnly)
		chartRun(t, rb.db, "", now, ingest.Video{ID: "vid-" + string(rune('c'+i%20)), Title: title})
		now = now.Add(markEvery)
		for range 3 {
			if code, _, body := rb.get(t, "/api/v1/charts/US"); code != 200 || !strings.Contains(body, title) {
				t.Fatalf("a mark's read after run %d landed: got %d, the run shown %v; want it shown", i, code, strings.Contains(body, title))
			}
		}
	}
	if n := rb.s.answers.builds.Load(); n > runs+1 {
		t.Errorf("%d runs, each asked for three times: %d builds, want at most one a run and the first", runs, n)
	}
}

// TestKeptPageNeverAnswersAFailedRebuild: a build beside the requests
// that runs out of time leaves the copy kept in place, served 200, and is
// tried again only after the bound; a build that finds the page gone
// drops the copy.
func TestKeptPageNeverAnswersAFailedRebuild(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	rb := newRebuilding(t, &now, 50*time.Millisecond, func(r *http.Request) {
		<-r.Context().Done() // the build's deadline passes before it reads
	})
	// The first build has no copy to fall back on: on a loaded machine it
	// may outrun the short bound this test sets for the one it holds, and
	// answer 503 as it should; the setup asks until one is kept.
	code, old, _ := rb.get(t, "/charts/US")
	for try := 1; code != 200 && try < 100; try++ {
		code, old, _ = rb.get(t, "/charts/US")
	}
	if code != 200 {
		t.Fatalf("first build: got %d a hundred times", code)
	}
	chartRun(t, rb.db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(rebuildEvery)
	rb.armed.Store(true)
	if code, tag, _ := rb.get(t, "/charts/US"); code != 200 || tag != old {
		t.Fatalf("while the build runs out of time: got %d, ETag %s; want 200, the copy kept (%s)", code, tag, old)
	}
	rb.await(t)
	for i := range 5 {
		now = now.Add(time.Second / 2)
		if code, tag, _ := rb.get(t, "/charts/US"); code != 200 || tag != old {
			t.Errorf("request %d after the build failed: got %d, ETag %s; want 200, the copy kept (%s)", i, code, tag, old)
		}
	}
	if n := rb.s.answers.rebuilds.Load(); n != 1 {
		t.Errorf("within the bound of a failed build, %d builds were started, want 1", n)
	}
	now = now.Add(rebuildEvery)
	rb.get(t, "/charts/US")
	rb.await(t)
	if n := rb.s.answers.rebuilds.Load(); n != 2 {
		t.Errorf("a bound after the failed build, %d builds were started, want 2", n)
	}
}

// TestKeptVideoGoesWhenItsVideoDoes: a video's page kept, then the video
// gone (its data deleted): the build beside the requests drops the copy,
// and from then on the page answers 410, never the deleted data.
func TestKeptVideoGoesWhenItsVideoDoes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	rb := newRebuilding(t, &now, 0, nil)
	if code, _, body := rb.get(t, "/videos/vid-a"); code != 200 || !strings.Contains(body, "Alpha") {
		t.Fatalf("first build: got %d", code)
	}
	if _, err := retention.Gone(context.Background(), rb.db, []string{"vid-a"}, now); err != nil {
		t.Fatal(err)
	}
	now = now.Add(rebuildEvery)
	rb.get(t, "/videos/vid-a") // the copy, while its build runs
	rb.await(t)
	for range 3 {
		if code, _, body := rb.get(t, "/videos/vid-a"); code != http.StatusGone || strings.Contains(body, "Alpha") {
			t.Errorf("after the video went and its page was built again: got %d, its title shown %v; want 410, without it", code, strings.Contains(body, "Alpha"))
		}
	}
}

// TestKeptPageOutlivesABuildThatPanics: a build beside the requests that
// panics (as net/http would recover in a request) ends no process: the
// copy stays, served 200.
func TestKeptPageOutlivesABuildThatPanics(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	rb := newRebuilding(t, &now, 0, func(*http.Request) { panic("a build that fails as no build should") })
	// The first build has no copy to fall back on: on a loaded machine it
	// may outrun the short bound this test sets for the one it holds, and
	// answer 503 as it should; the setup asks until one is kept.
	code, old, _ := rb.get(t, "/charts/US")
	for try := 1; code != 200 && try < 100; try++ {
		code, old, _ = rb.get(t, "/charts/US")
	}
	if code != 200 {
		t.Fatalf("first build: got %d a hundred times", code)
	}
	chartRun(t, rb.db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(rebuildEvery)
	rb.armed.Store(true)
	rb.get(t, "/charts/US")
	rb.await(t)
	if code, tag, _ := rb.get(t, "/charts/US"); code != 200 || tag != old {
		t.Errorf("after a build that panicked: got %d, ETag %s; want 200, the copy kept (%s)", code, tag, old)
	}
}

// TestACopyFromBeforeIsASharedCachesForAMoment: on a --public listener, a
// page whose new copy is still being built past the reader's wait is
// answered from the copy before the landing, which a shared cache may keep
// for a second only (edge.Policy.Interim), with its keys, so that a page
// whose data moves faster than it builds is still the cache's to answer;
// once the new copy is there, it goes with the site's whole policy.
func TestACopyFromBeforeIsASharedCachesForAMoment(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	db := storetest.Open(t)
	chartRun(t, db, "", now.Add(-10*time.Minute), ingest.Video{ID: "vid-a", Title: "Alpha"})
	s := sharedServer(t, db, func() time.Time { return now })
	s.answers.wait = 50 * time.Millisecond
	var armed atomic.Bool
	release := make(chan struct{})
	landed := make(chan string, 8)
	s.answers.slow = func(r *http.Request) {
		if armed.Load() {
			select {
			case <-release:
			case <-t.Context().Done():
			}
		}
	}
	s.answers.rebuilt = func(key string) { landed <- key }
	first := askAs(s, "/charts/US")
	if first.Code != 200 || first.Header().Get("Cache-Control") != testPolicyHeader {
		t.Fatalf("first build: %d, Cache-Control %q; want 200 and %q", first.Code, first.Header().Get("Cache-Control"), testPolicyHeader)
	}

	chartRun(t, db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(rebuildEvery)
	armed.Store(true)
	const interim = "public, max-age=0, s-maxage=1, stale-while-revalidate=60, stale-if-error=3600"
	before := askAs(s, "/charts/US")
	if cc := before.Header().Get("Cache-Control"); before.Code != 200 || strings.Contains(before.Body.String(), "Gamma") || cc != interim {
		t.Errorf("while the new copy is built: %d, Gamma shown %v, Cache-Control %q; want the copy before, %q",
			before.Code, strings.Contains(before.Body.String(), "Gamma"), cc, interim)
	}
	if keys := before.Header().Get(edge.SurrogateKey); !strings.Contains(keys, "chart:US") {
		t.Errorf("the copy before names %q, want its chart's key among them", keys)
	}
	close(release)
	<-landed
	after := askAs(s, "/charts/US")
	if cc := after.Header().Get("Cache-Control"); !strings.Contains(after.Body.String(), "Gamma") || cc != testPolicyHeader {
		t.Errorf("after the build: Gamma shown %v, Cache-Control %q; want the new copy with %q", strings.Contains(after.Body.String(), "Gamma"), cc, testPolicyHeader)
	}
}
