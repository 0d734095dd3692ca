package main

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// The edge lab (make edge): Debian's varnishd on the shipped VCL in front
// of two serve --public replicas on one PostgreSQL, the daemon landing
// runs of every region's top 50 against a moving fake, and a flood of
// readers shaped like a real site's (a Zipf law over the charts, the
// worldwide page, the feeds and the video pages, a tenth unique misses and
// searches; campaign queries, analytics cookies, a dozen Accept-Language
// and mixed Accept-Encoding shapes, spoofed X-Forwarded-For: dressed).
// An operator signs in through the cache before the flood and after it.
// Midway the replicas restart one after the other under the flood; near
// the end both stop while runs land, then start again. It checks and
// prints the hit ratio of the asks a cache may keep, the origin's
// requests, the freshness after each landing and after the restart, the
// sign-in on both replicas, that no private answer comes from the cache,
// the errors in each phase, and each replica's memory and CPU per million
// readers.

// edgeSettings are the lab's lengths: INGEST_EDGE_FOR the flood (10m in
// make edge), the origins' downtime a fifth of it but at most 5 minutes.
func edgeSettings(t *testing.T) (flood, down time.Duration) {
	flood = 10 * time.Minute
	if v := os.Getenv("INGEST_EDGE_FOR"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			t.Fatalf("INGEST_EDGE_FOR=%q: want a duration of a minute or more", v)
		}
		flood = d
	}
	return flood, min(flood/5, 5*time.Minute)
}

// replica is one serve --public behind the cache, restarted in place.
type replica struct {
	h    *harness
	addr string
	args []string
	p    *proc
	cpu  float64 // CPU-seconds of the processes before p
	rss  int64   // the largest RSS seen, KiB
}

func (r *replica) start(t *testing.T, d time.Duration) {
	t.Helper()
	r.launch(d)
	r.await(t)
}

// launch starts the process and returns before it answers.
func (r *replica) launch(d time.Duration) { r.p = r.h.startFor(d, r.args...) }

// await waits for a launched process to answer its /healthz.
func (r *replica) await(t *testing.T) {
	t.Helper()
	if !waitFor(60*time.Second, func() bool { return healthy("http://" + r.addr) }) {
		t.Fatalf("serve on %s never answered:\n%s", r.addr, r.p.out)
	}
}

func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.sample()
	r.cpu += cpuSeconds(r.p.cmd.Process.Pid)
	r.p.signal(t, syscall.SIGTERM)
	if _, exited := r.p.wait(60 * time.Second); !exited {
		t.Fatalf("serve on %s did not stop within 60 s", r.addr)
	}
}

func (r *replica) sample() {
	if r.p != nil && !r.p.exited() {
		r.rss = max(r.rss, rssKB(r.p.cmd.Process.Pid))
	}
}

// cpuSeconds is a live process's user and system CPU, from /proc.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // USER_HZ
}

// edgeTally is what the readers saw, by kind of request. An ask is
// cacheable when its answer came from a copy (X-Cache hit or stale) or
// says a shared cache may keep it (Cache-Control public, not passed); the
// flood's unique misses and searches, each URL asked once, are counted
// apart, as no copy could ever answer them; an ask of the flood's pages
// answered otherwise is notKept (a 503 while the origins are down, of a
// page never kept), and a 200 among those a fault of the origin's.
type edgeTally struct {
	mu                      sync.Mutex
	cacheable, hits, misses int64
	uncacheable             int64
	notKept                 map[string]int64 // "status Cache-Control" -> asks of the flood's pages
	privateOK               int64            // of those, answered 200
	firstPrivateOK          string
	errors                  map[string]int64 // phase -> answers that failed (transport, or 5xx on a page kept before)
	firstErr                map[string]string
	privateFromCache        int64
	missed                  map[string]int64 // path -> asks not answered from the cache
	landings, late          int64
	crossed                 int64 // landings sampled across a change of phase, not counted
	lateWorst               time.Duration
}

func (e *edgeTally) fail(phase, what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors[phase]++
	if e.firstErr[phase] == "" {
		e.firstErr[phase] = what
	}
}

