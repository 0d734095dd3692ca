package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
)

// A window full this moment with no co-tenant in it (a burst before the
// daemon started, or a co-tenant's runs all refused for a window) plans
// the regions' own charts a round of the window at a time, waiting at
// their slots for the room, never to the staleness bound: the room frees
// within a window.
func TestAFullWindowPlansARound(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Used: 40, Remaining: 0}}, nil
	}
	var entries []pace.Entry
	for _, name := range []string{"NL", "SE", "PL", "TR"} {
		entries = append(entries, entry(name, 0, time.Minute, 4))
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries,
		Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
	st, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range st.Entries {
		if e.Every > 2*pool.Window {
			t.Errorf("with the window full, %s is planned every %s, over two windows (%s): a round fits each window as it frees",
				e.Name, fmtEvery(e.Every), 2*pool.Window)
		}
	}
}
