package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// SQLiteTimeout is how long a decision on SQLite waits while the file
// stands still (ingest.BoundBySilence): behind other processes' turns, each
// commit moving the file, it waits on; a holder that commits nothing this
// long is stuck. As long as the busy timeout in store.DSN.
const SQLiteTimeout = 10 * time.Second

// PostgresTimeout is how long a decision on PostgreSQL waits for the
// server's next answer (ingest.BoundBySilence): a decision of many statements, or
// one waiting its turn behind other hosts', takes as long as the server
// keeps answering; a server silent this long is down.
const PostgresTimeout = 5 * time.Second

// SQLite is the embedded limiter in a SQLite database, for one host:
// every decision is one write transaction (BEGIN IMMEDIATE), so processes
// sharing the file take turns and stay exact.
type SQLite struct{ embedded }

// Postgres is the embedded limiter in a PostgreSQL database, exact across
// every host that shares it, with no Redis: each decision first takes a
// lock on its quota key, and is taken by the server's clock.
type Postgres struct{ embedded }

// NewSQLite returns a limiter in the tables of a SQLite store
// (ledger.Ledger.Tables). It decides by this host's clock (clock),
// which every process sharing the file shares. Every argument before o is
// required (ledger.go).
func NewSQLite(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, clock ingest.Clock, o Options) (*SQLite, error) {
	e, err := newEmbedded(t, quotaKey, costs, ledger, upstream, clock, o, SQLiteTimeout)
	if err != nil {
		return nil, err
	}
	now := e.opts.Now
	e.wall = func(context.Context, *sql.Tx) (int64, error) { return now().UnixMilli(), nil }
	e.leaseClock = e.wall
	e.clockName, e.down = "this host's clock", "database busy for"
	if w, ok := t.Log.(LogWindow); ok {
		e.mirror = &logMirror{w: w}
	}
	return &SQLite{e}, nil
}

// NewPostgres returns a limiter in the tables of a PostgreSQL store
// (ledger.Ledger.Tables). Every argument before o is required.
func NewPostgres(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, clock ingest.Clock, o Options) (*Postgres, error) {
	e, err := newEmbedded(t, quotaKey, costs, ledger, upstream, clock, o, PostgresTimeout)
	if err != nil {
		return nil, err
	}
	// The server's clock, not the host's: hosts whose clocks differ would
	// disagree on the window and the day, and spend more than the limit
	// between them.
	e.wall = func(ctx context.Context, tx *sql.Tx) (int64, error) {
		ms, err := t.Turns.Clock(ctx, tx)
		return ms + e.opts.offset(), err
	}
	e.leaseClock = t.Turns.Clock
	e.clockName, e.down = "PostgreSQL's clock_timestamp()", "database did not answer within"
	return &Postgres{e}, nil
}

func (s *SQLite) Backend() string   { return "sqlite" }
func (p *Postgres) Backend() string { return "postgres" }

// embedded is the limiter that lives in the store's own database, one
// transaction per decision in which it is alone on its quota key. The SQL
// is the store's (Tables); what the two databases do their own way beyond
// it is the wall clock and how an outage is named.
type embedded struct {
	t    Tables
	opts settings
	// wall is the clock decisions are taken by, in Unix ms; clockName
	// names it in messages, down a database that did not answer in time.
	wall            func(ctx context.Context, tx *sql.Tx) (int64, error)
	clockName, down string
	// leaseClock is the clock leases are taken and renewed by: this
	// worker's on SQLite, as wall, the server's on PostgreSQL.
	leaseClock func(ctx context.Context, tx *sql.Tx) (int64, error)
	// looked is when this process last took into the log what the ledger
	// beside it holds and the log lacks (catchUp); 0 before it first did.
	// read is the ledger's write number it had read up to then.
	looked, read *atomic.Int64
	// mirror keeps the log's windows in the process (mirror.go): SQLite's
	// alone, nil elsewhere.
	mirror *logMirror
}

