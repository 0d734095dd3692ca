package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/quota"
)

func TestCheckFindsAMoveOffRedisThatLeftAPeer(t *testing.T) {
	h := history(hourly(24, 1), nil, 5)
	at := t0.Add(23*time.Hour + 30*time.Minute)
	refused := func(ids ...string) error {
		var ps []quota.LedgerSeen
		for _, id := range ids {
			ps = append(ps, quota.LedgerSeen{Ledger: id})
		}
		return &ingest.ConfigError{Err: &custody.PeersLeftError{Key: "k", Redis: "r", Peers: ps}}
	}
	good := Leave{Stopped: at, Peer: "L2", Alone: refused("L3", "L2"), Look: Look{At: at, Used: map[string]int64{"default": 120}}}
	h.Leaving = &good
	if f := checkLeftRedis(h); len(f) != 0 {
		t.Fatalf("refused naming the peer, then moved counting the window's 24 passes: %q", f)
	}
	for name, alone := range map[string]error{
		"moved":             nil,
		"refused otherwise": errors.New("database is locked"),
		"named another":     refused("L3"),
	} {
		lv := good
		lv.Alone, h.Leaving = alone, &lv
		f := checkLeftRedis(h)
		if len(f) != 1 || !strings.Contains(f[0], "at 2026-10-25T23:30:00Z, the daemon stopped at the instant a host new to the key spent, the move off Redis with the daemon's ledger alone and the Redis gone was not refused naming that host's ledger L2") {
			t.Errorf("%s: %q", name, f)
		}
	}
	for used, want := range map[int64]string{
		100: "the embedded limiter counted 100 units of default in its window; the upstream charged 120, the ledgers kept 120", // a peer's calls lost
		240: "the embedded limiter counted 240 units of default in its window; the upstream charged 120, the ledgers kept 120", // each counted twice
	} {
		lv := good
		lv.Look = Look{At: at, Used: map[string]int64{"default": used}}
		h.Leaving = &lv
		if f := checkLeftRedis(h); len(f) != 1 || !strings.Contains(f[0], want) {
			t.Errorf("counted %d: %q", used, f)
		}
	}
	lv := good
	lv.Start, h.Leaving = errors.New("exit 2"), &lv
	if f := checkLeftRedis(h); len(f) != 1 || !strings.Contains(f[0], "the host's first run on the embedded limiter failed: exit 2") {
		t.Errorf("the run after the move refused: %q", f)
	}
	lv = good
	lv.Both, h.Leaving = errors.New("refused"), &lv
	if f := checkLeftRedis(h); len(f) != 1 || !strings.Contains(f[0], "the move off Redis with every host's ledger failed: refused") {
		t.Errorf("the move with both ledgers refused: %q", f)
	}
}
