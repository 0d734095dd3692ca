package quota

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

//go:embed window.lua
var windowLua string

//go:embed fence.lua
var fenceLua string

// EVALSHA, not Functions: every Redis since 5, Valkey and the managed
// services take scripts; Functions need Redis 7 and FUNCTION LOAD rights.
var windowScript, fenceScript = redis.NewScript(windowLua), redis.NewScript(fenceLua)

const keyMargin = time.Minute

// ErrNotApplied: the Redis holds no configuration for this quota key and
// nothing shows it was used. Only the operator can tell a key nobody
// created (`ingest quota apply --new`) from one whose Redis lost its data.
var ErrNotApplied = errors.New("the limiter holds no configuration for this quota key")

// Redis is the shared limiter: every process and host that uses the same
// Redis (or Redis Cluster) and quota key draws from one window.
type Redis struct {
	client redis.UniversalClient
	opts   settings
	prefix string
	inst   string // this instance's name, for its receipts and fence
	tok    atomic.Int64
	pend   pending     // decisions of unknown outcome
	fail   *failPolicy // decisions while Redis cannot be reached
	led    ledgerView  // what this ledger knows: recovery.go
	// reached: Redis has answered this process once. Until it has, an
	// unreachable Redis may be a mistyped address rather than an outage.
	reached atomic.Bool
}

// NewRedis returns a limiter on client for quotaKey. Every argument before
// o is required (ledger.go).
func NewRedis(client redis.UniversalClient, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, clock ingest.Clock, o Options) (*Redis, error) {
	if client == nil {
		return nil, errors.New("quota: the Redis client is required")
	}
	opts, err := newSettings(quotaKey, costs, ledger, upstream, clock, o)
	if err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	r := &Redis{
		client: client, opts: opts,
		// The {tag} puts every key of one quota key in one cluster slot.
		prefix: "ingest:{" + opts.QuotaKey + "}:",
		inst:   token()[:8],
		fail:   &failPolicy{opts: opts},
	}
	r.fail.never, r.fail.addr = r.NeverReached, r.Addr
	if !opts.none {
		r.pend.n.Store(1) // until the ledger's unknowns are read; NoLedger's has none
	}
	r.led.opts = opts
	return r, nil
}

func (r *Redis) Backend() string { return "redis" }

// keys are the script's KEYS: the state, the configuration, the ledgers,
// the receipts and fence of instance inst, then each pool's log.
func (r *Redis) keys(inst string, pools []poolArg) []string {
	k := []string{r.prefix + "state", r.prefix + "conf", r.prefix + "ledgers", r.prefix + "rcpt:" + inst, r.prefix + "fence:" + inst}
	for _, p := range pools {
		k = append(k, r.prefix+"log:"+p.Name)
	}
	return k
}

// poolArg is one pool as window.lua reads it.
type poolArg struct {
	Name   string   `json:"name"`
	Units  int64    `json:"units"`
	Cap    int64    `json:"cap"`
	Window int64    `json:"window"`
	Conf   string   `json:"conf"`
	Days   []int64  `json:"days,omitempty"`
	Calls  [][2]any `json:"calls,omitempty"` // refill: [id, units]
	Block  int64    `json:"block,omitempty"` // refill: a block the ledger met
}

// args are one call's arguments, by name; each mode reads what it needs.
type args struct {
	Ledger   string    `json:"ledger"`
	Where    string    `json:"where"`
	Offset   int64     `json:"offset"`
	Guard    int64     `json:"guard"`
	Span     int64     `json:"span"`
	TTL      int64     `json:"ttl"`
	Ref      int64     `json:"ref"`
	Up       int64     `json:"up"`
	Mark     string    `json:"mark"`
	Upstream int64     `json:"upstream,omitempty"` // upstream.go; zero for none
	Token    int64     `json:"token"`
	Seq      int64     `json:"seq,omitempty"`
	Need     []string  `json:"need,omitempty"`
	Every    int64     `json:"every,omitempty"` // Every and Idle: a cadence (recovery.go)
	Idle     bool      `json:"idle,omitempty"`
	ID       string    `json:"id,omitempty"`
	Tokens   []int64   `json:"tokens,omitempty"`
	Pools    []poolArg `json:"pools"`
}