// count files an ask of one of the flood's pages by its answer.
func (e *edgeTally) count(path string, resp *http.Response) {
	cc, xc := resp.Header.Get("Cache-Control"), resp.Header.Get("X-Cache")
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case xc == "hit" || xc == "stale":
		e.cacheable++
		e.hits++
	case xc != "pass" && strings.Contains(cc, "public") && !strings.Contains(cc, "private") && !strings.Contains(cc, "no-store"):
		e.cacheable++
		e.misses++
		e.missed[path]++
	default:
		e.notKept[fmt.Sprintf("%d %q", resp.StatusCode, cc)]++
		if resp.StatusCode == http.StatusOK {
			e.privateOK++
			if e.firstPrivateOK == "" {
				e.firstPrivateOK = fmt.Sprintf("%s: X-Cache %q, Cache-Control %q", path, xc, cc)
			}
		}
	}
}

// zipf draws an index in [0, n) with weight 1/(i+1).
type zipf struct{ cum []float64 }

func newZipf(n int) zipf {
	z := zipf{cum: make([]float64, n)}
	s := 0.0
	for i := range n {
		s += 1 / float64(i+1)
		z.cum[i] = s
	}
	return z
}

func (z zipf) draw(u float64) int {
	i, _ := slices.BinarySearch(z.cum, u*z.cum[len(z.cum)-1])
	return min(i, len(z.cum)-1)
}

// floodLanguages are the Accept-Language shapes the flood's readers send:
// browsers' own, and the odd ones a cache must not confuse.
var floodLanguages = []string{"en-US,en;q=0.9", "de-DE,de;q=0.9,en;q=0.8", "ja", "fr;q=0.1, ja", "De-De", "*",
	",en", "en-GB;q=0.5, fr;q=0.9", "es-419, de", "", "pt-BR,pt;q=0.9", "ko-KR"}

// floodEncodings are the Accept-Encoding shapes the flood's readers send.
var floodEncodings = []string{"gzip, deflate, br", "", "gzip;q=0", "*", "GZIP", "identity"}

// dressed is the flood's nth ask of u as a public site gets it: a
// twentieth with a query the page does not read (a campaign's tag), three
// in ten with an analytics cookie, a dozen Accept-Language shapes, mixed
// Accept-Encoding, and every seventh with an X-Forwarded-For of its own
// choosing.
func dressed(n uint64, u string) *http.Request {
	if n%20 == 3 {
		u += fmt.Sprintf("?utm_source=lab&x=%d", n)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil) // the flood's own URLs parse
	if n%10 == 0 || n%10 == 4 || n%10 == 7 {
		req.Header.Set("Cookie", fmt.Sprintf("_ga=GA1.1.%d", n))
	}
	req.Header.Set("Accept-Language", floodLanguages[n%uint64(len(floodLanguages))])
	if ae := floodEncodings[(n/3)%uint64(len(floodEncodings))]; ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	if n%7 == 0 {
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", n%250))
	}
	return req
}

// readerPaths is what the flood asks for, the most read first: the
// worldwide page, each landed region's chart (page, JSON, feed), the
// sitemap and robots.txt, and the videos the charts list.
func readerPaths(t *testing.T, origin string) []string {
	t.Helper()
	paths := []string{"/worldwide", "/api/v1/worldwide", "/"}
	var videos []string
	for _, region := range []string{"US", "GB", "IN", "BR", "JP", "DE", "FR", "CA", "AU", "MX", "KR", "ES", "IT", "NL", "SE", "PL", "TR", "ID", "TH", "VN"} {
		var chart struct {
			RunID   int64 `json:"run_id"`
			Entries []struct {
				ID string `json:"id"`
			} `json:"entries"`
		}
		status, body := get(t, "http://"+origin+"/api/v1/charts/"+region)
		if status != http.StatusOK || json.Unmarshal([]byte(body), &chart) != nil || chart.RunID == 0 {
			continue
		}
		paths = append(paths, "/charts/"+region, "/api/v1/charts/"+region, "/charts/"+region+"/feed")
		for _, e := range chart.Entries[:min(len(chart.Entries), 20)] {
			videos = append(videos, "/videos/"+e.ID)
		}
	}
	paths = append(paths, "/worldwide/feed", "/sitemap.xml", "/robots.txt")
	return append(paths, videos...)
}

