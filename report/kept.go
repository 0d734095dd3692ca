package report

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
)

// keepReads bounds how long a server keeps the ledger's reads for its
// reports while the ledger's stamp stays the same (Remembered).
const keepReads = time.Minute

// Kept is src for a server that builds its report on each request: its
// ledger reads kept while led stays the same, and, when follow says so
// (false only for a benchmark's baseline: the window's calls and today's
// units read whole after each change), its quota key's calls read in
// write order, so that the first report after the ledger changes reads
// what changed, not the window. src is as it is without a database (led
// nil).
func Kept(src Sources, led *ledger.Ledger, follow bool, clock ingest.Clock) Sources {
	if led == nil || src.NoDatabase {
		return src
	}
	stamp := ledgerStamp(led)
	if follow {
		src.DB = followed{Store: src.DB, key: src.QuotaKey, follow: led.Follow(src.QuotaKey)}
	}
	src.DB = &Remembered{Store: src.DB, Keep: keepReads, Stamp: stamp, Clock: clock}
	if b := ""; src.Limiter != nil {
		if b = src.Limiter.Backend(); b == "sqlite" || b == "postgres" { // the embedded limiter: its log beside the ledger
			key := src.QuotaKey
			src.Limiter = &keptState{StateReader: src.Limiter, clock: clock, stamp: func(ctx context.Context) (string, error) { return stamp(ctx, key) }}
		}
	}
	return src
}

// followed is a report's store whose calls of its quota key are read in
// write order (ledger.Ledger.Follow).
type followed struct {
	Store
	key    string
	follow func(ctx context.Context, since time.Time) ([]ingest.Call, error)
}

func (f followed) Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error) {
	if quotaKey != f.key {
		return f.Store.Calls(ctx, quotaKey, since)
	}
	return f.follow(ctx, since)
}

// ledgerStamp reads what moves whenever quotaKey's ledger is written: its
// counter of writes (a call, a call's rows again, a call given back).
func ledgerStamp(led *ledger.Ledger) func(ctx context.Context, quotaKey string) (string, error) {
	return func(ctx context.Context, quotaKey string) (string, error) {
		n, err := led.Written(ctx, quotaKey)
		if err != nil {
			return "", fmt.Errorf("read the ledger's stamp: %w", err)
		}
		return fmt.Sprint(n), nil
	}
}

// keepState bounds how long a server keeps the embedded limiter's state
// while the ledger's stamp stays the same: the window slides meanwhile.
const keepState = 5 * time.Second

// keptState is a limiter's state kept while the ledger's stamp stays the
// same, for at most keepState.
type keptState struct {
	StateReader
	stamp func(context.Context) (string, error)
	clock ingest.Clock

	mu     sync.Mutex
	at     time.Time
	key    string
	states []ingest.PoolState
}

func (k *keptState) State(ctx context.Context) ([]ingest.PoolState, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, err := k.stamp(ctx)
	if err != nil {
		return nil, err
	}
	now := k.clock.Now()
	if k.states == nil || key != k.key || now.Sub(k.at) > keepState {
		st, err := k.StateReader.State(ctx)
		if err != nil {
			return nil, err
		}
		k.states, k.key, k.at = st, key, now
	}
	return slices.Clone(k.states), nil
}
