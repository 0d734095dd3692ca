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
)

var (
	// ErrUnavailable: the limiter cannot be reached, or answered with an
	// error, and the call may not go ahead unmetered. It is
	// ingest.ErrUnavailable, so that jobs need not import this package.
	ErrUnavailable = ingest.ErrUnavailable
	// ErrCostTooLarge: a charge can never fit its pool (more than limit -
	// reserve) or names a pool costs.yaml does not have: an error at the
	// call site, never a refusal that looks transient.
	ErrCostTooLarge = errors.New("cost can never fit its pool")
)

// The limiter's roles: a caller depends on the one it uses. Every backend
// plays them all; the conformance suite holds each to them.

// Meter is what a job uses for each call of the upstream.
type Meter interface {
	// Take decides one call of an operation of costs.yaml for by; Spend
	// one call that takes charges: all of them or none. An admitted call is
	// in the ledger, with by's region and run, before either returns.
	Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error)
	Spend(ctx context.Context, by ingest.Caller, op string, charges []ingest.Charge) (ingest.Decision, error)
	// Refund gives back an admitted call that never reached the upstream.
	Refund(ctx context.Context, call ingest.Call) error
	// Block refuses every call of pool until the upstream's reset; op is
	// the operation that met the upstream's exhausted quota.
	Block(ctx context.Context, pool, op string) (time.Time, error)
}

// Reporter is what a report reads: the pools' state.
type Reporter interface {
	State(ctx context.Context) ([]ingest.PoolState, error)
}

// Operator is what `ingest quota` and `ingest check` use.
type Operator interface {
	Config(ctx context.Context) ([]PoolConfig, error)
	CheckConfig(ctx context.Context) error
	ApplyConfig(ctx context.Context) ([]ConfigChange, error)
	// Refill puts a ledger's calls and blocks back; twice counts once.
	Refill(ctx context.Context, rec ingest.Recalled) (int, error)
	Backend() string
}

// Locker is the job lock: a lease, renewed until unlock.
type Locker interface {
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), ok bool, err error)
}

var (
	_ = [...]Meter{(*Redis)(nil), (*SQLite)(nil), (*Postgres)(nil)}
	_ = [...]Reporter{(*Redis)(nil), (*SQLite)(nil), (*Postgres)(nil)}
	_ = [...]Operator{(*Redis)(nil), (*SQLite)(nil), (*Postgres)(nil)}
	_ = [...]Locker{(*Redis)(nil), (*SQLite)(nil), (*Postgres)(nil)}
)

const (
	// DefaultTimeout bounds each decision of the Redis limiter.
	DefaultTimeout = 250 * time.Millisecond
	// OperatorTimeout bounds a read or a change of the limiter's state that
	// decides no call: a report's, a metric's, an operator's command.
	OperatorTimeout = time.Second
	// SlowestCall bounds the longest step any call to Redis may take (a
	// recovery's refill of a ledger).
	SlowestCall = 10 * time.Second
	// DefaultBeat is how often a daemon looks at the limiter between calls
	// (a recovery that waits for its ledger), and how often a worker copies
	// the limiter's list of ledgers.
	DefaultBeat = 2 * time.Second
	// DefaultGuard bounds how far the limiter's clock may jump ahead of its
	// last decision without the worker's boot clock agreeing.
	DefaultGuard = 10 * time.Minute
)

// Options are a limiter's tunables, each with a safe default: the zero
// Options is right for production but for Uptime, which a limiter on the
// host's clock is given (KernelUptime). What the promises need is the
// constructors' required arguments (ledger.go).
type Options struct {
	// Timeout bounds each call to the limiter; zero means the backend's
	// default.
	Timeout time.Duration
	// Logger receives the fail-open and recovery messages; nil means
	// slog.Default().
	Logger *slog.Logger
	// Replicas: with more than zero, the Redis limiter counts an admission
	// only once WAIT confirms that many replicas hold it.
	Replicas int
	// Beat and Guard: see DefaultBeat and DefaultGuard.
	Beat, Guard time.Duration
	// ClockOffset is added to the server's clock (Redis's TIME,
	// PostgreSQL's clock_timestamp()), read at each decision: nil but in
	// tests, which move the server's clock with it.
	ClockOffset func() time.Duration
	// Uptime is the clock guard's second clock (KernelUptime): the boot's id and the time
	// since boot, which a step of the wall clock does not move (ok false:
	// none). nil means no guard: the guard is for a clock that follows the
	// host's, and only the one who built the clock knows it does (the
	// wiring gives KernelUptime); a test's clock moves time itself.
	Uptime func() (boot string, since time.Duration, ok bool)
	// Delivery is how long after its admission the upstream may still
	// receive a call (ingest.Delivery, the worker's bound on an attempt):
	// each call holds its place in its pool for the window and this, so
	// that no window of the upstream's count holds more than the limiter
	// admitted (docs/explanation/quota.md, "A call's delivery"). Zero in tests that
	// count the window alone.
	Delivery time.Duration
}

