package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ingestworks/ingest"
)

// SQLiteTimeout is how long the embedded limiter waits for the database's
// write lock, as long as the busy timeout in store.DSN.
const SQLiteTimeout = 10 * time.Second

// SQLite is the embedded limiter: the same sliding log, kept in the SQLite
// database, for one host. Every decision is one write transaction (BEGIN
// IMMEDIATE), so processes sharing the file take turns and stay exact.
type SQLite struct {
	db   *sql.DB
	opts Options
}

// NewSQLite returns a limiter on db, the store's write pool (store.DB.Writer):
// the store opens the database and keeps its schema.
//
// The embedded limiter never fails open: its log is in the database that
// the job writes to anyway, so a database busy past the timeout (default
// SQLiteTimeout) is an error, not an outage to work around. Admitting
// unmetered calls there would break the limit between processes that merely
// queue for the one writer.
func NewSQLite(db *sql.DB, opts Options) (*SQLite, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = SQLiteTimeout
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &SQLite{db: db, opts: opts}, nil
}

// Backend names the backend, for reports.
func (s *SQLite) Backend() string { return "sqlite" }

// Take decides one call of op.
func (s *SQLite) Take(ctx context.Context, op string) (ingest.Decision, error) {
	charges, err := s.opts.Costs.Op(op)
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("quota: take: %w", err)
	}
	return s.Spend(ctx, op, charges)
}

