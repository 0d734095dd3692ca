package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/redistest"
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
	for gaps := 2; !unlistedAtTheLoss(t, gaps); gaps *= 2 {
		if gaps >= 8 {
			t.Fatalf("with gaps of up to %d runs, A's and B's first runs after the loss never both ended within A's quiet period", gaps)
		}
	}
}

// unlistedAtTheLoss runs the scenario with a gap of gaps times the slowest
// run before the loss, a cron fleet's proportions. The quiet period after
// the loss is the gap A reports since its last call: at least the time
// from its last run's end to its next run's start, counted from that
// start. It reports false, having judged only the ledgers, when A's and
// B's first runs after the loss did not both end within that: a loaded
// machine stretched them past the gap, and the pools may then resume
// before B has run, the known gap of a host whose cadence is longer than
// every refilling host's, which the reserve covers.
func unlistedAtTheLoss(t *testing.T, gaps int) bool {
	h := newHarness(t)
	rs := h.withRedis()
	const limit = 20
	h.tightCosts(limit)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	fleet := cronFleet{h: h}
	fleet.run(a, 0, "US")
	lastA := time.Now()
	fleet.run(b, 0, "GB")
	// the gap, by the clock the limiter measures cadences with
	gapEnd := redisTime(t, rs.Addr).Add(time.Duration(gaps) * fleet.slowest)
	for redisTime(t, rs.Addr).Before(gapEnd) {
		time.Sleep(10 * time.Millisecond)
	}
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	startA := time.Now()
	fleet.run(a, 0, "US,DE,FR,IN,BR,AU,CA")
	first := h.fake.Charged(testKey) - before
	n := len(fleet.ends)
	runs := 1 + fleet.untilResumed(limit, func() { fleet.run(b, 0, "GB,FR,IN") }, func() { fleet.run(a, 0, "US,DE,BR,AU,CA") })
	charged := h.fake.Charged(testKey)
	units := ledgerUnits(t, a, "default") + ledgerUnits(t, b, "default")
	// A's first run after the loss, and B's after it, unless A spent the
	// limit alone and untilResumed ran nobody
	took := fleet.ends[min(n, len(fleet.ends)-1)].Sub(startA)
	quiet := startA.Sub(lastA)
	t.Logf("cron, A's copy does not name B, FLUSHALL, A runs first: %d units before the loss; A's first run after it charged %d; upstream charged %d / %d in %d runs after the loss; ledgers %d; A's and B's first runs after it took %s, A's quiet period at least %s",
		before, first, charged, limit, runs, units, took.Round(time.Millisecond), quiet.Round(time.Millisecond))
	if units != charged {
		t.Fatalf("upstream charged %d, the ledgers hold %d; want them equal", charged, units)
	}
	if took >= quiet {
		return false
	}
	if charged > limit {
		t.Fatalf("upstream charged %d; want at most %d", charged, limit)
	}
	if first != 0 {
		t.Fatalf("A's first run after the loss was charged %d units before B put its calls back", first)
	}
	if charged <= before {
		t.Fatalf("the pools never resumed after both hosts ran: charged %d, as before the loss", charged)
	}
	return true
}

// cronFleet runs the binary as cron hosts sharing one Redis do: `run
// --once` on each host's own database, timed.
type cronFleet struct {
	h       *harness
	begin   time.Time   // the fleet's first run
	ends    []time.Time // each run's
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
	f.ends = append(f.ends, time.Now())
	f.slowest = max(f.slowest, f.ends[len(f.ends)-1].Sub(start))
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

// redisTime reads the clock of the Redis at addr.
func redisTime(t *testing.T, addr string) time.Time {
	t.Helper()
	now, err := redistest.Time(addr)
	if err != nil {
		t.Fatal(err)
	}
	return now
}
