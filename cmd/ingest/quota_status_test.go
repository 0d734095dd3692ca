package main

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
)

// TestStatusText: quota show's lines of a Redis limiter after its pools:
// each ledger it knows, then, when it lost data, what it waits for.
func TestStatusText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	ledgers := []quota.LedgerSeen{{Ledger: "L1", Mark: "m1", At: at.UnixMilli(), Where: "a:/db"}}
	waiting := []ingest.PoolState{{Pool: "default", WaitUntil: at.Add(time.Hour)}, {Pool: "search"}}
	for _, tc := range []struct {
		name string
		st   quota.Status
		want string
	}{
		{"not recovering", quota.Status{Ledgers: ledgers, Pools: []ingest.PoolState{{Pool: "default"}}},
			"ledger L1 at a:/db: last call m1 at 2026-11-23T08:00:00Z\n"},
		{"nobody can vouch", quota.Status{Pools: waiting},
			"recovering from a data loss: metered calls wait (default until 2026-11-23T09:00:00Z)\n" +
				"  no ledger's copy could tell which ledgers spent: the wait ends with time, or with `ingest quota restore --ledger DB...`\n"},
		{"waiting for ledgers", quota.Status{Ledgers: ledgers, Pools: waiting, Need: []string{"L1", "L2"}},
			"ledger L1 at a:/db: last call m1 at 2026-11-23T08:00:00Z\n" +
				"recovering from a data loss: metered calls wait (default until 2026-11-23T09:00:00Z)\n" +
				"  waiting for the ledgers: L1 (a:/db), L2; put back: none yet\n"},
	} {
		if got := statusText(tc.st); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
