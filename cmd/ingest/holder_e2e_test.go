package main

// A database knows which limiter holds its window (docs/operations/growing.md): a run on any other is refused before it spends, naming the
// limiter and the command that moves the window, with the fake upstream's
// charge as the oracle.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// Host A runs on its embedded limiter; its window is carried into Redis
// with `quota seed --ledger a.db` (the documented move); host B runs on
// that Redis; A's cron line still runs without REDIS_URL. Each of A's runs
// is refused (exit 2, naming the Redis and the seed back), so the upstream
// is charged the pool's 40 units at most; the seed back with both hosts'
// ledgers lets A run, still within the 40.
func TestSeededHostRunWithoutRedisIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	onA := h.chargedDefault()
	rs := h.withRedis()
	h.mustRun(0, "quota", "seed", "--ledger", a)
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once")
	shared := h.chargedDefault()
	if shared <= onA {
		t.Fatalf("host B on the seeded Redis spent nothing (%d charged before, %d after)", onA, shared)
	}

	h.set("INGEST_DB", a)
	h.unset("REDIS_URL")
	for range 2 {
		res := h.run("run", "--once")
		if res.code != 2 {
			t.Errorf("host A's run without REDIS_URL: want exit 2, got %s", res)
		}
		for _, want := range []string{"lives in the Redis at " + rs.Addr, "put there by quota seed",
			"`ingest quota seed --ledger DB --ledger PEER_DB... --leaving-redis URL` without REDIS_URL"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("host A's run without REDIS_URL does not say %q:\n%s", want, res)
			}
		}
	}
	if charged := h.chargedDefault(); charged != shared {
		t.Errorf("host A's refused runs spent %d units", charged-shared)
	}

	h.mustRun(0, "quota", "seed", "--ledger", a, "--ledger", b, "--leaving-redis", "redis://"+rs.Addr+"/0")
	h.mustRun(0, "run", "--once")
	charged := h.chargedDefault()
	if charged > 40 {
		t.Errorf("the upstream charged %d units in the window (%d on A, %d with B on Redis), over the pool's 40", charged, onA, shared)
	}
	t.Logf("%d charged on A, %d with B on Redis, %d after A moved back: within 40", onA, shared, charged)
}

// A database whose window lives in its embedded limiter, run with
// REDIS_URL set and no seed, is refused (exit 2, naming the embedded
// limiter and the seed there); the seed moves it, and the run goes on.
func TestEmbeddedWindowRunOnRedisIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	h.mustRun(0, "run", "--once", "--regions", "US")
	before := h.chargedDefault()
	rs := redistest.Start(t)
	if reply, err := redistest.Do(rs.Addr, "CONFIG", "SET", "requirepass", testPassword); err != nil || reply != "+OK" {
		t.Fatalf("CONFIG SET requirepass: %q %v", reply, err)
	}
	h.set("REDIS_URL", redisURL(rs.Addr, testPassword, "0"))
	res := h.mustRun(2, "run", "--once", "--regions", "GB")
	for _, want := range []string{"lives in the embedded limiter in this database", "would spend on the Redis at " + rs.Addr,
		"`ingest quota seed --ledger DB...` with REDIS_URL set"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the run on Redis does not say %q:\n%s", want, res)
		}
	}
	noPasswordPiece(t, res)
	if got := h.chargedDefault(); got != before {
		t.Errorf("the refused run spent %d units", got-before)
	}
	h.mustRun(0, "quota", "seed", "--ledger", h.db())
	h.mustRun(0, "run", "--once", "--regions", "GB")
	if got := h.chargedDefault(); got == before || got > 40 {
		t.Errorf("after the seed the run on Redis brought the charge from %d to %d: want more, within 40", before, got)
	}
	// The record names the Redis by its address alone.
	held := queryString(t, openDB(t, h.db()), `SELECT value FROM ledger_notes WHERE name LIKE 'limiter_holder:%'`)
	if !strings.Contains(held, rs.Addr) {
		t.Errorf("the database's record of its limiter does not name the Redis at %s: %s", rs.Addr, held)
	}
	noPasswordPiece(t, result{stdout: held})
}