func newEmbedded(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, clock ingest.Clock, o Options,
	timeout time.Duration) (embedded, error) {
	if o.Timeout <= 0 {
		o.Timeout = timeout
	}
	if err := t.check(); err != nil {
		return embedded{}, fmt.Errorf("quota: %w", err)
	}
	if ledger.none {
		return embedded{}, errors.New("quota: the embedded limiter lives in the ledger's database: NoLedger cannot be")
	}
	opts, err := newSettings(quotaKey, costs, ledger, upstream, clock, o)
	if err != nil {
		return embedded{}, fmt.Errorf("quota: %w", err)
	}
	return embedded{t: t, opts: opts, looked: new(atomic.Int64), read: new(atomic.Int64)}, nil
}

func (s *embedded) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	return take(ctx, s, s.opts.Costs, s.opts.Upstream, by, op)
}

// Spend never fails open: the log is in the database the job writes to
// anyway, so one that does not answer within the timeout is an error, not
// an outage to work around; admitting unmetered calls there would break
// the limit between processes that merely queue for it.
func (s *embedded) Spend(ctx context.Context, by ingest.Caller, op string, charges []ingest.Charge) (ingest.Decision, error) {
	cs, err := resolve(s.opts.Costs, charges)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	up, err := s.opts.upstreamAt(ctx)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	tctx, cancel := ingest.BoundBySilence(ctx, s.opts.Timeout)
	defer cancel()
	d, err := s.spend(tctx, op, cs, up)
	var cerr *ConfigError
	if err != nil && !errors.As(err, &cerr) && ctx.Err() == nil && s.t.Turns.Down(tctx, err) {
		err = fmt.Errorf("%s %s: %w: %w", s.down, s.opts.Timeout, ErrUnavailable, err)
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// the caller's end rolls the decision's transaction back under
		// it, and the statement after says only that the transaction is
		// over: the end is what the caller is to read
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	return s.opts.admitted(ctx, by, d, nil)
}

// sqlPool is one pool as a transaction sees it.
type sqlPool struct {
	charge
	// ledger: the ledger's calls the log lacks count too (a read by a
	// process that has not yet taken them into the log).
	ledger                    bool
	horizon, dayStart, dayEnd int64
	now                       int64
	held                      int64 // how long a call holds its place: embedded.held
	hold                      hold
	used, usedDay, free       int64
	blocked                   int64
	// view is the decision's view of the mirror (nil: none), mirrored
	// the pool's in it once load read the pool through it.
	view     *logView
	mirrored *poolView
}

func (s *embedded) spend(ctx context.Context, op string, cs []charge, upstream int64) (ingest.Decision, error) {
	tx, err := s.t.Turns.Decide(ctx, s.opts.QuotaKey, s.opts.Timeout)
	if err != nil {
		return ingest.Decision{}, err
	}
	defer tx.Rollback()
	view := s.mirror.begin(ctx, tx)
	var h hold
	now, wall, seq, err := s.clock(ctx, tx, &h)
	if err == nil {
		err = s.opts.agrees(s.clockName, now, upstream)
	}
	if err == nil {
		err = s.keepHold(ctx, tx, h)
	}
	var caught, read int64
	if err == nil {
		caught, read, err = s.catchUp(ctx, tx, now, h)
	}
	if err != nil {
		return ingest.Decision{}, err
	}
	seq = max(seq, caught)
	ps := make([]sqlPool, len(cs))
	allowed := true
	for i, c := range cs {
		ps[i] = s.bounds(c, now, h)
		ps[i].view = view
		if err := s.agree(ctx, tx, c.pool); err != nil {
			return ingest.Decision{}, err
		}
		if err := s.load(ctx, tx, now, &ps[i], true); err != nil {
			return ingest.Decision{}, err
		}
		allowed = allowed && ps[i].fits()
	}
	d := ingest.Decision{Allowed: allowed, At: time.UnixMilli(now).UTC(), Op: op}
	if allowed {
		seq++
		d.ID = embeddedID(now, seq)
		if err := s.record(ctx, tx, now, d.ID, ps); err != nil {
			return ingest.Decision{}, err
		}
		if err := s.setClock(ctx, tx, now, wall, seq); err != nil {
			return ingest.Decision{}, err
		}
	}
	if !allowed && caught > 0 {
		if err := s.setClock(ctx, tx, now, wall, seq); err != nil {
			return ingest.Decision{}, err
		}
	}
	for _, p := range ps {
		if allowed {
			d.Charges = append(d.Charges, ingest.Charge{Pool: p.pool.Name, Units: p.units})
		} else {
			d.RetryAt = msTime(max(d.RetryAt.UnixMilli(), p.free, p.blocked))
		}
		d.Pools = append(d.Pools, poolState(p.pool, p.used, p.usedDay, p.free, p.blocked, 0))
	}
	sealed := view.seal()
	if err := tx.Commit(); err != nil {
		return ingest.Decision{}, err
	}
	view.commit(sealed)
	s.looked.Store(now)
	s.readTo(read)
	return d, nil
}

// catchUp takes into the log, in a decision's transaction at now, what the
// ledger in the same database holds and the log lacks: calls that another
// limiter decided (Redis, before REDIS_URL was unset; a process on Redis
// sharing the database), or that reached the ledger of a copy's source
// after its log was read. No log outweighs the ledger beside it: the
// window is the larger of the two. A process's first look reaches back a
// whole span; the next ones read only what the ledger was written since
// its last, by the ledger's write numbers, whatever time a call is
// stamped with. It returns the highest sequence of the embedded limiter's
// calls taken (0 for none) and the write number read up to, for readTo
// once the decision commits.
func (s *embedded) catchUp(ctx context.Context, tx *sql.Tx, now int64, h hold) (seq, read int64, err error) {
	since, first, after := now-s.opts.Costs.Span().Milliseconds(), s.looked.Load() == 0, s.read.Load()
	if first {
		after = -1
	}
	if read, err = s.t.Ledger.Written(ctx, tx, s.opts.QuotaKey); err != nil {
		return 0, 0, fmt.Errorf("read the ledger: %w", err)
	}
	rec, err := s.t.Ledger.Missing(ctx, tx, s.opts.QuotaKey, since, after)
	if err != nil {
		return 0, 0, fmt.Errorf("read the ledger: %w", err)
	}
	taken := map[string]int64{}
	calls := 0
	for _, c := range refillable(s.opts.Logger, s.opts.QuotaKey, rec.Calls) {
		added, err := s.refillCall(ctx, tx, now, h, c)
		if err != nil {
			return 0, 0, err
		}
		for _, ch := range added {
			taken[ch.Pool] += ch.Units
		}
		if len(added) > 0 {
			calls++
			seq = max(seq, embeddedSeq(c.ID))
		}
	}
	if err := s.refillBlocks(ctx, tx, now, rec.Blocks); err != nil {
		return 0, 0, err
	}
	if calls > 0 {
		why := "calls written since its last look, decided by another limiter on this database"
		if first {
			why = "calls another limiter decided (Redis, before REDIS_URL was unset), or that reached the ledger after the log was copied"
		}
		s.opts.Logger.Warn("the embedded limiter took into its window the calls of its own ledger that its log lacked",
			ingest.LogCalls, calls, ingest.LogUnits, unitsText(taken), "why", why)
	}
	return seq, read, nil
}

// readTo moves the write number this process has read the ledger up to
// on to read, once the decision that read it committed; never back, as
// decisions may commit in another order than they read.
func (s *embedded) readTo(read int64) {
	for {
		old := s.read.Load()
		if read <= old || s.read.CompareAndSwap(old, read) {
			return
		}
	}
}

// unitsText is units by pool as "default=16 search=2", pools in name
// order.
func unitsText(by map[string]int64) string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(by)) {
		out = append(out, fmt.Sprintf("%s=%d", p, by[p]))
	}
	return strings.Join(out, " ")
}

