package quota

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// The required arguments. Every constructor takes the quota key, the
// costs, the worker's Ledger and the upstream's clock, and refuses one left
// out, naming it; docs/explanation/quota.md lists the promises each serves. The
// store's database implements every role.

// Recorder is where the limiter writes what it admits, blocks and gives
// back, before it answers: a call is in the ledger before it is made.
type Recorder interface {
	RecordCall(ctx context.Context, call ingest.Call) error
	RecordBlock(ctx context.Context, b ingest.Block) error
	// RecordGiveBack marks, at at, a call that never reached the upstream.
	RecordGiveBack(ctx context.Context, call ingest.Call, at time.Time) error
}

// Recaller returns what the ledger holds of quotaKey since since: its
// calls, metered or not, and the blocks it met still in force at now. A
// limiter that lost data is refilled from it.
type Recaller interface {
	Recall(ctx context.Context, quotaKey string, since, now time.Time) (ingest.Recalled, error)
}

// Granter decides a fail-open call in one write transaction on the ledger:
// decide is given the ledger's calls since since, and the call it returns
// is written before the transaction ends, so that processes on one
// database deciding at once share one fail_open budget.
type Granter interface {
	GrantUnmetered(ctx context.Context, quotaKey string, since time.Time,
		decide func([]ingest.Call) (*ingest.Call, error)) error
}

// Ledger is the worker to the limiter: its database's stable id, where it
// is, and the roles the limiter's promises rest on. Every field is
// required; NoLedger is the one way to build a limiter without one.
type Ledger struct {
	// ID is the stable id of this worker's database: every process
	// writing to one database is one worker (store.DB.LedgerID).
	ID string
	// Where is the host and path the ledger is at, for reports.
	Where    string
	Record   Recorder
	Recall   Recaller
	Grant    Granter
	Notes    Notebook
	Unknowns UnknownLedger

	none bool
}

// NoLedger is a limiter's ledger on a host without a database: the limiter
// reads and configures (State, Config, ApplyConfig, Refill) but admits and
// blocks nothing, since nothing would keep what it admitted.
func NoLedger() Ledger {
	return Ledger{ID: "-", Where: "-", none: true, Notes: &memNotes{}}
}

// NoUpstreamClock is the named choice to decide without the upstream's
// clock: a host clock that jumps is then checked by the boot clock alone.
// `ingest check` reports it.
var NoUpstreamClock = &UpstreamClock{}

// errNoLedger refuses a decision of a limiter built with NoLedger.
var errNoLedger = errors.New("built with NoLedger: it admits and blocks nothing")

// check names the first field of l left out.
func (l Ledger) check() error {
	if l.none {
		return nil
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"ID", l.ID != ""}, {"Where", l.Where != ""}, {"Record", l.Record != nil}, {"Recall", l.Recall != nil},
		{"Grant", l.Grant != nil}, {"Notes", l.Notes != nil}, {"Unknowns", l.Unknowns != nil},
	} {
		if !f.ok {
			return fmt.Errorf("the ledger's %s is required (quota.Ledger.%s; quota.NoLedger() on a host without a database)", f.name, f.name)
		}
	}
	return nil
}

// admitted writes a call admitted for by to the ledger before the caller
// makes it. A call the ledger did not keep is not made: its units stay
// spent.
func (s *settings) admitted(ctx context.Context, by ingest.Caller, d ingest.Decision, err error) (ingest.Decision, error) {
	if err != nil || !d.Allowed {
		return d, err
	}
	if err := s.Record.RecordCall(context.WithoutCancel(ctx), d.Call(s.QuotaKey, by)); err != nil {
		return ingest.Decision{}, fmt.Errorf("ledger: %w", err)
	}
	return d, nil
}

// block refuses every call drawing from pool until the next midnight of its
// day (else the upstream's) by the limiter's own clock, which until reads
// and writes in the backend, for every worker on the quota key. The block
// is kept in the ledger too, so that a limiter that loses its data gets it
// back.
func (s *settings) block(ctx context.Context, pool, op string, until func(ingest.Pool) (int64, error)) (time.Time, error) {
	if s.none {
		return time.Time{}, fmt.Errorf("block %s: %w", pool, errNoLedger)
	}
	p, ok := s.Costs.Pool(pool)
	if !ok {
		return time.Time{}, fmt.Errorf("block: pool %q is not in costs.yaml", pool)
	}
	if p.Day == nil {
		p.Day = ingest.UpstreamZone
	}
	ms, err := until(p)
	if err != nil {
		return time.Time{}, fmt.Errorf("block %s: %w", pool, err)
	}
	b := ingest.Block{QuotaKey: s.QuotaKey, Pool: pool, Until: msTime(ms), At: s.Now(), Op: op}
	if err := s.Record.RecordBlock(ctx, b); err != nil {
		return b.Until, fmt.Errorf("ledger block %s: %w", pool, err)
	}
	return b.Until, nil
}

// refund gives back an admitted call that never reached the upstream: drop
// takes a metered call's entries out of every pool's log, and the ledger
// marks it, so that it says what the upstream charged; markFirst marks it
// before the drop.
func (s *settings) refund(ctx context.Context, call ingest.Call, markFirst bool, drop func(context.Context, ingest.Call) error) error {
	if call.QuotaKey == "" {
		call.QuotaKey = s.QuotaKey
	}
	mark := func() error {
		if err := s.Record.RecordGiveBack(ctx, call, s.Now()); err != nil {
			return fmt.Errorf("ledger give back: %w", err)
		}
		return nil
	}
	if markFirst {
		if err := mark(); err != nil {
			return err
		}
	}
	if !call.Unmetered {
		if err := drop(ctx, call); err != nil {
			return fmt.Errorf("give back: refund %s: %w", call.ID, err)
		}
	}
	if markFirst {
		return nil
	}
	return mark()
}
