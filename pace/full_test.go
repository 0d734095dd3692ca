package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
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

// A pass the pool holds at its slot runs, whatever this worker's share of
// the key: the share paces what the worker plans over the window, and the
// room at a slot is the limiter's to give, first come first served. A
// worker that waited for its share of what remains (a third of it, with
// two other databases spending) would wait at every slot for three passes
// of room while callers that do not wait (a co-tenant's run --once, another
// host's) took each unit as it freed, and its charts would go cadences
// without a pass.
func TestAPassThePoolHoldsRunsWhateverTheShare(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	remaining := int64(8)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Used: pool.Limit - remaining, Remaining: remaining, Others: 2}}, nil
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("NL", 0, time.Minute, 4)},
		Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
	if !p.Due(context.Background(), "NL", t0) {
		t.Errorf("with %d units left in the window and two other databases spending, NL's pass of 4 was declined: it waits for its share of the room, not for the room", remaining)
	}
	p.Ran("NL", map[string]int64{"default": 4}, nil, ingest.StatusCompleted)
	remaining = 3
	p = newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("SE", 0, time.Minute, 4)},
		Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
	if p.Due(context.Background(), "SE", t0) {
		t.Errorf("with %d units left in the window, SE's pass of 4 ran: it would stop midway", remaining)
	}
}

// A pass declined for want of room alone waits for it at its slot: the
// pacer says so (WaitsForRoom), counts the slot declined once however
// often it is asked there again, and runs it at that slot once the pools
// hold it.
func TestAPassShortOfRoomWaitsAtItsSlot(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	remaining := int64(2)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Used: pool.Limit - remaining, Remaining: remaining}}, nil
	}
	nl := entry("NL", 0, time.Minute, 4)
	slots, err := regions.Charts("NL")[0].Stagger(time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	nl.Slots = slots
	if !slots.Prev(t0).Equal(t0) {
		t.Fatalf("t0 %s is not one of NL's slots", t0)
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{nl},
		Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
	ctx := context.Background()
	for range 3 {
		if p.Due(ctx, "NL", t0) {
			t.Fatalf("with %d units left, NL's pass of 4 ran", remaining)
		}
		if !p.WaitsForRoom("NL") {
			t.Fatal("NL declined for want of room: the pacer does not say it waits for room")
		}
	}
	if n := p.Status().Entries[0].Declined[pace.DeclinedNoRoom]; n != 1 {
		t.Errorf("NL asked three times at one slot without room: %d slots declined, want 1", n)
	}
	remaining = 8
	if !p.Due(ctx, "NL", t0) {
		t.Errorf("with %d units left, NL asked again at its slot did not run", remaining)
	}
	if p.WaitsForRoom("NL") {
		t.Error("NL ran: the pacer still says it waits for room")
	}
}

// A slot the spread declines is declined for the spread, room or none:
// its group is over its rate this floor, so the pacer does not say it
// waits for room, and the daemon does not ask that slot again for a pass
// the plan holds back. Six charts the pool holds only stretched ask at
// one slot in turn, and pass until the spread holds one back with room
// to spare; on a window with room for those passes and half one more,
// the same charts pass, and the next is held back by the spread, not
// short of room.
func TestASlotTheSpreadDeclinesWaitsForNoRoom(t *testing.T) {
	t.Parallel()
	names := []string{"NL", "SE", "PL", "TR", "CZ", "HU"}
	slots, err := regions.Stagger(time.Hour, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	// slot has six charts ask at t0, one of their slots, on a window with
	// remaining units left: the pacer, and how many passed
	slot := func(remaining int64) (*pace.Pacer, int) {
		pool := ingest.Pool{Name: "default", Limit: 96, Window: 24 * time.Hour}
		state := func(context.Context) ([]ingest.PoolState, error) {
			return []ingest.PoolState{{Pool: "default", Used: pool.Limit - remaining, Remaining: remaining}}, nil
		}
		var entries []pace.Entry
		for _, name := range names {
			e := entry(name, 0, time.Hour, 4)
			e.Slots = slots
			entries = append(entries, e)
		}
		p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries,
			Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
		ran := 0
		for ; ran < len(names) && p.Due(context.Background(), names[ran], t0); ran++ {
			remaining -= 4 // the limiter counts the pass's calls as they go out
			p.Ran(names[ran], map[string]int64{"default": 4}, nil, ingest.StatusCompleted)
		}
		for _, e := range p.Status().Entries {
			if e.Every <= e.Floor || e.Every == pace.Never {
				t.Fatalf("%s every %s: the pool was meant to stretch every chart", e.Name, e.Every)
			}
		}
		return p, ran
	}
	p, ran := slot(96)
	if ran == 0 || ran == len(names) {
		t.Fatalf("%d of %d charts passed at one slot: the spread was meant to hold back one of them", ran, len(names))
	}
	if p.WaitsForRoom(names[ran]) {
		t.Fatalf("%s, held back with room to spare, is said to wait for room", names[ran])
	}
	p, again := slot(int64(4*ran + 2))
	if again != ran {
		t.Fatalf("on a window with room for %d passes and half one, %d passed, want %d", ran, again, ran)
	}
	if p.WaitsForRoom(names[ran]) {
		t.Errorf("%s, over its group's rate at this slot, is said to wait for room: the daemon asks its slot again for a pass the spread holds back", names[ran])
	}
}

// A pass granted and still running holds its room against the next ask,
// whatever the limiter reads: the limiter counts its calls only as they
// go out, so two charts waiting for room and let in on one reading of it
// would both start where the pool holds one, and one would stop at its
// second page, its slot spent.
func TestAPassRunningHoldsItsRoomAgainstTheNextAsk(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	remaining := int64(1)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Used: pool.Limit - remaining, Remaining: remaining}}, nil
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state,
		Entries: []pace.Entry{entry("NL", 0, time.Minute, 2), entry("SE", 0, time.Minute, 2)},
		Clock:   clock.Func(func() time.Time { return t0 }), Logger: quiet()})
	ctx := context.Background()
	if p.Due(ctx, "NL", t0) || p.Due(ctx, "SE", t0) {
		t.Fatalf("with %d unit left, a pass of 2 ran", remaining)
	}
	remaining = 3 // room for one pass of two
	if !p.Due(ctx, "NL", t0) {
		t.Fatalf("with %d units left, NL's pass of 2 waiting for room did not run", remaining)
	}
	if p.Due(ctx, "SE", t0) {
		t.Errorf("NL's pass of 2 running, not yet counted by the limiter (%d left), and SE's of 2 ran too: one of them stops midway", remaining)
	}
	remaining = 1 // the limiter counted NL's calls as they went out
	p.Ran("NL", map[string]int64{"default": 2}, nil, ingest.StatusCompleted)
	if p.Due(ctx, "SE", t0) {
		t.Errorf("NL's pass counted (%d left), and SE's pass of 2 ran", remaining)
	}
	remaining = 2
	if !p.Due(ctx, "SE", t0) {
		t.Errorf("with %d units left and nothing running, SE's pass of 2 did not run", remaining)
	}
}
