package custody

// What `ingest quota apply` does to the limiter: create a key, carrying
// the calls of the ledgers given, or replace its pools; --new refuses a key
// that was created already.

import (
	"context"
	"fmt"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// Configured is what quota apply needs of the limiter.
type Configured interface {
	Backend() string
	Config(ctx context.Context) ([]quota.PoolConfig, error)
	ApplyConfig(ctx context.Context) ([]quota.ConfigChange, error)
}

// Apply applies this costs file's pools on the embedded limiter, and on
// Redis asks for intent on a key with no configuration (isNew), after
// reading the ledgers of the databases others.
func (r *Rules) Apply(ctx context.Context, l Configured, key string, isNew bool, others []string) ([]quota.ConfigChange, error) {
	if isNew {
		if err := notCreated(ctx, l, key); err != nil {
			return nil, err
		}
	}
	c, ok := l.(creator)
	if !ok {
		return l.ApplyConfig(ctx)
	}
	recs := map[string]ingest.Recalled{}
	for _, path := range others {
		rec, err := r.readLedger(ctx, path, key)
		if err != nil {
			return nil, err
		}
		recs[store.Redact(path)] = rec
	}
	// Not a move of any database's window: --new passes a key whose
	// configuration is already this costs file's, used or not, and
	// carries no call (quota seed does).
	return c.Create(ctx, isNew, recs)
}

// creator is a limiter whose key is created on purpose, from the ledgers
// given (quota.Redis).
type creator interface {
	Create(ctx context.Context, isNew bool, others map[string]ingest.Recalled) ([]quota.ConfigChange, error)
}

// notCreated refuses --new on a quota key whose limiter already holds a
// configuration other than this costs file's: the key was created, so
// replacing its pools is a change made on purpose, without --new. The same
// configuration again is no change, so that a Job that runs apply --new
// twice does no harm.
func notCreated(ctx context.Context, l Configured, key string) error {
	confs, err := l.Config(ctx)
	if err != nil {
		return err
	}
	held := false
	for _, c := range confs {
		held = held || c.Limiter != ""
	}
	var differ []string
	for _, c := range confs {
		if held && c.Limiter != c.Costs {
			differ = append(differ, fmt.Sprintf("pool %s: %s, this costs file %s", c.Pool, quota.Describe(c.Limiter), quota.Describe(c.Costs)))
		}
	}
	if len(differ) == 0 {
		return nil
	}
	return ingest.ConfigErrorf("quota apply --new: quota key %s is not new: the limiter holds its configuration (%s); "+
		"--new creates a key never used and replaces nothing: run `ingest quota apply` without --new to replace its pools on purpose",
		key, strings.Join(differ, "; "))
}

// readLedger reads one database's ledger of the recall span, read-only.
func (r *Rules) readLedger(ctx context.Context, path, key string) (ingest.Recalled, error) {
	if err := store.CheckURL(path); err != nil {
		return ingest.Recalled{}, ingest.ConfigErrorf("--ledger %w", err)
	}
	db, err := r.Open(ctx, path, false)
	if err != nil {
		return ingest.Recalled{}, ingest.ConfigErrorf("--ledger %s: %w", store.Redact(path), err)
	}
	defer db.Close()
	rec, err := db.Ledger.Recall(ctx, key, r.now().Add(-r.Span), r.now())
	if err != nil {
		return rec, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	return rec, nil
}