// settings are the Options with their defaults and the required
// arguments, as the backends read them.
type settings struct {
	Options
	// Clock is this worker's clock: the SQLite limiter's; the Redis and
	// PostgreSQL limiters use it only to name the calendar days around
	// their server's and to date what they write.
	ingest.Clock
	Ledger   // NoLedger's ID is a random one, so that its reads name nobody
	QuotaKey string
	Costs    *ingest.Costs
	Upstream *UpstreamClock // nil: NoUpstreamClock
}

func newSettings(quotaKey string, costs *ingest.Costs, led Ledger, up *UpstreamClock, clock ingest.Clock, o Options) (settings, error) {
	if quotaKey == "" || strings.ContainsAny(quotaKey, "{}") {
		return settings{}, fmt.Errorf("quota key %q: must be non-empty and without braces", quotaKey)
	}
	if costs == nil || len(costs.Pools) == 0 {
		return settings{}, errors.New("the costs (the pools and operations of costs.yaml) are required")
	}
	if err := led.check(); err != nil {
		return settings{}, err
	}
	if up == nil {
		return settings{}, errors.New("the upstream's clock is required: a *UpstreamClock, or NoUpstreamClock to run without one")
	}
	o.Timeout = cmp.Or(max(o.Timeout, 0), DefaultTimeout)
	o.Logger = cmp.Or(o.Logger, slog.Default()).With("quota_key", quotaKey)
	o.Beat = cmp.Or(o.Beat, DefaultBeat)
	o.Guard = cmp.Or(o.Guard, DefaultGuard)
	o.Delivery = max(o.Delivery, 0)
	if clock == nil {
		return settings{}, errors.New("the clock is required: the house's, that its neighbours read")
	}
	if led.none {
		led.ID = token()[:12]
	}
	if up == NoUpstreamClock {
		up = nil
	}
	return settings{Options: o, Clock: clock, Ledger: led, QuotaKey: quotaKey, Costs: costs, Upstream: up}, nil
}

// offset is ClockOffset's reading in milliseconds.
func (s *settings) offset() int64 {
	if s.ClockOffset == nil {
		return 0
	}
	return s.ClockOffset().Milliseconds()
}

// recall is what the ledger holds of this quota key over the pools' span.
func (s *settings) recall(ctx context.Context) (rec ingest.Recalled, err error) {
	if !s.none {
		if rec, err = s.Recall.Recall(ctx, s.QuotaKey, s.Now().Add(-s.Costs.Span()), s.Now()); err != nil {
			err = fmt.Errorf("read the ledger: %w", err)
		}
	}
	return rec, err
}

// charge is one validated charge with its pool.
type charge struct {
	pool  ingest.Pool
	units int64
}

// take prices op by costs.yaml and spends it on l.
func take(ctx context.Context, l interface {
	Spend(context.Context, ingest.Caller, string, []ingest.Charge) (ingest.Decision, error)
}, costs *ingest.Costs, up *UpstreamClock, by ingest.Caller, op string) (ingest.Decision, error) {
	charges, err := costs.Op(op)
	if err != nil {
		return ingest.Decision{}, err
	}
	d, err := l.Spend(ctx, by, op, charges)
	if errors.Is(err, ErrClockSkew) && up != nil && up.Recheck(ctx) {
		// The refusal rested on a reading the upstream has now replaced.
		d, err = l.Spend(ctx, by, op, charges)
	}
	if up != nil {
		up.decided(err)
	}
	return d, err
}

// resolve checks every charge against its pool.
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

// dearest is a pool's largest charge of any operation: what FreeAt in
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

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
