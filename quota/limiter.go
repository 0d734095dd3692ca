package quota

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
)

var (
	// ErrUnavailable: the shared limiter cannot be reached, or answered
	// with an error, and the call may not go ahead unmetered (the pool's
	// fail_open does not allow it), so it is refused rather than risk the
	// quota. It is ingest.ErrUnavailable, so that jobs can tell it apart
	// without importing this package.
	ErrUnavailable = ingest.ErrUnavailable
	// ErrCostTooLarge: a charge can never fit its pool (more than limit -
	// reserve) or names a pool costs.yaml does not have. It is an error at
	// the call site, never a refusal that looks transient.
	ErrCostTooLarge = errors.New("cost can never fit its pool")
)

// Limiter is what both backends offer, and what the conformance suite
// holds them to.
type Limiter interface {
	// Take decides one call of an operation of costs.yaml; Spend one call
	// that takes charges: all of them or none.
	Take(ctx context.Context, op string) (ingest.Decision, error)
	Spend(ctx context.Context, op string, charges []ingest.Charge) (ingest.Decision, error)
	// Block refuses every call of pool until the upstream's reset.
	Block(ctx context.Context, pool string) (time.Time, error)
	// Refund gives back an admitted call that never reached the upstream.
	Refund(ctx context.Context, call ingest.Call) error
	State(ctx context.Context) ([]ingest.PoolState, error)
	// Refill puts a ledger's calls and blocks back; twice counts once.
	Refill(ctx context.Context, rec ingest.Recalled) (int, error)
	// Lock takes a lease, renewed until unlock.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), ok bool, err error)
	Config(ctx context.Context) ([]PoolConfig, error)
	CheckConfig(ctx context.Context) error
	ApplyConfig(ctx context.Context) ([]ConfigChange, error)
	Backend() string
}

var (
	_ Limiter = (*Redis)(nil)
	_ Limiter = (*SQLite)(nil)
	_ Limiter = (*Postgres)(nil)
)

// DefaultTimeout bounds each call to the shared limiter.
const DefaultTimeout = 250 * time.Millisecond

// Defaults of the loss protection (Redis).
const (
	// DefaultBeat is how often a daemon looks at the limiter between calls
	// (a recovery that waits for its ledger), and how often a worker copies
	// the limiter's list of ledgers.
	DefaultBeat = 2 * time.Second
	// DefaultGuard bounds how far the limiter's clock may jump ahead of its
	// last decision without the worker's boot clock agreeing.
	DefaultGuard = 10 * time.Minute
)

// Options configure a limiter of either backend.
type Options struct {
	// QuotaKey names the upstream quota every worker shares.
	QuotaKey string
	// Costs are the pools and operations; nil means the built-in costs.yaml.
	Costs *ingest.Costs
	// Timeout bounds each call to the limiter; zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives the fail-open and recovery messages; nil means
	// slog.Default().
	Logger *slog.Logger
	// Ledger is the stable id of this worker's database: to the limiter,
	// every process writing to one database is one worker. Empty means a
	// random id (a worker without a database).
	Ledger string
	// Where is the host and path the ledger is at, for reports.
	Where string
	// Recall returns what this worker's ledger holds of the pools' span
	// (the trailing window and the current calendar day): its calls,
	// metered or not, and the blocks it met. The Redis limiter refills
	// itself with them when it finds Redis lost data and when an outage
	// ends, and counts the fail_open budget from them; nil means there is
	// no ledger.
	Recall func(ctx context.Context) (ingest.Recalled, error)
	// Grant, when set, decides a fail-open call in one write transaction
	// on the ledger: decide is given the ledger's calls of the span, and
	// the call it returns is written before the transaction ends, so that
	// processes on one database deciding at once share one fail_open
	// budget. nil counts the budget from Recall and this process's grants.
	Grant func(ctx context.Context, decide func([]ingest.Call) (*ingest.Call, error)) error
	// Notes keeps the Redis limiter's notes in the ledger; nil keeps them
	// in memory.
	Notes Notebook
	// Replicas: with more than zero, the Redis limiter counts an admission
	// only once WAIT confirms that many replicas hold it.
	Replicas int
	// Beat and Guard: see DefaultBeat and DefaultGuard.
	Beat, Guard time.Duration
	// Now is this worker's clock; nil means time.Now. It is the SQLite
	// limiter's clock; the Redis limiter decides by the server's TIME and
	// uses Now only to name the calendar days around it; the PostgreSQL
	// one does not use it. Tests move it.
	Now func() time.Time
	// ClockOffset is added to the server's clock (Redis's TIME inside the
	// script, PostgreSQL's clock_timestamp()): zero but in tests, which
	// move the limiter's clock with it.
	ClockOffset time.Duration
	// Uptime is the clock guard's second clock: the boot's id and the time
	// since boot, which a step of the wall clock does not move (ok false:
	// none to be had). nil means the kernel's (/proc) when Now is nil too,
	// and no guard otherwise: a test that moves Now moves time itself,
	// unless it gives an Uptime as well.
	Uptime func() (boot string, since time.Duration, ok bool)
	// Upstream is the upstream's clock (upstream.go): a decision whose
	// time disagrees with it by more than Guard is not taken. nil: no such
	// check.
	Upstream *UpstreamClock
	// Unknowns keeps the Redis limiter's decisions of unknown outcome (a
	// timeout after the request went out) until they are reconciled; nil
	// keeps them in memory.
	Unknowns UnknownLedger
}

