package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestworks/ingest"
)

// embedded is the limiter that lives in the store's own database: the log
// of doc.go in the quota_log, quota_block, quota_clock and quota_config
// tables, one transaction per decision in which the decision is alone on
// its quota key, so every process sharing the database takes turns and
// stays exact. The SQL is the store's (Tables); what the two databases do
// their own way beyond it is the wall clock and how an outage is named.
type embedded struct {
	t    Tables
	opts settings
	// wall is the clock decisions are taken by, in Unix ms; clockName
	// names it in messages.
	wall      func(ctx context.Context, tx *sql.Tx) (int64, error)
	clockName string
	// down is the message of a database that did not answer in time.
	down string
}

// newEmbedded checks the required arguments of an embedded limiter.
func newEmbedded(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, o Options) (embedded, error) {
	if err := t.check(); err != nil {
		return embedded{}, fmt.Errorf("quota: %w", err)
	}
	if ledger.none {
		return embedded{}, errors.New("quota: the embedded limiter lives in the ledger's database: NoLedger cannot be")
	}
	opts, err := newSettings(quotaKey, costs, ledger, upstream, o)
	if err != nil {
		return embedded{}, fmt.Errorf("quota: %w", err)
	}
	return embedded{t: t, opts: opts}, nil
}

// unavailable is err as an ErrUnavailable when the database did not answer
// within the timeout, and nil when it answered with an error.
func (s *embedded) unavailable(ctx context.Context, err error) error {
	if !s.t.Turns.Down(ctx, err) {
		return nil
	}
	return fmt.Errorf("%s %s: %w: %w", s.down, s.opts.Timeout, ErrUnavailable, err)
}

// decide begins a transaction alone on the quota key.
func (s *embedded) decide(ctx context.Context) (*sql.Tx, error) {
	return s.t.Turns.Decide(ctx, s.opts.QuotaKey, s.opts.Timeout)
}

// Take decides one call of op.
func (s *embedded) Take(ctx context.Context, op string) (ingest.Decision, error) {
	return take(ctx, s, s.opts.Costs, op)
}

// Spend decides one call that takes charges, all of them or none. The
// embedded limiter never fails open: its log is in the database the job
// writes to anyway, so a database that does not answer within the timeout
// is an error, not an outage to work around. Admitting unmetered calls
// there would break the limit between processes that merely queue for it.
func (s *embedded) Spend(ctx context.Context, op string, charges []ingest.Charge) (ingest.Decision, error) {
	cs, err := resolve(s.opts.Costs, charges)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	up, err := s.opts.upstreamAt(ctx)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	d, err := s.spend(tctx, op, cs, up)
	var cerr *ConfigError
	switch {
	case errors.As(err, &cerr):
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	case err != nil && ctx.Err() == nil:
		if uerr := s.unavailable(tctx, err); uerr != nil {
			return ingest.Decision{}, fmt.Errorf("limiter: %w", uerr)
		}
		fallthrough
	case err != nil:
		return ingest.Decision{}, fmt.Errorf("limiter: %w", err)
	}
	return s.opts.admitted(ctx, op, d, nil)
}

// sqlPool is one pool as a transaction sees it.
type sqlPool struct {
	charge
	horizon, dayStart, dayEnd int64
	now                       int64
	hold                      hold
	used, usedDay, free       int64
	blocked                   int64
}