// fits reports whether the pool has room for its units.
func (p *sqlPool) fits() bool {
	c := p.pool.Capacity()
	dayOK := p.dayStart == 0 || p.usedDay+p.units <= c
	return p.blocked == 0 && dayOK && p.used+p.units <= c
}

// bounds fills a pool's window horizon, held back by the hold h, and its
// calendar day at now.
func (s *embedded) bounds(c charge, now int64, h hold) sqlPool {
	p := sqlPool{charge: c, horizon: h.edge(now, s.held(c.pool)), now: now, hold: h, held: s.held(c.pool)}
	if c.pool.Day != nil {
		d := days(c.pool, time.UnixMilli(now))
		p.dayStart, p.dayEnd = d[1], d[2]
	}
	return p
}

// agree stores the pool's settings when the database has none for this
// quota key, and returns a *ConfigError when it holds others.
func (s *embedded) agree(ctx context.Context, tx *sql.Tx, p ingest.Pool) error {
	stored, err := s.t.Pools.Conf(ctx, tx, s.opts.QuotaKey, p.Name)
	switch {
	case err != nil:
		return err
	case stored == "":
		return s.t.Pools.SetConf(ctx, tx, s.opts.QuotaKey, p.Name, poolConf(p), false)
	case stored != poolConf(p):
		return confError(s.opts.QuotaKey, p, stored)
	}
	return nil
}

