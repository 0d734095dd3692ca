package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/redistest"
)

// TestCronHostUnlistedAtTheLoss: issue 31's first row with the binary. Two
// cron hosts ran `run --once` once each, B's first run after A's last copy
// of the limiter's ledgers, so A's copy does not name B; then Redis loses
// everything. A runs first, with every region: it finds the loss and puts
// its calls back, but B's calls are back only when B runs. The pools must
// not resume before B has, so that the upstream is never charged more than
// the limit (no reserve), and each ledger says what the upstream charged.
func TestCronHostUnlistedAtTheLoss(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 20
	h.tightCosts(limit)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	fleet := cronFleet{h: h}
	fleet.run(a, 0, "US")
	fleet.run(b, 0, "GB")
	// The quiet period after the loss is the gap A reports since its last
	// call. Back to back, that gap would be B's one run, no longer than
	// A's next on a loaded machine: the period would end while A runs,
	// before B has run. A cron fleet's runs are short beside its gaps, and
	// the test keeps that proportion, whatever the machine's load.
	time.Sleep(2 * fleet.slowest)
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	fleet.run(a, 0, "US,DE,FR,IN,BR,AU,CA")
	first := h.fake.Charged(testKey) - before
	runs := 1 + fleet.untilResumed(limit, func() { fleet.run(b, 0, "GB,FR,IN") }, func() { fleet.run(a, 0, "US,DE,BR,AU,CA") })
	charged := h.fake.Charged(testKey)
	units := ledgerUnits(t, a, "default") + ledgerUnits(t, b, "default")
	t.Logf("cron, A's copy does not name B, FLUSHALL, A runs first: %d units before the loss; A's first run after it charged %d; upstream charged %d / %d in %d runs after the loss; ledgers %d",
		before, first, charged, limit, runs, units)
	if charged > limit || units != charged {
		t.Fatalf("upstream charged %d, the ledgers hold %d; want at most %d and equal", charged, units, limit)
	}
	if first != 0 {
		t.Fatalf("A's first run after the loss was charged %d units before B put its calls back", first)
	}
	if charged <= before {
		t.Fatalf("the pools never resumed after both hosts ran: charged %d, as before the loss", charged)
	}
}

// cronFleet runs the binary as cron hosts sharing one Redis do: `run
// --once` on each host's own database, timed.
type cronFleet struct {
	h       *harness
	begin   time.Time // the fleet's first run
	slowest time.Duration
}

func (f *cronFleet) run(db string, want int, regions string) result {
	f.h.t.Helper()
	f.h.set("INGEST_DB", db)
	start := time.Now()
	if f.begin.IsZero() {
		f.begin = start
	}
	res := f.h.mustRun(want, "run", "--once", "--regions", regions)
	f.slowest = max(f.slowest, time.Since(start))
	return res
}

// untilResumed runs the last host to put its calls back after a loss,
// then the first, in turns until the upstream has charged limit, and
// returns how many runs it took. A recovery's quiet period is the longest
// cadence a host reported, a gap between its calls or since its last one,
// never longer than the fleet has run by then: the turns stop at the
// first that begins after that much time again, whose runs find the pools
// open unless the recovery never ends. Bounded by time, not by a count of
// runs, whose length a loaded machine stretches unevenly.
func (f *cronFleet) untilResumed(limit int64, last, first func()) int {
	f.h.t.Helper()
	var quietBy time.Time
	runs := 0
	for f.h.fake.Charged(testKey) < limit {
		late := !quietBy.IsZero() && time.Now().After(quietBy)
		last()
		if quietBy.IsZero() {
			quietBy = time.Now().Add(time.Since(f.begin))
		}
		first()
		runs += 2
		if late {
			break
		}
	}
	return runs
}