func (s *embedded) spend(ctx context.Context, op string, cs []charge, upstream int64) (ingest.Decision, error) {
	tx, err := s.decide(ctx)
	if err != nil {
		return ingest.Decision{}, err
	}
	defer tx.Rollback()
	var h hold
	now, wall, seq, err := s.clock(ctx, tx, &h)
	if err != nil {
		return ingest.Decision{}, err
	}
	if err := s.opts.agrees(s.clockName, now, upstream); err != nil {
		return ingest.Decision{}, err
	}
	if err := s.keepHold(ctx, tx, h); err != nil {
		return ingest.Decision{}, err
	}
	ps := make([]sqlPool, len(cs))
	allowed := true
	for i, c := range cs {
		ps[i] = s.bounds(c, now, h)
		if err := s.agree(ctx, tx, c.pool); err != nil {
			return ingest.Decision{}, err
		}
		if err := s.load(ctx, tx, now, &ps[i], true); err != nil {
			return ingest.Decision{}, err
		}
		allowed = allowed && ps[i].fits(0)
	}
	d := ingest.Decision{Allowed: allowed, At: time.UnixMilli(now).UTC(), Op: op}
	if allowed {
		seq++
		d.ID = fmt.Sprintf("%d-%d", now, seq)
		if err := s.record(ctx, tx, now, d.ID, ps); err != nil {
			return ingest.Decision{}, err
		}
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
	return d, tx.Commit()
}

// fits reports whether the pool has room for its units on top of extra.
func (p *sqlPool) fits(extra int64) bool {
	c := p.pool.Capacity()
	dayOK := p.dayStart == 0 || p.usedDay+extra+p.units <= c
	return p.blocked == 0 && dayOK && p.used+extra+p.units <= c
}

// bounds fills a pool's window horizon and calendar day at now, the
// horizon held back by the hold h.
func (s *embedded) bounds(c charge, now int64, h hold) sqlPool {
	p := sqlPool{charge: c, horizon: h.edge(now, c.pool.Window.Milliseconds()), now: now, hold: h}
	if c.pool.Day != nil {
		d := days(c.pool, time.UnixMilli(now))
		p.dayStart, p.dayEnd = d[1], d[2]
	}
	return p
}

// clock is this limiter's clock (the dialect's wall), guarded and made
// monotonic: never behind the last decision. With h, it also reads the
// hold and moves it by this reading.
func (s *embedded) clock(ctx context.Context, tx *sql.Tx, h *hold) (now, wall, seq int64, err error) {
	last, seq, err := s.t.Clocks.ClockRow(ctx, tx, s.opts.QuotaKey)
	if err == nil {
		wall, err = s.wall(ctx, tx)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	now, err = s.guarded(ctx, tx, wall, last)
	if err == nil {
		last, err = s.believed(ctx, tx, now, last)
	}
	if err == nil && h != nil {
		err = s.readHold(ctx, tx, h, now, last)
	}
	return max(now, last), wall, seq, err
}

// believed is the clock row's time unless it is corrupt: ahead of the
// clock and of every entry of the log by more than Guard, which no decision
// writes (each one that admits leaves an entry at its time). Believing it
// would slide the window past calls still in it (promise 9: corruption is
// a loss, never a gift); the log, which lives with the ledger, is whole,
// so the newest entry is the floor instead.
func (s *embedded) believed(ctx context.Context, tx *sql.Tx, now, last int64) (int64, error) {
	g := s.opts.Guard.Milliseconds()
	if last-now <= g {
		return last, nil
	}
	newest, err := s.t.Clocks.Newest(ctx, tx, s.opts.QuotaKey)
	if err != nil || last-newest <= g {
		return last, err
	}
	s.opts.Logger.Warn("the limiter's clock row is ahead of the clock and of every call by more than the guard: not believed",
		"guard", s.opts.Guard, "ahead", time.Duration(last-now)*time.Millisecond)
	return newest, nil
}

// bootKey is the quota_clock row of a quota key's boot reference: the
// wall time of the boot (last_ms) as the last confirmed decision saw it,
// and the boot's hash (seq). A row per boot: hosts that share a
// PostgreSQL database each have their own. Braces, which no quota key
// holds, keep it apart from the keys' own rows.
func (s *embedded) bootKey(boot int64) string {
	return s.opts.QuotaKey + "{boot " + strconv.FormatInt(boot, 36) + "}"
}

// guarded is the clock guard of window.lua for the embedded limiter: a
// reading more than Guard ahead of the last decision that the boot clock
// does not confirm (the boot's wall time moved by more than Guard: the wall
// clock stepped) is not believed. The decision is taken at the last good
// time carried on by the boot clock, so that one odd reading never throws
// the log away, and time still passes while the wall clock is wrong.
func (s *embedded) guarded(ctx context.Context, tx *sql.Tx, wall, last int64) (int64, error) {
	if s.opts.Uptime == nil {
		return wall, nil
	}
	boot, since, ok := s.opts.Uptime()
	if !ok {
		return wall, nil
	}
	at, g := wall-since.Milliseconds(), s.opts.Guard.Milliseconds()
	refAt, refID, err := s.t.Clocks.ClockRow(ctx, tx, s.bootKey(bootHash(boot)))
	if err != nil {
		return 0, err
	}
	if refID == bootHash(boot) && wall-last > g && (at-refAt > g || refAt-at > g) {
		s.opts.Logger.Warn("the clock jumped ahead and the boot clock does not agree: decided at the last good time",
			"guard", s.opts.Guard, "jump", time.Duration(at-refAt)*time.Millisecond)
		return refAt + since.Milliseconds(), nil
	}
	return wall, nil
}

// setClock moves the clock to now and, when this decision's time is the
// wall clock's, records the boot reference beside it. The transaction
// read the clock alone on the quota key: what it writes is never behind.
func (s *embedded) setClock(ctx context.Context, tx *sql.Tx, now, wall, seq int64) error {
	err := s.setRow(ctx, tx, s.opts.QuotaKey, now, seq)
	if err != nil || s.opts.Uptime == nil {
		return err
	}
	boot, since, ok := s.opts.Uptime()
	if g := s.opts.Guard.Milliseconds(); !ok || now-wall > g || wall-now > g {
		return nil // a guarded decision: the reference stays the last good one
	}
	return s.setRow(ctx, tx, s.bootKey(bootHash(boot)), now-since.Milliseconds(), bootHash(boot))
}

func (s *embedded) setRow(ctx context.Context, tx *sql.Tx, key string, ms, seq int64) error {
	return s.t.Clocks.SetClockRow(ctx, tx, key, ms, seq)
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
// block, and when this cost fits. With trim, it first deletes entries that
// are out of both the window and the day.
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
	if p.used, p.usedDay, err = s.t.Log.Used(ctx, tx, key, pool, p.horizon, p.dayStart, keep); err != nil {
		return err
	}
	if p.blocked, err = s.t.Pools.Blocked(ctx, tx, key, pool, now); err != nil {
		return err
	}
	return s.freeAt(ctx, tx, p, 0)
}

// freeAt sets when the pool has room for its units on top of extra: when
// enough units have left the window (the entry whose running sum reaches
// the excess leaves it: oldest + window would be wrong when costs differ)
// and, when the day is full, when the next day starts.
func (s *embedded) freeAt(ctx context.Context, tx *sql.Tx, p *sqlPool, extra int64) error {
	p.free = 0
	c := p.pool.Capacity()
	if need := p.used + extra + p.units - c; need > 0 {
		var err error
		if p.free, err = s.t.Log.Reaching(ctx, tx, s.opts.QuotaKey, p.pool.Name, p.horizon, need); err != nil {
			return err
		}
		if p.free > 0 {
			p.free = p.hold.stamp(p.free, p.now) + p.pool.Window.Milliseconds()
		}
	}
	if p.dayStart > 0 && p.usedDay+extra+p.units > c {
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
		p.used += p.units
		if p.dayStart > 0 {
			p.usedDay += p.units
		}
		if err := s.freeAt(ctx, tx, p, 0); err != nil {
			return err
		}
	}
	return nil
}

// Block refuses every call drawing from pool until the next midnight of its
// day zone (the upstream's when it has none), by this limiter's clock, for
// every process sharing the database and quota key; it returns the end.
func (s *embedded) Block(ctx context.Context, pool string) (time.Time, error) {
	p, ok := s.opts.Costs.Pool(pool)
	if !ok {
		return time.Time{}, fmt.Errorf("block: pool %q is not in costs.yaml", pool)
	}
	var until int64
	err := s.write(ctx, 5*time.Second, func(tx *sql.Tx) error {
		now, _, _, err := s.clock(ctx, tx, nil)
		if err != nil {
			return err
		}
		until = days(blockZone(p), time.UnixMilli(now))[2]
		return s.block(ctx, tx, pool, until)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("block %s: %w", pool, err)
	}
	return msTime(until), s.opts.blocked(ctx, pool, msTime(until))
}

// write runs fn in a transaction alone on the quota key, bounded by the
// timeout (and at least the given least), and commits.
func (s *embedded) write(ctx context.Context, least time.Duration, fn func(tx *sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, least))
	defer cancel()
	tx, err := s.decide(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *embedded) block(ctx context.Context, tx *sql.Tx, pool string, until int64) error {
	return s.t.Pools.Block(ctx, tx, s.opts.QuotaKey, pool, until)
}

// Refund gives back an admitted call that never reached the upstream: its
// entries leave the log, and the ledger marks it.
func (s *embedded) Refund(ctx context.Context, call ingest.Call) error {
	if !call.Unmetered {
		if err := s.refund(ctx, call); err != nil {
			return fmt.Errorf("give back: %w", err)
		}
	}
	return s.opts.gaveBack(ctx, call)
}

func (s *embedded) refund(ctx context.Context, call ingest.Call) error {
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	if err := s.t.Log.Drop(ctx, s.opts.QuotaKey, call.ID); err != nil {
		return fmt.Errorf("refund %s: %w", call.ID, err)
	}
	return nil
}

// State reports every pool in one read transaction; it writes nothing.
func (s *embedded) State(ctx context.Context) ([]ingest.PoolState, error) {
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
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
		if err := s.load(ctx, tx, now, &p, false); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		out = append(out, poolState(pool, p.used, p.usedDay, p.free, p.blocked, 0))
	}
	return out, nil
}

// Refill puts ledger calls and blocks back; a call already there is
// skipped, so refilling twice counts once. The embedded limiter loses data
// only with the database, so this matters mostly for Redis; it is here so
// both backends keep one contract.
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
		if n > 0 {
			added++
			if _, cseq, err := parseID(c.ID); err == nil {
				seq = max(seq, cseq)
			}
		}
	}
	for _, b := range blocks {
		if (b.QuotaKey == "" || b.QuotaKey == s.opts.QuotaKey) && b.Until.UnixMilli() > now {
			if err := s.block(ctx, tx, b.Pool, b.Until.UnixMilli()); err != nil {
				return 0, err
			}
		}
	}
	return added, s.setClock(ctx, tx, now, wall, seq)
}

