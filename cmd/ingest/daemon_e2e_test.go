package main

import (
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// TestDaemonTracksAndPrunes checks the daemon's tracking and pruning
// entries, which share the charts' schedule: with --keep, the daemon
// prunes as it starts (and once every --every after); with --track-for, it
// reads the counts of the charts' videos at its tracking slot, paid from
// the stats pool; and it still stops cleanly on SIGTERM. The tracking slot comes once a
// --track-every (at least a minute), near the end of it.
func TestDaemonTracksAndPrunes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	buildDays(t, h, 3)
	start := time.Now()
	dayAgo := start.Add(-24 * time.Hour).UnixMilli()
	db := openDB(t, h.db())
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms < ?`, dayAgo); n == 0 {
		t.Fatal("the built database holds no run older than a day: nothing to prune")
	}
	p := h.start("run", "--every", "1m", "--regions", "GB", "--keep", "1d", "--track-for", "7d", "--track-every", "1m")
	if !waitFor(longTimeout, func() bool { // a prune's work grows with the history
		return queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms < ?`, dayAgo) == 0
	}) {
		t.Fatalf("runs older than --keep 1d still there %s after the daemon started\n%s", longTimeout, p.out)
	}
	tracked := func() int64 {
		return queryInt(t, db, `SELECT count(*) FROM video_stats WHERE at_ms >= ?`, start.UnixMilli())
	}
	if !waitFor(100*time.Second, func() bool { return tracked() > 0 }) {
		t.Fatalf("no video's counts read within 100s of a daemon with --track-every 1m\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	code, ok := p.wait(10 * time.Second)
	if !ok || code != 0 {
		t.Fatalf("daemon after SIGTERM: exited %v, code %d\n%s", ok, code, p.out)
	}
	charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketStats]
	if charged == 0 {
		t.Fatalf("%d video counts read, but the upstream charged no stats units", tracked())
	}
	// A call the signal came during is given back unsent (docs/operations.md,
	// Signals): the ledger keeps its row, marked given back.
	if got := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE op = ? AND pool = 'stats'
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`, ingest.OpBatchGetStats); got != charged {
		t.Errorf("ledger has %d stats units, the upstream charged %d", got, charged)
	}
	if got := tracked(); got > charged*50 {
		t.Errorf("%d video counts read with %d calls of at most 50 ids", got, charged)
	}
}
