package quota

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

//go:embed window.lua
var windowLua string

//go:embed lease.lua
var leaseLua string

var (
	windowScript = redis.NewScript(windowLua)
	leaseScript  = redis.NewScript(leaseLua)
)

// keyMargin is how long idle keys outlive their window.
const keyMargin = time.Minute

// Redis is the shared limiter: every process and host that uses the same
// Redis (or Redis Cluster) and quota key draws from one window.
type Redis struct {
	client redis.UniversalClient
	opts   Options
	prefix string
	fail   *failPolicy
	ops    map[string]*spendCall // Take's script keys and arguments, built once

	// epoch is the name of the keys' generation this process has refilled
	// from its ledger; a decision under another epoch refills first.
	epoch    atomic.Pointer[string]
	recallMu sync.Mutex
}

// spendCall is what the script needs for one set of charges.
type spendCall struct {
	charges []ingest.Charge
	cs      []charge
	keys    []string
	args    []any
}

// NewRedis returns a limiter on client for opts.QuotaKey.
func NewRedis(client redis.UniversalClient, opts Options) (*Redis, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Redis{
		client: client, opts: opts,
		// The {tag} puts every key of one quota key in one cluster slot.
		prefix: "ingest:{" + opts.QuotaKey + "}:",
		fail:   &failPolicy{log: opts.Logger, maxCost: opts.Costs.FailOpenMaxCost, backend: "redis"},
		ops:    map[string]*spendCall{},
	}
	for op, charges := range opts.Costs.Operations {
		if sc, err := r.prepare(charges); err == nil {
			r.ops[op] = sc
		}
	}
	return r, nil
}

// prepare checks charges and builds the script's keys and arguments.
func (r *Redis) prepare(charges []ingest.Charge) (*spendCall, error) {
	cs, err := resolve(r.opts.Costs, charges)
	if err != nil {
		return nil, err
	}
	sc := &spendCall{charges: charges, cs: cs, args: []any{"spend", keyMargin.Milliseconds()}}
	pools := make([]string, len(cs))
	for i, c := range cs {
		pools[i] = c.pool.Name
		sc.args = append(sc.args, c.units, c.pool.Capacity(), c.pool.Window.Milliseconds())
	}
	sc.keys = r.keys(pools...)
	return sc, nil
}

// Backend names the backend, for reports.
func (r *Redis) Backend() string { return "redis" }

// Keys lists the keys of one pool: its log, running total and block.
func (r *Redis) poolKeys(pool string) []string {
	return []string{r.prefix + "log:" + pool, r.prefix + "total:" + pool, r.prefix + "block:" + pool}
}

// keys lists every key the script touches for these pools, clock first.
func (r *Redis) keys(pools ...string) []string {
	k := []string{r.prefix + "clock"}
	for _, p := range pools {
		k = append(k, r.poolKeys(p)...)
	}
	return k
}

// Keys lists every key this limiter may write, for tests and tidy-ups.
func (r *Redis) Keys() []string {
	var pools []string
	for _, p := range r.opts.Costs.Pools {
		pools = append(pools, p.Name)
	}
	return r.keys(pools...)
}

// Take decides one call of op.
func (r *Redis) Take(ctx context.Context, op string) (ingest.Decision, error) {
	if sc, ok := r.ops[op]; ok {
		return r.spend(ctx, op, sc)
	}
	charges, err := r.opts.Costs.Op(op)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("quota: take: %w", err)
	}
	return r.Spend(ctx, op, charges)
}

// Spend decides one call that takes charges, all of them or none.
func (r *Redis) Spend(ctx context.Context, op string, charges []ingest.Charge) (ingest.Decision, error) {
	sc, err := r.prepare(charges)
	if err != nil {
		return ingest.Decision{}, err
	}
	return r.spend(ctx, op, sc)
}

