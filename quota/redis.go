package quota

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

//go:embed window.lua
var windowLua string

//go:embed lease.lua
var leaseLua string

var leaseScript = redis.NewScript(leaseLua)

// keyMargin is how long idle keys outlive what they guard.
const keyMargin = time.Minute

// Redis is the shared limiter: every process and host that uses the same
// Redis (or Redis Cluster) and quota key draws from one window.
type Redis struct {
	client redis.UniversalClient
	opts   Options
	prefix string
	fail   *failPolicy
	ops    map[string]*spendCall // Take's charges and keys, built once
	all    []string              // every pool's keys, the state first
	fn     functions             // whether window.lua is loaded as a function
	days   dayArgs               // each pool's day starts, as spend sends them
	inst   string                // this instance's name for its receipts
	worker any                   // Options.Worker, boxed once: a spend that registers sends it
	tok    atomic.Int64          // the last token a spend carried
	pend   pending               // decisions of unknown outcome

	recallMu sync.Mutex // one refill at a time
	mu       sync.Mutex
	k        knowledge
}

// knowledge is what this worker knows of the limiter, to notice a loss that
// a restored epoch would hide.
type knowledge struct {
	epoch  string    // the keys' generation this worker has refilled
	seq    int64     // the highest call counter it has seen
	seen   time.Time // when it last saw the counter
	regAt  time.Time // when it last registered as a spender
	copyAt time.Time // when it last copied the register (its own clock)
	copyMS int64     // the limiter's clock at that copy
	reg    map[string]int64
}

// spendCall is what the script needs for one set of charges.
type spendCall struct {
	cs      []charge
	keys    []string // state, each pool's log, the receipts ring and fence
	regKeys []string // the same and the register, for a spend that registers
	head    []any    // FCALL's first arguments for keys, boxed once
	regHead []any    // and for regKeys
	prof    atomic.Pointer[profile]
}

// profile is the part of a spend request that changes rarely, packed into
// one argument (window.lua parses it once and remembers it): the key
// margin, the clock offset, the keys' generation, the guard, then per pool
// its units, its settings as the limiter keeps them, and its day starts,
// separated by RS. Each argument costs Redis and the client alike: with 4
// keys, 13 arguments instead of 6 added 2.7 µs to an FCALL's p50 on
// loopback. A profile holds until the generation or a pool's day changes.
type profile struct {
	epoch string
	days  []*dayArg
	v     any // the packed string, boxed once
}

