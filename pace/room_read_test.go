package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
)

// TestPacerReadsTheRoomBeforeAPass: what a co-tenant spends between two
// plans (a run --once of other regions on the key, another worker) is in
// no room the pacer counted down itself. Where it spent the pool's day, the
// next pass the plan's room holds is declined for room, not let in to
// stop at its first page with its slot spent; and it runs once the
// limiter has the room again, with no plan made in between.
func TestPacerReadsTheRoomBeforeAPass(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: 6 * time.Hour, Day: ingest.UpstreamZone}
	st := ingest.PoolState{Pool: "default", Limit: 1000, Remaining: 1000}
	reads := 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		reads++
		return []ingest.PoolState{st}, nil
	}
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state,
		Entries: []pace.Entry{entry("US", 0, time.Minute, 5), entry("GB", 0, time.Minute, 5)},
		Clock:   clock.Func(func() time.Time { return now })})
	if !p.Due(context.Background(), "US", now) {
		t.Fatal("US not due at the start")
	}
	p.Ran("US", map[string]int64{"default": 5}, nil, ingest.StatusCompleted)
	plans := reads
	// a co-tenant's runs spend the day
	st.Used, st.UsedDay, st.Remaining = 995, 995, 0
	now = now.Add(time.Minute)
	if p.Due(context.Background(), "GB", now) {
		t.Fatal("GB let in where the limiter has no room left of the day: its room was the plan's, counted down by US's pass alone")
	}
	if !p.WaitsForRoom("GB") {
		t.Error("GB declined for another reason than room: it should wait at its slot for the pools to hold it")
	}
	st.Remaining = 10 // the limiter has room again: GB runs at its slot
	if !p.Due(context.Background(), "GB", now) {
		t.Error("GB not let in once the limiter holds its pass")
	}
	if reads != plans+2 {
		t.Errorf("the limiter read %d times after the plans, want 2: once at each of GB's asks", reads-plans)
	}
}
