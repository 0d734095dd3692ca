package main

import (
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// 4. The daemon under SIGTERM: the page in flight is stored, nothing is
// left running, exit 0; a second signal stops at once.
func TestDaemonDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(200 * time.Millisecond)
	p := h.start("run", "--every", "1m", "--regions", "US,IN")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 50 }) {
		t.Fatalf("no page stored within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	code, ok := p.wait(10 * time.Second)
	if !ok {
		t.Fatalf("daemon still running 10s after SIGTERM\n%s", p.out)
	}
	if code != 0 {
		t.Errorf("daemon exited %d after SIGTERM, want 0\n%s", code, p.out)
	}
	var pages int64
	for _, r := range runRows(t, openDB(t, h.db())) {
		n := h.fake.ChartLength(r.Region)
		if r.Status == "running" {
			t.Errorf("run %d (%s) left %q after a clean shutdown", r.ID, r.Region, r.Status)
		}
		if r.Entries != min(50*r.Pages, n) || r.Videos != r.Entries {
			t.Errorf("run %d (%s): %d pages, %d videos, %d entries: want whole pages of 50", r.ID, r.Region, r.Pages, r.Videos, r.Entries)
		}
		pages += int64(r.Pages)
	}
	// The page in flight when the signal came was stored, not dropped.
	if charged := h.fake.ChargedByOp(testKey)[ingest.OpVideosList]; charged != pages {
		t.Errorf("upstream served %d chart pages, %d were stored", charged, pages)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}

func TestDaemonSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const latency = 10 * time.Second
	h.fake.SetLatency(latency)
	p := h.start("run", "--every", "1m", "--regions", "US,IN")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	if p.exited() {
		t.Fatalf("exited within 300ms of one SIGTERM with a %s call in flight: the first signal must let it finish\n%s", latency, p.out)
	}
	p.signal(t, syscall.SIGINT)
	sent := time.Now()
	code, ok := p.wait(latency / 2)
	if !ok {
		t.Fatalf("still running %s after a second signal, with a %s call in flight\n%s", latency/2, latency, p.out)
	}
	t.Logf("exited %d after %s", code, time.Since(sent).Round(time.Millisecond))
	for _, r := range runRows(t, openDB(t, h.db())) {
		if r.Status == "running" {
			t.Errorf("run %d (%s) left %q after a second signal", r.ID, r.Region, r.Status)
		}
	}
}

// A second signal stops a run at once, and the run is recorded as
// interrupted, not failed.
func TestSecondSignalIsAnInterruption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(10 * time.Second)
	p := h.start("run", "--once", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.signal(t, syscall.SIGINT)
	if _, ok := p.wait(cmdTimeout); !ok {
		t.Fatalf("still running after two signals\n%s", p.out)
	}
	rows := runRows(t, openDB(t, h.db()))
	if len(rows) != 1 || rows[0].Status != "interrupted" || !strings.Contains(rows[0].Message, "second signal") {
		t.Errorf("runs after a second signal: %+v, want one interrupted by the second signal\n%s", rows, p.out)
	}
}

// 5. kill -9 in the middle of a pass leaves the database whole, and a
// rerun completes.
func TestKillMidPassLeavesTheDatabaseWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(50 * time.Millisecond)
	p := h.start("run", "--once")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 100 }) {
		t.Fatalf("no pages stored within 60s\n%s", p.out)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.wait(10 * time.Second); !ok {
		t.Fatal("process did not die after SIGKILL")
	}

	rw := openRW(t, h.db())
	if got := queryString(t, rw, `PRAGMA integrity_check`); got != "ok" {
		t.Fatalf("PRAGMA integrity_check: %s", got)
	}
	if _, err := rw.Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("FTS5 integrity-check: %v", err)
	}
	victim := ""
	for _, r := range runRows(t, rw) {
		n := h.fake.ChartLength(r.Region)
		if r.Entries != min(50*r.Pages, n) {
			t.Errorf("run %d (%s, %s): %d pages but %d entries: a page is in entirely or not at all", r.ID, r.Region, r.Status, r.Pages, r.Entries)
		}
		if r.Status == "running" {
			victim = r.Region
		}
	}
	rw.Close()
	t.Logf("killed during the pass of %q", victim)

	res := h.mustRun(0, "run", "--once")
	var others []string
	for _, r := range regions.Default {
		if r != victim {
			others = append(others, r)
		}
	}
	checkChartsComplete(t, h, others...)
	if victim != "" {
		last := lastRuns(t, openDB(t, h.db()), "trending")[victim]
		// The dead process's lease may hold the region until it expires;
		// then the rerun must say so rather than pretend.
		if last.Status != "completed" && !strings.Contains(res.stderr, "already running") {
			t.Errorf("rerun neither completed %s (last run %q) nor said why it skipped it\n%s", victim, last.Status, res)
		}
	}
	rep := h.report()
	for _, r := range rep.Regions {
		if !slices.Contains([]string{"completed", "stopped", "failed", "never"}, r.Status) {
			t.Errorf("report region %s: status %q, want one of completed, stopped, failed, never", r.Code, r.Status)
		}
	}
}

