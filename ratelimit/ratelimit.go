// Package ratelimit meters the read API's clients, per plan and client,
// with the generic cell rate algorithm (GCRA): each client is one number,
// the theoretical arrival time (TAT) its spending has reached, so a
// decision costs one short step wherever the number lives: in the process
// (one host), in Redis (one script, one round trip, shared by every
// serve), or in PostgreSQL (one upsert, shared by every host).
//
// It is not the upstream's limiter (package quota): API requests are
// reads, cheap to serve and to serve again, and need no ledger, receipts or
// recovery. A lost count (a Redis restart, a PostgreSQL crash) gives the
// clients a fresh burst; that is the price of a decision that writes one
// number.
//
// The bound, for a plan of limit L over window W with burst B: a unit
// comes back every T = W/(L-B+1) (rounded up to the microsecond), and a
// request is admitted when the TAT after it stays within B·T of now. Over
// any trailing window the admitted units are then fewer than W/T + B, so at
// most L (docs/api.md proves it). A token bucket of capacity L refilling L
// a window would admit up to 2L.
//
// What is where: the API clients' request limiter, GCRA per plan and client,
// not the upstream's: in the process, on Redis (gcra.lua, pipelined) or in
// PostgreSQL (one upsert, clients.Counts); the bound's oracle test
// (docs/api.md); the plans it meters by (APIPlans, the built-in
// apiplans.yaml, read as strictly as costs.yaml).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Result is one decision.
type Result struct {
	Allowed bool
	// Remaining is the units the client may spend at once after this
	// decision: at most the plan's burst.
	Remaining int64
	// Wait is how long until a request of the same cost fits: 0 when it
	// does now; on a refusal, until this one would have.
	Wait time.Duration
	// At is the limiter's clock when it decided.
	At time.Time
}

// Limiter decides API requests. A refusal is a Result; an error is a
// limiter that could not decide.
type Limiter interface {
	Allow(ctx context.Context, plan APIPlan, client string, cost int64) (Result, error)
	// Backend names where the counts live: memory, redis or postgres.
	Backend() string
}

// ErrCost is a request dearer than its plan's burst: it could never be
// admitted. The plans file refuses such a route when it is loaded.
var ErrCost = errors.New("ratelimit: the cost is above the plan's burst")

// rule is a plan in the limiter's microseconds: a unit comes back every
// interval; a client may be at most tolerance ahead of now.
type rule struct{ interval, tolerance int64 }

func ruleOf(p APIPlan, cost int64) (rule, error) {
	if cost < 1 || cost > p.Burst {
		return rule{}, fmt.Errorf("%w: plan %s, burst %d, cost %d", ErrCost, p.Name, p.Burst, cost)
	}
	t := p.Interval().Microseconds()
	return rule{interval: t, tolerance: p.Burst * t}, nil
}

// decide is GCRA's step: from the client's tat and the clock now, whether
// cost is admitted and the tat after it. A client idle since its tat
// starts from now, so an idle client never banks more than its burst.
func (r rule) decide(tat, now, cost int64) (bool, int64) {
	next := max(tat, now) + cost*r.interval
	if next-now > r.tolerance {
		return false, tat
	}
	return true, next
}

// result reads a decision's figures from the tat after it.
func (r rule) result(allowed bool, now, tat, cost int64) Result {
	ahead := max(tat-now, 0)
	return Result{
		Allowed:   allowed,
		Remaining: max(r.tolerance-ahead, 0) / r.interval,
		Wait:      time.Duration(max(ahead+cost*r.interval-r.tolerance, 0)) * time.Microsecond,
		At:        time.UnixMicro(now),
	}
}

// key names a client of a plan in a backend: a client on two plans (a
// token moved to another) has two counts.
func key(plan APIPlan, client string) string { return plan.Name + ":" + client }
