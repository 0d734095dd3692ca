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
// each pool, and what the daemon's published plan needs for its tier-1
// charts until the pool frees kept from every client.
type budgets struct {
	plans    *ratelimit.APIPlans
	books    Books
	state    func(context.Context) ([]ingest.PoolState, error)
	costs    *ingest.Costs
	quotaKey string
	clock    ingest.Clock
	// mu makes a client's budget read and its call taken one step in this
	// process, so that calls at once never pass a share together.
	mu sync.Mutex
}

// notGranted is a call a client's plan does not allow at any time.
type notGranted struct{ msg string }

func (e *notGranted) Error() string { return e.msg }

// overBudget is a call the client's budget has no room for now.
type overBudget struct{ r refusal }

func (e *overBudget) Error() string { return e.r.budget + ": " + e.r.why }

// gate is inner, the limiter's gate, behind the client's budget.
func (b *budgets) gate(inner ingest.Gate, client, plan string) ingest.Gate {
	return func(ctx context.Context, op string) (func(context.Context) error, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if err := b.admit(ctx, client, plan, op); err != nil {
			return ingest.NoGiveBack, err
		}
		return inner(ctx, op)
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
	if err := b.share(ctx, client, pp, charges, now); err != nil {
		return err
	}
	return b.daemonFirst(ctx, charges, now)
}

// share refuses a call past the client's daily share of a pool, counted
// from the ledger since the start of the upstream's day.
func (b *budgets) share(ctx context.Context, client string, pp ratelimit.ProxyPlan, charges []ingest.Charge, now time.Time) error {
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
		if used := spent[client][c.Pool]; capped && used+c.Units > daily {
			return &overBudget{refusal{budget: fmt.Sprintf("client %s's daily share of pool %s", client, c.Pool),
				limit: daily, window: 24 * time.Hour, remaining: daily - used, freeAt: reset, spent: true,
				why: fmt.Sprintf("%d of %d units spent today", used, daily)}}
		}
	}
	return nil
}

// daemonFirst refuses a call that would take what the daemon's published
// plan needs for its tier-1 charts before the pool frees: the clients
// spend what the plan leaves.
func (b *budgets) daemonFirst(ctx context.Context, charges []ingest.Charge, now time.Time) error {
	st, ok, err := b.published(ctx, now)
	if err != nil || !ok {
		return err
	}
	pools, err := b.state(ctx)
	if err != nil {
		return fmt.Errorf("read the pools: %w", err)
	}
	for _, c := range charges {
		need, end := st.Kept(c.Pool, now)
		if need == 0 {
			continue
		}
		for _, s := range pools {
			if s.Pool != c.Pool || s.Remaining-need >= c.Units {
				continue
			}
			p, _ := b.costs.Pool(c.Pool)
			return &overBudget{refusal{budget: "pool " + c.Pool + "'s part left to clients", limit: p.Capacity(), window: p.Window,
				remaining: max(s.Remaining-need, 0), freeAt: end, spent: !end.Before(ingest.UpstreamReset(now).Add(-time.Minute)),
				why: fmt.Sprintf("the daemon's plan keeps %d of the %d units left for its tier-1 charts", need, s.Remaining)}}
		}
	}
	return nil
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
