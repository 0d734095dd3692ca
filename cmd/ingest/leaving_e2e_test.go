package main

// A host leaving a shared Redis key learns every peer that spent in the
// window from the limiter it leaves, not only those it saw
// (docs/operations/growing.md), with the fake upstream's charge as the
// oracle.

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// Host A runs on a Redis key and stops: its last contact. Host B first
// spends on the key after that, so no list A holds names B. A leaves by
// the documented move, `quota seed` without REDIS_URL: without the URL of
// the Redis it leaves, the seed is refused naming --leaving-redis; with the
// URL of another Redis, refused; with that Redis silent, refused naming
// --leaving-redis-gone; with the right one, refused naming B's ledger, and
// A's runs after are refused too, so nothing of B's is spent again. Given
// B's ledger, the move succeeds and the charge stays within the pool's 40.
// No output holds a piece of the password.
func TestLeavingHostLearnsAPeerThatFirstSpentAfterIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	rs := redistest.Start(t)
	if reply, err := redistest.Do(rs.Addr, "CONFIG", "SET", "requirepass", testPassword); err != nil || reply != "+OK" {
		t.Fatalf("CONFIG SET requirepass: %q %v", reply, err)
	}
	url := redisURL(rs.Addr, testPassword, "0")
	h.set("REDIS_URL", url)
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	onA := h.chargedDefault()
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once", "--regions", "DE,FR,IN,BR")
	shared := h.chargedDefault()
	if shared <= onA {
		t.Fatalf("host B spent nothing on the shared key (%d charged before it, %d after)", onA, shared)
	}
	peer := queryString(t, openDB(t, b), `SELECT value FROM ledger_notes WHERE name = 'ledger_id'`)

	h.set("INGEST_DB", a)
	h.unset("REDIS_URL")
	refused := func(res result, wants ...string) {
		t.Helper()
		if res.code != 2 {
			t.Errorf("want exit 2, got %s", res)
		}
		for _, want := range wants {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, res)
			}
		}
		noPasswordPiece(t, res)
	}
	refused(h.run("quota", "seed", "--ledger", a),
		"--leaving-redis / INGEST_QUOTA_SEED_LEAVING_REDIS", "--leaving-redis-gone", "lives in the Redis at "+rs.Addr)
	other := redistest.Start(t)
	refused(h.run("quota", "seed", "--ledger", a, "--leaving-redis", redisURL(other.Addr, testPassword, "0")),
		"--leaving-redis / INGEST_QUOTA_SEED_LEAVING_REDIS: redis://", "is not the Redis this database's limiter was")
	if err := rs.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	res := h.run("quota", "seed", "--ledger", a, "--leaving-redis", url)
	if err := rs.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	refused(res, "cannot say which ledgers spent in the window", "--leaving-redis-gone")
	refused(h.run("quota", "seed", "--ledger", a, "--leaving-redis", url),
		"shared with other hosts that spent in the window (ledger "+peer+" at ", "--forget-peers="+peer)
	refused(h.run("quota", "seed", "--ledger", a, "--leaving-redis", url, "--forget-peers=not-a-peer"),
		"--forget-peers: not-a-peer is not a ledger of a peer")
	for range 2 {
		if res := h.run("run", "--once"); res.code != 2 {
			t.Errorf("host A's run after the refused seeds: want exit 2, got %s", res)
		}
	}
	if charged := h.chargedDefault(); charged > 40 {
		t.Errorf("host A spent host B's calls of the window again: the upstream charged %d units (%d by A, %d with B), over the pool's 40",
			charged, onA, shared)
	}

	h.mustRun(0, "quota", "seed", "--ledger", a, "--ledger", b, "--leaving-redis", url)
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	charged := h.chargedDefault()
	if charged > 40 {
		t.Errorf("after the seed from both ledgers the upstream charged %d units, over the pool's 40", charged)
	}
	if charged == shared {
		t.Errorf("host A's runs after the move spent nothing: want the rest of the pool spent")
	}
	t.Logf("%d charged by A, %d with B, %d after A left with B's ledger, of 40", onA, shared, charged)
}

// Hosts A and B spend on a Redis key; the Redis then restarts empty (no
// persistence). A leaving it cannot learn from it who spent: the seed with
// --leaving-redis is refused naming --leaving-redis-gone, since an empty
// list would pass for "nobody else"; with --leaving-redis-gone and every
// host's ledger, the move succeeds and the charge stays within the 40.
func TestLeavingARedisThatLostItsDataNeedsTheWord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	rs := h.withRedis()
	url := h.env["REDIS_URL"]
	a, b := filepath.Join(h.dir, "a.db"), filepath.Join(h.dir, "b.db")
	h.set("INGEST_DB", a)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	h.set("INGEST_DB", b)
	h.mustRun(0, "run", "--once", "--regions", "DE,FR,IN,BR")
	shared := h.chargedDefault()
	self := queryString(t, openDB(t, a), `SELECT value FROM ledger_notes WHERE name = 'ledger_id'`)
	rs.Restart(t)

	h.set("INGEST_DB", a)
	h.unset("REDIS_URL")
	res := h.mustRun(2, "quota", "seed", "--ledger", a, "--leaving-redis", url)
	for _, want := range []string{"lost data", "does not list ledger " + self, "--leaving-redis-gone"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the seed from a Redis that lost its data does not say %q:\n%s", want, res)
		}
	}
	h.mustRun(2, "run", "--once")
	if got := h.chargedDefault(); got != shared {
		t.Errorf("the refused seed's run spent %d units", got-shared)
	}
	h.mustRun(2, "quota", "seed", "--ledger", a, "--leaving-redis", url, "--leaving-redis-gone")
	h.mustRun(0, "quota", "seed", "--ledger", a, "--ledger", b, "--leaving-redis-gone")
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	if charged := h.chargedDefault(); charged > 40 || charged == shared {
		t.Errorf("after the seed from both ledgers the upstream charged %d units (%d before): want more, within the pool's 40", charged, shared)
	} else {
		t.Logf("%d charged on Redis, %d after A left it, of 40", shared, charged)
	}
}