// NewClient opens a Redis client for the limiter from a URL: one server
// (redis://...), or a cluster when the URL lists nodes with addr=. Its
// timeouts are the limiter's, and a context's deadline reaches the socket
// (go-redis ignores it on reads otherwise), so that a hung Redis costs a
// call timeout, not the client's default of seconds. Commands are never
// retried by the client: a spend sent twice would count twice.
func NewClient(raw string, timeout time.Duration) (redis.UniversalClient, error) {
	timeout = max(timeout, 50*time.Millisecond)
	if strings.Contains(raw, "addr=") {
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	// One dial attempt: a refused connection is then reported as such at
	// once (it may fail open), not as a deadline after retries.
	o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
	return redis.NewClient(o), nil
}

// NewRedis returns a limiter on client for opts.QuotaKey.
func NewRedis(client redis.UniversalClient, opts Options) (*Redis, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	r := &Redis{
		client: client, opts: opts,
		// The {tag} puts every key of one quota key in one cluster slot.
		prefix: "ingest:{" + opts.QuotaKey + "}:",
		fail:   newFailPolicy(opts.Logger, opts.Costs),
		ops:    map[string]*spendCall{},
		days:   newDayArgs(opts.Costs),
		inst:   token()[:8],
	}
	r.pend.init()
	r.worker = opts.Worker
	var names []string
	for _, p := range opts.Costs.Pools {
		names = append(names, p.Name)
	}
	r.all = r.keys(names...)
	for op, charges := range opts.Costs.Operations {
		if sc, err := r.prepare(charges); err == nil {
			r.ops[op] = sc
		}
	}
	return r, nil
}

// prepare checks charges and lists the script's keys.
func (r *Redis) prepare(charges []ingest.Charge) (*spendCall, error) {
	cs, err := resolve(r.opts.Costs, charges)
	if err != nil {
		return nil, err
	}
	sc := &spendCall{cs: cs, keys: []string{r.prefix + "state"}}
	for _, c := range cs {
		sc.keys = append(sc.keys, r.logKey(c.pool.Name))
	}
	sc.keys = append(sc.keys, r.receiptKeys(r.inst)...)
	sc.regKeys = append(append([]string(nil), sc.keys...), r.prefix+"reg")
	sc.head, sc.regHead = fcallHead(sc.keys), fcallHead(sc.regKeys)
	return sc, nil
}

// Backend names the backend, for reports.
func (r *Redis) Backend() string { return "redis" }

// keys lists every key the script touches for these pools: the state, the
// register and the recovery, then each pool's log.
func (r *Redis) keys(pools ...string) []string {
	k := []string{r.prefix + "state", r.prefix + "reg", r.prefix + "recover"}
	for _, p := range pools {
		k = append(k, r.logKey(p))
	}
	return k
}

// logKey is a pool's log; window.lua reads the pool's name back from it.
func (r *Redis) logKey(pool string) string { return r.prefix + "log:" + pool }

// Keys lists every key this limiter may write, for tests and tidy-ups.
func (r *Redis) Keys() []string {
	return append(append([]string(nil), r.all...), r.receiptKeys(r.inst)...)
}

// Take decides one call of op.
func (r *Redis) Take(ctx context.Context, op string) (ingest.Decision, error) {
	sc, ok := r.ops[op]
	if !ok {
		charges, err := r.opts.Costs.Op(op)
		if err != nil {
			return ingest.Decision{}, err
		}
		return r.Spend(ctx, op, charges)
	}
	return r.spend(ctx, op, sc)
}

// Spend decides one call that takes charges, all of them or none.
func (r *Redis) Spend(ctx context.Context, op string, charges []ingest.Charge) (ingest.Decision, error) {
	sc, err := r.prepare(charges)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	return r.spend(ctx, op, sc)
}

// script runs window.lua bounded by the limiter timeout (at least min):
// as a function (fcall), but for state, which runs read-only through
// EVALSHA_RO so that a read-only user may report.
func (r *Redis) script(ctx context.Context, min time.Duration, keys []string, mode string, args ...any) *redis.Cmd {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, min))
	defer cancel()
	all := append([]any{mode, keyMargin.Milliseconds(), r.opts.ClockOffset.Milliseconds()}, args...)
	if mode == "state" {
		return windowScript.RunRO(ctx, r.client, keys, all...)
	}
	return r.fcall(ctx, keys, all)
}

func (r *Redis) spend(ctx context.Context, op string, sc *spendCall) (ingest.Decision, error) {
	for attempt := 0; attempt < 4; attempt++ {
		token := r.tok.Add(1)
		args, registers := r.spendArgs(sc, token)
		keys, head := sc.keys, sc.head
		if registers {
			keys, head = sc.regKeys, sc.regHead
		}
		cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		res, err := r.call(cctx, keys, head, args).Slice()
		cancel()
		if err != nil {
			return r.failed(ctx, op, sc, token, err)
		}
		r.answered(ctx)
		code, _ := res[0].(int64)
		switch code {
		case 0, 1, 2:
			d, err := r.decision(op, sc, ints(res, len(res)))
			if d.Allowed && registers {
				r.mu.Lock()
				r.k.regAt = time.Now()
				r.mu.Unlock()
			}
			return d, err
		case -1:
			err = r.newGeneration(ctx)
		case -2:
			i := ints(res, 2)[1] - 1
			return ingest.Decision{}, fmt.Errorf("limiter: %w", confError(r.opts.QuotaKey, sc.cs[i].pool, str(res[2])))
		case -3:
			err = r.lossFound(ctx, "the call counter went back, or a pool's log and account disagree")
		case -4:
			return ingest.Decision{}, fmt.Errorf("limiter: %w: the limiter's clock is more than a day from this worker's", ErrUnavailable)
		case -5:
			return ingest.Decision{}, fmt.Errorf("limiter: %w: the request reached it after this worker had given up on it", ErrUnavailable)
		}
		if err != nil {
			return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
		}
	}
	return ingest.Decision{}, fmt.Errorf("limiter: %w: the limiter's keys kept changing generation", ErrUnavailable)
}

