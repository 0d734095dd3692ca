package custody

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/quota"
)

// refilling is an embedded limiter as quota seed sees it: it takes each
// call once.
type refilling struct{ calls []string }

func (refilling) Backend() string { return "sqlite" }

func (r *refilling) Refill(_ context.Context, rec ingest.Recalled) (int, error) {
	n := 0
	for _, c := range rec.Calls {
		if !slices.Contains(r.calls, c.ID) {
			r.calls, n = append(r.calls, c.ID), n+1
		}
	}
	return n, nil
}

// seeding is a Redis limiter as quota seed and restore see it: each
// host's ledger under its own id.
type seeding struct{ ledgers []string }

func (seeding) Backend() string { return "redis" }

func (s *seeding) Seed(_ context.Context, ls []quota.HostLedger) (int, error) {
	n := 0
	for _, l := range ls {
		s.ledgers, n = append(s.ledgers, l.ID), n+len(l.Calls.Calls)
	}
	return n, nil
}

func (s *seeding) Restore(ctx context.Context, ls []quota.HostLedger) (int, error) {
	return s.Seed(ctx, ls)
}

func (s *seeding) Status(context.Context) (quota.Status, error) { return quota.Status{}, nil }

// TestSeedGivesTheEmbeddedLimiterEveryLedger: a seed back to the embedded
// limiter takes the window's calls of every ledger given, each once, and
// then the peers given no longer hold the host back and the window is
// recorded as moved here.
func TestSeedGivesTheEmbeddedLimiterEveryLedger(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	path, db := database(t)
	peerPath, peer := database(t)
	peerID, err := peer.Ledger.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	record(t, db.Ledger, call("mine", start.Add(-time.Hour), 1), call("shared", start.Add(-time.Hour), 1))
	record(t, peer.Ledger, call("theirs", start.Add(-time.Hour), 1), call("shared", start.Add(-time.Hour), 1))
	peers(t, db, map[string]time.Time{peerID: start.Add(-time.Hour)})
	if err := host(t, path, "redis://a:6379/0", c).HeldHere(ctx, db.Ledger, key); err != nil {
		t.Fatal(err)
	}
	h := host(t, path, "", c)
	if err := h.LeftPeers(ctx, db.Ledger, key); err == nil {
		t.Fatal("before the seed, the peer does not hold the host back")
	}
	l := &refilling{}
	calls, ledgers, err := h.Seed(ctx, l, key, []string{path, peerPath}, Leaving{Gone: true})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || ledgers != 2 {
		t.Errorf("seeded %d calls from %d ledgers, want 3 from 2", calls, ledgers)
	}
	if err := h.LeftPeers(ctx, db.Ledger, key); err != nil {
		t.Errorf("after the seed: %v", err)
	}
	if err := h.HeldHere(ctx, db.Ledger, key); err != nil {
		t.Errorf("a run after the seed: %v", err)
	}
}

// TestSeedOnRedisRecordsTheMoveOnEveryLedger: a seed into Redis gives it
// each ledger and records on each database that its window lives there.
func TestSeedOnRedisRecordsTheMoveOnEveryLedger(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	path, db := database(t)
	peerPath, peer := database(t)
	for _, d := range []*Database{db, peer} {
		if err := host(t, path, "", c).HeldHere(ctx, d.Ledger, key); err != nil {
			t.Fatal(err)
		}
	}
	l := &seeding{}
	h := host(t, path, "redis://a:6379/0", c)
	if _, ledgers, err := h.Seed(ctx, l, key, []string{path, peerPath}, Leaving{}); err != nil || ledgers != 2 || len(l.ledgers) != 2 {
		t.Fatalf("got %d ledgers (%v), %v; want 2", ledgers, l.ledgers, err)
	}
	for _, d := range []*Database{db, peer} {
		if err := h.HeldHere(ctx, d.Ledger, key); err != nil {
			t.Errorf("a run on Redis after the seed: %v", err)
		}
	}
}

// TestRestoreAndSeedRefuseALimiterThatCannotTakeThem: restore is Redis's
// alone, and a limiter that takes no ledger calls is refused by seed,
// each a configuration error.
func TestRestoreAndSeedRefuseALimiterThatCannotTakeThem(t *testing.T) {
	ctx := context.Background()
	path, _ := database(t)
	h := host(t, path, "", clocktest.NewFake(start))
	_, err := h.Restore(ctx, &refilling{}, key, nil, false)
	if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), "set --redis / REDIS_URL") {
		t.Errorf("restore on the embedded limiter: %v", err)
	}
	_, _, err = h.Seed(ctx, seeded("memory"), key, nil, Leaving{})
	if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), "takes no ledger calls") {
		t.Errorf("seed on a limiter that takes none: %v", err)
	}
	if _, err = h.Restore(ctx, &seeding{}, key, []string{"postgres://"}, false); err == nil {
		t.Error("restore from a --ledger that is no URL nor file: no error")
	}
}

// seeded is a limiter that takes no ledger calls.
type seeded string

func (s seeded) Backend() string { return string(s) }
