package main

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// series is the value of a series named with its labels in a /metrics
// body, -1 when absent.
func series(body []byte, name string) int64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` ([0-9.e+]+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return int64(f)
}

// TestKeptPagesAreBuiltBesideTheReaders: a daemon lands runs while
// readers keep asking for the kept pages (the worldwide page and its
// JSON, a chart, the front page); every answer is 200, the pages follow
// the runs (the worldwide JSON's tag moves on), and, past each page's
// first build, no request waits for a build: the daemon's /metrics
// counts the builds beside the requests, and no wait.
func TestKeptPagesAreBuiltBesideTheReaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(1_000_000)
	const charts = "US,GB,JP,DE"
	h.mustRun(0, "run", "--once", "--regions", charts)
	h.set("INGEST_UI_TOKEN", uiToken)
	var base string
	for try := 1; ; try++ {
		listen := closedAddr(t)
		p := h.start("run", "--regions", charts, "--every", "1m", "--listen", listen)
		base = "http://" + listen
		up := waitFor(30*time.Second, func() bool {
			return siteServed(base) || p.exited()
		}) && !p.exited()
		if up {
			break
		}
		if try < 3 && p.exited() && strings.Contains(p.out.String(), "address already in use") {
			continue
		}
		t.Fatalf("ingest run --listen %s never answered /healthz\n%s", listen, p.out)
	}
	hot := []string{"/worldwide", "/api/v1/worldwide", "/charts/US", "/"}
	c := &http.Client{Timeout: cmdTimeout}
	tagOf := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+uiToken)
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("ETag")
	}
	for _, p := range hot { // each page's first build
		if code, _ := tagOf(p); code != 200 {
			t.Fatalf("%s: got %d", p, code)
		}
	}
	metrics := func() (waits, beside int64) {
		code, body := floodGet(c, base, "/metrics", uiToken)
		if code != 200 {
			t.Fatalf("/metrics: got %d", code)
		}
		return series(body, "ingest_web_kept_waits_total"), series(body, `ingest_web_kept_builds_total{how="beside"}`)
	}
	waits, _ := metrics()
	if waits < 0 {
		t.Fatal("/metrics has no ingest_web_kept_waits_total")
	}
	_, first := tagOf("/api/v1/worldwide")
	db := openDB(t, h.db())
	runs := func() int64 {
		return queryInt(t, db, `SELECT count(*) FROM runs WHERE kind = 'trending' AND status = 'completed'`)
	}
	landedBefore := runs()
	answers, moved := 0, false
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for ctx.Err() == nil && !(moved && runs() >= landedBefore+3) {
		for _, p := range hot {
			code, tag := tagOf(p)
			answers++
			if code != 200 {
				t.Fatalf("%s while runs land: got %d", p, code)
			}
			moved = moved || (p == "/api/v1/worldwide" && tag != first)
		}
	}
	if !moved {
		t.Fatalf("%d runs landed, and the worldwide JSON's tag never moved on from %s", runs()-landedBefore, first)
	}
	after, beside := metrics()
	t.Logf("%d answers while %d runs landed: %d builds beside the requests, %d requests waited for a build", answers, runs()-landedBefore, beside, after-waits)
	if after != waits || beside < 1 {
		t.Errorf("while runs landed, %d requests waited for a build and %d builds were made beside the requests; want none waited, and some beside",
			after-waits, beside)
	}
}
