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

	p := h.start(args...)
	least, seen := watch(p, midnight.Add(40*time.Second))
	if p.exited() {
		t.Fatalf("the daemon ended before the day turned:\n%s", p.out)
	}
	if seen == 0 {
		t.Fatalf("no ingest_pace_share on /metrics across the turn of the day\n%s", p.out)
	}
	if least < 1 {
		t.Errorf("across 00:00 Pacific the lone daemon's share fell to %.2f of its pool", least)
	}
	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(60 * time.Second); !ok || c != 0 {
		t.Fatalf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}
	first := p.out.String()

	q := h.start(args...)
	least, seen = watch(q, daemonNow().Add(30*time.Second))
	if seen == 0 {
		t.Fatalf("no ingest_pace_share on /metrics after the restart\n%s", q.out)
	}
	if least < 1 {
		t.Errorf("after a restart the lone daemon's share fell to %.2f of its pool", least)
	}
	q.signal(t, syscall.SIGTERM)
	if c, ok := q.wait(60 * time.Second); !ok || c != 0 {
		t.Errorf("restarted daemon: exit %d, exited %v\n%s", c, ok, q.out)
	}
	for i, out := range []string{first, q.out.String()} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "others_units") {
				t.Errorf("daemon %d took its own spends for another worker's: %s", i+1, line)
			}
		}
	}
	if n := len(h.reqs.requests("/videoCategories")); n == 0 {
		t.Errorf("the fake upstream saw no category read: the day's turn was not crossed as meant")
	}
}