// spendArgs is a spend's whole request after its keys: the mode, the
// profile (what changes rarely), the known seq, the worker when this call
// registers it (every Beat, once admitted) or "", the worker's ms and the
// token. It says whether this call registers.
func (r *Redis) spendArgs(sc *spendCall, token int64) ([]any, bool) {
	real, now := time.Now(), r.opts.Now()
	r.mu.Lock()
	epoch, seq, registers := r.k.epoch, r.knownSeq(real), real.Sub(r.k.regAt) >= r.opts.Beat
	r.mu.Unlock()
	reg := any("")
	if registers {
		reg = r.worker
	}
	return []any{"spend", r.profile(sc, epoch, now), seq, reg, now.UnixMilli(), token}, registers
}

// profile returns sc's profile for the generation epoch at now, built
// again only when the generation or a pool's day changed.
func (r *Redis) profile(sc *spendCall, epoch string, now time.Time) any {
	p := sc.prof.Load()
	same := p != nil && p.epoch == epoch
	for i := 0; same && i < len(sc.cs); i++ {
		same = p.days[i] == r.days.day(sc.cs[i].pool, now)
	}
	if same {
		return p.v
	}
	p = &profile{epoch: epoch}
	var b strings.Builder
	fmt.Fprintf(&b, "%d\x1e%d\x1e%s\x1e%d", keyMargin.Milliseconds(), r.opts.ClockOffset.Milliseconds(), epoch, r.opts.Guard.Milliseconds())
	for _, c := range sc.cs {
		d := r.days.day(c.pool, now)
		p.days = append(p.days, d)
		fmt.Fprintf(&b, "\x1e%d\x1e%s\x1e%s", c.units, poolConf(c.pool), d.s)
	}
	p.v = b.String()
	sc.prof.Store(p)
	return p.v
}

// knownSeq is the highest counter seen, while it can still matter: keys
// idle past the longest window expire, and their counter with them.
func (r *Redis) knownSeq(now time.Time) int64 {
	if now.Sub(r.k.seen) > r.opts.Costs.Span()+keyMargin {
		return 0
	}
	return r.k.seq
}

func (r *Redis) saw(seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq >= r.k.seq {
		r.k.seq, r.k.seen = seq, time.Now()
	}
}

// failed handles a call that got no decision. An error reply is Redis
// answering (out of memory, read-only replica, a script error): the call
// is refused. Only a request that surely never reached Redis (the
// connection was refused, no connection could be had) may fail open; a
// timeout after the request went out leaves the outcome unknown, and the
// call is refused rather than risk a second, unmetered admission; it is
// kept as a decision of unknown outcome, reconciled by its token when Redis
// answers again (reconcile).
func (r *Redis) failed(ctx context.Context, op string, sc *spendCall, token int64, err error) (ingest.Decision, error) {
	var rerr redis.Error
	switch {
	case ctx.Err() != nil:
		r.gaveUp(ctx, op, sc, token)
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	case errors.As(err, &rerr):
		return ingest.Decision{}, fmt.Errorf("limiter: answered with an error, so the call is not made: %w", err)
	case neverSent(err):
		return r.fail.open(op, sc.cs, err)
	}
	r.gaveUp(ctx, op, sc, token)
	return ingest.Decision{}, fmt.Errorf("limiter: %w: no answer within %s, so the outcome is unknown and the call is not made: %w",
		ErrUnavailable, r.opts.Timeout, err)
}

