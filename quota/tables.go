package quota

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// Tables is where the embedded limiter keeps its log: the store's
// database, whose drivers hold the SQL. Each method runs in the
// transaction Turns gave (nil: outside one). The store implements every
// role on one value (ledger.Ledger.Tables).
type Tables struct {
	Turns  Turns
	Clocks ClockRows
	Log    LogRows
	Pools  PoolRows
	Leases LeaseRows
	Ledger LedgerRows
}

// Turns is how decisions on one quota key take turns, and the database's
// clock.
type Turns interface {
	// Decide begins a transaction in which no other decision on quotaKey
	// runs until it ends; an idle one ends after timeout.
	Decide(ctx context.Context, quotaKey string, timeout time.Duration) (*sql.Tx, error)
	// Read begins a read-only transaction, one snapshot throughout.
	Read(ctx context.Context) (*sql.Tx, error)
	// Clock is the database's clock in Unix ms: the server's, or this
	// host's for a file.
	Clock(ctx context.Context, tx *sql.Tx) (int64, error)
	// Down says whether err means the database did not answer in time,
	// not that it answered with an error.
	Down(ctx context.Context, err error) bool
}

// ClockRows are the quota_clock rows: a quota key's last decision and
// sequence, and the rows beside it (clock.go).
type ClockRows interface {
	// ClockRow returns a row's two numbers, zeros when there is none.
	ClockRow(ctx context.Context, tx *sql.Tx, key string) (ms, seq int64, err error)
	SetClockRow(ctx context.Context, tx *sql.Tx, key string, ms, seq int64) error
	// Newest is the time of the quota key's newest log entry, 0 for none.
	Newest(ctx context.Context, tx *sql.Tx, quotaKey string) (int64, error)
}

// LogRows are the quota_log entries: one per admitted call and pool.
type LogRows interface {
	// Trim deletes a pool's entries at or before keep.
	Trim(ctx context.Context, tx *sql.Tx, quotaKey, pool string, keep int64) error
	// Used sums a pool's entries after keep: those after horizon, and
	// from dayStart on when it is not zero. With ledger, the ledger's
	// charges the log lacks (Missing) count as entries too.
	Used(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, dayStart, keep int64, ledger bool) (used, usedDay int64, err error)
	// Reaching is the time of the entry after horizon whose running sum,
	// oldest first, reaches need: 0 when none does. With ledger, as Used.
	Reaching(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, need int64, ledger bool) (int64, error)
	// Add logs an entry unless its id is there; it says whether it was new.
	Add(ctx context.Context, tx *sql.Tx, quotaKey, pool, id string, at, units int64) (bool, error)
	// Drop deletes a call's entries in every pool.
	Drop(ctx context.Context, quotaKey, id string) error
}

// LedgerRows are the ledger beside the log, in the same database.
type LedgerRows interface {
	// Missing is what the ledger holds that the log lacks: its calls
	// from since on written after the write number after (-1: every
	// call, those written before the ledger numbered its writes too),
	// each with the charges the log has not (given back ones left out),
	// and its blocks in force after since.
	Missing(ctx context.Context, tx *sql.Tx, quotaKey string, since, after int64) (ingest.Recalled, error)
	// Written is the ledger's write number: every call written before
	// the transaction read it is numbered at most it, every later one
	// above it.
	Written(ctx context.Context, tx *sql.Tx, quotaKey string) (int64, error)
}

// PoolRows are a pool's stored settings (quota_config, "" for none) and
// its block (quota_block: its end when after now, else 0).
type PoolRows interface {
	Conf(ctx context.Context, tx *sql.Tx, quotaKey, pool string) (string, error)
	// SetConf stores the settings, over what is there when replace is set.
	SetConf(ctx context.Context, tx *sql.Tx, quotaKey, pool, conf string, replace bool) error
	Blocked(ctx context.Context, tx *sql.Tx, quotaKey, pool string, now int64) (int64, error)
	// Block blocks the pool until until, unless it is blocked longer.
	Block(ctx context.Context, tx *sql.Tx, quotaKey, pool string, until int64) error
}

// LeaseRows are the locks table: a lease per name, held by a token until
// it expires (Unix ms of Turns.Clock). Take succeeds when the lease is
// free or expired at now; Renew while token holds it.
type LeaseRows interface {
	Take(ctx context.Context, name, token string, now, expires int64) (bool, error)
	Renew(ctx context.Context, name, token string, expires int64) (bool, error)
	Release(ctx context.Context, name, token string) error
}

// check names the first role left out.
func (t Tables) check() error {
	for _, r := range []struct {
		name string
		ok   bool
	}{{"Turns", t.Turns != nil}, {"Clocks", t.Clocks != nil}, {"Log", t.Log != nil}, {"Pools", t.Pools != nil}, {"Leases", t.Leases != nil},
		{"Ledger", t.Ledger != nil}} {
		if !r.ok {
			return fmt.Errorf("the tables' %s is required (quota.Tables: wiring.Tables of ledger.Ledger.Tables)", r.name)
		}
	}
	return nil
}
