package quota

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// failPolicy decides a call while Redis cannot be reached: it goes ahead
// unmetered only when every pool it draws from has a fail_open policy, the
// charge is at most its max_cost, and the units this ledger took unmetered
// in the pool over its window stay within its budget. The count comes from
// the ledger, so that every process on the database shares one budget
// across outages, and the count and the grant are one write transaction on
// it (Grant), so that processes deciding at the same moment share it too.
type failPolicy struct {
	opts settings

	mu   sync.Mutex
	down atomic.Bool // changed under mu; read without it on every answer
	// pending: an earlier process's outage left unmetered calls that the
	// first answer writes into the window; this process saw no outage.
	pending atomic.Bool
	// What this process's outage cost, said when it ends: since when, and
	// the calls and units it let through unmetered. Under mu.
	since, said  time.Time
	calls, units int64
	// never and addr, when set (Redis), tell an outage from a limiter this
	// process never reached, and where it dials.
	never func() bool
	addr  func() string
}

// start begins an outage at its first sign: said once, with what a limiter
// never reached since the start may be instead. Under mu.
func (f *failPolicy) start(cause error) {
	f.down.Store(true)
	f.since, f.said, f.calls, f.units = f.opts.Now(), f.opts.Now(), 0, 0
	if f.never != nil && f.never() {
		f.opts.Logger.Warn("quota limiter unreachable, and never reached since this process started (a mistyped REDIS_URL looks the same as an outage): "+
			"cheap calls go ahead unmetered within each pool's fail_open budget", "redis", f.addr(), ingest.LogErr, cause)
		return
	}
	f.opts.Logger.Warn("quota limiter unreachable: cheap calls go ahead unmetered within each pool's fail_open budget", ingest.LogErr, cause)
}

// unreachable notes, from a heartbeat with no call to decide, that the
// limiter does not answer: an outage with no pass due is said too, when it
// starts and at most every remindEvery while it lasts, with what it let
// through unmetered so far.
func (f *failPolicy) unreachable(cause error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	switch {
	case !f.down.Load():
		f.start(cause)
	case now.Sub(f.said) >= remindEvery:
		f.said = now
		f.opts.Logger.Warn("quota limiter still unreachable", "since", f.since.UTC().Format(time.RFC3339),
			"unmetered_calls", f.calls, "unmetered_units", f.units, ingest.LogErr, cause)
	}
}

// open decides a call while the limiter is unreachable.
func (f *failPolicy) open(ctx context.Context, by ingest.Caller, op string, cs []charge, cause error) (ingest.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down.Load() {
		f.start(cause)
	}
	for _, c := range cs {
		fo := c.pool.FailOpen
		switch {
		case fo.MaxCost == 0:
			return ingest.Decision{}, fmt.Errorf("limiter: %w (pool %s has no fail_open): %w", ErrUnavailable, c.pool.Name, cause)
		case c.units > fo.MaxCost:
			return ingest.Decision{}, fmt.Errorf("limiter: %w (%d units in pool %s, fail_open.max_cost %d): %w",
				ErrUnavailable, c.units, c.pool.Name, fo.MaxCost, cause)
		}
	}
	now := f.opts.Now()
	d := ingest.Decision{Allowed: true, Unmetered: true, At: now, Op: op, ID: unmeteredID(now)}
	for _, c := range cs {
		d.Charges = append(d.Charges, ingest.Charge{Pool: c.pool.Name, Units: c.units})
	}
	call := d.Call(f.opts.QuotaKey, by)
	var used map[string]int64
	var refused error
	since := now.Add(-f.opts.Costs.Span())
	err := f.opts.Grant.GrantUnmetered(ctx, f.opts.QuotaKey, since, func(calls []ingest.Call) (*ingest.Call, error) {
		used = f.count(calls, now)
		if refused = within(cs, used, cause); refused != nil {
			return nil, refused
		}
		return &call, nil
	})
	switch {
	case refused != nil:
		return ingest.Decision{}, refused
	case err != nil:
		return ingest.Decision{}, fmt.Errorf("limiter: %w, and the fail_open budget cannot be counted: %w", ErrUnavailable, err)
	}
	f.calls++
	for _, c := range cs {
		f.units += c.units
		f.opts.Logger.Info("admitted unmetered while the limiter is unreachable", ingest.LogOp, op, "pool", c.pool.Name,
			"budget_used", used[c.pool.Name]+c.units, "budget", c.pool.FailOpen.Budget)
	}
	return d, nil
}

// count is what calls took unmetered per pool over its window before now.
func (f *failPolicy) count(calls []ingest.Call, now time.Time) map[string]int64 {
	out := map[string]int64{}
	for _, c := range calls {
		if !c.Unmetered {
			continue
		}
		for _, ch := range c.Charges {
			if p, ok := f.opts.Costs.Pool(ch.Pool); ok && c.At.After(now.Add(-p.Window)) {
				out[ch.Pool] += ch.Units
			}
		}
	}
	return out
}

// within refuses a charge that would take a pool past its fail_open budget.
func within(cs []charge, used map[string]int64, cause error) error {
	for _, c := range cs {
		if b := c.pool.FailOpen.Budget; used[c.pool.Name]+c.units > b {
			return fmt.Errorf("limiter: %w (pool %s took its fail_open.budget of %d units unmetered in the last %s): %w",
				ErrUnavailable, c.pool.Name, b, c.pool.Window, cause)
		}
	}
	return nil
}

// up notes that the outage is over: its unmetered calls are written back.
// Only an outage this process saw ends in a line, with what it cost; an
// earlier process's calls written back are said at debug.
func (f *failPolicy) up() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending.Swap(false) && !f.down.Load() {
		f.opts.Logger.Debug("an earlier process's unmetered calls written into the limiter")
	}
	if f.down.Swap(false) {
		f.opts.Logger.Info("quota limiter reachable again", "down_for", f.opts.Now().Sub(f.since).Round(time.Second).String(),
			"unmetered_calls", f.calls, "unmetered_units", f.units)
	}
}

// behind reports whether unmetered calls wait to be written into the
// window: this process's outage, or an earlier one's.
func (f *failPolicy) behind() bool { return f.down.Load() || f.pending.Load() }