// neverSent tells an error that happened before any byte of the request
// left: a refused or failed dial, no free connection, a closed client.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed)
}

// answered notes that Redis answered: decisions of unknown outcome are
// reconciled, and when an outage just ended, the calls admitted unmetered
// during it are written into the window.
func (r *Redis) answered(ctx context.Context) {
	r.reconcile(ctx)
	if !r.fail.up() || r.opts.Recall == nil {
		return
	}
	rec, err := r.opts.Recall(context.WithoutCancel(ctx))
	if err == nil {
		_, err = r.Refill(context.WithoutCancel(ctx), rec)
	}
	if err != nil {
		r.opts.Logger.Warn("write the unmetered calls into the limiter", ingest.LogErr, err)
	}
}

// decision reads the script's reply {allowed, now, seq, retry, suspect, per
// pool: used, used_day, free_at, blocked, wait}, or the short one of a
// one-pool admission with nothing else to say, {2, now, seq, used,
// used_day}; the call id is "<now>-<seq>".
func (r *Redis) decision(op string, sc *spendCall, res []int64) (ingest.Decision, error) {
	if res[0] == 2 && len(res) == 5 && len(sc.cs) == 1 {
		res = []int64{1, res[1], res[2], 0, 0, res[3], res[4], 0, 0, 0}
	}
	if len(res) != 5+5*len(sc.cs) {
		return ingest.Decision{}, fmt.Errorf("limiter: window.lua replied %d values, want %d", len(res), 5+5*len(sc.cs))
	}
	r.saw(res[2])
	d := ingest.Decision{Allowed: res[0] == 1, At: time.UnixMilli(res[1]).UTC(), Op: op, RetryAt: msTime(res[3])}
	if d.Allowed {
		d.ID = strconv.FormatInt(res[1], 10) + "-" + strconv.FormatInt(res[2], 10)
		d.Charges = make([]ingest.Charge, len(sc.cs))
		for i, c := range sc.cs {
			d.Charges[i] = ingest.Charge{Pool: c.pool.Name, Units: c.units}
		}
	}
	if res[4] == 1 {
		r.opts.Logger.Warn("the limiter's clock jumped ahead and this worker's clock does not agree: decided at the last good time",
			"guard", r.opts.Guard)
	}
	d.Pools = make([]ingest.PoolState, len(sc.cs))
	for i, c := range sc.cs {
		v := res[5+5*i:]
		d.Pools[i] = poolState(c.pool, v[0], v[1], v[2], v[3], v[4])
	}
	return d, nil
}

// adopted notes the keys' generation this worker has refilled.
func (r *Redis) adopted(epoch string) {
	r.mu.Lock()
	r.k.epoch = epoch
	r.mu.Unlock()
}

