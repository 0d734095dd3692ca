package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// Tracking is the level below the category charts: when the pool it
// shares with them is short it runs least often, and when the pool fits
// it runs at its own floor (--track-every).
func TestTrackingPriority(t *testing.T) {
	t.Parallel()
	const s = time.Second
	entries := []pace.Entry{entry("US", 0, 10*s, 10), entry("US/10", 1, 10*s, 10), entry("track", int(jobs.KindTracking), 20*s, 10)}
	// At their floors the three spend 2.5 units a second; 1.5 leaves half
	// a unit a second below the region's own chart.
	short := pace.Make([]pace.Budget{{Pool: "default", Units: 900, Horizon: 600 * s}}, entries, 0)
	if us, cat, track := short.Every["US"], short.Every["US/10"], short.Every["track"]; !(us < cat && cat < track) {
		t.Errorf("short pool: US every %v, US/10 %v, track %v; want tracking slowest", us, cat, track)
	}
	fits := pace.Make([]pace.Budget{{Pool: "default", Units: 1500, Horizon: 600 * s}}, entries, 0)
	if got := fits.Every["track"]; got != 20*s {
		t.Errorf("pool that fits: track every %v, want its floor 20s", got)
	}

	for _, tc := range []struct {
		name  string
		limit int64
		check func(t *testing.T, runs map[string]int)
	}{
		{"short", 900, func(t *testing.T, runs map[string]int) {
			if !(runs["US"] > runs["US/10"] && runs["US/10"] > runs["track"] && runs["track"] > 0) {
				t.Errorf("passes %v: want US > US/10 > track > 0", runs)
			}
		}},
		{"fits", 2000, func(t *testing.T, runs map[string]int) {
			if runs["US"] != 60 || runs["US/10"] != 60 || runs["track"] != 30 {
				t.Errorf("passes %v: want every slot, 60 of each chart and 30 of tracking", runs)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runs, spent, refused := simulate(t, tc.limit, entries)
			if refused > 0 || spent > tc.limit {
				t.Errorf("spent %d of %d with %d passes the pool could not take", spent, tc.limit, refused)
			}
			t.Logf("%s: passes %v, %d units", tc.name, runs, spent)
			tc.check(t, runs)
		})
	}
}

// simulate drives a pacer over one window of a pool of limit units, with
// a clock it sets: the charts' slots every 10 s, tracking's every 20 s,
// each pass spending its entry's cost. It returns each entry's passes,
// the units spent and the passes the pool had no room for.
func simulate(t *testing.T, limit int64, entries []pace.Entry) (map[string]int, int64, int) {
	t.Helper()
	const window = 600 * time.Second
	pool := ingest.Pool{Name: "default", Limit: limit, Window: window}
	var spent int64
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Limit: limit, Used: spent, Remaining: limit - spent}}, nil
	}
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Clock: clock.Func(func() time.Time { return now })})
	runs, refused := map[string]int{}, 0
	for i := range int(window / (10 * time.Second)) {
		now = t0.Add(time.Duration(i) * 10 * time.Second)
		for _, e := range entries {
			if now.Sub(t0)%e.Floor != 0 || !p.Due(context.Background(), e.Name, now) {
				continue
			}
			cost := int64(e.Cost["default"])
			if spent+cost > limit {
				refused++
				p.Ran(e.Name, nil, nil, ingest.StatusStopped)
				continue
			}
			spent += cost
			runs[e.Name]++
			p.Ran(e.Name, map[string]int64{"default": cost}, nil, ingest.StatusCompleted)
		}
	}
	return runs, spent, refused
}
