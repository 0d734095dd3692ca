package quota

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
)

// HostLedger is one host's ledger as a move to a new Redis or a restore
// hands it over: its id, where its database is, and its calls of the span.
type HostLedger struct {
	ID, Where string
	Calls     ingest.Recalled
}

// Seed is a host's move to a new Redis (`ingest quota seed`): each ledger's
// calls are put in under that ledger's own id and mark, as its own refill
// would put them, so that its first call finds none missing and fetches at
// once; then this costs file's pools when the key holds none, and the end
// of any wait. The operator names every ledger that spent in the window.
func (r *Redis) Seed(ctx context.Context, ledgers []HostLedger) (int, error) {
	return r.putBack(ctx, "seed", ledgers)
}

// Restore refills the limiter from the ledgers an operator has at hand and
// ends a recovery's wait: the operator vouches that these are all the
// ledgers that spent in the window. Each ledger's calls go in under its
// own id and mark, as Seed puts them, so that each host's next call finds
// none missing and spends at once rather than starting a recovery anew. A
// key that lost its configuration too gets this costs file's, once the
// calls are back.
func (r *Redis) Restore(ctx context.Context, ledgers []HostLedger) (int, error) {
	return r.putBack(ctx, "restore", ledgers)
}

// putBack is Seed and Restore, which what names in errors.
func (r *Redis) putBack(ctx context.Context, what string, ledgers []HostLedger) (int, error) {
	r.led.recallMu.Lock()
	defer r.led.recallMu.Unlock()
	total := 0
	for _, l := range ledgers {
		a := r.base(r.opts.Costs.Pools, one)
		a.Ledger, a.Where = l.ID, l.Where
		n, err := r.refillWith(ctx, a, l.Calls, true)
		if err != nil {
			return total, fmt.Errorf("%s ledger %s: %w", what, l.ID, err)
		}
		total += n
	}
	if err := r.adopt(ctx); err != nil {
		return total, fmt.Errorf("%s: write the configuration: %w", what, err)
	}
	if _, err := r.run(ctx, 5*time.Second, "release", r.inst, r.base(r.opts.Costs.Pools, one)); err != nil {
		return total, fmt.Errorf("%s: end the wait: %w", what, err)
	}
	return total, nil
}

// Undecided is, while this limiter waits after finding it held none of a
// ledger's calls of the window and no ledger's copy of the list of hosts
// could name who spent, what it cannot tell and what to run in each case:
// a Redis the hosts just moved to looks exactly like one that lost its
// data. "" when it is not so.
func (r *Redis) Undecided(ctx context.Context) (string, error) {
	st, err := r.Status(ctx)
	if err != nil || !st.Recovering || len(st.Need) > 0 {
		return "", err
	}
	var until time.Time
	for _, p := range st.Pools {
		if p.WaitUntil.After(until) {
			until = p.WaitUntil
		}
	}
	return UndecidedText(until), nil
}

// UndecidedText names the command for each case a limiter cannot tell
// apart; until is when its wait ends by itself (zero: unknown here).
func UndecidedText(until time.Time) string {
	wait := "the window and the current day have passed"
	if !until.IsZero() {
		wait = until.UTC().Format(time.RFC3339)
	}
	return "the limiter cannot tell a new Redis from one that lost its data: it holds none of this ledger's calls of the window, " +
		"and metered calls wait until " + wait + ". If the hosts moved to this Redis, run `ingest quota seed --ledger DB...` " +
		"with the database of every host that spent in the window; if this Redis lost its data, run " +
		"`ingest quota restore --ledger DB...` with the same, or wait"
}

// Missing names, as quota show does (its id, then where it was last
// seen), each ledger a recovery in st waits for that has not put its
// calls back and is none of ls.
func Missing(st Status, ls []HostLedger) []string {
	where := map[string]string{}
	for _, l := range st.Ledgers {
		where[l.Ledger] = l.Where
	}
	var out []string
	for _, id := range st.Need {
		given := slices.ContainsFunc(ls, func(l HostLedger) bool { return l.ID == id })
		if given || slices.Contains(st.Done, id) {
			continue
		}
		if w := where[id]; w != "" {
			id += " (" + w + ")"
		}
		out = append(out, id)
	}
	return out
}

// PoolUnits is a count of one pool's units.
type PoolUnits struct {
	Pool  string
	Units int64
}

// Unheld is, for each pool of st, what its limit leaves above the units
// the limiter holds in its window and day: the most that calls it does
// not count can have spent.
func Unheld(st Status) []PoolUnits {
	var out []PoolUnits
	for _, p := range st.Pools {
		out = append(out, PoolUnits{Pool: p.Pool, Units: max(0, p.Limit-max(p.Used, p.UsedDay))})
	}
	return out
}
