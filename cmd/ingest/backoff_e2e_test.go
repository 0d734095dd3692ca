package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

// A daemon killed outright while it backs off a failing upstream, and
// started again on the same database, calls the upstream for no chart
// until the backoff the database kept ends: its /readyz says it backs
// off, and slots pass with no chart called. Once the backoff's end has
// passed it calls again, and the pass that succeeds ends the backoff for
// every process: the database keeps none.
func TestBackoffOutlivesARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	file := filepath.Join(t.TempDir(), "clock-offset")
	h.set(clock.RehearseEnv, file) // absent: no offset, until the test steps it
	h.fake.FailNext(1<<30, 503)
	h.tightCosts(100000) // each skipped slot a minute after the one before
	addr := closedAddr(t)
	base := "http://" + addr
	args := []string{"run", "--every", "1m", "--regions", "US,GB,DE", "--listen", addr}
	backingOff := func() bool {
		code, body := 0, ""
		if siteServed(base) {
			code, body = get(t, base+"/readyz")
		}
		return code == 503 && strings.Contains(body, "backing off an upstream that fails every chart")
	}
	// A chart pass's calls: its category names first, then its pages. The
	// region catalogue is read at each start, whatever the backoff.
	charts := func() int64 {
		by := h.fake.ChargedByOp(testKey)
		return by[ingest.OpCategoriesList] + by[ingest.OpVideosList]
	}

	first := h.startFor(longTimeout, args...)
	if !waitFor(cmdTimeout, func() bool { return backingOff() || first.exited() }) || first.exited() {
		t.Fatalf("the first daemon never backed off\n%s", first.out)
	}
	first.signal(t, syscall.SIGKILL)
	if _, ok := first.wait(cmdTimeout); !ok {
		t.Fatalf("the first daemon outlived SIGKILL")
	}
	before := charts()

	again := h.startFor(longTimeout, args...)
	if !waitFor(cmdTimeout, func() bool { return backingOff() || again.exited() }) || again.exited() {
		t.Fatalf("the daemon started again does not say it backs off\n%s", again.out)
	}
	// A slot the backoff skips counts as a failure of its region: one
	// more than at the start means a slot came and went.
	failures := func() float64 {
		return metricValue(httpGet(base+"/metrics"), `ingest_region_consecutive_failures{region="US"}`)
	}
	start := failures()
	if !waitFor(longTimeout, func() bool { return failures() > start || again.exited() }) || again.exited() {
		t.Fatalf("no slot skipped while backing off (US's failures in a row stay %v)\n%s", start, again.out)
	}
	if n := charts(); n != before {
		t.Fatalf("the daemon started again called the upstream %d times for charts during the backoff the database keeps\n%s", n-before, again.out)
	}

	// The upstream's Date moves with the daemon's clock: a clock ahead
	// of the upstream's is refused before the pass asks anything.
	h.fake.SetClock(func() time.Time { return time.Now().Add(10 * time.Minute) })
	h.fake.ClearFaults()
	if err := os.WriteFile(file, []byte("10m\n"), 0o644); err != nil { // past the first backoff's end
		t.Fatal(err)
	}
	if !waitFor(longTimeout, func() bool { return charts() > before || again.exited() }) || again.exited() {
		t.Fatalf("past the backoff's end, the daemon calls the upstream for no chart\n%s", again.out)
	}
	db := openDB(t, h.db())
	kept := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM backoff`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if !waitFor(cmdTimeout, func() bool { return kept() == 0 || again.exited() }) || again.exited() {
		t.Errorf("a chart pass succeeded and the database still keeps the backoff\n%s", again.out)
	}
}

// Cron's run --once goes by the backoff the database keeps, as a daemon
// does: a run whose charts fail three in a row starts it; the next run,
// started during it, calls the upstream for no chart and exits 0 saying
// why; past its end a run calls again, and its pass that succeeds ends it
// for every process.
func TestOnceGoesByTheKeptBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	file := filepath.Join(t.TempDir(), "clock-offset")
	h.set(clock.RehearseEnv, file)
	h.fake.FailNext(1<<30, 503)
	args := []string{"run", "--once", "--regions", "US,GB,DE"}
	charts := func() int64 {
		by := h.fake.ChargedByOp(testKey)
		return by[ingest.OpCategoriesList] + by[ingest.OpVideosList]
	}
	db := openDB(t, h.db())
	kept := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM backoff`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	h.mustRun(1, args...)
	if kept() != 1 {
		t.Fatalf("three charts failed in a row under run --once and the database keeps no backoff")
	}
	before := charts()
	during := h.mustRun(0, args...)
	if n := charts(); n != before {
		t.Errorf("run --once started during the kept backoff called the upstream %d times for charts\n%s", n-before, during)
	}
	if !strings.Contains(during.stderr, "as the database keeps it") {
		t.Errorf("run --once during the kept backoff does not say why it ran no chart\n%s", during)
	}

	h.fake.SetClock(func() time.Time { return time.Now().Add(10 * time.Minute) })
	h.fake.ClearFaults()
	if err := os.WriteFile(file, []byte("10m\n"), 0o644); err != nil { // past the backoff's end
		t.Fatal(err)
	}
	after := h.mustRun(0, args...)
	if charts() == before {
		t.Errorf("past the kept backoff's end, run --once calls the upstream for no chart\n%s", after)
	}
	if kept() != 0 {
		t.Errorf("run --once's charts succeeded and the database still keeps the backoff\n%s", after)
	}
}