// refillCall inserts the charges of one call that its pools still need; it
// returns how many rows were new.
func (s *embedded) refillCall(ctx context.Context, tx *sql.Tx, now int64, h hold, c ingest.Call) (int64, error) {
	ms, _, _ := logID(c.ID)
	var n int64
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
			return 0, err
		}
		if added {
			n++
		}
	}
	return n, nil
}

// Config lists, per pool, what the database holds beside this costs file.
func (s *embedded) Config(ctx context.Context) ([]PoolConfig, error) {
	return s.config(ctx, nil)
}

func (s *embedded) config(ctx context.Context, tx *sql.Tx) ([]PoolConfig, error) {
	out := make([]PoolConfig, len(s.opts.Costs.Pools))
	for i, p := range s.opts.Costs.Pools {
		out[i] = PoolConfig{Pool: p.Name, Costs: poolConf(p)}
		var err error
		if out[i].Limiter, err = s.t.Pools.Conf(ctx, tx, s.opts.QuotaKey, p.Name); err != nil {
			return nil, fmt.Errorf("read configuration: %w", err)
		}
	}
	return out, nil
}

// CheckConfig returns a *ConfigError when the database holds a pool with
// other settings than this costs file.
func (s *embedded) CheckConfig(ctx context.Context) error {
	return checkConfig(ctx, s.opts, s.Config, false)
}

// ApplyConfig replaces the stored settings with this costs file's and says
// what changed.
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
// release it. Lease times are the database's clock (Turns.Clock).
func (s *embedded) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	tok := token()
	tctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	now, err := s.t.Turns.Clock(tctx, nil)
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
			now, err := s.t.Turns.Clock(ctx, nil)
			if err != nil {
				return false, err
			}
			return s.t.Leases.Renew(ctx, name, tok, now+ttl.Milliseconds())
		},
		release: func(ctx context.Context) error { return s.t.Leases.Release(ctx, name, tok) },
	}
	return l.start(), true, nil
}