func TestEdge(t *testing.T) {
	if os.Getenv("INGEST_EDGE") == "" {
		t.Skip("the edge lab runs in make edge (INGEST_EDGE=1): Varnish, two replicas on PostgreSQL, the daemon and a flood, for minutes")
	}
	if _, err := exec.LookPath("varnishd"); err != nil {
		t.Skip("varnishd not installed (make deps installs Debian's varnish and varnish-modules)")
	}
	floodFor, downFor := edgeSettings(t)
	total := floodFor + 10*time.Minute
	h := newHarness(t)
	dbURL := pgtest.URL(t)
	h.set("INGEST_DB", dbURL)
	h.tightCosts(1_000_000)
	h.fake.Move(20261128, time.Now)
	token := "edge-lab-operator-token-0123456789"
	h.set("INGEST_UI_TOKEN", token)
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	// The cache asks the origin for every reader from its own address: the
	// API's anonymous plan meters that one client, so a site behind a
	// cache gives the plan what the cache's misses need.
	plans := filepath.Join(h.dir, "apiplans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 100000000, window: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_API_PLANS", plans)
	daemon := h.startFor(total, "run", "--regions", "all:depth=50", "--every", "1m")

	cacheAddr := closedAddr(t)
	serveArgs := func(addr string) []string {
		args := []string{"serve", "--listen", addr, "--public"}
		if purges(t) {
			args = append(args, "--purge-url", "http://"+cacheAddr+"/")
		}
		return args
	}
	reps := []*replica{{h: h, addr: closedAddr(t)}, {h: h, addr: closedAddr(t)}}
	var backends strings.Builder
	for i, r := range reps {
		r.args = serveArgs(r.addr)
		r.start(t, total)
		host, port, _ := net.SplitHostPort(r.addr)
		fmt.Fprintf(&backends, "backend serve%d { .host = %q; .port = %q; .probe = { .url = \"/readyz\"; .interval = 1s; .timeout = 1s; .window = 2; .threshold = 1; } }\n", i, host, port)
	}
	backends.WriteString("sub ingest_origins { origins.add_backend(serve0); origins.add_backend(serve1); }\nacl ingest_purgers { \"127.0.0.1\"; }\nacl ingest_front_proxies { }\n")
	cacheWork := startVarnishWith(t, cacheAddr, backends.String())

	// The charts the flood reads: wait for the first landings.
	var paths []string
	if !waitFor(10*time.Minute, func() bool { paths = readerPaths(t, reps[0].addr); return len(landedRegions(paths)) >= 8 }) {
		t.Fatalf("the daemon landed fewer than 8 of the charts the flood reads in 10 minutes:\n%s", daemon.out)
	}
	t.Logf("the flood reads %d paths, a tenth of its asks unique misses and searches", len(paths))
	// Signed in through the cache before the flood, so that nothing but
	// the operator's asks goes to the origins and the round robin gives
	// each replica some.
	session := signInThrough(t, cacheAddr, token)
	operatorThrough(t, cacheAddr, cacheWork, session, "signed in")

	tally := &edgeTally{errors: map[string]int64{}, firstErr: map[string]string{}, missed: map[string]int64{}, notKept: map[string]int64{}}
	var phase atomic.Value
	phase.Store("steady")
	// changes counts the phase's changes: a landing sampled while the
	// replicas were up and read through the cache after they stopped
	// tells nothing of the purge in steady running.
	var changes atomic.Int64
	setPhase := func(p string) { phase.Store(p); changes.Add(1) }
	cachedBefore := sync.Map{} // paths served 200 before the origins stopped
	z := newZipf(len(paths))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var asks atomic.Int64
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for n := uint64(w); ; n += 12 {
				select {
				case <-stop:
					return
				default:
				}
				asks.Add(1)
				u := float64((n*2654435761)%1_000_003) / 1_000_003
				if n%10 == 9 {
					path := fmt.Sprintf("/videos/missing-%d", n)
					if n%20 == 19 {
						path = fmt.Sprintf("/search?q=word%d", n)
					}
					resp, err := client.Get("http://" + cacheAddr + path)
					tally.mu.Lock()
					tally.uncacheable++
					tally.mu.Unlock()
					if err == nil {
						resp.Body.Close()
					}
					continue
				}
				path := paths[z.draw(u)]
				resp, err := client.Do(dressed(n, "http://"+cacheAddr+path))
				p := phase.Load().(string)
				if err != nil {
					tally.fail(p, path+": "+err.Error())
					continue
				}
				resp.Body.Close()
				tally.count(path, resp)
				_, before := cachedBefore.Load(path)
				if resp.StatusCode >= 500 && (p != "down" || before) {
					tally.fail(p, fmt.Sprintf("%s: %d", path, resp.StatusCode))
				}
				if resp.StatusCode == http.StatusOK && p != "down" {
					cachedBefore.Store(path, true)
				}
			}
		}()
	}

	// Freshness: each landing the store shows is read through the cache
	// until it names the new run, from the moment the origin serves it.
	fresh := make(chan struct{})
	go func() {
		defer close(fresh)
		seen := map[string]int64{}
		client := &http.Client{Timeout: 10 * time.Second}
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if phase.Load().(string) != "steady" {
				continue
			}
			for _, region := range landedRegions(paths) {
				var now struct {
					RunID int64 `json:"run_id"`
				}
				resp, err := client.Get("http://" + reps[0].addr + "/api/v1/charts/" + region)
				if err != nil {
					continue
				}
				_ = json.NewDecoder(resp.Body).Decode(&now)
				resp.Body.Close()
				if now.RunID == 0 || now.RunID == seen[region] {
					continue
				}
				if seen[region] == 0 {
					seen[region] = now.RunID
					continue
				}
				seen[region] = now.RunID
				landed, gen := time.Now(), changes.Load()
				if phase.Load().(string) != "steady" {
					continue
				}
				var through int64
				for time.Since(landed) < 30*time.Second && through < now.RunID {
					var c struct {
						RunID int64 `json:"run_id"`
					}
					if resp, err := client.Get("http://" + cacheAddr + "/api/v1/charts/" + region); err == nil {
						_ = json.NewDecoder(resp.Body).Decode(&c)
						resp.Body.Close()
						through = c.RunID
					}
					if through < now.RunID {
						time.Sleep(100 * time.Millisecond)
					}
				}
				late := time.Since(landed)
				tally.mu.Lock()
				if changes.Load() != gen {
					tally.crossed++
					tally.mu.Unlock()
					continue
				}
				tally.landings++
				if late > 2*time.Second {
					tally.late++
				}
				tally.lateWorst = max(tally.lateWorst, late)
				tally.mu.Unlock()
			}
		}
	}()

	// Private answers: an operator's ask with the token, then a reader's
	// without, never answered from the cache.
	privateCheck := func() {
		for _, path := range []string{"/api/v1/quota", "/operator", "/quota"} {
			through(t, cacheAddr, http.MethodGet, path, "", map[string]string{"Authorization": "Bearer " + token})
			status, _, hit := through(t, cacheAddr, http.MethodGet, path, "", nil)
			if status == http.StatusOK || hit == "hit" {
				tally.mu.Lock()
				tally.privateFromCache++
				tally.mu.Unlock()
			}
		}
	}

	start := time.Now()
	floodFrom := start.Add(-time.Second) // the readers began just before
	steady := floodFor - downFor
	sampleUntil := func(d time.Time) {
		for time.Now().Before(d) {
			for _, r := range reps {
				r.sample()
			}
			privateCheck()
			time.Sleep(5 * time.Second)
		}
	}
	sampleUntil(start.Add(steady / 2))
	setPhase("rolling")
	for _, r := range reps {
		r.stop(t)
		r.start(t, total)
	}
	setPhase("steady")
	sampleUntil(start.Add(steady))
	setPhase("down")
	downFrom := time.Now()
	for _, r := range reps {
		r.stop(t)
	}
	sampleUntil(start.Add(floodFor))
	// Every replica back, across the landings made while none was up:
	// each page the cache held then is its origin's again soon after the
	// first replica answers, which purges what moved from the mark kept
	// in the database.
	checked := backPaths(paths)
	held := etagsThrough(cacheAddr, checked)
	reps[0].start(t, total)
	alive := time.Now()
	setPhase("back")
	reps[1].launch(total)
	// The replica answers /healthz from its start and its pages once its
	// site is built, which /readyz says; its purge from the mark kept is
	// sent from then. The start is the replica's own matter, waited for on
	// its own signal; the promise is timed from the replica serving.
	if !waitFor(2*time.Minute, func() bool { return healthy("http://" + reps[0].addr + "/readyz") }) {
		t.Fatalf("serve on %s never said ready:\n%s", reps[0].addr, reps[0].p.out)
	}
	back := time.Now()
	movedDown := landingsBetween(t, dbURL, downFrom, back)
	again := freshAfter(cacheAddr, reps[0].addr, checked, held, back, 30*time.Second)
	reps[1].await(t)
	close(stop)
	wg.Wait()
	<-fresh
	// The round robin reaches a replica once the cache's probe calls it
	// healthy again, which answering its own /healthz does not promise.
	var list []byte
	if !waitFor(60*time.Second, func() bool {
		list, _ = exec.Command("varnishadm", "-n", cacheWork, "backend.list").CombinedOutput()
		return backendsHealthy(string(list))
	}) {
		t.Fatalf("the cache's probe never called both replicas healthy again:\n%s", list)
	}
	operatorThrough(t, cacheAddr, cacheWork, session, "every replica restarted")
	for _, r := range reps {
		r.cpu += cpuSeconds(r.p.cmd.Process.Pid) // live, for the CPU figure; the cleanup stops them
	}

	// What the origin may be asked: each page the flood reads that a
	// landing during it changed (its region's chart, its JSON and feed,
	// the worldwide page, its JSON and feed, the front page and the
	// sitemap, and the chart's videos among the flood's), once per
	// landing, beside each path's first fill.
	landings := landingsBetween(t, dbURL, floodFrom, time.Now())
	videoPaths := 0
	for _, p := range paths {
		if strings.HasPrefix(p, "/videos/") {
			videoPaths++
		}
	}
	perLanding := 8 + videoPaths/max(1, len(landedRegions(paths)))
	originBound := landings*int64(perLanding) + int64(len(paths))

	ratio := float64(tally.hits) / math.Max(1, float64(tally.cacheable))
	perMillion := 1e6 / math.Max(1, float64(tally.cacheable+tally.uncacheable))
	t.Logf("edge lab, %s of flood (origins down %s), %d paths: %d reader asks (%d cacheable, %d unique misses and searches), hit ratio %.4f, %d origin asks for cacheable paths",
		floodFor, downFor, len(paths), asks.Load(), tally.cacheable, tally.uncacheable, ratio, tally.misses)
	t.Logf("the daemon landed %d charts during the flood: the origin may be asked %d times for what the flood reads (%d a landing, and each path's first)", landings, originBound, perLanding)
	t.Logf("landings read through the cache: %d, later than 2 s: %d, the latest %s (%d more sampled across a change of phase, not counted)",
		tally.landings, tally.late, tally.lateWorst.Round(10*time.Millisecond), tally.crossed)
	for i, r := range reps {
		t.Logf("replica %d: RSS at most %d MiB, %.1f CPU-s, %.1f CPU-s per million reader asks", i, r.rss/1024, r.cpu, r.cpu*perMillion)
	}
	most := slices.SortedFunc(maps.Keys(tally.missed), func(a, b string) int { return cmp.Compare(tally.missed[b], tally.missed[a]) })
	for _, path := range most[:min(len(most), 5)] {
		t.Logf("not from the cache: %s %d times", path, tally.missed[path])
	}
	for _, kind := range slices.Sorted(maps.Keys(tally.notKept)) {
		t.Logf("asks of the flood's pages answered as not to be kept: %d %s", tally.notKept[kind], kind)
	}
	t.Logf("every replica restarted: %d charts landed while none was up; the first replica back served %s after its /healthz answered; of the %d pages checked, %d held in the cache had moved, the latest fresh through the cache %s after it served (%s)",
		movedDown, back.Sub(alive).Round(10*time.Millisecond), len(checked), again.moved, again.latest.Round(10*time.Millisecond), again.latestPath)
	for _, p := range edgePhases {
		t.Logf("errors while %s: %d %s", p, tally.errors[p], tally.firstErr[p])
	}

	if ratio < 0.99 {
		t.Errorf("the cache answered %.4f of the cacheable reader asks, want at least 0.99", ratio)
	}
	if tally.misses > originBound {
		t.Errorf("the origin was asked %d times for cacheable paths, over the %d the landings account for", tally.misses, originBound)
	}
	if tally.privateFromCache > 0 {
		t.Errorf("%d private answers were served to a reader without credentials", tally.privateFromCache)
	}
	if tally.landings == 0 {
		t.Errorf("no landing was read through the cache: freshness was not exercised")
	} else if tally.late > 0 {
		t.Errorf("%d of %d landings reached readers through the cache later than 2 s (the latest %s)", tally.late, tally.landings, tally.lateWorst)
	}
	if tally.privateOK > 0 {
		t.Errorf("%d asks of the flood's pages were answered 200 as not to be kept, the first %s", tally.privateOK, tally.firstPrivateOK)
	}
	if movedDown == 0 || again.moved == 0 {
		t.Errorf("while every replica was down %d charts landed and %d pages held in the cache moved: the restart across a landing was not exercised", movedDown, again.moved)
	}
	if len(again.stale) > 0 || again.latest > 10*time.Second {
		t.Errorf("every replica restarted across a landing: %d pages not fresh through the cache 30 s after the first replica served (%v), the latest fresh %s after (%s); want each within 10 s",
			len(again.stale), again.stale[:min(len(again.stale), 5)], again.latest.Round(10*time.Millisecond), again.latestPath)
	}
	for _, p := range edgePhases {
		if tally.errors[p] > 0 {
			t.Errorf("%d reader asks failed while %s, the first: %s", tally.errors[p], p, tally.firstErr[p])
		}
	}
}

