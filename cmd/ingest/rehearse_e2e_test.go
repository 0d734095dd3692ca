package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// The rehearsal clock: a daemon whose INGEST_REHEARSE_CLOCK_FILE is
// written mid-run takes the file's offset as its clock's within a
// second or so, as a chart's age on /metrics shows (read at scrape time by
// the house clock); a file that holds no duration is a usage error naming
// the variable, before anything is opened.
func TestRehearsalClockSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	file := filepath.Join(t.TempDir(), "clock-offset")
	h.set(clock.RehearseEnv, file) // absent: no offset
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr)
	age := func() float64 {
		return metricValue(httpGet("http://"+addr+"/metrics"), `ingest_chart_age_seconds{chart="US"}`)
	}
	if !waitFor(60*time.Second, func() bool { return age() >= 0 }) {
		t.Fatalf("no chart age within 60s\n%s", p.out)
	}
	if a := age(); a >= time.Hour.Seconds() {
		t.Fatalf("before the step: the chart's age is %.0fs, want under an hour", a)
	}
	if err := os.WriteFile(file, []byte("2h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var last float64
	if !waitFor(30*time.Second, func() bool { last = age(); return last >= (2 * time.Hour).Seconds() }) {
		t.Fatalf("the clock file says 2h: the chart's age stays %.0fs, want 2h or more\n%s", last, p.out)
	}
	t.Logf("after writing 2h: ingest_chart_age_seconds{chart=\"US\"} %.0f", last)
	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(30 * time.Second); !ok || c != 0 {
		t.Errorf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}

	if err := os.WriteFile(file, []byte("ninety seconds"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	if !strings.Contains(res.stderr, clock.RehearseEnv) || !strings.Contains(res.stderr, `"ninety seconds"`) {
		t.Errorf("a bad clock file: want an error naming %s and its content:\n%s", clock.RehearseEnv, res.stderr)
	}
}
