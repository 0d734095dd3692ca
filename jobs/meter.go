package jobs

import (
	"context"

	"github.com/ingestworks/ingest"
)

// meter takes quota before every upstream attempt of one run. The limiter
// writes each admitted call to its ledger before it answers, with the run
// and region the meter names, so that a crash never loses a charge.
type meter struct {
	limiter  Limiter
	quotaKey string
	by       ingest.Caller
	// units is what the run's calls took, by pool.
	units map[string]int64
	// daily is the part of units the run's calls outside its pass's own
	// cost took: the category names a region's first pass of a day reads,
	// which pacing keeps room for apart rather than in a pass's cost.
	daily map[string]int64
	// remaining is what the default pool had left after the last metered
	// decision, -1 before any.
	remaining int64
	// left is what each pool had left after the last metered decision
	// that drew from it.
	left map[string]int64
	// room, when set, says before each call whether the store has room for
	// what it brings (roomer); a unit is never spent on a page that cannot
	// be kept.
	room func(context.Context) error
}

// roomer is a store that can tell, before a call, that it has no room for
// what the call brings (an error matching ingest.ErrDiskFull).
type roomer interface {
	Room(ctx context.Context) error
}

func newMeter(l Limiter, quotaKey, region string, runID int64) *meter {
	return &meter{limiter: l, quotaKey: quotaKey, by: ingest.Caller{Region: region, RunID: runID},
		units: map[string]int64{}, daily: map[string]int64{}, remaining: -1, left: map[string]int64{}}
}

// count adds sign times a call's charges to what the run took.
func (m *meter) count(op string, charges []ingest.Charge, sign int64) {
	for _, c := range charges {
		m.units[c.Pool] += sign * c.Units
		if op == ingest.OpCategoriesList {
			m.daily[c.Pool] += sign * c.Units
		}
	}
}

// gate is the meter as the upstream client calls it.
func (m *meter) gate(ctx context.Context, op string) (func(context.Context) error, error) {
	if m.room != nil {
		if err := m.room(ctx); err != nil {
			return ingest.NoGiveBack, err
		}
	}
	d, err := m.limiter.Take(ctx, m.by, op)
	if err != nil {
		// The limiter names itself, and the caller names the operation.
		return ingest.NoGiveBack, err
	}
	for _, s := range d.Pools {
		if d.Unmetered {
			continue
		}
		if s.Pool == ingest.DefaultPool {
			m.remaining = s.Remaining
		}
		m.left[s.Pool] = s.Remaining
	}
	if !d.Allowed {
		return ingest.NoGiveBack, &ingest.RefusedError{Decision: d}
	}
	m.count(op, d.Charges, 1)
	call := d.Call(m.quotaKey, m.by)
	return func(ctx context.Context) error { return m.giveBack(ctx, call) }, nil
}

// giveBack returns the units of a call that never reached the upstream to
// the limiter, which marks it in the ledger, which then says what the
// upstream charged.
func (m *meter) giveBack(ctx context.Context, call ingest.Call) error {
	if err := m.limiter.Refund(ctx, call); err != nil {
		return err
	}
	m.count(call.Op, call.Charges, -1)
	return nil
}

// Sum is every unit of a per-pool count, all pools together.
func Sum(units map[string]int64) int64 {
	var n int64
	for _, u := range units {
		n += u
	}
	return n
}

// Gate returns the gate a one-off call outside a run goes through (ingest
// check's key test): quota first, which the limiter's ledger keeps, then
// the call.
func Gate(l Limiter, quotaKey, region string) ingest.Gate {
	return newMeter(l, quotaKey, region, 0).gate
}

// Counted is Gate for calls a run makes on its own behalf outside its
// passes (the region catalogue read before them), with the units they took
// by pool, kept as they are taken: run --once's summary counts them.
func Counted(l Limiter, quotaKey, region string) (ingest.Gate, map[string]int64) {
	m := newMeter(l, quotaKey, region, 0)
	return m.gate, m.units
}

// ClientGate is Gate for the calls the proxy forwards for client (its
// token's name): the same limiter and ledger as the daemon's, each call
// written with its client before it is sent.
func ClientGate(l Limiter, quotaKey, client string) ingest.Gate {
	m := newMeter(l, quotaKey, "", 0)
	m.by.Client = client
	return m.gate
}