// Spend decides one call that takes charges, all of them or none.
func (s *SQLite) Spend(ctx context.Context, op string, charges []ingest.Charge) (ingest.Decision, error) {
	cs, err := resolve(s.opts.Costs, charges)
	if err != nil {
		return ingest.Decision{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	d, err := s.spend(tctx, op, cs)
	if err != nil && ctx.Err() == nil && busy(tctx, err) {
		return ingest.Decision{}, fmt.Errorf("quota: %s: database busy for %s: %w: %w", op, s.opts.Timeout, ErrUnavailable, err)
	}
	if err != nil {
		return ingest.Decision{}, fmt.Errorf("quota: %s: %w", op, err)
	}
	if d.Allowed {
		d.Charges = charges
	}
	return d, nil
}

// busy tells a database that is locked past the timeout from a real error.
func busy(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		code := serr.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED || code == sqlite3.SQLITE_INTERRUPT
	}
	return false
}

// pool is one pool as a transaction sees it.
type sqlPool struct {
	charge
	used, free, blocked int64
}

func (s *SQLite) spend(ctx context.Context, op string, cs []charge) (ingest.Decision, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: _txlock=immediate in the DSN
	if err != nil {
		return ingest.Decision{}, err
	}
	defer tx.Rollback()
	now, seq, err := s.clock(ctx, tx)
	if err != nil {
		return ingest.Decision{}, err
	}
	ps := make([]sqlPool, len(cs))
	allowed := true
	for i, c := range cs {
		ps[i] = sqlPool{charge: c}
		if err := s.load(ctx, tx, now, &ps[i], true); err != nil {
			return ingest.Decision{}, err
		}
		allowed = allowed && ps[i].blocked == 0 && ps[i].used+c.units <= c.pool.Capacity()
	}
	d := ingest.Decision{Allowed: allowed, At: time.UnixMilli(now).UTC(), Op: op}
	if allowed {
		seq++
		d.ID = fmt.Sprintf("%d-%d", now, seq)
		if err := s.record(ctx, tx, now, d.ID, ps); err != nil {
			return ingest.Decision{}, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES (?, ?, ?)
		ON CONFLICT (quota_key) DO UPDATE SET last_ms = excluded.last_ms, seq = excluded.seq`,
		s.opts.QuotaKey, now, seq); err != nil {
		return ingest.Decision{}, err
	}
	for _, p := range ps {
		if !allowed {
			d.RetryAt = msTime(max(d.RetryAt.UnixMilli(), p.free, p.blocked))
		}
		d.Pools = append(d.Pools, poolState(p.pool, p.used, p.free, p.blocked))
	}
	return d, tx.Commit()
}

// clock is the wall clock made monotonic: never behind the last decision.
func (s *SQLite) clock(ctx context.Context, q querier) (now, seq int64, err error) {
	var last int64
	err = q.QueryRowContext(ctx, `SELECT last_ms, seq FROM quota_clock WHERE quota_key = ?`, s.opts.QuotaKey).Scan(&last, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return max(time.Now().UnixMilli(), last), seq, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// load reads one pool at now: units in the window, the block, and when this
// cost fits. With trim, it first deletes entries that left the window.
func (s *SQLite) load(ctx context.Context, tx *sql.Tx, now int64, p *sqlPool, trim bool) error {
	horizon := now - p.pool.Window.Milliseconds()
	if trim {
		if _, err := tx.ExecContext(ctx, `DELETE FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms <= ?`,
			s.opts.QuotaKey, p.pool.Name, horizon); err != nil {
			return err
		}
	}
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(units), 0) FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ?`,
		s.opts.QuotaKey, p.pool.Name, horizon).Scan(&p.used)
	if err != nil {
		return err
	}
	err = tx.QueryRowContext(ctx, `SELECT until_ms FROM quota_block WHERE quota_key = ? AND pool = ? AND until_ms > ?`,
		s.opts.QuotaKey, p.pool.Name, now).Scan(&p.blocked)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	p.free, err = s.freeAt(ctx, tx, horizon, p.pool, p.used+p.units-p.pool.Capacity())
	return err
}

// freeAt walks the oldest entries in the window until need units have left:
// the time the last of them leaves is when there is room. Walking, not
// oldest + window: with weighted costs the oldest entry may free too little.
func (s *SQLite) freeAt(ctx context.Context, q querier, horizon int64, p ingest.Pool, need int64) (int64, error) {
	if need <= 0 {
		return 0, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT at_ms, units FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ? ORDER BY at_ms`,
		s.opts.QuotaKey, p.Name, horizon)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var at, units int64
		if err := rows.Scan(&at, &units); err != nil {
			return 0, err
		}
		if sum += units; sum >= need {
			return at + p.Window.Milliseconds(), nil
		}
	}
	return 0, rows.Err()
}

// record logs an admitted call in every pool and updates used and free.
func (s *SQLite) record(ctx context.Context, tx *sql.Tx, now int64, id string, ps []sqlPool) error {
	for i := range ps {
		p := &ps[i]
		if _, err := tx.ExecContext(ctx, `INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES (?, ?, ?, ?, ?)`,
			s.opts.QuotaKey, p.pool.Name, id, now, p.units); err != nil {
			return err
		}
		p.used += p.units
		var err error
		p.free, err = s.freeAt(ctx, tx, now-p.pool.Window.Milliseconds(), p.pool, p.used+p.units-p.pool.Capacity())
		if err != nil {
			return err
		}
	}
	return nil
}

// Block refuses every call drawing from pool until the given time, for
// every process sharing the database and quota key.
func (s *SQLite) Block(ctx context.Context, pool string, until time.Time) error {
	if _, ok := s.opts.Costs.Pool(pool); !ok {
		return fmt.Errorf("quota: block: pool %q is not in costs.yaml", pool)
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	_, err := s.db.ExecContext(ctx, `INSERT INTO quota_block (quota_key, pool, until_ms) VALUES (?, ?, ?)
		ON CONFLICT (quota_key, pool) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms)`,
		s.opts.QuotaKey, pool, until.UnixMilli())
	if err != nil {
		return fmt.Errorf("quota: block %s: %w", pool, err)
	}
	return nil
}

// State reports every pool in one read transaction; it writes nothing.
func (s *SQLite) State(ctx context.Context) ([]ingest.PoolState, error) {
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a plain deferred BEGIN
	if err != nil {
		return nil, fmt.Errorf("quota: state: %w", err)
	}
	defer tx.Rollback()
	now, _, err := s.clock(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("quota: state: %w", err)
	}
	var out []ingest.PoolState
	for _, pool := range s.opts.Costs.Pools {
		p := sqlPool{charge: charge{pool: pool, units: dearest(s.opts.Costs, pool.Name)}}
		if err := s.load(ctx, tx, now, &p, false); err != nil {
			return nil, fmt.Errorf("quota: state: %w", err)
		}
		out = append(out, poolState(pool, p.used, p.free, p.blocked))
	}
	return out, nil
}

// Refill puts ledger calls back into the window; a call already there is
// skipped, so refilling twice counts once. The embedded limiter loses data
// only with the database, so this matters mostly for Redis; it is here so
// both backends keep one contract.
func (s *SQLite) Refill(ctx context.Context, calls []ingest.Call) (int, error) {
	calls, err := refillable(s.opts.QuotaKey, calls)
	if err != nil || len(calls) == 0 {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 10*time.Second))
	defer cancel()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("quota: refill: %w", err)
	}
	defer tx.Rollback()
	added, err := s.refill(ctx, tx, calls)
	if err != nil {
		return 0, fmt.Errorf("quota: refill: %w", err)
	}
	return added, tx.Commit()
}

func (s *SQLite) refill(ctx context.Context, tx *sql.Tx, calls []ingest.Call) (int, error) {
	now, seq, err := s.clock(ctx, tx)
	if err != nil {
		return 0, err
	}
	last, added := now, 0
	for _, c := range calls {
		ms, cseq, _ := parseID(c.ID)
		n, err := s.refillCall(ctx, tx, now, ms, c)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			added++
			last, seq = max(last, ms), max(seq, cseq)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES (?, ?, ?)
		ON CONFLICT (quota_key) DO UPDATE SET last_ms = max(last_ms, excluded.last_ms), seq = max(seq, excluded.seq)`,
		s.opts.QuotaKey, last, seq)
	return added, err
}

// refillCall inserts the charges of one call that are still in their
// pool's window; it returns how many rows were new.
func (s *SQLite) refillCall(ctx context.Context, tx *sql.Tx, now, ms int64, c ingest.Call) (int64, error) {
	var n int64
	for _, ch := range c.Charges {
		p, ok := s.opts.Costs.Pool(ch.Pool)
		if !ok || ch.Units <= 0 || ms <= now-p.Window.Milliseconds() {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, s.opts.QuotaKey, ch.Pool, c.ID, ms, ch.Units)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}

// Lock takes the lease name in the locks table for ttl with a random token
// and renews it every ttl/3 until unlock; only the holder can renew or
// release it. Lease times are the wall clock of the processes sharing the
// file, one host.
func (s *SQLite) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	tok := token()
	tctx, cancel := context.WithTimeout(ctx, max(s.opts.Timeout, 5*time.Second))
	defer cancel()
	now := time.Now().UnixMilli()
	res, err := s.db.ExecContext(tctx, `INSERT INTO locks (name, token, expires_ms) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms
		WHERE locks.expires_ms <= ?`, name, tok, now+ttl.Milliseconds(), now)
	if err != nil {
		return func() {}, false, fmt.Errorf("quota: lock %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return func() {}, false, nil
	}
	l := lease{
		ttl: ttl, log: s.opts.Logger.With("lock", name),
		renew: func(ctx context.Context) (bool, error) {
			res, err := s.db.ExecContext(ctx, `UPDATE locks SET expires_ms = ? WHERE name = ? AND token = ?`,
				time.Now().UnixMilli()+ttl.Milliseconds(), name, tok)
			if err != nil {
				return false, err
			}
			n, _ := res.RowsAffected()
			return n == 1, nil
		},
		release: func(ctx context.Context) error {
			_, err := s.db.ExecContext(ctx, `DELETE FROM locks WHERE name = ? AND token = ?`, name, tok)
			return err
		},
	}
	return l.start(), true, nil
}