// edgePhases are the lab's phases, as the readers' errors are told: the
// replicas up, restarting one after the other, all stopped, and coming
// back across what landed meanwhile.
var edgePhases = []string{"steady", "rolling", "down", "back"}

// backPaths are the pages checked fresh after every replica restarted:
// each of the flood's but the videos', and one video page in five.
func backPaths(paths []string) []string {
	var out []string
	videos := 0
	for _, p := range paths {
		if strings.HasPrefix(p, "/videos/") {
			videos++
			if videos%5 != 1 {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// etagOf is the ETag of addr's 200 answer to path, "" for any other.
func etagOf(client *http.Client, addr, path string) string {
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return resp.Header.Get("ETag")
}

// etagsThrough is the ETag of each path's answer through the cache.
func etagsThrough(cache string, paths []string) map[string]string {
	client := &http.Client{Timeout: 10 * time.Second}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		out[p] = etagOf(client, cache, p)
	}
	return out
}

// backFreshness is what freshAfter saw: the pages whose copy held before
// had moved at the origin, the latest such a page came fresh through the
// cache and which, and the pages never fresh.
type backFreshness struct {
	moved      int
	latest     time.Duration
	latestPath string
	stale      []string
}

// freshAfter asks the cache, in rounds from back on, for each path it
// held until its answer is another than the one held, for at most limit
// after back; beside it, the origin once for each path, to tell which
// moved. While every origin was down the cache could fetch nothing, so
// any other answer came from an origin back. A page's time is the round
// it turned in, never the time the origin took to answer the others: the
// cache's rounds do not wait on the origin's asks.
func freshAfter(cache, origin string, paths []string, held map[string]string, back time.Time, limit time.Duration) backFreshness {
	var (
		mu      sync.Mutex
		out     backFreshness
		turned  = map[string]bool{}
		unmoved = map[string]bool{}
		asked   = make(chan struct{})
	)
	go func() { // the origin's answers: which pages moved
		defer close(asked)
		var wg sync.WaitGroup
		todo := make(chan string)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 10 * time.Second}
				for path := range todo {
					if e := etagOf(client, origin, path); e == "" || e == held[path] { // unanswered: not judged
						mu.Lock()
						unmoved[path] = true
						mu.Unlock()
					}
				}
			}()
		}
		for _, p := range paths {
			if held[p] != "" {
				todo <- p
			}
		}
		close(todo)
		wg.Wait()
	}()
	round := func() (left int) {
		var wg sync.WaitGroup
		todo := make(chan string)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 10 * time.Second}
				for path := range todo {
					if got := etagOf(client, cache, path); got != "" && got != held[path] {
						took := time.Since(back)
						mu.Lock()
						turned[path] = true
						if took > out.latest {
							out.latest, out.latestPath = took, path
						}
						mu.Unlock()
					}
				}
			}()
		}
		for _, p := range paths {
			mu.Lock()
			done := held[p] == "" || turned[p] || unmoved[p]
			mu.Unlock()
			if !done {
				left++
				todo <- p
			}
		}
		close(todo)
		wg.Wait()
		return left
	}
	for round() > 0 && time.Since(back) < limit {
		time.Sleep(100 * time.Millisecond)
	}
	<-asked
	for _, p := range paths {
		if held[p] == "" || unmoved[p] {
			continue
		}
		if turned[p] {
			out.moved++
		} else {
			out.stale = append(out.stale, p)
			out.moved++
		}
	}
	return out
}