// A stop within its grace: with the upstream slower than a page's timeout,
// SIGTERM makes no call after it (no retry, no category or region read),
// the page in flight gets jobs.StopBound at most, and the process exits well inside
// the 90 s the shipped units give, every run closed.
func TestStopWithinItsGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		// inFlight is the calls made before the first answer can come:
		// the region catalogue and the first pass's category names, or the
		// once's category names.
		inFlight int64
	}{
		{"daemon", []string{"run", "--every", "1m", "--regions", "US,IN"}, 2},
		{"once", []string{"run", "--once", "--regions", "US"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.fake.SetLatency(65 * time.Second)
			p := h.start(tc.args...)
			if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= tc.inFlight }) {
				t.Fatalf("%d upstream calls within 60s, want %d\n%s", h.fake.Requests(), tc.inFlight, p.out)
			}
			// A call the limiter admitted before the signal may reach the
			// upstream just after it; what must not happen is a call
			// admitted after it, which the ledger dates by this host's clock.
			signalled := time.Now()
			p.signal(t, syscall.SIGTERM)
			code, ok := p.wait(90 * time.Second)
			if !ok {
				t.Fatalf("still running 90s after SIGTERM (the shipped grace)\n%s", p.out)
			}
			if code != 0 {
				t.Errorf("exit %d after SIGTERM, want 0\n%s", code, p.out)
			}
			// The signal takes effect when the daemon takes it, which a busy
			// machine may make later than the kill: its log line dates it,
			// written just before no call may start.
			took := signalled
			if m := regexp.MustCompile(`time=(\S+) level=INFO msg="signal: finishing`).FindStringSubmatch(p.out.String()); m != nil {
				if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && at.After(took) {
					took = at
				}
			} else {
				t.Errorf("the process did not say it took the signal\n%s", p.out)
			}
			// A call the limiter admitted while the signal came is given
			// back unsent (jobs.Stopping): it was never made, and the
			// ledger against the upstream's charge below says so.
			if n := queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM ledger WHERE at_ms > ?
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`, took.UnixMilli()); n != 0 {
				t.Errorf("%d calls admitted after SIGTERM, want none\n%s", n, p.out)
			}
			if got, charged := ledgerUnits(t, h.db(), "default"), h.fake.Charged(testKey); got != charged {
				t.Errorf("ledger holds %d units, upstream charged %d", got, charged)
			}
			// The page in flight ends at the stop's bound or, sooner, at its
			// attempt's own (ingest.Delivery); either way no retry follows,
			// as the log or the run's message says.
			said := p.out.String()
			runs := runRows(t, openDB(t, h.db()))
			for _, r := range runs {
				said += "\n" + r.Message
			}
			if !strings.Contains(said, "outlived the stop's bound") && !strings.Contains(said, "a signal came before the next attempt, which was not made") {
				t.Errorf("neither the log nor a run says the page in flight was stopped at a bound and not tried again\n%s", said)
			}
			for _, r := range runs {
				if r.Status != "interrupted" || r.Pages != 0 {
					t.Errorf("run %d (%s): %s, %d pages (%s), want interrupted with none stored", r.ID, r.Region, r.Status, r.Pages, r.Message)
				}
			}
		})
	}
}

// After a SIGTERM no retry starts, and the log does not say one does: a
// call in flight when the signal came that fails, where a retry would be
// due, ends the run with no "retrying" line.
func TestNoRetryIsAnnouncedAfterASignal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.FailNext(1<<30, 500)
	h.fake.SetLatency(5 * time.Second)
	p := h.start("run", "--once", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	if _, ok := p.wait(cmdTimeout); !ok {
		t.Fatalf("still running after SIGTERM\n%s", p.out)
	}
	if got := h.fake.Requests(); got != 1 {
		t.Errorf("%d calls made, want the one in flight at the signal", got)
	}
	if strings.Contains(p.out.String(), "retrying") {
		t.Errorf("the log announces a retry that the signal stopped:\n%s", p.out)
	}
}
