package quota

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// UnknownLedger keeps unknown decisions until they are reconciled, so that
// a worker that stops in between leaves them to the next one on the ledger.
type UnknownLedger interface {
	RecordUnknown(ctx context.Context, u ingest.Unknown) error
	Unknowns(ctx context.Context, quotaKey string) ([]ingest.Unknown, error)
	// ResolveUnknown ends u. call is the call Redis had admitted for it,
	// which the limiter has given back since it was never made: the ledger
	// records it as admitted and given back. nil: Redis never admitted it,
	// and never will. at is when, on the house clock.
	ResolveUnknown(ctx context.Context, u ingest.Unknown, call *ingest.Call, at time.Time) error
}

// pending holds this limiter's unknown decisions.
type pending struct {
	mu     sync.Mutex // one reconciliation at a time; guards list
	list   []ingest.Unknown
	loaded bool         // the ledger's unknowns were read
	n      atomic.Int32 // len(list), and 1 until loaded
}

// gaveUp records a spend whose outcome is unknown.
func (r *Redis) gaveUp(ctx context.Context, op string, cs []charge, token int64) {
	u := ingest.Unknown{QuotaKey: r.opts.QuotaKey, Instance: r.inst, Token: token, Op: op, At: r.opts.Now()}
	for _, c := range cs {
		u.Charges = append(u.Charges, ingest.Charge{Pool: c.pool.Name, Units: c.units})
	}
	if err := r.opts.Unknowns.RecordUnknown(context.WithoutCancel(ctx), u); err != nil {
		r.opts.Logger.Warn("record a decision of unknown outcome", ingest.LogOp, op, ingest.LogErr, err)
	}
	r.pend.mu.Lock()
	r.pend.list = append(r.pend.list, u)
	r.pend.n.Add(1)
	r.pend.mu.Unlock()
}

// reconcile settles the unknown decisions once Redis answers again: Redis
// says under which id it admitted each, if it did, and fences its token so
// that a request still on its way is refused. An admitted call was never
// made, so it is given back, in Redis and in the ledger alike.
func (r *Redis) reconcile(ctx context.Context) {
	if r.pend.n.Load() == 0 || !r.pend.mu.TryLock() {
		return
	}
	defer r.pend.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if !r.pend.loaded {
		if err := r.loadUnknowns(ctx); err != nil {
			r.opts.Logger.Warn("read the decisions of unknown outcome", ingest.LogErr, err)
			return
		}
	}
	byInst := map[string][]ingest.Unknown{}
	for _, u := range r.pend.list {
		byInst[u.Instance] = append(byInst[u.Instance], u)
	}
	var left []ingest.Unknown
	for inst, us := range byInst {
		left = append(left, r.reconcileInstance(ctx, inst, us)...)
	}
	r.pend.list = left
	r.pend.n.Store(int32(len(left)))
}

func (r *Redis) loadUnknowns(ctx context.Context) error {
	us, err := r.opts.Unknowns.Unknowns(ctx, r.opts.QuotaKey)
	if err != nil {
		return err
	}
	for _, u := range us {
		if !slices.ContainsFunc(r.pend.list, func(p ingest.Unknown) bool { return p.Instance == u.Instance && p.Token == u.Token }) {
			r.pend.list = append(r.pend.list, u)
		}
	}
	r.pend.loaded = true
	return nil
}

// reconcileInstance settles one instance's unknowns and returns those
// still unsettled (Redis did not answer, or a give-back failed).
func (r *Redis) reconcileInstance(ctx context.Context, inst string, us []ingest.Unknown) []ingest.Unknown {
	a := r.base(nil, one)
	for _, u := range us {
		a.Tokens = append(a.Tokens, u.Token)
	}
	rep, err := r.run(ctx, 5*time.Second, "reconcile", inst, a)
	ids := rep.IDs
	if err != nil || len(ids) != len(us) {
		r.opts.Logger.Warn("reconcile the decisions of unknown outcome", ingest.LogErr, err, "replies", len(ids), "want", len(us))
		return us
	}
	var left []ingest.Unknown
	for i, u := range us {
		if err := r.settle(ctx, u, ids[i]); err != nil {
			r.opts.Logger.Warn("reconcile a decision of unknown outcome", ingest.LogOp, u.Op, ingest.LogErr, err)
			left = append(left, u)
		}
	}
	return left
}

// settle ends one unknown decision: id is what Redis admitted it under,
// "" if it never did, "?" if Redis can no longer tell.
func (r *Redis) settle(ctx context.Context, u ingest.Unknown, id string) error {
	var call *ingest.Call
	switch id {
	case "?":
		r.opts.Logger.Warn("a decision of unknown outcome can no longer be told: if Redis admitted it, its units stay counted though the call was not made",
			"op", u.Op, "token", u.Token)
	case "":
	default:
		ms, _, err := parseID(id)
		if err != nil {
			return err
		}
		call = &ingest.Call{QuotaKey: u.QuotaKey, ID: id, At: time.UnixMilli(ms).UTC(), Op: u.Op, Charges: u.Charges}
		if err := r.drop(ctx, *call); err != nil {
			return fmt.Errorf("refund %s: %w", id, err)
		}
		r.opts.Logger.Info("a call Redis admitted after this worker gave up on it was given back", ingest.LogOp, u.Op, ingest.LogID, id)
	}
	if err := r.opts.Unknowns.ResolveUnknown(ctx, u, call, r.opts.Now()); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}
