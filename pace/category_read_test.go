package pace_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
)

// overrun is the reason a plan is made again after a pass dearer than the
// plan's figure, as the pacer's debug line gives it.
const overrun = `why="a pass cost more than planned"`

// A region's first pass of a day also reads the region's category names,
// a unit more than its pages. The worker's history measures a pass
// without that read, for which Config.Daily keeps room, and so does the
// daemon's pacer: a day and more of real passes makes no plan again for a
// pass dearer than planned, while the limiter and the ledger count the
// read.
func TestCategoryReadIsNoOverrun(t *testing.T) {
	t.Parallel()
	start := dayStart(20, 0)
	s := newSim(t, tightCosts, start, []string{"US", "GB"}, nil)
	var logs bytes.Buffer
	s.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	end := start.Add(26 * time.Hour)
	s.deploy("daemon", start, end)

	calls, err := ledger.New(s.w.db).Calls(context.Background(), "q", start.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, c := range calls {
		if c.Op == ingest.OpCategoriesList {
			reads++
		}
	}
	// Each region reads its names at its first pass and a day later.
	if reads != 4 {
		t.Fatalf("the ledger holds %d category reads, want 4: two regions, each at its first pass and a day later", reads)
	}
	if s.w.refused != 0 {
		t.Errorf("the limiter refused %d calls", s.w.refused)
	}
	for _, chart := range []string{"US", "GB"} {
		if n := len(s.completed[chart]); n < 24 {
			t.Errorf("%s completed %d passes in 26 hours, want one an hour", chart, n)
		}
	}
	if n := strings.Count(logs.String(), overrun); n != 0 {
		t.Errorf("the pacer planned again %d times for a pass dearer than planned; its plans:\n%s", n, planned(logs.String()))
	}
}

// planned is the pacer's lines that say why it made a plan.
func planned(logs string) string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "pace: planned") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Without a history, the pacer's own spend is what it was told its passes
// spent, the category names' read with it: a pool whose every unit the
// pacer saw spent is not shared with another worker. A pass's cost is
// measured without the read, so the read makes no plan again.
func TestCategoryReadCountsInSpendNotInCost(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: 24 * time.Hour}
	var used int64
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Limit: 1000, Used: used, Remaining: 1000 - used}}, nil
	}
	var logs bytes.Buffer
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, time.Hour, 4)},
		Daily: map[string]float64{"default": 1}, Clock: clock.Func(func() time.Time { return now }),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	for i := range 20 {
		now = t0.Add(time.Duration(i) * time.Hour)
		if !p.Due(ctx, "US", now) {
			t.Fatalf("hour %d: the entry is not due; plans:\n%s", i, planned(logs.String()))
		}
		units, daily := map[string]int64{"default": 4}, map[string]int64(nil)
		if i%10 == 0 {
			// a new day's first pass: its pages and the category names
			units, daily = map[string]int64{"default": 5}, map[string]int64{"default": 1}
		}
		used += units["default"]
		p.Ran("US", units, daily, ingest.StatusCompleted)
	}
	st, err := p.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Shared {
		t.Errorf("the pacer counts another worker's spend in a pool it spent alone (%d units)", used)
	}
	if got := st.Entries[0].Cost["default"]; got != 4 {
		t.Errorf("measured a pass at %v units, want its pages' 4", got)
	}
	if n := strings.Count(logs.String(), overrun); n != 0 {
		t.Errorf("the pacer planned again %d times for a pass dearer than planned; its plans:\n%s", n, planned(logs.String()))
	}
}
