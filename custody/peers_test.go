package custody

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/quota"
)

// peers notes on db, as a run's end on Redis copies it, the limiter's list
// of the ledgers that spent: each id's last call at its time.
func peers(t *testing.T, db *Database, seen map[string]time.Time) {
	t.Helper()
	var ls []quota.LedgerSeen
	for id, at := range seen {
		ls = append(ls, quota.LedgerSeen{Ledger: id, Where: "host-" + id, At: at.UnixMilli()})
	}
	b, err := json.Marshal(map[string]any{"at": start.UnixMilli(), "ledgers": ls})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ledger.Note(context.Background(), "ledgers:"+key, string(b)); err != nil {
		t.Fatal(err)
	}
}

// TestAHostLeavingItsPeersIsRefusedUntilGiven: the embedded limiter on a
// database whose Redis peers spent in the window is refused, naming each
// peer and the seed that gives their ledgers; a peer that spent before the
// window is not named; once given, none holds it back.
func TestAHostLeavingItsPeersIsRefusedUntilGiven(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	path, db := database(t)
	self, err := db.Ledger.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ledger.Note(ctx, redisNote+key, RedisHash("redis://:secret@a:6379/0")); err != nil {
		t.Fatal(err)
	}
	peers(t, db, map[string]time.Time{self: start, "p1": start.Add(-time.Hour), "p2": start.Add(-2 * time.Hour), "old": start.Add(-25 * time.Hour)})
	h := host(t, path, "", c)
	pe := refused[*PeersLeftError](t, h.LeftPeers(ctx, db.Ledger, key))
	var named []string
	for _, p := range pe.Peers {
		named = append(named, p.Ledger)
	}
	slices.Sort(named)
	if !slices.Equal(named, []string{"p1", "p2"}) {
		t.Errorf("peers named: %v, want p1 and p2 (this ledger and one before the window left out)", named)
	}
	if msg := pe.Error(); !strings.Contains(msg, "quota seed --ledger DB --ledger PEER_DB") || !strings.Contains(msg, "--forget-peers=") ||
		strings.Contains(msg, "secret") {
		t.Errorf("the refusal names neither the seed nor --forget-peers, or quotes the password:\n%s", msg)
	}
	if err := givePeers(ctx, db.Ledger, key, []string{"p1"}); err != nil {
		t.Fatal(err)
	}
	if pe = refused[*PeersLeftError](t, h.LeftPeers(ctx, db.Ledger, key)); len(pe.Peers) != 1 || pe.Peers[0].Ledger != "p2" {
		t.Errorf("after p1 was given: %+v, want p2 alone", pe.Peers)
	}
	if err := givePeers(ctx, db.Ledger, key, []string{"p2", "p1"}); err != nil {
		t.Fatal(err)
	}
	if err := h.LeftPeers(ctx, db.Ledger, key); err != nil {
		t.Errorf("every peer given: %v", err)
	}
	c.Advance(2 * time.Hour)
	if err := givePeers(ctx, db.Ledger, key, nil); err != nil {
		t.Fatal(err)
	}
}

// TestForgettingNamesOnlyPeersLeft: --forget-peers takes the peers the
// refusal names, each, and no other id; the embedded limiter starts once
// every peer is given or forgotten.
func TestForgettingNamesOnlyPeersLeft(t *testing.T) {
	ctx := context.Background()
	path, db := database(t)
	peers(t, db, map[string]time.Time{"p1": start.Add(-time.Hour), "p2": start.Add(-time.Hour)})
	h := host(t, path, "", clocktest.NewFake(start))
	err := h.forget(ctx, db.Ledger, key, []string{"p3"}, nil)
	if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), "--forget-peers: p3 is not a ledger of a peer") {
		t.Errorf("an id no peer has: %v", err)
	}
	if pe := refused[*PeersLeftError](t, h.forget(ctx, db.Ledger, key, []string{"p1"}, nil)); len(pe.Peers) != 1 || pe.Peers[0].Ledger != "p2" {
		t.Errorf("p1 forgotten: %+v, want p2 left", pe.Peers)
	}
	if err := h.forget(ctx, db.Ledger, key, []string{"p1"}, []string{"p2"}); err != nil {
		t.Errorf("p1 forgotten and p2 given: %v", err)
	}
}

