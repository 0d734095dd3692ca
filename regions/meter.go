package regions

import (
	"context"
	"errors"
	"fmt"
	"time"

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
		return ingest.NoGiveBack, fmt.Errorf("quota %s: %w", op, err)
	}
	for _, s := range d.Pools {
		if s.Pool == DefaultPool && !d.Unmetered {
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
		return ingest.NoGiveBack, fmt.Errorf("ledger %s: %w", op, err)
	}
	return func(ctx context.Context) error { return m.giveBack(ctx, call) }, nil
}

// giveBack returns the units of a call that never reached the upstream to
// the limiter (a metered one), and marks it in the ledger, which then says
// what the upstream charged.
func (m *meter) giveBack(ctx context.Context, call ingest.Call) error {
	if !call.Unmetered {
		if err := m.limiter.Refund(ctx, call); err != nil {
			return fmt.Errorf("give back %s: %w", call.Op, err)
		}
	}
	if err := m.ledger.RecordGiveBack(ctx, call); err != nil {
		return fmt.Errorf("ledger give back %s: %w", call.Op, err)
	}
	for _, c := range call.Charges {
		m.units[c.Pool] -= c.Units
	}
	return nil
}

// total is every unit the run took, all pools together.
func (m *meter) total() int64 {
	var n int64
	for _, u := range m.units {
		n += u
	}
	return n
}

// quotaStop tells whether err is a clean stop for want of quota: the
// limiter refused, or the upstream said its quota is spent (then the pools
// are blocked for every worker until its reset). ok is false for any other
// error; blockErr is set when the block could not be written.
func quotaStop(ctx context.Context, costs *ingest.Costs, l Limiter, ledger Ledger, quotaKey string, err error) (end ingest.RunEnd, ok bool, blockErr error) {
	var refused *ingest.RefusedError
	var exhausted *ingest.QuotaExhaustedError
	switch {
	case errors.As(err, &refused):
		return ingest.RunEnd{Status: ingest.StatusStopped, RetryAt: refused.Decision.RetryAt,
			Message: "quota refused " + refused.Decision.Op}, true, nil
	case errors.As(err, &exhausted):
		var retry time.Time
		for _, pool := range BlockedPools(costs, exhausted) {
			until, berr := block(context.WithoutCancel(ctx), l, ledger, quotaKey, pool, exhausted.Op)
			if berr != nil {
				return ingest.RunEnd{}, true, berr
			}
			retry = maxTime(retry, until)
		}
		return ingest.RunEnd{Status: ingest.StatusStopped, RetryAt: retry,
			Message: "upstream quota exhausted"}, true, nil
	}
	return ingest.RunEnd{}, false, nil
}

// block refuses pool for every worker until the upstream's reset, by the
// limiter's clock, and keeps the block in the ledger, so that a limiter
// that loses its data gets it back.
func block(ctx context.Context, l Limiter, ledger Ledger, quotaKey, pool, op string) (time.Time, error) {
	until, err := l.Block(ctx, pool)
	if err != nil {
		return time.Time{}, fmt.Errorf("block pool %s: %w", pool, err)
	}
	b := ingest.Block{QuotaKey: quotaKey, Pool: pool, Until: until, At: time.Now(), Op: op}
	if err := ledger.RecordBlock(ctx, b); err != nil {
		return until, fmt.Errorf("ledger block %s: %w", pool, err)
	}
	return until, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