// load reads one pool at now: units in the window and in the day, the
// block, and when its units fit. With trim, it first deletes entries out
// of both the window and the day.
func (s *embedded) load(ctx context.Context, tx *sql.Tx, now int64, p *sqlPool, trim bool) error {
	keep := p.horizon
	if p.dayStart > 0 {
		keep = min(keep, p.dayStart-1)
	}
	key, pool := s.opts.QuotaKey, p.pool.Name
	if trim {
		if err := s.t.Log.Trim(ctx, tx, key, pool, keep); err != nil {
			return err
		}
	}
	var err error
	if trim && !p.ledger && p.view.usable() {
		if p.mirrored, err = p.view.pool(ctx, tx, key, pool, keep); err != nil {
			return err
		}
		p.mirrored.trim(keep)
		p.used, p.usedDay = p.mirrored.used(p.horizon, p.dayStart, keep)
	} else if p.used, p.usedDay, err = s.t.Log.Used(ctx, tx, key, pool, p.horizon, p.dayStart, keep, p.ledger); err != nil {
		return err
	}
	if p.blocked, err = s.t.Pools.Blocked(ctx, tx, key, pool, now); err != nil {
		return err
	}
	return s.freeAt(ctx, tx, p)
}

// freeAt sets when the pool has room for its units: when the entry whose
// running sum reaches the excess leaves the window (oldest + window would
// be wrong when costs differ) and, when the day is full, the next day.
func (s *embedded) freeAt(ctx context.Context, tx *sql.Tx, p *sqlPool) error {
	p.free = 0
	c := p.pool.Capacity()
	if need := p.used + p.units - c; need > 0 {
		var err error
		if p.mirrored != nil && p.view.usable() {
			p.free = p.mirrored.reaching(p.horizon, need)
		} else if p.free, err = s.t.Log.Reaching(ctx, tx, s.opts.QuotaKey, p.pool.Name, p.horizon, need, p.ledger); err != nil {
			return err
		}
		if p.free > 0 {
			p.free = p.hold.stamp(p.free, p.now) + p.held
		}
	}
	if p.dayStart > 0 && p.usedDay+p.units > c {
		p.free = max(p.free, p.dayEnd)
	}
	return nil
}

// record logs an admitted call in every pool and updates used and free.
func (s *embedded) record(ctx context.Context, tx *sql.Tx, now int64, id string, ps []sqlPool) error {
	for i := range ps {
		p := &ps[i]
		added, err := s.t.Log.Add(ctx, tx, s.opts.QuotaKey, p.pool.Name, id, now, p.units)
		if err == nil && !added {
			err = fmt.Errorf("call %s is in the log already", id)
		}
		if err != nil {
			return err
		}
		if p.mirrored != nil {
			p.mirrored.add(logEntry{ID: id, At: now, Units: p.units})
		}
		p.used += p.units
		if p.dayStart > 0 {
			p.usedDay += p.units
		}
		if err := s.freeAt(ctx, tx, p); err != nil {
			return err
		}
	}
	return nil
}

