package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestServePurgesTheCacheInFront: `ingest serve --public --purge-url`
// beside the runs that fill its database sends the cache in front (a real
// HTTP server recording what it is sent) PURGE with the keys of the
// chart a run landed in, and not of the one that did not change; the log
// says how long after the run ended it came.
func TestServePurgesTheCacheInFront(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	purges := make(chan string, 64)
	cache := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PURGE" {
			purges <- r.Header.Get("Surrogate-Key")
		}
	}))
	defer cache.Close()
	base := startServe(t, h, "--public", "--public-url", publicSite, "--purge-url", cache.URL+"/")
	if res, err := http.Get(base + "/charts/GB"); err != nil || res.Header.Get("Cache-Control") != "public, max-age=0, s-maxage=86400, stale-while-revalidate=10, stale-if-error=86400" {
		t.Errorf("/charts/GB with --purge-url: %v, Cache-Control %q; want a day's s-maxage", err, res.Header.Get("Cache-Control"))
	}
	h.fake.SetChartShape(5, 50)
	h.mustRun(0, "run", "--once", "--regions", "US")
	ended := time.Now()
	var keys string
	select {
	case keys = <-purges:
	case <-time.After(2 * time.Minute): // the fault: no purge at all
		t.Fatal("the cache in front was sent no purge after a run landed")
	}
	t.Logf("the purge came %v after run --once exited", time.Since(ended).Round(time.Millisecond))
	have := " " + keys + " "
	if !strings.Contains(have, " chart:US ") || !strings.Contains(have, " feed:US ") || !strings.Contains(have, " worldwide ") ||
		strings.Contains(have, " chart:GB ") {
		t.Errorf("purged %q: want chart:US, feed:US and worldwide, not chart:GB", keys)
	}
}

// TestRunOnceSaysItsPurgeURLDoesNothing: run --once has no listener, and
// the caches in front are purged by the process that serves them: a
// --purge-url given to it is said to purge nothing, by the name it came
// under, and with --strict refused (exit 2) before anything runs.
func TestRunOnceSaysItsPurgeURLDoesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	purged := make(chan string, 8)
	cache := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { purged <- r.Method }))
	defer cache.Close()
	res := h.mustRun(0, "run", "--once", "--regions", "US", "--purge-url", cache.URL+"/")
	if !strings.Contains(res.stderr, "--purge-url: purges nothing without --listen") {
		t.Errorf("run --once --purge-url: said nothing of the setting:\n%s", res)
	}
	h.set("INGEST_PURGE_URL", cache.URL+"/")
	res = h.mustRun(2, "run", "--once", "--regions", "US", "--strict")
	if !strings.Contains(res.stderr, "INGEST_PURGE_URL (for --purge-url): purges nothing without --listen") {
		t.Errorf("run --once --strict with INGEST_PURGE_URL: want the variable named as doing nothing:\n%s", res)
	}
	if len(purged) > 0 {
		t.Errorf("the cache was sent %q by a run without a listener", <-purged)
	}
}
