package quota

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

var (
	// ErrUnavailable: the shared limiter cannot be reached and the call is
	// dearer than fail_open_max_cost, so it is refused rather than risk the
	// quota. It is ingest.ErrUnavailable, so that jobs can tell it apart
	// without importing this package.
	ErrUnavailable = ingest.ErrUnavailable
	// ErrCostTooLarge: a charge can never fit its pool (more than limit -
	// reserve) or names a pool costs.yaml does not have. It is an error at
	// the call site, never a refusal that looks transient.
	ErrCostTooLarge = errors.New("cost can never fit its pool")
)

// DefaultTimeout bounds each call to the shared limiter.
const DefaultTimeout = 250 * time.Millisecond

// Options configure a limiter of either backend.
type Options struct {
	// QuotaKey names the upstream quota every worker shares.
	QuotaKey string
	// Costs are the pools and operations; nil means the built-in costs.yaml.
	Costs *ingest.Costs
	// Timeout bounds each call to the limiter; zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives the fail-open warnings; nil means slog.Default().
	Logger *slog.Logger
	// Recall returns the ledger's calls of the trailing window. The Redis
	// limiter calls it when it finds that Redis lost its data (or, once, when
	// the process starts) and refills the window with them before deciding;
	// nil means there is no ledger to refill from.
	Recall func(ctx context.Context) ([]ingest.Call, error)
}

func (o Options) withDefaults() (Options, error) {
	if o.QuotaKey == "" || strings.ContainsAny(o.QuotaKey, "{}") {
		return o, fmt.Errorf("quota: quota key %q: must be non-empty and without braces", o.QuotaKey)
	}
	if o.Costs == nil {
		o.Costs = ingest.DefaultCosts()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Logger = o.Logger.With("quota_key", o.QuotaKey)
	return o, nil
}

// charge is one validated charge with its pool.
type charge struct {
	pool  ingest.Pool
	units int64
}

// resolve checks every charge against its pool: a charge that can never fit
// is ErrCostTooLarge, not a refusal.
func resolve(costs *ingest.Costs, charges []ingest.Charge) ([]charge, error) {
	if len(charges) == 0 {
		return nil, errors.New("quota: no charges")
	}
	out := make([]charge, 0, len(charges))
	for i, c := range charges {
		p, ok := costs.Pool(c.Pool)
		switch {
		case !ok:
			return nil, fmt.Errorf("quota: pool %q is not in costs.yaml: %w", c.Pool, ErrCostTooLarge)
		case c.Units <= 0:
			return nil, fmt.Errorf("quota: pool %s: charge must be > 0, got %d", c.Pool, c.Units)
		case c.Units > p.Capacity():
			return nil, fmt.Errorf("quota: %d units in pool %s (limit %d - reserve %d = %d): %w",
				c.Units, c.Pool, p.Limit, p.Reserve, p.Capacity(), ErrCostTooLarge)
		case slices.ContainsFunc(charges[:i], func(o ingest.Charge) bool { return o.Pool == c.Pool }):
			return nil, fmt.Errorf("quota: pool %s charged twice", c.Pool)
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
func poolState(p ingest.Pool, used, freeMS, blockedMS int64) ingest.PoolState {
	return ingest.PoolState{
		Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Used: used,
		Remaining: max(p.Capacity()-used, 0), FreeAt: msTime(freeMS), BlockedUntil: msTime(blockedMS),
	}
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// failPolicy decides what a call does while the limiter is unreachable:
// a cheap call goes ahead unmetered, a dear one is refused with
// ErrUnavailable. It warns once per outage.
type failPolicy struct {
	log      *slog.Logger
	maxCost  int64
	backend  string
	down     atomic.Bool
	localSeq atomic.Int64
}

func (f *failPolicy) open(op string, charges []ingest.Charge, cause error) (ingest.Decision, error) {
	if f.down.CompareAndSwap(false, true) {
		f.log.Warn("quota limiter unreachable: cheap calls go ahead unmetered, dear calls are refused",
			"backend", f.backend, "fail_open_max_cost", f.maxCost, "err", cause)
	}
	if ingest.MaxCost(charges) > f.maxCost {
		return ingest.Decision{}, fmt.Errorf("quota: %s: %w: %w", op, ErrUnavailable, cause)
	}
	now := time.Now()
	return ingest.Decision{
		Allowed: true, Unmetered: true, At: now, Op: op, Charges: charges,
		ID: fmt.Sprintf("local-%d-%s-%d", now.UnixMilli(), token()[:8], f.localSeq.Add(1)),
	}, nil
}

// up notes that the limiter answered again.
func (f *failPolicy) up() {
	if f.down.CompareAndSwap(true, false) {
		f.log.Info("quota limiter reachable again", "backend", f.backend)
	}
}

// token is a random lease token.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// parseID splits a call id "<ms>-<seq>".
func parseID(id string) (ms, seq int64, err error) {
	a, b, ok := strings.Cut(id, "-")
	if ok {
		ms, err = strconv.ParseInt(a, 10, 64)
	}
	if ok && err == nil {
		seq, err = strconv.ParseInt(b, 10, 64)
	}
	if !ok || err != nil || ms <= 0 || seq <= 0 {
		return 0, 0, fmt.Errorf("quota: call id %q: want <ms>-<seq>", id)
	}
	return ms, seq, nil
}

// refillable keeps the ledger calls that belong in the window: metered, of
// this quota key (or unnamed), with a well-formed id.
func refillable(quotaKey string, calls []ingest.Call) ([]ingest.Call, error) {
	var out []ingest.Call
	for _, c := range calls {
		if c.Unmetered || (c.QuotaKey != "" && c.QuotaKey != quotaKey) {
			continue
		}
		if _, _, err := parseID(c.ID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// lease holds a lock and renews it every ttl/3 until unlock.
type lease struct {
	renew   func(ctx context.Context) (bool, error)
	release func(ctx context.Context) error
	ttl     time.Duration
	log     *slog.Logger
}

func (l lease) start() (unlock func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	go l.keep(stop, done)
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, time.Second))
		defer cancel()
		if err := l.release(ctx); err != nil {
			l.log.Warn("release lock", "err", err)
		}
	}
}

func (l lease) keep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(max(l.ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, 10*time.Millisecond))
		ok, err := l.renew(ctx)
		cancel()
		if err == nil && !ok {
			l.log.Warn("lock lost: another holder has it or it expired")
			return
		}
		if err != nil {
			l.log.Warn("renew lock", "err", err)
		}
	}
}
