package pace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
)

// followedRecords is Records whose whole read of the calls fails: only a
// read through its follower answers.
type followedRecords struct {
	follows int
	since   []time.Time
}

func (r *followedRecords) Calls(context.Context, string, time.Time) ([]ingest.Call, error) {
	return nil, errors.New("read whole")
}
func (r *followedRecords) Follow(string) func(context.Context, time.Time) ([]ingest.Call, error) {
	r.follows++
	return func(_ context.Context, since time.Time) ([]ingest.Call, error) {
		r.since = append(r.since, since)
		return []ingest.Call{{ID: "1-1", At: since, Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 3}}}}, nil
	}
}
func (r *followedRecords) LastPasses(context.Context, string, time.Time) (map[string]time.Time, error) {
	return nil, nil
}
func (*followedRecords) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) {
	return nil, nil
}
func (r *followedRecords) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return nil, nil
}
func (r *followedRecords) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return nil, time.Time{}, false, nil
}

// TestHistoryReadsThroughOneFollower: records that can follow their
// ledger are read through one follower for every History, each from the
// pools' history at its time.
func TestHistoryReadsThroughOneFollower(t *testing.T) {
	r := &followedRecords{}
	pools := []ingest.Pool{{Name: ingest.DefaultPool, Limit: 100, Window: time.Hour}}
	history := pace.FromRecords(r, "q", pools)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Minute)
		h, err := history(context.Background(), at)
		if err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
		if got := h.Spent[ingest.DefaultPool]; len(got) != 1 || got[0].Units != 3 {
			t.Fatalf("history %d: spent %+v, want the follower's one call of 3 units", i, got)
		}
		if want := pace.HistorySince(pools, at); !r.since[i].Equal(want) {
			t.Fatalf("history %d read from %s, want %s", i, r.since[i], want)
		}
	}
	if r.follows != 1 {
		t.Fatalf("%d followers made, want one for every History", r.follows)
	}
}