func (r *Redis) spend(ctx context.Context, op string, sc *spendCall) (ingest.Decision, error) {
	args := append([]any{nil}, sc.args[1:]...)
	for attempt := 0; ; attempt++ {
		args[0] = "spend:" + r.knownEpoch(attempt)
		res, err := r.runSpend(ctx, sc.keys, args)
		if err != nil && r.unreachable(ctx, err) {
			return r.fail.open(op, sc.charges, err)
		}
		if err != nil {
			return ingest.Decision{}, fmt.Errorf("quota: %s: %w", op, err)
		}
		r.fail.up()
		if len(res) == 1 && res[0] == -1 {
			if err := r.recall(ctx); err != nil {
				return ingest.Decision{}, fmt.Errorf("quota: %s: %w", op, err)
			}
			continue
		}
		return r.decision(op, sc.charges, sc.cs, res)
	}
}

func (r *Redis) runSpend(ctx context.Context, keys []string, args []any) ([]int64, error) {
	tctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	return windowScript.Run(tctx, r.client, keys, args...).Int64Slice()
}

// knownEpoch is the epoch to decide under; after two refills in a row (Redis
// flushed again meanwhile) it stops checking rather than loop.
func (r *Redis) knownEpoch(attempt int) string {
	if attempt >= 2 {
		return "*"
	}
	if e := r.epoch.Load(); e != nil {
		return *e
	}
	return ""
}

// recall refills the window from the ledger and adopts the keys' epoch:
// Redis lost its data, or this process has not refilled since it started.
// Refilling is idempotent, so workers that do it at once count each call
// once; each worker refills with the calls its own ledger holds.
func (r *Redis) recall(ctx context.Context) error {
	r.recallMu.Lock()
	defer r.recallMu.Unlock()
	if r.opts.Recall != nil {
		calls, err := r.opts.Recall(ctx)
		if err != nil {
			return fmt.Errorf("read the ledger to refill Redis: %w", err)
		}
		n, err := r.Refill(ctx, calls)
		if err != nil {
			return err
		}
		if n > 0 {
			r.opts.Logger.Warn("Redis had lost spent units: refilled the window from the ledger", "calls", n)
		}
	}
	var longest time.Duration
	for _, p := range r.opts.Costs.Pools {
		longest = max(longest, p.Window)
	}
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, 5*time.Second))
	defer cancel()
	epoch, err := windowScript.Run(ctx, r.client, r.keys(), "adopt", keyMargin.Milliseconds(),
		token()[:16], longest.Milliseconds()).Text()
	if err != nil {
		return fmt.Errorf("adopt epoch: %w", err)
	}
	r.epoch.Store(&epoch)
	return nil
}

// decision reads the script's reply {allowed, now, seq, retry_at, per pool:
// used, free_at, blocked_until}; the call id is "<now>-<seq>".
func (r *Redis) decision(op string, charges []ingest.Charge, cs []charge, res []int64) (ingest.Decision, error) {
	if len(res) != 4+3*len(cs) {
		return ingest.Decision{}, fmt.Errorf("quota: %s: window.lua replied %d values, want %d", op, len(res), 4+3*len(cs))
	}
	d := ingest.Decision{Allowed: res[0] == 1, At: time.UnixMilli(res[1]).UTC(), Op: op, RetryAt: msTime(res[3])}
	if d.Allowed {
		d.ID = fmt.Sprintf("%d-%d", res[1], res[2])
		d.Charges = charges
	}
	for i, c := range cs {
		v := res[4+3*i:]
		d.Pools = append(d.Pools, poolState(c.pool, v[0], v[1], v[2]))
	}
	return d, nil
}

// unreachable tells a Redis that cannot answer (network, timeout, loading,
// cluster down) from a real error (a bug in the script or its arguments).
func (r *Redis) unreachable(parent context.Context, err error) bool {
	if parent.Err() != nil {
		return false // the caller gave up: not an outage
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range []string{"LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "BUSY", "OOM", "MOVED", "ASK"} {
			if strings.HasPrefix(rerr.Error(), p) {
				return true
			}
		}
		return false
	}
	return true
}

