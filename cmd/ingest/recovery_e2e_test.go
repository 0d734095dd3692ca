package main

import (
	"path/filepath"
	"testing"

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
	runOn := func(db, regions string) {
		t.Helper()
		h.set("INGEST_DB", db)
		h.mustRun(0, "run", "--once", "--regions", regions)
	}
	runOn(a, "US")
	runOn(b, "GB")
	before := h.fake.Charged(testKey)
	if r, err := redistest.Do(rs.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	runOn(a, "US,DE,FR,IN,BR,AU,CA")
	first := h.fake.Charged(testKey) - before
	runs := 1
	for ; h.fake.Charged(testKey) < limit && runs < 12; runs += 2 {
		runOn(b, "GB,FR,IN")
		runOn(a, "US,DE,BR,AU,CA")
	}
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
