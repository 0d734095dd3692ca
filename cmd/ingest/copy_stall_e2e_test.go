package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/ledger"
)

// A live copy's worker stopped (SIGSTOP) past its lease on its source lets
// the source's daemon start, as a crashed one would; once the copy's
// worker goes on (SIGCONT), it makes no call while the source's daemon
// runs beside it, and says why: its lease lapsed, so it renews it and
// looks, as at its start, for a worker on the source.
func TestACopysWorkerStalledPastItsLeaseSpendsNothingBesideItsSource(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src, target, p := liveCopyBesideADaemon(t, h, "US,GB")
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the source's daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	h.set("INGEST_DB", target)
	c := h.start("run", "--every", "1m", "--pace=false", "--regions", "DE,FR")
	if !waitFor(cmdTimeout, func() bool { return strings.Contains(c.out.String(), "start: caught up") || c.exited() }) {
		t.Fatalf("the copy's daemon did not catch up:\n%s", c.out)
	}
	c.signal(t, syscall.SIGSTOP)
	time.Sleep(ledger.WorkerTTL + 10*time.Second) // the stall is the fault: past the lease's span
	h.set("INGEST_DB", src)
	again := h.start("run", "--every", "1m", "--pace=false", "--regions", "US,GB")
	if !waitFor(cmdTimeout, func() bool { return strings.Contains(again.out.String(), "start: caught up") || again.exited() }) {
		c.signal(t, syscall.SIGCONT)
		t.Fatalf("the source's daemon did not start while its copy's worker was stalled past its lease:\n%s", again.out)
	}
	resumed := time.Now()
	c.signal(t, syscall.SIGCONT)
	copyDB := openDB(t, target)
	spent := func() int64 {
		return queryInt(t, copyDB, `SELECT count(*) FROM ledger l WHERE l.at_ms >= ? AND NOT EXISTS
			(SELECT 1 FROM ledger_given_back g WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)`, resumed.UnixMilli())
	}
	const said = "this worker stalled past its lease on its source, and this database is a copy of " // then the source's worker
	waitFor(cmdTimeout, func() bool { return strings.Contains(c.out.String(), said) || spent() > 0 })
	if n := spent(); n > 0 {
		t.Errorf("the copy's worker made %d calls after it went on, beside the source's daemon", n)
	}
	if !strings.Contains(c.out.String(), said) {
		t.Errorf("the copy's worker does not say it stalled past its lease while the source's daemon runs (%q):\n%s", said, c.out)
	}
	for _, q := range []*proc{again, c} {
		q.signal(t, syscall.SIGTERM)
		q.wait(cmdTimeout)
	}
}
