package metrics

import (
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
)

// collected is the value of each series of family name that c gives, by
// the value of its label.
func collected(t *testing.T, c prometheus.Collector, name, label string) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = s.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// The series the alert rules read (deploy/prometheus): every chart's
// planned cadence, --every without a pacer and the plan's with one
// (+Inf for a chart it drops).
func TestChartCadence(t *testing.T) {
	c := &Pace{Clock: clock.System, Ages: NewAges(nil), Floors: map[string]time.Duration{"US": time.Hour, "GB": time.Hour}}
	got := collected(t, c, "ingest_chart_cadence_seconds", "chart")
	if len(got) != 2 || got["US"] != 3600 || got["GB"] != 3600 {
		t.Errorf("not pacing: cadences %v, want --every (3600) for US and GB", got)
	}
	c.Status = func() pace.Status {
		return pace.Status{Entries: []pace.EntryStatus{{Name: "US", Every: 3 * time.Hour}, {Name: "GB", Every: pace.Never, Dropped: true},
			{Name: "track", Every: time.Hour}}}
	}
	got = collected(t, c, "ingest_chart_cadence_seconds", "chart")
	if len(got) != 2 || got["US"] != 3*3600 || !math.IsInf(got["GB"], 1) {
		t.Errorf("pacing: cadences %v, want the plan's (US 10800, GB +Inf), no tracking", got)
	}
	// The slot a late chart is measured by stays --every, whatever the plan.
	if got := collected(t, c, "ingest_chart_slot_seconds", "chart"); len(got) != 2 || got["US"] != 3600 || got["GB"] != 3600 {
		t.Errorf("slots %v, want --every (3600) for US and GB", got)
	}
}

// The share a worker counts on is shown by pool, as its pacer plans it: a
// third of a pool where the limiter saw two workers of other databases
// spend, the whole of one it spends in alone.
func TestPaceShare(t *testing.T) {
	pools := []ingest.Pool{{Name: "default", Limit: 1000, Window: 24 * time.Hour}, {Name: "stats", Limit: 1000, Window: 24 * time.Hour}}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Limit: 1000, Used: 300, Remaining: 700, Others: 2}, {Pool: "stats", Limit: 1000, Remaining: 1000}}, nil
	}
	at := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	p, err := pace.New(pace.Config{Pools: pools, State: state, Clock: clock.Func(func() time.Time { return at })})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Plan(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := collected(t, &Pace{Clock: clock.System, Ages: NewAges(nil), Status: p.Status}, "ingest_pace_share", "pool")
	if len(got) != 2 || got["default"] != 1.0/3 || got["stats"] != 1 {
		t.Errorf("ingest_pace_share %v, want default 1/3, stats 1", got)
	}
}

// The limiter's recovery wait is read from its pools: the time a pool's
// metered calls wait until, 0 for a pool that waits for nothing.
func TestRecoveryWait(t *testing.T) {
	until := time.Unix(1_800_000_000, 0)
	got := collected(t, &limiterCollector{pools{{Pool: "default", WaitUntil: until}, {Pool: "search"}}},
		"ingest_limiter_recovery_wait_until_timestamp_seconds", "pool")
	if got["default"] != 1_800_000_000 || got["search"] != 0 || len(got) != 2 {
		t.Errorf("recovery wait %v; want default %d, search 0", got, until.Unix())
	}
}

type pools []ingest.PoolState

func (p pools) State(context.Context) ([]ingest.PoolState, error) { return p, nil }
func (pools) Backend() string                                     { return "test" }

// The slots a pacer declined are counted by entry and reason: the slot
// after a catch-up as caught up, not missed.
func TestPaceDeclinedSlots(t *testing.T) {
	st := pace.Status{Entries: []pace.EntryStatus{{Name: "US", Every: time.Hour,
		Declined: map[pace.Declined]int{pace.DeclinedCaughtUp: 1, pace.DeclinedUnearned: 2}}, {Name: "GB", Every: time.Hour}}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&Pace{Clock: clock.System, Ages: NewAges(nil), Status: func() pace.Status { return st }})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "ingest_pace_declined_slots_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			var key string
			for _, l := range s.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			got[key] = s.GetCounter().GetValue()
		}
	}
	want := map[string]float64{"chart=US reason=caught up ": 1, "chart=US reason=not earned ": 2}
	if !maps.Equal(got, want) {
		t.Errorf("ingest_pace_declined_slots_total %v, want %v", got, want)
	}
}
