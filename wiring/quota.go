package wiring

// What `ingest quota apply` and `quota restore` do to the limiter: create
// a key or replace its pools, and give it back the calls of the ledgers.

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// ConfigLimiter is what quota show and apply need of the limiter.
type ConfigLimiter interface {
	Backend() string
	Config(ctx context.Context) ([]quota.PoolConfig, error)
	ApplyConfig(ctx context.Context) ([]quota.ConfigChange, error)
}

// Apply applies this costs file's pools on the embedded limiter, and on
// Redis asks for intent on a key with no configuration (isNew), after
// reading the ledgers of the databases others.
func (h *Host) Apply(ctx context.Context, l ConfigLimiter, key string, isNew bool, others []string) ([]quota.ConfigChange, error) {
	if isNew {
		if err := notCreated(ctx, l, key); err != nil {
			return nil, err
		}
	}
	r, ok := l.(*quota.Redis)
	if !ok {
		return l.ApplyConfig(ctx)
	}
	recs := map[string]ingest.Recalled{}
	for _, path := range others {
		rec, err := h.ReadLedger(ctx, path, key)
		if err != nil {
			return nil, err
		}
		recs[store.Redact(path)] = rec
	}
	// Not a move of any database's window: --new passes a key whose
	// configuration is already this costs file's, used or not, and
	// carries no call (quota seed does).
	return r.Create(ctx, isNew, recs)
}

// notCreated refuses --new on a quota key whose limiter already holds a
// configuration other than this costs file's: the key was created, so
// replacing its pools is a change made on purpose, without --new. The same
// configuration again is no change, so that a Job that runs apply --new
// twice does no harm.
func notCreated(ctx context.Context, l ConfigLimiter, key string) error {
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
	return configErrorf("quota apply --new: quota key %s is not new: the limiter holds its configuration (%s); "+
		"--new creates a key never used and replaces nothing: run `ingest quota apply` without --new to replace its pools on purpose",
		key, strings.Join(differ, "; "))
}

// Restore gives a Redis limiter back the calls of key in the ledgers of
// the databases paths (custody.Rules.Restore).
func (h *Host) Restore(ctx context.Context, l ConfigLimiter, key string, paths []string) (calls, ledgers int, err error) {
	return h.rules().Restore(ctx, l, key, paths)
}

// ReadLedger reads one database's ledger of the recall span, read-only.
func (h *Host) ReadLedger(ctx context.Context, path, key string) (ingest.Recalled, error) {
	if err := store.CheckURL(path); err != nil {
		return ingest.Recalled{}, configErrorf("--ledger %w", err)
	}
	db, err := OpenExisting(ctx, path)
	if err != nil {
		return ingest.Recalled{}, configErrorf("--ledger %s: %w", store.Redact(path), err)
	}
	defer db.Close()
	rec, err := db.Ledger.Recall(ctx, key, h.now().Add(-h.Costs.Span()), h.now())
	if err != nil {
		return rec, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	return rec, nil
}

// StatusText is a Redis limiter's status as quota show prints it after the
// pools: each ledger the limiter knows (the database that spent, where it
// was last seen, its last admitted call), then, when the limiter lost
// data, what it waits for.
func StatusText(st quota.Status) string {
	var b strings.Builder
	for _, l := range st.Ledgers {
		fmt.Fprintf(&b, "ledger %s at %s: last call %s at %s\n", l.Ledger, l.Where, l.Mark,
			time.UnixMilli(l.At).UTC().Format(time.RFC3339))
	}
	b.WriteString(recovery(st))
	return b.String()
}

// recovery says what a limiter that lost data waits for; "" when it waits
// for nothing.
func recovery(st quota.Status) string {
	var waiting []string
	for _, p := range st.Pools {
		if !p.WaitUntil.IsZero() {
			waiting = append(waiting, fmt.Sprintf("%s until %s", p.Pool, p.WaitUntil.UTC().Format(time.RFC3339)))
		}
	}
	if len(waiting) == 0 {
		return ""
	}
	out := fmt.Sprintf("recovering from a data loss: metered calls wait (%s)\n", strings.Join(waiting, ", "))
	if len(st.Need) == 0 {
		return out + "  no ledger's copy could tell which ledgers spent: the wait ends with time, or with `ingest quota restore --ledger DB...`\n"
	}
	where := map[string]string{}
	for _, l := range st.Ledgers {
		where[l.Ledger] = l.Ledger + " (" + l.Where + ")"
	}
	name := func(ids []string) string {
		var out []string
		for _, id := range ids {
			out = append(out, cmp.Or(where[id], id))
		}
		return cmp.Or(strings.Join(out, ", "), "none yet")
	}
	return out + fmt.Sprintf("  waiting for the ledgers: %s; put back: %s\n", name(st.Need), name(st.Done))
}
