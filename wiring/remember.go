package wiring

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// keepReads bounds how long a server keeps the ledger's reads for its
// reports while the ledger's stamp stays the same (report.Remembered).
const keepReads = time.Minute

// remembered is src for a server that builds its report on each request:
// its ledger reads kept while db's ledger stays the same.
func remembered(db *store.DB, src report.Sources) report.Sources {
	if db == nil || src.NoDatabase {
		return src
	}
	stamp := ledgerStamp(db)
	src.DB = &report.Remembered{Store: src.DB, Keep: keepReads, Stamp: stamp}
	if b := ""; src.Limiter != nil {
		if b = src.Limiter.Backend(); b == "sqlite" || b == "postgres" { // the embedded limiter: its log beside the ledger
			key := src.QuotaKey
			src.Limiter = &keptState{StateReader: src.Limiter, stamp: func(ctx context.Context) (string, error) { return stamp(ctx, key) }}
		}
	}
	return src
}

// ledgerStamp reads what moves when quotaKey's ledger gains a call or
// gives one back: its latest call's time (by the ledger's index on it) and
// the calls given back. A call stamped before the latest one waits for
// keepReads.
func ledgerStamp(db *store.DB) func(ctx context.Context, quotaKey string) (string, error) {
	return func(ctx context.Context, quotaKey string) (string, error) {
		var at, back int64
		err := db.Reader().QueryRowContext(ctx, `SELECT coalesce((SELECT max(at_ms) FROM ledger WHERE quota_key = ?1), 0),
  (SELECT count(*) FROM ledger_given_back WHERE quota_key = ?1)`, quotaKey).Scan(&at, &back)
		if err != nil {
			return "", fmt.Errorf("read the ledger's stamp: %w", err)
		}
		return fmt.Sprintf("%d/%d", at, back), nil
	}
}

// keepState bounds how long a server keeps the embedded limiter's state
// while the ledger's stamp stays the same: the window slides meanwhile.
const keepState = 5 * time.Second

// keptState is a limiter's state kept while the ledger's stamp stays the
// same, for at most keepState.
type keptState struct {
	report.StateReader
	stamp func(context.Context) (string, error)

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
	if k.states == nil || key != k.key || time.Since(k.at) > keepState {
		st, err := k.StateReader.State(ctx)
		if err != nil {
			return nil, err
		}
		k.states, k.key, k.at = st, key, time.Now()
	}
	return slices.Clone(k.states), nil
}
