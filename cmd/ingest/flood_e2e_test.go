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
	"regexp"
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
}

// soakFlood is make soak's: ten minutes, the counts.
var soakFlood = flood{For: 10 * time.Minute, Missing: 500_000, Searches: 100_000, Guessers: 200, RightEach: 10 * time.Second, Hot: 16}

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
	start, end          time.Time // the flood's
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

// run floods base, served by pid, and measures it. The flood ends when
// its counts are sent and, for a timed flood, its time is over.
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
	hotBody := map[string][]byte{}
	for _, p := range hotPaths {
		code, b := floodGet(main, base, p, "")
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
				if i > int64(f.Missing) {
					return
				}
				if code, _ := floodGet(c, base, fmt.Sprintf("/videos/zz-missing-%d", i), ""); code == http.StatusNotFound {
					atomic.AddInt64(&r.sent404, 1)
				}
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
				if i > int64(f.Searches) {
					return
				}
				if code, _ := floodGet(c, base, fmt.Sprintf("/search?q=flood+%d", i), ""); code == 200 {
					atomic.AddInt64(&r.sentSearch, 1)
				}
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
	read := func(c *http.Client, at string, sum *int64) {
		defer readers.Done()
		for i := 0; ctx.Err() == nil; i++ {
			p := hotPaths[i%len(hotPaths)]
			if code, b := floodGet(c, at, p, ""); code == 200 {
				atomic.AddInt64(sum, int64(len(b)))
			}
		}
	}
	for range f.Hot {
		readers.Add(2)
		go read(loopbackFrom("127.0.3.1"), base, &r.hotBytes)
		go read(&http.Client{}, ref.URL, &r.refBytes)
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
	return r
}

// String is the flood's figures as make soak prints them.
func (r floodResult) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "RSS before the flood %d kB, after %d kB (+%d kB); over the second half %v\n", r.rssBefore, r.rssAfter, r.rssAfter-r.rssBefore, r.rssLate)
	fmt.Fprintf(&b, "unique 404s %d, unique searches %d; kept answers %d, %d bytes\n", r.sent404, r.sentSearch, r.keptAnswers, r.keptBytes)
	fmt.Fprintf(&b, "right token from fresh addresses: %d of %d answered 200\n", r.rightOK, r.right)
	if r.refBytes > 0 {
		fmt.Fprintf(&b, "hot pages during the flood: %.2fx of the same bytes served from memory (side by side)\n", float64(r.hotBytes)/float64(r.refBytes))
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
	}{
		{"serve --public", []string{"serve", "--public"}},
		{"run --listen --public", []string{"run", "--regions", "US", "--every", "1m", "--public"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !soak && tc.args[0] == "run" {
				t.Skip("the daemon's flood is make soak's")
			}
			h := newHarness(t)
			h.mustRun(0, "run", "--once", "--regions", "US")
			h.set("INGEST_UI_TOKEN", uiToken)
			listen := closedAddr(t)
			ctx, cancel := context.WithTimeout(context.Background(), f.For+longTimeout)
			defer cancel()
			cmd := h.command(ctx, append(tc.args, "--listen", listen)...)
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			base := "http://" + listen
			if !waitFor(30*time.Second, func() bool { code, _ := floodGet(http.DefaultClient, base, "/healthz", ""); return code == 200 }) {
				t.Fatalf("ingest %s never answered /healthz\n%s", tc.args[0], out.String())
			}
			r := f.run(t, base, cmd.Process.Pid)
			t.Logf("%s:\n%s", tc.name, r)
			if r.right == 0 || r.rightOK != r.right {
				t.Errorf("the right token from fresh addresses: %d of %d answered 200", r.rightOK, r.right)
			}
			if r.keptAnswers < 0 || r.keptAnswers > 2048 || r.keptBytes > 24<<20 {
				t.Errorf("after the flood: %d answers, %d bytes kept; the bound is 2048 answers, %d bytes", r.keptAnswers, r.keptBytes, 24<<20)
			}
			if soak && (r.rssAfter > r.rssBefore+64<<10) {
				t.Errorf("RSS grew by %d kB, over 64 MB", r.rssAfter-r.rssBefore)
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
