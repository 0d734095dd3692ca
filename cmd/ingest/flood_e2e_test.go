package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flood is what a public listener meets from its first hour: readers on
// the hot pages, a crawler's unique URLs (404s and searches that answer
// 200), wrong tokens from many addresses, and the operator's right token
// from an address never seen before.
type flood struct {
	For       time.Duration // how long the flood lasts
	Missing   int           // unique /videos/<id> that answer 404
	Searches  int           // unique /search?q=
	Guessers  int           // addresses sending wrong tokens
	RightEach time.Duration // the right token from a fresh address this often
	Hot       int           // readers on the hot pages
	// HotMore are hot pages beside the front page, a chart and a video:
	// each path with the bearer token its readers send ("": none).
	HotMore map[string]string
	// Anonymous API clients, each from an address of its own, ask for a
	// chart's JSON every AnonEach without a token, over their plan.
	Anonymous int
	AnonEach  time.Duration
	// Compare reads the hot pages' bytes from memory too, as many readers
	// at once, for the ratio checkDeployed holds: readers that never wait,
	// so a flood a busy machine stretches would spend its cores on them
	// where no check reads what they measured.
	Compare bool
}

// soakFlood is make soak's: ten minutes, the counts.
var soakFlood = flood{For: 10 * time.Minute, Missing: 500_000, Searches: 100_000, Guessers: 200, RightEach: 10 * time.Second, Hot: 16, Compare: true}

// shortFlood is the tests': the same shape, bounded in count, so that a
// loaded machine slows it and never fails it.
var shortFlood = flood{Missing: 5_000, Searches: 2_000, Guessers: 200, RightEach: 0, Hot: 2}

// floodResult is what one flood measured.
type floodResult struct {
	rssBefore, rssAfter int64   // kB
	rssLate             []int64 // kB, sampled over the flood's second half
	right, rightOK      int64
	hotBytes, refBytes  int64 // bytes of the hot pages from ingest and from memory, side by side
	sent404, sentSearch int64
	keptAnswers         int64
	keptBytes           int64
	busy                int64 // the flood's requests answered 503 (the budget's busy)
	budgetAdmitted      int64 // the budget's turns and busy answers, as /metrics counts them
	budgetBusy          int64
	start, end          time.Time // the flood's
	hotAnswers          int64     // the hot pages' answers from ingest
	hotNot200           map[int]int64
	anonSent, anon429   int64           // the anonymous clients' requests, and those refused over their plan
	anonUnmetered       int64           // answered without the RateLimit fields
	anonRefused         int             // anonymous clients refused at least once
	rssTimes            []time.Duration // when each of rssLate was taken, from the flood's start
}

// loopbackFrom is a client whose connections come from ip (all of
// 127.0.0.0/8 is local on Linux).
func loopbackFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

// rssKB is the resident memory of pid, in kB (Linux's VmRSS).
func rssKB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return -1
}