// reply is what window.lua answers, by name.
type reply struct {
	Code       string `json:"code"`
	Why        string `json:"why"`
	Pool       string `json:"pool"`
	Conf       any    `json:"conf"` // a pool's stored settings, or (read) every pool's
	At         int64  `json:"at"`
	ID         string `json:"id"`
	Guarded    bool   `json:"guarded"`
	N          int    `json:"n"`
	Started    bool   `json:"started"`
	Until      int64  `json:"until"`
	Pools      list[poolReply]
	Ledgers    list[LedgerSeen] `json:"ledgers"`
	Need, Done list[string]
	Recovering bool         `json:"recovering"`
	IDs        list[string] `json:"ids"`
}

type poolReply struct {
	Used    int64 `json:"used"`
	UsedDay int64 `json:"used_day"`
	Free    int64 `json:"free"`
	Block   int64 `json:"block"`
	Wait    int64 `json:"wait"`
}

// list is a JSON array that Lua's cjson writes as {} when it is empty.
type list[T any] []T

func (l *list[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("{}")) {
		*l = nil
		return nil
	}
	return json.Unmarshal(b, (*[]T)(l))
}

// base fills the arguments every mode shares, and one entry per pool with
// its settings and the four day starts around this worker's clock.
func (r *Redis) base(pools []ingest.Pool, units func(ingest.Pool) int64) *args {
	now := r.opts.Now()
	a := &args{
		Ledger: r.opts.ID, Where: r.opts.Where, Offset: r.opts.offset(),
		Guard: r.opts.Guard.Milliseconds(), Span: r.opts.Costs.Span().Milliseconds(),
		TTL: (r.opts.Costs.Span() + keyMargin).Milliseconds(),
	}
	for _, p := range pools {
		// The script's window is how long a call holds its place: the
		// pool's window and the bound on the call's delivery.
		pa := poolArg{Name: p.Name, Units: units(p), Cap: p.Capacity(), Window: (p.Window + r.opts.Delivery).Milliseconds(), Conf: poolConf(p)}
		if d := days(p, now); p.Day != nil {
			pa.Days = d[:]
		}
		a.Pools = append(a.Pools, pa)
	}
	return a
}

// run runs mode in window.lua (reconcile: fence.lua), bounded by the
// limiter timeout (at least min). With Options.Replicas, a mode that writes
// is followed on the same connection by WAIT, and a write fewer replicas
// confirmed is an error.
func (r *Redis) run(ctx context.Context, min time.Duration, mode string, inst string, a *args) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, min))
	defer cancel()
	keys := r.keys(inst, a.Pools)
	b, err := json.Marshal(a)
	if err != nil {
		return reply{}, err
	}
	var out string
	script := windowScript
	if mode == "reconcile" {
		script = fenceScript
	}
	switch {
	case mode == "read":
		out, err = script.RunRO(ctx, r.client, keys, mode, b).Text()
	case r.opts.Replicas > 0:
		out, err = r.runWaiting(ctx, script, keys, mode, b)
	default:
		out, err = script.Run(ctx, r.client, keys, mode, b).Text()
	}
	if err != nil {
		return reply{}, err
	}
	r.reached.Store(true)
	var rep reply
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return reply{}, fmt.Errorf("window.lua replied %q: %w", out, err)
	}
	if rep.Code == "lost" && mode != "spend" {
		return rep, fmt.Errorf("%w: %s", errLost, rep.Why)
	}
	return rep, nil
}

