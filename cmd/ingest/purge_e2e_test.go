package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
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
	select {
	case keys := <-purges:
		if keys != "site" {
			t.Errorf("the first purge of a cache never purged: %q, want the whole site", keys)
		}
	case <-time.After(2 * time.Minute): // the fault: no purge at the start
		t.Fatal("a cache never purged was sent no purge at the start")
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

// etagThrough asks the cache at addr for path and gives the answer's
// status, ETag and X-Cache.
func etagThrough(t *testing.T, addr, path string) (int, string, string) {
	t.Helper()
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s through the cache: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("ETag"), res.Header.Get("X-Cache")
}

// TestALandingWhileEveryReplicaWasDownIsPurgedWhenOneIsBack: Varnish with
// the shipped VCL before two serve --public --purge-url replicas; pages
// warm in the cache; both replicas stopped, a run lands, one started
// again: the cache serves each page's new answer within a few seconds of
// the replica answering, since the mark the cache was purged up to is
// kept in the database, not in the processes that stopped. Then that one
// replica, alone, restarted across another landing: the same, from the
// mark its first start kept.
func TestALandingWhileEveryReplicaWasDownIsPurgedWhenOneIsBack(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("varnishd"); err != nil {
		t.Skip("varnishd not installed (make deps installs Debian's varnish and varnish-modules)")
	}
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	origins := []string{closedAddr(t), closedAddr(t)}
	cache := closedAddr(t)
	var backends strings.Builder
	for i, o := range origins {
		host, port, _ := net.SplitHostPort(o)
		fmt.Fprintf(&backends, "backend serve%d { .host = %q; .port = %q; .probe = { .url = \"/healthz\"; .interval = 1s; .timeout = 1s; .window = 2; .threshold = 1; } }\n", i, host, port)
	}
	backends.WriteString("sub ingest_origins { origins.add_backend(serve0); origins.add_backend(serve1); }\nacl ingest_purgers { \"127.0.0.1\"; }\nacl ingest_front_proxies { }\n")
	serve := func(origin string) *proc {
		p := h.start("serve", "--listen", origin, "--public", "--purge-url", "http://"+cache+"/")
		if !waitFor(30*time.Second, func() bool { return healthy("http://" + origin) }) {
			t.Fatalf("serve --public never answered\n%s", p.out)
		}
		return p
	}
	stop := func(p *proc) {
		p.signal(t, syscall.SIGTERM)
		if _, exited := p.wait(2 * time.Minute); !exited {
			t.Fatalf("serve did not stop on SIGTERM\n%s", p.out)
		}
	}
	pages := []string{"/charts/GB", "/api/v1/charts/GB", "/charts/GB/feed", "/worldwide"}
	running := []*proc{serve(origins[0]), serve(origins[1])}
	startVarnishWith(t, cache, backends.String()) // it waits for its probe to call both origins healthy
	held := map[string]string{}
	for _, path := range pages {
		if !waitFor(time.Minute, func() bool { // the cache's probe calls an origin healthy
			status, etag, hit := etagThrough(t, cache, path)
			held[path] = etag
			return status == http.StatusOK && hit == "hit"
		}) {
			t.Fatalf("%s never came from the cache", path)
		}
	}
	for landing, shape := range []int{5, 3} {
		for _, p := range running {
			stop(p)
		}
		h.fake.SetChartShape(shape, 50)
		h.mustRun(0, "run", "--once", "--regions", "GB")
		running = []*proc{serve(origins[0])}
		back := time.Now()
		for _, path := range pages {
			res, err := http.Get("http://" + origins[0] + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			want := res.Header.Get("ETag")
			if want == held[path] {
				t.Fatalf("landing %d: %s's ETag at the origin is still %s: the run changed nothing", landing+1, path, want)
			}
			var got string
			fresh := waitFor(10*time.Second-time.Since(back), func() bool { // the fault: the landing left unpurged
				_, got, _ = etagThrough(t, cache, path)
				return got == want
			})
			if !fresh {
				t.Errorf("landing %d while every replica was down: %s through the cache has ETag %s %v after one was back, want the origin's %s",
					landing+1, path, got, time.Since(back).Round(time.Millisecond), want)
			}
			held[path] = want
		}
		t.Logf("landing %d: the pages asked through the cache %v after the replica answered", landing+1, time.Since(back).Round(time.Millisecond))
	}
}