// gauge is a series' value in a /metrics body, -1 when absent.
func gauge(body []byte, name string) int64 {
	m := regexp.MustCompile(`(?m)^` + name + ` ([0-9.e+]+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return int64(f)
}

// floodGet fetches base+path with the bearer tok ("": none), reading the body
// whole; the status, and the bytes read.
func floodGet(c *http.Client, base, path, tok string) (int, []byte) {
	req, _ := http.NewRequest("GET", base+path, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// floodHead fetches base+path with no token, reading the body whole; the
// status and the header.
func floodHead(c *http.Client, base, path string) (int, http.Header) {
	res, err := c.Get(base + path)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header
}

// over reports whether a timed flood that began at start is over: its
// senders stop then, whatever they have left to send.
func (f flood) over(start time.Time) bool {
	return f.For > 0 && time.Since(start) >= f.For
}

// run floods base, served by pid, and measures it. The flood ends when
// its counts are sent or, for a timed flood, its time is over.
func (f flood) run(t *testing.T, base string, pid int) floodResult {
	t.Helper()
	var r floodResult
	main := loopbackFrom("127.0.0.1")
	_, chart := floodGet(main, base, "/api/v1/charts/US", uiToken)
	id := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindSubmatch(chart)
	if id == nil {
		t.Fatalf("no video in US's chart:\n%.300s", chart)
	}
	hotPaths := []string{"/", "/charts/US", "/videos/" + string(id[1])}
	for p := range f.HotMore {
		hotPaths = append(hotPaths, p)
	}
	sort.Strings(hotPaths[3:])
	hotBody := map[string][]byte{}
	for _, p := range hotPaths {
		code, b := floodGet(main, base, p, f.HotMore[p])
		if code != 200 {
			t.Fatalf("hot page %s: got %d before the flood", p, code)
		}
		hotBody[p] = b
	}
	// The same bytes served from memory, by the same kind of server, for
	// the ratio side by side.
	ref := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Write(hotBody[req.URL.Path])
	}))
	defer ref.Close()
	r.rssBefore = rssKB(pid)

	start := time.Now()
	r.start = start
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var flooders, readers sync.WaitGroup
	var next404, nextSearch atomic.Int64
	for w := range 4 {
		flooders.Add(1)
		go func() {
			defer flooders.Done()
			c := loopbackFrom("127.0.1." + strconv.Itoa(w+1))
			for {
				i := next404.Add(1)
				if i > int64(f.Missing) || f.over(start) {
					return
				}
				code, body := floodGet(c, base, fmt.Sprintf("/videos/zz-missing-%d", i), "")
				if code == http.StatusNotFound {
					atomic.AddInt64(&r.sent404, 1)
				}
				r.countBusy(code, body)
			}
		}()
	}
	for w := range 2 {
		flooders.Add(1)
		go func() {
			defer flooders.Done()
			c := loopbackFrom("127.0.2." + strconv.Itoa(w+1))
			for {
				i := nextSearch.Add(1)
				if i > int64(f.Searches) || f.over(start) {
					return
				}
				code, body := floodGet(c, base, fmt.Sprintf("/search?q=flood+%d", i), "")
				if code == http.StatusOK {
					atomic.AddInt64(&r.sentSearch, 1)
				}
				r.countBusy(code, body)
			}
		}()
	}
	flooders.Add(1)
	go func() { // wrong tokens from every guesser, round after round
		defer flooders.Done()
		clients := make([]*http.Client, f.Guessers)
		for i := range clients {
			clients[i] = loopbackFrom(fmt.Sprintf("127.0.%d.%d", 10+i/250, i%250+1))
		}
		for round := 0; ; round++ {
			for i, c := range clients {
				floodGet(c, base, "/api/v1/quota", fmt.Sprintf("guess-%d-%d-of-a-stranger", i, round))
			}
			if round >= 11 && (f.For == 0 || time.Since(start) > f.For) {
				return
			}
		}
	}()
	fresh := 0
	rightOnce := func() {
		fresh++
		c := loopbackFrom(fmt.Sprintf("127.1.%d.%d", fresh/250, fresh%250+1))
		for _, p := range []string{"/api/v1/quota", "/metrics"} {
			code, body := floodGet(c, base, p, uiToken)
			r.right++
			if code == 200 {
				r.rightOK++
			} else {
				t.Errorf("the right token from a fresh address %d on %s: got %d\n%.300s", fresh, p, code, body)
			}
		}
	}
	done := make(chan struct{})
	go func() { flooders.Wait(); close(done) }()
	// As many readers on ingest as on the same bytes from memory, at once:
	// the two sums over the same time are the ratio.
	var statusMu sync.Mutex
	r.hotNot200 = map[int]int64{}
	read := func(c *http.Client, at string, sum *int64, ingest bool) {
		defer readers.Done()
		for i := 0; ctx.Err() == nil; i++ {
			p := hotPaths[i%len(hotPaths)]
			code, b := floodGet(c, at, p, f.HotMore[p])
			if code == 200 {
				atomic.AddInt64(sum, int64(len(b)))
			}
			if !ingest || ctx.Err() != nil {
				continue
			}
			atomic.AddInt64(&r.hotAnswers, 1)
			if code != 200 {
				statusMu.Lock()
				r.hotNot200[code]++
				statusMu.Unlock()
			}
		}
	}
	var refusedMu sync.Mutex
	for i := range f.Anonymous {
		readers.Add(1)
		go func() { // an anonymous API client over its plan
			defer readers.Done()
			c := loopbackFrom(fmt.Sprintf("127.0.4.%d", i+1))
			tick := time.NewTicker(f.AnonEach)
			defer tick.Stop()
			refused := false
			for ctx.Err() == nil {
				code, hdr := floodHead(c, base, "/api/v1/charts/US")
				if ctx.Err() != nil {
					break
				}
				atomic.AddInt64(&r.anonSent, 1)
				switch {
				case code == http.StatusTooManyRequests:
					atomic.AddInt64(&r.anon429, 1)
					refused = true
				case hdr.Get("RateLimit") == "" || hdr.Get("RateLimit-Policy") == "":
					atomic.AddInt64(&r.anonUnmetered, 1)
				}
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
			if refused {
				refusedMu.Lock()
				r.anonRefused++
				refusedMu.Unlock()
			}
		}()
	}
	for range f.Hot {
		readers.Add(1)
		go read(loopbackFrom("127.0.3.1"), base, &r.hotBytes, true)
		if f.Compare {
			readers.Add(1)
			go read(&http.Client{}, ref.URL, &r.refBytes, false)
		}
	}
	tick := time.NewTicker(max(f.RightEach, time.Second))
	defer tick.Stop()
	rightOnce()
	for over := false; !over; {
		select {
		case <-done:
			over = f.For == 0 || time.Since(start) >= f.For
			if !over {
				<-tick.C
			}
		case <-tick.C:
			if f.RightEach > 0 {
				rightOnce()
			}
			if time.Since(start) > f.For/2 && f.For > 0 {
				r.rssLate = append(r.rssLate, rssKB(pid))
				r.rssTimes = append(r.rssTimes, time.Since(start).Round(time.Second))
			}
		}
	}
	cancel()
	readers.Wait()
	r.end = time.Now()
	rightOnce()
	r.rssAfter = rssKB(pid)
	_, metrics := floodGet(main, base, "/metrics", uiToken)
	r.keptAnswers, r.keptBytes = gauge(metrics, "ingest_web_kept_answers"), gauge(metrics, "ingest_web_kept_bytes")
	r.budgetAdmitted = gauge(metrics, `ingest_web_budget_requests_total\{outcome="admitted"\}`)
	r.budgetBusy = gauge(metrics, `ingest_web_budget_requests_total\{outcome="busy"\}`)
	return r
}

// countBusy counts an answer 503 busy: the site's budget refused the
// build (not a request out of time, also a 503).
func (r *floodResult) countBusy(code int, body []byte) {
	if code == http.StatusServiceUnavailable && bytes.Contains(body, []byte("busy")) {
		atomic.AddInt64(&r.busy, 1)
	}
}

// String is the flood's figures as make soak prints them.
func (r floodResult) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "RSS before the flood %d kB, after %d kB (+%d kB); over the second half %v\n", r.rssBefore, r.rssAfter, r.rssAfter-r.rssBefore, r.rssLate)
	fmt.Fprintf(&b, "unique 404s %d, unique searches %d, answered 503 busy %d; kept answers %d, %d bytes\n", r.sent404, r.sentSearch, r.busy, r.keptAnswers, r.keptBytes)
	fmt.Fprintf(&b, "the budget of anonymous builds (/metrics): %d admitted, %d busy\n", r.budgetAdmitted, r.budgetBusy)
	fmt.Fprintf(&b, "right token from fresh addresses: %d of %d answered 200\n", r.rightOK, r.right)
	if r.refBytes > 0 {
		fmt.Fprintf(&b, "hot pages during the flood: %.2fx of the same bytes served from memory (side by side); %d answers, not 200: %v\n",
			float64(r.hotBytes)/float64(r.refBytes), r.hotAnswers, r.hotNot200)
	}
	if r.anonSent > 0 {
		fmt.Fprintf(&b, "anonymous API clients: %d requests, %d answered 429, %d without RateLimit fields; %d clients refused over their plan\n",
			r.anonSent, r.anon429, r.anonUnmetered, r.anonRefused)
	}
	return b.String()
}

// TestFloodOfAPublicListener: serve --public meets a short flood of the
// kind a public site meets (unique 404s, unique searches, wrong tokens
// from 200 addresses) and comes out of it with its kept answers within
// their bound, and the right token from a never-seen address answered
// 200 before, during and after. make soak runs it for ten minutes at
// the full counts (INGEST_SOAK=1) and prints the memory and the hot
// pages' ratio.
func TestFloodOfAPublicListener(t *testing.T) {
	t.Parallel()
	f := shortFlood
	soak := os.Getenv("INGEST_SOAK") != ""
	if soak {
		f = soakFlood
		if d, err := time.ParseDuration(os.Getenv("INGEST_SOAK_FOR")); err == nil && d > 0 {
			// A shorter soak keeps the flood's rate: its counts shrink with it.
			f.Missing = int(int64(f.Missing) * int64(d) / int64(f.For))
			f.Searches = int(int64(f.Searches) * int64(d) / int64(f.For))
			f.For = d
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		// deployed is the shape people run: every region, tracking on
		// (the daemon's default), a pool that holds them all at a short
		// --every, the worldwide page and the readers' API among the hot
		// pages, and anonymous API clients over their plan.
		deployed bool
	}{
		{"serve --public", []string{"serve", "--public"}, false},
		{"run --listen --public", []string{"run", "--regions", "US", "--every", "1m", "--public"}, false},
		{"run --listen --public --regions all", []string{"run", "--regions", "all", "--every", "5m", "--track-every", "5m", "--public"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !soak && tc.args[0] == "run" {
				t.Skip("the daemon's flood is make soak's")
			}
			if tc.deployed && !slices.Contains(measuredAsDeployed, t.Name()) {
				t.Fatalf("%s measures the binary as deployed, but measuredAsDeployed does not name it: it would run the binary built with -race", t.Name())
			}
			h := newHarness(t)
			f := f
			if tc.deployed {
				f.deploy(t, h)
			} else {
				h.mustRun(0, "run", "--once", "--regions", "US")
			}
			h.set("INGEST_UI_TOKEN", uiToken)
			listen := closedAddr(t)
			// The listener lives as long as the test, which kills it at
			// its end: a bound of its own would end it under a flood that
			// a busy machine slows.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := h.command(ctx, append(tc.args, "--listen", listen)...)
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait(); noteCPU(t, cmd) }()
			base := "http://" + listen
			if !waitFor(30*time.Second, func() bool { return siteServed(base) }) {
				t.Fatalf("ingest %s never served its site\n%s", tc.args[0], out.String())
			}
			r := f.run(t, base, cmd.Process.Pid)
			t.Logf("%s:\n%s", tc.name, r)
			if r.right == 0 || r.rightOK != r.right {
				t.Errorf("the right token from fresh addresses: %d of %d answered 200", r.rightOK, r.right)
			}
			if r.budgetAdmitted <= 0 || r.budgetBusy < r.busy {
				t.Errorf("/metrics says the budget admitted %d builds and answered %d busy; the flood's searches and misses were built, and %d of them answered 503 busy",
					r.budgetAdmitted, r.budgetBusy, r.busy)
			}
			if r.keptAnswers < 0 || r.keptAnswers > 2048 || r.keptBytes > 24<<20 {
				t.Errorf("after the flood: %d answers, %d bytes kept; the bound is 2048 answers, %d bytes", r.keptAnswers, r.keptBytes, 24<<20)
			}
			// The deployed shape's runs land throughout, so its database
			// and its kept pages grow to their bounds over the flood:
			// checkDeployed holds its memory to docs/api.md's bound and
			// flat over the flood's last minutes instead.
			if soak && !tc.deployed && (r.rssAfter > r.rssBefore+64<<10) {
				t.Errorf("RSS grew by %d kB, over 64 MB", r.rssAfter-r.rssBefore)
			}
			if tc.deployed {
				checkDeployed(t, h, f, r, base)
				return
			}
			if tc.args[0] == "run" {
				d := daemonDuring(t, base, r.start, r.end, time.Minute, h.fake.ChargedPools())
				t.Logf("%s, the daemon during the flood:\n%s", tc.name, d)
				if d.missed != 0 || d.failed != 0 || len(d.over) != 0 {
					t.Errorf("the daemon during the flood: %d missed slots, %d failed runs, units over the limit %v; want none", d.missed, d.failed, d.over)
				}
			}
		})
	}
}

// daemonFigures is what the daemon did while a flood lasted.
type daemonFigures struct {
	runs, failed int              // US's trending runs of its chart that started during the flood, and those that failed
	missed       int              // slots of --every with no run started
	gaps         []time.Duration  // between the starts of runs, over the flood (the last to its end)
	charged      map[string]int64 // units the upstream charged, per pool, since the harness began
	used, limit  map[string]int64 // per pool, as the daemon's ledger says (/api/v1/quota)
	over         map[string]int64 // units charged over a pool's limit
}

func (d daemonFigures) String() string {
	return fmt.Sprintf("runs started %d (failed %d), missed slots %d (gaps %v); upstream charged %v, ledger used %v of %v; over the limit %v\n",
		d.runs, d.failed, d.missed, d.gaps, d.charged, d.used, d.limit, d.over)
}

// daemonDuring reads, from the daemon's own listener with the token (a
// fresh address, so the guessers' waits never touch it), the US chart's
// runs and the pools, and counts the slots of every in [start, end] that
// no run started in, between runs and after the last. charged is what the upstream charged (what
// fakeyt's GET /_charged serves), held against each pool's limit: the
// harness ran well under a day, so each pool's window holds all of it.
func daemonDuring(t *testing.T, base string, start, end time.Time, every time.Duration, charged map[string]int64) daemonFigures {
	t.Helper()
	c := loopbackFrom("127.2.0.1")
	code, body := floodGet(c, base, "/api/v1/runs?region=US&kind=trending&limit=200", uiToken)
	var runs struct {
		Runs []struct {
			Category string  `json:"category"`
			Status   string  `json:"status"`
			Started  *string `json:"started"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(body, &runs); code != 200 || err != nil {
		t.Fatalf("/api/v1/runs: %d, %v\n%.300s", code, err, body)
	}
	d := daemonFigures{charged: charged, used: map[string]int64{}, limit: map[string]int64{}, over: map[string]int64{}}
	var starts []time.Time
	for _, r := range runs.Runs {
		if r.Category != "" || r.Started == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339, *r.Started)
		if err != nil {
			t.Fatalf("a run's start %q: %v", *r.Started, err)
		}
		starts = append(starts, at)
		if !at.Before(start) && !at.After(end) {
			d.runs++
			if r.Status == "failed" {
				d.failed++
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	// The next slot is due every after a run starts: each slot of a gap
	// that passed its due time by more than half of every with no run
	// started is missed (a gap to the flood's end too).
	grace := every / 2
	prev := time.Time{}
	for _, at := range append(starts, end) {
		if !prev.IsZero() && at.After(start) && prev.Before(end) {
			d.gaps = append(d.gaps, at.Sub(prev).Round(time.Second))
			d.missed += max(0, int((at.Sub(prev)-grace)/every))
		}
		prev = at
	}
	code, body = floodGet(c, base, "/api/v1/quota", uiToken)
	var quota struct {
		Pools []struct {
			Name  string `json:"name"`
			Limit int64  `json:"limit"`
			Used  int64  `json:"used"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(body, &quota); code != 200 || err != nil {
		t.Fatalf("/api/v1/quota: %d, %v\n%.300s", code, err, body)
	}
	for _, p := range quota.Pools {
		d.used[p.Name], d.limit[p.Name] = p.Used, p.Limit
		if n := charged[p.Name] - p.Limit; n > 0 {
			d.over[p.Name] = n
		}
	}
	return d
}

// deployedEvery is the deployed soak's --every: with every region, a run
// lands every few seconds.
const deployedEvery = 5 * time.Minute

// deployedRSS is the resident memory docs/api.md says a daemon at every
// region stays within, in kB.
const deployedRSS = 256 << 10

// deploy readies h for the deployed shape: a costs file whose pools hold
// every region at deployedEvery and tracking, plans with the anonymous
// plan and a generous one for the hot readers' API token, every region's
// charts stored once; and f's hot pages and anonymous clients.
func (f *flood) deploy(t *testing.T, h *harness) {
	t.Helper()
	costs := filepath.Join(h.dir, "soak-costs.yaml")
	if err := os.WriteFile(costs, []byte(`pools:
  default: {limit: 400000, reserve: 0, window: 24h}
  search:  {limit: 100, reserve: 0, window: 24h}
  stats:   {limit: 100000, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 100}
  videos.batchGetStats: {stats: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	plans := filepath.Join(h.dir, "soak-plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 40, window: 1h, burst: 40}\n  reader: {limit: 100000000, window: 1h, burst: 1000000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_COSTS", costs)
	h.set("INGEST_API_PLANS", plans)
	h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	out := strings.TrimSpace(h.mustRun(0, "tokens", "add", "soak-reader", "--plan", "reader").stdout)
	token := out[strings.LastIndexByte(out, '\n')+1:]
	f.HotMore = map[string]string{"/worldwide": "", "/api/v1/charts/US": token}
	f.Anonymous, f.AnonEach = 20, 250*time.Millisecond
	f.Compare = true // checkDeployed holds the ratio
}

// checkDeployed holds the deployed shape's flood to its promises: the hot
// pages at half the bytes of the same served from memory at least, none
// answered otherwise than 200; every anonymous client metered and
// refused over its plan; the memory within deployedRSS and flat over the
// flood's last five minutes (its second half, when shorter); no region's
// slot missed and no unit over a pool's limit.
func checkDeployed(t *testing.T, h *harness, f flood, r floodResult, base string) {
	t.Helper()
	if ratio := float64(r.hotBytes) / float64(max(r.refBytes, 1)); ratio < 0.5 {
		t.Errorf("hot pages during the flood: %.2fx of the same bytes from memory, want 0.5x at least", ratio)
	}
	if len(r.hotNot200) != 0 {
		t.Errorf("hot (kept) pages answered other than 200: %v of %d", r.hotNot200, r.hotAnswers)
	}
	if r.anonUnmetered != 0 || r.anonRefused != f.Anonymous {
		t.Errorf("anonymous API clients: %d answers without RateLimit fields, %d of %d clients refused over their plan; want none, and all",
			r.anonUnmetered, r.anonRefused, f.Anonymous)
	}
	var late []int64
	for i, at := range r.rssTimes {
		if at >= r.end.Sub(r.start)-5*time.Minute {
			late = append(late, r.rssLate[i])
		}
	}
	if len(late) > 0 {
		top, low := slices.Max(late), slices.Min(late)
		half := len(late) / 2
		first, second := slices.Max(late[:max(half, 1)]), slices.Max(late[half:])
		t.Logf("RSS over the flood's last %v: %d-%d kB (its first half's peak %d kB, its second's %d kB); bound %d kB",
			min(r.end.Sub(r.start)/2, 5*time.Minute).Round(time.Second), low, top, first, second, deployedRSS)
		if top > deployedRSS {
			t.Errorf("RSS reached %d kB, over the %d kB docs/api.md states for a daemon at every region", top, deployedRSS)
		}
		if second > first+16<<10 {
			t.Errorf("RSS rose over the flood's last minutes: peaks %d kB then %d kB, more than 16 MB apart", first, second)
		}
	}
	byRegion, regions, failed := missedAtEveryRegion(t, h.db(), r.start, r.end, deployedEvery)
	caughtUp := declinedCaughtUp(t, base)
	missed, declined := 0, 0
	for region, n := range byRegion {
		// A slot the pacer declined because the catch-up ran its pass is
		// planned, not missed (docs/explanation/pacing.md).
		d := min(n, caughtUp[region])
		missed, declined = missed+n-d, declined+d
	}
	d := daemonDuring(t, base, r.start, r.end, deployedEvery, h.fake.ChargedPools())
	t.Logf("the daemon at every region during the flood: %d regions ran, %d runs failed, %d slots missed, %d declined as caught up; upstream charged %v, ledger used %v of %v; over the limit %v",
		regions, failed, missed, declined, d.charged, d.used, d.limit, d.over)
	if missed != 0 || failed != 0 || len(d.over) != 0 {
		t.Errorf("the daemon at every region during the flood: %d missed slots, %d failed runs, units over the limit %v; want none", missed, failed, d.over)
	}
	if regions == 0 {
		// A flood no slot fell in checked nothing of the schedule: it is
		// no pass, whatever its length.
		t.Errorf("the daemon at every region ran no region during the flood (%v long, --every %v): the missed-slot check was never exercised; a soak of the deployed shape needs INGEST_SOAK_FOR of %v at least",
			r.end.Sub(r.start).Round(time.Second), deployedEvery, 2*deployedEvery)
	}
}

// declinedCaughtUp is, by chart, the slots the daemon's pacer declined
// because a catch-up had run their pass, as its /metrics counts them.
func declinedCaughtUp(t *testing.T, base string) map[string]int {
	t.Helper()
	code, body := floodGet(loopbackFrom("127.2.0.1"), base, "/metrics", uiToken)
	if code != 200 {
		t.Fatalf("/metrics: %d\n%.300s", code, body)
	}
	out := map[string]int{}
	re := regexp.MustCompile(`(?m)^ingest_pace_declined_slots_total\{chart="([^"]+)",reason="caught up"\} (\d+)$`)
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	return out
}

// missedAtEveryRegion counts, over every region's unfiltered chart, the
// slots of every in [start, end] no run started in (as daemonDuring
// does for one), by region, the regions with a run started in it, and
// those runs that failed.
func missedAtEveryRegion(t *testing.T, path string, start, end time.Time, every time.Duration) (missed map[string]int, regions, failed int) {
	t.Helper()
	rows, err := openDB(t, path).Query(`SELECT region, started_ms, status FROM runs
  WHERE kind = 'trending' AND category = '' ORDER BY region, started_ms`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	starts := map[string][]time.Time{}
	for rows.Next() {
		var region, status string
		var ms int64
		if err := rows.Scan(&region, &ms, &status); err != nil {
			t.Fatal(err)
		}
		at := time.UnixMilli(ms)
		starts[region] = append(starts[region], at)
		if !at.Before(start) && !at.After(end) && status == "failed" {
			failed++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	grace := every / 2
	missed = map[string]int{}
	for region, at := range starts {
		ran := false
		prev := time.Time{}
		for _, a := range append(at, end) {
			if !prev.IsZero() && a.After(start) && prev.Before(end) {
				missed[region] += max(0, int((a.Sub(prev)-grace)/every))
			}
			ran = ran || (!a.Before(start) && a.Before(end))
			prev = a
		}
		if ran {
			regions++
		}
	}
	return missed, regions, failed
}
