package jobs

import (
	"context"
	"fmt"

	"github.com/ingestworks/ingest"
)

// Ledger keeps every admitted call, and every block the upstream caused.
type Ledger interface {
	RecordCall(ctx context.Context, call ingest.Call) error
	RecordBlock(ctx context.Context, b ingest.Block) error
	// RecordGiveBack marks a call that never reached the upstream.
	RecordGiveBack(ctx context.Context, call ingest.Call) error
}

// meter takes quota before every upstream attempt of one run and writes
// each admitted call to the ledger before the call is made, so that a crash
// never loses a charge.
type meter struct {
	limiter  Limiter
	ledger   Ledger
	quotaKey string
	region   string
	runID    int64
	// units is what the run's calls took, by pool.
	units map[string]int64
	// remaining is what the default pool had left after the last metered
	// decision, -1 before any.
	remaining int64
}

func newMeter(l Limiter, ledger Ledger, quotaKey, region string, runID int64) *meter {
	return &meter{limiter: l, ledger: ledger, quotaKey: quotaKey, region: region, runID: runID,
		units: map[string]int64{}, remaining: -1}
}

// gate is the meter as the upstream client calls it.
func (m *meter) gate(ctx context.Context, op string) (func(context.Context) error, error) {
	d, err := m.limiter.Take(ctx, op)
	if err != nil {
		// The limiter names itself, and the caller names the operation.
		return ingest.NoGiveBack, err
	}
	for _, s := range d.Pools {
		if s.Pool == ingest.DefaultPool && !d.Unmetered {
			m.remaining = s.Remaining
		}
	}
	if !d.Allowed {
		return ingest.NoGiveBack, &ingest.RefusedError{Decision: d}
	}
	for _, c := range d.Charges {
		m.units[c.Pool] += c.Units
	}
	call := ingest.Call{QuotaKey: m.quotaKey, ID: d.ID, At: d.At, Op: op, Region: m.region,
		RunID: m.runID, Charges: d.Charges, Unmetered: d.Unmetered}
	if err := m.ledger.RecordCall(context.WithoutCancel(ctx), call); err != nil {
		return ingest.NoGiveBack, fmt.Errorf("ledger: %w", err)
	}
	return func(ctx context.Context) error { return m.giveBack(ctx, call) }, nil
}

// giveBack returns the units of a call that never reached the upstream to
// the limiter (a metered one), and marks it in the ledger, which then says
// what the upstream charged.
func (m *meter) giveBack(ctx context.Context, call ingest.Call) error {
	if !call.Unmetered {
		if err := m.limiter.Refund(ctx, call); err != nil {
			return fmt.Errorf("give back: %w", err)
		}
	}
	if err := m.ledger.RecordGiveBack(ctx, call); err != nil {
		return fmt.Errorf("ledger give back: %w", err)
	}
	for _, c := range call.Charges {
		m.units[c.Pool] -= c.Units
	}
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
// check's key test): quota first, then the ledger, then the call.
func Gate(l Limiter, ledger Ledger, quotaKey, region string) ingest.Gate {
	return newMeter(l, ledger, quotaKey, region, 0).gate
}