// newGeneration handles keys that are new or of another generation than
// this worker refilled: when the worker knows of calls the limiter lacks
// (its counter is behind this worker's ledger or memory, or there are no
// keys at all while the ledger holds calls of the window), Redis lost
// data; otherwise the worker puts its ledger in (refilling twice counts
// once) and adopts the generation. The limiter is read again after the
// ledger, so that a reply older than what this worker has since seen
// cannot pass for a loss.
func (r *Redis) newGeneration(ctx context.Context) error {
	r.recallMu.Lock()
	defer r.recallMu.Unlock()
	rec, err := r.recall(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	known, mine := max(r.knownSeq(time.Now()), highestSeq(rec.Calls)), r.k.epoch
	r.mu.Unlock()
	_, seq, epoch, _, err := r.beat(ctx, "0")
	if err == nil && epoch == "" {
		if epoch, err = r.migrate(ctx); err == nil && epoch != "" {
			_, seq, epoch, _, err = r.beat(ctx, "0")
		}
	}
	switch {
	case err != nil:
		return err
	case (epoch == "" && known > 0) || seq < known:
		return r.declareLoss(ctx, rec, fmt.Sprintf("this worker knows call %d, the limiter's counter is at %d", known, seq))
	case epoch != "" && epoch == mine:
		return nil // another call of this worker got here first
	case epoch == "":
		res, err := r.script(ctx, 5*time.Second, r.all, "adopt", token()[:16], (r.opts.Costs.Span() + keyMargin).Milliseconds(), known).Text()
		if err != nil {
			return fmt.Errorf("adopt epoch: %w", err)
		}
		epoch = res
	}
	if _, err := r.refill(ctx, r.opts.Worker, rec); err != nil {
		return err
	}
	r.adopted(epoch)
	return nil
}

// migrate moves the keys of the layout before the state key (written by
// workers of an earlier version: a clock key and four keys a pool) into the
// state, with their generation and counter, and returns the generation (""
// when there was nothing to move). Without it, the first worker of this
// version would find no state, take it for a loss and make every pool wait
// for the workers' ledgers.
func (r *Redis) migrate(ctx context.Context) (string, error) {
	keys := append(append([]string(nil), r.all...), r.prefix+"clock")
	for _, p := range r.opts.Costs.Pools {
		for _, kind := range []string{"total", "block", "conf", "wait"} {
			keys = append(keys, r.prefix+kind+":"+p.Name)
		}
	}
	epoch, err := r.script(ctx, 5*time.Second, keys, "migrate", (r.opts.Costs.Span() + keyMargin).Milliseconds()).Text()
	if err != nil {
		return "", fmt.Errorf("migrate the previous keys: %w", err)
	}
	if epoch != "" {
		r.opts.Logger.Info("moved the limiter's keys of an earlier version into its state key", "epoch", epoch)
	}
	return epoch, nil
}

func (r *Redis) recall(ctx context.Context) (ingest.Recalled, error) {
	if r.opts.Recall == nil {
		return ingest.Recalled{}, nil
	}
	rec, err := r.opts.Recall(ctx)
	if err != nil {
		return rec, fmt.Errorf("read the ledger: %w", err)
	}
	return rec, nil
}

// lossFound declares a loss the script found.
func (r *Redis) lossFound(ctx context.Context, reason string) error {
	r.recallMu.Lock()
	defer r.recallMu.Unlock()
	rec, err := r.recall(ctx)
	if err != nil {
		return err
	}
	return r.declareLoss(ctx, rec, reason)
}

// declareLoss starts a recovery: a new generation, so that every worker
// notices; the pools wait, admitting nothing metered, until every worker
// that spent in the window has put its ledger back (this worker names them
// from its copy of the register, when the copy is fresh), or until their
// window and current day have passed. This worker refills at once. The
// caller holds recallMu.
func (r *Redis) declareLoss(ctx context.Context, rec ingest.Recalled, reason string) error {
	real, now := time.Now(), r.opts.Now()
	r.mu.Lock()
	need, seq := r.vouch(real), max(r.knownSeq(real), highestSeq(rec.Calls))
	r.mu.Unlock()
	epoch := token()[:16]
	args := []any{epoch, seq, strings.Join(need, ","), (r.opts.Costs.Span() + keyMargin).Milliseconds()}
	for _, p := range r.opts.Costs.Pools {
		d := days(p, now)
		args = append(args, p.Window.Milliseconds(), d[0], d[1], d[2], d[3])
	}
	if err := r.script(ctx, 5*time.Second, r.all, "lost", args...).Err(); err != nil {
		return fmt.Errorf("start recovery: %w", err)
	}
	r.opts.Logger.Warn("the limiter lost data: metered calls wait until every worker that spent has refilled its ledger, or the window and day have passed",
		"reason", reason, "need", strings.Join(need, ","), "vouched", len(need) > 0)
	if _, err := r.refill(ctx, r.opts.Worker, rec); err != nil {
		return err
	}
	r.adopted(epoch)
	return nil
}

// vouch lists the workers that spent in the window, from this worker's copy
// of the register, or nothing when the copy is not fresh enough to tell.
func (r *Redis) vouch(now time.Time) []string {
	if r.k.copyAt.IsZero() || now.Sub(r.k.copyAt) > r.opts.Fresh {
		return nil
	}
	cutoff := r.k.copyMS - (r.opts.Costs.Span() + r.opts.Beat).Milliseconds()
	need := []string{r.opts.Worker}
	for w, ms := range r.k.reg {
		if ms >= cutoff && w != r.opts.Worker {
			need = append(need, w)
		}
	}
	sort.Strings(need[1:])
	return need
}

// beat reads the limiter's clock and register (renewing this worker's
// entry when register is "1").
func (r *Redis) beat(ctx context.Context, register string) (now, seq int64, epoch string, reg map[string]int64, err error) {
	ttl := (r.opts.Costs.Span() + keyMargin).Milliseconds()
	res, err := r.script(ctx, 0, r.all, "heartbeat", r.opts.Worker, ttl, register).Slice()
	if err != nil {
		return 0, 0, "", nil, fmt.Errorf("heartbeat: %w", err)
	}
	v := ints(res, 2)
	reg = map[string]int64{}
	for i := 3; i+1 < len(res); i += 2 {
		ms, _ := strconv.ParseInt(str(res[i+1]), 10, 64)
		reg[str(res[i])] = ms
	}
	return v[0], v[1], str(res[2]), reg, nil
}

// Heartbeat copies the register and checks that the limiter has not lost
// data since this worker last looked; a loss is handled as a spend would.
// Daemons call it every Beat (Run).
func (r *Redis) Heartbeat(ctx context.Context) error {
	now, seq, epoch, reg, err := r.beat(ctx, "0")
	if err != nil {
		return err
	}
	r.answered(ctx)
	r.mu.Lock()
	known, mine := r.knownSeq(time.Now()), r.k.epoch
	r.mu.Unlock()
	if epoch != mine || seq < known || mine == "" {
		// Not a copy to keep: the register may be from after a loss this
		// worker has not checked the limiter for yet.
		if err := r.newGeneration(ctx); err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		return nil
	}
	r.mu.Lock()
	r.k.reg, r.k.copyAt, r.k.copyMS = reg, time.Now(), now
	r.mu.Unlock()
	r.saw(seq)
	return nil
}

// Run heartbeats every Beat until ctx is done.
func (r *Redis) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.Beat)
	defer t.Stop()
	for {
		if err := r.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.Debug("quota heartbeat", ingest.LogErr, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Block refuses every call drawing from pool until the next midnight of
// the pool's day zone (the upstream's when it has none), as the limiter's
// own clock sees it, for every worker sharing the quota key. It returns
// the end of the block.
func (r *Redis) Block(ctx context.Context, pool string) (time.Time, error) {
	p, ok := r.opts.Costs.Pool(pool)
	if !ok {
		return time.Time{}, fmt.Errorf("block: pool %q is not in costs.yaml", pool)
	}
	d := days(blockZone(p), r.opts.Now())
	ms, err := r.script(ctx, 0, r.keys(pool), "block", d[0], d[1], d[2], d[3]).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("block %s: %w", pool, err)
	}
	return msTime(ms), nil
}

// Refund gives back an admitted call that never reached the upstream: its
// entry leaves every pool's log, so the window holds what the upstream
// charged. A call that is not there (refunded already, or written by
// another generation) is left alone.
func (r *Redis) Refund(ctx context.Context, call ingest.Call) error {
	if call.Unmetered {
		return nil
	}
	var pools []string
	args := []any{call.ID}
	for _, c := range call.Charges {
		pools = append(pools, c.Pool)
		args = append(args, c.Units)
	}
	if err := r.script(ctx, 0, r.keys(pools...), "refund", args...).Err(); err != nil {
		return fmt.Errorf("refund %s: %w", call.ID, err)
	}
	return nil
}

// Status is the limiter as `ingest report` shows it.
type Status struct {
	Pools []ingest.PoolState
	// Need and Done: while the limiter recovers from a loss, the workers
	// whose ledgers it waits for (nil: nobody could vouch, so it waits for
	// time to pass) and those that have refilled.
	Need, Done []string
}

// State reports every pool without writing anything (EVALSHA_RO).
func (r *Redis) State(ctx context.Context) ([]ingest.PoolState, error) {
	st, err := r.Status(ctx)
	return st.Pools, err
}

// Status reports every pool and any recovery in progress, read only.
func (r *Redis) Status(ctx context.Context) (Status, error) {
	now := r.opts.Now()
	var args []any
	for _, p := range r.opts.Costs.Pools {
		args = append(args, dearest(r.opts.Costs, p.Name), poolConf(p), makeDayArg(p, now).s)
	}
	res, err := r.script(ctx, 0, r.all, "state", args...).Slice()
	if err != nil {
		return Status{}, fmt.Errorf("state: %w", err)
	}
	pools := r.opts.Costs.Pools
	if len(res) != 5+5*len(pools) {
		return Status{}, fmt.Errorf("state: window.lua replied %d values, want %d", len(res), 5+5*len(pools))
	}
	st := Status{Need: list(str(res[3])), Done: list(str(res[4]))}
	v := ints(res[5:], len(res)-5)
	for i, p := range pools {
		w := v[5*i:]
		st.Pools = append(st.Pools, poolState(p, w[0], w[1], w[2], w[3], w[4]))
	}
	return st, nil
}

func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Refill puts ledger calls (metered, and unmetered ones taken while the
// limiter was unreachable) and blocks back into the limiter. Calls already
// there are skipped, so refilling twice counts once. It also tells a
// recovery that this worker has refilled.
func (r *Redis) Refill(ctx context.Context, rec ingest.Recalled) (int, error) {
	r.recallMu.Lock()
	defer r.recallMu.Unlock()
	return r.refill(ctx, r.opts.Worker, rec)
}

func (r *Redis) refill(ctx context.Context, worker string, rec ingest.Recalled) (int, error) {
	calls := refillable(r.opts.Logger, r.opts.QuotaKey, rec.Calls)
	byPool, blocks := map[string][]any{}, map[string]int64{}
	for _, c := range calls {
		ms, seq, _ := logID(c.ID)
		for _, ch := range c.Charges {
			if ch.Units > 0 {
				byPool[ch.Pool] = append(byPool[ch.Pool], fmt.Sprintf("%d-%d", ms, seq), ch.Units)
			}
		}
	}
	for _, b := range rec.Blocks {
		if b.QuotaKey == "" || b.QuotaKey == r.opts.QuotaKey {
			blocks[b.Pool] = max(blocks[b.Pool], b.Until.UnixMilli())
		}
	}
	now := r.opts.Now()
	args := []any{worker}
	for _, p := range r.opts.Costs.Pools {
		d := days(p, now)
		args = append(args, p.Capacity(), p.Window.Milliseconds(), d[0], d[1], d[2], d[3], blocks[p.Name], len(byPool[p.Name])/2)
		args = append(args, byPool[p.Name]...)
	}
	n, err := r.script(ctx, 10*time.Second, r.all, "refill", args...).Int()
	if err != nil {
		return 0, fmt.Errorf("refill: %w", err)
	}
	if n > 0 {
		r.opts.Logger.Info("refilled the limiter from the ledger", ingest.LogCalls, n)
	}
	return n, nil
}

// Restore refills the limiter from the ledgers an operator has at hand and
// ends a recovery's wait: the operator vouches that these are all the
// ledgers of the workers that spent in the window.
func (r *Redis) Restore(ctx context.Context, ledgers []ingest.Recalled) (int, error) {
	r.recallMu.Lock()
	defer r.recallMu.Unlock()
	total := 0
	for _, rec := range ledgers {
		n, err := r.refill(ctx, "restore", rec)
		if err != nil {
			return total, err
		}
		total += n
	}
	if err := r.script(ctx, 5*time.Second, r.all, "release").Err(); err != nil {
		return total, fmt.Errorf("restore: end the wait: %w", err)
	}
	return total, nil
}

// Config lists, per pool, what the limiter holds beside this costs file.
func (r *Redis) Config(ctx context.Context) ([]PoolConfig, error) {
	res, err := r.script(ctx, 0, r.all, "conf").StringSlice()
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	out := make([]PoolConfig, len(r.opts.Costs.Pools))
	for i, p := range r.opts.Costs.Pools {
		out[i] = PoolConfig{Pool: p.Name, Costs: poolConf(p)}
		if i < len(res) {
			out[i].Limiter = res[i]
		}
	}
	return out, nil
}

// CheckConfig returns a *ConfigError when the limiter holds a pool with
// other settings than this costs file.
func (r *Redis) CheckConfig(ctx context.Context) error {
	return checkConfig(ctx, r.opts, r.Config)
}

// ApplyConfig replaces the limiter's settings with this costs file's and
// says what changed.
func (r *Redis) ApplyConfig(ctx context.Context) ([]ConfigChange, error) {
	cur, err := r.Config(ctx)
	if err != nil {
		return nil, err
	}
	args := []any{(r.opts.Costs.Span() + keyMargin).Milliseconds()}
	for _, c := range cur {
		args = append(args, c.Costs)
	}
	if err := r.script(ctx, 0, r.all, "apply", args...).Err(); err != nil {
		return nil, fmt.Errorf("apply configuration: %w", err)
	}
	return changes(cur), nil
}

// Lock takes the lease name for ttl with a random token and renews it every
// ttl/3 until unlock; only the holder of the token can renew or release it.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	key, tok := r.prefix+"lock:"+name, token()
	tctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, time.Second))
	defer cancel()
	ok, err := r.client.SetNX(tctx, key, tok, ttl).Result()
	var rerr redis.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &rerr) {
		return func() {}, false, fmt.Errorf("limiter: %w: %w", ErrUnavailable, err)
	}
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("lock %s: %w", name, err)
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

