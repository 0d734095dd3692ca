package throttle

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ratelimit"
)

// APILimiter decides one API request: units of plan for one client
// (ratelimit's limiters). A refusal is a Result, not an error; an error is
// a limiter that could not decide, and the request is then served.
type APILimiter interface {
	Allow(ctx context.Context, plan ratelimit.APIPlan, client string, units int64) (ratelimit.Result, error)
}

// Tokens is what metering reads of the API's tokens, by hash.
type Tokens interface {
	TokenPlan(ctx context.Context, hash string) (plan string, ok bool, err error)
	TokenUsed(ctx context.Context, hash string, at time.Time) error
}

// Meter puts the API's clients under their plans: a token's holder under
// the token's plan, a caller without one under the anonymous plan, by
// address. The holder of Config.Token (the operator) is never metered.
type Meter struct {
	Plans   *ratelimit.APIPlans
	Limiter APILimiter
	Tokens  Tokens
	// Observe counts each metered request by plan and outcome (allowed,
	// refused, unmetered); nil counts nothing.
	Observe func(plan, outcome string)
	// Lease, above 1, takes an anonymous client's budget from the limiter
	// that many units at a time (at most the plan's burst), for a limiter
	// a round trip away (Redis, PostgreSQL): the process then admits the
	// client's requests from the block, without asking. A block is charged
	// whole when it is taken, so the plan holds across processes; what is
	// left of it after leaseFor is dropped, spent. When the plan has no
	// room for a block, each request asks for its own cost, as without a
	// lease.
	Lease int64

	lookMu sync.Mutex
	looks  map[string]lookup // token hash -> its plan, as last read

	used     sync.Map     // token hash -> time.Time its use was last written
	lastWarn atomic.Int64 // unix ms of the last "limiter unavailable" line
	leases   sync.Map     // plan/client -> *lease
	swept    atomic.Int64 // unix ms of the last sweep of the leases
}

// DefaultLease is the block serve takes an anonymous client's budget in
// from a limiter a round trip away: a busy reader's requests then cost a
// round trip for every few of them.
const DefaultLease = 8

// NewMeter meters the API's clients by plans on the limiter al, reading
// their tokens: on a limiter a round trip away (any but the one in this
// process) an anonymous client's budget is taken in blocks of
// DefaultLease, so that a request does not cost a round trip each.
func NewMeter(plans *ratelimit.APIPlans, al ratelimit.Limiter, tokens Tokens, observe func(plan, outcome string)) *Meter {
	m := &Meter{Plans: plans, Limiter: al, Tokens: tokens, Observe: observe}
	if al.Backend() != "memory" {
		m.Lease = DefaultLease
	}
	return m
}

// leaseFor is how long a block of an anonymous client's budget is used
// before it is dropped.
const leaseFor = time.Second

// lease is the block of a client's budget this process holds: left units
// until until, taken by the decision res.
type lease struct {
	mu    sync.Mutex
	left  int64
	until time.Time
	res   ratelimit.Result
	at    time.Time // when the block was taken
	// full is until when the plan has no room for a block: requests ask
	// for their own cost meanwhile.
	full time.Time
}

// Allow decides a request of units: from the client's lease when it has
// one, else by the limiter.
func (m *Meter) Allow(ctx context.Context, plan ratelimit.APIPlan, client string, units int64, now time.Time) (ratelimit.Result, error) {
	block := min(m.Lease, plan.Burst)
	if plan.Name != ratelimit.AnonymousPlan || block <= units {
		return m.Limiter.Allow(ctx, plan, client, units)
	}
	m.sweep(now)
	v, _ := m.leases.LoadOrStore(plan.Name+"/"+client, &lease{})
	l := v.(*lease)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left >= units && now.Before(l.until) {
		l.left -= units
		return l.result(plan, block, units, now), nil
	}
	l.left = 0
	if now.Before(l.full) {
		return m.Limiter.Allow(ctx, plan, client, units)
	}
	res, err := m.Limiter.Allow(ctx, plan, client, block)
	if err != nil {
		return res, err
	}
	if !res.Allowed {
		l.full = now.Add(res.Wait)
		return m.Limiter.Allow(ctx, plan, client, units)
	}
	l.left, l.until, l.res, l.at = block-units, now.Add(leaseFor), res, now
	return l.result(plan, block, units, now), nil
}

