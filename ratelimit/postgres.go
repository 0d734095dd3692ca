package ratelimit

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// allowSQL is one decision: GCRA's step as one upsert on the client's row
// of api_limits, by the server's clock. Concurrent requests of one client
// take turns on its row lock; each re-reads the row the previous one left
// (read committed), so hosts on one database share each count exactly. The
// SET expressions all see the row as it was, so allowed and tat agree.
const allowSQL = `WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now)
INSERT INTO api_limits AS l (key, tat, at, allowed)
SELECT $1, c.now + $2::bigint, c.now, true FROM c
ON CONFLICT (key) DO UPDATE SET
  allowed = greatest(l.tat, excluded.at) + $2::bigint - excluded.at <= $3::bigint,
  tat = CASE WHEN greatest(l.tat, excluded.at) + $2::bigint - excluded.at <= $3::bigint
             THEN greatest(l.tat, excluded.at) + $2::bigint ELSE l.tat END,
  at = excluded.at
RETURNING allowed, at, tat`

// sweepSQL forgets the clients whose tat has passed: their rows say
// nothing an absent row does not.
const sweepSQL = `DELETE FROM api_limits WHERE tat < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`

// pgSweepEvery is how often one process sweeps api_limits.
const pgSweepEvery = 10 * time.Minute

// Postgres keeps the counts in the database's api_limits table (schema
// step 4, unlogged: a crash of the server empties it), shared by every
// host on it.
type Postgres struct {
	db    *sql.DB
	swept atomic.Int64 // unix ms of the last sweep
}

// NewPostgres returns a limiter on db, whose schema has api_limits.
func NewPostgres(db *sql.DB) *Postgres {
	p := &Postgres{db: db}
	p.swept.Store(time.Now().UnixMilli())
	return p
}

// Backend is "postgres".
func (p *Postgres) Backend() string { return "postgres" }

// Allow decides one request of client on plan.
func (p *Postgres) Allow(ctx context.Context, plan APIPlan, client string, cost int64) (Result, error) {
	r, err := ruleOf(plan, cost)
	if err != nil {
		return Result{}, err
	}
	p.sweep(ctx)
	var ok bool
	var now, tat int64
	err = p.db.QueryRowContext(ctx, allowSQL, key(plan, client), cost*r.interval, r.tolerance).Scan(&ok, &now, &tat)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: postgres: %w", err)
	}
	return r.result(ok, now, tat, cost), nil
}

// sweep runs sweepSQL when pgSweepEvery has passed since this process's
// last: one request in a while pays for one more statement. A sweep that
// fails is only late: the next period tries again, and a database that
// cannot answer fails the decision's own statement.
func (p *Postgres) sweep(ctx context.Context) {
	last, now := p.swept.Load(), time.Now().UnixMilli()
	if now-last < pgSweepEvery.Milliseconds() || !p.swept.CompareAndSwap(last, now) {
		return
	}
	_, _ = p.db.ExecContext(ctx, sweepSQL)
}