// runWaiting runs script and WAIT in one pipeline on the node that holds
// the keys.
func (r *Redis) runWaiting(ctx context.Context, script *redis.Script, keys []string, mode string, b []byte) (string, error) {
	var node redis.Cmdable = r.client
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		c, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return "", err
		}
		node = c
	}
	for range 2 {
		pipe := node.Pipeline()
		ev := pipe.EvalSha(ctx, script.Hash(), keys, mode, b)
		wait := pipe.Do(ctx, "WAIT", r.opts.Replicas, max(r.opts.Timeout.Milliseconds()/2, 1))
		_, _ = pipe.Exec(ctx)
		if err := ev.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			if err := script.Load(ctx, node).Err(); err != nil {
				return "", err
			}
			continue
		}
		out, err := ev.Text()
		if err != nil {
			return "", err
		}
		if n, err := wait.Int64(); err != nil {
			return "", fmt.Errorf("%w: WAIT for %d replicas: %w", errUnconfirmed, r.opts.Replicas, err)
		} else if n < int64(r.opts.Replicas) {
			return "", fmt.Errorf("%w: %d of %d replicas confirmed the write within %s (--redis-replicas)", errUnconfirmed, n, r.opts.Replicas, r.opts.Timeout)
		}
		return out, nil
	}
	return "", errors.New("the limiter's script could not be loaded")
}

var errUnconfirmed = errors.New("unconfirmed")

// errLost is a mode other than a spend that met state it cannot read: the
// next spend, or heartbeat, recovers.
var errLost = errors.New("the limiter's data is corrupt, so it is treated as lost")

func (r *Redis) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	return take(ctx, r, r.opts.Costs, r.opts.Upstream, by, op)
}

func (r *Redis) Spend(ctx context.Context, by ingest.Caller, op string, charges []ingest.Charge) (ingest.Decision, error) {
	cs, err := resolve(r.opts.Costs, charges)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	if r.opts.none {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", errNoLedger)
	}
	for range 4 {
		d, again, err := r.spend(ctx, by, op, cs)
		if !again {
			return r.opts.admitted(ctx, by, d, err)
		}
	}
	return ingest.Decision{}, fmt.Errorf("limiter: %w: it kept finding lost data", ErrUnavailable)
}

// spend sends one decision; again says that a loss was handled and the
// decision is to be asked again.
func (r *Redis) spend(ctx context.Context, by ingest.Caller, op string, cs []charge) (d ingest.Decision, again bool, err error) {
	if err := r.led.load(ctx, r); err != nil {
		return d, false, fmt.Errorf("limiter: %w", err)
	}
	pools, units := make([]ingest.Pool, len(cs)), map[string]int64{}
	for i, c := range cs {
		pools[i], units[c.pool.Name] = c.pool, c.units
	}
	if err := r.catchUp(ctx); err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			return d, false, fmt.Errorf("limiter: answered with an error, so the call is not made: %w", err)
		}
		d, err = r.fail.open(ctx, by, op, cs, err)
		return d, false, err
	}
	a := r.base(pools, func(p ingest.Pool) int64 { return units[p.Name] })
	a.Token = r.tok.Add(1)
	a.Mark, a.Ref, a.Up = r.led.clockArgs()
	if a.Upstream, err = r.opts.upstreamAt(ctx); err != nil {
		return d, false, fmt.Errorf("limiter: %w", err)
	}
	rep, err := r.run(ctx, 0, "spend", r.inst, a)
	if err != nil {
		d, err = r.failed(ctx, by, op, cs, a.Token, err)
		return d, false, err
	}
	r.answered(ctx)
	switch rep.Code {
	case "ok", "no":
		d = r.decision(op, cs, rep)
		r.led.decided(ctx, r, rep)
		return d, false, nil
	case "lost":
		err = r.recover(ctx, rep.Why)
	case "noconf":
		err = r.noConf(ctx)
	case "conf":
		stored, _ := rep.Conf.(string)
		p, _ := r.opts.Costs.Pool(rep.Pool)
		return d, false, fmt.Errorf("limiter: %w", confError(r.opts.QuotaKey, p, stored))
	case "clock":
		return d, false, fmt.Errorf("limiter: %w: the limiter's clock is more than a day from this worker's", ErrUnavailable)
	case "fenced":
		return d, false, fmt.Errorf("limiter: %w: the request reached it after this worker had given up on it", ErrUnavailable)
	case "skew":
		return d, false, fmt.Errorf("limiter: %w", r.opts.skewError("Redis's TIME", rep.At, a.Upstream))
	default:
		return d, false, fmt.Errorf("limiter: window.lua replied %q", rep.Code)
	}
	if err != nil {
		return d, false, fmt.Errorf("limiter: %w", err)
	}
	return d, true, nil
}