func (s *embedded) Block(ctx context.Context, pool, op string) (time.Time, error) {
	return s.opts.block(ctx, pool, op, func(p ingest.Pool) (until int64, err error) {
		err = s.write(ctx, 5*time.Second, func(tx *sql.Tx) error {
			now, _, _, err := s.clock(ctx, tx, nil)
			if err != nil {
				return err
			}
			until = days(p, time.UnixMilli(now))[2]
			return s.t.Pools.Block(ctx, tx, s.opts.QuotaKey, pool, until)
		})
		return until, err
	})
}

// write runs fn in a transaction alone on the quota key, bounded by the
// timeout (and at least least), and commits.
func (s *embedded) write(ctx context.Context, least time.Duration, fn func(tx *sql.Tx) error) error {
	ctx, cancel := ingest.BoundBySilence(ctx, max(s.opts.Timeout, least))
	defer cancel()
	tx, err := s.t.Turns.Decide(ctx, s.opts.QuotaKey, s.opts.Timeout)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Refund marks the call given back in the ledger before it leaves the log:
// the other way round, a decision's look at the ledger in between would
// find it missing from the log and put it back.
func (s *embedded) Refund(ctx context.Context, call ingest.Call) error {
	return s.opts.refund(ctx, call, true, func(ctx context.Context, call ingest.Call) error {
		ctx, cancel := ingest.BoundBySilence(ctx, max(s.opts.Timeout, 5*time.Second))
		defer cancel()
		logWrites.Add(1) // before and after: a decision between the two reads the log
		defer logWrites.Add(1)
		return s.t.Log.Drop(ctx, s.opts.QuotaKey, call.ID)
	})
}

// State reports every pool in one read transaction; it writes nothing. A
// process that has not yet taken the ledger's calls into the log (catchUp)
// counts them all the same. It counts no other worker (Others): the log
// lives in one database, and every process on it is one worker.
func (s *embedded) State(ctx context.Context) ([]ingest.PoolState, error) {
	ctx, cancel := ingest.BoundBySilence(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	tx, err := s.t.Turns.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer tx.Rollback()
	var h hold
	now, _, _, err := s.clock(ctx, tx, &h)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	var out []ingest.PoolState
	for _, pool := range s.opts.Costs.Pools {
		p := s.bounds(charge{pool: pool, units: dearest(s.opts.Costs, pool.Name)}, now, h)
		p.ledger = s.looked.Load() == 0
		if err := s.load(ctx, tx, now, &p, false); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		out = append(out, poolState(pool, p.used, p.usedDay, p.free, p.blocked, 0))
	}
	return out, nil
}

// Refill puts ledger calls and blocks back; a call already there is
// skipped, so refilling twice counts once. The embedded limiter loses data
// only with its ledger: this keeps the backends to one contract.
func (s *embedded) Refill(ctx context.Context, rec ingest.Recalled) (int, error) {
	calls := refillable(s.opts.Logger, s.opts.QuotaKey, rec.Calls)
	var added int
	err := s.write(ctx, 10*time.Second, func(tx *sql.Tx) (err error) {
		added, err = s.refill(ctx, tx, calls, rec.Blocks)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("refill: %w", err)
	}
	return added, nil
}

func (s *embedded) refill(ctx context.Context, tx *sql.Tx, calls []ingest.Call, blocks []ingest.Block) (int, error) {
	var h hold
	now, wall, seq, err := s.clock(ctx, tx, &h)
	if err == nil {
		err = s.keepHold(ctx, tx, h)
	}
	if err != nil {
		return 0, err
	}
	added := 0
	for _, c := range calls {
		n, err := s.refillCall(ctx, tx, now, h, c)
		if err != nil {
			return 0, err
		}
		if len(n) > 0 {
			added++
			seq = max(seq, embeddedSeq(c.ID))
		}
	}
	if err := s.refillBlocks(ctx, tx, now, blocks); err != nil {
		return 0, err
	}
	return added, s.setClock(ctx, tx, now, wall, seq)
}

// refillBlocks puts back the blocks still in force at now.
func (s *embedded) refillBlocks(ctx context.Context, tx *sql.Tx, now int64, blocks []ingest.Block) error {
	for _, b := range blocks {
		if (b.QuotaKey == "" || b.QuotaKey == s.opts.QuotaKey) && b.Until.UnixMilli() > now {
			if err := s.t.Pools.Block(ctx, tx, s.opts.QuotaKey, b.Pool, b.Until.UnixMilli()); err != nil {
				return err
			}
		}
	}
	return nil
}

// refillCall inserts the charges of one call that its pools still need; it
// returns those that were new.
func (s *embedded) refillCall(ctx context.Context, tx *sql.Tx, now int64, h hold, c ingest.Call) ([]ingest.Charge, error) {
	ms, _, _ := logID(c.ID)
	var n []ingest.Charge
	for _, ch := range c.Charges {
		p, ok := s.opts.Costs.Pool(ch.Pool)
		if !ok || ch.Units <= 0 {
			continue
		}
		b := s.bounds(charge{pool: p}, now, h)
		if ms <= b.horizon && (b.dayStart == 0 || ms < b.dayStart) {
			continue
		}
		added, err := s.t.Log.Add(ctx, tx, s.opts.QuotaKey, ch.Pool, c.ID, ms, ch.Units)
		if err != nil {
			return nil, err
		}
		if added {
			logWrites.Add(1) // not a decision's own call: every mirror reads the log again
			n = append(n, ch)
		}
	}
	return n, nil
}

func (s *embedded) Config(ctx context.Context) ([]PoolConfig, error) { return s.config(ctx, nil) }

func (s *embedded) config(ctx context.Context, tx *sql.Tx) ([]PoolConfig, error) {
	return s.opts.configs(func(_ int, p ingest.Pool) (string, error) {
		return s.t.Pools.Conf(ctx, tx, s.opts.QuotaKey, p.Name)
	})
}

func (s *embedded) CheckConfig(ctx context.Context) error {
	return checkConfig(ctx, s.opts, s.Config, false)
}

func (s *embedded) ApplyConfig(ctx context.Context) ([]ConfigChange, error) {
	var cur []PoolConfig
	err := s.write(ctx, 5*time.Second, func(tx *sql.Tx) (err error) {
		if cur, err = s.config(ctx, tx); err != nil {
			return err
		}
		for _, c := range cur {
			if err := s.t.Pools.SetConf(ctx, tx, s.opts.QuotaKey, c.Pool, c.Costs, true); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apply configuration: %w", err)
	}
	return changes(cur), nil
}

// Lock takes the lease name in the locks table for ttl with a random token
// and renews it every ttl/3 until unlock; only the holder can renew or
// release it. Lease times are leaseClock's.
func (s *embedded) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	tok := token()
	tctx, cancel := ingest.BoundBySilence(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	now, err := s.leaseClock(tctx, nil)
	ok := false
	if err == nil {
		ok, err = s.t.Leases.Take(tctx, name, tok, now, now+ttl.Milliseconds())
	}
	if err != nil {
		return func() {}, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return func() {}, false, nil
	}
	l := lease{
		ttl: ttl, log: s.opts.Logger.With("lock", name),
		renew: func(ctx context.Context) (bool, error) {
			now, err := s.leaseClock(ctx, nil)
			if err != nil {
				return false, err
			}
			return s.t.Leases.Renew(ctx, name, tok, now+ttl.Milliseconds())
		},
		release: func(ctx context.Context) error { return s.t.Leases.Release(ctx, name, tok) },
	}
	return l.start(), true, nil
}

// held is how long, in milliseconds, a call holds its place in pool p: its
// window and the bound on the call's delivery (Options.Delivery).
func (s *embedded) held(p ingest.Pool) int64 {
	return (p.Window + s.opts.Delivery).Milliseconds()
}