// TestLeavingRedisAsksIt: a seed back to the embedded limiter from a
// database whose window lives in Redis asks that Redis which ledgers spent
// (Learn), refuses another Redis by the hash of the URL it ran with or by
// its address, and without the URL refuses unless told the Redis is gone.
func TestLeavingRedisAsksIt(t *testing.T) {
	const ran = "redis://:pw@a:6379/0"
	for _, tc := range []struct {
		name    string
		noted   bool // the hash of the URL the database ran with is noted
		lv      Leaving
		asked   bool
		refusal string // "" when it goes on
	}{
		{"its URL", true, Leaving{RedisURL: ran}, true, ""},
		{"its address, no hash noted", false, Leaving{RedisURL: "redis://a:6379/0"}, true, ""},
		{"another Redis by the hash", true, Leaving{RedisURL: "redis://:pw@b:6379/0"}, false, "is not the Redis this database's limiter was"},
		{"another Redis by the address", false, Leaving{RedisURL: "redis://b:6379/0"}, false, "is not the Redis this database's window lives in"},
		{"no URL", true, Leaving{}, false, "give its URL with " + LeavingFlag},
		{"gone", true, Leaving{Gone: true}, false, ""},
		{"both", true, Leaving{RedisURL: ran, Gone: true}, false, "give one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := clocktest.NewFake(start)
			path, db := database(t)
			if err := host(t, path, ran, c).HeldHere(ctx, db.Ledger, key); err != nil {
				t.Fatal(err)
			}
			if tc.noted {
				if err := host(t, path, ran, c).NoteRedis(ctx, db.Ledger, key); err != nil {
					t.Fatal(err)
				}
			}
			asked := false
			db.Learn = func(ctx context.Context, raw, quotaKey string) error {
				asked = raw == tc.lv.RedisURL && quotaKey == key
				return nil
			}
			err := host(t, path, "", c).leave(ctx, db, key, tc.lv, nil)
			if asked != tc.asked {
				t.Errorf("asked the Redis: %v, want %v", asked, tc.asked)
			}
			if tc.refusal == "" {
				if err != nil {
					t.Errorf("got %v, want it to go on", err)
				}
				return
			}
			if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), tc.refusal) || strings.Contains(err.Error(), ":pw@") {
				t.Errorf("got %v, want %q and no password", err, tc.refusal)
			}
		})
	}
}

// TestLeavingStopsWhenTheRedisCannotSay: what the Redis left answers is
// the seed's answer: it stops there.
func TestLeavingStopsWhenTheRedisCannotSay(t *testing.T) {
	ctx := context.Background()
	path, db := database(t)
	c := clocktest.NewFake(start)
	if err := host(t, path, "redis://a:6379/0", c).HeldHere(ctx, db.Ledger, key); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("lost its ledgers")
	db.Learn = func(context.Context, string, string) error { return lost }
	if err := host(t, path, "", c).leave(ctx, db, key, Leaving{RedisURL: "redis://a:6379/0"}, nil); !errors.Is(err, lost) {
		t.Errorf("got %v, want the Redis's own error", err)
	}
}

// TestLeavingARedisThatCannotSayIsRefused: the refusal when the Redis left
// cannot say which ledgers spent names the fixes, the quota key and what the
// Redis said, and no password, in the message or beneath it.
func TestLeavingARedisThatCannotSayIsRefused(t *testing.T) {
	const raw = "redis://:pw@a:6379/0"
	said := errors.New("ERR no ledgers at redis://:pw@a:6379/0")
	err := UnknownLedgers(raw, key, said)
	e := refused[*UnknownLedgersError](t, err)
	if e.QuotaKey != key || e.RedisURL != raw {
		t.Errorf("refusal of %q on %q, want %q on %q", e.QuotaKey, e.RedisURL, key, raw)
	}
	for _, want := range []string{LeavingFlag, GoneFlag, "quota key " + key, "ERR no ledgers", "bring it back and run again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), ":pw@") {
		t.Errorf("got %q, want no password", err)
	}
	if errors.Is(err, said) {
		t.Errorf("the refusal wraps what the Redis said; want it a refusal of its own")
	}
}