// failed handles a call that got no decision. An error reply is Redis
// answering (out of memory, a read-only replica): the call is refused.
// Anything else is an outage, a hung server as much as a refused
// connection: the call may fail open. A request that went out may still be
// decided later: it is kept as a decision of unknown outcome (unknown.go).
func (r *Redis) failed(ctx context.Context, by ingest.Caller, op string, cs []charge, token int64, err error) (ingest.Decision, error) {
	var rerr redis.Error
	switch {
	case ctx.Err() != nil:
		r.gaveUp(ctx, op, cs, token)
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	case errors.Is(err, errUnconfirmed):
		r.gaveUp(ctx, op, cs, token)
		return ingest.Decision{}, fmt.Errorf("limiter: %w: %w", ErrUnavailable, err)
	case errors.As(err, &rerr):
		return ingest.Decision{}, fmt.Errorf("limiter: answered with an error, so the call is not made: %w", err)
	case !neverSent(err):
		r.gaveUp(ctx, op, cs, token)
	}
	return r.fail.open(ctx, by, op, cs, err)
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

// catchUp writes the calls admitted unmetered during an outage into the
// window before the next decision; an error means Redis still cannot.
// They are not the ledger's calls put back: a recovery still waits for its
// metered ones.
func (r *Redis) catchUp(ctx context.Context) error {
	if !r.fail.behind() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.Timeout)
	defer cancel()
	rec, err := r.opts.recall(ctx)
	rec.Calls = slices.DeleteFunc(rec.Calls, func(c ingest.Call) bool { return !c.Unmetered })
	if err == nil {
		r.led.recallMu.Lock()
		_, err = r.refill(ctx, "", rec)
		r.led.recallMu.Unlock()
	}
	if err == nil {
		r.fail.up()
	}
	return err
}

// answered settles what an outage left once Redis answers.
func (r *Redis) answered(ctx context.Context) {
	r.reconcile(ctx)
	if err := r.catchUp(ctx); err != nil {
		r.opts.Logger.Warn("write the unmetered calls into the limiter", ingest.LogErr, err)
	}
}

func (r *Redis) decision(op string, cs []charge, rep reply) ingest.Decision {
	d := ingest.Decision{Allowed: rep.Code == "ok", At: msTime(rep.At), Op: op, ID: rep.ID}
	if rep.Guarded {
		r.opts.Logger.Warn("the limiter's clock jumped ahead and this worker's boot clock does not agree: decided at the time the boot clock gives",
			"guard", r.opts.Guard)
	}
	for i, c := range cs {
		p := rep.Pools[i]
		if d.Allowed {
			d.Charges = append(d.Charges, ingest.Charge{Pool: c.pool.Name, Units: c.units})
		} else {
			d.RetryAt = msTime(max(d.RetryAt.UnixMilli(), p.Free))
		}
		d.Pools = append(d.Pools, poolState(c.pool, p.Used, p.UsedDay, p.Free, p.Block, p.Wait))
	}
	return d
}

func (r *Redis) Block(ctx context.Context, pool, op string) (time.Time, error) {
	return r.opts.block(ctx, pool, op, func(p ingest.Pool) (int64, error) {
		rep, err := r.run(ctx, 0, "block", r.inst, r.base([]ingest.Pool{p}, one))
		if err == nil && rep.Code != "ok" {
			err = errors.New("the limiter's clock is more than a day from this worker's")
		}
		return rep.Until, err
	})
}

func one(ingest.Pool) int64 { return 1 }

func (r *Redis) Refund(ctx context.Context, call ingest.Call) error {
	return r.opts.refund(ctx, call, false, r.drop)
}

// drop takes an admitted call's entry out of every pool's log.
func (r *Redis) drop(ctx context.Context, call ingest.Call) error {
	var pools []ingest.Pool
	for _, c := range call.Charges {
		if p, ok := r.opts.Costs.Pool(c.Pool); ok {
			pools = append(pools, p)
		}
	}
	a := r.base(pools, one)
	a.ID = call.ID
	_, err := r.run(ctx, 0, "refund", r.inst, a)
	return err
}

