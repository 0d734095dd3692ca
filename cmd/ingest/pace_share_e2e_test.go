package main

import (
	"fmt"
	"math"
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

// TestWorkersOnOneRedisKeyShareByCount runs daemons on databases of their
// own on one Redis key, as hosts do: each counts on its pool divided by the
// workers the limiter saw spend in the window, a half with two, a third
// with three, and a daemon restarted on its database stays one of the
// three, its predecessor's spends its own, never a fourth worker. A joiner
// counts the others at its first plan; each running daemon counts it
// within one --every of its first call (docs/explanation/pacing.md, "Other
// workers"), which its own log says.
func TestWorkersOnOneRedisKeyShareByCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	const every = time.Minute
	// look is the work a running daemon does once it looks at the limiter
	// (a read, the plan, its line): the promise's bound is one --every and
	// this.
	const look = every / 6
	type daemon struct {
		p            *proc
		db, region   string
		addr         string
		firstSpentBy time.Time // the line of its first pass: its first call came before
	}
	start := func(name, region string) *daemon {
		d := &daemon{db: filepath.Join(h.dir, name+".db"), region: region, addr: closedAddr(t)}
		h.set("INGEST_DB", d.db)
		// Stopped by the test; the bound only ends one a failure left running.
		d.p = h.startFor(longTimeout, "run", "--every", every.String(), "--regions", region, "--listen", d.addr)
		// Its first pass is a start's work (a command's bound): the catalogue,
		// the catch-up, the fake upstream's pages.
		if !waitFor(cmdTimeout, func() bool {
			d.firstSpentBy = logTime(firstLine(d.p.out.String(), "msg=pass region="+region+" status=completed"))
			return !d.firstSpentBy.IsZero() || d.p.exited()
		}) || d.firstSpentBy.IsZero() {
			t.Fatalf("the daemon on %s completed no pass (exited %v):\n%s", region, d.p.exited(), d.p.out)
		}
		return d
	}
	share := func(d *daemon) float64 {
		return metricValue(httpGet("http://"+d.addr+"/metrics"), `ingest_pace_share{pool="default"}`)
	}
	// counted waits until every daemon counts on 1/workers of the pool,
	// the running ones within one --every (and a look) of the joiner's
	// first call, and reads in each running one's log when it began to.
	counted := func(workers int, joiner *daemon, running ...*daemon) {
		t.Helper()
		want := 1 / float64(workers)
		all := append([]*daemon{joiner}, running...)
		var got []float64
		ok := waitFor(time.Until(joiner.firstSpentBy.Add(every+look)), func() bool {
			got = got[:0]
			for _, d := range all {
				if d.p.exited() {
					return true
				}
				got = append(got, share(d))
			}
			for _, v := range got {
				if math.Abs(v-want) > 1e-9 {
					return false
				}
			}
			return true
		})
		for _, d := range all {
			if d.p.exited() {
				t.Fatalf("the daemon on %s ended:\n%s", d.region, d.p.out)
			}
		}
		if !ok {
			t.Errorf("shares of the default pool %v (the joiner on %s first), want each %.3f, one --every and a look after the joiner's first pass", got, joiner.region, want)
		}
		line := fmt.Sprintf("pool=default workers=%d ", workers)
		for _, d := range running {
			at := logTime(firstLine(d.p.out.String(), line))
			switch late := at.Sub(joiner.firstSpentBy); {
			case at.IsZero():
				t.Errorf("the daemon on %s never said it counts %d workers:\n%s", d.region, workers, d.p.out)
			case late > every+look:
				t.Errorf("the daemon on %s counted the joiner on %s %s after the joiner's first pass, want within one --every (%s):\n%s",
					d.region, joiner.region, late.Round(time.Millisecond), every, d.p.out)
			default:
				t.Logf("the daemon on %s counted %d workers %s after the first pass of the joiner on %s", d.region, workers, late.Round(time.Millisecond), joiner.region)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	a := start("a", "US")
	if v := share(a); v != 1 {
		t.Fatalf("alone on the key, the daemon on US counts on %.3f of the pool, want 1", v)
	}
	b := start("b", "GB")
	counted(2, b, a)
	c := start("c", "DE")
	counted(3, c, a, b)

	a.p.signal(t, syscall.SIGTERM)
	if code, ok := a.p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the daemon on US after SIGTERM: exited %v, code %d\n%s", ok, code, a.p.out)
	}
	again := start("a", "US")
	// Its first plan counts the two others, and the others, looking within
	// one --every of its first call, still count three: never a quarter.
	until := again.firstSpentBy.Add(every + look)
	for ds := []*daemon{again, b, c}; time.Now().Before(until); time.Sleep(500 * time.Millisecond) {
		for _, d := range ds {
			if v := share(d); v >= 0 && math.Abs(v-1.0/3) > 1e-9 {
				t.Fatalf("with a daemon restarted on its own database, the one on %s counts on %.3f of the pool, want a third\n%s", d.region, v, d.p.out)
			}
		}
	}
	for _, d := range []*daemon{again, b, c} {
		d.p.signal(t, syscall.SIGTERM)
		if code, ok := d.p.wait(cmdTimeout); !ok || code != 0 {
			t.Errorf("the daemon on %s after SIGTERM: exited %v, code %d\n%s", d.region, ok, code, d.p.out)
		}
		if strings.Contains(d.p.out.String(), "workers=4") {
			t.Errorf("the daemon on %s counted a fourth worker:\n%s", d.region, d.p.out)
		}
	}
}

// firstLine is the first line of out that holds s; "" when none does.
func firstLine(out, s string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// logTime is when a line of the daemon's log was written; zero when the
// line has no time.
func logTime(line string) time.Time {
	v, ok := strings.CutPrefix(line, "time=")
	if !ok {
		return time.Time{}
	}
	v, _, _ = strings.Cut(v, " ")
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return at
}