func (o Options) withDefaults() (Options, error) {
	if o.QuotaKey == "" || strings.ContainsAny(o.QuotaKey, "{}") {
		return o, fmt.Errorf("quota key %q: must be non-empty and without braces", o.QuotaKey)
	}
	if o.Costs == nil {
		o.Costs = costs.Default()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Ledger == "" {
		o.Ledger = token()[:12]
	}
	if o.Notes == nil {
		o.Notes = &memNotes{m: map[string]string{}}
	}
	o.Beat = cmp.Or(o.Beat, DefaultBeat)
	o.Guard = cmp.Or(o.Guard, DefaultGuard)
	if o.Now == nil {
		o.Now = time.Now
		if o.Uptime == nil {
			o.Uptime = kernelUptime
		}
	}
	o.Logger = o.Logger.With("quota_key", o.QuotaKey)
	return o, nil
}

// charge is one validated charge with its pool.
type charge struct {
	pool  ingest.Pool
	units int64
}

// take prices op by costs.yaml and spends it on l.
func take(ctx context.Context, l interface {
	Spend(context.Context, string, []ingest.Charge) (ingest.Decision, error)
}, costs *ingest.Costs, op string) (ingest.Decision, error) {
	charges, err := costs.Op(op)
	if err != nil {
		return ingest.Decision{}, err
	}
	return l.Spend(ctx, op, charges)
}

// resolve checks every charge against its pool: a charge that can never fit
// is ErrCostTooLarge, not a refusal.
func resolve(costs *ingest.Costs, charges []ingest.Charge) ([]charge, error) {
	if len(charges) == 0 {
		return nil, errors.New("no charges")
	}
	out := make([]charge, 0, len(charges))
	for i, c := range charges {
		p, ok := costs.Pool(c.Pool)
		switch {
		case !ok:
			return nil, fmt.Errorf("pool %q is not in costs.yaml: %w", c.Pool, ErrCostTooLarge)
		case c.Units <= 0:
			return nil, fmt.Errorf("pool %s: charge must be > 0, got %d", c.Pool, c.Units)
		case c.Units > p.Capacity():
			return nil, fmt.Errorf("%d units in pool %s (limit %d - reserve %d = %d): %w",
				c.Units, c.Pool, p.Limit, p.Reserve, p.Capacity(), ErrCostTooLarge)
		case slices.ContainsFunc(charges[:i], func(o ingest.Charge) bool { return o.Pool == c.Pool }):
			return nil, fmt.Errorf("pool %s charged twice", c.Pool)
		}
		out = append(out, charge{pool: p, units: c.Units})
	}
	return out, nil
}

// dearest is, per pool, the largest charge of any operation: what FreeAt in
// State is about.
func dearest(costs *ingest.Costs, pool string) int64 {
	var m int64 = 1
	for _, charges := range costs.Operations {
		for _, c := range charges {
			if c.Pool == pool {
				m = max(m, c.Units)
			}
		}
	}
	return m
}

// poolState fills a PoolState from the limiter's numbers (ms timestamps,
// zero for none).
func poolState(p ingest.Pool, used, usedDay, freeMS, blockedMS, waitMS int64) ingest.PoolState {
	return ingest.PoolState{
		Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Used: used, UsedDay: usedDay, Day: p.DayName(),
		Remaining: max(p.Capacity()-max(used, usedDay), 0), FreeAt: msTime(max(freeMS, blockedMS, waitMS)),
		BlockedUntil: msTime(blockedMS), WaitUntil: msTime(waitMS),
	}
}

// days are the four day starts of a pool around t (zeros for a pool
// without a day), for the limiter to pick its own day from.
func days(p ingest.Pool, t time.Time) [4]int64 {
	if p.Day == nil {
		return [4]int64{}
	}
	return ingest.DayStarts(p.Day, t)
}

// blockZone is where a pool's block ends: its own day, else the upstream's.
func blockZone(p ingest.Pool) ingest.Pool {
	if p.Day == nil {
		p.Day = ingest.UpstreamZone
	}
	return p
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
