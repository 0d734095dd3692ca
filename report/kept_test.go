package report

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
)

// counting is a limiter's state that says how often it was read.
type counting struct {
	backend string
	reads   int
}

func (c *counting) State(context.Context) ([]ingest.PoolState, error) {
	c.reads++
	return []ingest.PoolState{{Pool: "units", Remaining: int64(c.reads)}}, nil
}

func (c *counting) Backend() string { return c.backend }

// TestKeptStateIsReadAgainWhenTheLedgerMoves: the embedded limiter's
// state is read once while the ledger's stamp stays the same, again when
// it moves or when the window has slid past keepState, and what is kept
// is the server's own copy.
func TestKeptStateIsReadAgainWhenTheLedgerMoves(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	stamp := "1"
	l := &counting{backend: "sqlite"}
	k := &keptState{StateReader: l, clock: c, stamp: func(context.Context) (string, error) { return stamp, nil }}
	read := func() []ingest.PoolState {
		t.Helper()
		st, err := k.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	read()[0].Remaining = -1
	if st := read(); l.reads != 1 || st[0].Remaining != 1 {
		t.Errorf("the same stamp: %d reads, %+v; want one read, kept unchanged by its caller", l.reads, st)
	}
	stamp = "2"
	if read(); l.reads != 2 {
		t.Errorf("the ledger moved: %d reads, want 2", l.reads)
	}
	c.Advance(keepState + time.Second)
	if read(); l.reads != 3 {
		t.Errorf("past keepState: %d reads, want 3", l.reads)
	}
}

// TestKeptWrapsOnlyWhatADatabaseHolds: without a database a report's
// sources are as given; with one, its store is kept by the ledger's stamp,
// and the limiter's state only when the limiter is the embedded one (its
// log beside the ledger): Redis's moves with other hosts' calls.
func TestKeptWrapsOnlyWhatADatabaseHolds(t *testing.T) {
	c := clocktest.NewFake(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	src := Sources{QuotaKey: "k1", Limiter: &counting{backend: "sqlite"}}
	if got := Kept(src, nil, true, c); got.Limiter != src.Limiter || got.DB != nil {
		t.Errorf("without a database: %+v", got)
	}
	led := ledger.New(storetest.Open(t))
	for backend, kept := range map[string]bool{"sqlite": true, "postgres": true, "redis": false} {
		src.Limiter = &counting{backend: backend}
		got := Kept(src, led, true, c)
		if _, ok := got.Limiter.(*keptState); ok != kept {
			t.Errorf("%s: the state kept: %v, want %v", backend, ok, kept)
		}
		if _, ok := got.DB.(*Remembered); !ok {
			t.Errorf("%s: the store is not remembered: %T", backend, got.DB)
		}
	}
}
