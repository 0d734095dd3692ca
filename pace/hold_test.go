package pace_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
)

// A region the plan took back and dropped again within a window stays
// dropped until a window of plans keep it, and every plan shows it
// dropped: another worker's spend that comes and goes (the pool halved,
// then whole) does not take it in and out of the plan. A region dropped
// once comes back at the first plan that keeps it.
func TestPlanHoldsARegionInAndOut(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 110, Window: 24 * time.Hour}
	now, used := t0, int64(0)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: pool.Limit - used, Used: used, Others: int(min(used, 1))}}, nil
	}
	var entries []pace.Entry
	for _, code := range []string{"US", "GB", "DE"} {
		entries = append(entries, entry(code, 0, time.Hour, 4))
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Bound: 3 * time.Hour,
		Clock: clock.Func(func() time.Time { return now }), Logger: quiet()})
	dropped := func() string {
		t.Helper()
		st, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range st.Entries {
			if e.Dropped {
				out = append(out, e.Name)
			}
		}
		return strings.Join(out, " ")
	}
	for _, step := range []struct {
		after  time.Duration
		others int64 // another worker's units in the window: the pool halved
		want   string
	}{
		{0, 100, "GB DE"},
		{time.Hour, 0, ""}, // dropped once: back at once
		{2 * time.Hour, 100, "GB DE"},
		{3 * time.Hour, 0, "GB DE"}, // in and out: held
		{26 * time.Hour, 0, "GB DE"},
		{27*time.Hour + time.Minute, 0, ""}, // a window of plans kept them
	} {
		now, used = t0.Add(step.after), step.others
		if got := dropped(); got != step.want {
			t.Errorf("%s on, another worker's %d units: the plan drops %q, want %q", step.after, step.others, got, step.want)
		}
	}
}

// published is a database's records of a pacer's past as FromRecords
// reads them: nothing spent or run, and the last plan published.
type published struct {
	plan []byte
	at   time.Time
}

func (*published) Calls(context.Context, string, time.Time) ([]ingest.Call, error) { return nil, nil }
func (*published) LastPasses(context.Context, string, time.Time) (map[string]time.Time, error) {
	return nil, nil
}
func (*published) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) {
	return nil, nil
}
func (*published) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return nil, nil
}
func (r *published) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return r.plan, r.at, r.plan != nil, nil
}

// The hold survives a restart: a region the plans took back and dropped
// again, held out when the pacer restarts, is still held by the new
// pacer's first plan, rebuilt from the plan the old one published, until a
// window of plans keep it.
func TestHoldSurvivesRestart(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 110, Window: 24 * time.Hour}
	now, used := t0, int64(0)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: pool.Limit - used, Used: used, Others: int(min(used, 1))}}, nil
	}
	var entries []pace.Entry
	for _, code := range []string{"US", "GB", "DE"} {
		entries = append(entries, entry(code, 0, time.Hour, 4))
	}
	db := &published{}
	worker := func() *pace.Pacer {
		return newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Bound: 3 * time.Hour,
			Clock: clock.Func(func() time.Time { return now }), Logger: quiet(), History: pace.FromRecords(db, "q", []ingest.Pool{pool}),
			Publish: func(_ context.Context, st pace.Status) {
				doc, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				db.plan, db.at = doc, st.At
			}})
	}
	p := worker()
	dropped := func() string {
		t.Helper()
		st, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range st.Entries {
			if e.Dropped {
				out = append(out, e.Name)
			}
		}
		return strings.Join(out, " ")
	}
	for _, step := range []struct {
		after   time.Duration
		others  int64
		restart bool
		want    string
	}{
		{0, 100, false, "GB DE"},
		{time.Hour, 0, false, ""},
		{2 * time.Hour, 100, false, "GB DE"},
		{3 * time.Hour, 0, true, "GB DE"}, // held, by a new pacer
		{26 * time.Hour, 0, true, "GB DE"},
		{27*time.Hour + time.Minute, 0, true, ""},
	} {
		now, used = t0.Add(step.after), step.others
		if step.restart {
			p = worker()
		}
		if got := dropped(); got != step.want {
			t.Errorf("%s on (restarted: %v), another worker's %d units: the plan drops %q, want %q", step.after, step.restart, step.others, got, step.want)
		}
	}
}
