package custody

// What `ingest quota seed` does: a limiter a host moves to (a new Redis,
// or the embedded one on leaving Redis) learns the window's calls from the
// ledgers of the hosts that spent in it, so that it neither overspends nor
// waits a day.

import (
	"context"
	"fmt"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// Seeded is the limiter quota seed gives the window's calls to: its
// backend, for the refusal of one that takes none.
type Seeded interface {
	Backend() string
}

// seeder is a limiter that takes each host's ledger under its own id and
// mark (quota.Redis).
type seeder interface {
	Seed(ctx context.Context, ls []quota.HostLedger) (int, error)
}

// refiller is a limiter that takes ledger calls back, each once (the
// embedded one).
type refiller interface {
	Refill(ctx context.Context, rec ingest.Recalled) (int, error)
}

// Seed gives the limiter of key the calls of the window in the ledgers of
// the databases paths (this one when none): how many calls were new to it,
// from how many ledgers. On Redis each ledger's calls go in under its own
// id and mark (quota.Redis.Seed); the embedded limiter takes the calls
// into its log, once lv shows that no ledger that spent in the window on
// the Redis this database leaves is missing (leaving.go).
func (r *Rules) Seed(ctx context.Context, l Seeded, key string, paths []string, lv Leaving) (calls, ledgers int, err error) {
	if len(paths) == 0 {
		paths = []string{r.DSN}
	}
	if rl, ok := l.(seeder); ok {
		var ls []quota.HostLedger
		for _, path := range paths {
			sl, err := r.HostLedger(ctx, path, key)
			if err != nil {
				return 0, 0, err
			}
			ls = append(ls, sl)
		}
		n, err := rl.Seed(ctx, ls)
		if err != nil {
			return n, len(ls), err
		}
		return n, len(ls), r.MoveTo(ctx, paths, key, "quota seed")
	}
	rf, ok := l.(refiller)
	if !ok {
		return 0, 0, ingest.ConfigErrorf("quota seed: the %s limiter takes no ledger calls", l.Backend())
	}
	var hls []quota.HostLedger
	var ids []string
	for _, path := range paths {
		if err := store.CheckURL(path); err != nil {
			return 0, 0, ingest.ConfigErrorf("--ledger %w", err)
		}
		hl, err := r.HostLedger(ctx, path, key)
		if err != nil {
			return 0, 0, err
		}
		hls, ids = append(hls, hl), append(ids, hl.ID)
	}
	db, err := r.Open(ctx, r.DSN, true)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := r.leave(ctx, db, key, lv, ids); err != nil {
		return 0, 0, err
	}
	for _, hl := range hls {
		n, err := rf.Refill(ctx, hl.Calls)
		if err != nil {
			return calls, ledgers, err
		}
		calls, ledgers = calls+n, ledgers+1
	}
	// The peers whose ledgers it was given, or was told to forget, no
	// longer hold this host back (peers.go).
	if err := givePeers(ctx, db.Ledger, key, append(ids, lv.Forget...)); err != nil {
		return calls, ledgers, err
	}
	return calls, ledgers, r.recordHolder(ctx, db.Ledger, key, r.Here, "quota seed")
}

// HostLedger reads one database's ledger id and calls of the recall span,
// read-only.
func (r *Rules) HostLedger(ctx context.Context, path, key string) (quota.HostLedger, error) {
	db, err := r.Open(ctx, path, false)
	if err != nil {
		return quota.HostLedger{}, ingest.ConfigErrorf("--ledger %s: %w", store.Redact(path), err)
	}
	defer db.Close()
	led := db.Ledger
	id, err := led.LedgerID(ctx)
	if err != nil {
		return quota.HostLedger{}, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	rec, err := led.Recall(ctx, key, r.now().Add(-r.Span), r.now())
	if err != nil {
		return quota.HostLedger{}, fmt.Errorf("--ledger %s: %w", store.Redact(path), err)
	}
	return quota.HostLedger{ID: id, Where: store.Where(path), Calls: rec}, nil
}

// restorer is a limiter that takes each host's ledger back under its own
// id and mark after it lost them (quota.Redis), and says which ledgers its
// wait needs.
type restorer interface {
	Restore(ctx context.Context, ls []quota.HostLedger) (int, error)
	Status(ctx context.Context) (quota.Status, error)
}

// Restored is what a restore put back, and what it ended the wait without.
type Restored struct {
	Calls, Ledgers int
	// Missing names each ledger the wait needed that no database given
	// held, as quota show names it; set only when the operator accepted it.
	Missing []string
	// Uncounted is, for each pool, the most units the missing ledgers can
	// have spent in the window that the limiter now counts nowhere: what
	// the pool's limit leaves above what it holds after the restore.
	Uncounted []quota.PoolUnits
}

// Restore gives a Redis limiter back the calls of key in the ledgers of
// the databases paths (this one when none), each under its own id and
// mark (quota.Redis.Restore), and ends its wait. A wait that names a
// ledger none of paths holds is not ended: what that ledger spent would
// be spent again, so it is a configuration error naming each one and the
// flag to give it, unless acceptMissing says the operator knows.
func (r *Rules) Restore(ctx context.Context, l Seeded, key string, paths []string, acceptMissing bool) (Restored, error) {
	rs, ok := l.(restorer)
	if !ok {
		return Restored{}, ingest.ConfigErrorf("quota restore: the embedded limiter keeps its log in the database and cannot lose it apart from the ledger; set --redis / REDIS_URL")
	}
	if len(paths) == 0 {
		paths = []string{r.DSN}
	}
	var ls []quota.HostLedger
	for _, path := range paths {
		if err := store.CheckURL(path); err != nil {
			return Restored{}, ingest.ConfigErrorf("--ledger %w", err)
		}
		hl, err := r.HostLedger(ctx, path, key)
		if err != nil {
			return Restored{}, err
		}
		ls = append(ls, hl)
	}
	st, err := rs.Status(ctx)
	if err != nil {
		return Restored{}, fmt.Errorf("quota restore: %w", err)
	}
	missing := quota.Missing(st, ls)
	if len(missing) > 0 && !acceptMissing {
		return Restored{}, ingest.ConfigErrorf("quota restore: the limiter waits for the ledgers %s, which no database given holds: "+
			"pass each host's database with --ledger DB (this one's too, when it spent), or --accept-missing to end the wait without them, "+
			"leaving what they spent in the window uncounted; nothing was restored", strings.Join(missing, ", "))
	}
	n, err := rs.Restore(ctx, ls)
	out := Restored{Calls: n, Ledgers: len(ls)}
	if err != nil {
		return out, err
	}
	if err := r.MoveTo(ctx, paths, key, "quota restore"); err != nil {
		return out, err
	}
	if len(missing) > 0 {
		after, err := rs.Status(ctx)
		if err != nil {
			return out, fmt.Errorf("quota restore: %w", err)
		}
		out.Missing, out.Uncounted = missing, quota.Unheld(after)
	}
	return out, nil
}
