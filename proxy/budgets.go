package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/ratelimit"
)

// Books is what a client's budget is read from, in the database the
// limiter's ledger is kept in (*ledger.Ledger): what each client spent of
// the day, and the plan the daemon published.
type Books interface {
	ClientUnits(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]int64, error)
	Plan(ctx context.Context, quotaKey string) (plan []byte, at time.Time, ok bool, err error)
}

// budgets decides, before the limiter is asked, whether a client's plan
// lets it make a call: the operation within its plan, its daily share of
// each pool, what the daemon's published plan needs for its tier-1
// charts kept from every client, and the shares of
// the plans of an earlier priority kept from those of a later one.
type budgets struct {
	plans    *ratelimit.APIPlans
	books    Books
	state    func(context.Context) ([]ingest.PoolState, error)
	costs    *ingest.Costs
	quotaKey string
	clock    ingest.Clock
	// mu makes a client's budget read and its call taken one step in this
	// process, so that its calls at once seldom meet at a share's edge;
	// across processes the count after the take (gate) is what holds it.
	mu sync.Mutex
}

// notGranted is a call a client's plan does not allow at any time.
type notGranted struct{ msg string }

func (e *notGranted) Error() string { return e.msg }

// overBudget is a call the client's budget has no room for now.
type overBudget struct{ r refusal }

func (e *overBudget) Error() string { return e.r.budget + ": " + e.r.why }

// gate is inner, the limiter's gate, behind the client's budget. A call
// the limiter took is counted against the client's daily share again, in
// the ledger that holds it now, and given back unsent when the share is
// past: the limiter writes every call it admits to the ledger before it
// answers, so of the calls of every proxy process on the ledger, the last
// one written that is sent counted all the others sent before it, and
// none is sent past the share. Calls that meet at the edge may both be
// given back, never both sent.
func (b *budgets) gate(inner ingest.Gate, client, plan string) ingest.Gate {
	return func(ctx context.Context, op string) (func(context.Context) error, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if err := b.admit(ctx, client, plan, op); err != nil {
			return ingest.NoGiveBack, err
		}
		giveBack, err := inner(ctx, op)
		if err != nil {
			return giveBack, err
		}
		charges, _ := b.costs.Op(op) // admit read it
		if err := b.share(ctx, client, b.plans.ProxyOf(plan), charges, b.clock.Now(), true); err != nil {
			if gb := giveBack(ctx); gb != nil {
				return ingest.NoGiveBack, fmt.Errorf("give back a call past the share: %w", gb)
			}
			return ingest.NoGiveBack, err
		}
		return giveBack, nil
	}
}

// admit is nil when client, on plan, may make a call of op now.
func (b *budgets) admit(ctx context.Context, client, plan, op string) error {
	charges, err := b.costs.Op(op)
	if err != nil {
		return err
	}
	pp := b.plans.ProxyOf(plan)
	if units := sum(charges); !pp.Allows(op, units) {
		return &notGranted{fmt.Sprintf("ingest proxy: plan %s does not grant %s, which costs %d units (its max_cost is %d): ask the operator to grant it",
			plan, op, units, pp.MaxCost)}
	}
	now := b.clock.Now()
	if err := b.share(ctx, client, pp, charges, now, false); err != nil {
		return err
	}
	return b.leftToClients(ctx, plan, charges, now)
}

// share refuses a call past the client's daily share of a pool, counted
// from the ledger since the start of the upstream's day; taken says the
// ledger holds the call already.
func (b *budgets) share(ctx context.Context, client string, pp ratelimit.ProxyPlan, charges []ingest.Charge, now time.Time, taken bool) error {
	if len(pp.Daily) == 0 {
		return nil
	}
	reset := ingest.UpstreamReset(now)
	spent, err := b.books.ClientUnits(ctx, b.quotaKey, reset.AddDate(0, 0, -1))
	if err != nil {
		return fmt.Errorf("read the clients' spend: %w", err)
	}
	for _, c := range charges {
		daily, capped := pp.Daily[c.Pool]
		used := spent[client][c.Pool]
		if taken {
			used -= c.Units
		}
		if capped && used+c.Units > daily {
			return &overBudget{refusal{budget: fmt.Sprintf("client %s's daily share of pool %s", client, c.Pool),
				limit: daily, window: 24 * time.Hour, remaining: daily - used, freeAt: reset, spent: true,
				why: fmt.Sprintf("%d of %d units spent today", used, daily)}}
		}
	}
	return nil
}

// leftToClients refuses a call that would take what the daemon's
// published plan needs for its tier-1 charts (pace.Status.LeftBeside: in
// the pool's window over the next whole window, in its day to the reset),
// or, of what that leaves to clients, the floor the plans before the
// client's own keep (ratelimit.APIPlans.FloorOf): the clients spend what
// the daemon's plan leaves, the later priorities what the earlier ones'
// shares leave.
func (b *budgets) leftToClients(ctx context.Context, plan string, charges []ingest.Charge, now time.Time) error {
	st, paced, err := b.published(ctx, now)
	if err != nil {
		return err
	}
	var pools []ingest.PoolState
	for _, c := range charges {
		floor := b.plans.FloorOf(plan, c.Pool)
		if !paced && floor == 0 {
			continue
		}
		if pools == nil {
			if pools, err = b.state(ctx); err != nil {
				return fmt.Errorf("read the pools: %w", err)
			}
		}
		for _, s := range pools {
			left := pace.Left{Units: s.Remaining, Room: s.Remaining, End: ingest.UpstreamReset(now)}
			if paced {
				left = st.LeftBeside(s, now)
			}
			if s.Pool != c.Pool || left.Units-floor >= c.Units {
				continue
			}
			return &overBudget{b.leftRefusal(plan, c, left, floor, now)}
		}
	}
	return nil
}

// leftRefusal says which part left to clients has no room for charge c:
// what the daemon's plan keeps, or the floor of the plans before plan.
func (b *budgets) leftRefusal(plan string, c ingest.Charge, left pace.Left, floor int64, now time.Time) refusal {
	p, _ := b.costs.Pool(c.Pool)
	of := "the pool's day until its reset"
	if left.Window {
		of = "the pool's window over the next whole window"
	}
	r := refusal{budget: "pool " + c.Pool + "'s part left to clients", limit: p.Capacity(), window: p.Window,
		remaining: left.Units, freeAt: left.End,
		why: fmt.Sprintf("the daemon's plan keeps %d of the %d units left for its tier-1 charts, their need in %s", left.Kept, left.Room, of)}
	if left.Units >= c.Units {
		pri := b.plans.ProxyOf(plan).Priority
		r.budget = fmt.Sprintf("pool %s's part left to clients of priority %d", c.Pool, pri)
		r.remaining = max(left.Units-floor, 0)
		r.why = fmt.Sprintf("of the %d units left to clients, the plans of an earlier priority than %d keep %d, their daily shares",
			left.Units, pri, floor)
	}
	r.spent = !r.freeAt.Before(ingest.UpstreamReset(now).Add(-time.Minute))
	return r
}

// published is the daemon's plan, when a daemon paces this quota key now.
func (b *budgets) published(ctx context.Context, now time.Time) (pace.Status, bool, error) {
	doc, _, ok, err := b.books.Plan(ctx, b.quotaKey)
	if err != nil || !ok {
		return pace.Status{}, false, err
	}
	var st pace.Status
	if json.Unmarshal(doc, &st) != nil || st.Stale(now) {
		return pace.Status{}, false, nil // no daemon paces now: nothing to keep for one
	}
	return st, true, nil
}
