package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// pgSweepEvery is how often one process sweeps api_limits.
const pgSweepEvery = 10 * time.Minute

// Counts are the clients' counts in a database shared by every host on it
// (the database's api_limits: clients.Clients.Counts), which holds the SQL.
type Counts interface {
	// Allow is GCRA's step on key's row, by the database's clock in µs:
	// the row's tat moves by increment when it stays within tolerance.
	Allow(ctx context.Context, key string, increment, tolerance int64) (ok bool, now, tat int64, err error)
	// Sweep forgets the keys whose tat has passed.
	Sweep(ctx context.Context) error
}

// Postgres keeps the counts in the database (Counts), shared by every
// host on it.
type Postgres struct {
	db    Counts
	swept atomic.Int64 // unix ms of the last sweep
}

// NewPostgres returns a limiter on the database's counts.
func NewPostgres(db Counts) *Postgres {
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
	ok, now, tat, err := p.db.Allow(ctx, key(plan, client), cost*r.interval, r.tolerance)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: postgres: %w", err)
	}
	return r.result(ok, now, tat, cost), nil
}

// sweep runs Counts.Sweep when pgSweepEvery has passed since this process's
// last: one request in a while pays for one more statement. A sweep that
// fails is only late: the next period tries again, and a database that
// cannot answer fails the decision's own statement.
func (p *Postgres) sweep(ctx context.Context) {
	last, now := p.swept.Load(), time.Now().UnixMilli()
	if now-last < pgSweepEvery.Milliseconds() || !p.swept.CompareAndSwap(last, now) {
		return
	}
	_ = p.db.Sweep(ctx)
}