// signInThrough signs in through the cache at cache with the UI token:
// the form's POST is passed to an origin, and its session comes back.
func signInThrough(t *testing.T, cache, token string) *http.Cookie {
	t.Helper()
	code, session := signIn(t, "http://"+cache, token)
	if code != http.StatusSeeOther || session == nil {
		t.Fatalf("sign-in through the cache: %d, session %v; want 303 and a session", code, session)
	}
	return session
}

// operatorThrough asks /operator through the cache at cache with the
// session six times while nothing else asks the origins: each answered
// 200 and passed, never kept; every origin answered some (the round
// robin, read from the cache's counters in its working directory work);
// and the same ask without the session is not answered.
func operatorThrough(t *testing.T, cache, work string, session *http.Cookie, when string) {
	t.Helper()
	before := backendFetches(t, work)
	for i := range 6 {
		status, _, hit := through(t, cache, http.MethodGet, "/operator", "", map[string]string{"Cookie": session.Name + "=" + session.Value})
		if status != http.StatusOK || hit != "pass" {
			t.Errorf("%s: /operator with the session through the cache, ask %d: %d, X-Cache %q; want 200, passed", when, i+1, status, hit)
		}
	}
	after := backendFetches(t, work)
	for name, n := range after {
		if n == before[name] {
			t.Errorf("%s: origin %s answered none of six /operator asks through the cache (%v before, %v after): want the round robin over every origin", when, name, before, after)
		}
	}
	if status, _, hit := through(t, cache, http.MethodGet, "/operator", "", nil); status == http.StatusOK || hit == "hit" {
		t.Errorf("%s: /operator through the cache without the session: %d, X-Cache %q; want it refused, never from the cache", when, status, hit)
	}
}