// LedgerSeen is one ledger as the limiter knows it: its last admitted
// call, when, and the host and path it was last seen at; Pools is when it
// last spent in each pool (nil when the limiter has not kept it: then At
// stands for every pool).
type LedgerSeen struct {
	Ledger string           `json:"ledger"`
	Mark   string           `json:"mark"`
	At     int64            `json:"at"`
	Where  string           `json:"where"`
	Pools  map[string]int64 `json:"pools,omitempty"`
}

// spentIn reports whether l spent in pool after since (Unix ms).
func (l LedgerSeen) spentIn(pool string, since int64) bool {
	at, ok := l.Pools[pool]
	if l.Pools == nil {
		at, ok = l.At, true
	}
	return ok && at > since
}

// others is how many ledgers but self spent in pool's window at now (ms).
func others(ls []LedgerSeen, self string, pool ingest.Pool, now int64) int {
	n := 0
	for _, l := range ls {
		if l.Ledger != self && l.spentIn(pool.Name, now-pool.Window.Milliseconds()) {
			n++
		}
	}
	return n
}

// NeverReached reports whether Redis has not answered this process once:
// a limiter that cannot be reached and never could since the start may be
// a mistyped address, not an outage.
func (r *Redis) NeverReached() bool { return !r.reached.Load() }

// Addr is the address of the Redis the limiter dials, as messages name it:
// host and port, never the URL's password.
func (r *Redis) Addr() string {
	switch c := r.client.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	}
	return "(unknown)"
}

// Status is the limiter as `ingest report` and `quota show` show it.
type Status struct {
	Pools []ingest.PoolState
	// Recovering: the limiter lost data and waits; Need are the ledgers it
	// waits for (none: nobody could vouch, so it waits for time to pass)
	// and Done those that have refilled.
	Recovering bool
	Need, Done []string
	Ledgers    []LedgerSeen
	Conf       []string // each pool's stored settings, "" for none
	At         int64    // the limiter's clock, ms
}

func (r *Redis) State(ctx context.Context) ([]ingest.PoolState, error) {
	st, err := r.Status(ctx)
	return st.Pools, err
}

// Status reports every pool, the ledgers and any recovery, read only.
func (r *Redis) Status(ctx context.Context) (Status, error) {
	pools := r.opts.Costs.Pools
	a := r.base(pools, func(p ingest.Pool) int64 { return dearest(r.opts.Costs, p.Name) })
	rep, err := r.run(ctx, OperatorTimeout, "read", r.inst, a)
	if err != nil {
		return Status{}, fmt.Errorf("state: %w", err)
	}
	if len(rep.Pools) != len(pools) {
		return Status{}, fmt.Errorf("state: window.lua replied %d pools, want %d", len(rep.Pools), len(pools))
	}
	st := Status{Recovering: rep.Recovering, Need: rep.Need, Done: rep.Done, Ledgers: rep.Ledgers, At: rep.At}
	confs, _ := rep.Conf.([]any)
	for i, p := range pools {
		v := rep.Pools[i]
		ps := poolState(p, v.Used, v.UsedDay, v.Free, v.Block, v.Wait)
		ps.Others = others(rep.Ledgers, r.opts.ID, p, rep.At)
		st.Pools = append(st.Pools, ps)
		c := ""
		if i < len(confs) {
			c, _ = confs[i].(string)
		}
		st.Conf = append(st.Conf, c)
	}
	return st, nil
}

func (r *Redis) Config(ctx context.Context) ([]PoolConfig, error) {
	st, err := r.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return r.opts.configs(func(i int, _ ingest.Pool) (string, error) { return st.Conf[i], nil })
}

// CheckConfig: a pool the limiter lacks beside others it holds differs
// too: it was never applied.
func (r *Redis) CheckConfig(ctx context.Context) error {
	return checkConfig(ctx, r.opts, r.Config, true)
}

func (r *Redis) ApplyConfig(ctx context.Context) ([]ConfigChange, error) {
	cur, err := r.Config(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.run(ctx, OperatorTimeout, "apply", r.inst, r.base(r.opts.Costs.Pools, one)); err != nil {
		return nil, fmt.Errorf("apply configuration: %w", err)
	}
	return changes(cur), nil
}
