package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// TestLoneDaemonKeepsItsShareAcrossTheDayAndARestart runs a daemon alone on
// its key at every region, tracking on, with its clock (and the fake
// upstream's) set just before 00:00 Pacific, through the turn of the quota
// day, where tracking, the day's category reads and the new day's first
// passes spend together, and then across a restart on the same database,
// whose earlier spends are this worker's own. Its share must never fall
// below the whole pool, by its gauge, and it must never log that it took
// spends for another worker's.
func TestLoneDaemonKeepsItsShareAcrossTheDayAndARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pacific, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(pacific)
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, pacific)
	const before = 40 * time.Second
	offset := midnight.Add(-before).Sub(now).Round(time.Second)
	file := filepath.Join(t.TempDir(), "clock-offset")
	if err := os.WriteFile(file, []byte(offset.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set(clock.RehearseEnv, file)
	h.fake.SetClock(func() time.Time { return time.Now().Add(offset) })
	srv := httptest.NewServer(h.reqs.wrap(h.fake))
	t.Cleanup(srv.Close)
	h.set("YOUTUBE_ENDPOINT", srv.URL+"/")

	addr := closedAddr(t)
	args := []string{"run", "--regions", "all", "--every", "5m", "--listen", addr}
	daemonNow := func() time.Time { return time.Now().Add(offset) }

	// watch scrapes the share gauges until the daemon's clock reaches
	// until, and returns the least share seen and how many scrapes had one.
	watch := func(p *proc, until time.Time) (least float64, seen int) {
		least = 1
		for daemonNow().Before(until) && !p.exited() {
			body := httpGet("http://" + addr + "/metrics")
			for _, pool := range []string{"default", "stats"} {
				v := metricValue(body, `ingest_pace_share{pool="`+pool+`"}`)
				if v < 0 {
					continue
				}
				seen++
				if v < least {
					least = v
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		return least, seen
	}

	// The daemon across the turn of the day, then again on the same
	// database after a stop.
	var outs []string
	for _, run := range []struct {
		what  string
		until func() time.Time
	}{
		{"across 00:00 Pacific", func() time.Time { return midnight.Add(40 * time.Second) }},
		{"after a restart", func() time.Time { return daemonNow().Add(30 * time.Second) }},
	} {
		p := h.start(args...)
		least, seen := watch(p, run.until())
		if p.exited() {
			t.Fatalf("the daemon ended before its watch %s:\n%s", run.what, p.out)
		}
		if seen == 0 {
			t.Fatalf("no ingest_pace_share on /metrics %s\n%s", run.what, p.out)
		}
		if least < 1 {
			t.Errorf("%s the lone daemon's share fell to %.2f of its pool", run.what, least)
		}
		p.signal(t, syscall.SIGTERM)
		if c, ok := p.wait(60 * time.Second); !ok || c != 0 {
			t.Fatalf("daemon %s: exit %d, exited %v\n%s", run.what, c, ok, p.out)
		}
		outs = append(outs, p.out.String())
	}
	for i, out := range outs {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "other databases spend") {
				t.Errorf("daemon %d took its own spends for another worker's: %s", i+1, line)
			}
		}
	}
	if n := len(h.reqs.requests("/videoCategories")); n == 0 {
		t.Errorf("the fake upstream saw no category read: the day's turn was not crossed as meant")
	}
}