// backendFetches is how many fetches the cache with working directory
// work has sent each of its backends (varnishstat's VBE.*.req; the
// probes are not counted there).
func backendFetches(t *testing.T, work string) map[string]int64 {
	t.Helper()
	out, err := exec.Command("varnishstat", "-n", work, "-1", "-f", "VBE.*.req").CombinedOutput()
	if err != nil {
		t.Fatalf("varnishstat: %v\n%s", err, out)
	}
	n := map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ".req") {
			continue
		}
		parts := strings.Split(f[0], ".")
		v, _ := strconv.ParseInt(f[1], 10, 64)
		n[parts[len(parts)-2]] += v
	}
	if len(n) == 0 {
		t.Fatalf("varnishstat named no backend:\n%s", out)
	}
	return n
}

// landingsBetween counts the charts the daemon landed on the database at
// dbURL between from and to: runs of a region's chart that stored videos
// and ended.
func landingsBetween(t *testing.T, dbURL string, from, to time.Time) int64 {
	t.Helper()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE kind = 'trending' AND videos > 0 AND status <> 'running'
AND finished_ms >= $1 AND finished_ms < $2`, from.UnixMilli(), to.UnixMilli()).Scan(&n); err != nil {
		t.Fatalf("the landings during the flood: %v", err)
	}
	return n
}

// landedRegions are the regions whose chart paths hold: /charts/R.
func landedRegions(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, ok := strings.CutPrefix(p, "/charts/"); ok && !strings.Contains(r, "/") {
			out = append(out, r)
		}
	}
	return out
}

// purges says whether this binary's serve can purge a cache in front.
func purges(t *testing.T) bool {
	out, _ := exec.Command(ingestBin(t), "serve", "--help").CombinedOutput()
	return strings.Contains(string(out), "--purge-url")
}

// startVarnishWith is startVarnish with backends.vcl given whole, on addr;
// it gives varnishd's working directory, for varnishadm and varnishstat.
func startVarnishWith(t *testing.T, addr, backends string) string {
	t.Helper()
	dir := t.TempDir()
	vcl, err := os.ReadFile("../../deploy/varnish/ingest.vcl")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"ingest.vcl": string(vcl), "backends.vcl": backends} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runVarnish(t, dir, addr)
	return filepath.Join(dir, "work")
}
