package wiring

// What `ingest quota seed` does: a limiter a host moves to (a new Redis,
// or the embedded one on leaving Redis) learns the window's calls from the
// ledgers of the hosts that spent in it, so that it neither overspends nor
// waits a day.

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
)

// refiller is a limiter that takes ledger calls back, each once.
type refiller interface {
	Refill(ctx context.Context, rec ingest.Recalled) (int, error)
}

// Seed gives the limiter of key the calls of the window in the ledgers of
// the databases paths (this one when none): how many calls were new to it,
// from how many ledgers. On Redis each ledger's calls go in under its own
// id and mark (quota.Redis.Seed); the embedded limiter takes the calls
// into its log, once lv shows that no ledger that spent in the window on
// the Redis this database leaves is missing (leaving.go).
func (h *Host) Seed(ctx context.Context, l ConfigLimiter, key string, paths []string, lv Leaving) (calls, ledgers int, err error) {
	if len(paths) == 0 {
		paths = []string{h.DSN}
	}
	if rl, ok := l.(*quota.Redis); ok {
		var ls []quota.HostLedger
		for _, path := range paths {
			sl, err := h.hostLedger(ctx, path, key)
			if err != nil {
				return 0, 0, err
			}
			ls = append(ls, sl)
		}
		n, err := rl.Seed(ctx, ls)
		if err != nil {
			return n, len(ls), err
		}
		return n, len(ls), h.moveTo(ctx, paths, key, "quota seed")
	}
	r, ok := l.(refiller)
	if !ok {
		return 0, 0, configErrorf("quota seed: the %s limiter takes no ledger calls", l.Backend())
	}
	var hls []quota.HostLedger
	var ids []string
	for _, path := range paths {
		if err := store.CheckURL(path); err != nil {
			return 0, 0, configErrorf("--ledger %w", err)
		}
		hl, err := h.hostLedger(ctx, path, key)
		if err != nil {
			return 0, 0, err
		}
		hls, ids = append(hls, hl), append(ids, hl.ID)
	}
	db, err := h.OpenStore(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := h.leave(ctx, db, key, lv, ids); err != nil {
		return 0, 0, err
	}
	for _, hl := range hls {
		n, err := r.Refill(ctx, hl.Calls)
		if err != nil {
			return calls, ledgers, err
		}
		calls, ledgers = calls+n, ledgers+1
	}
	// The peers whose ledgers it was given, or was told to forget, no
	// longer hold this host back (peers.go).
	if err := givePeers(ctx, db, key, append(ids, lv.Forget...)); err != nil {
		return calls, ledgers, err
	}
	return calls, ledgers, h.recordHolder(ctx, db, key, h.holderHere(), "quota seed")
}

// hostLedger reads one database's ledger id and calls of the recall span,
// read-only.
func (h *Host) hostLedger(ctx context.Context, path, key string) (quota.HostLedger, error) {
	db, err := OpenExisting(ctx, path)
	if err != nil {
		return quota.HostLedger{}, configErrorf("--ledger %s: %w", store.Redact(path), err)
	}
	defer db.Close()
	led := db.Ledger
	id, err := led.LedgerID(ctx)
	if err != nil {
		return quota.HostLedger{}, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	rec, err := led.Recall(ctx, key, h.now().Add(-h.Costs.Span()), h.now())
	if err != nil {
		return quota.HostLedger{}, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	return quota.HostLedger{ID: id, Where: store.Where(path), Calls: rec}, nil
}

// undecider is a limiter that can say it cannot tell a new Redis from a
// wiped one (quota.Redis).
type undecider interface {
	Undecided(ctx context.Context) (string, error)
}

// windowChecks is /readyz's check that the limiter is not waiting because
// it cannot tell a new Redis from a wiped one (its failure names the
// command for each case); none for a limiter that cannot be so.
func windowChecks(l any) []web.Check {
	u, ok := l.(undecider)
	if !ok {
		return nil
	}
	return []web.Check{{Name: "limiter_window", Passed: "the limiter holds the window's calls of this ledger", Probe: func(ctx context.Context) error {
		text, err := u.Undecided(ctx)
		if err == nil && text != "" {
			err = errors.New(text)
		}
		return err
	}}}
}
