package web

import (
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// relativeAge is how a page would say a time relative to when it was
// built: what goes stale in a copy kept.
var relativeAge = regexp.MustCompile(`\b(\d+|an?) (second|minute|hour|day|week|month|year)s? ago\b|\bjust now\b|\bin the future\b`)

// freshPaths are the readers' answers a run changes.
var freshPaths = []string{"/charts/US", "/", "/worldwide", "/charts/US/feed", "/worldwide/feed", "/api/v1/charts/US", "/sitemap.xml"}

// TestFirstRequestAfterARunShowsIt: every reader's answer kept, a run is
// written to the store: the very first request for each, a mark's read
// later, shows the run (however often before it was kept), and no page
// carries an age relative to when it was built.
func TestFirstRequestAfterARunShowsIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 47, 0, 0, time.UTC)
	rb := newRebuilding(t, &now, 0, nil)
	rb.s.answers.wait = time.Minute // a reader waits for its page however slow the machine
	pub, _ := url.Parse("https://charts.example.org/")
	rb.s.cfg.PublicURL = pub // set before any request: the sitemap is served
	for _, p := range freshPaths {
		for range 2 {
			if code, _, body := rb.get(t, p); code != 200 || strings.Contains(body, "Gamma") {
				t.Fatalf("%s before the run: got %d", p, code)
			}
		}
	}
	now = now.Add(3 * time.Minute)
	chartRun(t, rb.db, "", now, ingest.Video{ID: "vid-c", Title: "Gamma"})
	now = now.Add(markEvery)
	for _, p := range freshPaths {
		code, _, body := rb.get(t, p)
		want := "Gamma"
		if p == "/sitemap.xml" {
			want = "/videos/vid-c"
		}
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s, the first request a mark's read after the run: got %d, %q shown %v; want the run", p, code, want, strings.Contains(body, want))
		}
		if age := relativeAge.FindString(body); age != "" {
			t.Errorf("%s says %q: an age that goes stale in a copy kept", p, age)
		}
	}
}

// TestWatcherBuildsARunsPagesBeforeAnyReader: a run written to the store
// while pages readers read are kept is built into them beside the
// requests, by the watcher, with no request asking: the first request
// after shows it and builds nothing.
func TestWatcherBuildsARunsPagesBeforeAnyReader(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 27, 10, 47, 0, 0, time.UTC)
	chartRun(t, db, "", now, ingest.Video{ID: "vid-a", Title: "Alpha"})
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	landed := make(chan string, 16)
	s.answers.rebuilt = func(key string) { landed <- key }
	rb := &rebuilding{s: s, db: db, now: &now, landed: landed}
	rb.srv = httptest.NewServer(s)
	t.Cleanup(rb.srv.Close)
	if code, _, _ := rb.get(t, "/charts/US"); code != 200 {
		t.Fatalf("first build: got %d", code)
	}
	chartRun(t, db, "", now.Add(time.Minute), ingest.Video{ID: "vid-c", Title: "Gamma"})
	if key := rb.await(t); key != "/charts/US" { // the clock stands still: no request could see the run
		t.Fatalf("the watcher built %q, want /charts/US", key)
	}
	before := s.answers.builds.Load()
	if code, _, body := rb.get(t, "/charts/US"); code != 200 || !strings.Contains(body, "Gamma") {
		t.Errorf("the first request after the watcher's build: got %d, the run shown %v", code, strings.Contains(body, "Gamma"))
	}
	if n := s.answers.builds.Load() - before; n != 0 {
		t.Errorf("the first request after the run built %d answers, want none (built beside, before it)", n)
	}
}

// TestWatcherReadsNoMarkWithNothingToBuild: once the watcher has built
// again every page read since its build, it reads the store's mark no
// more until a reader is answered again: no new mark would have it build
// anything.
func TestWatcherReadsNoMarkWithNothingToBuild(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 47, 0, 0, time.UTC)
	rb := newRebuilding(t, &now, 0, nil)
	if code, _, _ := rb.get(t, "/charts/US"); code != 200 {
		t.Fatalf("first build: got %d", code)
	}
	chartRun(t, rb.db, "", now.Add(time.Minute), ingest.Video{ID: "vid-c", Title: "Gamma"})
	if key := rb.await(t); key != "/charts/US" {
		t.Fatalf("the watcher built %q, want /charts/US", key)
	}
	before := rb.s.answers.marks.Load()
	time.Sleep(3 * markEvery)
	if n := rb.s.answers.marks.Load() - before; n != 0 {
		t.Errorf("with no page read since its build, the watcher read the mark %d times", n)
	}
	if code, _, _ := rb.get(t, "/charts/US"); code != 200 {
		t.Fatalf("the page again: got %d", code)
	}
	deadline := time.Now().Add(time.Minute)
	for rb.s.answers.marks.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("a reader answered, the watcher never read the mark again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