// ints reads the first n values of a script reply as integers.
func ints(res []any, n int) []int64 {
	out := make([]int64, n)
	for i := 0; i < n && i < len(res); i++ {
		switch v := res[i].(type) {
		case int64:
			out[i] = v
		case string:
			out[i], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return out
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// Persistence reports whether the Redis server keeps its data across a
// restart (AOF, or RDB snapshots), as far as CONFIG GET may tell. A lost
// Redis makes the limiter wait for the workers' ledgers, so it is worth a
// warning when nothing is kept.
func (r *Redis) Persistence(ctx context.Context) (kept bool, detail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, time.Second))
	defer cancel()
	aof, err := r.client.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, "", fmt.Errorf("CONFIG GET appendonly: %w", err)
	}
	save, err := r.client.ConfigGet(ctx, "save").Result()
	if err != nil {
		return false, "", fmt.Errorf("CONFIG GET save: %w", err)
	}
	switch {
	case aof["appendonly"] == "yes":
		return true, "AOF", nil
	case strings.TrimSpace(save["save"]) != "":
		return true, "RDB snapshots only (save " + save["save"] + "): a restart may bring back an older state, which the limiter notices and waits out", nil
	}
	return false, "neither AOF nor RDB: a restart loses every count, and the limiter then waits for the workers' ledgers", nil
}