// result is the decision a request admitted from the lease answers with:
// what the block left, and when a next request of units fits, now from
// the lease, else as the limiters' rule (GCRA) gives it from the block's
// decision: units come back one an interval, so a request of units fits
// block-units intervals before a block would.
func (l *lease) result(plan ratelimit.APIPlan, block, units int64, now time.Time) ratelimit.Result {
	res := l.res
	res.Remaining += l.left
	res.Wait = 0
	if l.left < units {
		res.Wait = max(l.res.Wait-time.Duration(block-units)*plan.Interval()-now.Sub(l.at), 0)
	}
	return res
}

// sweep drops the leases that ran out, at most once per leaseFor: the
// anonymous clients are many, and each holds one only while it is busy.
func (m *Meter) sweep(now time.Time) {
	last := m.swept.Load()
	if now.UnixMilli()-last < leaseFor.Milliseconds() || !m.swept.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	m.leases.Range(func(k, v any) bool {
		l := v.(*lease)
		if l.mu.TryLock() {
			if !now.Before(l.until) {
				m.leases.Delete(k)
			}
			l.mu.Unlock()
		}
		return true
	})
}

// LookupFor is how long a token's plan, once read, is used without
// reading it again: a revoked token is refused within it, and a client's
// (or the operator's) requests cost no query each.
const LookupFor = 5 * time.Second

// maxLookups bounds the tokens whose plan is held; past it they are all
// read again (wrong tokens are looked up too, and a guesser sends many).
const maxLookups = 10000

// lookup is a token's plan as read at at.
type lookup struct {
	plan string
	ok   bool
	at   time.Time
}

// TokenPlan is Tokens.TokenPlan, read at most once per LookupFor per token.
func (m *Meter) TokenPlan(ctx context.Context, hash string, now time.Time) (string, bool, error) {
	m.lookMu.Lock()
	l, hit := m.looks[hash]
	m.lookMu.Unlock()
	if hit && now.Sub(l.at) < LookupFor && !now.Before(l.at) {
		return l.plan, l.ok, nil
	}
	plan, ok, err := m.Tokens.TokenPlan(ctx, hash)
	if err != nil {
		return "", false, err
	}
	m.lookMu.Lock()
	defer m.lookMu.Unlock()
	if m.looks == nil || len(m.looks) >= maxLookups {
		m.looks = map[string]lookup{}
	}
	m.looks[hash] = lookup{plan: plan, ok: ok, at: now}
	return plan, ok, nil
}

// Touch writes a token's last use, at most once per usedEvery per process.
func (m *Meter) Touch(ctx context.Context, hash string, now time.Time) error {
	if last, ok := m.used.Load(hash); ok && now.Sub(last.(time.Time)) < usedEvery {
		return nil
	}
	m.used.Store(hash, now)
	return m.Tokens.TokenUsed(ctx, hash, now)
}

// usedEvery is how often a token's last use is written: a write per request
// would make every read a write.
const usedEvery = time.Minute

// Count counts a metered request by plan and outcome on Observe.
func (m *Meter) Count(plan, outcome string) {
	if m.Observe != nil {
		m.Observe(plan, outcome)
	}
}

// WarnUnavailable logs a limiter that could not decide, at most once a
// minute: during an outage every request would log it, and each is
// counted as unmetered on /metrics.
func (m *Meter) WarnUnavailable(log interface {
	Warn(string, ...any)
}, plan string, err error, at time.Time) {
	now := at.UnixMilli()
	last := m.lastWarn.Load()
	if now-last < time.Minute.Milliseconds() || !m.lastWarn.CompareAndSwap(last, now) {
		return
	}
	log.Warn("api: the limiter cannot decide: requests are served unmetered until it answers", ingest.LogPlan, plan, ingest.LogErr, err)
}

// warmFor bounds the start's dial of the API's limiter: the dial and the
// script's load, the work a first request would otherwise wait for.
const warmFor = 10 * time.Second

// Warm readies the API's limiter al, when it is a round trip away, before
// the listener opens, so that the first request is metered like the
// others; one that does not answer is said on log, and requests are served
// unmetered until it does.
func Warm(ctx context.Context, al ratelimit.Limiter, log *slog.Logger) {
	w, ok := al.(interface{ Warm(context.Context) error })
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, warmFor)
	defer cancel()
	if err := w.Warm(ctx); err != nil {
		log.Warn("api: the clients' limiter did not answer at start: requests are served unmetered until it does", ingest.LogErr, err)
	}
}