// Block refuses every call drawing from pool until the given time, for
// every worker sharing the quota key.
func (r *Redis) Block(ctx context.Context, pool string, until time.Time) error {
	if _, ok := r.opts.Costs.Pool(pool); !ok {
		return fmt.Errorf("quota: block: pool %q is not in costs.yaml", pool)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	err := windowScript.Run(ctx, r.client, r.keys(pool), "block", keyMargin.Milliseconds(), until.UnixMilli()).Err()
	if err != nil {
		return fmt.Errorf("quota: block %s: %w", pool, err)
	}
	return nil
}

// State reports every pool without writing anything: it runs the script
// read-only (EVALSHA_RO).
func (r *Redis) State(ctx context.Context) ([]ingest.PoolState, error) {
	pools := r.opts.Costs.Pools
	names := make([]string, len(pools))
	args := []any{"state", keyMargin.Milliseconds()}
	for i, p := range pools {
		names[i] = p.Name
		args = append(args, dearest(r.opts.Costs, p.Name), p.Capacity(), p.Window.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	res, err := windowScript.RunRO(ctx, r.client, r.keys(names...), args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("quota: state: %w", err)
	}
	if len(res) != 1+3*len(pools) {
		return nil, fmt.Errorf("quota: state: window.lua replied %d values, want %d", len(res), 1+3*len(pools))
	}
	var out []ingest.PoolState
	for i, p := range pools {
		v := res[1+3*i:]
		out = append(out, poolState(p, v[0], v[1], v[2]))
	}
	return out, nil
}

// Refill puts ledger calls back into the window after Redis lost its data.
// Calls already there are skipped, so refilling twice counts once.
func (r *Redis) Refill(ctx context.Context, calls []ingest.Call) (int, error) {
	calls, err := refillable(r.opts.QuotaKey, calls)
	if err != nil || len(calls) == 0 {
		return 0, err
	}
	byPool := map[string][]any{}
	for _, c := range calls {
		for _, ch := range c.Charges {
			if _, ok := r.opts.Costs.Pool(ch.Pool); ok && ch.Units > 0 {
				byPool[ch.Pool] = append(byPool[ch.Pool], c.ID, ch.Units)
			}
		}
	}
	var names []string
	for p := range byPool {
		names = append(names, p)
	}
	sort.Strings(names)
	args := []any{"refill", keyMargin.Milliseconds()}
	for _, name := range names {
		p, _ := r.opts.Costs.Pool(name)
		args = append(args, p.Capacity(), p.Window.Milliseconds(), len(byPool[name])/2)
		args = append(args, byPool[name]...)
	}
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, 5*time.Second))
	defer cancel()
	n, err := windowScript.Run(ctx, r.client, r.keys(names...), args...).Int()
	if err != nil {
		return 0, fmt.Errorf("quota: refill: %w", err)
	}
	return n, nil
}

// Lock takes the lease name for ttl with a random token and renews it every
// ttl/3 until unlock; only the holder of the token can renew or release it.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	key, tok := r.prefix+"lock:"+name, token()
	tctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, time.Second))
	defer cancel()
	ok, err := r.client.SetNX(tctx, key, tok, ttl).Result()
	if err != nil && r.unreachable(ctx, err) {
		return func() {}, false, fmt.Errorf("quota: lock %s: %w: %w", name, ErrUnavailable, err)
	}
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("quota: lock %s: %w", name, err)
		}
		return func() {}, false, err
	}
	l := lease{
		ttl: ttl, log: r.opts.Logger.With("lock", name),
		renew: func(ctx context.Context) (bool, error) {
			n, err := leaseScript.Run(ctx, r.client, []string{key}, tok, "renew", ttl.Milliseconds()).Int()
			return n == 1, err
		},
		release: func(ctx context.Context) error {
			return leaseScript.Run(ctx, r.client, []string{key}, tok, "release", 0).Err()
		},
	}
	return l.start(), true, nil
}
